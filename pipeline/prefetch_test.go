package pipeline

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"gocloud.dev/blob"
)

// TestRunEntriesReadWhileDecoding: on a warm rerun the entries of the
// runs the indexes list are read while the changed object is decoded, not
// after: the changed object's reading is held until every unchanged run's
// entry was read (a job that read them after the decoding would wait here
// until the test gives up), every unchanged run is served from them, and
// the result files are those of a job without a cache.
func TestRunEntriesReadWhileDecoding(t *testing.T) {
	ctx := context.Background()
	op := &memOpener{}
	b, keys := synthSweep(t, op)
	score := func(out, c string) string {
		t.Helper()
		var log bytes.Buffer
		cfg := memJob(t, op, "mem://lab/sweep", "mem://lab/"+out)
		cfg.Concurrency, cfg.Cache = 2, c
		cfg.Logger = slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelInfo}))
		if _, err := Run(ctx, cfg); err != nil {
			t.Fatal(err)
		}
		return log.String()
	}
	score("cold", "mem://cache/c")
	changeReward(t, b, keys[1])

	var read atomic.Int64
	all := make(chan struct{})
	testHookPrefetched = func(string) {
		if read.Add(1) == int64(len(keys)-1) {
			close(all)
		}
	}
	var opened []string
	late := false
	testHookOpen = func(key string) {
		opened = append(opened, key)
		select {
		case <-all:
		case <-time.After(10 * time.Second):
			late = true
		}
	}
	defer func() { testHookPrefetched, testHookOpen = nil, nil }()
	l := score("warm", "mem://cache/c")
	testHookPrefetched, testHookOpen = nil, nil
	if len(opened) != 1 || opened[0] != keys[1] {
		t.Fatalf("objects read: %q, want the changed %s alone", opened, keys[1])
	}
	if late {
		t.Fatalf("%d of the %d unchanged runs' entries read while the changed object was: want all", read.Load(), len(keys)-1)
	}
	if !strings.Contains(l, fmt.Sprintf(`served=%d assembled=1 scored=1`, len(keys)-1)) {
		t.Errorf("warm: want every unchanged run served: %s", l)
	}
	score("none", "")
	sameResults(t, b, "none", "warm")
}

// TestRunEntryOfAnotherPieceSet: a run whose entry the prefetch finds
// under the pieces the indexes list, but which has, once the changed
// object is decoded, a piece in that object too, is not served from that
// entry (its key names its pieces): it is assembled from both objects and
// scored, and the result files are those of a job without a cache. Its
// rows are moved from the first object to the second between the jobs:
// without its new piece its old entry would stand for fewer rows.
func TestRunEntryOfAnotherPieceSet(t *testing.T) {
	ctx := context.Background()
	op := &memOpener{}
	b, keys := synthSweep(t, op)
	lines := func(key string) []string {
		t.Helper()
		data, err := b.ReadAll(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		return strings.SplitAfter(strings.TrimSuffix(string(data), "\n")+"\n", "\n")
	}
	write := func(key string, ls []string) {
		t.Helper()
		if err := b.WriteAll(ctx, key, []byte(strings.Join(ls, "")), nil); err != nil {
			t.Fatal(err)
		}
	}
	// The run of keys[0] in the first half of its rows, kept in keys[0];
	// its second half later appended to keys[1] (another run's object,
	// after it in key order).
	run0, other := lines(keys[0]), lines(keys[1])
	half := len(run0) / 2
	write(keys[0], run0[:half])
	score := func(out, c string) string {
		t.Helper()
		var log bytes.Buffer
		cfg := memJob(t, op, "mem://lab/sweep", "mem://lab/"+out)
		cfg.Concurrency, cfg.Cache = 2, c
		cfg.Logger = slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelInfo}))
		if _, err := Run(ctx, cfg); err != nil {
			t.Fatal(err)
		}
		return log.String()
	}
	score("cold", "mem://cache/c")
	write(keys[1], append(other[:len(other):len(other)], run0[half:]...))
	var prefetched atomic.Int64
	testHookPrefetched = func(string) { prefetched.Add(1) }
	defer func() { testHookPrefetched = nil }()
	l := score("warm", "mem://cache/c")
	testHookPrefetched = nil
	if prefetched.Load() == 0 {
		t.Fatal("no run entry was read while the changed object was decoded")
	}
	// keys[1]'s run and the run of keys[0], now in two objects.
	if !strings.Contains(l, fmt.Sprintf(`served=%d assembled=2 scored=2`, len(keys)-2)) {
		t.Errorf("warm: want the two runs of the changed object scored, the others served: %s", l)
	}
	score("none", "")
	sameResults(t, b, "none", "warm")
}

// sameResults fails unless the result files under mem://lab/<got> are
// those under mem://lab/<want>.
func sameResults(t *testing.T, b *blob.Bucket, want, got string) {
	t.Helper()
	ctx := context.Background()
	for _, name := range []string{"runs.parquet", "intervals.parquet", "run_summary.parquet", "families.parquet", "curves.parquet", "report.md"} {
		w, err := b.ReadAll(ctx, want+"/"+name)
		if err != nil {
			t.Fatal(err)
		}
		g, err := b.ReadAll(ctx, got+"/"+name)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(w, g) {
			t.Errorf("%s differs from a job without a cache", name)
		}
	}
}
