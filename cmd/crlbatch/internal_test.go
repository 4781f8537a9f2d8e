package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/crlbatch/crlbatch/internal/testhook"
)

// TestPanicIsAnInternalError: a panic (a bug) in a decode goroutine, in a
// scoring goroutine and on the job's own goroutine (before publishing, and
// once the result files are written) ends the job as a failure: exit 70 (no documented outcome's), "internal error: …" with the
// panic's value and its stack on stderr, nothing under OUTPUT (no result
// file, no claim) and the spill folder empty. Before, the process died
// with Go's exit status 2 and left the claim and the spill files.
//
// Not parallel: testhook.Panic is the process's, and --memory-limit sets
// the runtime's (see TestSpillIsInvisible).
func TestPanicIsAnInternalError(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "sweep")
	if code, _, stderr := crl(t, "synth", "--out", in, "--seed", "5", "--seeds", "3", "--steps", "400", "--split-files", "2"); code != 0 {
		t.Fatal(stderr)
	}
	for _, where := range []string{"decode", "score", "main", "publish"} {
		t.Run(where, func(t *testing.T) {
			spill := filepath.Join(dir, "spill-"+where)
			if err := os.MkdirAll(spill, 0o755); err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(dir, "out-"+where)
			testhook.Panic = where
			code, _, stderr := crl(t, "score", in, "--out", out, "--quiet", "--spec", "experiment",
				"--episode-end-from-spec", "--solve-component", "progress", "--bootstrap-resamples", "200",
				"--memory-limit", "1KiB", "--spill-dir", spill, "--log-level", "info")
			testhook.Panic = ""
			if code != exitInternal {
				t.Fatalf("exit %d, want %d: %s", code, exitInternal, stderr)
			}
			want := "crlbatch: internal error: test hook: a panic at " + where + " (a bug in crlbatch; please report it)\n"
			if !strings.Contains(stderr, want) {
				t.Errorf("stderr lacks %q:\n%s", want, stderr)
			}
			if !strings.Contains(stderr, "goroutine ") || !strings.Contains(stderr, "testhook.At(") {
				t.Errorf("stderr lacks the panic's stack:\n%s", stderr)
			}
			if where != "decode" && !strings.Contains(stderr, "spilled") {
				t.Errorf("the job did not spill before the panic: %s", stderr)
			}
			if _, err := os.Stat(filepath.Join(out, ".crlbatch", "job.json")); !os.IsNotExist(err) {
				t.Errorf("the claim is left: %v", err)
			}
			filepath.WalkDir(out, func(path string, d fs.DirEntry, err error) error {
				if err == nil && !d.IsDir() {
					t.Errorf("left under OUTPUT: %s", path)
				}
				return nil
			})
			if left, _ := os.ReadDir(spill); len(left) != 0 {
				t.Errorf("spill files left: %v", left)
			}
		})
	}
}
