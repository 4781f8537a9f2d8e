package figures

import (
	"cmp"
	"fmt"
	"image/color"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/crlbatch/crlbatch/protocol"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/recorder"
	"gonum.org/v1/plot/vg/vgimg"
)

// Regime is a stretch of consecutive buckets of a line under one label.
type Regime struct {
	Label      string
	Start, End int64
}

// Regimes splits a line into regimes: consecutive points (by step) under
// one label; a bucket that holds two labels ends one regime and starts
// the next.
func Regimes(ln Line) []Regime {
	var out []Regime
	for _, p := range ln.Points {
		if n := len(out); n > 0 && out[n-1].Label == p.Label && p.Start <= out[n-1].End {
			out[n-1].End = max(out[n-1].End, p.End)
			continue
		}
		out = append(out, Regime{Label: p.Label, Start: p.Start, End: p.End})
	}
	return out
}

// span is one shaded stretch of the reward figure: one regime, or a run of
// adjacent regimes each narrower than a pixel column, shaded as one.
type span struct {
	Start, End int64
	// first and n are the span's regimes: regimes[first : first+n].
	first, n int
	label    string
}

// spans groups regimes into shaded stretches: each run of two or more
// adjacent regimes narrower than column steps (less than a pixel column of
// the PNG) becomes one span labelled "N regimes"; every other regime is a
// span of its own under its label.
func spans(regimes []Regime, column float64) []span {
	narrow := func(r Regime) bool { return float64(r.End-r.Start) < column }
	var out []span
	for i := 0; i < len(regimes); {
		j := i + 1
		if narrow(regimes[i]) {
			for j < len(regimes) && narrow(regimes[j]) {
				j++
			}
		}
		s := span{Start: regimes[i].Start, End: regimes[i].End, first: i, n: j - i, label: regimes[i].Label}
		for _, r := range regimes[i+1 : j] {
			s.Start, s.End = min(s.Start, r.Start), max(s.End, r.End)
		}
		if s.n > 1 {
			s.label = fmt.Sprintf("%d regimes", s.n)
		}
		out = append(out, s)
		i = j
	}
	return out
}

// regimeLabelStyle is the style of the regimes' labels (plotter.Labels'
// at 8 points), to measure them.
func regimeLabelStyle() text.Style {
	return text.Style{Color: color.Black, Font: font.From(plotter.DefaultFont, vg.Points(8)), Handler: plot.DefaultTextHandler}
}

