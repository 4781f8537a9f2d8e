package figures

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"gonum.org/v1/plot"

	"github.com/crlbatch/crlbatch/protocol"
)

// The inputs of each figure kind, as its constructor takes them (all but
// the name, which is not drawn; Intervals' and ProbImprovement's as they
// take them of the reduction).
type (
	rewardArgs struct {
		Fam  string
		Runs int
		Ln   Line
	}
	heatmapArgs struct {
		Title          string
		G              Grid
		XLabel, YLabel string
		Lo, Hi         float64
		Format         string
		Caption        string
	}
	tradeoffArgs struct {
		Title          string
		Pts            []RunPoint
		XLabel, YLabel string
	}
	cdArgs struct {
		Title      string
		Fams       []Ranked
		CD         protocol.Value
		Benchmarks int
		Alpha      float64
	}
	intervalsArgs struct {
		Families int
		Hs       []Headline
		Ests     [][]Estimate
	}
	improvementArgs struct {
		Baseline string
		Hs       []Headline
		Imps     [][]Improvement
	}
)

func (a rewardArgs) figure(name string) *Figure { return Reward(name, a.Fam, a.Runs, a.Ln) }
func (a heatmapArgs) figure(name string) *Figure {
	return Heatmap(name, a.Title, a.G, a.XLabel, a.YLabel, a.Lo, a.Hi, a.Format, a.Caption)
}
func (a tradeoffArgs) figure(name string) *Figure {
	return Tradeoff(name, a.Title, a.Pts, a.XLabel, a.YLabel)
}
func (a cdArgs) figure(name string) *Figure {
	return CriticalDifference(name, a.Title, a.Fams, a.CD, a.Benchmarks, a.Alpha)
}
func (a intervalsArgs) figure(name string) *Figure { return intervals(name, a.Families, a.Hs, a.Ests) }
func (a improvementArgs) figure(name string) *Figure {
	return probImprovement(name, a.Baseline, a.Hs, a.Imps)
}

type figureArgs interface{ figure(name string) *Figure }

// randArgs draws the inputs of each kind from small sets of values, so
// that figures drawn independently often share their inputs (and their
// key), and each field takes every kind of value it can (absent values,
// bands or not, one or several regimes, points and panels).
func randArgs(r *rand.Rand) []figureArgs {
	pick := func(ss ...string) string { return ss[r.IntN(len(ss))] }
	num := func() float64 { return []float64{0, 1, -2.5}[r.IntN(3)] }
	val := func() protocol.Value {
		if r.IntN(3) == 0 {
			return protocol.Value{Reason: pick("no runs", "undefined")}
		}
		return protocol.Finite(num())
	}
	// Fewer values, where a figure has many of them.
	small := func() protocol.Value {
		if r.IntN(3) == 0 {
			return protocol.Value{Reason: "undefined"}
		}
		return protocol.Finite(float64(r.IntN(2)))
	}
	// Mostly one item, sometimes more: lists repeat often enough.
	items := func(most int) int {
		if r.IntN(4) > 0 {
			return 1
		}
		return 1 + r.IntN(most)
	}
	ln := Line{Width: 1}
	step := int64(0)
	for range items(4) {
		w := int64(1 + r.IntN(2))
		p := Point{Label: pick("calm", "storm"), Start: step, End: step + w, Runs: 2, Mean: num(), Min: -3, Max: 4}
		switch r.IntN(3) {
		case 0:
			p.BandLow, p.BandHigh = protocol.Value{Reason: ReasonOneRun}, protocol.Value{Reason: ReasonOneRun}
		default:
			lo := num()
			p.BandLow, p.BandHigh = protocol.Finite(lo), protocol.Finite(lo+1)
		}
		ln.Points = append(ln.Points, p)
		step += w
	}
	grid := Grid{Rows: []string{"a", pick("b", "c")}, Cols: []string{pick("x", "y")}}
	for range grid.Rows {
		grid.Cells = append(grid.Cells, []protocol.Value{small()})
	}
	var pts []RunPoint
	for i := range items(3) {
		pts = append(pts, RunPoint{Family: pick("ppo", "ewc"), Run: fmt.Sprint("r", i), X: val(), Y: val()})
	}
	var fams []Ranked
	for _, f := range []string{"ppo", "ewc", "der"}[:items(3)] {
		fams = append(fams, Ranked{Family: f, Rank: val()})
	}
	hs := []Headline{{Metric: "m", Label: pick("M", "N")}}
	var ests []Estimate
	var imps []Improvement
	for i, f := range []string{"ppo", "ewc"}[:items(2)] {
		ests = append(ests, Estimate{Family: f, Index: i, IQM: small(), Low: small(), High: small()})
		imps = append(imps, Improvement{Family: f, Index: i, P: small(), Low: small(), High: small(), Flipped: r.IntN(2) == 0})
	}
	return []figureArgs{
		rewardArgs{Fam: pick("ppo", "ewc"), Runs: 2, Ln: ln},
		heatmapArgs{Title: pick("T", "U"), G: grid, XLabel: "x", YLabel: "y", Lo: 0, Hi: []float64{1, 100}[r.IntN(2)], Format: pick("%.1f", "%.2f"), Caption: "c"},
		tradeoffArgs{Title: "t", Pts: pts, XLabel: "x", YLabel: "y"},
		cdArgs{Title: "cd", Fams: fams, CD: val(), Benchmarks: 1 + r.IntN(2), Alpha: 0.05},
		intervalsArgs{Families: len(ests) + r.IntN(2), Hs: hs, Ests: [][]Estimate{ests}},
		improvementArgs{Baseline: pick("ppo", "sac"), Hs: hs, Imps: [][]Improvement{imps}},
	}
}

