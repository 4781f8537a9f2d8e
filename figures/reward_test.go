package figures

import (
	"fmt"
	"math"
	"os"
	"strings"
	"testing"

	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/recorder"
)

// TestSpans: two or more adjacent regimes narrower than a column are one
// span, labelled with their number; a narrow regime between wide ones and
// every wide regime stay spans of their own; every regime is in exactly one
// span.
func TestSpans(t *testing.T) {
	regimes := []Regime{
		{"A", 0, 100}, {"B", 100, 105}, {"C", 105, 108}, {"D", 108, 200},
		{"E", 200, 203}, {"F", 203, 300}, {"G", 299, 301}, {"H", 300, 302}, {"I", 301, 304},
	}
	got := spans(regimes, 10)
	want := []span{
		{Start: 0, End: 100, first: 0, n: 1, label: "A"},
		{Start: 100, End: 108, first: 1, n: 2, label: "2 regimes"},
		{Start: 108, End: 200, first: 3, n: 1, label: "D"},
		{Start: 200, End: 203, first: 4, n: 1, label: "E"},
		{Start: 203, End: 300, first: 5, n: 1, label: "F"},
		{Start: 299, End: 304, first: 6, n: 3, label: "3 regimes"},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("spans:\n got %v\nwant %v", got, want)
	}
	// A column of 0 steps (nothing is narrower) keeps every regime.
	if got := spans(regimes, 0); len(got) != len(regimes) {
		t.Errorf("column 0: %d spans of %d regimes", len(got), len(regimes))
	}
}

// burstLine is one run of 100,000 steps: "calm" for 50,000, then 1,000
// labels of 5 steps each, then "storm" to the end. Its buckets are 64 steps
// wide (100,000 / 2,000 rounded up to a power of two), so each of the 1,000
// labels is one regime one or two buckets (64 or 128 steps) wide, and the
// line has 1,002 regimes.
func burstLine() Line {
	const n = 100000
	names := []string{"calm", "storm"}
	for i := range 1000 {
		names = append(names, fmt.Sprint("gust-", i))
	}
	rw, lb := make([]float64, n), make([]int32, n)
	for i := range n {
		rw[i] = math.Sin(float64(i) / 3000)
		switch {
		case i < 50000:
			lb[i] = 0
		case i < 55000:
			lb[i] = int32(2 + (i-50000)/5)
		default:
			lb[i] = 1
		}
	}
	return Merge([]Curve{Downsample(rw, lb, names)})
}

// drawnStrings draws f on a recording canvas: the strings drawn and the
// number of drawing actions.
func drawnStrings(f *Figure) ([]*recorder.FillString, int) {
	w, h := f.size()
	rec := &recorder.Canvas{}
	f.draw(draw.NewCanvas(rec, w, h))
	var out []*recorder.FillString
	for _, a := range rec.Actions {
		if fs, ok := a.(*recorder.FillString); ok {
			out = append(out, fs)
		}
	}
	return out, len(rec.Actions)
}

// TestRewardMergesSubPixelRegimes: the 1,000 regimes of a burst, each at
// most 128 of 100,000 steps wide (under a pixel column of a data area
// narrower than 605 pixels: 165 steps or more), are shaded as one span;
// the caption counts them; the wide regimes keep their labels; the span's
// label "1000 regimes" (about 45 points at 8 points) does not fit in its
// 5,000 steps (under 25 points) and is left out, and the caption says so.
func TestRewardMergesSubPixelRegimes(t *testing.T) {
	ln := burstLine()
	if n := len(Regimes(ln)); n != 1002 {
		t.Fatalf("%d regimes, want 1002", n)
	}
	f := Reward("r", "ppo", 1, ln)
	for _, want := range []string{
		"1000 of the 1002 regimes are each narrower than a pixel column and lie beside another such regime: they are shaded as 1 stretch(es)",
		"1 of the 3 shaded stretches are too narrow to hold their label and are not labelled.",
	} {
		if !strings.Contains(f.Caption, want) {
			t.Errorf("caption lacks %q:\n%s", want, f.Caption)
		}
	}
	strs, actions := drawnStrings(f)
	labels := map[string]bool{}
	for _, s := range strs {
		if strings.HasPrefix(s.String, " ") {
			labels[s.String] = true
		}
	}
	if !labels[" calm"] || !labels[" storm"] || len(labels) != 2 {
		t.Errorf("regime labels drawn %v, want calm and storm", labels)
	}
	// What is drawn does not grow with the regimes: three spans (a shade,
	// two ribbons and a line each, the band absent with one run) and the
	// axes, not 1,002 of each.
	if actions > 200 {
		t.Errorf("%d drawing actions for 3 shaded stretches", actions)
	}
	if os.Getenv("FIGURES_WRITE") != "" { // to look at it
		svg, png, err := f.Render()
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile("/tmp/burst.svg", svg, 0o644)
		os.WriteFile("/tmp/burst.png", png, 0o644)
	}
}