// Reward draws a family's line: the regimes shaded and labelled, the
// extremes of each bucket as a light envelope, the 95 % band and the mean.
//
// What it draws grows with what a 16 cm figure can show, not with the
// regimes (issue 16): adjacent regimes each narrower than a pixel column of
// the PNG are shaded as one span, labelled with their number ("N regimes")
// and counted in the caption; a stretch is labelled only when its label
// fits within its width, and the caption counts those left unlabelled.
// Every regime's numbers stay in the Parquet files and the report.
func Reward(name, fam string, runs int, ln Line) *Figure {
	p := newPlot(fmt.Sprintf("%s: reward per step (%d runs)", Name(fam), runs), "step", "reward")
	lo, hi := 0.0, 0.0
	for i, pt := range ln.Points {
		if i == 0 || pt.Min < lo {
			lo = pt.Min
		}
		if i == 0 || pt.Max > hi {
			hi = pt.Max
		}
		if pt.BandLow.OK && pt.BandHigh.OK {
			lo, hi = min(lo, pt.BandLow.V), max(hi, pt.BandHigh.V)
		}
	}
	if hi == lo {
		hi = lo + 1
	}
	if hi == lo { // |lo| ≥ 2^53: a step of 1 is lost in its rounding
		// Widened towards zero, which never leaves float64.
		if d := float64(math.Abs(lo) * 0.1); lo > 0 {
			lo -= d
		} else {
			hi += d
		}
	}
	// Rewards near ±MaxFloat64 of both signs: the axis is cut to a span
	// float64 holds, and the caption says so.
	lo, hi, clipped := finiteSpan(lo, hi)
	regimes := Regimes(ln)
	fig := &Figure{Name: name, Title: "Reward of " + fam, Panels: []*plot.Plot{p}}
	// The data area's width before anything is drawn, the axes' ranges set
	// to those the shaded regimes give them (every point lies within). The
	// ends of the lines drawn later may narrow it a little, never widen it,
	// so a regime narrower than column steps is narrower than a pixel
	// column as drawn.
	var dataW vg.Length
	var column float64 // steps per pixel column of the PNG
	if len(regimes) > 0 {
		xmin, xmax := regimes[0].Start, regimes[0].End
		for _, r := range regimes {
			xmin, xmax = min(xmin, r.Start), max(xmax, r.End)
		}
		p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = float64(xmin), float64(xmax), lo, hi
		w, h := fig.size()
		da := p.DataCanvas(draw.NewCanvas(&recorder.Canvas{}, w, h))
		dataW = da.Max.X - da.Min.X
		if px := float64(dataW) * PNGDPI / float64(vg.Inch); px > 0 && xmax > xmin {
			column = float64(xmax-xmin) / px
		}
	}
	sp := spans(regimes, column)
	shades := []color.NRGBA{{0xe8, 0xee, 0xf6, 0xff}, {0xfb, 0xf1, 0xe4, 0xff}}
	merged, mergedRegimes := 0, 0
	for i, s := range sp {
		poly, err := plotter.NewPolygon(plotter.XYs{{X: float64(s.Start), Y: lo}, {X: float64(s.End), Y: lo}, {X: float64(s.End), Y: hi}, {X: float64(s.Start), Y: hi}})
		if err == nil {
			poly.Color = shades[i%2]
			poly.LineStyle.Width = 0
			p.Add(poly)
		}
		if s.n > 1 {
			merged++
			mergedRegimes += s.n
		}
	}
	// One segment per regime, so that a line never joins two labels'
	// buckets at the same step; a merged span's regimes are one segment
	// through their buckets in step order.
	c := Color(0)
	missingBand := map[string]int{}
	missingMean := 0
	in := regimePoints(ln, regimes)
	for _, s := range sp {
		ks := in[s.first]
		if s.n > 1 {
			ks = nil
			for _, rk := range in[s.first : s.first+s.n] {
				ks = append(ks, rk...)
			}
			slices.SortStableFunc(ks, func(a, b int) int {
				pa, pb := ln.Points[a], ln.Points[b]
				return cmp.Compare(pa.Start+pa.End, pb.Start+pb.End)
			})
		}
		// means are the mean line's pieces: a bucket whose mean left
		// float64 is a gap between two.
		var means []plotter.XYs
		var mean, env, band plotter.XYs
		var bandLow plotter.XYs
		for _, k := range ks {
			pt := ln.Points[k]
			x := float64(pt.Start+pt.End) / 2
			if math.IsInf(pt.Mean, 0) || math.IsNaN(pt.Mean) {
				missingMean++
				if len(mean) > 0 {
					means = append(means, mean)
				}
				mean = nil
			} else {
				mean = append(mean, plotter.XY{X: x, Y: pt.Mean})
			}
			env = append(env, plotter.XY{X: x, Y: pt.Max})
			switch {
			case pt.BandLow.OK && pt.BandHigh.OK:
				band = append(band, plotter.XY{X: x, Y: pt.BandHigh.V})
				bandLow = append(bandLow, plotter.XY{X: x, Y: pt.BandLow.V})
			case !pt.BandLow.OK:
				missingBand[pt.BandLow.Reason]++
			default:
				missingBand[pt.BandHigh.Reason]++
			}
		}
		if len(mean) > 0 {
			means = append(means, mean)
		}
		var envLow plotter.XYs
		for _, k := range ks {
			pt := ln.Points[k]
			envLow = append(envLow, plotter.XY{X: float64(pt.Start+pt.End) / 2, Y: pt.Min})
		}
		addRibbon(p, env, envLow, fade(c, 0x30))
		if len(band) == len(ks) {
			addRibbon(p, band, bandLow, fade(c, 0x70))
		}
		for _, mean := range means {
			if l, err := plotter.NewLine(mean); err == nil {
				l.Color = c
				l.Width = vg.Points(1.2)
				if s.n > 1 {
					p.Add(&denseLine{Line: l})
				} else {
					p.Add(l)
				}
			}
		}
	}
	if clipped {
		// The lines and ribbons widened the axis to the data again.
		p.Y.Min, p.Y.Max = lo, hi
	}
	// Each stretch labelled at its start where its label fits within its
	// width on the data area as drawn (the lines' ends may narrow it: it is
	// measured with them in place; a label that fits never does).
	if len(sp) > 0 {
		w, h := fig.size()
		da := p.DataCanvas(draw.NewCanvas(&recorder.Canvas{}, w, h))
		dataW = da.Max.X - da.Min.X
	}
	var names plotter.XYLabels
	unlabelled := 0
	sty := regimeLabelStyle()
	for _, s := range sp {
		text := " " + s.label
		room := vg.Length(float64(s.End-s.Start) / (p.X.Max - p.X.Min) * float64(dataW))
		if sty.Width(text) > room {
			unlabelled++
			continue
		}
		names.XYs = append(names.XYs, plotter.XY{X: float64(s.Start), Y: hi})
		names.Labels = append(names.Labels, text)
	}
	if lbl, err := plotter.NewLabels(names); err == nil {
		for i := range lbl.TextStyle {
			lbl.TextStyle[i].Font.Size = vg.Points(8)
			lbl.TextStyle[i].YAlign = -1.2
		}
		p.Add(lbl)
	}
	caption := fmt.Sprintf("Mean reward across the family's runs per bucket of %d step(s) (dark line), its 95 %% Student-t band across runs (dark ribbon), and the lowest and highest reward of any run in the bucket (light ribbon); shaded stretches are the regimes, labelled at their start. Steps are row positions in canonical order.", ln.Width)
	if merged > 0 {
		caption += fmt.Sprintf(" %d of the %d regimes are each narrower than a pixel column and lie beside another such regime: they are shaded as %d stretch(es) labelled with their number of regimes (\"N regimes\"), through whose buckets the line and ribbons run in step order; every regime is in the Parquet files and the report.", mergedRegimes, len(regimes), merged)
	}
	if unlabelled > 0 {
		caption += fmt.Sprintf(" %d of the %d shaded stretches are too narrow to hold their label and are not labelled.", unlabelled, len(sp))
	}
	if n := missingBand[ReasonOneRun]; n > 0 {
		caption += fmt.Sprintf(" The band is absent at %d bucket(s): %s.", n, ReasonOneRun)
	}
	for _, why := range slices.Sorted(maps.Keys(missingBand)) {
		if why != ReasonOneRun {
			caption += fmt.Sprintf(" The band is absent at %d bucket(s): %s.", missingBand[why], why)
		}
	}
	if missingMean > 0 {
		caption += fmt.Sprintf(" The mean is absent at %d bucket(s), a gap in the line: %s.", missingMean, protocol.ReasonOverflow)
	}
	if clipped {
		caption += fmt.Sprintf(" The reward axis is cut to [%g, %g], a span float64 holds: what lies beyond is clipped (every value is in the Parquet files).", lo, hi)
	}
	fig.Caption = strings.TrimSpace(caption)
	k := newKeyer(kindReward)
	k.str(fam)
	k.int(int64(runs))
	k.line(ln)
	fig.keyed(k)
	return fig
}

