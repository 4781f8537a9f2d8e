// Package configs holds the data files bundled with crlbatch. Reward specs
// live in rewards/NAME.yaml and are embedded in the binary, so a spec can be
// named ("paper") as well as given as a path. The package only hands out
// bytes; upperbound.ParseSpec decodes them.
package configs

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"
)

//go:embed rewards/*.yaml
var rewards embed.FS

// RewardSpecPath is the path, relative to the repository root, of the
// bundled reward spec called name. Use it to name the spec in errors.
func RewardSpecPath(name string) string {
	return "configs/rewards/" + name + ".yaml"
}

// RewardSpec returns the bundled reward spec called name (the file name
// without .yaml).
func RewardSpec(name string) ([]byte, error) {
	if name == "" || strings.ContainsAny(name, `/\`) || strings.HasSuffix(name, ".yaml") || !fs.ValidPath(name) {
		return nil, fmt.Errorf("bundled reward spec %q: give a bare name such as %q (bundled: %s)",
			name, "paper", strings.Join(RewardSpecNames(), ", "))
	}
	b, err := rewards.ReadFile(path.Join("rewards", name+".yaml"))
	if err != nil {
		return nil, fmt.Errorf("no bundled reward spec %q (bundled: %s)", name, strings.Join(RewardSpecNames(), ", "))
	}
	return b, nil
}

// RewardSpecNames lists the bundled reward specs, sorted.
func RewardSpecNames() []string {
	entries, err := rewards.ReadDir("rewards")
	if err != nil {
		panic(err) // the directory is embedded; it cannot be missing
	}
	var out []string
	for _, e := range entries {
		if name, ok := strings.CutSuffix(e.Name(), ".yaml"); ok && !e.IsDir() {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}
