package figures

import (
	"fmt"
	"sort"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/crlbatch/crlbatch/protocol"
)

// Ranked is one family's average rank across benchmarks.
type Ranked struct {
	Family string
	Rank   protocol.Value
}

// CriticalDifference draws a critical-difference diagram (Demšar 2006):
// each family at its average rank (1 = best, on the left), the Nemenyi
// critical difference as a bar, and a thick line under each maximal group
// of families whose average ranks differ by less than it (no significant
// difference between them). A family without a rank is named in the
// caption; an absent critical difference draws no bar and no group.
func CriticalDifference(name, title string, fams []Ranked, cd protocol.Value, benchmarks int, alpha float64) *Figure {
	var ranked []Ranked
	var absent []string
	for _, f := range fams {
		if f.Rank.OK {
			ranked = append(ranked, f)
		} else {
			absent = append(absent, fmt.Sprintf("%s (%s)", familyName(f.Family), f.Rank.Reason))
		}
	}
	sort.SliceStable(ranked, func(a, b int) bool { return ranked[a].Rank.V < ranked[b].Rank.V })
	p := newPlot(title, "average rank (1 = best)", "")
	p.HideY()
	k := float64(len(fams))
	p.X.Min, p.X.Max = 1, max(k, 2)
	n := float64(len(ranked))
	p.Y.Min, p.Y.Max = -3, n+1.5
	var names plotter.XYLabels
	for i, f := range ranked {
		y := n - float64(i)
		if l, err := plotter.NewLine(plotter.XYs{{X: f.Rank.V, Y: 0}, {X: f.Rank.V, Y: y}}); err == nil {
			l.Color = Color(9)
			p.Add(l)
		}
		if s, err := plotter.NewScatter(plotter.XYs{{X: f.Rank.V, Y: y}}); err == nil {
			s.GlyphStyle = draw.GlyphStyle{Color: Color(i), Radius: vg.Points(3.5), Shape: draw.CircleGlyph{}}
			p.Add(s)
		}
		names.XYs = append(names.XYs, plotter.XY{X: f.Rank.V, Y: y})
		names.Labels = append(names.Labels, fmt.Sprintf("  %s (%.2f)", familyName(f.Family), f.Rank.V))
	}
	if l, err := plotter.NewLabels(names); err == nil {
		for i := range l.TextStyle {
			l.TextStyle[i].YAlign = draw.YCenter
			l.TextStyle[i].Font.Size = vg.Points(9)
		}
		p.Add(l)
	}
	caption := fmt.Sprintf("Average rank of each family over %d benchmark(s) (1 = best).", benchmarks)
	if cd.OK {
		if l, err := plotter.NewLine(plotter.XYs{{X: 1, Y: n + 1}, {X: 1 + cd.V, Y: n + 1}}); err == nil {
			l.Width = vg.Points(2)
			p.Add(l)
		}
		if t, err := plotter.NewLabels(plotter.XYLabels{XYs: plotter.XYs{{X: 1 + cd.V, Y: n + 1}}, Labels: []string{fmt.Sprintf("  CD = %.3f", cd.V)}}); err == nil {
			t.TextStyle[0].YAlign = draw.YCenter
			t.TextStyle[0].Font.Size = vg.Points(9)
			p.Add(t)
		}
		level := 0
		last := -1
		for i := range ranked {
			j := i
			for j+1 < len(ranked) && ranked[j+1].Rank.V-ranked[i].Rank.V < cd.V {
				j++
			}
			if j > i && j > last {
				y := -0.6 - float64(0.6*float64(level%4))
				if l, err := plotter.NewLine(plotter.XYs{{X: ranked[i].Rank.V, Y: y}, {X: ranked[j].Rank.V, Y: y}}); err == nil {
					l.Width = vg.Points(3)
					l.Color = Color(9)
					p.Add(l)
				}
				level++
				last = j
			}
		}
		caption += fmt.Sprintf(" The bar is the Nemenyi critical difference at α = %g; a thick line joins families whose average ranks differ by less than it.", alpha)
	} else {
		caption += " No critical difference: " + cd.Reason + "."
	}
	if len(absent) > 0 {
		caption += " Not ranked: " + strings.Join(absent, "; ") + "."
	}
	fig := &Figure{Name: name, Title: title, Caption: caption, Panels: []*plot.Plot{p}, PanelHeight: vg.Length(n+4) * 0.7 * vg.Centimeter}
	ky := newKeyer(kindCD)
	ky.str(title)
	ky.int(int64(len(fams)))
	for _, f := range fams {
		ky.str(f.Family)
		ky.value(f.Rank)
	}
	ky.value(cd)
	ky.int(int64(benchmarks))
	ky.float(alpha)
	fig.keyed(ky)
	return fig
}
