package skyfall

import (
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"
	"unsafe"
)

// denseBuilder is the Builder as it was before its columns were compact:
// every column a dense, append-grown slice. The compact Builder must give
// the same Trace, bit for bit.
type denseBuilder struct {
	t         Trace
	compNames []string
	comps     [][]float64
	labelIdx  map[string]int32
	origin    []string
	hasOrigin []bool
	alias     []string
	hasAlias  []bool
	anyStep   bool
	anyInv    bool
	anyRank   bool
}

func newDenseBuilder(key string, components []string) *denseBuilder {
	b := &denseBuilder{compNames: append([]string(nil), components...), labelIdx: map[string]int32{}}
	b.t.Key = key
	b.comps = make([][]float64, len(components))
	return b
}

func (b *denseBuilder) Add(r *Row) {
	n := len(b.t.Rewards)
	b.t.Rewards = append(b.t.Rewards, r.Reward)
	li, ok := b.labelIdx[r.Label]
	if !ok {
		li = int32(len(b.t.LabelNames))
		b.labelIdx[r.Label] = li
		b.t.LabelNames = append(b.t.LabelNames, r.Label)
		b.origin = append(b.origin, "")
		b.hasOrigin = append(b.hasOrigin, false)
		b.alias = append(b.alias, "")
		b.hasAlias = append(b.hasAlias, false)
	}
	b.t.Labels = append(b.t.Labels, li)
	if r.HasOrigin && !b.hasOrigin[li] {
		b.origin[li], b.hasOrigin[li] = r.Origin, true
	}
	if r.HasAliasOf && !b.hasAlias[li] {
		b.alias[li], b.hasAlias[li] = r.AliasOf, true
	}
	if r.HasStep && !b.anyStep {
		b.anyStep = true
		b.t.Steps = make([]int64, n, n+1)
		b.t.HasStep = make([]bool, n, n+1)
	}
	if b.anyStep {
		b.t.Steps = append(b.t.Steps, r.Step)
		b.t.HasStep = append(b.t.HasStep, r.HasStep)
	}
	for i := range b.comps {
		v := 0.0
		if i < len(r.Comps) {
			v = r.Comps[i]
		}
		b.comps[i] = append(b.comps[i], v)
	}
	if r.Invalid >= 0 && !b.anyInv {
		b.anyInv = true
		b.t.Invalid = make([]int8, n, n+1)
		for i := range b.t.Invalid {
			b.t.Invalid[i] = -1
		}
	}
	if b.anyInv {
		b.t.Invalid = append(b.t.Invalid, r.Invalid)
	}
	if r.HasEffRank && !b.anyRank {
		b.anyRank = true
		b.t.EffRank = make([]float64, n, n+1)
		b.t.HasEffRank = make([]bool, n, n+1)
	}
	if b.anyRank {
		x := r.EffRank
		if !r.HasEffRank {
			x = 0
		}
		b.t.EffRank = append(b.t.EffRank, x)
		b.t.HasEffRank = append(b.t.HasEffRank, r.HasEffRank)
	}
	if r.HasGamma && !b.t.HasGamma {
		b.t.Gamma, b.t.HasGamma = r.Gamma, true
	}
}

func (b *denseBuilder) Trace(meta map[string]string) *Trace {
	t := b.t
	t.Meta = meta
	t.Origins = make([]string, len(t.LabelNames))
	for i, name := range t.LabelNames {
		switch {
		case b.hasOrigin[i]:
			t.Origins[i] = b.origin[i]
		case b.hasAlias[i]:
			t.Origins[i] = b.alias[i]
		default:
			t.Origins[i] = name
		}
	}
	if len(b.compNames) > 0 {
		t.Components = make(map[string][]float64, len(b.compNames))
		for i, name := range b.compNames {
			t.Components[name] = b.comps[i]
		}
	}
	return &t
}

// sameFloats compares by bit pattern, nil apart from empty.
func sameFloats(a, b []float64) bool {
	if (a == nil) != (b == nil) || len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
			return false
		}
	}
	return true
}

// sameSlice is reflect.DeepEqual that also tells nil from empty.
func sameSlice[T any](a, b []T) bool {
	return (a == nil) == (b == nil) && reflect.DeepEqual(a, b)
}

