package skyfall

import (
	"math"
	"math/bits"
	"unsafe"
)

// The Builder's compact columns. A Builder holds every row of a run until
// the run is scored, so it stores each column in the cheapest exact form
// for how that column usually looks, and materialises the dense Trace only
// when asked (Builder.Trace):
//
//	rewards          dense float64
//	labels           runs (first row, label index); dense int32 once runs
//	                 would take more memory than dense indices
//	steps            runs of a constant increment (first row, first step,
//	                 increment, carried or not); dense int64 plus a bitmap
//	                 once runs would take more memory
//	components       a bitmap of the rows whose value is not +0.0 (by bit
//	                 pattern: -0.0 and NaN are kept as values) and those
//	                 values in row order
//	effective_rank   a bitmap of the rows carrying one and their values
//	invalid_action   bitmaps of the rows holding 1 and 0; any other value
//	                 is listed with its row; neither means -1
//
// Every column lives in fixed-size chunks: a chunk is never copied once
// full, and only the last one has spare room. Full-size chunks are carved
// out of slabs advised for huge pages (slabs.go). Every value round-trips bit
// for bit.

// chunkLen is the number of elements of a full chunk (32 KiB of float64).
const chunkLen = 4096

// chunked is an append-only sequence held in chunks of chunkLen elements.
// The first chunk grows by doubling, from 128 bytes up to chunkLen elements
// (small runs stay small); later chunks are allocated full size. len > 0
// implies len(last) > 0.
type chunked[T any] struct {
	full  [][]T // each of length chunkLen
	last  []T
	spare [][]T // empty full-size chunks that reset kept, for grow to take
}

func (c *chunked[T]) len() int { return len(c.full)*chunkLen + len(c.last) }

func (c *chunked[T]) push(v T) {
	if len(c.last) == cap(c.last) {
		c.grow()
	}
	c.last = append(c.last, v)
}

func (c *chunked[T]) grow() {
	if k := len(c.spare); k > 0 {
		s := c.spare[k-1]
		c.spare = c.spare[:k-1]
		if cap(c.last) < chunkLen {
			c.last = append(s, c.last...)
			return
		}
		c.full = append(c.full, c.last)
		c.last = s
		return
	}
	if cap(c.last) < chunkLen {
		var zero T
		first := max(2, 128/int(unsafe.Sizeof(zero))) // 128 bytes to begin with
		s := make([]T, len(c.last), min(max(2*cap(c.last), first), chunkLen))
		copy(s, c.last)
		c.last = s
		return
	}
	c.full = append(c.full, c.last)
	if slabsOff.Load() {
		c.last = make([]T, 0, chunkLen)
		return
	}
	c.last = slabChunk[T]()
}

// reset empties the sequence, keeping its full-size chunks for the
// elements to come.
func (c *chunked[T]) reset() {
	for _, s := range c.full {
		c.spare = append(c.spare, s[:0])
	}
	if cap(c.last) == chunkLen {
		c.spare = append(c.spare, c.last[:0])
	}
	clear(c.full)
	c.full, c.last = c.full[:0], nil
}

// top returns the last element; the sequence must not be empty.
func (c *chunked[T]) top() *T { return &c.last[len(c.last)-1] }

// each calls fn with every chunk in order.
func (c *chunked[T]) each(fn func(s []T)) {
	for _, s := range c.full {
		fn(s)
	}
	if len(c.last) > 0 {
		fn(c.last)
	}
}

// copyTo copies the sequence to the start of dst, which must be long enough.
func (c *chunked[T]) copyTo(dst []T) {
	o := 0
	c.each(func(s []T) { o += copy(dst[o:], s) })
}

// memBytes is the memory held: the chunks' capacity and their headers.
func (c *chunked[T]) memBytes() int64 {
	var zero T
	size := int64(unsafe.Sizeof(zero))
	return int64((len(c.full)+len(c.spare))*chunkLen+cap(c.last))*size + int64(cap(c.full)+cap(c.spare))*24
}

// reader walks a chunked sequence from its start.
type reader[T any] struct {
	c   *chunked[T]
	k   int // index of the next chunk
	cur []T // what is left of the current chunk
}

func (c *chunked[T]) reader() reader[T] { return reader[T]{c: c} }

func (r *reader[T]) next() T {
	if len(r.cur) == 0 {
		r.advance()
	}
	v := r.cur[0]
	r.cur = r.cur[1:]
	return v
}

// take returns the next at most k elements (at least one) in one piece.
func (r *reader[T]) take(k int) []T {
	if len(r.cur) == 0 {
		r.advance()
	}
	k = min(k, len(r.cur))
	s := r.cur[:k]
	r.cur = r.cur[k:]
	return s
}

func (r *reader[T]) advance() {
	if r.k < len(r.c.full) {
		r.cur = r.c.full[r.k]
	} else {
		r.cur = r.c.last
	}
	r.k++
}

