package figures

import (
	"math"

	"git.sr.ht/~sbinet/gg"
	"golang.org/x/image/math/fixed"
	"gonum.org/v1/plot/vg"

	ftraster "github.com/crlbatch/crlbatch/figures/internal/raster"
)

// A PNG figure's strokes outlined as gg outlines them, filled in a band of
// rows (bandRasterizer).
//
// gg strokes a path by flattening it (its curves into points), dropping
// points within 4/64 pixel of the one kept before (rasterPath), and handing
// that to freetype's Rasterizer.AddStroke with its line width, cap and
// join, on a rasterizer of the image's height: every stroke cleared and
// scanned every row of the image. The interval bars of the interval
// estimates and the probability of improvement are strokes, 800 of them at
// 200 families on an image of 24,643 rows, and their cost grew with
// families × rows. And gg's rasterizer is freetype's, which walks a row's
// list of cells from its head for every cell it saves: a noisy reward line
// of 2,000 points (a run's per-step rewards) puts hundreds of cells in a
// row of its stroke, and cost ~0.3 CPU-s a PNG. pngCanvas.Stroke builds the
// same path (ggPath, as a stroke), flattens it as gg does (flattenPath and
// rasterPath below are gg's), outlines it with freetype's Stroke into a
// path (the calls AddStroke would make on the rasterizer, recorded) and
// fills that outline with memoPainter in a band of rows around it, on the
// package's copy of freetype's rasterizer, which finds a crowded row's
// cells in a table (figures/internal/raster): on every image, short or
// tall. The cap and join are those pngCanvas's context always has (butt,
// round: newContext, resetContext); a dashed stroke, or a path with a
// curve, goes to gg (TestStrokePaths compares every case with vgimg's
// pixels).
//
// rasterPath and unfix follow gg's own code (git.sr.ht/~sbinet/gg, the
// version go.mod requires), as do the arcs of ggPath (fill.go) and the
// text drawing of text.go, so that the pixels are gg's; gg's copyright
// and MIT licence are in LICENSE.gg beside this file.

// Stroke is vgimg's: a path of moves, lines, arcs and closes outlined as
// gg outlines it and filled in a band of rows; a dashed one, or one with
// a curve, through gg.
func (c *pngCanvas) Stroke(p vg.Path) {
	if c.width <= 0 {
		return // vgimg's
	}
	if c.dashed {
		c.Canvas.Stroke(p)
		return
	}
	path, ok := ggPath(c.mem.stroke, p, c.DPI(), c.matrix, false)
	c.mem.stroke = path
	if !ok {
		c.Canvas.Stroke(p)
		return
	}
	flat := rasterPath(c.mem.flat[:0], path)
	c.mem.flat = flat
	outline := strokeOutline(c.mem.outline[:0], flat, c.lineWidth)
	c.mem.outline = outline
	b := c.img.Rect.Size()
	r := c.mem.bandRasterizer(outline, b)
	r.UseNonZeroWinding = true // gg's stroke
	r.AddPath(outline)
	cr, cg, cb, ca := c.clr.RGBA()
	r.Rasterize(&memoPainter{pix: c.img.Pix, stride: c.img.Stride, w: b.X, h: b.Y, cr: cr, cg: cg, cb: cb, ca: ca})
}

// strokeOutline appends to dst the outline gg's stroke of flat (a
// rasterPath) at lineWidth pixels fills: what freetype's Stroke adds to
// the rasterizer (AddStroke) with gg's width, butt caps and round joins.
func strokeOutline(dst, flat ftraster.Path, lineWidth float64) ftraster.Path {
	if len(flat) > 0 {
		ftraster.Stroke(&dst, flat, fixed.Int26_6(math.Round(lineWidth*64)), ftraster.ButtCapper, ftraster.RoundJoiner)
	}
	return dst
}

// SetLineWidth is vgimg's, the width kept (in pixels, as gc keeps it,
// and vgimg's own).
func (c *pngCanvas) SetLineWidth(w vg.Length) {
	c.Canvas.SetLineWidth(w)
	c.width, c.lineWidth = w, w.Dots(c.DPI())
}

// SetLineDash is vgimg's, whether it leaves gc with dashes kept.
func (c *pngCanvas) SetLineDash(ds []vg.Length, offs vg.Length) {
	c.Canvas.SetLineDash(ds, offs)
	c.dashed = len(ds) > 0
}

// rasterPath is gg's rasterPath(flattenPath(p)) appended to dst: each
// subpath's points (a quadratic curve's as gg.QuadraticBezier gives them),
// a point within 4/64 pixel (|dx| + |dy|) of the last one kept dropped.
func rasterPath(dst, p ftraster.Path) ftraster.Path {
	const dcut fixed.Int26_6 = 4
	var previous fixed.Point26_6
	first := true
	var cx, cy float64
	add := func(pt gg.Point) {
		f := pt.Fixed()
		if first {
			dst.Start(f)
			previous, first = f, false
			return
		}
		dx, dy := f.X-previous.X, f.Y-previous.Y
		if dx < 0 {
			dx = -dx
		}
		if dy < 0 {
			dy = -dy
		}
		if dx+dy > dcut {
			dst.Add1(f)
			previous = f
		}
	}
	for i := 0; i < len(p); {
		switch p[i] {
		case 0:
			x, y := unfix(p[i+1]), unfix(p[i+2])
			first = true
			add(gg.Point{X: x, Y: y})
			cx, cy = x, y
			i += 4
		case 1:
			x, y := unfix(p[i+1]), unfix(p[i+2])
			add(gg.Point{X: x, Y: y})
			cx, cy = x, y
			i += 4
		case 2:
			x1, y1, x2, y2 := unfix(p[i+1]), unfix(p[i+2]), unfix(p[i+3]), unfix(p[i+4])
			for _, pt := range gg.QuadraticBezier(cx, cy, x1, y1, x2, y2) {
				add(pt)
			}
			cx, cy = x2, y2
			i += 6
		default:
			panic("figures: a stroke path with a cubic curve") // ggPath makes none
		}
	}
	return dst
}

// unfix is gg's: a 26.6 fixed-point number as a float.
func unfix(x fixed.Int26_6) float64 {
	const shift, mask = 6, 1<<6 - 1
	if x >= 0 {
		return float64(x>>shift) + float64(float64(x&mask)/64)
	}
	x = -x
	if x >= 0 {
		return -(float64(x>>shift) + float64(float64(x&mask)/64))
	}
	return 0
}
