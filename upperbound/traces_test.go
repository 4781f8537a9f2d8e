package upperbound_test

import (
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/crlbatch/crlbatch/protocol/skyfall"
	"github.com/crlbatch/crlbatch/upperbound"
)

type row struct {
	label   string
	reward  float64
	success float64
}

func trace(key string, comps []string, rows ...row) *skyfall.Trace {
	b := skyfall.NewBuilder(key, comps)
	for _, r := range rows {
		var c []float64
		if len(comps) > 0 {
			c = []float64{r.success}
		}
		b.Add(&skyfall.Row{Reward: r.reward, Label: r.label, Comps: c, Invalid: -1})
	}
	return b.Trace(map[string]string{"run_id": key})
}

// Two runs recording the success column. Run A's episode ends in the
// middle (row 3, label b); run B's at its last row (label a).
//
//	A: 0 a 0.1 | 1 a 0.4 | 2 b 0.2 | 3 b 1.2 success | 4 a 0.3 (last)
//	B: 0 b 0.5 | 1 c 0.7 | 2 a 0.9 success (last)
func twoRuns() []*skyfall.Trace {
	succ := []string{"success"}
	return []*skyfall.Trace{
		trace("A", succ, row{"a", 0.1, 0}, row{"a", 0.4, 0}, row{"b", 0.2, 0}, row{"b", 1.2, 1}, row{"a", 0.3, 0}),
		trace("B", succ, row{"b", 0.5, 0}, row{"c", 0.7, 0}, row{"a", 0.9, 1}),
	}
}

// stepOnly is a spec without an episode-end component.
func stepOnly(t *testing.T) *upperbound.Spec {
	t.Helper()
	s, err := upperbound.ParseSpec("step_only.yaml", []byte(`
name: step_only
components:
  - {name: progress, weight: 1.0, clip: [0.0, 1.0], cadence: step}
`))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestDataRelative(t *testing.T) {
	paper := loadBundled(t, "paper") // success is its episode-end component
	a, b := "a", "b"
	half := 0.5
	cases := []struct {
		name      string
		opts      upperbound.DataRelativeOptions
		per, fin  float64
		specName  string
		labelName string
	}{
		// No spec: final rows are A4 (0.3) and B2 (0.9); the rest are
		// ordinary, best 1.2 (A3).
		{"no spec", upperbound.DataRelativeOptions{}, 1.2, 0.9, "", ""},
		// Spec: final rows carry success: A3 (1.2) and B2 (0.9); ordinary
		// rows 0.1 0.4 0.2 0.3 0.5 0.7, best 0.7.
		{"spec", upperbound.DataRelativeOptions{Spec: paper}, 0.7, 1.2, "paper", ""},
		// Label a, no spec: ordinary A0 0.1, A1 0.4; final A4 0.3, B2 0.9.
		{"label a", upperbound.DataRelativeOptions{Label: &a}, 0.4, 0.9, "", "a"},
		// Label b with spec: ordinary A2 0.2, B0 0.5; final A3 1.2.
		{"label b spec", upperbound.DataRelativeOptions{Spec: paper, Label: &b}, 0.5, 1.2, "paper", "b"},
		// Median, no spec: ordinary sorted 0.1 0.2 0.4 0.5 0.7 1.2 →
		// halfway between 0.4 and 0.5; final 0.3 0.9 → 0.6.
		{"median", upperbound.DataRelativeOptions{Quantile: &half}, 0.45, 0.6, "", ""},
		// A spec without episode-end components marks no final step, so
		// both numbers are the best of all rows.
		{"step-only spec", upperbound.DataRelativeOptions{Spec: stepOnly(t)}, 1.2, 1.2, "step_only", ""},
	}
	for _, c := range cases {
		got, err := upperbound.DataRelative(twoRuns(), c.opts)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if math.Abs(got.PerStep-c.per) > 1e-12 || math.Abs(got.FinalStep-c.fin) > 1e-12 {
			t.Errorf("%s: per step %v final step %v, want %v %v", c.name, got.PerStep, got.FinalStep, c.per, c.fin)
		}
		if got.Derivation != "data_relative" || got.Spec != c.specName || got.Label != c.labelName {
			t.Errorf("%s: provenance %+v", c.name, got)
		}
	}
}

func TestDataRelativeErrors(t *testing.T) {
	nolabel := "zzz"
	bare := []*skyfall.Trace{trace("C", nil, row{"a", 1, 0})}
	cases := []struct {
		name   string
		traces []*skyfall.Trace
		opts   upperbound.DataRelativeOptions
		want   string
	}{
		{"no traces", nil, upperbound.DataRelativeOptions{}, "no recorded rows"},
		{"unknown label", twoRuns(), upperbound.DataRelativeOptions{Label: &nolabel}, `no recorded row has label "zzz"`},
		{"column not kept", bare, upperbound.DataRelativeOptions{Spec: loadBundled(t, "paper")},
			`trace C: no column for episode-end component "success"; the reader must be asked to keep it`},
	}
	for _, c := range cases {
		_, err := upperbound.DataRelative(c.traces, c.opts)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want %q", c.name, err, c.want)
		}
	}
}