// TestRewardLabelsFit: every regime label drawn lies within its regime's
// width on the canvas (labels never run into the next regime), on lines of
// regimes of every width, from a few wide ones to thousands of narrow ones.
func TestRewardLabelsFit(t *testing.T) {
	for _, every := range []int{40000, 12000, 4000, 900, 300, 50, 2} {
		const n = 120000
		var names []string
		rw, lb := make([]float64, n), make([]int32, n)
		for i := range n {
			k := i / every
			if k >= len(names) {
				names = append(names, fmt.Sprint("r", k))
			}
			rw[i], lb[i] = float64(i%13), int32(k)
		}
		ln := Merge([]Curve{Downsample(rw, lb, names)})
		f := Reward("r", "ppo", 1, ln)
		w, h := f.size()
		p := f.Panels[0]
		fixRange(&p.X)
		fixRange(&p.Y)
		da := p.DataCanvas(draw.NewCanvas(&recorder.Canvas{}, w, h))
		trX := func(x float64) vg.Length {
			return da.Min.X + vg.Length((x-p.X.Min)/(p.X.Max-p.X.Min))*(da.Max.X-da.Min.X)
		}
		strs, _ := drawnStrings(f)
		drawn := 0
		for _, s := range strs {
			if !strings.HasPrefix(s.String, " r") {
				continue
			}
			drawn++
			var k int
			fmt.Sscanf(s.String, " r%d", &k)
			// The regime's extent: from the start of its first bucket to the
			// end of its last (buckets of ln.Width steps).
			start := int64(k*every) / ln.Width * ln.Width
			end := min((int64((k+1)*every)+ln.Width-1)/ln.Width*ln.Width, int64(n+int(ln.Width)-1)/ln.Width*ln.Width)
			sty := regimeLabelStyle()
			sty.Font.Size = s.Size
			x0, x1 := s.Point.X, s.Point.X+sty.Width(s.String)
			if x0 < trX(float64(start))-0.01 || x1 > trX(float64(end))+0.01 {
				t.Errorf("every %d: %q drawn over [%.2f, %.2f] pt, its regime [%d, %d) over [%.2f, %.2f]", every, s.String, x0, x1, start, end, trX(float64(start)), trX(float64(end)))
			}
		}
		if every >= 12000 && drawn != len(names) {
			t.Errorf("every %d: %d of %d wide regimes labelled", every, drawn, len(names))
		}
		t.Logf("every %d steps: %d regimes, %d labelled", every, len(names), drawn)
	}
}

// TestDenseLineLayout: the merged span's line gives the data area the
// layout plotter.Line gives it (its four extreme boxes pad as every box
// does), for a line touching each edge of the data range.
func TestDenseLineLayout(t *testing.T) {
	ln := burstLine()
	for _, edge := range []float64{-3, 3} {
		var xs plotter.XYs
		for i := range 5000 {
			xs = append(xs, plotter.XY{X: float64(i)*25 - 10000, Y: math.Sin(float64(i))})
		}
		xs[0].Y, xs[4999].Y = edge, -edge
		mk := func(dense bool) vg.Rectangle {
			f := Reward("r", "ppo", 1, ln)
			p := f.Panels[0]
			l, _ := plotter.NewLine(xs)
			l.Width = vg.Points(1.2)
			if dense {
				p.Add(&denseLine{Line: l})
			} else {
				p.Add(l)
			}
			w, h := f.size()
			return p.DataCanvas(draw.NewCanvas(&recorder.Canvas{}, w, h)).Rectangle
		}
		if got, want := mk(true), mk(false); got != want {
			t.Errorf("edge %v: data area %v, plotter.Line's %v", edge, got, want)
		}
	}
}
