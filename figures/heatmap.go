package figures

import (
	"fmt"
	"image/color"
	"sort"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/crlbatch/crlbatch/protocol"
)

// Grid is a table of values: Cells[i][j] is row Rows[i], column Cols[j].
type Grid struct {
	Rows, Cols []string
	Cells      [][]protocol.Value
}

// Heatmap draws a grid as coloured cells, from light (lo) to dark (hi),
// each with its value written in it when the grid is small enough to read.
// An absent cell is drawn hatched grey with a dash, never coloured as a
// number; the caption lists the absent cells by reason.
func Heatmap(name, title string, g Grid, xlabel, ylabel string, lo, hi float64, format, caption string) *Figure {
	caption0 := caption
	p := newPlot(title, xlabel, ylabel)
	rows, cols := len(g.Rows), len(g.Cols)
	text := rows <= 12 && cols <= 12
	var labels plotter.XYLabels
	var labelColors []color.Color
	absent := map[string][]string{}
	for i := range g.Rows {
		y := float64(rows - 1 - i)
		for j := range g.Cols {
			x := float64(j)
			v := g.Cells[i][j]
			ring := plotter.XYs{{X: x - 0.5, Y: y - 0.5}, {X: x + 0.5, Y: y - 0.5}, {X: x + 0.5, Y: y + 0.5}, {X: x - 0.5, Y: y + 0.5}}
			poly, err := plotter.NewPolygon(ring)
			if err != nil {
				continue
			}
			poly.LineStyle.Width = vg.Points(0.5)
			poly.LineStyle.Color = color.White
			if v.OK {
				t := 0.5
				if hi > lo {
					t = min(max((v.V-lo)/(hi-lo), 0), 1)
				}
				poly.Color = shade(t)
				if text {
					labels.XYs = append(labels.XYs, plotter.XY{X: x, Y: y})
					labels.Labels = append(labels.Labels, fmt.Sprintf(format, v.V))
					if t > 0.55 {
						labelColors = append(labelColors, color.White)
					} else {
						labelColors = append(labelColors, color.Black)
					}
				}
			} else {
				poly.Color = color.NRGBA{0xee, 0xee, 0xee, 0xff}
				absent[v.Reason] = append(absent[v.Reason], g.Rows[i]+" × "+g.Cols[j])
				if text {
					labels.XYs = append(labels.XYs, plotter.XY{X: x, Y: y})
					labels.Labels = append(labels.Labels, "—")
					labelColors = append(labelColors, color.NRGBA{0x88, 0x88, 0x88, 0xff})
				}
			}
			p.Add(poly)
		}
	}
	if len(labels.Labels) > 0 {
		if l, err := plotter.NewLabels(labels); err == nil {
			for k := range l.TextStyle {
				l.TextStyle[k].XAlign = draw.XCenter
				l.TextStyle[k].YAlign = draw.YCenter
				l.TextStyle[k].Font.Size = vg.Points(8)
				l.TextStyle[k].Color = labelColors[k]
			}
			p.Add(l)
		}
	}
	p.NominalX(g.Cols...)
	var ys []string
	for i := rows - 1; i >= 0; i-- {
		ys = append(ys, g.Rows[i])
	}
	p.NominalY(ys...)
	p.X.Min, p.X.Max = -0.5, float64(cols)-0.5
	p.Y.Min, p.Y.Max = -0.5, float64(rows)-0.5
	p.X.Tick.Label.Rotation = 0
	caption = strings.TrimSpace(caption + fmt.Sprintf(" Colour from light (%s or less) to dark (%s or more).", fmt.Sprintf(format, lo), fmt.Sprintf(format, hi)))
	if len(absent) > 0 {
		reasons := make([]string, 0, len(absent))
		for r := range absent {
			reasons = append(reasons, r)
		}
		sort.Strings(reasons)
		var parts []string
		for _, r := range reasons {
			parts = append(parts, fmt.Sprintf("%s (%s)", strings.Join(absent[r], ", "), r))
		}
		caption += " Grey cells with a dash have no value: " + strings.Join(parts, "; ") + "."
	}
	h := vg.Length(vg.Length(max(rows, 2))*0.9*vg.Centimeter) + 3*vg.Centimeter
	fig := &Figure{Name: name, Title: title, Caption: caption, Panels: []*plot.Plot{p}, PanelHeight: h}
	k := newKeyer(kindHeatmap)
	k.str(title)
	k.strs(g.Rows)
	k.strs(g.Cols)
	k.int(int64(len(g.Cells)))
	for _, row := range g.Cells {
		k.int(int64(len(row)))
		for _, v := range row {
			k.value(v)
		}
	}
	k.str(xlabel)
	k.str(ylabel)
	k.float(lo)
	k.float(hi)
	k.str(format)
	k.str(caption0)
	fig.keyed(k)
	return fig
}

// shade is a sequential blue from light (0) to dark (1).
func shade(t float64) color.NRGBA {
	a := [3]float64{0xde, 0xeb, 0xf7}
	b := [3]float64{0x08, 0x30, 0x6b}
	mix := func(k int) uint8 { return uint8(a[k] + float64((b[k]-a[k])*t) + 0.5) }
	return color.NRGBA{mix(0), mix(1), mix(2), 0xff}
}
