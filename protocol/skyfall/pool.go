package skyfall

import (
	"sync"
	"unsafe"
)

// DefaultPoolTraces is the number of traces' columns a TracePool keeps when
// its Max is 0.
const DefaultPoolTraces = 4

// TracePool keeps the row columns of traces that are done with, for
// Builder.TraceFrom and Trace.UnmarshalBinaryFrom to fill again: a caller
// materialising runs one after another (scoring each, then putting it back)
// then allocates, and the garbage collector reclaims, a few runs' columns
// instead of one set per run. The pool keeps at most Max traces' worth of
// columns (what is put beyond that is dropped), and drops a column that
// proves too small for the trace being made. It is safe for concurrent use;
// the zero value is an empty pool keeping DefaultPoolTraces traces' worth.
type TracePool struct {
	// Max is the number of traces' columns kept; 0 means
	// DefaultPoolTraces. Set it before the pool is first used.
	Max int

	// Mem, when set, is asked for the memory of a column the pool has none
	// for, before one is made: it returns at least bytes bytes, 8-byte
	// aligned, that nothing else uses or will use (the column may hold them
	// as long as it likes; the garbage collector frees them), not
	// necessarily zeroed, or nil to have the column made. It must return
	// memory holding no pointers: columns hold none, and the collector does
	// not look for any in them. Memory already touched (idle buffers of
	// another kind) spares the first touches of fresh pages a new column
	// costs. Set it before the pool is first used.
	Mem func(bytes int) []byte

	mu  sync.Mutex
	f64 colList[float64]
	i64 colList[int64]
	i32 colList[int32]
	i8  colList[int8]
	b   colList[bool]
}

// colList is the pool's columns of one element type. width is the most
// columns of the type one put trace had.
type colList[T any] struct {
	cols  [][]T
	width int
}

// Put hands t's row columns (Rewards, Labels, Steps, HasStep, the
// Components' columns, Invalid, EffRank, HasEffRank) to the pool and sets
// them to nil in t; the other fields stay. The columns must not be used
// afterwards through any other slice, and must not be shared with another
// trace or a Builder (Builder.Trace, TraceFrom, UnmarshalBinary and
// UnmarshalBinaryFrom never share them). Put on a nil pool only clears
// the columns.
func (p *TracePool) Put(t *Trace) {
	if p != nil {
		floats := make([][]float64, 0, 2+len(t.Components))
		floats = append(floats, t.Rewards, t.EffRank)
		for _, c := range t.Components {
			floats = append(floats, c)
		}
		p.mu.Lock()
		limit := p.Max
		if limit <= 0 {
			limit = DefaultPoolTraces
		}
		p.f64.put(limit, floats...)
		p.i32.put(limit, t.Labels)
		p.i64.put(limit, t.Steps)
		p.i8.put(limit, t.Invalid)
		p.b.put(limit, t.HasStep, t.HasEffRank)
		p.mu.Unlock()
	}
	t.Rewards, t.Labels, t.Steps, t.HasStep, t.Components = nil, nil, nil, nil, nil
	t.Invalid, t.EffRank, t.HasEffRank = nil, nil, nil
}

// put keeps the columns of one trace, up to limit traces' worth.
func (l *colList[T]) put(limit int, cols ...[]T) {
	n := 0
	for _, c := range cols {
		if cap(c) > 0 {
			n++
		}
	}
	l.width = max(l.width, n)
	for _, c := range cols {
		if cap(c) > 0 && len(l.cols) < limit*l.width {
			l.cols = append(l.cols, c[:0])
		}
	}
}

// take removes and returns a column of capacity n or more, or nil. When
// none is large enough it drops one, so that the pool does not fill up
// with columns too small for the traces being made.
func (l *colList[T]) take(n int) []T {
	cols := l.cols
	for i, s := range cols {
		if cap(s) >= n {
			cols[i] = cols[len(cols)-1]
			cols[len(cols)-1] = nil
			l.cols = cols[:len(cols)-1]
			return s[:n]
		}
	}
	if len(cols) > 0 {
		cols[len(cols)-1] = nil
		l.cols = cols[:len(cols)-1]
	}
	return nil
}

// column returns a column of n elements from the list of pool (nil: none),
// else from pool's Mem, else a new one. A column from the pool or Mem is
// zeroed only when zero is set (a bool column from Mem always is); a new
// one is always zero.
func column[T any](p *TracePool, list func(*TracePool) *colList[T], n int, zero bool) []T {
	if p != nil && n > 0 {
		p.mu.Lock()
		s := list(p).take(n)
		p.mu.Unlock()
		if s != nil {
			if zero {
				clear(s)
			}
			return s
		}
	}
	if p != nil && p.Mem != nil && n > 0 {
		var zeroT T
		size := int(unsafe.Sizeof(zeroT))
		if b := p.Mem(n * size); len(b) >= n*size && uintptr(unsafe.Pointer(unsafe.SliceData(b)))%8 == 0 {
			s := unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(b))), n)
			// Not zeroed unless asked, as a column from the pool; a bool
			// column is, whatever its caller fills: a byte of the memory
			// that is not 0 or 1 is no bool.
			var anyT any = zeroT
			if _, isBool := anyT.(bool); zero || isBool {
				clear(s)
			}
			return s
		}
	}
	return make([]T, n)
}

func poolF64(p *TracePool) *colList[float64] { return &p.f64 }
func poolI64(p *TracePool) *colList[int64]   { return &p.i64 }
func poolI32(p *TracePool) *colList[int32]   { return &p.i32 }
func poolI8(p *TracePool) *colList[int8]     { return &p.i8 }
func poolB(p *TracePool) *colList[bool]      { return &p.b }