// firstDiff fails naming the first index at which got and want differ, if
// they differ within their common length.
func firstDiff[T comparable](t *testing.T, what, field string, got, want []T) {
	t.Helper()
	for i := range min(len(got), len(want)) {
		if got[i] != want[i] {
			t.Fatalf("%s: %s[%d] = %v, want %v", what, field, i, got[i], want[i])
		}
	}
}

// checkSameTrace fails unless got and want agree in every field, floats bit
// for bit and nil slices apart from empty ones.
func checkSameTrace(t *testing.T, what string, got, want *Trace) {
	t.Helper()
	fail := func(field string) { t.Fatalf("%s: %s differs", what, field) }
	if got.Key != want.Key || !reflect.DeepEqual(got.Meta, want.Meta) {
		fail("key or meta")
	}
	if !sameFloats(got.Rewards, want.Rewards) {
		fail("Rewards")
	}
	if !sameSlice(got.Labels, want.Labels) {
		firstDiff(t, what, "Labels", got.Labels, want.Labels)
		fail("Labels")
	}
	if !sameSlice(got.LabelNames, want.LabelNames) {
		fail("LabelNames")
	}
	if !sameSlice(got.Origins, want.Origins) {
		fail("Origins")
	}
	if !sameSlice(got.Steps, want.Steps) {
		firstDiff(t, what, "Steps", got.Steps, want.Steps)
		fail("Steps")
	}
	if !sameSlice(got.HasStep, want.HasStep) {
		fail("HasStep")
	}
	if (got.Components == nil) != (want.Components == nil) || len(got.Components) != len(want.Components) {
		fail("Components")
	}
	for name, w := range want.Components {
		g, ok := got.Components[name]
		if !ok || !sameFloats(g, w) {
			fail("component " + name)
		}
	}
	if !sameSlice(got.Invalid, want.Invalid) {
		fail("Invalid")
	}
	if !sameFloats(got.EffRank, want.EffRank) {
		fail("EffRank")
	}
	if !sameSlice(got.HasEffRank, want.HasEffRank) {
		fail("HasEffRank")
	}
	if math.Float64bits(got.Gamma) != math.Float64bits(want.Gamma) || got.HasGamma != want.HasGamma {
		fail("Gamma")
	}
}

// oddFloat returns the values whose bits matter, sometimes, else a normal
// one.
func oddFloat(rng *rand.Rand) float64 {
	switch rng.IntN(12) {
	case 0:
		return 0
	case 1:
		return math.Copysign(0, -1)
	case 2:
		return math.Float64frombits(0x7ff8000000000000 | rng.Uint64()&0xfffffffffffff) // NaN, any payload
	case 3:
		return math.Float64frombits(0xfff0000000000001 + rng.Uint64()%1000) // signalling NaN, sign set
	case 4:
		return math.Inf(1 - 2*rng.IntN(2))
	case 5:
		return math.SmallestNonzeroFloat64 * float64(1-2*rng.IntN(2))
	}
	return rng.NormFloat64()
}

// rowGen makes rows whose columns switch between regimes: long regular
// stretches (the compact forms) and random stretches (the fallbacks).
type rowGen struct {
	rng    *rand.Rand
	nComps int
	labels int // distinct labels to draw from
	// per column, the current regime and how many rows it lasts
	mode [6]int
	left [6]int
	step int64
	inc  int64
	lab  int
}

func (g *rowGen) regime(col, modes int) int {
	if g.left[col] == 0 {
		g.mode[col] = g.rng.IntN(modes)
		g.left[col] = 1 + g.rng.IntN(3000)
		if g.rng.IntN(4) == 0 {
			g.left[col] = 1 + g.rng.IntN(5)
		}
	}
	g.left[col]--
	return g.mode[col]
}