// regimePoints lists for each regime the indices, ascending, of the points
// of its label that lie within it (Start ≥ its start, End ≤ its end). It
// visits, per regime, only the points of its label from the first that
// starts at or after the regime (a binary search, points of a label being in
// step order) to the last that starts before its end: a scan of every point
// per regime cost regimes × points (100,000 labels: minutes; issue 16).
// Points of a label out of step order (not made by Merge) are scanned in
// full, as before.
func regimePoints(ln Line, regimes []Regime) [][]int {
	byLabel := map[string][]int{}
	for k, pt := range ln.Points {
		byLabel[pt.Label] = append(byLabel[pt.Label], k)
	}
	sorted := true
	for _, ks := range byLabel {
		for i := 1; i < len(ks); i++ {
			if ln.Points[ks[i]].Start < ln.Points[ks[i-1]].Start {
				sorted = false
			}
		}
	}
	out := make([][]int, len(regimes))
	for ri, r := range regimes {
		ks := byLabel[r.Label]
		from := 0
		if sorted {
			from, _ = slices.BinarySearchFunc(ks, r.Start, func(k int, start int64) int { return cmp.Compare(ln.Points[k].Start, start) })
		}
		for _, k := range ks[from:] {
			pt := ln.Points[k]
			if sorted && pt.Start > r.End {
				break
			}
			if pt.Start >= r.Start && pt.End <= r.End {
				out[ri] = append(out[ri], k)
			}
		}
	}
	return out
}

