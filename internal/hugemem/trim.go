package hugemem

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
)

// trimSlack is the least free memory TrimHeap releases: below it the two
// collections and the clearing it costs are not worth the pages.
const trimSlack = 8 << 20

// trimChunk is the size of the allocations with which TrimHeap holds the
// pages it keeps: the largest small-object size class, whose spans are
// one object each, so that the runtime places each in the lowest free run
// of four pages, as it places the spans of the allocations that follow.
const trimChunk = 32 << 10

// TrimHeap returns to the system the heap's free memory beyond what the
// heap can take before its next collection, and keeps that much resident;
// it returns the bytes it meant to release (0 when it did nothing). Go
// keeps the pages a collection frees resident, and its background
// scavenger gives them back at a small fraction of a core: a job whose
// heap has just shrunk (crlbatch's, once the decoded runs are scored)
// keeps its high water resident while the phase after it faults in more
// (the binary's pages of the writers and figures), and the two add up in
// the process's peak. debug.FreeOSMemory alone releases every free page,
// and the next phase then faults back in the pages it allocates (on the
// 1 GB sweep, ~25 MiB, 0.07 CPU-s).
//
// So TrimHeap first takes the room below the next heap goal (the goal
// less the bytes of objects and of the spans' unused slots) in small
// allocations, which the runtime places in the lowest free pages, where
// later allocations go first; it then releases every other free page
// (debug.FreeOSMemory: a collection, then the release), drops what it
// took and collects, so that the kept pages are free again. It costs two
// collections of the heap that is left and the clearing of the kept room
// (13-17 ms on the 1 GB sweep's job, 24 MiB kept, 44 MiB released). A
// fragment of free pages smaller than a chunk is released with the rest.
//
// It does nothing when the free memory exceeds the room by less than
// trimSlack, which includes a collector turned off (GOGC=off: an unbounded
// goal). Call it when no other goroutine allocates much: what they
// allocate meanwhile is counted as the room's.
func TrimHeap() int {
	s := []metrics.Sample{
		{Name: "/gc/heap/goal:bytes"},
		{Name: "/memory/classes/heap/objects:bytes"},
		{Name: "/memory/classes/heap/unused:bytes"},
		{Name: "/memory/classes/heap/free:bytes"},
	}
	metrics.Read(s)
	goal, objects, unused, free := s[0].Value.Uint64(), s[1].Value.Uint64(), s[2].Value.Uint64(), s[3].Value.Uint64()
	var room uint64
	if goal > objects+unused {
		room = goal - objects - unused
	}
	if free < room || free-room < trimSlack {
		return 0
	}
	keep := make([][]byte, 0, room/trimChunk+1)
	for n := uint64(0); n < room; n += trimChunk {
		keep = append(keep, make([]byte, trimChunk))
	}
	debug.FreeOSMemory()
	runtime.KeepAlive(keep) // and no further: the next collection frees it
	runtime.GC()
	return int(free - room)
}
