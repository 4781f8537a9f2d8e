package skyfall

import (
	"fmt"
	"math/bits"
	"slices"
)

// LabelCounts are a Builder's rows counted per label, for a caller that
// reads nothing else of them (a ceiling counting each label's rows and its
// episodes' final rows): Labels in order of first appearance (the trace's
// LabelNames) and, per label, its rows (Rows) and its rows on which one of
// the marking components is nonzero (Marked); Last is the index in Labels
// of the last row's label (-1: no row).
type LabelCounts struct {
	Labels       []string
	Rows, Marked []int
	Last         int
}

// NoComponentError is CountLabels' error for a marking component the
// builder does not keep.
type NoComponentError struct{ Trace, Component string }

func (e *NoComponentError) Error() string {
	return fmt.Sprintf("trace %s: no column for component %q", e.Trace, e.Component)
}

// CountLabels counts the rows per label straight from the compact columns,
// materialising none: what counting the dense Trace would give, a row
// being marked when the column of one of marks (components of the
// builder, the column Trace would give for that name) holds a value x
// with x != 0 (-0.0 is zero, NaN is not). It fails with a
// *NoComponentError for the first name of marks the builder does not
// keep. The builder is not modified: CountLabels may run while other
// goroutines read the builder, not while one adds to it.
func (b *Builder) CountLabels(marks []string) (LabelCounts, error) {
	cols := make([]*sparse, len(marks))
	for i, name := range marks {
		// The last of equal names, as Trace's Components map keeps it.
		k := len(b.compNames) - 1
		for k >= 0 && b.compNames[k] != name {
			k--
		}
		if k < 0 {
			return LabelCounts{}, &NoComponentError{Trace: b.key, Component: name}
		}
		cols[i] = &b.comps[k]
	}
	c := LabelCounts{
		Labels: slices.Clone(b.labelNames),
		Rows:   make([]int, len(b.labelNames)),
		Marked: make([]int, len(b.labelNames)),
		Last:   -1,
	}
	if b.n == 0 {
		return c, nil
	}
	b.labels.count(b.n, c.Rows)
	if b.labels.isDen {
		c.Last = int(*b.labels.dense.top())
	} else {
		c.Last = int(b.labels.runs.top().label)
	}
	if len(cols) == 0 {
		return c, nil
	}
	at := b.labels.cursor(b.n)
	eachNonzero(cols, func(row int, w uint64) {
		for w != 0 {
			c.Marked[at.label(row+bits.TrailingZeros64(w))]++
			w &= w - 1
		}
	})
	return c, nil
}

// count adds to rows[l] the number of the first n rows labelled l.
func (c *labelCol) count(n int, rows []int) {
	if c.isDen {
		c.dense.each(func(s []int32) {
			for _, l := range s {
				rows[l]++
			}
		})
		return
	}
	eachRun(&c.runs, n, func(r labelRun) int { return r.start }, func(run labelRun, end int) {
		rows[run.label] += end - run.start
	})
}

// labelCursor gives the label of rows asked in increasing order.
type labelCursor struct {
	c    *labelCol
	n    int
	rd   reader[labelRun]
	left int      // runs not yet read from rd
	cur  labelRun // the run holding the last row asked
	end  int      // where cur ends
}

// cursor returns a cursor over the first n rows (n > 0).
func (c *labelCol) cursor(n int) *labelCursor {
	lc := &labelCursor{c: c, n: n}
	if c.isDen {
		return lc
	}
	lc.rd, lc.left = c.runs.reader(), c.runs.len()
	lc.cur, lc.left = lc.rd.next(), lc.left-1
	lc.end = lc.nextStart()
	return lc
}

// nextStart is the start of the next run, read ahead into cur's place by
// label; n when cur is the last.
func (lc *labelCursor) nextStart() int {
	if lc.left == 0 {
		return lc.n
	}
	return lc.rd.cur0().start
}

// label is the label index of row i, not below the row asked before.
func (lc *labelCursor) label(i int) int32 {
	if lc.c.isDen {
		return lc.c.dense.at(i)
	}
	for i >= lc.end {
		lc.cur, lc.left = lc.rd.next(), lc.left-1
		lc.end = lc.nextStart()
	}
	return lc.cur.label
}

// cur0 returns the next element without taking it; there must be one.
func (r *reader[T]) cur0() T {
	if len(r.cur) == 0 {
		r.advance()
	}
	return r.cur[0]
}

// at returns element i, which must exist. Every chunk but the last is
// full.
func (c *chunked[T]) at(i int) T {
	if k := i / chunkLen; k < len(c.full) {
		return c.full[k][i%chunkLen]
	}
	return c.last[i-len(c.full)*chunkLen]
}

// eachNonzero calls fn, for every 64 rows from row 0 up to the last row
// any of cols holds, with the rows among them on which one of cols holds
// a value x != 0 (a bit per row, as bitmap's words); fn is not called for
// none.
func eachNonzero(cols []*sparse, fn func(row int, w uint64)) {
	type walk struct {
		words reader[uint64]
		left  int
		vals  reader[float64]
	}
	ws := make([]walk, len(cols))
	most := 0
	for i, s := range cols {
		ws[i] = walk{words: s.mask.words.reader(), left: s.mask.words.len(), vals: s.vals.reader()}
		most = max(most, ws[i].left)
	}
	for k := range most {
		var any uint64
		for i := range ws {
			w := &ws[i]
			if w.left == 0 {
				continue
			}
			w.left--
			m := w.words.next()
			if m == 0 {
				continue
			}
			// The held values are not +0.0 by bit pattern; -0.0 is
			// held, and compares equal to zero.
			nz := m
			if m == ^uint64(0) {
				for j := 0; j < 64; {
					s := w.vals.take(64 - j)
					for _, v := range s {
						if v == 0 {
							nz &^= 1 << uint(j)
						}
						j++
					}
				}
			} else {
				for r := m; r != 0; r &= r - 1 {
					if w.vals.next() == 0 {
						nz &^= r & -r
					}
				}
			}
			any |= nz
		}
		if any != 0 {
			fn(k*64, any)
		}
	}
}
