package figures

import (
	"encoding/binary"
	"image"
	"math"
	"math/bits"

	"golang.org/x/image/math/fixed"
	"gonum.org/v1/plot/vg"

	ftraster "github.com/crlbatch/crlbatch/figures/internal/raster"
	"github.com/crlbatch/crlbatch/internal/fpmath"
)

// A PNG figure's polygons filled to the pixels gg filled them with,
// cheaper.
//
// gg fills a path by rasterizing it with freetype's rasterizer and
// painting each span with raster.RGBAPainter (Over, the colour times the
// span's coverage), which computes every pixel of a span afresh: a
// figure's background, the reward figure's regime shades and ribbons,
// the interval bars are long spans over pixels of one colour, and
// painting was 13 % of a warm job's figure CPU. pngCanvas.Fill builds the
// path as gg builds it (gc's matrix, positions rounded to 1/64 pixel, each
// subpath closed, an arc as gg's 16 quadratic pieces) when it has only
// moves, lines, arcs and closes (every polygon, rectangle and dot plot
// draws; curves go through gg), rasterizes it with a rasterizer kept
// with the canvas's memory (figures/internal/raster, freetype's with a
// faster search for a row's cells: the same spans), of the canvas's size
// or of a band of rows around the path (bandRasterizer), and paints with
// memoPainter:
// RGBAPainter's arithmetic, a pixel that equals the one before it in the
// span given that one's result, an opaque colour at full coverage
// written at once (TestFillPaths, TestMemoPainter). Like drawText, it
// does not consult a clip mask: gg has one only after Clip, which neither
// vgimg nor pngCanvas calls (resetContext clears any).

// fillPath is the freetype path gg fills for p drawn at dpi through
// matrix m (MoveTo, LineTo, DrawArc and ClosePath as gg's, and the
// implicit close its fill adds), and whether p has only moves, lines,
// arcs and closes.
func fillPath(dst ftraster.Path, p vg.Path, dpi float64, m interface {
	TransformPoint(x, y float64) (float64, float64)
}) (ftraster.Path, bool) {
	return ggPath(dst, p, dpi, m, true)
}

// ggPath is the fill path (fill) or the stroke path gg builds for p: the
// same points; a fill path also closes each subpath where the next one
// starts and at the end.
func ggPath(dst ftraster.Path, p vg.Path, dpi float64, m interface {
	TransformPoint(x, y float64) (float64, float64)
}, fill bool) (ftraster.Path, bool) {
	dst = dst[:0]
	var start fixed.Point26_6
	has := false
	// fix is gg's: a point through the matrix, rounded to 1/64 pixel.
	fix := func(x, y float64) fixed.Point26_6 {
		x, y = m.TransformPoint(x, y)
		return fixed.Point26_6{X: fixed.Int26_6(math.Round(x * 64)), Y: fixed.Int26_6(math.Round(y * 64))}
	}
	moveTo := func(x, y float64) {
		if has && fill {
			dst.Add1(start)
		}
		pt := fix(x, y)
		dst.Start(pt)
		start, has = pt, true
	}
	for _, comp := range p {
		switch comp.Type {
		case vg.MoveComp:
			moveTo(comp.Pos.X.Dots(dpi), comp.Pos.Y.Dots(dpi))
		case vg.LineComp:
			if !has {
				moveTo(comp.Pos.X.Dots(dpi), comp.Pos.Y.Dots(dpi))
				continue
			}
			dst.Add1(fix(comp.Pos.X.Dots(dpi), comp.Pos.Y.Dots(dpi)))
		case vg.ArcComp:
			// vgimg draws an arc with gg's DrawArc, which is
			// DrawEllipticalArc with both radii r: 16 quadratic pieces,
			// each computed as it computes them.
			x, y, r := float64(comp.Pos.X.Dots(dpi)), float64(comp.Pos.Y.Dots(dpi)), float64(comp.Radius.Dots(dpi))
			angle1, angle2 := comp.Start, comp.Start+comp.Angle
			const n = 16
			for i := 0; i < n; i++ {
				p1 := float64(i+0) / n
				p2 := float64(i+1) / n
				// Every product converted before it is added (no
				// fused multiply-add: the same pixels on every CPU).
				a1 := angle1 + float64((angle2-angle1)*p1)
				a2 := angle1 + float64((angle2-angle1)*p2)
				x0 := x + float64(r*fpmath.Cos(a1))
				y0 := y + float64(r*fpmath.Sin(a1))
				x1 := x + float64(r*fpmath.Cos((a1+a2)/2))
				y1 := y + float64(r*fpmath.Sin((a1+a2)/2))
				x2 := x + float64(r*fpmath.Cos(a2))
				y2 := y + float64(r*fpmath.Sin(a2))
				cx := float64(2*x1) - float64(x0/2) - float64(x2/2)
				cy := float64(2*y1) - float64(y0/2) - float64(y2/2)
				if i == 0 {
					if has {
						dst.Add1(fix(x0, y0))
					} else {
						moveTo(x0, y0)
					}
				}
				dst.Add2(fix(cx, cy), fix(x2, y2))
			}
		case vg.CloseComp:
			if has {
				dst.Add1(start)
			}
		default:
			return dst, false
		}
	}
	if has && fill {
		dst.Add1(start)
	}
	return dst, true
}