func (g *rowGen) next(r *Row) {
	rng := g.rng
	*r = Row{Comps: r.Comps[:0], Invalid: -1}
	r.Reward = oddFloat(rng)
	switch g.regime(0, 3) {
	case 0: // stay
	case 1:
		g.lab = rng.IntN(g.labels)
	case 2:
		if rng.IntN(50) == 0 {
			g.lab = rng.IntN(g.labels)
		}
	}
	r.Label = fmt.Sprintf("L%d", g.lab)
	if rng.IntN(40) == 0 {
		r.Origin, r.HasOrigin = fmt.Sprintf("O%d", rng.IntN(3)), true
	}
	if rng.IntN(40) == 0 {
		r.AliasOf, r.HasAliasOf = fmt.Sprintf("A%d", rng.IntN(3)), true
	}
	switch g.regime(1, 6) {
	case 0: // none
	case 1: // +1
		g.step++
		r.Step, r.HasStep = g.step, true
	case 2: // a stride, sometimes near the int64 edges
		if rng.IntN(200) == 0 {
			g.inc = []int64{7, -3, 1 << 62, math.MaxInt64, math.MinInt64}[rng.IntN(5)]
		}
		g.step += g.inc
		r.Step, r.HasStep = g.step, true
	case 3: // random
		r.Step, r.HasStep = int64(rng.Uint64()), rng.IntN(3) > 0
	case 4: // absent, with a value left in the Row
		r.Step = int64(rng.IntN(3))
	case 5: // +1, with holes
		g.step++
		r.Step, r.HasStep = g.step, rng.IntN(10) > 0
	}
	n := g.nComps + rng.IntN(2) - 1 // sometimes one short: the rest are 0
	for range max(n, 0) {
		var v float64
		switch g.regime(2, 3) {
		case 0:
			v = 0
		case 1:
			v = oddFloat(rng)
		case 2:
			if rng.IntN(8) == 0 {
				v = oddFloat(rng)
			}
		}
		r.Comps = append(r.Comps, v)
	}
	switch g.regime(3, 4) {
	case 0: // absent
	case 1:
		r.Invalid = int8(rng.IntN(2))
	case 2:
		r.Invalid = int8(rng.IntN(3)) - 1
	case 3:
		r.Invalid = int8(rng.Uint32()) // any value at all
	}
	switch g.regime(4, 3) {
	case 0:
	case 1:
		r.EffRank, r.HasEffRank = oddFloat(rng), true
	case 2:
		r.EffRank, r.HasEffRank = oddFloat(rng), rng.IntN(10) == 0
	}
	if !r.HasEffRank && rng.IntN(5) == 0 {
		r.EffRank = oddFloat(rng) // must not leak into the column
	}
	if rng.IntN(100) == 0 {
		r.Gamma, r.HasGamma = oddFloat(rng), true
	}
}

// TestBuilderMatchesDense: over random rows whose columns switch between
// regular and random stretches (-0.0, NaN payloads, fields appearing
// mid-run, invalid_action values besides -1, 0, 1, many labels), the
// compact Builder gives exactly the dense builder's Trace, also when Trace
// is called midway and adding goes on.
func TestBuilderMatchesDense(t *testing.T) {
	sizes := []int{0, 1, 2, 63, 64, 65, 200, chunkLen - 1, chunkLen, chunkLen + 1, 3*chunkLen + 17, 40_000}
	if !testing.Short() {
		sizes = append(sizes, 64*chunkLen+1) // a second bitmap chunk
	}
	cases := eachGridCase(sizes, 0, 99, func(c *gridCase) {
		got, want := NewBuilder("k", c.comps), newDenseBuilder("k", c.comps)
		var r Row
		mid := c.rng.IntN(c.n + 1)
		for i := range c.n {
			if i == mid {
				checkSameTrace(t, c.what+", midway", got.Trace(nil), want.Trace(nil))
			}
			c.gen.next(&r)
			got.Add(&r)
			want.Add(&r)
			if got.Len() != i+1 || got.NumLabels() != len(want.t.LabelNames) {
				t.Fatalf("%s: Len %d, NumLabels %d after %d rows", c.what, got.Len(), got.NumLabels(), i+1)
			}
		}
		meta := map[string]string{"source": "s"}
		checkSameTrace(t, c.what, got.Trace(meta), want.Trace(meta))
	})
	t.Logf("%d cases", cases)
}

// TestBuilderReset: a builder reset after any rows builds the next run
// exactly as a new builder would, reusing its chunks, again and again.
func TestBuilderReset(t *testing.T) {
	sizes := []int{0, 1, 64, chunkLen - 1, chunkLen + 1, 3*chunkLen + 17, 20_000}
	seed := uint64(1000)
	for _, comps := range [][]string{nil, {"progress", "collision", "success"}} {
		b := NewBuilder("k0", comps)
		for round := range 3 * len(sizes) {
			seed++
			n := sizes[(round*5)%len(sizes)]
			rng := rand.New(rand.NewPCG(seed, 7))
			g := &rowGen{rng: rng, nComps: len(comps), labels: []int{1, 5, 3000}[round%3]}
			key := fmt.Sprintf("k%d", round+1)
			b.Reset(key)
			want := newDenseBuilder(key, comps)
			what := fmt.Sprintf("round %d: %d rows after a reset, components %q (seed %d)", round, n, comps, seed)
			if b.Len() != 0 || b.NumLabels() != 0 {
				t.Fatalf("%s: Len %d, NumLabels %d after Reset", what, b.Len(), b.NumLabels())
			}
			var r Row
			for range n {
				g.next(&r)
				b.Add(&r)
				want.Add(&r)
			}
			checkSameTrace(t, what, b.Trace(nil), want.Trace(nil))
		}
	}
}

