package pipeline

import (
	"context"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/crlbatch/crlbatch/internal/synth"
	"github.com/crlbatch/crlbatch/readers"
)

// TestConvertFailureLeavesNothing: a convert that fails on one object (a
// line that is not JSON) removes the Parquet objects it wrote before the
// failure; what OUTPUT held before is left as it was, and a folder it
// created is removed.
func TestConvertFailureLeavesNothing(t *testing.T) {
	t.Parallel()
	in := localSweep(t)
	var objs []string
	filepath.WalkDir(in, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			objs = append(objs, p)
		}
		return err
	})
	if len(objs) < 3 {
		t.Fatalf("sweep of %d objects, want 3", len(objs))
	}
	// The last object listed breaks, so that the ones before it are
	// written first (one at a time).
	f, err := os.OpenFile(objs[len(objs)-1], os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("{bad\n")
	f.Close()
	for _, fresh := range []bool{true, false} {
		out := filepath.Join(t.TempDir(), "out")
		if !fresh {
			write(t, filepath.Join(out, "notes.txt"), "mine")
		}
		before := snapshot(t, out)
		_, err := Convert(context.Background(), ConvertConfig{Input: in, Output: out, Concurrency: 1, Retry: DefaultRetry()})
		var de *readers.DataError
		if !errors.As(err, &de) {
			t.Fatalf("convert: %v, want a data error", err)
		}
		if after := snapshot(t, out); !maps.Equal(after, before) {
			t.Errorf("a failed convert left %v in OUTPUT (before: %v)", slices.Collect(maps.Keys(after)), slices.Collect(maps.Keys(before)))
		}
		if _, err := os.Stat(out); fresh && !errors.Is(err, os.ErrNotExist) {
			t.Errorf("a failed convert left OUTPUT %s: %v", out, err)
		}
	}
}

// TestConvertCancelled: a convert whose context is cancelled (SIGINT or
// SIGTERM in cmd/crlbatch) while it converts stops, returns the
// cancellation (exit 130 or 143) and removes the objects it wrote, as a
// failed convert does. It converted every object and returned nil (exit
// 0), whatever the signal: nothing checked the context once the objects
// were listed. The context is cancelled as the second object starts, one
// object at a time, in a fresh OUTPUT and in one that holds a file.
//
// Not parallel (see TestMain): it sets testHookPhase.
func TestConvertCancelled(t *testing.T) {
	in := filepath.Join(t.TempDir(), "in")
	if _, err := synth.Run(context.Background(), synth.Config{Out: in, Seeds: 2, Steps: 80, Seed: 3}); err != nil {
		t.Fatal(err)
	}
	for _, fresh := range []bool{true, false} {
		out := filepath.Join(t.TempDir(), "out")
		if !fresh {
			write(t, filepath.Join(out, "notes.txt"), "mine")
		}
		before := snapshot(t, out)
		ctx, cancel := context.WithCancel(context.Background())
		started := 0
		testHookPhase = func(p string) {
			if p == "convert" {
				if started++; started == 2 {
					cancel()
				}
			}
		}
		n, err := Convert(ctx, ConvertConfig{Input: in, Output: out, Concurrency: 1, Retry: DefaultRetry()})
		testHookPhase = nil
		cancel()
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("fresh %v: convert returned %d, %v; want the cancellation", fresh, n, err)
		}
		if started > 2 {
			t.Errorf("fresh %v: %d objects started converting, want 2 (none after the cancel)", fresh, started)
		}
		if after := snapshot(t, out); !maps.Equal(after, before) {
			t.Errorf("fresh %v: a cancelled convert left %v in OUTPUT (before: %v)", fresh, slices.Collect(maps.Keys(after)), slices.Collect(maps.Keys(before)))
		}
		if _, err := os.Stat(out); fresh && !errors.Is(err, os.ErrNotExist) {
			t.Errorf("a cancelled convert left OUTPUT %s: %v", out, err)
		}
	}
}
