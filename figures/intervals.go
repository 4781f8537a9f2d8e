package figures

import (
	"fmt"
	"math"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/crlbatch/crlbatch/internal/bidi"
	"github.com/crlbatch/crlbatch/protocol"
	"github.com/crlbatch/crlbatch/protocol/family"
)

// Headline is a metric drawn as an interval estimate, with its label.
type Headline struct {
	Metric string
	Label  string
}

// Estimate is one family's interval estimate of a metric.
type Estimate struct {
	Family string
	// Index is the family's position in the reduction (its colour).
	Index          int
	IQM, Low, High protocol.Value
}

// IntervalEstimates are, per metric, the families' IQM and its bootstrap
// interval from the reduction (the iqm, iqm_ci_low and iqm_ci_high of
// families.parquet), families in the reduction's order.
func IntervalEstimates(fres *family.Result, metric string) []Estimate {
	var out []Estimate
	for i, f := range fres.Families {
		for _, r := range f.Rows {
			if r.Metric == metric {
				out = append(out, Estimate{Family: f.Name, Index: i, IQM: r.IQM, Low: r.IQMCILow, High: r.IQMCIHigh})
			}
		}
	}
	return out
}

// familyName is a family as the figures name it, its bidi controls closed
// (Name).
func familyName(f string) string {
	if f == "" {
		return "(none)"
	}
	return Name(f)
}

// Name is a name from the data (a family, a benchmark, a label) as a
// figure's text holds it: with the bidi embeddings, overrides and isolates
// it leaves open closed at its end (bidi.Close), so that a right-to-left
// override in a family name does not reverse the rest of a title, legend
// or axis label in an SVG. A name without one is returned as it is.
func Name(s string) string { return bidi.Close(s) }

// Intervals draws each headline metric as an interval estimate per family,
// rliable-style: the interquartile mean across seeds and its 95 %
// bootstrap interval.
func Intervals(name string, fres *family.Result, hs []Headline) *Figure {
	ests := make([][]Estimate, len(hs))
	for i, h := range hs {
		ests[i] = IntervalEstimates(fres, h.Metric)
	}
	return intervals(name, len(fres.Families), hs, ests)
}

// intervals draws Intervals from what it takes of the reduction: its
// number of families and each headline's estimates (ests[i] those of
// hs[i]); its input key is made of them.
func intervals(name string, families int, hs []Headline, ests [][]Estimate) *Figure {
	fig := &Figure{Name: name, Title: "Interval estimates", PanelHeight: panelHeight(families)}
	var absent, labels []string
	for hi, h := range hs {
		est := ests[hi]
		if len(est) == 0 {
			continue
		}
		p := newPlot(h.Label, "IQM across seeds (95 % bootstrap CI)", "")
		var names []string
		drawn := 0
		for i, e := range est {
			y := float64(len(est) - 1 - i)
			names = append([]string{familyName(e.Family)}, names...)
			labels = append(labels, familyName(e.Family))
			c := Color(e.Index)
			if !e.IQM.OK {
				absent = append(absent, fmt.Sprintf("%s of %s (%s)", h.Label, familyName(e.Family), e.IQM.Reason))
				continue
			}
			if e.Low.OK && e.High.OK {
				if l, err := plotter.NewLine(plotter.XYs{{X: e.Low.V, Y: y}, {X: e.High.V, Y: y}}); err == nil {
					l.Color = fade(c, 0xa0)
					l.Width = vg.Points(6)
					p.Add(l)
				}
			} else {
				absent = append(absent, fmt.Sprintf("the interval of %s of %s (%s)", h.Label, familyName(e.Family), reasonOf(e.Low, e.High)))
			}
			drawn++
			if s, err := plotter.NewScatter(plotter.XYs{{X: e.IQM.V, Y: y}}); err == nil {
				s.GlyphStyle = draw.GlyphStyle{Color: c, Radius: vg.Points(3), Shape: draw.CircleGlyph{}}
				p.Add(s)
			}
		}
		p.NominalY(names...)
		p.Y.Min, p.Y.Max = -0.5, float64(len(est))-0.5
		if drawn == 0 {
			noValue(p)
		} else {
			padX(p, 0.05)
		}
		fig.Panels = append(fig.Panels, p)
	}
	fig.Width = widthFor(fig.Panels, labels)
	fig.Caption = "Each metric's interquartile mean across a family's seeds (dot) and its 95 % percentile-bootstrap interval (bar), as in families.parquet (iqm, iqm_ci_low, iqm_ci_high)."
	if len(absent) > 0 {
		fig.Caption += " Not drawn: " + strings.Join(absent, "; ") + "."
	}
	k := newKeyer(kindIntervals)
	k.int(int64(families))
	keyHeadlines(k, hs, ests, k.estimate)
	fig.keyed(k)
	return fig
}