// TestBuilderRegular: the usual shapes take the compact forms, and the
// fallbacks keep memory near the dense size.
func TestBuilderRegular(t *testing.T) {
	const n = 100_000
	regular := NewBuilder("k", []string{"progress", "collision", "success"})
	random := NewBuilder("k", []string{"progress"})
	dense := newDenseBuilder("k", []string{"progress"})
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range n {
		r := Row{Reward: rng.Float64(), Label: fmt.Sprintf("l%d", i/20000), Step: int64(i), HasStep: true,
			Comps: []float64{rng.Float64(), 0, 0}, Invalid: 0}
		if i%97 == 0 {
			r.Comps[1], r.Invalid = 1, 1
		}
		if i%10 == 0 {
			r.EffRank, r.HasEffRank = 50+rng.Float64(), true
		}
		regular.Add(&r)
		r = Row{Reward: rng.Float64(), Label: fmt.Sprintf("l%d", rng.IntN(1000)), Step: int64(rng.Uint64()), HasStep: rng.IntN(2) == 0,
			Comps: []float64{rng.Float64()}, Invalid: int8(rng.IntN(3)) - 1}
		random.Add(&r)
		dense.Add(&r)
	}
	if len(regular.labels.runs.full) > 0 || regular.labels.runs.len() != 5 || regular.labels.isDen {
		t.Errorf("labels: %d runs, dense %v", regular.labels.runs.len(), regular.labels.isDen)
	}
	if regular.steps.runs.len() != 1 || regular.steps.isDen {
		t.Errorf("steps: %d runs, dense %v", regular.steps.runs.len(), regular.steps.isDen)
	}
	if !random.labels.isDen || !random.steps.isDen {
		t.Errorf("random labels and steps: dense %v, %v", random.labels.isDen, random.steps.isDen)
	}
	perRow := float64(regular.MemBytes()) / n
	// rewards 8, progress 8 and a bit, collision and success a bit or
	// less each, effective_rank 0.8 and a bit, invalid_action two bits.
	if perRow > 19 {
		t.Errorf("regular rows: %.2f bytes a row", perRow)
	}
	// Dense: rewards, progress, labels, steps and flags, invalid_action,
	// that is 8+8+4+8+1/8+1 = 29.1 bytes a row.
	if perRow := float64(random.MemBytes()) / n; perRow > 31 {
		t.Errorf("random rows: %.2f bytes a row", perRow)
	}
	t.Logf("regular rows %.2f bytes a row, random rows %.2f", perRow, float64(random.MemBytes())/n)
	checkSameTrace(t, "random", random.Trace(nil), dense.Trace(nil))
}

// TestBuilderTraceIsOwn: the trace shares no memory with the builder.
func TestBuilderTraceIsOwn(t *testing.T) {
	b := NewBuilder("k", []string{"c"})
	for i := range 10 {
		b.Add(&Row{Reward: float64(i), Label: "a", Comps: []float64{1}, Invalid: -1})
	}
	tr := b.Trace(nil)
	tr.Rewards[0], tr.Components["c"][0], tr.LabelNames[0] = 99, 99, "z"
	again := b.Trace(nil)
	if again.Rewards[0] != 0 || again.Components["c"][0] != 1 || again.LabelNames[0] != "a" {
		t.Errorf("a change to one trace shows in the next")
	}
}

