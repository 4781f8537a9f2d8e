package readers

import (
	"math/bits"
	"sync"
	"sync/atomic"
	"unsafe"
	"weak"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"

	"github.com/crlbatch/crlbatch/internal/hugemem"
)

// pqPages is the allocator of the Parquet reader's page buffers (each
// column chunk reader's compressed page, decompressed data page and
// dictionary page): a buffer released when its column chunk reader is
// closed goes back to a pool by its power-of-two size, and the next column
// chunk, of this object or the next, reuses it instead of allocating its
// own. Without it every column chunk of every row group allocated its page
// buffers anew (about 30 MB an object of the benchmark sweep), garbage
// that drove the collector and the heap's peak. The pools are sync.Pools:
// buffers left idle once the objects are read are collected. Nothing of a
// page is kept past its column chunk reader's Close (the direct path copies
// what it keeps; pqarrow's builders copy too).
var pqPages memory.Allocator = pqPool{}

// pqReaderProps are the reader properties of every Parquet file read: the
// page buffers from pqPages, the column chunks read whole (one range read
// each, parquet.ReaderProperties' default).
var pqReaderProps = parquet.NewReaderProperties(pqPages)

// pqMemReaderProps are those of a file held in memory (a *bytes.Reader:
// the engine reads small objects whole): each column chunk is read through
// a buffer of a page header's size (arrow-go's first Peek of a header
// asks 16 KiB) instead of copied whole into a fresh buffer first. The
// pages are copied once, from the object's bytes into the pooled page
// buffers; a column chunk no longer costs an allocation of its size
// (about the object's bytes in all, fresh memory the copy faulted in).
var pqMemReaderProps = func() *parquet.ReaderProperties {
	p := parquet.NewReaderProperties(pqPages)
	p.BufferedStreamEnabled = true
	p.BufferSize = 16 << 10
	return p
}()

const (
	pqPoolMin = 12 // 4 KiB: smaller buffers are allocated, not pooled
	pqPoolMax = 26 // 64 MiB: larger ones too
)

var pqPoolClasses [pqPoolMax + 1]sync.Pool

type pqPool struct{}

func pqPoolClass(size int) int {
	if size <= 1<<pqPoolMin {
		return pqPoolMin
	}
	return bits.Len(uint(size - 1))
}

// Allocate returns size zeroed bytes, as memory.GoAllocator does.
func (pqPool) Allocate(size int) []byte {
	c := pqPoolClass(size)
	if c > pqPoolMax {
		return make([]byte, size)
	}
	if v, ok := pqPoolClasses[c].Get().(*[]byte); ok {
		b := (*v)[:size]
		clear(b)
		return b
	}
	return pqNew(size, 1<<c)
}

func (p pqPool) Reallocate(size int, b []byte) []byte {
	if size <= cap(b) {
		n := len(b)
		b = b[:size]
		if size > n {
			clear(b[n:])
		}
		return b
	}
	nb := p.Allocate(size)
	copy(nb, b)
	p.Free(b)
	return nb
}

func (pqPool) Free(b []byte) {
	c := cap(b)
	if c < 1<<pqPoolMin || c > 1<<pqPoolMax || c&(c-1) != 0 {
		return // not one of the pool's
	}
	b = b[:c]
	pqPoolClasses[bits.Len(uint(c-1))].Put(&b)
}

// pqNew makes a pool buffer of capacity bytes (a power of two); one large
// enough to hold a whole 2 MiB page is advised for transparent huge pages
// (internal/hugemem) before anything touches it: the object buffers and
// large page buffers are filled whole, and fault in a few huge pages
// instead of hundreds of small ones.
func pqNew(size, capacity int) []byte {
	if capacity >= 2*hugemem.PageSize {
		return hugemem.Bytes(capacity)[:size]
	}
	return make([]byte, size, capacity)
}

// ParquetObjectBuffer returns a buffer of size bytes, not cleared, for a
// Parquet object read whole (the engine's small objects), from the pool of
// the page buffers: the next object's bytes reuse it instead of faulting
// in fresh memory. The caller gives it back with ReleaseParquetObjectBuffer
// once the object is decoded (nothing decoded points into it).
func ParquetObjectBuffer(size int) []byte {
	c := pqPoolClass(size)
	if c <= pqPoolMax {
		if v, ok := pqPoolClasses[c].Get().(*[]byte); ok {
			return (*v)[:size]
		}
		return pqNew(size, 1<<c)
	}
	return make([]byte, size)
}

// ReleaseParquetObjectBuffer gives back a buffer of ParquetObjectBuffer.
func ReleaseParquetObjectBuffer(b []byte) { pqPages.Free(b) }

// pqIdle is the pool buffer IdleParquetMemory carves, held weakly (its
// start): once nothing carved out of it is referenced, it is garbage.
var pqIdle struct {
	sync.Mutex
	cur  weak.Pointer[byte]
	size int // its capacity
	off  int // bytes of it handed out
}

// IdleParquetMemory returns n bytes (rounded up to 64) carved out of a
// Parquet pool buffer nobody holds (a page buffer or an object buffer the
// Parquet reader gave back), not zeroed, or nil when the pool has none of
// the size: it never allocates. It is skyfall.TracePool's Mem for the
// columns of the traces a Parquet job scores: once the objects are read,
// their idle buffers, already touched (the large ones in huge pages), hold
// the traces' columns instead of new memory faulting in fresh pages. A
// buffer carved from never goes back to the pool: what is handed out is
// its holder's for as long as it likes, and the buffer is garbage once no
// part of it is referenced. JSON Lines jobs, which use no Parquet buffers,
// always get nil, and so does every caller after UseIdleParquetMemory(false).
func IdleParquetMemory(n int) []byte {
	if n <= 0 || pqIdleOff.Load() {
		return nil
	}
	n = (n + 63) &^ 63
	pqIdle.Lock()
	defer pqIdle.Unlock()
	if p := pqIdle.cur.Value(); p != nil && pqIdle.off+n <= pqIdle.size {
		b := unsafe.Slice(p, pqIdle.size)[pqIdle.off : pqIdle.off+n : pqIdle.off+n]
		pqIdle.off += n
		return b
	}
	for c := pqPoolClass(n); c <= pqPoolMax; c++ {
		if v, ok := pqPoolClasses[c].Get().(*[]byte); ok {
			b := (*v)[:cap(*v)]
			pqIdle.cur, pqIdle.size, pqIdle.off = weak.Make(&b[0]), len(b), n
			return b[:n:n]
		}
	}
	return nil
}

// pqIdleOff, when set, has IdleParquetMemory hand out nothing.
var pqIdleOff atomic.Bool

// UseIdleParquetMemory says whether IdleParquetMemory carves idle buffers
// (the default) or hands out nothing. Under a tight memory limit, where
// runs are spilled and scored while objects are still read, a buffer it
// takes is one the reader then makes anew: the Parquet job under
// --memory-limit 16MiB faulted 1.4-1.9k more pages (1 of 6 rounds fewer),
// CPU not lower. The pipeline sets it per job, as skyfall.UseSlabs.
func UseIdleParquetMemory(on bool) { pqIdleOff.Store(!on) }
