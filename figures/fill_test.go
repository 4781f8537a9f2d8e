package figures

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	ftraster "github.com/golang/freetype/raster"
	"golang.org/x/image/math/fixed"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/vgimg"

	ourraster "github.com/crlbatch/crlbatch/figures/internal/raster"
)

// TestMemoPainter: memoPainter paints exactly what freetype's
// raster.RGBAPainter paints, for random spans (inside, across and outside
// the image, every coverage) over images of runs of equal pixels and of
// random ones, in colours opaque, translucent and transparent.
func TestMemoPainter(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	const W, H = 37, 11
	for round := range 500 {
		img := image.NewRGBA(image.Rect(0, 0, W, H))
		for i := 0; i < len(img.Pix); i += 4 {
			if round%2 == 0 && i > 0 && r.IntN(4) > 0 {
				copy(img.Pix[i:i+4], img.Pix[i-4:i]) // runs of one colour
				continue
			}
			a := uint8(r.Uint32())
			if round%3 == 0 {
				a = 0xff
			}
			img.Pix[i], img.Pix[i+1], img.Pix[i+2], img.Pix[i+3] = uint8(r.UintN(uint(a)+1)), uint8(r.UintN(uint(a)+1)), uint8(r.UintN(uint(a)+1)), a
		}
		var clr color.Color = color.NRGBA{uint8(r.Uint32()), uint8(r.Uint32()), uint8(r.Uint32()), uint8(r.Uint32())}
		switch round % 3 {
		case 0:
			clr = color.NRGBA{0xe8, 0xee, 0xf6, 0xff}
		case 1:
			clr = color.Transparent
		}
		var spans []ftraster.Span
		for range 1 + r.IntN(20) {
			x0 := r.IntN(W+20) - 10
			alpha := uint32(r.IntN(0x10000))
			if r.IntN(3) == 0 {
				alpha = 0xffff
			}
			spans = append(spans, ftraster.Span{Y: r.IntN(H+4) - 2, X0: x0, X1: x0 + r.IntN(W+10), Alpha: alpha})
		}
		want := image.NewRGBA(img.Rect)
		copy(want.Pix, img.Pix)
		p := ftraster.NewRGBAPainter(want)
		p.SetColor(clr)
		p.Paint(spans, true)

		mine := make([]ourraster.Span, len(spans)) // the package's copy's spans
		for i, s := range spans {
			mine[i] = ourraster.Span(s)
		}
		cr, cg, cb, ca := clr.RGBA()
		(&memoPainter{pix: img.Pix, stride: img.Stride, w: W, h: H, cr: cr, cg: cg, cb: cb, ca: ca}).Paint(mine, true)
		if !bytes.Equal(img.Pix, want.Pix) {
			t.Fatalf("round %d: %d spans, colour %v: pixels differ from RGBAPainter's", round, len(spans), clr)
		}
	}
}

