package figures

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/vgimg"
)

// TestStrokePaths: paths stroked on a pngCanvas (ggPath, rasterPath,
// freetype's Stroke and memoPainter in a band of rows, on the package's
// copy of freetype's rasterizer; gg for dashes and curves) give the pixels of the same strokes on a vgimg canvas: random
// polylines of one and several subpaths, closed or not, with arcs (and
// whole circles), tiny segments (within gg's 4/64-pixel cut), in widths
// of 0 (nothing), thin, 1 point and 6 points (the interval bars), some
// dashed, the width set inside a Push and Pop, colours opaque and
// translucent, the canvas level, translated, scaled and rotated; on a
// small canvas and on a tall one (2,880 rows), where most paths are in a
// band of their rows.
func TestStrokePaths(t *testing.T) {
	r := rand.New(rand.NewPCG(51, 52))
	transforms := []func(c vg.Canvas){
		func(vg.Canvas) {},
		func(c vg.Canvas) { c.Translate(vg.Point{X: 0.37, Y: -1.2}) },
		func(c vg.Canvas) { c.Scale(1.3, 0.7) },
		func(c vg.Canvas) { c.Rotate(0.4) },
	}
	banded := 0
	for round := range 240 {
		w, h, span, top := testRegion(r, round%2 == 1)
		pt := func() vg.Point {
			return vg.Point{X: vg.Length(r.Float64()*260 - 20), Y: top + vg.Length(r.Float64())*span - 20}
		}
		var p vg.Path
		simple := true
		for sub := range 1 + r.IntN(3) {
			if sub > 0 || r.IntN(5) > 0 {
				p.Move(pt())
			} else {
				p.Line(pt())
			}
			for range r.IntN(7) {
				q := pt()
				p.Line(q)
				if r.IntN(4) == 0 { // a tiny segment, within gg's cut
					p.Line(vg.Point{X: q.X + vg.Length(r.Float64()*0.03), Y: q.Y})
				}
			}
			switch r.IntN(6) {
			case 0:
				p.Arc(pt(), vg.Length(1+r.Float64()*30), r.Float64()*6, r.Float64()*6-3)
			case 1:
				p.QuadTo(pt(), pt())
				simple = false
			case 2:
				p.Arc(pt(), vg.Length(r.Float64()*4), 0, 2*math.Pi)
			}
			if r.IntN(2) == 0 {
				p.Close()
			}
		}
		widths := []vg.Length{0, 0.3, 1, 6}
		width := widths[r.IntN(len(widths))]
		dashed := r.IntN(6) == 0
		var clr color.Color = color.NRGBA{0x4e, 0x79, 0xa7, 0xff}
		if round%3 == 2 {
			clr = color.NRGBA{0xe1, 0x57, 0x59, 0xa0}
		}
		c := newPNGCanvas(w, h)
		ref := vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(PNGDPI), vgimg.UseBackgroundColor(color.White))
		for _, cv := range []vg.Canvas{c, ref} {
			transforms[round%len(transforms)](cv)
			cv.SetColor(clr)
			if round%5 == 4 {
				// A width set inside Push and Pop: gc's goes back, vgimg's stays.
				cv.Push()
				cv.SetLineWidth(width)
				cv.Pop()
			} else {
				cv.SetLineWidth(width)
			}
			if dashed {
				cv.SetLineDash([]vg.Length{3, 2}, 1)
			}
			cv.Stroke(p)
			cv.SetLineDash(nil, 0)
			cv.SetLineWidth(1)
			cv.Stroke(vg.Path{{Type: vg.MoveComp, Pos: vg.Point{X: 10, Y: 10}}, {Type: vg.LineComp, Pos: vg.Point{X: 200, Y: 30}}})
		}
		name := fmt.Sprintf("round %d (%d components, width %v, dashed %v)", round, len(p), width, dashed)
		sp, ok := ggPath(nil, p, PNGDPI, c.matrix, false)
		if ok != simple {
			t.Errorf("%s: stroked without gg %v, want %v", name, ok, simple)
		}
		if ok && !dashed && len(sp) > 0 && round%2 == 1 { // tall
			out := strokeOutline(nil, rasterPath(nil, sp), c.lineWidth)
			var m pngMemory
			if rz := m.bandRasterizer(out, c.img.Rect.Size()); rz.Dy > 0 {
				banded++
			}
		}
		if !bytes.Equal(c.img.Pix, ref.Image().(*image.RGBA).Pix) {
			t.Errorf("%s: pixels differ from vgimg's", name)
		}
		c.release()
	}
	if banded < 40 {
		t.Errorf("%d strokes filled in a band of rows, want at least 40", banded)
	}
}
