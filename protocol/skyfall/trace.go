package skyfall

import (
	"fmt"
	"math"
	"slices"
	"unsafe"
)

// Trace is one run held in columns: one entry per row for the per-step
// columns, one entry per label for the per-label ones. Rows keep the order in
// which they were recorded; nothing is ever re-sorted by step.
type Trace struct {
	// Key is the run key of PROTOCOLS 1.2 (field=value|… or anonymous:<key>).
	Key string
	// Meta is the run metadata rendered as strings (identity fields, gamma,
	// source and every other field constant over the run).
	Meta map[string]string

	// Rewards holds r_t per row.
	Rewards []float64
	// Labels holds, per row, an index into LabelNames.
	Labels []int32
	// LabelNames lists the labels in order of first appearance.
	LabelNames []string
	// Origins holds, per label, its origin (PROTOCOLS 1.5): the first non-null
	// regime_origin on its rows, else the first alias_of, else the label.
	Origins []string

	// Steps and HasStep carry the recorded `step` per row; both are nil when
	// no row carried one.
	Steps   []int64
	HasStep []bool

	// Components holds the values of the reward components the scorer asked
	// for (episode-end, solve, spec components), one slice per name, one
	// entry per row; a row without the component holds 0.
	Components map[string][]float64
	// Uncarried lists, in increasing bytewise order, the names of
	// Components that no row carried (a row carrying one, even as 0, is
	// not missing it); nil when every one was carried, or when not known
	// (a hand-made trace): nothing is then said about them.
	Uncarried []string

	// Invalid holds invalid_action per row: 1 true, 0 false, -1 absent. It is
	// nil when no row carried the field.
	Invalid []int8

	// EffRank and HasEffRank carry effective_rank per row; both are nil when
	// no row recorded one. An unmeasured row holds 0 (the Builder stores 0;
	// ValidateRows checks it).
	EffRank    []float64
	HasEffRank []bool

	// Gamma is the first numeric gamma recorded on the run's rows.
	Gamma    float64
	HasGamma bool
}

// Len is the number of rows.
func (t *Trace) Len() int { return len(t.Rewards) }

// Validate checks, in constant time, that the columns agree in length.
// Builders produce valid traces; this guards hand-made ones. Label indices
// are checked by Intervals, which reads them anyway.
func (t *Trace) Validate() error {
	n := len(t.Rewards)
	if len(t.Labels) != n {
		return fmt.Errorf("trace %s: %d labels for %d rewards", t.Key, len(t.Labels), n)
	}
	if len(t.Origins) != len(t.LabelNames) {
		return fmt.Errorf("trace %s: %d origins for %d labels", t.Key, len(t.Origins), len(t.LabelNames))
	}
	if t.Steps != nil && (len(t.Steps) != n || len(t.HasStep) != n) {
		return fmt.Errorf("trace %s: step column length mismatch", t.Key)
	}
	if t.Invalid != nil && len(t.Invalid) != n {
		return fmt.Errorf("trace %s: invalid_action column length mismatch", t.Key)
	}
	if t.EffRank != nil && (len(t.EffRank) != n || len(t.HasEffRank) != n) {
		return fmt.Errorf("trace %s: effective_rank column length mismatch", t.Key)
	}

	for name, c := range t.Components {
		if len(c) != n {
			return fmt.Errorf("trace %s: component %q column length mismatch", t.Key, name)
		}
	}
	return nil
}

// ValidateRows is Validate plus the checks that read every row: label
// indices in range, and unmeasured effective-rank rows holding 0 (as the
// Builder stores them). Score reads the labels anyway and needs neither;
// encoders and other consumers of hand-made traces use it.
func (t *Trace) ValidateRows() error {
	if err := t.Validate(); err != nil {
		return err
	}
	for i, l := range t.Labels {
		if l < 0 || int(l) >= len(t.LabelNames) {
			return fmt.Errorf("trace %s: row %d has label index %d of %d", t.Key, i, l, len(t.LabelNames))
		}
	}
	for i, ok := range t.HasEffRank {
		if !ok && t.EffRank[i] != 0 {
			return fmt.Errorf("trace %s: row %d has no effective_rank but holds %v", t.Key, i, t.EffRank[i])
		}
	}
	return nil
}

// Row is one decoded trace row, as handed to a Builder. Comps is aligned with
// the component names the Builder was made with; a missing component is 0.
type Row struct {
	Reward     float64
	Label      string
	Origin     string // regime_origin
	HasOrigin  bool
	AliasOf    string
	HasAliasOf bool
	Step       int64
	HasStep    bool
	Comps      []float64
	// Carried has bit CarriedBit(k) set when the row carries component k
	// (a number under its name, 0 included).
	Carried    uint64
	Invalid    int8 // 1 true, 0 false, -1 absent
	EffRank    float64
	HasEffRank bool
	Gamma      float64
	HasGamma   bool
}