func reasonOf(vs ...protocol.Value) string {
	for _, v := range vs {
		if !v.OK {
			return v.Reason
		}
	}
	return ""
}

// Improvement is one family's probability of improvement over the
// baseline for a metric, in the metric's direction of better.
type Improvement struct {
	Family string
	Index  int // the family's position in the reduction (its colour)
	// P is the probability that a seed of the family does better than one
	// of the baseline (ties count half); Low and High are its 95 %
	// stratified-bootstrap interval.
	P, Low, High protocol.Value
	// Flipped says that lower is better for the metric: P is then
	// 1 − prob_improvement of families.parquet (which is P(X > Y) + ½P(X = Y)
	// on the raw values), Low is 1 − prob_improvement_ci_high and High is
	// 1 − prob_improvement_ci_low.
	Flipped bool
}

// Improvements are, for a metric, each family's probability of
// improvement over the baseline and its interval (prob_improvement,
// prob_improvement_ci_low and prob_improvement_ci_high of families.parquet,
// turned round where lower is better), the baseline left out.
func Improvements(fres *family.Result, metric string) []Improvement {
	var out []Improvement
	for i, f := range fres.Families {
		if fres.BaselineFound && f.Name == fres.Baseline {
			continue
		}
		for _, r := range f.Rows {
			if r.Metric != metric {
				continue
			}
			e := Improvement{Family: f.Name, Index: i, P: r.ProbImprovement, Low: r.ProbImprovementCILow, High: r.ProbImprovementCIHigh}
			if r.HigherIsBetter != nil && !*r.HigherIsBetter {
				e.Flipped = true
				e.P, e.Low, e.High = complement(e.P), complement(e.High), complement(e.Low)
			}
			out = append(out, e)
		}
	}
	return out
}

// complement is 1 − v, absent when v is.
func complement(v protocol.Value) protocol.Value {
	if !v.OK {
		return v
	}
	return protocol.Finite(1 - v.V)
}

// ProbImprovement draws, per headline metric, each family's probability of
// improvement over the baseline, rliable-style: the probability that a
// seed of the family does better than a seed of the baseline (ties count
// half; P(X > Y) + ½P(X = Y) where higher is better, P(X < Y) + ½P(X = Y)
// where lower is), and its 95 % stratified-bootstrap interval.
func ProbImprovement(name string, fres *family.Result, hs []Headline) *Figure {
	imps := make([][]Improvement, len(hs))
	for i, h := range hs {
		imps[i] = Improvements(fres, h.Metric)
	}
	return probImprovement(name, fres.Baseline, hs, imps)
}