// bitmap is a set of rows, added in increasing row order. Words are
// allocated up to the last row set only: rows past them are not in the set.
type bitmap struct {
	words chunked[uint64]
}

// set adds row i, which must not be below a row added before.
func (m *bitmap) set(i int) {
	w := i >> 6
	for m.words.len() <= w {
		m.words.push(0)
	}
	*m.words.top() |= 1 << (uint(i) & 63)
}

// eachWord calls fn with every allocated word and its first row.
func (m *bitmap) eachWord(fn func(row int, w uint64)) {
	row := 0
	m.words.each(func(s []uint64) {
		for _, w := range s {
			fn(row, w)
			row += 64
		}
	})
}

// bools sets dst[i] for every row i of the set.
func (m *bitmap) bools(dst []bool) {
	m.eachWord(func(row int, w uint64) {
		for w != 0 {
			dst[row+bits.TrailingZeros64(w)] = true
			w &= w - 1
		}
	})
}

// sparse is a float64 column holding only some rows' values: the rows in
// mask, with their values in row order; every other row is +0.0.
type sparse struct {
	mask bitmap
	vals chunked[float64]
}

// add records v at row i (rows in increasing order).
func (s *sparse) add(i int, v float64) {
	s.mask.set(i)
	s.vals.push(v)
}

// expand writes the column to dst, which must be zeroed and hold every row.
func (s *sparse) expand(dst []float64) {
	r := s.vals.reader()
	s.mask.eachWord(func(row int, w uint64) {
		if w == ^uint64(0) {
			d := dst[row : row+64]
			for len(d) > 0 {
				d = d[copy(d, r.take(len(d))):]
			}
			return
		}
		for w != 0 {
			dst[row+bits.TrailingZeros64(w)] = r.next()
			w &= w - 1
		}
	})
}

func (s *sparse) reset() {
	s.mask.words.reset()
	s.vals.reset()
}

func (s *sparse) memBytes() int64 { return s.mask.words.memBytes() + s.vals.memBytes() }

// labelRun starts a run of rows with one label.
type labelRun struct {
	start int
	label int32
}

// labelCol holds the label index of every row: as runs while label changes
// are rare, as dense indices once runs would take more memory.
type labelCol struct {
	runs  chunked[labelRun]
	dense chunked[int32]
	isDen bool
}

// add records label l at row n (rows in order, n rows already held).
func (c *labelCol) add(n int, l int32) {
	if c.isDen {
		c.dense.push(l)
		return
	}
	if n > 0 && c.runs.top().label == l {
		return
	}
	if k := c.runs.len() + 1; k > 64 && k*int(unsafe.Sizeof(labelRun{})) > 4*n {
		c.toDense(n)
		c.dense.push(l)
		return
	}
	c.runs.push(labelRun{start: n, label: l})
}

// toDense converts the first n rows to dense indices.
func (c *labelCol) toDense(n int) {
	dst := make([]int32, n)
	c.fill(dst)
	for _, l := range dst {
		c.dense.push(l)
	}
	c.runs, c.isDen = chunked[labelRun]{}, true
}

// fill writes the labels of every row to dst.
func (c *labelCol) fill(dst []int32) {
	if c.isDen {
		c.dense.copyTo(dst)
		return
	}
	eachRun(&c.runs, len(dst), func(r labelRun) int { return r.start }, func(run labelRun, end int) {
		seg := dst[run.start:end]
		for i := range seg {
			seg[i] = run.label
		}
	})
}

// eachRun calls fn with every run of runs in order and the row where it
// ends: the next run's start (as start gives it), or n after the last.
func eachRun[R any](runs *chunked[R], n int, start func(R) int, fn func(run R, end int)) {
	k := runs.len()
	if k == 0 {
		return
	}
	rd := runs.reader()
	run := rd.next()
	for j := 0; j < k; j++ {
		end := n
		var next R
		if j+1 < k {
			next = rd.next()
			end = start(next)
		}
		fn(run, end)
		run = next
	}
}

func (c *labelCol) reset() {
	c.runs.reset()
	c.dense.reset()
	c.isDen = false
}

func (c *labelCol) memBytes() int64 { return c.runs.memBytes() + c.dense.memBytes() }

// stepRun starts a run of rows whose steps move by a constant increment:
// row start+k holds first + k·inc (wrapping int64 arithmetic) and has in
// HasStep. A run of absent steps has inc 0 unless the Row values say
// otherwise.
type stepRun struct {
	start int
	first int64
	inc   int64
	has   bool
}

// stepCol holds steps as runs while they move regularly, as dense values
// and a bitmap of the rows carrying one once runs would take more memory.
type stepCol struct {
	runs  chunked[stepRun]
	vals  chunked[int64]
	has   bitmap
	isDen bool
}