// benchRowsFor fills rows shaped like the benchmark sweep: one label change
// every 20000 rows, steps +1, progress dense, collision and success mostly
// 0, invalid_action mostly false, effective_rank on one row in ten.
func benchBuilderRows(n int) []Row {
	rng := rand.New(rand.NewPCG(5, 6))
	rows := make([]Row, n)
	labels := []string{"calm", "wind", "calm_again", "storm"}
	for i := range rows {
		r := Row{Reward: rng.Float64(), Label: labels[(i/20000)%len(labels)], Step: int64(i), HasStep: true,
			Comps: []float64{rng.Float64(), 0, 0}, Gamma: 0.99, HasGamma: true}
		if rng.IntN(60) == 0 {
			r.Comps[1] = -1
		}
		if rng.IntN(300) == 0 {
			r.Comps[2] = 1
		}
		if rng.IntN(150) == 0 {
			r.Invalid = 1
		}
		if i%10 == 0 {
			r.EffRank, r.HasEffRank = 100*rng.Float64(), true
		}
		rows[i] = r
	}
	return rows
}

// BenchmarkBuilder adds 100000 rows shaped like the benchmark sweep's and
// materialises the trace, against the dense builder the compact one
// replaced; B/row is the builder's memory once every row is in (MemBytes,
// or the dense columns' capacity).
func BenchmarkBuilder(b *testing.B) {
	const n = 100_000
	rows := benchBuilderRows(n)
	comps := []string{"progress", "collision", "success"}
	b.Run("compact/add", func(b *testing.B) {
		b.ReportAllocs()
		var bl *Builder
		for b.Loop() {
			bl = NewBuilder("k", comps)
			for i := range rows {
				bl.Add(&rows[i])
			}
		}
		b.ReportMetric(float64(bl.MemBytes())/n, "B/row")
	})
	b.Run("compact/trace", func(b *testing.B) {
		bl := NewBuilder("k", comps)
		for i := range rows {
			bl.Add(&rows[i])
		}
		b.ReportAllocs()
		for b.Loop() {
			bl.Trace(nil)
		}
	})
	b.Run("dense/add", func(b *testing.B) {
		b.ReportAllocs()
		var bl *denseBuilder
		for b.Loop() {
			bl = newDenseBuilder("k", comps)
			for i := range rows {
				bl.Add(&rows[i])
			}
		}
		t := bl.t
		size := 8*cap(t.Rewards) + 4*cap(t.Labels) + 9*cap(t.Steps) + cap(t.Invalid) + 9*cap(t.EffRank)
		for _, c := range bl.comps {
			size += 8 * cap(c)
		}
		b.ReportMetric(float64(size)/n, "B/row")
	})
}

// randomBuilder returns a builder of 0 to 5000 rows from rowGen, with no,
// one or three components, all drawn from rng, and its number of rows.
func randomBuilder(rng *rand.Rand) (*Builder, int) {
	n := []int{0, 1, 5, 100, 1000, 5000}[rng.IntN(6)]
	comps := [][]string{nil, {"a"}, {"a", "b", "c"}}[rng.IntN(3)]
	b := NewBuilder("k", comps)
	g := &rowGen{rng: rng, nComps: len(comps), labels: 1 + rng.IntN(20)}
	var r Row
	for range n {
		g.next(&r)
		b.Add(&r)
	}
	return b, n
}