// probImprovement draws ProbImprovement from what it takes of the
// reduction: the baseline's name and each headline's improvements (imps[i]
// those of hs[i]); its input key is made of them.
func probImprovement(name, baseline string, hs []Headline, imps [][]Improvement) *Figure {
	base := familyName(baseline)
	fig := &Figure{Name: name, Title: "Probability of improvement over " + base}
	var absent, labels []string
	rows := 0
	for hi, h := range hs {
		imp := imps[hi]
		if len(imp) == 0 {
			continue
		}
		title := h.Label
		if imp[0].Flipped {
			title += " (lower is better)"
		}
		p := newPlot(title, "P(family better than "+base+"), 95 % stratified-bootstrap CI", "")
		// [0, 1] and a margin, so that a dot at 0 or 1 is drawn whole.
		p.X.Min, p.X.Max = -0.03, 1.03
		p.X.Tick.Marker = plot.ConstantTicks([]plot.Tick{{Value: 0, Label: "0"}, {Value: 0.25}, {Value: 0.5, Label: "0.5"}, {Value: 0.75}, {Value: 1, Label: "1"}})
		var names []string
		drawn := 0
		for i, e := range imp {
			y := float64(len(imp) - 1 - i)
			names = append([]string{familyName(e.Family)}, names...)
			labels = append(labels, familyName(e.Family))
			if !e.P.OK {
				absent = append(absent, fmt.Sprintf("%s of %s (%s)", h.Label, familyName(e.Family), e.P.Reason))
				continue
			}
			c := Color(e.Index)
			if e.Low.OK && e.High.OK {
				if l, err := plotter.NewLine(plotter.XYs{{X: e.Low.V, Y: y}, {X: e.High.V, Y: y}}); err == nil {
					l.Color = fade(c, 0xa0)
					l.Width = vg.Points(6)
					p.Add(l)
				}
			} else {
				absent = append(absent, fmt.Sprintf("the interval of %s of %s (%s)", h.Label, familyName(e.Family), reasonOf(e.Low, e.High)))
			}
			drawn++
			if s, err := plotter.NewScatter(plotter.XYs{{X: e.P.V, Y: y}}); err == nil {
				s.GlyphStyle = draw.GlyphStyle{Color: c, Radius: vg.Points(3), Shape: draw.CircleGlyph{}}
				p.Add(s)
			}
		}
		if l, err := plotter.NewLine(plotter.XYs{{X: 0.5, Y: -0.5}, {X: 0.5, Y: float64(len(imp)) - 0.5}}); err == nil {
			l.Dashes = []vg.Length{vg.Points(3), vg.Points(3)}
			l.Color = Color(9)
			p.Add(l)
		}
		p.NominalY(names...)
		p.Y.Min, p.Y.Max = -0.5, float64(len(imp))-0.5
		if drawn == 0 {
			noValue(p)
		}
		fig.Panels = append(fig.Panels, p)
		rows = max(rows, len(imp))
	}
	fig.PanelHeight = panelHeight(rows)
	fig.Width = widthFor(fig.Panels, labels)
	fig.Caption = "Probability that a seed of the family does better than a seed of the baseline " + base +
		" (dot; ties count half) and its 95 % stratified-bootstrap interval (bar: the family's seeds and the baseline's resampled independently, as rliable does), from prob_improvement, prob_improvement_ci_low and prob_improvement_ci_high in families.parquet. Those are P(X > Y) + ½P(X = Y) on the raw values; for a metric where lower is better the figure draws 1 − prob_improvement and the interval turned round likewise. The dashed line is 0.5: no better, no worse."
	if len(absent) > 0 {
		fig.Caption += " Not drawn: " + strings.Join(absent, "; ") + "."
	}
	k := newKeyer(kindImprovement)
	k.str(baseline)
	keyHeadlines(k, hs, imps, k.improvement)
	fig.keyed(k)
	return fig
}

// noValue marks a panel with nothing to draw; the caption says why.
func noValue(p *plot.Plot) {
	if math.IsInf(p.X.Min, 0) || math.IsInf(p.X.Max, 0) || p.X.Min >= p.X.Max {
		p.X.Min, p.X.Max = 0, 1
	}
	l, err := plotter.NewLabels(plotter.XYLabels{XYs: plotter.XYs{{X: (p.X.Min + p.X.Max) / 2, Y: (p.Y.Min + p.Y.Max) / 2}}, Labels: []string{"no value to draw (see the caption)"}})
	if err != nil {
		return
	}
	l.TextStyle[0].XAlign = draw.XCenter
	l.TextStyle[0].Color = Color(9)
	p.Add(l)
}

// panelHeight fits rows families under a title, ticks and an axis label.
func panelHeight(rows int) vg.Length {
	return 3*vg.Centimeter + vg.Length(vg.Length(rows)*0.8*vg.Centimeter)
}

// widthFor is the width of a figure whose panels name families on their
// y axis: 16 cm, or wider, so that beside the longest family label (as the
// panel's tick labels measure it) the data keep at least 9 cm and their
// axis label fits under them; gonum/plot gives the labels their width and
// the data what is left, which a long label reduced to nothing.
func widthFor(panels []*plot.Plot, labels []string) vg.Length {
	w := 16 * vg.Centimeter
	for _, p := range panels {
		lw := vg.Length(0)
		for _, l := range labels {
			lw = max(lw, p.Y.Tick.Label.Width(l))
		}
		data := max(9*vg.Centimeter, p.X.Label.TextStyle.Width(p.X.Label.Text)+vg.Centimeter)
		// The tick marks, padding and a space beside the labels, and the
		// right margin: 1.5 cm is more than gonum/plot's default style takes.
		w = max(w, lw+data+1.5*vg.Centimeter)
	}
	return w
}

// padX widens a panel's x range by share of its span on each side, so
// that a dot or a bar's end at the extremes of the data is drawn whole
// rather than on the axis' end.
func padX(p *plot.Plot, share float64) {
	if span := p.X.Max - p.X.Min; span > 0 && !math.IsInf(span, 0) {
		p.X.Min -= float64(share * span)
		p.X.Max += float64(share * span)
	}
}