// add records (s, has) at row n (n rows already held).
func (c *stepCol) add(n int, s int64, has bool) {
	if c.isDen {
		c.vals.push(s)
		if has {
			c.has.set(n)
		}
		return
	}
	if c.runs.len() > 0 {
		r := c.runs.top()
		if r.has == has {
			k := int64(n - r.start)
			if k == 1 {
				r.inc = s - r.first
				return
			}
			if s == r.first+r.inc*k {
				return
			}
		}
	}
	if k := c.runs.len() + 1; k > 64 && k*int(unsafe.Sizeof(stepRun{})) > 9*n {
		c.toDense(n)
		c.add(n, s, has)
		return
	}
	c.runs.push(stepRun{start: n, first: s, has: has})
}

func (c *stepCol) toDense(n int) {
	steps, has := make([]int64, n), make([]bool, n)
	c.fill(steps, has)
	for i, s := range steps {
		c.vals.push(s)
		if has[i] {
			c.has.set(i)
		}
	}
	c.runs, c.isDen = chunked[stepRun]{}, true
}

// fill writes every row's step and flag to steps and has (zeroed).
func (c *stepCol) fill(steps []int64, has []bool) {
	if c.isDen {
		c.vals.copyTo(steps)
		c.has.bools(has)
		return
	}
	eachRun(&c.runs, len(steps), func(r stepRun) int { return r.start }, func(run stepRun, end int) {
		v := run.first
		for i := run.start; i < end; i++ {
			steps[i] = v
			v += run.inc
		}
		if run.has {
			seg := has[run.start:end]
			for i := range seg {
				seg[i] = true
			}
		}
	})
}

func (c *stepCol) reset() {
	c.runs.reset()
	c.vals.reset()
	c.has.words.reset()
	c.isDen = false
}

func (c *stepCol) memBytes() int64 {
	return c.runs.memBytes() + c.vals.memBytes() + c.has.words.memBytes()
}

// invalidCol holds invalid_action: bitmaps of the rows holding 1 and 0,
// and the rows holding any other value besides -1.
type invalidCol struct {
	one, zero bitmap
	other     chunked[invalidOther]
}

type invalidOther struct {
	row int
	v   int8
}

func (c *invalidCol) add(n int, v int8) {
	switch v {
	case -1:
	case 0:
		c.zero.set(n)
	case 1:
		c.one.set(n)
	default:
		c.other.push(invalidOther{n, v})
	}
}

// fill writes every row's value to dst.
func (c *invalidCol) fill(dst []int8) {
	for i := range dst {
		dst[i] = -1
	}
	set := func(m *bitmap, v int8) {
		m.eachWord(func(row int, w uint64) {
			for w != 0 {
				dst[row+bits.TrailingZeros64(w)] = v
				w &= w - 1
			}
		})
	}
	set(&c.zero, 0)
	set(&c.one, 1)
	c.other.each(func(s []invalidOther) {
		for _, o := range s {
			dst[o.row] = o.v
		}
	})
}

func (c *invalidCol) reset() {
	c.one.words.reset()
	c.zero.words.reset()
	c.other.reset()
}

func (c *invalidCol) memBytes() int64 {
	return c.one.words.memBytes() + c.zero.words.memBytes() + c.other.memBytes()
}

// pushSlice appends vs, as pushing them one by one would: the same chunks,
// of the same capacities.
func (c *chunked[T]) pushSlice(vs []T) {
	for len(vs) > 0 {
		if len(c.last) == cap(c.last) {
			c.grow()
		}
		k := min(cap(c.last)-len(c.last), len(vs))
		c.last = append(c.last, vs[:k]...)
		vs = vs[k:]
	}
}

// orWord adds the rows of bits to word w (rows 64·w to 64·w+63), as set
// would add them one by one: nothing when bits is 0. No row of bits may be
// below a row added before.
func (m *bitmap) orWord(w int, bits uint64) {
	if bits == 0 {
		return
	}
	for m.words.len() <= w {
		m.words.push(0)
	}
	*m.words.top() |= bits
}

// addColumn records the values of vs at rows n, n+1, ... (above every row
// recorded before), as add would one by one: every row whose bit is set in
// valid (all of them for a nil valid.Bits), and, with skipZero, only those
// whose value is not +0.0 by bit pattern.
func (s *sparse) addColumn(n int, vs []float64, valid Valid, skipZero bool) {
	w, bits := n>>6, uint64(0)
	for i, v := range vs {
		if !valid.ok(i) || skipZero && math.Float64bits(v) == 0 {
			continue
		}
		r := n + i
		if r>>6 != w {
			s.mask.orWord(w, bits)
			w, bits = r>>6, 0
		}
		bits |= 1 << (uint(r) & 63)
		s.vals.push(v)
	}
	s.mask.orWord(w, bits)
}