// pathRows is the lowest and highest y of every point of path (its
// control points too), in 1/64 pixel; ok is false for an empty path.
func pathRows(path ftraster.Path) (lo, hi fixed.Int26_6, ok bool) {
	lo, hi = math.MaxInt32, math.MinInt32
	for i := 0; i < len(path); {
		n := 0
		switch path[i] {
		case 0, 1:
			n = 1
		case 2:
			n = 2
		case 3:
			n = 3
		default:
			return 0, 0, false
		}
		for j := range n {
			y := path[i+2+2*j]
			lo, hi = min(lo, y), max(hi, y)
		}
		i += 2 + 2*n
		ok = true
	}
	return lo, hi, ok
}

// shiftRows moves every point of path up by k whole pixels.
func shiftRows(path ftraster.Path, k int) {
	d := fixed.Int26_6(64 * k)
	for i := 0; i < len(path); {
		n := int(path[i])
		if n == 0 {
			n = 1
		}
		for j := range n {
			path[i+2+2*j] -= d
		}
		i += 2 + 2*n
	}
}

// memoPainter is raster.RGBAPainter (Op Over) on img in the colour
// (cr, cg, cb, ca), with a span's pixel equal to the one before it
// given that one's result.
type memoPainter struct {
	pix            []byte
	stride, w, h   int
	cr, cg, cb, ca uint32
}

// Paint implements ftraster.Painter as RGBAPainter.Paint does (the image's
// origin at zero).
func (r *memoPainter) Paint(ss []ftraster.Span, done bool) {
	const m = 1<<16 - 1
	for _, s := range ss {
		if s.Y < 0 {
			continue
		}
		if s.Y >= r.h {
			return
		}
		s.X0, s.X1 = max(s.X0, 0), min(s.X1, r.w)
		if s.X0 >= s.X1 {
			continue
		}
		ma := s.Alpha
		a := (m - (r.ca * ma / m)) * 0x101
		sr, sg, sb, sa := r.cr*ma, r.cg*ma, r.cb*ma, r.ca*ma
		row := r.pix[s.Y*r.stride+4*s.X0 : s.Y*r.stride+4*s.X1]
		if a == 0 {
			// An opaque colour at full coverage: every pixel becomes
			// the colour, whatever it was (a figure's background, the
			// size of the image).
			row[0], row[1], row[2], row[3] = uint8(sr/m>>8), uint8(sg/m>>8), uint8(sb/m>>8), uint8(sa/m>>8)
			for n := 4; n < len(row); n *= 2 {
				copy(row[n:], row[:n])
			}
			continue
		}
		var last, lastOut uint32
		known := false
		for i := 0; i < len(row); i += 4 {
			px := row[i : i+4 : i+4]
			in := binary.LittleEndian.Uint32(px)
			if known && in == last {
				binary.LittleEndian.PutUint32(px, lastOut)
				continue
			}
			px[0] = uint8((uint32(px[0])*a + sr) / m >> 8)
			px[1] = uint8((uint32(px[1])*a + sg) / m >> 8)
			px[2] = uint8((uint32(px[2])*a + sb) / m >> 8)
			px[3] = uint8((uint32(px[3])*a + sa) / m >> 8)
			last, lastOut, known = in, binary.LittleEndian.Uint32(px), true
		}
	}
}

// bandRasterizer is a rasterizer, cleared, for path (which it may change)
// on an image of size: one of the image's size, or, for a path that lies
// within the image's rows, one of a band of rows around it, path moved up
// by the band's first row and the spans painted back down (Dy).
//
// A freetype rasterizer clears and scans a list head for every row of its
// height on every fill, whatever the path: on the 605 × 24,643-pixel
// interval estimates of 200 families, that was most of the cost of
// filling each of the 800 dots and bars. Moving a path by whole pixels
// moves its cells and nothing else, as long as every coordinate stays
// at or above zero (the rasterizer divides toward zero): the rows of
// a cell, and the halved sums of a curve's subdivision, are then those
// of the image's rasterizer less the shift. So the band starts at the
// path's lowest row (control points included, so every subdivided
// point lies within) when that is at or below the image's top, and is
// used only when the path's highest row is inside the image (rows below
// the image are dropped by the image's rasterizer, and a band taller
// than the path would keep them) and the image is wider than 120 pixels
// (a rasterizer's curve subdivision depends on its size up to 120
// pixels; above that, on nothing). The band's height is a power of two
// of at least 64 rows, so that a job's figures need few rasterizers;
// rows of the band past the path's have no cells.
func (m *pngMemory) bandRasterizer(path ftraster.Path, size image.Point) *ftraster.Rasterizer {
	lo, hi, ok := pathRows(path)
	if ok && lo >= 0 && size.X > 120 {
		first, last := int(lo)/64, int(hi)/64
		if h := max(64, 1<<bits.Len(uint(last-first))); last < size.Y && h < size.Y {
			r := m.rasterizer(image.Point{X: size.X, Y: h})
			shiftRows(path, first)
			r.Dx, r.Dy = 0, first
			r.Clear()
			return r
		}
	}
	r := m.rasterizer(size)
	r.Dx, r.Dy = 0, 0
	r.Clear()
	return r
}
