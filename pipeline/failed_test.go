package pipeline

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestFailedJobLeavesNoFolder: a job that fails (bad data, an input without
// objects, a usage error found after listing) leaves no OUTPUT folder,
// nor the parents it made, in either layout.
func TestFailedJobLeavesNoFolder(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	bad := localSweep(t)
	write(t, filepath.Join(bad, "zz.jsonl"), "{bad\n")
	empty := t.TempDir()
	for _, c := range []struct {
		name, in string
		edit     func(*Config)
	}{
		{"bad data", bad, nil},
		{"no objects", empty, nil},
		{"no such baseline", localSweep(t), func(c *Config) { c.Baseline = "nope" }},
	} {
		for _, history := range []bool{false, true} {
			root := t.TempDir()
			cfg := localJob(c.in, filepath.Join(root, "a", "b", "out"), nil)
			cfg.History = history
			if c.edit != nil {
				c.edit(&cfg)
			}
			if _, err := Run(ctx, cfg); err == nil {
				t.Fatalf("%s: the job did not fail", c.name)
			}
			if _, err := os.Stat(filepath.Join(root, "a")); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("%s, --history=%v: a failed job left the folders it made (%v)", c.name, history, err)
			}
		}
	}
}
