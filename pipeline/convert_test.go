package pipeline

import (
	"context"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"

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
