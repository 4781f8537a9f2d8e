package integration

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestSpillFilesGoOnSIGTERM: a job that has spilled decoded rows to
// --spill-dir and is then sent SIGTERM exits 143 and leaves the spill
// folder empty (issue 13, finding 6; the storage-error and full-disk paths
// are pipeline's TestSpillReleased…).
func TestSpillFilesGoOnSIGTERM(t *testing.T) {
	t.Parallel()
	f := getFixture(t)
	for try := 1; ; try++ {
		spill := t.TempDir()
		out := filepath.Join(t.TempDir(), "out")
		seen := 0
		r := f.crl(context.Background(), nil, func(p *os.Process) {
			// SIGTERM as soon as something has spilled.
			deadline := time.Now().Add(30 * time.Second)
			for time.Now().Before(deadline) {
				if e, _ := os.ReadDir(spill); len(e) > 0 {
					seen = len(e)
					break
				}
				time.Sleep(200 * time.Microsecond)
			}
			p.Signal(syscall.SIGTERM)
		}, append([]string{"score", filepath.Join(f.sweep, inPrefix), "--out", out, "--quiet",
			"--memory-limit", "1", "--spill-dir", spill, "--concurrency", "1"}, scoreFlags...)...)
		if r.code == 0 && try < 5 {
			t.Logf("try %d: the job finished before the signal; again", try)
			continue
		}
		if seen == 0 {
			t.Fatalf("nothing spilled: %s", r)
		}
		if r.code != 143 {
			t.Fatalf("exit %d, want 143 (SIGTERM): %s", r.code, r)
		}
		left, _ := os.ReadDir(spill)
		for _, e := range left {
			t.Errorf("left in the spill folder after SIGTERM: %s", e.Name())
		}
		if _, err := os.Stat(filepath.Join(out, "manifest.json")); err == nil {
			t.Errorf("a result was published")
		}
		return
	}
}