// TestFillPaths: paths filled on a pngCanvas (fillPath and memoPainter
// for moves, lines, arcs and closes; gg for curves) give the pixels of
// the same paths filled on a vgimg canvas: random polygons of one and
// several subpaths, closed or not, starting with a line, degenerate,
// across and outside the image, in colours opaque, translucent and nil,
// with the canvas level, translated by a fraction of a pixel, scaled and
// rotated; paths with arcs (dots among them) or a curve; on a canvas of
// 288 × 192 pixels and on one of 288 × 2,880 with each path in a band of
// its rows (bandRasterizer), at its top, its bottom, across either edge
// or anywhere. Each checks the path taken.
func TestFillPaths(t *testing.T) {
	r := rand.New(rand.NewPCG(41, 42))
	w, h := 3*vg.Inch, 2*vg.Inch
	// span is the height, in points, over which a path's points lie; a
	// path of a tall canvas (every other round) lies in a band of its
	// rows, at the top, the bottom or across either edge, or anywhere.
	span, top := vg.Length(180), vg.Length(0)
	pt := func() vg.Point {
		return vg.Point{X: vg.Length(r.Float64()*260 - 20), Y: top + vg.Length(r.Float64())*span - 20}
	}
	transforms := []func(c vg.Canvas){
		func(vg.Canvas) {},
		func(c vg.Canvas) { c.Translate(vg.Point{X: 0.37, Y: -1.2}) },
		func(c vg.Canvas) { c.Scale(1.3, 0.7) },
		func(c vg.Canvas) { c.Rotate(0.4) },
	}
	banded := 0
	for round := range 240 {
		w, h, span, top = testRegion(r, round%2 == 1)
		var p vg.Path
		simple := true
		for sub := range 1 + r.IntN(3) {
			if sub > 0 || r.IntN(5) > 0 {
				p.Move(pt())
			} else {
				p.Line(pt()) // a path starting with a line: gg moves there
			}
			for range r.IntN(7) {
				p.Line(pt())
			}
			switch r.IntN(6) {
			case 0:
				p.Arc(pt(), vg.Length(5+r.Float64()*30), r.Float64()*6, r.Float64()*6)
			case 2:
				p.Arc(pt(), vg.Length(r.Float64()*4), 0, 2*math.Pi) // a dot, as CircleGlyph draws
			case 1:
				p.QuadTo(pt(), pt())
				simple = false
			}
			if r.IntN(2) == 0 {
				p.Close()
			}
		}
		var clr color.Color
		switch round % 3 {
		case 1:
			clr = color.NRGBA{0x4e, 0x79, 0xa7, 0xff}
		case 2:
			clr = color.NRGBA{0xe1, 0x57, 0x59, 0x50}
		}
		tr := transforms[round%len(transforms)]
		c := newPNGCanvas(w, h)
		ref := vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(PNGDPI), vgimg.UseBackgroundColor(color.White))
		for _, cv := range []vg.Canvas{c, ref} {
			tr(cv)
			cv.SetColor(color.NRGBA{0xf2, 0x8e, 0x2b, 0xff})
			cv.Fill(vg.Path{{Type: vg.MoveComp, Pos: vg.Point{X: 10, Y: 10}}, {Type: vg.LineComp, Pos: vg.Point{X: 200, Y: 30}}, {Type: vg.LineComp, Pos: vg.Point{X: 90, Y: 120}}})
			cv.SetColor(clr)
			cv.Fill(p)
		}
		name := fmt.Sprintf("round %d (%d components)", round, len(p))
		fp, ok := fillPath(nil, p, PNGDPI, c.matrix)
		if ok != simple {
			t.Errorf("%s: filled without gg %v, want %v", name, ok, simple)
		}
		if ok {
			var m pngMemory
			if r := m.bandRasterizer(fp, c.img.Rect.Size()); r.Dy > 0 {
				banded++
			}
		}
		if !bytes.Equal(c.img.Pix, ref.Image().(*image.RGBA).Pix) {
			t.Errorf("%s: pixels differ from vgimg's", name)
		}
		c.release()
	}
	if banded < 60 {
		t.Errorf("%d paths filled in a band of rows, want at least 60", banded)
	}
	// An empty path fills nothing.
	c := newPNGCanvas(w, h)
	defer c.release()
	before := append([]byte(nil), c.img.Pix...)
	c.Fill(nil)
	if !bytes.Equal(before, c.img.Pix) {
		t.Error("an empty path changed pixels")
	}
}

// testRegion is the canvas (w × h points) of a round of TestFillPaths
// and TestStrokePaths, and the rows its path's points lie in (span points
// from top): 288 × 192 pixels, or with tall 288 × 2,880 pixels (bands of
// 64 to 2,048 rows), the path at its top, its bottom, across either edge,
// or anywhere.
func testRegion(r *rand.Rand, tall bool) (w, h, span, top vg.Length) {
	w, h, span, top = 3*vg.Inch, 2*vg.Inch, 180, 0
	if tall {
		h = 30 * vg.Inch
		span = vg.Length(10 + r.Float64()*float64(h))
		top = vg.Length(r.Float64()*float64(h+40-span)) - 20
		switch r.IntN(4) {
		case 0:
			top = -20
		case 1:
			top = h - span + 20
		}
	}
	return w, h, span, top
}

