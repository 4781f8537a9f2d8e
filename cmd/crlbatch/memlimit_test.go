package main

import (
	"math"
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
