package figures

import (
	"strings"
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/recorder"

	"github.com/crlbatch/crlbatch/protocol"
	"github.com/crlbatch/crlbatch/protocol/family"
	"github.com/crlbatch/crlbatch/protocol/stats"
)

// textExtents draws f on a recording canvas and returns every string drawn
// with its horizontal extent [x0, x1], measured with the font it was drawn
// in, and the canvas width.
func textExtents(t *testing.T, f *Figure) (map[string][2]vg.Length, vg.Length) {
	t.Helper()
	w, h := f.size()
	rec := &recorder.Canvas{}
	f.draw(draw.NewCanvas(rec, w, h))
	out := map[string][2]vg.Length{}
	for _, a := range rec.Actions {
		fs, ok := a.(*recorder.FillString)
		if !ok {
			continue
		}
		sty := text.Style{Font: fs.Font, Handler: plot.DefaultTextHandler}
		sty.Font.Size = fs.Size
		x0 := fs.Point.X
		out[fs.String] = [2]vg.Length{x0, x0 + sty.Width(fs.String)}
	}
	return out, w
}

// TestLongFamilyLabelsFit: a family label far longer than the default
// width leaves room for the data (the figure widens) and every string of
// the interval-estimate and probability-of-improvement figures lies on the
// canvas, the long label whole.
func TestLongFamilyLabelsFit(t *testing.T) {
	hib, lib := true, false
	long := "ppo-lr0.0003-gamma0.99-gae0.95-entropy0.01-clip0.2-minibatch64-epochs10-seed-sweep-2026"
	mk := func(name string, v float64) family.Family {
		row := func(metric string, hb *bool) family.Row {
			return family.Row{Family: name, Metric: metric, HigherIsBetter: hb, IQM: protocol.Finite(v), IQMCILow: protocol.Finite(v - 0.1), IQMCIHigh: protocol.Finite(v + 0.1),
				ProbImprovement: protocol.Finite(v / 2), ProbImprovementCILow: protocol.Finite(v/2 - 0.1), ProbImprovementCIHigh: protocol.Finite(v/2 + 0.1)}
		}
		return family.Family{Name: name, Rows: []family.Row{row("m", &hib), row("speed", &lib)}}
	}
	fres := &family.Result{Baseline: "base", BaselineFound: true, Families: []family.Family{mk("base", 1), mk(long, 1.2), mk("sac", 0.8)}}
	hs := []Headline{{Metric: "m", Label: "Metric"}, {Metric: "speed", Label: "Speed"}}
	for _, f := range []*Figure{Intervals("iv", fres, hs), ProbImprovement("pi", fres, hs)} {
		ext, w := textExtents(t, f)
		if w <= 16*vg.Centimeter {
			t.Errorf("%s: width %v: not widened for the long label", f.Name, w)
		}
		got, ok := ext[long]
		if !ok {
			t.Fatalf("%s: the long label is not drawn (strings %v)", f.Name, keys(ext))
		}
		for s, e := range ext {
			if e[0] < 0 || e[1] > w {
				t.Errorf("%s: %q drawn over [%.1f, %.1f] pt, off a canvas %.1f pt wide", f.Name, s, e[0], e[1], w)
			}
		}
		// The data keep at least 9 cm right of the labels.
		if room := w - got[1]; room < 9*vg.Centimeter {
			t.Errorf("%s: %.1f pt right of the longest label, want ≥ 9 cm", f.Name, room)
		}
	}
	// Short labels keep the default width.
	short := &family.Result{Baseline: "base", BaselineFound: true, Families: []family.Family{mk("base", 1), mk("sac", 0.8)}}
	for _, f := range []*Figure{Intervals("iv", short, hs), ProbImprovement("pi", short, hs)} {
		if w, _ := f.size(); w != 16*vg.Centimeter {
			t.Errorf("%s: width %v with short labels, want 16 cm", f.Name, w)
		}
		ext, w := textExtents(t, f)
		for s, e := range ext {
			if e[0] < 0 || e[1] > w {
				t.Errorf("%s: %q drawn over [%.1f, %.1f] pt, off a canvas %.1f pt wide", f.Name, s, e[0], e[1], w)
			}
		}
	}
}

func keys(m map[string][2]vg.Length) string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return strings.Join(out, " | ")
}

// TestImprovementsInTheDirectionOfBetter: the figure's probability is the
// family's chance to do better: prob_improvement where higher is better,
// its complement (and the interval turned round) where lower is, and the
// interval is the stratified bootstrap of families.parquet.
func TestImprovementsInTheDirectionOfBetter(t *testing.T) {
	hib, lib := true, false
	vals := map[string][]float64{"ppo": {3, 5, 4, 8}, "sac": {1, 2, 6, 2, 3}}
	var runs []family.Run
	for _, f := range []string{"ppo", "sac"} {
		for i, v := range vals[f] {
			runs = append(runs, family.Run{Key: f + string(rune('0'+i)), Family: f, Values: []protocol.Value{protocol.Some(v), protocol.Some(v)}})
		}
	}
	opt := family.DefaultOptions()
	opt.Resamples = 500
	fres, err := family.Aggregate([]family.Metric{{Name: "reward", HigherIsBetter: &hib}, {Name: "speed", HigherIsBetter: &lib}}, runs, opt)
	if err != nil {
		t.Fatal(err)
	}
	// P(sac > ppo) + ½P(=) over the 20 pairs, by hand: 1: 0; 2: 0 (twice);
	// 6: 3; 3: ½ → 3.5/20.
	up := 3.5 / 20
	lo, hi := stats.ProbImprovementCI(vals["sac"], vals["ppo"], 500, stats.SeedFor(0, "sac", "reward", "probability of improvement"), 0.95)
	r := Improvements(fres, "reward")
	if len(r) != 1 || r[0].Flipped || !near(r[0].P.V, up) || r[0].Low.V != lo || r[0].High.V != hi {
		t.Errorf("reward: %+v, want P %v in [%v, %v]", r, up, lo, hi)
	}
	lo, hi = stats.ProbImprovementCI(vals["sac"], vals["ppo"], 500, stats.SeedFor(0, "sac", "speed", "probability of improvement"), 0.95)
	s := Improvements(fres, "speed")
	if len(s) != 1 || !s[0].Flipped || !near(s[0].P.V, 1-up) || !near(s[0].Low.V, 1-hi) || !near(s[0].High.V, 1-lo) {
		t.Errorf("speed (lower is better): %+v, want P %v in [%v, %v]", s, 1-up, 1-hi, 1-lo)
	}
	fig := ProbImprovement("p", fres, []Headline{{Metric: "reward", Label: "Reward"}, {Metric: "speed", Label: "Speed"}})
	if fig.Panels[1].Title.Text != "Speed (lower is better)" || fig.Panels[0].Title.Text != "Reward" {
		t.Errorf("panel titles %q, %q", fig.Panels[0].Title.Text, fig.Panels[1].Title.Text)
	}
}