// Builder assembles a Trace row by row. Row values are copied, so a caller may
// reuse one Row (and its Comps slice) for every call.
//
// A Builder holds its rows in compact columns (columns.go): dense rewards,
// run-length labels and steps, bitmaps for flags, and only the non-zero
// component values and the recorded effective ranks, all in fixed-size
// chunks. Trace materialises the dense columns; every value comes back bit
// for bit, in row order.
type Builder struct {
	key       string
	n         int
	compNames []string

	labelIdx   map[string]int32
	labelNames []string
	origin     []string
	hasOrigin  []bool
	alias      []string
	hasAlias   []bool
	lastLabel  string // the label of the last row, to skip the map lookup
	lastIdx    int32

	rewards chunked[float64]
	labels  labelCol
	steps   stepCol
	comps   []sparse // rows whose value is not +0.0
	invalid invalidCol
	rank    sparse // rows carrying effective_rank

	anyStep, anyInv, anyRank bool
	gamma                    float64
	hasGamma                 bool
	carried                  uint64 // Row.Carried of every row, or-ed
}

// CarriedBit is the bit of Row.Carried and Columns.Carried for component
// k: bit k, and bit 63 for every component from the 64th on (one of those
// carried counts for all of them: Trace.Uncarried then names none of
// them, which says nothing wrong).
func CarriedBit(k int) uint64 { return 1 << min(k, 63) }

// NewBuilder returns a builder keeping the named components.
func NewBuilder(key string, components []string) *Builder {
	return &Builder{
		key:       key,
		compNames: append([]string(nil), components...),
		labelIdx:  map[string]int32{},
		comps:     make([]sparse, len(components)),
	}
}

// Len is the number of rows added so far.
func (b *Builder) Len() int { return b.n }

// NumLabels is the number of distinct labels added so far.
func (b *Builder) NumLabels() int { return len(b.labelNames) }

// LabelNames are the distinct labels added so far, in order of first row:
// the LabelNames of the trace TraceFrom builds (a copy).
func (b *Builder) LabelNames() []string { return slices.Clone(b.labelNames) }

// Add appends one row.
func (b *Builder) Add(r *Row) {
	n := b.n
	b.n++
	b.rewards.push(r.Reward)
	li := b.lastIdx
	if n == 0 || r.Label != b.lastLabel {
		var ok bool
		li, ok = b.labelIdx[r.Label]
		if !ok {
			li = int32(len(b.labelNames))
			b.labelIdx[r.Label] = li
			b.labelNames = append(b.labelNames, r.Label)
			b.origin = append(b.origin, "")
			b.hasOrigin = append(b.hasOrigin, false)
			b.alias = append(b.alias, "")
			b.hasAlias = append(b.hasAlias, false)
		}
		b.lastLabel, b.lastIdx = r.Label, li
	}
	b.labels.add(n, li)
	if r.HasOrigin && !b.hasOrigin[li] {
		b.origin[li], b.hasOrigin[li] = r.Origin, true
	}
	if r.HasAliasOf && !b.hasAlias[li] {
		b.alias[li], b.hasAlias[li] = r.AliasOf, true
	}
	if r.HasStep && !b.anyStep {
		// The rows before the first step hold 0, absent.
		b.anyStep = true
		if n > 0 {
			b.steps.add(0, 0, false)
		}
	}
	if b.anyStep {
		b.steps.add(n, r.Step, r.HasStep)
	}
	for i := range b.comps {
		if i < len(r.Comps) && math.Float64bits(r.Comps[i]) != 0 {
			b.comps[i].add(n, r.Comps[i])
		}
	}
	if r.Invalid >= 0 {
		b.anyInv = true // the rows before the first one hold -1
	}
	if b.anyInv {
		b.invalid.add(n, r.Invalid)
	}
	if r.HasEffRank {
		b.anyRank = true
		b.rank.add(n, r.EffRank)
	}
	if r.HasGamma && !b.hasGamma {
		b.gamma, b.hasGamma = r.Gamma, true
	}
	b.carried |= r.Carried
}

// Valid says which rows of a column of Columns carry a value: those whose
// bit is set in Bits (least significant bit first, the bit of row i at
// position Off+i, as Arrow's validity bitmaps); every row when Bits is nil.
type Valid struct {
	Bits []byte
	Off  int
}

func (v Valid) ok(i int) bool {
	if v.Bits == nil {
		return true
	}
	k := v.Off + i
	return v.Bits[k>>3]&(1<<(uint(k)&7)) != 0
}

