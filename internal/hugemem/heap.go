package hugemem

import (
	"math"
	"runtime/debug"
	"strconv"
	"sync"
)

// heapAdvice holds the ranges of the heap's address space AdviseHeap
// advised and WithdrawHeap has not withdrawn.
var heapAdvice struct {
	sync.Mutex
	ranges [][2]uintptr
	bytes  int
}

// AdviseHeap makes the Go heap map n more bytes of address space and
// advises their 2 MiB-aligned interior for huge pages, then hands them back
// to the heap untouched, collected and counted as given back to the system
// (see the package comment, "The heap"); it returns the bytes advised. It
// advises nothing where huge pages are unavailable, in a 32-bit process (whose address space n bytes would crowd), when n is
// below PageSize, when the collector is off (GOGC=off) or when a
// soft memory limit is set (GOMEMLIMIT): under a limit the collector could
// run while the n bytes are still referenced and count them as live heap
// until its next cycle.
func AdviseHeap(n int) int {
	if n < PageSize || strconv.IntSize < 64 || !available() || debug.SetMemoryLimit(-1) != math.MaxInt64 {
		return 0
	}
	// No collection may start while the buffer is referenced: one that
	// found it live would count it in the live heap its next goal doubles.
	prev := debug.SetGCPercent(-1)
	defer debug.SetGCPercent(prev)
	if prev < 0 {
		return 0
	}
	lo, hi := mapAndAdvise(n)
	if hi <= lo {
		return 0
	}
	// Free the buffer now and count its pages (never touched) as given
	// back to the system: debug.FreeOSMemory collects, then releases every
	// free page, one madvise per 4 MiB run of them. Left to the next
	// collection, the buffer's pages were then given back by the
	// background scavenger, 64 KiB a call: ~3,600 calls for 227 of the 256
	// MiB, ~3.5 ms of CPU in the middle of a warm nightly rerun's read
	// (docs/decisions.md, "The advised heap released at once").
	debug.FreeOSMemory()
	heapAdvice.Lock()
	defer heapAdvice.Unlock()
	heapAdvice.ranges = append(heapAdvice.ranges, [2]uintptr{lo, hi})
	heapAdvice.bytes += int(hi - lo)
	return int(hi - lo)
}

// mapAndAdvise allocates n bytes (fresh address space the heap maps for
// them: nothing on the heap is free to hold them), advises them and drops
// them: AdviseHeap's collection frees them and later allocations are
// placed in them. The buffer is never written, so none of its pages is
// touched.
//
//go:noinline
func mapAndAdvise(n int) (lo, hi uintptr) {
	b := make([]byte, n)
	lo, hi = interior(addr(b), uintptr(n))
	if hi > lo {
		advise(lo, hi-lo)
	}
	return lo, hi
}

// HeapAdvised is the number of bytes of the heap's address space advised
// by AdviseHeap and not withdrawn.
func HeapAdvised() int {
	heapAdvice.Lock()
	defer heapAdvice.Unlock()
	return heapAdvice.bytes
}

// WithdrawHeap takes back the advice AdviseHeap gave (MADV_NOHUGEPAGE), for
// the rest of the process: a page of those ranges first touched afterwards
// is a small one; pages that are huge already stay so until the kernel
// splits them. It then returns the heap's free memory to the system
// (debug.FreeOSMemory: a collection, then every free page released). The
// buffer AdviseHeap dropped left its pages marked as used once, and the
// runtime clears such pages itself before it hands them out again, page by
// page, each clearing a first touch: a buffer that Advise would advise
// after allocating it (skyfall's slabs) would be touched in small pages
// before its advice. Pages released to the system are known to come back
// zeroed and are not cleared. Without advice given it does nothing; safe
// from several goroutines.
func WithdrawHeap() {
	heapAdvice.Lock()
	defer heapAdvice.Unlock()
	if len(heapAdvice.ranges) == 0 {
		return
	}
	for _, r := range heapAdvice.ranges {
		unadvise(r[0], r[1]-r[0])
	}
	heapAdvice.ranges, heapAdvice.bytes = nil, 0
	debug.FreeOSMemory()
}
