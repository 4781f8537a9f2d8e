package main

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
	"time"
)

// TestFloorPercent: the GC percent that makes the goal the floor, from
// Go's 4 MiB minimum for a smaller heap, the base one once the base goal
// reaches the floor, never more than maxFloorPercent.
func TestFloorPercent(t *testing.T) {
	t.Parallel()
	const mib = 1 << 20
	for _, c := range []struct {
		live, floor uint64
		base, want  int
	}{
		{0, 32 * mib, 100, 700},            // 4 MiB × 8 = 32 MiB
		{1024, 32 * mib, 100, 700},         // under 4 MiB counts as 4
		{8 * mib, 32 * mib, 100, 300},      // 8 × 4
		{10 * mib, 32 * mib, 100, 220},     // 10 × 3.2
		{16 * mib, 32 * mib, 100, 100},     // 16 × 2 reaches it: base
		{100 * mib, 32 * mib, 100, 100},    // far past: base
		{8 * mib, 32 * mib, 50, 300},       // a lower base raised the same
		{12 * mib, 32 * mib, 200, 200},     // 12 × 3 = 36: base
		{0, 1 << 40, 100, maxFloorPercent}, // bounded
	} {
		if got := floorPercent(c.live, c.floor, c.base); got != c.want {
			t.Errorf("floorPercent(%d, %d, %d) = %d, want %d", c.live, c.floor, c.base, got, c.want)
		}
	}
}

// gcPercent reads the GC percent without changing it.
func gcPercent() int {
	p := debug.SetGCPercent(100)
	debug.SetGCPercent(p)
	return p
}

// liveHeap is the live heap after a collection.
func liveHeap() uint64 {
	runtime.GC()
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// collectUntil collects until ok(GC percent) holds (heapFloor sets it
// from a finalizer, after a collection), or fails after a few seconds.
func collectUntil(t *testing.T, what string, ok func(int) bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !ok(gcPercent()) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: GC percent %d", what, gcPercent())
		}
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
}

// TestHeapFloor: heapFloor sets the percent for Go's minimum goal at once,
// raises it after a collection that leaves the live heap under half the
// floor, gives the base back when the live heap passes that, raises it
// again when it shrinks; a second heapFloor in the process changes
// nothing; stopping restores the base and stops the tuning; a percent of
// its own replaces the base past the floor; GOGC in the environment turns
// it off, percent included. The floor is set from this test process's own
// live heap (other tests leave some).
//
// Not parallel (see TestMain): it sets GOGC and reads the process's GC
// percent, which a job running beside it would move.
func TestHeapFloor(t *testing.T) {
	t.Setenv("GOGC", "") // unset for heapFloor, whatever the runner's
	base := debug.SetGCPercent(100)
	defer debug.SetGCPercent(base)
	if floorActive.Load() {
		t.Fatal("a heapFloor is running already")
	}
	live := liveHeap()
	floor := 3*live + 16<<20 // a goal of about 3× the live heap: 200 % or more

	stop := heapFloor(floor, 0)
	if got, want := gcPercent(), floorPercent(0, floor, 100); got != want {
		t.Errorf("GC percent at the start %d, want %d", got, want)
	}
	collectUntil(t, "with the live heap under a third of the floor", func(p int) bool { return p >= 200 })
	big := make([]byte, floor/2+1) // live × 2 > floor: the base goal is enough
	collectUntil(t, "with more than half the floor live", func(p int) bool { return p == 100 })
	runtime.KeepAlive(big)
	big = nil
	collectUntil(t, "with the heap small again", func(p int) bool { return p >= 200 })

	// A second heapFloor while the first runs changes nothing: a floor of
	// 1 TiB would set maxFloorPercent, and its stop would restore 100.
	stop2 := heapFloor(1<<40, 0)
	if got := gcPercent(); got == maxFloorPercent || got < 200 {
		t.Errorf("a second heapFloor: GC percent %d, want the first's", got)
	}
	stop2()
	if got := gcPercent(); got < 200 {
		t.Errorf("stopping a second heapFloor set the GC percent to %d", got)
	}

	stop()
	if got := gcPercent(); got != 100 {
		t.Errorf("after stop, GC percent %d, want 100", got)
	}
	for range 3 {
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
	if got := gcPercent(); got != 100 {
		t.Errorf("collections after stop changed the GC percent to %d", got)
	}

	// A percent of its own: past the floor the GC percent is that one,
	// below it raised as before; stopping restores what it found (100).
	stop = heapFloor(floor, 50)
	collectUntil(t, "percent 50, with the live heap under a third of the floor", func(p int) bool { return p >= 200 })
	big = make([]byte, floor) // live × 1.5 > floor: percent 50 is enough
	collectUntil(t, "percent 50, with the floor live", func(p int) bool { return p == 50 })
	runtime.KeepAlive(big)
	big = nil
	collectUntil(t, "percent 50, with the heap small again", func(p int) bool { return p >= 200 })
	stop()
	if got := gcPercent(); got != 100 {
		t.Errorf("percent 50, after stop, GC percent %d, want 100", got)
	}

	t.Setenv("GOGC", "150")
	debug.SetGCPercent(150)
	stop = heapFloor(floor, 50)
	for range 3 {
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
	if got := gcPercent(); got != 150 {
		t.Errorf("with GOGC=150 set, GC percent %d, want 150 untouched", got)
	}
	stop()
	if got := gcPercent(); got != 150 {
		t.Errorf("with GOGC=150, after stop, GC percent %d", got)
	}
}