func mustKey(t *testing.T, f *Figure) [32]byte {
	t.Helper()
	k, err := f.Key()
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// TestInputKeyFields: every field of every input of every figure kind
// (each leaf of the inputs, to the last bit of a float and the reason of
// an absent value) changes the figure's key; its name does not.
func TestInputKeyFields(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 20 {
		for i := range randArgs(r) {
			// The same inputs again, by the same draw: mk builds a fresh
			// copy to change one leaf of.
			seed1, seed2 := r.Uint64(), r.Uint64()
			mk := func() figureArgs { return randArgs(rand.New(rand.NewPCG(seed1, seed2)))[i] }
			base := mk()
			key := mustKey(t, base.figure("a"))
			if k := mustKey(t, base.figure("another-name")); k != key {
				t.Errorf("%T: the name changed the key", base)
			}
			n := countLeaves(reflect.ValueOf(base))
			if n == 0 {
				t.Fatalf("%T: no field", base)
			}
			for leaf := range n {
				a := reflect.New(reflect.TypeOf(base)).Elem()
				a.Set(reflect.ValueOf(mk()))
				path := changeLeaf(a, leaf)
				if k := mustKey(t, a.Interface().(figureArgs).figure("a")); k == key {
					t.Errorf("%T: changing %s left the key as it was", base, path)
				}
			}
		}
	}
}

// countLeaves counts the strings, numbers and booleans in v.
func countLeaves(v reflect.Value) int {
	n := 0
	walkLeaves(v, "", func(reflect.Value, string) bool { n++; return false })
	return n
}

// changeLeaf changes the leaf-th leaf of v (settable): a string gains a
// letter, an integer grows by one, a float moves to the next float up, a
// boolean turns; it returns the leaf's path.
func changeLeaf(v reflect.Value, leaf int) string {
	var at string
	walkLeaves(v, "", func(l reflect.Value, path string) bool {
		if leaf > 0 {
			leaf--
			return false
		}
		switch l.Kind() {
		case reflect.String:
			l.SetString(l.String() + "x")
		case reflect.Int, reflect.Int64, reflect.Int32:
			l.SetInt(l.Int() + 1)
		case reflect.Float64:
			l.SetFloat(math.Nextafter(l.Float(), math.Inf(1)))
		case reflect.Bool:
			l.SetBool(!l.Bool())
		default:
			panic("leaf of kind " + l.Kind().String())
		}
		at = path
		return true
	})
	return at
}

// walkLeaves calls f on every leaf of v in order, until f returns true.
// Slices are walked element by element (a struct's unexported fields are
// leaves too, so that none is missed: the inputs have none).
func walkLeaves(v reflect.Value, path string, f func(reflect.Value, string) bool) bool {
	switch v.Kind() {
	case reflect.Struct:
		for i := range v.NumField() {
			if walkLeaves(v.Field(i), path+"."+v.Type().Field(i).Name, f) {
				return true
			}
		}
		return false
	case reflect.Slice:
		for i := range v.Len() {
			if walkLeaves(v.Index(i), fmt.Sprintf("%s[%d]", path, i), f) {
				return true
			}
		}
		return false
	case reflect.String, reflect.Int, reflect.Int64, reflect.Int32, reflect.Float64, reflect.Bool:
		return f(v, path)
	default:
		panic(fmt.Sprintf("%s: a field of kind %s: teach the test (and the key) about it", path, v.Kind()))
	}
}

// TestInputKeyDrawsEqualBytes: over many figures of every kind drawn from
// random inputs (from small sets of values, so that keys often repeat),
// figures with one key have the same inputs and one drawing key, and render
// to the same SVG and PNG bytes (compared for the first two repeats of each
// key).
func TestInputKeyDrawsEqualBytes(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	type seen struct {
		first    figureArgs
		args     string
		drawing  *[32]byte // the first's, when a figure shared its key
		svg, png []byte
		renders  int
	}
	drawing := func(f *Figure) [32]byte {
		dk, err := f.drawingKey()
		if err != nil {
			t.Fatal(err)
		}
		return dk
	}
	byKey := map[[32]byte]*seen{}
	same := map[string]int{} // by kind
	rounds := 150
	if testing.Short() || raceEnabled {
		rounds = 60
	}
	for i := range rounds {
		for _, a := range randArgs(r) {
			f := a.figure(fmt.Sprint("f", i))
			key := mustKey(t, f)
			args := fmt.Sprintf("%T %#v", a, a)
			s, ok := byKey[key]
			if !ok {
				byKey[key] = &seen{first: a, args: args}
				continue
			}
			if s.args != args {
				t.Fatalf("one key for different inputs:\n%s\n%s", s.args, args)
			}
			same[fmt.Sprintf("%T", a)]++
			if s.drawing == nil {
				dk := drawing(s.first.figure("first"))
				s.drawing = &dk
			}
			if drawing(f) != *s.drawing {
				t.Fatalf("one key, two drawings: %s", args)
			}
			// Bytes compared for the first repeats of a key (rendering
			// is what the test spends its time on).
			if s.renders == 2 {
				continue
			}
			s.renders++
			svg, png, err := f.Render()
			if err != nil {
				t.Fatal(err)
			}
			if s.svg == nil {
				first := s.first.figure("first")
				if s.svg, s.png, err = first.Render(); err != nil {
					t.Fatal(err)
				}
			}
			if !bytes.Equal(svg, s.svg) || !bytes.Equal(png, s.png) {
				t.Fatalf("one key, different bytes: %s", args)
			}
		}
	}
	for _, a := range randArgs(r) {
		if n := same[fmt.Sprintf("%T", a)]; n < rounds/20 {
			t.Errorf("%T: %d figures shared a key with one before: the inputs repeat too rarely to test", a, n)
		}
	}
	if len(byKey) < rounds {
		t.Errorf("%d keys of %d figures: the inputs repeat too often to test", len(byKey), 6*rounds)
	}
	t.Logf("%d keys; figures that shared one with a figure before: %v", len(byKey), same)
}

// TestKeyFallsBackToTheDrawing: a figure not made by a constructor, or
// whose panels were replaced, is keyed by its drawing.
func TestKeyFallsBackToTheDrawing(t *testing.T) {
	f := Reward("r", "f", 5, smallLine())
	g := Reward("r", "f", 5, smallLine())
	g.Panels = []*plot.Plot{Reward("r", "f", 5, benchLine()).Panels[0]}
	dk, err := g.drawingKey()
	if err != nil {
		t.Fatal(err)
	}
	if k := mustKey(t, g); k != dk || k == mustKey(t, f) {
		t.Error("a figure whose panel was replaced keeps its input key")
	}
	h := &Figure{Name: "h", Panels: []*plot.Plot{newPlot("t", "x", "y")}}
	dk, err = h.drawingKey()
	if err != nil {
		t.Fatal(err)
	}
	if k := mustKey(t, h); k != dk {
		t.Error("a figure built by hand is not keyed by its drawing")
	}
	if _, err := (&Figure{Name: "e"}).Key(); err == nil {
		t.Error("a figure without a panel has a key")
	}
}

// TestInputKeysUnchanged: the input keys of figures of each kind the
// nightly job draws, one of a family whose name is longer than the chunk
// a keyer hashes at a time, are those main computed before the keyer
// hashed its bytes as they were written (b03e4e6): a --cache filled by
// the build before finds its figures. The three reward keys moved once, on
// purpose, when the bands' Student-t quantile became stats.StudentTQuantile
// (branch portable: the lines' band values moved in their last bits, and
// the key hashes them).
func TestInputKeysUnchanged(t *testing.T) {
	fres, hs := twoMetrics()
	for name, c := range map[string]struct {
		f    *Figure
		want string
	}{
		"reward":       {Reward("r", "f", 5, benchLine()), "ce56909998bd2b8772eca2fe4091feff75569dff8b8874226570026c74d565cc"},
		"small reward": {Reward("r", "f", 5, smallLine()), "2d11f9a4ec39aca28a3615079dc84f43258eda9cb5cf810c4c009de68cc54940"},
		"long name":    {Reward("r", strings.Repeat("regime ", 1500), 5, smallLine()), "de894418a639d95f8182b952e55cb08928a108fe150ea83d76f1ff301d202fb9"},
		"intervals":    {Intervals("i", fres, hs), "e2727cdaccc0708b639e2679108250d2e06b661debdc0ca18210d3f5b7875291"},
		"improvement":  {ProbImprovement("p", fres, hs), "4347fb4c7bfe76f6f43cba31300b0c1d8855c97e3116bc5ed5b269ecec5414aa"},
	} {
		k, err := c.f.Key()
		if err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprintf("%x", k); got != c.want {
			t.Errorf("%s: key %s, want %s", name, got, c.want)
		}
	}
}
