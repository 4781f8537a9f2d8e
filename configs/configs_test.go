package configs_test

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/crlbatch/crlbatch/configs"
	"github.com/crlbatch/crlbatch/upperbound"
)

// TestEveryRewardSpecLoads reads every file under rewards/ from disk, so that
// none can rot: each must be embedded byte for byte, parse strictly, carry
// its file name as its name, derive an analytic bound and survive a round
// trip through Encode.
func TestEveryRewardSpecLoads(t *testing.T) {
	files, err := filepath.Glob("rewards/*")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, path := range files {
		name, ok := strings.CutSuffix(filepath.Base(path), ".yaml")
		if !ok {
			t.Errorf("%s: reward specs must end in .yaml", path)
			continue
		}
		names = append(names, name)
		disk, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		embedded, err := configs.RewardSpec(name)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(disk, embedded) {
			t.Errorf("%s: embedded copy differs from the file", path)
		}
		spec, err := upperbound.ParseSpec(configs.RewardSpecPath(name), embedded)
		if err != nil {
			t.Error(err)
			continue
		}
		if spec.Name != name {
			t.Errorf("%s: spec is named %q, want the file name %q", path, spec.Name, name)
		}
		if b, err := upperbound.Analytic(spec); err != nil {
			t.Errorf("%s: %v", path, err)
		} else if err := b.Validate(); err != nil {
			t.Errorf("%s: %v", path, err)
		}
		enc, err := spec.Encode()
		if err != nil {
			t.Fatal(err)
		}
		back, err := upperbound.ParseSpec(path+" (re-encoded)", enc)
		if err != nil || !reflect.DeepEqual(back, spec) {
			t.Errorf("%s: round trip: %+v, %v", path, back, err)
		}
	}
	slices.Sort(names)
	if got := configs.RewardSpecNames(); !slices.Equal(got, names) {
		t.Errorf("RewardSpecNames() = %v, files %v", got, names)
	}
	for _, must := range []string{"paper", "experiment"} {
		if !slices.Contains(names, must) {
			t.Errorf("bundled spec %q is missing", must)
		}
	}
}

func TestRewardSpecUnknown(t *testing.T) {
	for _, name := range []string{"nonesuch", "", "paper.yaml", "../rewards/paper", "rewards/paper", `a\b`} {
		_, err := configs.RewardSpec(name)
		if err == nil {
			t.Errorf("RewardSpec(%q) succeeded", name)
			continue
		}
		if !strings.Contains(err.Error(), "paper") {
			t.Errorf("RewardSpec(%q): %v does not list the bundled specs", name, err)
		}
	}
}

func TestRewardSpecPath(t *testing.T) {
	if got := configs.RewardSpecPath("paper"); got != "configs/rewards/paper.yaml" {
		t.Errorf("got %q", got)
	}
}
