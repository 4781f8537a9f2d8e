package pipeline

import (
	"context"
	"encoding/json"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/crlbatch/crlbatch/diff"
	"github.com/crlbatch/crlbatch/published"
)

// TestNightlyReportNamesABuildChange: the nightly section compares the
// crlbatch build that wrote the previous result with the running one (its
// version and commit, as the night's own manifest will have them): nothing
// is said while the build stays, a change of build is said (both builds
// named) and is no change of the results, and a previous result whose
// manifest names no build (an older layout) is unknown, not a change.
// Each night's section is what diff.Section says of the two results read
// back.
func TestNightlyReportNamesABuildChange(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	in, out := localSweep(t), filepath.Join(t.TempDir(), "nightly")
	var prev string
	for _, c := range []struct {
		name, version, commit string
		oldLayout             bool   // the previous manifest rewritten without version and commit
		want                  string // in the section; "" for none of the build
	}{
		{name: "first night", version: "0.3.1", commit: "4f1c2a9e"},
		{name: "same build", version: "0.3.1", commit: "4f1c2a9e"},
		{name: "new build", version: "0.4.0", commit: "b07d5e11",
			want: "### crlbatch build changed\n\nThe results were written by different crlbatch builds: old crlbatch `0.3.1` (commit `4f1c2a9e`), new crlbatch `0.4.0` (commit `b07d5e11`)."},
		{name: "previous of an older layout", version: "0.4.0", commit: "b07d5e11", oldLayout: true},
	} {
		if c.oldLayout {
			p := filepath.Join(out, filepath.FromSlash(ResultsDir+prev), ManifestName)
			var m map[string]any
			data, err := os.ReadFile(p)
			if err != nil || json.Unmarshal(data, &m) != nil {
				t.Fatalf("%s: %v", p, err)
			}
			delete(m, "version")
			delete(m, "commit")
			data, _ = json.Marshal(m)
			if err := os.WriteFile(p, data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		cfg := localJob(in, out, nil)
		cfg.History, cfg.Version, cfg.Commit = true, c.version, c.commit
		sum, err := Run(ctx, cfg)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		id := path.Base(filepath.ToSlash(sum.Result))
		report, err := os.ReadFile(filepath.Join(out, filepath.FromSlash(ResultsDir+id), "report.md"))
		if err != nil {
			t.Fatal(err)
		}
		_, section, found := strings.Cut(string(report), "\n## Changes since the previous result\n")
		section, _, _ = strings.Cut(section, "\n## Figures\n")
		if prev == "" {
			if found {
				t.Errorf("%s: a section:\n%s", c.name, section)
			}
			prev = id
			continue
		}
		load := func(id string) *published.Result {
			b, loc, release, err := published.Open(ctx, nil, out)
			if err != nil {
				t.Fatal(err)
			}
			defer release()
			r, err := published.Load(ctx, b, loc, loc.Prefix+ResultsDir+id+"/")
			if err != nil {
				t.Fatal(err)
			}
			return r
		}
		old, cur := load(prev), load(id)
		if want := diff.Section(old, cur); !strings.HasSuffix(want, section) || !found {
			t.Errorf("%s: the section is not what diff says of the results read back:\n%s\nwant:\n%s", c.name, section, want)
		}
		if c.want == "" && (strings.Contains(section, "build") || !strings.HasSuffix(section, "\nNo changes.\n")) {
			t.Errorf("%s: the section names a build or a change:\n%s", c.name, section)
		}
		if c.want != "" && (!strings.Contains(section, c.want) || !strings.HasSuffix(section, "\nNo other changes.\n")) {
			t.Errorf("%s: the section lacks %q or lists a change:\n%s", c.name, c.want, section)
		}
		prev = id
	}
}