func TestBoundsByConfiguration(t *testing.T) {
	b := upperbound.Bound{PerStep: 0.5, FinalStep: 2, Derivation: "test"}
	type lb = upperbound.LabelBound
	cases := []struct {
		name       string
		spec       *upperbound.Spec
		traces     []*skyfall.Trace
		want       []lb
		episodeEnd []string
	}{
		// Final steps carry success: A3 (label b) and B2 (label a).
		//   a: rows A0 A1 A4 B2, L=4, m=1: (3·0.5 + 1·2)/4 = 3.5/4 = 0.875
		//   b: rows A2 A3 B0,    L=3, m=1: (2·0.5 + 1·2)/3 = 3/3   = 1
		//   c: row  B1,          L=1, m=0: (1·0.5 + 0·2)/1       = 0.5
		{"episode-end spec", loadBundled(t, "paper"), twoRuns(), []lb{
			{Label: "a", Rows: 4, FinalRows: 1, Ceiling: 0.875},
			{Label: "b", Rows: 3, FinalRows: 1, Ceiling: 1},
			{Label: "c", Rows: 1, FinalRows: 0, Ceiling: 0.5},
		}, []string{"success"}},
		// No spec: each run's last row is final, A4 and B2, both label a.
		//   a: L=4, m=2: (2·0.5 + 2·2)/4 = 5/4 = 1.25
		//   b: L=3, m=0: 0.5
		//   c: L=1, m=0: 0.5
		{"no spec", nil, twoRuns(), []lb{
			{Label: "a", Rows: 4, FinalRows: 2, Ceiling: 1.25},
			{Label: "b", Rows: 3, FinalRows: 0, Ceiling: 0.5},
			{Label: "c", Rows: 1, FinalRows: 0, Ceiling: 0.5},
		}, nil},
		// A spec without episode-end components falls back the same way.
		{"step-only spec", stepOnly(t), twoRuns(), []lb{
			{Label: "a", Rows: 4, FinalRows: 2, Ceiling: 1.25},
			{Label: "b", Rows: 3, FinalRows: 0, Ceiling: 0.5},
			{Label: "c", Rows: 1, FinalRows: 0, Ceiling: 0.5},
		}, nil},
		// Labels come in order of first appearance across the traces as
		// given: B first gives b, c, a.
		{"order", loadBundled(t, "paper"), []*skyfall.Trace{twoRuns()[1], twoRuns()[0]}, []lb{
			{Label: "b", Rows: 3, FinalRows: 1, Ceiling: 1},
			{Label: "c", Rows: 1, FinalRows: 0, Ceiling: 0.5},
			{Label: "a", Rows: 4, FinalRows: 1, Ceiling: 0.875},
		}, []string{"success"}},
	}
	for _, c := range cases {
		got, err := upperbound.BoundsByConfiguration(b, c.spec, c.traces)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if !reflect.DeepEqual(got.Labels, c.want) {
			t.Errorf("%s:\n got %+v\nwant %+v", c.name, got.Labels, c.want)
		}
		if !reflect.DeepEqual(got.EpisodeEnd, c.episodeEnd) || got.Bound != b {
			t.Errorf("%s: episode end %v, bound %+v", c.name, got.EpisodeEnd, got.Bound)
		}
		for _, w := range c.want {
			if v, ok := got.Get(w.Label); !ok || v != w.Ceiling {
				t.Errorf("%s: Get(%q) = %v, %v", c.name, w.Label, v, ok)
			}
		}
		if _, ok := got.Get("zzz"); ok {
			t.Errorf("%s: Get of an unknown label succeeded", c.name)
		}
		if m := got.Map(); len(m) != len(c.want) {
			t.Errorf("%s: map %v", c.name, m)
		}
	}
}

