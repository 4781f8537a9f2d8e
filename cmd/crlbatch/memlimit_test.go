package main

import (
	"math"
	"path/filepath"
	"runtime/debug"
	"testing"
)

// TestSoftMemoryLimit: an explicit --memory-limit sets the runtime's soft
// limit to it plus the headroom, and the returned func restores the one
// before; no --memory-limit, or GOMEMLIMIT in the environment, leaves it.
//
// Not parallel (see TestMain): it sets GOMEMLIMIT and reads the runtime's
// soft memory limit, process-wide.
func TestSoftMemoryLimit(t *testing.T) {
	before := debug.SetMemoryLimit(-1)
	restore := softMemoryLimit(16 << 20)
	if got := debug.SetMemoryLimit(-1); got != 16<<20+softHeadroom {
		t.Errorf("soft limit %d, want %d", got, 16<<20+softHeadroom)
	}
	restore()
	if got := debug.SetMemoryLimit(-1); got != before {
		t.Errorf("restored to %d, want %d", got, before)
	}
	for _, limit := range []int64{0, math.MaxInt64} {
		restore := softMemoryLimit(limit)
		if got := debug.SetMemoryLimit(-1); got != before {
			t.Errorf("--memory-limit %d: soft limit %d, want it left at %d", limit, got, before)
		}
		restore()
	}
	t.Setenv("GOMEMLIMIT", "1GiB")
	restore = softMemoryLimit(16 << 20)
	if got := debug.SetMemoryLimit(-1); got != before {
		t.Errorf("with GOMEMLIMIT set: soft limit %d, want it left at %d", got, before)
	}
	restore()
}

// TestSmallBudgetHeap: a score job under an explicit --memory-limit below
// hugeheap.LimitMin withdraws the heap's huge-page advice; one at the bound,
// or without --memory-limit, keeps it.
//
// Not parallel (see TestMain): it replaces withdrawHeapAdvice.
func TestSmallBudgetHeap(t *testing.T) {
	defer func(f func()) { withdrawHeapAdvice = f }(withdrawHeapAdvice)
	calls := 0
	withdrawHeapAdvice = func() { calls++ }
	for _, c := range []struct {
		limit []string
		want  int
	}{
		{nil, 0},
		{[]string{"--memory-limit", "256MiB"}, 0},
		{[]string{"--memory-limit", "255MiB"}, 1},
		{[]string{"--memory-limit", "16MiB"}, 1},
	} {
		calls = 0
		args := append([]string{"score", "../../configs/example-sweep", "--out", filepath.Join(t.TempDir(), "out"), "--quiet"}, c.limit...)
		if code, _, stderr := crl(t, args...); code != 0 {
			t.Fatalf("%v: exit %d: %s", c.limit, code, stderr)
		}
		if calls != c.want {
			t.Errorf("%v: advice withdrawn %d times, want %d", c.limit, calls, c.want)
		}
	}
}
