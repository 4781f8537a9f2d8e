package pipeline

import (
	"bytes"
	"context"
	"log/slog"
	"testing"

	"github.com/crlbatch/crlbatch/internal/hugemem"
	"github.com/crlbatch/crlbatch/internal/testhook"
	"github.com/crlbatch/crlbatch/readers"
	"github.com/crlbatch/crlbatch/scoring"
)

// TestUseSlabs: the builders take their chunks from skyfall's shared slabs
// only when the read step decodes at least slabInputMin bytes (objects
// read already, not wanted now or served from --cache do not count) under
// a memory limit of at least slabLimitMin; the heap's huge-page advice is
// withdrawn where slabs are used or the limit is below slabLimitMin.
//
// Not parallel (see TestMain): whether slabs are used is process-wide.
func TestUseSlabs(t *testing.T) {
	defer readers.UseSlabs(true)
	defer func(f func()) { withdrawHeapAdvice = f }(withdrawHeapAdvice)
	withdrawn := false
	withdrawHeapAdvice = func() { withdrawn = true }
	big, small := int64(slabInputMin), int64(slabInputMin/4)
	var done readObject
	for _, c := range []struct {
		name  string
		sizes []int64
		read  []bool // read already
		want  []bool
		limit int64
		slabs bool
	}{
		{"one object of slabInputMin", []int64{big}, nil, nil, 1 << 30, true},
		{"four small objects adding up", []int64{small, small, small, small}, nil, nil, 1 << 30, true},
		{"three small objects", []int64{small, small, small}, nil, nil, 1 << 30, false},
		{"the big object read already", []int64{big, small}, []bool{true, false}, nil, 1 << 30, false},
		{"the big object not wanted now", []int64{big, small}, nil, []bool{false, true}, 1 << 30, false},
		{"the big object wanted", []int64{big, small}, nil, []bool{true, false}, 1 << 30, true},
		{"under a tight limit", []int64{big}, nil, nil, slabLimitMin - 1, false},
		{"little to decode under a tight limit", []int64{small}, nil, nil, slabLimitMin - 1, false},
		{"at the limit", []int64{big}, nil, nil, slabLimitMin, true},
	} {
		objs := make([]object, len(c.sizes))
		for i, s := range c.sizes {
			objs[i].Size = s
		}
		rd := &read{objects: make([]scoring.Object, len(objs))}
		for i, r := range c.read {
			if r {
				rd.objects[i] = done
			}
		}
		readers.UseSlabs(!c.slabs)
		withdrawn = false
		j := &job{}
		rs := &reading{objs: objs, bud: &budget{limit: c.limit}, rd: rd}
		j.useSlabs(rs, j.decodeBytes(rs, c.want))
		if got := readers.SlabsInUse(); got != c.slabs {
			t.Errorf("%s: slabs in use %v, want %v", c.name, got, c.slabs)
		}
		if want := c.slabs || c.limit < slabLimitMin; withdrawn != want {
			t.Errorf("%s: heap advice withdrawn %v, want %v", c.name, withdrawn, want)
		}
	}
}

// TestReleaseStartPages: a job releases the executable's pages once, when
// the first read step that decodes at least exeReleaseMin bytes starts;
// one that decodes less does not. With the real release (the test
// process's own pages) the job's outputs are those of a job without it.
//
// Not parallel (see TestMain): exeReleaseMin and releaseExecutable are
// process-wide.
func TestReleaseStartPages(t *testing.T) {
	defer func(f func() int64) { releaseExecutable = f }(releaseExecutable)
	defer func(n int64) { exeReleaseMin = n }(exeReleaseMin)
	calls := 0
	releaseExecutable = func() int64 { calls++; return 1 << 20 }
	j := &job{log: slog.New(slog.DiscardHandler)}
	for _, c := range []struct {
		decode int64
		calls  int
	}{{exeReleaseMin - 1, 0}, {exeReleaseMin, 1}, {4 * exeReleaseMin, 1}} {
		j.releaseStartPages(c.decode)
		if calls != c.calls {
			t.Fatalf("after a read step decoding %d bytes: %d calls, want %d", c.decode, calls, c.calls)
		}
	}

	ctx := context.Background()
	op := &memOpener{}
	b, _ := synthSweep(t, op)
	calls = 0
	exeReleaseMin = 1 << 40
	if _, err := Run(ctx, memJob(t, op, "mem://lab/sweep", "mem://lab/kept")); err != nil {
		t.Fatal(err)
	}
	if calls != 0 {
		t.Fatalf("a job decoding less than exeReleaseMin released the executable's pages %d times", calls)
	}
	exeReleaseMin = 1
	if _, err := Run(ctx, memJob(t, op, "mem://lab/sweep", "mem://lab/counted")); err != nil {
		t.Fatal(err)
	}
	if calls != 1 {
		t.Fatalf("a job decoding at least exeReleaseMin released the executable's pages %d times, want 1", calls)
	}
	releaseExecutable = hugemem.ReleaseExecutable
	if _, err := Run(ctx, memJob(t, op, "mem://lab/sweep", "mem://lab/released")); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"runs.parquet", "intervals.parquet", "run_summary.parquet", "families.parquet", "curves.parquet", "report.md", "report.html"} {
		want, err := b.ReadAll(ctx, "kept/"+name)
		if err != nil {
			t.Fatal(err)
		}
		got, err := b.ReadAll(ctx, "released/"+name)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(want, got) {
			t.Errorf("%s of the job that released the executable's pages differs", name)
		}
	}
}

// readObject stands for an object read already.
type readObject struct{}

func (readObject) Rows() int      { return 1 }
func (readObject) NumRuns() int   { return 1 }
func (readObject) Release() error { return nil }

// TestTrimHeapAfterScoring: a job that has scored its runs gives back the
// free heap its outputs will not use (trimHeap) once, after the runs are
// dropped; a job whose scoring pass fails does not.
//
// Not parallel (see TestMain): trimHeap is process-wide.
func TestTrimHeapAfterScoring(t *testing.T) {
	defer func(f func() int) { trimHeap = f }(trimHeap)
	calls := 0
	trimHeap = func() int { calls++; return 0 }
	op := &memOpener{}
	synthSweep(t, op)
	cfg := memJob(t, op, "mem://lab/sweep", "mem://lab/out")
	cfg.Concurrency = 2
	if _, err := Run(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	if calls != 1 {
		t.Fatalf("trimHeap called %d times by a job that succeeded, want 1", calls)
	}
	// A run whose scoring fails (here a bug: the test hook's panic) ends
	// the pass with an error.
	testhook.Panic = "score"
	defer func() { testhook.Panic = "" }()
	calls = 0
	cfg.Output = "mem://lab/out2"
	if _, err := Run(context.Background(), cfg); err == nil {
		t.Fatal("a job whose scoring panicked succeeded")
	}
	if calls != 0 {
		t.Fatalf("trimHeap called %d times by a job that failed, want 0", calls)
	}
}
