package pipeline

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"gocloud.dev/blob"
	"gocloud.dev/blob/memblob"

	"github.com/crlbatch/crlbatch/internal/synth"
	"github.com/crlbatch/crlbatch/readers"
)

// memOpener shares one in-memory bucket per bucket URL, so that a test can
// write the input, run the job and read the output.
type memOpener struct {
	mu      sync.Mutex
	buckets map[string]*blob.Bucket
}

func (m *memOpener) open(_ context.Context, u string) (*blob.Bucket, func() error, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.buckets == nil {
		m.buckets = map[string]*blob.Bucket{}
	}
	b, ok := m.buckets[u]
	if !ok {
		b = memblob.OpenBucket(nil)
		m.buckets[u] = b
	}
	return b, func() error { return nil }, nil
}

func memJob(t *testing.T, op *memOpener, in, out string) Config {
	t.Helper()
	cfg := DefaultConfig()
	cfg.Input, cfg.Output, cfg.Opener = in, out, op.open
	cfg.Resamples = 500
	return cfg
}

func TestMemBucketEndToEnd(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	op := &memOpener{}
	b, _, _ := op.open(ctx, "mem://lab")
	if _, err := synth.Write(ctx, b, "sweeps/2026/", synth.Config{Seeds: 2, Steps: 120, Compression: "mixed", Seed: 5}); err != nil {
		t.Fatal(err)
	}
	// A sibling prefix that directory meaning must not read.
	if err := b.WriteAll(ctx, "sweeps/2026-old/x.jsonl", []byte("not json\n"), nil); err != nil {
		t.Fatal(err)
	}
	// A file the patterns skip.
	if err := b.WriteAll(ctx, "sweeps/2026/README.txt", []byte("notes"), nil); err != nil {
		t.Fatal(err)
	}
	sum, err := Run(ctx, memJob(t, op, "mem://lab/sweeps/2026", "mem://lab/results/2026"))
	if err != nil {
		t.Fatal(err)
	}
	if sum.Runs != 6 || sum.Families != 3 || sum.Objects != 6 {
		t.Errorf("summary %+v", sum)
	}
	for _, name := range []string{"runs.parquet", "intervals.parquet", "run_summary.parquet", "families.parquet", "report.md", "manifest.json"} {
		ok, err := b.Exists(ctx, "results/2026/"+name)
		if err != nil || !ok {
			t.Errorf("results/2026/%s missing (%v)", name, err)
		}
	}
	// The output lives beside the input; a second run refuses to overwrite.
	if _, err := Run(ctx, memJob(t, op, "mem://lab/sweeps/2026", "mem://lab/results/2026")); !isUsage(err) {
		t.Errorf("second run: %v, want a usage error", err)
	}
	// An output inside the input prefix is refused.
	if _, err := Run(ctx, memJob(t, op, "mem://lab/sweeps", "mem://lab/sweeps/2026/scores")); !isUsage(err) {
		t.Errorf("output inside input: %v, want a usage error", err)
	}
}

func TestSingleObjectInput(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	op := &memOpener{}
	b, _, _ := op.open(ctx, "mem://lab")
	row := `{"reward": 1, "regime_id": "a"}` + "\n" + `{"reward": 0.5, "regime_id": "b"}` + "\n"
	b.WriteAll(ctx, "runs/one.jsonl", []byte(row), nil)
	b.WriteAll(ctx, "runs/two.jsonl", []byte(row), nil)
	sum, err := Run(ctx, memJob(t, op, "mem://lab/runs/one.jsonl", "mem://lab/out"))
	if err != nil {
		t.Fatal(err)
	}
	if sum.Objects != 1 || sum.Runs != 1 {
		t.Errorf("an INPUT naming one object reads that object alone: %+v", sum)
	}
}

func TestFailedJobLeavesNothing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	op := &memOpener{}
	b, _, _ := op.open(ctx, "mem://lab")
	b.WriteAll(ctx, "in/a.jsonl", []byte(`{"reward": 1, "regime_id": "a"}`+"\n"), nil)
	b.WriteAll(ctx, "in/b.jsonl", []byte(`{"reward": 1, "regime_id": "a"}`+"\n"+`{"reward": NaN, "regime_id": "a"}`+"\n"), nil)
	_, err := Run(ctx, memJob(t, op, "mem://lab/in", "mem://lab/out"))
	var de *readers.DataError
	if !errors.As(err, &de) || de.Line != 2 || !strings.Contains(err.Error(), "mem://lab/in/b.jsonl") {
		t.Fatalf("error %v: want a data error naming mem://lab/in/b.jsonl line 2", err)
	}
	it := b.List(&blob.ListOptions{Prefix: "out/"})
	if o, err := it.Next(ctx); err == nil {
		t.Errorf("a failed job left %s", o.Key)
	}

	// Cancelled before it starts: nothing either.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	b.Delete(ctx, "in/b.jsonl")
	if _, err := Run(cctx, memJob(t, op, "mem://lab/in", "mem://lab/out")); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
	it = b.List(&blob.ListOptions{Prefix: "out/"})
	if o, err := it.Next(ctx); err == nil {
		t.Errorf("a cancelled job left %s", o.Key)
	}
}

func isUsage(err error) bool {
	var u *UsageError
	return errors.As(err, &u)
}
