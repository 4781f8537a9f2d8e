package figures

import (
	"encoding/binary"
	"math"

	ftraster "github.com/golang/freetype/raster"
	"golang.org/x/image/math/fixed"
	"gonum.org/v1/plot/vg"
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
// subpath closed) when it has only moves, lines and closes (every polygon
// and rectangle plot draws; arcs and curves go through gg), rasterizes it
// with a freetype rasterizer of the canvas's size kept with its memory,
// and paints with memoPainter: RGBAPainter's arithmetic, a pixel that
// equals the one before it in the span given that one's result
// (TestFillPaths, TestMemoPainter). Like drawText, it does not consult a
// clip mask: gg has one only after Clip, which neither vgimg nor
// pngCanvas calls (resetContext clears any).

// fillPath is the freetype path gg fills for p drawn at dpi through
// matrix m (MoveTo, LineTo and ClosePath as gg's, and the implicit close
// its fill adds), and whether p has only moves, lines and closes.
func fillPath(dst ftraster.Path, p vg.Path, dpi float64, m interface {
	TransformPoint(x, y float64) (float64, float64)
}) (ftraster.Path, bool) {
	dst = dst[:0]
	var start fixed.Point26_6
	has := false
	for _, comp := range p {
		switch comp.Type {
		case vg.MoveComp, vg.LineComp:
			x, y := m.TransformPoint(comp.Pos.X.Dots(dpi), comp.Pos.Y.Dots(dpi))
			pt := fixed.Point26_6{X: fixed.Int26_6(math.Round(x * 64)), Y: fixed.Int26_6(math.Round(y * 64))}
			if comp.Type == vg.LineComp && has {
				dst.Add1(pt)
				continue
			}
			if has {
				dst.Add1(start)
			}
			dst.Start(pt)
			start, has = pt, true
		case vg.CloseComp:
			if has {
				dst.Add1(start)
			}
		default:
			return dst, false
		}
	}
	if has {
		dst.Add1(start)
	}
	return dst, true
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