// Columns are rows given column by column, for Builder.AddColumns: row i
// is the Row with Reward Rewards[i] and Label Label; Step Steps[i] when
// Steps is not nil and StepsValid says so;
// Comps[k][i] for component k when Comps[k] is not nil (else 0);
// Invalid 1 or 0 for Invalid[i] true or false when Invalid is not nil and
// InvalidValid says so (else -1); EffRank EffRank[i] when EffRank is not
// nil and EffRankValid says so; and, on the first row, Gamma when HasGamma
// (the first row carrying gamma's: a builder keeps the first it is given),
// and the origin and alias when HasOrigin and HasAliasOf (those of the
// first rows carrying one). Every column that is not nil holds
// len(Rewards) values.
type Columns struct {
	Rewards      []float64
	Label        string
	Steps        []int64
	StepsValid   Valid
	Comps        [][]float64
	Invalid      []bool
	InvalidValid Valid
	EffRank      []float64
	EffRankValid Valid
	Gamma        float64
	HasGamma     bool
	// Origin and AliasOf, when HasOrigin and HasAliasOf, are the first
	// regime_origin and alias_of among the rows (a builder keeps a label's
	// first, and the rows are all of Label).
	Origin, AliasOf       string
	HasOrigin, HasAliasOf bool
	// Carried is Row.Carried of every row of the columns, or-ed.
	Carried uint64
}

// AddColumns adds the rows of c, exactly as Add adds the same rows one at a
// time (the same columns, chunks and MemBytes), a column at a time.
func (b *Builder) AddColumns(c *Columns) {
	rows := len(c.Rewards)
	if rows == 0 {
		return
	}
	n := b.n
	b.n += rows
	b.rewards.pushSlice(c.Rewards)
	li := b.lastIdx
	if n == 0 || c.Label != b.lastLabel {
		var ok bool
		li, ok = b.labelIdx[c.Label]
		if !ok {
			li = int32(len(b.labelNames))
			b.labelIdx[c.Label] = li
			b.labelNames = append(b.labelNames, c.Label)
			b.origin = append(b.origin, "")
			b.hasOrigin = append(b.hasOrigin, false)
			b.alias = append(b.alias, "")
			b.hasAlias = append(b.hasAlias, false)
		}
		b.lastLabel, b.lastIdx = c.Label, li
	}
	if c.HasOrigin && !b.hasOrigin[li] {
		b.origin[li], b.hasOrigin[li] = c.Origin, true
	}
	if c.HasAliasOf && !b.hasAlias[li] {
		b.alias[li], b.hasAlias[li] = c.AliasOf, true
	}
	// One label: after its first row, a run's rows add nothing to runs.
	b.labels.add(n, li)
	if b.labels.isDen {
		for range rows - 1 {
			b.labels.dense.push(li)
		}
	}
	if c.Steps != nil {
		for i, s := range c.Steps {
			has := c.StepsValid.ok(i)
			if has && !b.anyStep {
				b.anyStep = true
				if n+i > 0 {
					b.steps.add(0, 0, false)
				}
			}
			if b.anyStep {
				if !has {
					s = 0
				}
				b.steps.add(n+i, s, has)
			}
		}
	} else if b.anyStep {
		for i := range rows {
			b.steps.add(n+i, 0, false)
		}
	}
	for k := range b.comps {
		if k < len(c.Comps) && c.Comps[k] != nil {
			b.comps[k].addColumn(n, c.Comps[k], Valid{}, true)
		}
	}
	if c.Invalid != nil {
		w, one, zero := n>>6, uint64(0), uint64(0)
		for i, v := range c.Invalid {
			if !c.InvalidValid.ok(i) {
				continue
			}
			b.anyInv = true
			r := n + i
			if r>>6 != w {
				b.invalid.one.orWord(w, one)
				b.invalid.zero.orWord(w, zero)
				w, one, zero = r>>6, 0, 0
			}
			if v {
				one |= 1 << (uint(r) & 63)
			} else {
				zero |= 1 << (uint(r) & 63)
			}
		}
		b.invalid.one.orWord(w, one)
		b.invalid.zero.orWord(w, zero)
	}
	if c.EffRank != nil {
		for i := range c.EffRank {
			if c.EffRankValid.ok(i) {
				b.anyRank = true
				break
			}
		}
		b.rank.addColumn(n, c.EffRank, c.EffRankValid, false)
	}
	if c.HasGamma && !b.hasGamma {
		b.gamma, b.hasGamma = c.Gamma, true
	}
	b.carried |= c.Carried
}

// Reset empties the builder for the rows of another run, key, with the
// same components. The memory of its columns is kept for those rows, so a
// caller that builds many short-lived runs allocates it once.
func (b *Builder) Reset(key string) {
	b.key, b.n = key, 0
	clear(b.labelIdx)
	b.labelNames, b.origin, b.alias, b.hasOrigin, b.hasAlias = nil, nil, nil, nil, nil
	b.lastLabel, b.lastIdx = "", 0
	b.rewards.reset()
	b.labels.reset()
	b.steps.reset()
	for i := range b.comps {
		b.comps[i].reset()
	}
	b.invalid.reset()
	b.rank.reset()
	b.anyStep, b.anyInv, b.anyRank = false, false, false
	b.gamma, b.hasGamma = 0, false
	b.carried = 0
}

