package skyfall

import (
	"math/bits"
	"slices"
)

// LabelOrigin is what the rows of a label said of where it comes from, as
// Row carries it: its regime_origin and its alias_of, each when present.
type LabelOrigin struct {
	Origin     string
	AliasOf    string
	HasOrigin  bool
	HasAliasOf bool
}

// AddTrace adds every row of t to b, in t's row order, exactly as Add
// adds them one Row at a time: row i has t's reward, label, step and
// HasStep (0 and false where t holds no steps), invalid_action (-1 where t
// holds none) and effective_rank; its components are t.Components[comps[j]]
// for b's component j (b's components past len(comps): 0); its origin and
// alias are origin(label) for every row of the label (nil origin: none);
// t's gamma is on its first row only; every row carries the components t
// does not list in Uncarried. It is the form of AppendRows for rows held
// as a dense Trace (read back from an encoding or a spill file); every
// name in comps must be one of t's components. Each stretch of rows of
// one label goes in through AddColumns, a column at a time (row by row,
// through Add, when t holds what Columns cannot say: an invalid_action
// other than -1, 0 or 1, or a step where HasStep is false).
func (b *Builder) AddTrace(t *Trace, comps []string, origin func(label string) LabelOrigin) {
	// Per label of t: its origin and alias, asked once.
	origins := make([]LabelOrigin, len(t.LabelNames))
	if origin != nil {
		for i, name := range t.LabelNames {
			origins[i] = origin(name)
		}
	}
	cols := make([][]float64, len(comps))
	for j, c := range comps {
		cols[j] = t.Components[c]
	}
	var carried uint64
	for j, c := range comps {
		if t.Uncarried == nil || !slices.Contains(t.Uncarried, c) {
			carried |= CarriedBit(j)
		}
	}
	n := len(t.Rewards)
	if !columnar(t) {
		b.addTraceRows(t, cols, origins, carried)
		return
	}
	c := Columns{Comps: make([][]float64, len(comps)), Carried: carried}
	var steps, rank, valid Valid
	var inv []bool
	if t.Steps != nil {
		steps.Bits = bitsOf(t.HasStep)
	}
	if t.EffRank != nil {
		rank.Bits = bitsOf(t.HasEffRank)
	}
	if t.Invalid != nil {
		inv = make([]bool, n)
		has := make([]bool, n)
		for i, v := range t.Invalid {
			inv[i], has[i] = v == 1, v >= 0
		}
		valid.Bits = bitsOf(has)
	}
	for s := 0; s < n; {
		li := t.Labels[s]
		e := s + 1
		for e < n && t.Labels[e] == li {
			e++
		}
		lo := origins[li]
		c.Rewards, c.Label = t.Rewards[s:e], t.LabelNames[li]
		c.Origin, c.AliasOf, c.HasOrigin, c.HasAliasOf = lo.Origin, lo.AliasOf, lo.HasOrigin, lo.HasAliasOf
		if t.Steps != nil {
			c.Steps, c.StepsValid = t.Steps[s:e], Valid{Bits: steps.Bits, Off: s}
		}
		for j, col := range cols {
			c.Comps[j] = col[s:e]
		}
		if inv != nil {
			c.Invalid, c.InvalidValid = inv[s:e], Valid{Bits: valid.Bits, Off: s}
		}
		if t.EffRank != nil {
			c.EffRank, c.EffRankValid = t.EffRank[s:e], Valid{Bits: rank.Bits, Off: s}
		}
		c.Gamma, c.HasGamma = t.Gamma, t.HasGamma && s == 0
		b.AddColumns(&c)
		s = e
	}
}

// columnar reports whether Columns can hold every row of t as Add would
// take it: each invalid_action -1, 0 or 1, and no step where HasStep is
// false.
func columnar(t *Trace) bool {
	for _, v := range t.Invalid {
		if v < -1 || v > 1 {
			return false
		}
	}
	for i, s := range t.Steps {
		if s != 0 && !t.HasStep[i] {
			return false
		}
	}
	return true
}