// addRibbon fills the area between top and bottom (same x).
func addRibbon(p *plot.Plot, top, bottom plotter.XYs, c color.Color) {
	if len(top) == 0 {
		return
	}
	ring := append(plotter.XYs(nil), top...)
	for i := len(bottom) - 1; i >= 0; i-- {
		ring = append(ring, bottom[i])
	}
	if len(top) == 1 { // a single bucket: a thin vertical bar
		ring = plotter.XYs{{X: top[0].X, Y: top[0].Y}, {X: top[0].X, Y: bottom[0].Y}}
		if l, err := plotter.NewLine(ring); err == nil {
			l.Color = c
			l.Width = vg.Points(3)
			p.Add(l)
		}
		return
	}
	poly, err := plotter.NewPolygon(ring)
	if err != nil {
		return
	}
	poly.Color = c
	poly.LineStyle.Width = 0
	p.Add(&ribbon{Polygon: poly, top: top, bottom: bottom})
}

// ribbon is a band between two lines of points in step order. On a vector
// canvas (SVG) it is drawn as its full polygon. On a raster canvas (PNG) it
// is drawn as its envelope per pixel column: in each column of pixels the
// highest point of the top line and the lowest of the bottom, each where it
// lies, plus each line's first and last step, so that no bucket's extreme
// is lost and the band spans the same steps: one vertex per line and pixel
// column (a 16 cm PNG is 605 pixels wide) where a 2,000-bucket line has
// three or four. The rasterizer's cost grows with the vertices, and a
// column of pixels cannot show what lies between them.
type ribbon struct {
	*plotter.Polygon
	top, bottom plotter.XYs
}

// Plot implements plot.Plotter.
func (r *ribbon) Plot(c draw.Canvas, plt *plot.Plot) {
	dpi, ok := rasterDPI(c.Canvas)
	if !ok {
		r.Polygon.Plot(c, plt)
		return
	}
	trX, _ := plt.Transforms(&c)
	px := float64(vg.Inch) / dpi // one pixel, in the canvas's units
	column := func(x float64) int64 { return int64(math.Floor(float64(trX(x)) / px)) }
	top := envelope(r.top, column, func(a, b float64) bool { return a > b })
	bottom := envelope(r.bottom, column, func(a, b float64) bool { return a < b })
	ring := append(plotter.XYs(nil), top...)
	for i := len(bottom) - 1; i >= 0; i-- {
		ring = append(ring, bottom[i])
	}
	poly := *r.Polygon
	poly.XYs = []plotter.XYs{ring}
	poly.Plot(c, plt)
}

// rasterDPI is the resolution of the image under c (plot.Plot wraps its
// canvas in draw.Canvas, RenderContext in stopCanvas; PNG draws on a
// pngCanvas), false when c draws no image.
func rasterDPI(c vg.Canvas) (float64, bool) {
	for {
		switch v := c.(type) {
		case draw.Canvas:
			c = v.Canvas
		case *draw.Canvas:
			c = v.Canvas
		case stopCanvas:
			c = v.CanvasSizer
		case *vgimg.Canvas:
			return v.DPI(), true
		case *pngCanvas:
			return v.DPI(), true
		default:
			return 0, false
		}
	}
}

