package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// usageCases (TestMistakesAreUsageErrors) are the mistakes of issue 12 that must fail before any work
// with exit status 2 and a message that says what would have been right.
// SWEEP is the example sweep, OUT a fresh output folder.
var usageCases = []struct {
	name string
	args []string
	want []string // substrings of stderr, in order
}{
	// A --group-by field that no run has, or a --baseline naming no family.
	{"group-by typo", []string{"score", "SWEEP", "--out", "OUT", "--group-by", "algoritm_id"},
		[]string{`crlbatch: --group-by algoritm_id: no run has the field "algoritm_id"; the runs have algorithm_id, `, "(see docs/trace-format.md)"}},
	{"group-by one field of two", []string{"score", "SWEEP", "--out", "OUT", "--group-by", "algorithm_id,sed"},
		[]string{`--group-by algorithm_id,sed: no run has the field "sed"; the runs have seed, `}},
	{"group-by under where", []string{"score", "SWEEP", "--out", "OUT", "--group-by", "nope", "--where", "algorithm_id=ppo"},
		[]string{`no run kept by --where has the field "nope"`}},
	{"baseline typo", []string{"score", "SWEEP", "--out", "OUT", "--baseline", "sca"},
		[]string{"crlbatch: --baseline sca: no family of that name (grouped by algorithm_id); the families are sac, ", "--allow-missing-baseline"}},
	{"baseline of another grouping", []string{"score", "SWEEP", "--out", "OUT", "--baseline", "sac", "--group-by", "algorithm_id,seed"},
		[]string{"--baseline sac: no family of that name (grouped by algorithm_id,seed); the families are sac/0, sac/1, sac/2, "}},
	{"baseline in a job file", []string{"score", "--config", "JOB", "--out", "OUT"},
		[]string{"--baseline sac2: no family of that name", "the families are sac, "}},
}

func TestMistakesAreUsageErrors(t *testing.T) {
	sweep, err := filepath.Abs("../../configs/example-sweep")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range usageCases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			out := filepath.Join(dir, "out")
			job := filepath.Join(dir, "job.yaml")
			if err := os.WriteFile(job, []byte("input: "+sweep+"\nbaseline: sac2\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			args := make([]string, len(c.args))
			for i, a := range c.args {
				args[i] = strings.NewReplacer("SWEEP", sweep, "OUT", out, "JOB", job).Replace(a)
			}
			code, stdout, stderr := crl(t, append(args, "--quiet")...)
			if code != exitUsage {
				t.Fatalf("exit %d, want %d (usage)\nstdout: %s\nstderr: %s", code, exitUsage, stdout, stderr)
			}
			rest := stderr
			for _, w := range c.want {
				i := strings.Index(rest, w)
				if i < 0 {
					t.Fatalf("stderr lacks %q (in order)\nstderr: %s", w, stderr)
				}
				rest = rest[i+len(w):]
			}
			if _, err := os.Stat(out); err == nil {
				if names := listDir(t, out); len(names) > 0 {
					t.Errorf("a usage error published %v", names)
				}
			}
		})
	}
}