// Trace materialises the trace's dense columns; the trace shares no memory
// with the builder. meta becomes Trace.Meta as given.
func (b *Builder) Trace(meta map[string]string) *Trace { return b.TraceFrom(nil, meta) }

// TraceFrom is Trace taking the row columns from pool when it holds some
// large enough (pool may be nil).
func (b *Builder) TraceFrom(pool *TracePool, meta map[string]string) *Trace {
	n := b.n
	t := &Trace{Key: b.key, Meta: meta, Gamma: b.gamma, HasGamma: b.hasGamma}
	if n > 0 {
		t.Rewards = column(pool, poolF64, n, false)
		b.rewards.copyTo(t.Rewards)
		t.Labels = column(pool, poolI32, n, false)
		b.labels.fill(t.Labels)
	}
	t.LabelNames = slices.Clone(b.labelNames)
	t.Origins = make([]string, len(t.LabelNames))
	for i := range t.LabelNames {
		t.Origins[i] = b.labelOrigin(i)
	}
	if b.anyStep {
		t.Steps, t.HasStep = column(pool, poolI64, n, false), column(pool, poolB, n, true)
		b.steps.fill(t.Steps, t.HasStep)
	}
	if len(b.compNames) > 0 {
		t.Components = make(map[string][]float64, len(b.compNames))
		for i, name := range b.compNames {
			var col []float64
			if n > 0 {
				col = column(pool, poolF64, n, true)
				b.comps[i].expand(col)
			}
			t.Components[name] = col
		}
		t.Uncarried = b.uncarried()
	}
	if b.anyInv {
		t.Invalid = column(pool, poolI8, n, false)
		b.invalid.fill(t.Invalid)
	}
	if b.anyRank {
		t.EffRank, t.HasEffRank = column(pool, poolF64, n, true), column(pool, poolB, n, true)
		b.rank.expand(t.EffRank)
		b.rank.mask.bools(t.HasEffRank)
	}
	return t
}

// labelOrigin is label i's origin as its trace carries it (Trace.Origins):
// its first regime_origin, else its first alias_of, else the label itself.
func (b *Builder) labelOrigin(i int) string {
	switch {
	case b.hasOrigin[i]:
		return b.origin[i]
	case b.hasAlias[i]:
		return b.alias[i]
	}
	return b.labelNames[i]
}

// uncarried is Trace.Uncarried: the names of the components no row
// carried, sorted and distinct; nil when there are none.
func (b *Builder) uncarried() []string {
	var names []string
	for i, name := range b.compNames {
		if b.carried&CarriedBit(i) == 0 {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// Rough size, for MemBytes, of one label's bookkeeping (map entry, name and
// origin slots) besides the label's bytes.
const labelOverhead = 96

// MemBytes estimates the memory the builder holds: the Builder itself,
// every column chunk by its capacity, and the labels.
func (b *Builder) MemBytes() int64 {
	m := int64(unsafe.Sizeof(*b)) + b.rewards.memBytes() + b.labels.memBytes() + b.steps.memBytes() +
		b.invalid.memBytes() + b.rank.memBytes()
	for i := range b.comps {
		m += int64(unsafe.Sizeof(b.comps[i])+16) + int64(len(b.compNames[i])) + b.comps[i].memBytes()
	}
	for _, l := range b.labelNames {
		m += labelOverhead + int64(len(l))
	}
	return m
}

// Interval is a maximal run of consecutive rows with the same label
// (PROTOCOLS 1.3). Rows are [Start, End).
type Interval struct {
	Label int32
	Start int
	End   int
	// Encounter is the 0-based position of this interval among the
	// encounters of its label's origin.
	Encounter int
}

// Len is the number of rows of the interval.
func (iv Interval) Len() int { return iv.End - iv.Start }

// Intervals splits the trace at every label change, in time order. It fails
// on a label index out of range.
func (t *Trace) Intervals() ([]Interval, error) {
	var out []Interval
	count := map[string]int{}
	nl := int32(len(t.LabelNames))
	for i := 0; i < len(t.Labels); {
		if l := t.Labels[i]; l < 0 || l >= nl {
			return nil, fmt.Errorf("trace %s: row %d has label index %d of %d", t.Key, i, l, nl)
		}
		j := i + 1
		for j < len(t.Labels) && t.Labels[j] == t.Labels[i] {
			j++
		}
		o := t.Origins[t.Labels[i]]
		out = append(out, Interval{Label: t.Labels[i], Start: i, End: j, Encounter: count[o]})
		count[o]++
		i = j
	}
	return out, nil
}
