package pipeline

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/crlbatch/crlbatch/internal/synth"
)

// Spill files go on every path out of a job (issue 13, finding 6): a
// storage error after objects spilled, and a spill folder that fills up.
// SIGTERM through the binary: integration/spill_test.go.

// spillSweep writes a sweep of several objects, each big enough to spill.
func spillSweep(t *testing.T, steps int) string {
	t.Helper()
	in := filepath.Join(t.TempDir(), "in")
	if _, err := synth.Run(context.Background(), synth.Config{Out: in, Seeds: 3, Steps: steps, Seed: 9}); err != nil {
		t.Fatal(err)
	}
	return in
}

func assertEmpty(t *testing.T, dir, when string) {
	t.Helper()
	left, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range left {
		t.Errorf("%s: left in the spill folder: %s", when, e.Name())
	}
}

// TestSpillReleasedOnStorageError: objects that spilled before another
// object's read failed leave no file behind.
//
// Not parallel (see TestMain): it sets testHookOpen, which every job in the
// process calls.
func TestSpillReleasedOnStorageError(t *testing.T) {
	in := spillSweep(t, 200)
	objs, _ := filepath.Glob(filepath.Join(in, "*", "*.jsonl"))
	victim := objs[len(objs)-1]
	spill := t.TempDir()
	old := testHookOpen
	t.Cleanup(func() { testHookOpen = old })
	spilled := 0
	testHookOpen = func(key string) {
		if strings.HasSuffix(victim, filepath.FromSlash(key)) {
			spilled = countFiles(t, spill)
			os.Truncate(victim, 10) // a storage error: changed while read
		}
	}
	cfg := localJob(in, filepath.Join(t.TempDir(), "out"), nil)
	cfg.Concurrency, cfg.MemoryLimit, cfg.SpillDir = 1, 1, spill
	if _, err := Run(context.Background(), cfg); !IsStorage(err) {
		t.Fatalf("error %v, want a storage error", err)
	}
	if spilled == 0 {
		t.Fatalf("nothing had spilled when the read failed: the test tests nothing")
	}
	assertEmpty(t, spill, "after a storage error")
}

func countFiles(t *testing.T, dir string) int {
	t.Helper()
	n := 0
	filepath.Walk(dir, func(_ string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			n++
		}
		return nil
	})
	return n
}

// TestSpillReleasedWhenTheSpillFolderFills: a spill folder on a small file
// system fills up mid-job; the job fails with a storage error naming the
// folder and leaves it empty, so the next job is not short of space.
func TestSpillReleasedWhenTheSpillFolderFills(t *testing.T) {
	t.Parallel()
	in := spillSweep(t, 3000)
	spill := mountTmpfs(t, "size=160k")
	cfg := localJob(in, filepath.Join(t.TempDir(), "out"), nil)
	cfg.Concurrency, cfg.MemoryLimit, cfg.SpillDir = 1, 1, spill
	_, err := Run(context.Background(), cfg)
	if !IsStorage(err) || !strings.Contains(err.Error(), spill) {
		t.Fatalf("error %v, want a storage error naming %s", err, spill)
	}
	assertEmpty(t, spill, "after the spill folder filled")
	// Room enough for one object at a time: the same job fails again the
	// same way, not for want of the space the first one left taken.
	first, _, _ := strings.Cut(err.Error(), ": spill ")
	if _, err2 := Run(context.Background(), cfg); !IsStorage(err2) || !strings.HasPrefix(err2.Error(), first+": spill ") {
		t.Errorf("second run: %v, want it to fail at the same object: %v", err2, err)
	}
	assertEmpty(t, spill, "after the second run")
}