// bitsOf is the validity bitmap of has (least significant bit first).
func bitsOf(has []bool) []byte {
	bits := make([]byte, (len(has)+7)/8)
	for i, h := range has {
		if h {
			bits[i>>3] |= 1 << (uint(i) & 7)
		}
	}
	return bits
}

// addTraceRows is AddTrace one Row at a time, through Add (cols: t's
// column of each of comps; origins: by label of t).
func (b *Builder) addTraceRows(t *Trace, cols [][]float64, origins []LabelOrigin, carried uint64) {
	row := Row{Comps: make([]float64, len(cols)), Carried: carried}
	for i := range t.Rewards {
		li := t.Labels[i]
		lo := origins[li]
		row.Reward = t.Rewards[i]
		row.Label = t.LabelNames[li]
		row.Origin, row.HasOrigin = lo.Origin, lo.HasOrigin
		row.AliasOf, row.HasAliasOf = lo.AliasOf, lo.HasAliasOf
		row.Step, row.HasStep = 0, false
		if t.Steps != nil {
			row.Step, row.HasStep = t.Steps[i], t.HasStep[i]
		}
		for j := range cols {
			row.Comps[j] = cols[j][i]
		}
		row.Invalid = -1
		if t.Invalid != nil {
			row.Invalid = t.Invalid[i]
		}
		row.EffRank, row.HasEffRank = 0, false
		if t.EffRank != nil {
			row.EffRank, row.HasEffRank = t.EffRank[i], t.HasEffRank[i]
		}
		row.Gamma, row.HasGamma = t.Gamma, t.HasGamma && i == 0
		b.Add(&row)
	}
}

// AppendRows appends every row of o to b, in o's row order, exactly as
// Add would add them one at a time (the same Trace, columns, chunks and
// MemBytes) as Rows made from o.Trace: row i of o has o's reward, label,
// step and HasStep (0 and false where o holds no step), invalid_action
// (-1 where o holds none) and effective_rank; its components are
// comps[j]'s values of o for b's component j (a name o keeps more than
// once: its last column, as in Trace.Components; a name o does not keep:
// 0; b's components past len(comps): 0); its origin and alias are
// origin(label) for every row of the label (nil origin: none), not what
// o's rows recorded; o's gamma is on its first row only; and b's
// component j is carried when o's comps[j] is. o's
// compact columns are read a chunk, a run of labels or of steps, a bitmap
// word at a time, never through a dense Trace. o is not modified and
// shares no memory with b afterwards; b and o must differ.
func (b *Builder) AppendRows(o *Builder, comps []string, origin func(label string) LabelOrigin) {
	rows := o.n
	if rows == 0 {
		return
	}
	n := b.n
	b.n += rows
	o.rewards.each(b.rewards.pushSlice)

	// Labels: b's index of each of o's labels, new ones in o's order of
	// first appearance (the order in which o's rows bring them).
	remap := make([]int32, len(o.labelNames))
	for i, name := range o.labelNames {
		li, ok := b.labelIdx[name]
		if !ok {
			li = int32(len(b.labelNames))
			b.labelIdx[name] = li
			b.labelNames = append(b.labelNames, name)
			b.origin = append(b.origin, "")
			b.hasOrigin = append(b.hasOrigin, false)
			b.alias = append(b.alias, "")
			b.hasAlias = append(b.hasAlias, false)
		}
		remap[i] = li
		if origin != nil {
			lo := origin(name)
			if lo.HasOrigin && !b.hasOrigin[li] {
				b.origin[li], b.hasOrigin[li] = lo.Origin, true
			}
			if lo.HasAliasOf && !b.hasAlias[li] {
				b.alias[li], b.hasAlias[li] = lo.AliasOf, true
			}
		}
	}
	var last int32
	o.labels.eachRun(rows, func(start, end int, l int32) {
		li := remap[l]
		b.labels.add(n+start, li)
		if b.labels.isDen {
			b.labels.dense.pushN(li, end-start-1)
		}
		last = li
	})
	b.lastLabel, b.lastIdx = b.labelNames[last], last

	b.appendSteps(n, o)

	if len(b.comps) > 0 {
		idx := make(map[string]int, len(o.compNames))
		for i, name := range o.compNames {
			idx[name] = i
		}
		for k := range b.comps {
			if k >= len(comps) {
				break
			}
			if i, ok := idx[comps[k]]; ok {
				// o holds no +0.0 in its components: every value it
				// holds is one Add keeps.
				b.comps[k].appendShifted(n, &o.comps[i])
				if o.carried&CarriedBit(i) != 0 {
					b.carried |= CarriedBit(k)
				}
			}
		}
	}

	if o.anyInv {
		b.appendInvalid(n, &o.invalid)
	}
	if o.anyRank && o.rank.vals.len() > 0 {
		b.anyRank = true
		b.rank.appendShifted(n, &o.rank)
	}
	if o.hasGamma && !b.hasGamma {
		b.gamma, b.hasGamma = o.gamma, true
	}
}