// TestTracePool: traces made from a pool holding dirty columns of every
// size are exactly the traces made without one; Put clears the trace's row
// columns; columns are reused when large enough, and the pool does not
// grow past what was put.
func TestTracePool(t *testing.T) {
	pool := new(TracePool)
	rng := rand.New(rand.NewPCG(8, 9))
	for k := range 60 {
		b, n := randomBuilder(rng)
		what := fmt.Sprintf("trace %d (%d rows)", k, n)
		got := b.TraceFrom(pool, map[string]string{"m": "1"})
		checkSameTrace(t, what, got, b.Trace(map[string]string{"m": "1"}))
		// Dirty every column before handing it back.
		for _, c := range [][]float64{got.Rewards, got.EffRank} {
			for i := range c {
				c[i] = math.NaN()
			}
		}
		for _, c := range got.Components {
			for i := range c {
				c[i] = -1
			}
		}
		for i := range got.HasStep {
			got.HasStep[i] = true
		}
		for i := range got.HasEffRank {
			got.HasEffRank[i] = true
		}
		for i := range got.Invalid {
			got.Invalid[i] = 7
		}
		if rng.IntN(4) > 0 {
			pool.Put(got)
			if got.Rewards != nil || got.Components != nil || got.HasEffRank != nil || got.Key != "k" {
				t.Fatalf("%s: Put left the columns or cleared the key", what)
			}
		}
	}
	if n := len(pool.f64.cols); n > DefaultPoolTraces*(2+3) {
		t.Errorf("the pool holds %d float columns", n)
	}

	// Decoding a binary trace into dirty pooled columns gives the trace.
	for name, want := range binaryCases() {
		data, err := want.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		var plain, pooled Trace
		if err := plain.UnmarshalBinary(data); err != nil {
			t.Fatal(err)
		}
		if err := pooled.UnmarshalBinaryFrom(pool, data); err != nil {
			t.Fatal(err)
		}
		checkSameTrace(t, "binary "+name, &pooled, &plain)
		for i := range pooled.Rewards {
			pooled.Rewards[i] = -3
		}
		for i := range pooled.HasStep {
			pooled.HasStep[i] = !pooled.HasStep[i]
		}
		pool.Put(&pooled)
	}

	// Max bounds what the pool keeps.
	small := &TracePool{Max: 2}
	for range 10 {
		b := NewBuilder("k", []string{"a", "b"})
		b.Add(&Row{Reward: 1, Label: "x", Comps: []float64{1, 2}, Invalid: 0, HasStep: true, HasEffRank: true})
		small.Put(b.Trace(nil))
	}
	if n := len(small.f64.cols); n != 2*4 {
		t.Errorf("a pool of 2 traces holds %d float columns, want 8", n)
	}
	if n := len(small.b.cols); n != 2*2 {
		t.Errorf("a pool of 2 traces holds %d bool columns, want 4", n)
	}

	// A large enough column is reused.
	b := NewBuilder("k", []string{"a"})
	for i := range 100 {
		b.Add(&Row{Reward: float64(i), Label: "x", Comps: []float64{1}, Invalid: -1})
	}
	p := new(TracePool)
	t1 := b.TraceFrom(p, nil)
	r1 := &t1.Rewards[0]
	p.Put(t1)
	t2 := b.TraceFrom(p, nil)
	if &t2.Rewards[0] != r1 && &t2.Components["a"][0] != r1 {
		t.Errorf("a column was not reused")
	}
	var nilPool *TracePool
	nilPool.Put(t2)
	if t2.Rewards != nil {
		t.Errorf("Put on a nil pool left the columns")
	}
}

// TestTracePoolMem: with a Mem handing out dirty memory (every byte 0xA5,
// no bool), traces are exactly those made without a pool, their columns
// come from Mem and never overlap; a Mem returning nil, too little or
// misaligned memory has the columns made.
func TestTracePoolMem(t *testing.T) {
	var arena []byte
	var handed [][2]uintptr
	dirty := func(bytes int) []byte {
		if len(arena) < bytes+8 {
			arena = make([]byte, 1<<20)
			for i := range arena {
				arena[i] = 0xA5
			}
		}
		b := arena[:bytes:bytes]
		arena = arena[(bytes+7)&^7:]
		p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
		handed = append(handed, [2]uintptr{p, p + uintptr(bytes)})
		return b
	}
	rng := rand.New(rand.NewPCG(10, 11))
	for k := range 40 {
		b, n := randomBuilder(rng)
		what := fmt.Sprintf("trace %d (%d rows)", k, n)
		want := b.Trace(nil)
		handed = handed[:0]
		got := b.TraceFrom(&TracePool{Mem: dirty}, nil)
		checkSameTrace(t, what, got, want)
		inMem := func(p unsafe.Pointer) bool {
			for _, h := range handed {
				if uintptr(p) >= h[0] && uintptr(p) < h[1] {
					return true
				}
			}
			return false
		}
		if n > 0 && (!inMem(unsafe.Pointer(&got.Rewards[0])) || !inMem(unsafe.Pointer(&got.Labels[0]))) {
			t.Fatalf("%s: columns not from Mem", what)
		}
		for i, a := range handed {
			for _, c := range handed[i+1:] {
				if a[0] < c[1] && c[0] < a[1] {
					t.Fatalf("%s: Mem's memory handed out twice", what)
				}
			}
		}
		// The same from Mems that do not give what is asked.
		for name, mem := range map[string]func(int) []byte{
			"nil":        func(int) []byte { return nil },
			"short":      func(n int) []byte { return make([]byte, n-1) },
			"misaligned": func(n int) []byte { return make([]byte, n+8)[1 : n+1] },
		} {
			checkSameTrace(t, what+", Mem "+name, b.TraceFrom(&TracePool{Mem: mem}, nil), want)
		}
	}
}