// envelope keeps, of each run of consecutive points in one column, the
// first point whose Y is most extreme (beyond: a is beyond b), and, in the
// first and last runs, the line's first and last step at that Y.
func envelope(pts plotter.XYs, column func(float64) int64, beyond func(a, b float64) bool) plotter.XYs {
	out := make(plotter.XYs, 0, 2*len(pts)/3+2)
	for i := 0; i < len(pts); {
		col, e, j := column(pts[i].X), i, i+1
		for ; j < len(pts) && column(pts[j].X) == col; j++ {
			if beyond(pts[j].Y, pts[e].Y) {
				e = j
			}
		}
		y := pts[e].Y
		if i == 0 && e != 0 {
			out = append(out, plotter.XY{X: pts[0].X, Y: y})
		}
		out = append(out, pts[e])
		if j == len(pts) && e != j-1 {
			out = append(out, plotter.XY{X: pts[j-1].X, Y: y})
		}
		i = j
	}
	return out
}

// denseLine is the mean line of a span of merged regimes, whose buckets
// can far outnumber the pixel columns they cover, several of them (of
// different labels) at one step. On a vector canvas (SVG) it is drawn
// whole. On a raster canvas (PNG) it is drawn as what a stroke through
// every point covers in each pixel column: the area from the column's
// lowest to its highest point, filled, with its upper and lower edges
// stroked at the line's width (the envelopes that
// TestEnvelopeKeepsEveryColumnsExtremes checks). Stroking the zigzag
// itself cost freetype's rasterizer seconds (it searched its cells in a
// list, before figures/internal/raster); the two edges have one vertex
// per column.
type denseLine struct{ *plotter.Line }

// Plot implements plot.Plotter.
func (l *denseLine) Plot(c draw.Canvas, plt *plot.Plot) {
	dpi, ok := rasterDPI(c.Canvas)
	if !ok || len(l.XYs) < 2 {
		l.Line.Plot(c, plt)
		return
	}
	trX, _ := plt.Transforms(&c)
	px := float64(vg.Inch) / dpi
	column := func(x float64) int64 { return int64(math.Floor(float64(trX(x)) / px)) }
	top := envelope(l.XYs, column, func(a, b float64) bool { return a > b })
	bottom := envelope(l.XYs, column, func(a, b float64) bool { return a < b })
	ring := append(plotter.XYs(nil), top...)
	for i := len(bottom) - 1; i >= 0; i-- {
		ring = append(ring, bottom[i])
	}
	if poly, err := plotter.NewPolygon(ring); err == nil {
		poly.Color = l.Color
		poly.LineStyle.Width = 0
		poly.Plot(c, plt)
	}
	for _, edge := range []plotter.XYs{top, bottom} {
		line := *l.Line
		line.XYs = edge
		line.Plot(c, plt)
	}
}

// GlyphBoxes implements plot.GlyphBoxer with the boxes of the line's
// leftmost, rightmost, lowest and highest points only: the line's boxes
// are all the same size, and the plot reads from them only the extremes
// that pad the data area, so the layout is the one every point's box gives
// (plotter.Line returns one box per point, hundreds of thousands in a
// merged span, asked for several times per drawing).
func (l *denseLine) GlyphBoxes(plt *plot.Plot) []plot.GlyphBox {
	if len(l.XYs) == 0 {
		return nil
	}
	ext := [4]int{} // leftmost, rightmost, lowest, highest
	for i, p := range l.XYs {
		if p.X < l.XYs[ext[0]].X {
			ext[0] = i
		}
		if p.X > l.XYs[ext[1]].X {
			ext[1] = i
		}
		if p.Y < l.XYs[ext[2]].Y {
			ext[2] = i
		}
		if p.Y > l.XYs[ext[3]].Y {
			ext[3] = i
		}
	}
	// As plotter.Line's boxes: a square of the line's width at the point.
	r := 0.5 * l.LineStyle.Width
	out := make([]plot.GlyphBox, 0, 4)
	for _, i := range ext {
		out = append(out, plot.GlyphBox{X: plt.X.Norm(l.XYs[i].X), Y: plt.Y.Norm(l.XYs[i].Y),
			Rectangle: vg.Rectangle{Min: vg.Point{X: -r, Y: -r}, Max: vg.Point{X: r, Y: r}}})
	}
	return out
}