// appendSteps adds the steps of o's rows at rows n, n+1, ... of b.
func (b *Builder) appendSteps(n int, o *Builder) {
	c := &b.steps
	if !o.anyStep {
		if b.anyStep {
			c.addRun(n, 0, 0, false, o.n)
		}
		return
	}
	oc := &o.steps
	if !b.anyStep {
		// The rows of o before its first step are not recorded; the
		// rows of b before that row hold 0, absent.
		f := oc.firstHas(o.n)
		if f < 0 {
			return
		}
		b.anyStep = true
		if n+f > 0 {
			c.add(0, 0, false)
		}
		oc.eachFrom(f, o.n, func(start, end int, first, inc int64, has bool) {
			c.addRun(n+start, first, inc, has, end-start)
		}, func(i int, s int64, has bool) { c.add(n+i, s, has) })
		return
	}
	if oc.isDen && c.isDen {
		// Both dense: o's values and flags as they are.
		oc.vals.each(c.vals.pushSlice)
		c.has.appendShifted(n, &oc.has)
		return
	}
	oc.eachFrom(0, o.n, func(start, end int, first, inc int64, has bool) {
		c.addRun(n+start, first, inc, has, end-start)
	}, func(i int, s int64, has bool) { c.add(n+i, s, has) })
}

// addRun adds l rows from row n holding first, first+inc, ... (wrapping),
// has or not, as add would one by one.
func (c *stepCol) addRun(n int, first, inc int64, has bool, l int) {
	v := first
	for i := 0; i < l; i++ {
		if c.isDen {
			if has {
				c.has.setRange(n+i, n+l)
			}
			for ; i < l; i++ {
				c.vals.push(v)
				v += inc
			}
			return
		}
		c.add(n+i, v, has)
		v += inc
		// Once rows n+i-1 and n+i are in the last run, its increment is
		// inc and every later row of the run extends it: add would
		// change nothing.
		if i >= 1 && !c.isDen && c.runs.top().start <= n+i-1 {
			return
		}
	}
}

// firstHas returns the first of the n rows carrying a step, or -1.
func (c *stepCol) firstHas(n int) int {
	if c.isDen {
		return c.has.first()
	}
	f := -1
	eachRun(&c.runs, n, func(r stepRun) int { return r.start }, func(r stepRun, end int) {
		if f < 0 && r.has && end > r.start {
			f = r.start
		}
	})
	return f
}

// eachFrom hands the rows from from on of the n rows held to run (a
// stretch [start, end) of rows holding first, first+inc, ...) while steps
// are held as runs, else to row, one at a time.
func (c *stepCol) eachFrom(from, n int, run func(start, end int, first, inc int64, has bool), row func(i int, s int64, has bool)) {
	if c.isDen {
		i := 0
		c.vals.each(func(s []int64) {
			for _, v := range s {
				if i >= from {
					row(i, v, c.has.has(i))
				}
				i++
			}
		})
		return
	}
	eachRun(&c.runs, n, func(r stepRun) int { return r.start }, func(r stepRun, end int) {
		if end <= from {
			return
		}
		start, first := r.start, r.first
		if start < from {
			first += r.inc * int64(from-start)
			start = from
		}
		run(start, end, first, r.inc, r.has)
	})
}

