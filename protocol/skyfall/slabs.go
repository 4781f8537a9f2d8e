package skyfall

import (
	"sync"
	"sync/atomic"
	"unsafe"
	"weak"

	"github.com/crlbatch/crlbatch/internal/hugemem"
)

// Full-size chunks (chunkLen elements: 16 to 128 KiB) are carved out of
// larger buffers, slabs of slabSize bytes whose 2 MiB-aligned interior is
// advised for transparent huge pages (internal/hugemem) before anything
// touches them: on a machine where the first touch of a fresh 4 KiB page is
// dear, the rows Builders hold until their runs are scored fault in a few
// huge pages instead of hundreds of small ones. Only full-size chunks come
// from slabs: a run too short to fill one (the first chunk grows by
// doubling) never takes slab memory.
//
// The Builders of a process share the slabs, one at a time: a chunk is
// handed out of the current slab, a new slab is made when the current one
// has no room for the next chunk. A slab is garbage once no chunk in it is
// referenced, so the chunks of a run already scored stay in memory while a
// chunk of a live run taken from the same slab does (at most a slab, 8 MiB,
// per chunk of the live runs, and in the usual job runs taking chunks at
// the same time also end near the same time). The current slab is held
// weakly: once every chunk in it is garbage, so is the slab. MemBytes
// counts a chunk by its capacity, as before slabs; the current slab's room
// not handed out (under slabSize) is no Builder's.
const slabSize = 8 << 20

// slab is the current slab, held weakly: the slab goes once no chunk in
// it is referenced (a spilled or scored run's memory is not kept because
// the slab was still being handed out), and the next chunk then comes from
// a new one.
var slab struct {
	sync.Mutex
	cur weak.Pointer[[slabSize]byte]
	off int // bytes of cur handed out
}

// slabChunk returns an empty chunk of capacity chunkLen, zeroed and never
// touched before, from the current slab. T must hold no pointers (the
// collector does not look for pointers in a slab).
func slabChunk[T any]() []T {
	var zero T
	size := (int(unsafe.Sizeof(zero))*chunkLen + 7) &^ 7 // 8-byte aligned
	slab.Lock()
	s := slab.cur.Value()
	if s == nil || slab.off+size > slabSize {
		s = new([slabSize]byte)
		hugemem.Advise(s[:])
		slab.cur, slab.off = weak.Make(s), 0
	}
	p := unsafe.Pointer(&s[slab.off])
	slab.off += size
	slab.Unlock()
	return unsafe.Slice((*T)(p), chunkLen)[:0]
}

// slabsOff, when set, has every full-size chunk made alone, as before
// slabs (UseSlabs).
var slabsOff atomic.Bool

// UseSlabs says whether Builders take their full-size chunks from the
// shared slabs (the default) or make each alone. Under a tight memory
// limit, where objects are spilled as soon as they are read, shared slabs
// keep a spilled run's chunks in memory while a live run's chunks share
// their slab: 1 GB of JSONL under --memory-limit 16MiB peaked 8 MiB
// higher and took 0.12 CPU-s more. It applies to the chunks made after
// the call, in every Builder of the process.
func UseSlabs(on bool) { slabsOff.Store(!on) }

// SlabsInUse reports whether Builders take their full-size chunks from the
// shared slabs (UseSlabs).
func SlabsInUse() bool { return !slabsOff.Load() }
