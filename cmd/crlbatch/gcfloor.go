package main

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"sync/atomic"

	"github.com/crlbatch/crlbatch/internal/hugeheap"
)

// gcFloorBytes is the heap goal below which the collector does not run
// for the score command (heapFloor). On the nightly warm rerun (issue 15,
// docs/performance-history.md) 32 MiB took 0.022 CPU-s of 0.29 and 11 ms of wall
// (12 collections to 3) for 3 MiB of peak RSS; 64 MiB took 0.030 CPU-s for
// 20 MiB. The cold run's peak (~107 MiB) did not move.
const gcFloorBytes = 32 << 20

// scoreGCPercent is the GC percent of the score command past the floor
// (heapFloor), in place of Go's default GOGC=100: the next collection
// comes when the heap has grown by half the live heap, not by all of it.
// A cold job's live heap is mostly the decoded rows' pointer-free chunks,
// cheap to mark, and the memory a collection frees is reused before fresh
// pages are touched. On the 1 GB sweeps (docs/performance-history.md, branch
// onepeak) the one-object and irregular jobs, whose read phase ran up to
// Go's goal, peaked 4.7-10.8 MiB lower (one-zstd 122.7 -> 115.8 MiB,
// irregular plain 106.3 -> 95.5) with 1.3-2.5k fewer page faults, CPU and
// wall no higher beyond the noise; the regular 20-object jobs, whose peak
// is the scoring pass's live heap, did not move. 25 took a little more
// off some (one-zstd -10.5 MiB) but cost CPU on irregular zstd input.
// GOGC in the environment overrides it.
const scoreGCPercent = 50

// maxFloorPercent bounds the GC percent heapFloor sets, so that a nearly
// empty heap does not get an unbounded multiplier.
const maxFloorPercent = 10000

// heapFloor sets the GC percent to percent (when above 0; else it keeps
// the one it finds, GOGC's) and keeps Go's heap goal at least floor bytes:
// after each collection, when the live heap times (1 + percent/100) is
// below floor, the GC percent is raised so that the next goal is floor;
// above it, the GC percent is percent. Go's own minimum goal is 4 MiB: a
// job whose heap stays small (a warm --cache rerun) otherwise collects a
// dozen times in its first fifth of a second, each collection marking the
// same few MiB. Past floor a job whose live heap is large (a cold run) has
// the goal percent gives it. GOGC in the environment leaves the GC percent
// alone (floor and percent both), and so does a heapFloor already running
// in the process (score commands run at once in one process, as the tests
// do, share the first one's). It returns the function that stops it and
// restores the GC percent it found; under the start-up hold
// (internal/hugeheap) that is the one the hold found, and the hold ends.
func heapFloor(floor uint64, percent int) func() {
	if floor == 0 || os.Getenv("GOGC") != "" || !floorActive.CompareAndSwap(false, true) {
		return func() {}
	}
	prev, held := hugeheap.Release()
	if !held {
		prev = debug.SetGCPercent(100)
		debug.SetGCPercent(prev)
	}
	if prev <= 0 {
		floorActive.Store(false)
		return func() {}
	}
	base := prev
	if percent > 0 {
		base = percent
	}
	var mu sync.Mutex // a finalizer's tuning and stop, one at a time
	stopped := false
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	var arm func()
	arm = func() {
		s := &sentinel{}
		runtime.SetFinalizer(s, func(*sentinel) {
			mu.Lock()
			defer mu.Unlock()
			if stopped {
				return
			}
			metrics.Read(sample)
			debug.SetGCPercent(floorPercent(sample[0].Value.Uint64(), floor, base))
			arm()
		})
	}
	debug.SetGCPercent(floorPercent(0, floor, base))
	arm()
	return func() {
		mu.Lock()
		defer mu.Unlock()
		if stopped {
			return
		}
		stopped = true
		debug.SetGCPercent(prev)
		floorActive.Store(false)
	}
}

// floorPercent is the GC percent that makes the heap goal after a
// collection that left live bytes at least floor, base (heapFloor's
// percent, or GOGC's) when base alone does. Go's goal is max(live × (1 + p/100), 4 MiB × p/100): a live
// heap under 4 MiB counts as 4 MiB.
func floorPercent(live, floor uint64, base int) int {
	live = max(live, 4<<20)
	if live*uint64(100+base)/100 >= floor {
		return base
	}
	return min(int(floor*100/live)-100, maxFloorPercent)
}

// floorActive is whether a heapFloor runs in the process.
var floorActive atomic.Bool

// sentinel is the object whose finalizer runs once after each collection
// (it is unreachable from the moment it is armed); not pointer-free, so
// that it is not in a tiny-allocator block kept alive by a neighbour.
type sentinel struct{ _ *int }
