package integration

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// TestSpillFilesOfAKilledJobGo: a job killed -9 while it spills (at the
// first spill file created, seen by inotify) leaves its spill files, which
// no process can remove as it dies; the next job that spills into the
// same folder removes them, says so, and leaves the folder empty when it
// ends. SIGTERM: TestSpillFilesGoOnSIGTERM.
func TestSpillFilesOfAKilledJobGo(t *testing.T) {
	t.Parallel()
	f := getFixture(t)
	ctx := context.Background()
	spill := t.TempDir()
	args := func(out string) []string {
		return append([]string{"score", filepath.Join(f.sweep, inPrefix), "--out", out, "--quiet",
			"--memory-limit", "1", "--spill-dir", spill, "--concurrency", "1"}, scoreFlags...)
	}
	var left map[string][]byte
	for try := 1; try <= 5 && len(left) == 0; try++ {
		var proc atomic.Pointer[os.Process]
		disarm := (&localStore{dir: spill}).killAt(t, func() {
			if p := proc.Load(); p != nil {
				p.Kill()
			}
		}, 1) // the first file created: a spill file
		r := f.crl(ctx, nil, func(p *os.Process) { proc.Store(p) }, args(filepath.Join(t.TempDir(), "killed"))...)
		disarm()
		if r.code != -1 {
			t.Logf("try %d: not killed (%s)", try, r)
		}
		left = (&localStore{dir: spill}).files(t)
	}
	if len(left) == 0 {
		t.Fatal("in 5 tries no killed job left a spill file: the test tests nothing")
	}
	r := f.crl(ctx, nil, nil, args(filepath.Join(t.TempDir(), "next"))...)
	if r.code != 0 {
		t.Fatalf("the next job: %s", r)
	}
	if !strings.Contains(r.stderr, "removed the spill files killed jobs left") {
		t.Errorf("the next job did not say it removed the killed job's spill files:\n%s", r.stderr)
	}
	if e, _ := os.ReadDir(spill); len(e) > 0 {
		for _, x := range e {
			t.Errorf("left in the spill folder after the next job: %s", x.Name())
		}
	}
}
