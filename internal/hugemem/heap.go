package hugemem

import (
	"math"
	"runtime/debug"
)

// HeapRegion is address space of the Go heap advised for huge pages by
// AdviseHeap; the zero value is no region.
type HeapRegion struct{ lo, hi uintptr }

// Len is the number of bytes advised (0 for no region).
func (r HeapRegion) Len() int { return int(r.hi - r.lo) }

// AdviseHeap makes the Go heap map n more bytes of address space and
// advises their 2 MiB-aligned interior for huge pages, then hands them back
// to the heap untouched (see the package comment, "The heap"). It advises
// nothing, returning no region, where huge pages are unavailable, when n is
// below PageSize, when the collector is off (GOGC=off) or when a soft memory
// limit is set (GOMEMLIMIT): under a limit the collector could run while the
// n bytes are still referenced and keep them as live heap until the next
// collection.
func AdviseHeap(n int) HeapRegion {
	if n < PageSize || !available() || debug.SetMemoryLimit(-1) != math.MaxInt64 {
		return HeapRegion{}
	}
	// No collection may start while the buffer is referenced: one that
	// found it live would count it in the live heap its next goal doubles.
	prev := debug.SetGCPercent(-1)
	defer debug.SetGCPercent(prev)
	if prev < 0 {
		return HeapRegion{}
	}
	return mapAndAdvise(n)
}

// mapAndAdvise allocates n bytes (fresh address space the heap maps for
// them: nothing on the heap is free to hold them), advises them and drops
// them: the next collection frees them and later allocations are placed in
// them. The buffer is never written, so none of its pages is touched.
//
//go:noinline
func mapAndAdvise(n int) HeapRegion {
	b := make([]byte, n)
	lo, hi := interior(addr(b), uintptr(n))
	if hi <= lo {
		return HeapRegion{}
	}
	advise(lo, hi-lo)
	return HeapRegion{lo, hi}
}

// Withdraw takes the advice back (MADV_NOHUGEPAGE): a page of the region
// first touched afterwards is a small one; pages that are huge already stay
// so until the kernel splits them.
func (r HeapRegion) Withdraw() {
	if r.hi > r.lo {
		unadvise(r.lo, r.hi-r.lo)
	}
}
