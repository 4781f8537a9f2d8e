package figures

import (
	"fmt"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/crlbatch/crlbatch/protocol"
)

// RunPoint is one run's pair of seed values.
type RunPoint struct {
	Family, Run string
	X, Y        protocol.Value
}

// Tradeoff draws each run as a point (x, y), one colour per family in
// order of first appearance, and each family's mean of the drawn points as
// a larger cross. A run missing either value is left out and named in the
// caption with the reason.
func Tradeoff(name, title string, pts []RunPoint, xlabel, ylabel string) *Figure {
	p := newPlot(title, xlabel, ylabel)
	var fams []string
	byFam := map[string]plotter.XYs{}
	var absent []string
	entries := 0
	for _, r := range pts {
		if _, ok := byFam[r.Family]; !ok {
			fams = append(fams, r.Family)
			byFam[r.Family] = nil
		}
		if !r.X.OK || !r.Y.OK {
			absent = append(absent, fmt.Sprintf("run %s (%s)", r.Run, reasonOf(r.X, r.Y)))
			continue
		}
		byFam[r.Family] = append(byFam[r.Family], plotter.XY{X: r.X.V, Y: r.Y.V})
	}
	for i, f := range fams {
		xys := byFam[f]
		if len(xys) == 0 {
			continue
		}
		s, err := plotter.NewScatter(xys)
		if err != nil {
			continue
		}
		s.GlyphStyle = draw.GlyphStyle{Color: Color(i), Radius: vg.Points(3), Shape: draw.CircleGlyph{}}
		p.Add(s)
		p.Legend.Add(familyName(f), s)
		entries++
		mx, my := 0.0, 0.0
		for _, xy := range xys {
			mx += xy.X
			my += xy.Y
		}
		mx, my = mx/float64(len(xys)), my/float64(len(xys))
		if m, err := plotter.NewScatter(plotter.XYs{{X: mx, Y: my}}); err == nil {
			m.GlyphStyle = draw.GlyphStyle{Color: Color(i), Radius: vg.Points(6), Shape: draw.CrossGlyph{}}
			p.Add(m)
		}
	}
	// Room above the points for the legend (top right), so that it hides
	// none: a line of about 12 pt per family out of a data area of about
	// 170 pt; and 5 % of the span on every side, so that no point sits on
	// an axis' end.
	fixRange(&p.X)
	fixRange(&p.Y)
	padX(p, 0.05)
	if span := p.Y.Max - p.Y.Min; span > 0 {
		legend := min(0.6, (float64(12*float64(entries))+10)/170)
		p.Y.Min -= float64(0.05 * span)
		p.Y.Max += float64(0.05*span) + float64((1.1*span)*legend/(1-legend))
	}
	caption := "One point per run (its seed values), coloured by family; the cross is the family's mean of its points."
	if len(absent) > 0 {
		caption += " Not drawn: " + strings.Join(absent, "; ") + "."
	}
	fig := &Figure{Name: name, Title: title, Caption: caption, Panels: []*plot.Plot{p}}
	k := newKeyer(kindTradeoff)
	k.str(title)
	k.int(int64(len(pts)))
	for _, r := range pts {
		k.str(r.Family)
		k.str(r.Run)
		k.value(r.X)
		k.value(r.Y)
	}
	k.str(xlabel)
	k.str(ylabel)
	fig.keyed(k)
	return fig
}