// bandSpans records the spans a rasterizer paints, as freetype's.
type bandSpans []ftraster.Span

func (s *bandSpans) Paint(ss []ourraster.Span, _ bool) {
	for _, x := range ss {
		*s = append(*s, ftraster.Span(x))
	}
}

// ftBandSpans records the spans freetype's rasterizer paints.
type ftBandSpans []ftraster.Span

func (s *ftBandSpans) Paint(ss []ftraster.Span, _ bool) { *s = append(*s, ss...) }

// TestBandRasterizerMatchesFreetype: a path rasterized as pngCanvas
// rasterizes it (bandRasterizer, of a band of rows or of the image, with
// the package's copy of freetype's rasterizer and its tables of a row's
// cells) paints the spans freetype's own rasterizer of the image's size
// paints for it: random zigzag paths of up to 2,000 points (a noisy
// reward line, its stroke's outline and its polygon filled), within a
// band of the image's rows or across its top or bottom edge, points
// beyond its sides, under both winding rules, on images of 605 pixels
// across and 180 or 2,880 rows.
func TestBandRasterizerMatchesFreetype(t *testing.T) {
	r := rand.New(rand.NewPCG(71, 72))
	var m pngMemory
	banded := 0
	for round := range 60 {
		size := image.Point{X: 605, Y: 180}
		if round%2 == 1 {
			size.Y = 2880
		}
		top := r.Float64()*float64(size.Y+40) - 20
		span := 1 + r.Float64()*min(float64(size.Y)-top+20, 300)
		n := []int{2, 20, 200, 2000}[r.IntN(4)]
		pt := func(x float64) fixed.Point26_6 {
			y := top + r.Float64()*span
			return fixed.Point26_6{X: fixed.Int26_6(math.Round(x * 64)), Y: fixed.Int26_6(math.Round(y * 64))}
		}
		var flat ftraster.Path
		x := r.Float64()*60 - 30
		flat.Start(pt(x))
		for range n {
			x += r.Float64() * float64(size.X+40) / float64(n)
			flat.Add1(pt(x))
		}
		stroked := round%3 != 2
		nonZero := stroked || r.IntN(2) == 0
		var path ourraster.Path
		width := 0.5 + r.Float64()*8
		if stroked {
			path = strokeOutline(nil, rasterPath(nil, ourraster.Path(flat)), width)
		} else {
			path = append(ourraster.Path(nil), flat...)
			path.Add1(fixed.Point26_6{X: flat[1], Y: flat[2]}) // closed, as a fill path
		}
		want := ftraster.NewRasterizer(size.X, size.Y)
		want.UseNonZeroWinding = nonZero
		if stroked {
			// What gg's stroke adds to its rasterizer.
			want.AddStroke(ftraster.Path(rasterPath(nil, ourraster.Path(flat))), fixed.Int26_6(math.Round(width*64)), ftraster.ButtCapper, ftraster.RoundJoiner)
		} else {
			want.AddPath(ftraster.Path(path))
		}
		var ws ftBandSpans
		want.Rasterize(&ws)

		rz := m.bandRasterizer(path, size)
		if rz.Dy > 0 {
			banded++
		}
		rz.UseNonZeroWinding = nonZero
		rz.AddPath(path)
		var gs bandSpans
		rz.Rasterize(&gs)
		if !slices.Equal(gs, bandSpans(ws)) {
			t.Errorf("round %d (%d rows, rows %.1f to %.1f, %d points, stroked %v, non-zero %v, band from %d): %d spans, freetype's %d",
				round, size.Y, top, top+span, n+1, stroked, nonZero, rz.Dy, len(gs), len(ws))
		}
	}
	if banded < 15 {
		t.Errorf("%d paths rasterized in a band of rows, want at least 15", banded)
	}
}