func TestBoundsByConfigurationExperiment(t *testing.T) {
	b, err := upperbound.Analytic(loadBundled(t, "experiment"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := upperbound.BoundsByConfiguration(b, loadBundled(t, "experiment"), twoRuns())
	if err != nil {
		t.Fatal(err)
	}
	// Label a: L=4, m=1: ((4−1)·0.3333333333333333 + 1·1.0)/4, evaluated
	// as the package does, each product rounded before the sum.
	p := 0.3333333333333333
	if want := (float64(3*p) + float64(1*1.0)) / 4; got.Labels[0].Ceiling != want {
		t.Errorf("a: %v, want %v", got.Labels[0].Ceiling, want)
	}
}

func TestBoundsByConfigurationErrors(t *testing.T) {
	bare := []*skyfall.Trace{trace("C", nil, row{"a", 1, 0})}
	_, err := upperbound.BoundsByConfiguration(upperbound.Explicit(1), loadBundled(t, "paper"), bare)
	if err == nil || !strings.Contains(err.Error(), "the reader must be asked to keep it") {
		t.Errorf("missing column: %v", err)
	}
	_, err = upperbound.BoundsByConfiguration(upperbound.Explicit(math.NaN()), nil, twoRuns())
	if err == nil || !strings.Contains(err.Error(), "not finite") {
		t.Errorf("NaN bound: %v", err)
	}
	// Without a spec the column is not needed.
	if _, err := upperbound.BoundsByConfiguration(upperbound.Explicit(1), nil, bare); err != nil {
		t.Errorf("no spec: %v", err)
	}
}

// TestDataRelativeLabelsAgreesWithDataRelative: the per-label ceiling the
// skyfall adapter streams over the runs (DataRelativeLabels) is, for every
// label, the greater of DataRelative's PerStep and FinalStep restricted to
// that label: one definition of the data-relative ceiling. Checked on the
// fixed runs above and on random ones (negative rewards, a label's only row
// the last, labels in different runs).
func TestDataRelativeLabelsAgreesWithDataRelative(t *testing.T) {
	check := func(traces []*skyfall.Trace) {
		t.Helper()
		d := upperbound.NewDataRelativeLabels()
		for _, tr := range traces {
			d.Add(tr)
		}
		got := d.Map()
		if len(got) != len(d.Labels()) {
			t.Fatalf("%d ceilings for %d labels", len(got), len(d.Labels()))
		}
		for _, l := range d.Labels() {
			b, err := upperbound.DataRelative(traces, upperbound.DataRelativeOptions{Label: &l})
			if err != nil {
				t.Fatal(err)
			}
			if want := math.Max(b.PerStep, b.FinalStep); got[l] != want {
				t.Errorf("label %q: streamed ceiling %v, DataRelative's %v (per step %v, final %v)", l, got[l], want, b.PerStep, b.FinalStep)
			}
		}
	}
	check(twoRuns())
	if got := upperbound.NewDataRelativeLabels(); len(got.Map()) != 0 {
		t.Errorf("an empty accumulator has ceilings %v", got.Map())
	}
	state := uint64(12345)
	next := func() uint64 { state = state*6364136223846793005 + 1442695040888963407; return state >> 33 }
	labels := []string{"a", "b", "c", "d"}
	for trial := 0; trial < 300; trial++ {
		var traces []*skyfall.Trace
		for r := 0; r < 1+int(next()%4); r++ {
			var rows []row
			for i := 0; i < 1+int(next()%12); i++ {
				rows = append(rows, row{labels[next()%uint64(len(labels))], float64(int64(next()%2001)-1000) / 100, 0})
			}
			traces = append(traces, trace(string(rune('A'+r)), nil, rows...))
		}
		check(traces)
	}
}

// twoEndsSpec is a spec with one step component and two episode-end ones.
func twoEndsSpec(t *testing.T) *upperbound.Spec {
	t.Helper()
	s, err := upperbound.ParseSpec("two_ends.yaml", []byte(`
name: two_ends
components:
  - {name: progress, weight: 1.0, clip: [0.0, 1.0], cadence: step}
  - {name: success, weight: 0.5, clip: [0.0, 1.0], cadence: episode_end}
  - {name: timeout, weight: 0.25, clip: [0.0, 1.0], cadence: episode_end}
`))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestAddPartsAgreesWithAdd: counting a trace in parts (CountPart of each
// part's rows alone, then AddParts) gives exactly Add's labels, order and
// counts, for episode-end components of one and of two columns (zeros,
// negative zeros and NaN among their values) and without any (the trace's
// last row final: in its last part), on random traces cut at random rows,
// parts of one row and a label met again in a later part included.
func TestAddPartsAgreesWithAdd(t *testing.T) {
	twoEnds := twoEndsSpec(t)
	b := upperbound.Bound{PerStep: 0.5, FinalStep: 2, Derivation: "test"}
	specs := []*upperbound.Spec{nil, stepOnly(t), loadBundled(t, "paper"), twoEnds}
	state := uint64(99)
	next := func() uint64 { state = state*6364136223846793005 + 1442695040888963407; return state >> 33 }
	values := []float64{0, 0, 0, math.Copysign(0, -1), 1, 0.5, math.NaN()}
	labels := []string{"a", "b", "c", "d", "e"}
	comps := []string{"success", "timeout"}
	type rowc struct {
		label string
		c     []float64
	}
	build := func(key string, rows []rowc) *skyfall.Trace {
		bl := skyfall.NewBuilder(key, comps)
		for _, r := range rows {
			bl.Add(&skyfall.Row{Reward: 1, Label: r.label, Comps: r.c, Invalid: -1})
		}
		return bl.Trace(nil)
	}
	for trial := 0; trial < 400; trial++ {
		spec := specs[trial%len(specs)]
		whole, err := upperbound.NewLabelBounds(b, spec)
		if err != nil {
			t.Fatal(err)
		}
		parted, _ := upperbound.NewLabelBounds(b, spec)
		for r := 0; r < 1+int(next()%3); r++ {
			var rows []rowc
			for i := 0; i < 1+int(next()%14); i++ {
				rows = append(rows, rowc{labels[next()%uint64(len(labels))],
					[]float64{values[next()%uint64(len(values))], values[next()%uint64(len(values))]}})
			}
			if err := whole.Add(build("R", rows)); err != nil {
				t.Fatal(err)
			}
			var parts []upperbound.PartCounts
			for len(rows) > 0 {
				k := 1 + int(next()%uint64(len(rows)))
				pc, err := parted.CountPart(build("R", rows[:k]))
				if err != nil {
					t.Fatal(err)
				}
				parts = append(parts, pc)
				rows = rows[k:]
			}
			parted.AddParts(parts)
		}
		whole.Finish()
		parted.Finish()
		if !reflect.DeepEqual(whole.Labels, parted.Labels) {
			t.Fatalf("trial %d (spec %v):\n Add      %+v\n AddParts %+v", trial, spec != nil, whole.Labels, parted.Labels)
		}
	}
	// CountPart fails where Add fails: no column for an episode-end
	// component, a nil trace, an invalid one.
	lb, _ := upperbound.NewLabelBounds(b, loadBundled(t, "paper"))
	bare := trace("C", nil, row{"a", 1, 0})
	if _, err := lb.CountPart(bare); err == nil || !strings.Contains(err.Error(), "the reader must be asked to keep it") {
		t.Errorf("missing column: %v", err)
	}
	if _, err := lb.CountPart(nil); err == nil {
		t.Error("nil trace counted")
	}
	bad := trace("D", []string{"success"}, row{"a", 1, 0})
	bad.Labels = nil
	if _, err := lb.CountPart(bad); err == nil || err.Error() != bad.Validate().Error() {
		t.Errorf("invalid trace: %v", err)
	}
	// A part without rows adds nothing, not even a final row.
	empty := upperbound.PartCounts{Last: -1}
	lb2, _ := upperbound.NewLabelBounds(b, nil)
	lb2.AddParts([]upperbound.PartCounts{empty})
	if len(lb2.Labels) != 0 {
		t.Errorf("an empty part added %+v", lb2.Labels)
	}
}

// TestCountBuilderAgreesWithCountPart: CountBuilder, counting straight from
// a builder's compact columns, gives exactly CountPart of the trace the
// builder materialises, on random builders: labels in long runs, in short
// ones and changing on almost every row (the builder's dense labels),
// episode-end components sparse with zeros, -0, NaN, ±Inf and subnormals,
// one or two episode-end columns or none, a component no row sets, parts
// without rows; and the same error where an episode-end column is missing.
func TestCountBuilderAgreesWithCountPart(t *testing.T) {
	twoEnds := twoEndsSpec(t)
	b := upperbound.Bound{PerStep: 0.5, FinalStep: 2, Derivation: "test"}
	specs := []*upperbound.Spec{nil, stepOnly(t), loadBundled(t, "paper"), twoEnds}
	state := uint64(7)
	next := func() uint64 { state = state*6364136223846793005 + 1442695040888963407; return state >> 33 }
	values := []float64{math.Copysign(0, -1), 1, 0.5, math.NaN(), math.Inf(1), math.Inf(-1), math.SmallestNonzeroFloat64, -3}
	sizes := []int{0, 1, 2, 63, 64, 65, 300, 4095, 4097, 20_000}
	for trial := 0; trial < 4*len(sizes)*len(specs); trial++ {
		spec := specs[trial%len(specs)]
		n := sizes[(trial/len(specs))%len(sizes)]
		lb, err := upperbound.NewLabelBounds(b, spec)
		if err != nil {
			t.Fatal(err)
		}
		// "timeout" is never set on some trials; "progress" sometimes is.
		bl := skyfall.NewBuilder("R", []string{"progress", "success", "timeout"})
		change := []uint64{1, 20, 1000, 2}[trial%4] // 1 in change rows switches label
		density := []uint64{2, 50, 1}[trial%3]      // 1 in density rows sets a component
		label := "a"
		for range n {
			if next()%change == 0 {
				label = string(rune('a' + next()%40))
			}
			c := []float64{0, 0, 0}
			for k := range c {
				if (k < 2 || trial%5 != 0) && next()%density == 0 {
					c[k] = values[next()%uint64(len(values))]
				}
			}
			bl.Add(&skyfall.Row{Reward: 1, Label: label, Comps: c, Invalid: -1})
		}
		got, gotErr := lb.CountBuilder(bl)
		want, wantErr := lb.CountPart(bl.Trace(nil))
		if gotErr != nil || wantErr != nil {
			t.Fatalf("trial %d: %v, %v", trial, gotErr, wantErr)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("trial %d (%d rows, spec %v):\n CountBuilder %+v\n CountPart    %+v", trial, n, spec != nil, got, want)
		}
	}
	// A builder without an episode-end column: CountPart's error, for the
	// first missing name; a nil builder fails.
	for _, comps := range [][]string{nil, {"success"}, {"progress"}} {
		for _, rows := range []int{0, 2} {
			lb, _ := upperbound.NewLabelBounds(b, twoEnds)
			bl := skyfall.NewBuilder("K", comps)
			for range rows {
				bl.Add(&skyfall.Row{Label: "a", Comps: []float64{1}, Invalid: -1})
			}
			_, gotErr := lb.CountBuilder(bl)
			_, wantErr := lb.CountPart(bl.Trace(nil))
			if gotErr == nil || wantErr == nil || gotErr.Error() != wantErr.Error() {
				t.Errorf("components %q, %d rows: CountBuilder %v, CountPart %v", comps, rows, gotErr, wantErr)
			}
		}
	}
	lb, _ := upperbound.NewLabelBounds(b, nil)
	if _, err := lb.CountBuilder(nil); err == nil {
		t.Error("nil builder counted")
	}
}