// appendInvalid adds o's invalid_action values (o.anyInv set) at rows n,
// n+1, ..., as add would one by one: rows before the first one holding 0
// or more are not recorded unless b records rows already.
func (b *Builder) appendInvalid(n int, o *invalidCol) {
	from := 0
	if !b.anyInv {
		f := -1
		for _, m := range []*bitmap{&o.zero, &o.one} {
			if r := m.first(); r >= 0 && (f < 0 || r < f) {
				f = r
			}
		}
		o.other.each(func(s []invalidOther) {
			for _, x := range s {
				if x.v >= 0 && (f < 0 || x.row < f) {
					f = x.row
				}
			}
		})
		if f < 0 {
			return
		}
		b.anyInv, from = true, f
	}
	// Every row of o's bitmaps is at or after from.
	b.invalid.zero.appendShifted(n, &o.zero)
	b.invalid.one.appendShifted(n, &o.one)
	o.other.each(func(s []invalidOther) {
		for _, x := range s {
			if x.row >= from && x.v != -1 {
				b.invalid.other.push(invalidOther{n + x.row, x.v})
			}
		}
	})
}

// eachRun calls fn with every stretch [start, end) of the n rows held
// that have one label, in order; two stretches in a row have different
// labels.
func (c *labelCol) eachRun(n int, fn func(start, end int, l int32)) {
	if !c.isDen {
		eachRun(&c.runs, n, func(r labelRun) int { return r.start }, func(r labelRun, end int) {
			fn(r.start, end, r.label)
		})
		return
	}
	start, i := 0, 0
	var cur int32
	c.dense.each(func(s []int32) {
		for _, l := range s {
			if i > 0 && l != cur {
				fn(start, i, cur)
				start = i
			}
			cur = l
			i++
		}
	})
	if i > 0 {
		fn(start, i, cur)
	}
}

// pushN appends k copies of v.
func (c *chunked[T]) pushN(v T, k int) {
	for k > 0 {
		if len(c.last) == cap(c.last) {
			c.grow()
		}
		m := min(cap(c.last)-len(c.last), k)
		for range m {
			c.last = append(c.last, v)
		}
		k -= m
	}
}

// first returns the first row of the set, or -1.
func (m *bitmap) first() int {
	f, row := -1, 0
	m.words.each(func(s []uint64) {
		if f >= 0 {
			return
		}
		for j, w := range s {
			if w != 0 {
				f = row + 64*j + bits.TrailingZeros64(w)
				return
			}
		}
		row += 64 * len(s)
	})
	return f
}

// has reports whether row i is in the set.
func (m *bitmap) has(i int) bool {
	w := i >> 6
	if w >= m.words.len() {
		return false
	}
	var word uint64
	if k := w / chunkLen; k < len(m.words.full) {
		word = m.words.full[k][w%chunkLen]
	} else {
		word = m.words.last[w%chunkLen]
	}
	return word&(1<<(uint(i)&63)) != 0
}

// appendShifted adds the rows of o, moved up by n, as set would one by
// one; every row of m is below n.
func (m *bitmap) appendShifted(n int, o *bitmap) {
	sh := uint(n) & 63
	w := n >> 6
	var carry uint64
	o.words.each(func(s []uint64) {
		for _, x := range s {
			if sh == 0 {
				m.orWord(w, x)
			} else {
				m.orWord(w, carry|x<<sh)
				carry = x >> (64 - sh)
			}
			w++
		}
	})
	if sh != 0 {
		m.orWord(w, carry)
	}
}

// setRange adds rows [from, to), as set would one by one.
func (m *bitmap) setRange(from, to int) {
	for from < to {
		w := from >> 6
		end := min(to, (w+1)<<6)
		lo, hi := uint(from)&63, uint(end-1)&63
		bits := (^uint64(0) >> (63 - hi)) &^ (1<<lo - 1)
		m.orWord(w, bits)
		from = end
	}
}

// appendShifted adds the rows of o, moved up by n, as add would one by one;
// every row of s is below n.
func (s *sparse) appendShifted(n int, o *sparse) {
	s.mask.appendShifted(n, &o.mask)
	o.vals.each(s.vals.pushSlice)
}
