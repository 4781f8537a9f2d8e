package figures

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"math"
	"math/rand/v2"
	"testing"

	"git.sr.ht/~sbinet/gg"
	"golang.org/x/image/draw"
	"golang.org/x/image/math/f64"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/recorder"
	"gonum.org/v1/plot/vg/vgimg"
)

// TestCompositeGlyph: a mask composited by compositeGlyph gives exactly
// the pixels of what gg does with it (x/image/draw's BiLinear.Transform,
// a uniform source, the mask, Over, a translation by whole pixels), for
// random masks (at an origin other than zero, and read from a point
// other than its origin), colours opaque, translucent, transparent and
// not premultiplied,
// destinations opaque and not, and positions inside the image, across
// each of its edges and outside it.
func TestCompositeGlyph(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	const W, H = 23, 17
	for round := range 3000 {
		mw, mh := 1+r.IntN(12), 1+r.IntN(12)
		mo := image.Pt(r.IntN(5)-2, r.IntN(5)-2)
		mask := image.NewAlpha(image.Rectangle{Min: mo, Max: mo.Add(image.Pt(mw+2, mh+2))})
		for i := range mask.Pix {
			switch r.IntN(4) {
			case 0:
				mask.Pix[i] = 0
			case 1:
				mask.Pix[i] = 0xff
			default:
				mask.Pix[i] = uint8(r.Uint32())
			}
		}
		maskp := mo.Add(image.Pt(r.IntN(3), r.IntN(3)))
		var clr color.Color
		switch round % 5 {
		case 0:
			clr = color.Black
		case 1:
			clr = color.NRGBA{uint8(r.Uint32()), uint8(r.Uint32()), uint8(r.Uint32()), 0xff}
		case 2:
			clr = color.NRGBA{uint8(r.Uint32()), uint8(r.Uint32()), uint8(r.Uint32()), uint8(r.Uint32())}
		case 3:
			clr = color.Transparent
		default:
			// Not premultiplied (colours above the alpha): the kernel
			// clamps each to the alpha.
			clr = color.RGBA{uint8(r.Uint32()), uint8(r.Uint32()), uint8(r.Uint32()), uint8(r.UintN(128))}
		}
		dst := image.NewRGBA(image.Rect(0, 0, W, H))
		opaque := round%2 == 0
		for i := 0; i < len(dst.Pix); i += 4 {
			a := uint8(0xff)
			if !opaque {
				a = uint8(r.Uint32())
			}
			// Premultiplied: each colour at most the alpha.
			dst.Pix[i], dst.Pix[i+1], dst.Pix[i+2], dst.Pix[i+3] = uint8(r.UintN(uint(a)+1)), uint8(r.UintN(uint(a)+1)), uint8(r.UintN(uint(a)+1)), a
		}
		at := image.Pt(r.IntN(W+20)-10-mw/2, r.IntN(H+20)-10-mh/2)
		dr := image.Rectangle{Min: at, Max: at.Add(image.Pt(mw, mh))}

		want := image.NewRGBA(dst.Rect)
		copy(want.Pix, dst.Pix)
		s2d := f64.Aff3{1, 0, float64(dr.Min.X), 0, 1, float64(dr.Min.Y)}
		draw.BiLinear.Transform(want, s2d, image.NewUniform(clr), dr.Sub(dr.Min), draw.Over, &draw.Options{SrcMask: mask, SrcMaskP: maskp})

		cr, cg, cb, ca := clr.RGBA()
		compositeGlyph(dst, mask, maskp, dr, cr, cg, cb, ca)
		if !bytes.Equal(dst.Pix, want.Pix) {
			t.Fatalf("round %d: mask %v from %v at %v, colour %v, opaque %v: pixels differ from BiLinear.Transform's", round, mask.Rect, maskp, dr, clr, opaque)
		}
	}
}

// TestFillStringPaths: strings drawn on a pngCanvas (its kept faces, and
// drawText when the matrix is a translation by whole pixels, gg
// otherwise) give the pixels of the same strings drawn on a vgimg
// canvas: in several faces, sizes and colours (translucent, and nil:
// black), at fractional positions, across the image's edges, with the
// canvas level, translated by whole and by fractional pixels, scaled,
// rotated, and after Push and Pop restored each. Each case checks that
// the canvas's kept matrix is gc's and which path it takes.
func TestFillStringPaths(t *testing.T) {
	regular := font.Font{Typeface: "Liberation", Variant: "Sans"}
	bold := font.Font{Typeface: "Liberation", Variant: "Serif", Weight: 700}
	faces := []font.Face{
		font.DefaultCache.Lookup(regular, vg.Points(10)),
		font.DefaultCache.Lookup(regular, vg.Points(11)),
		font.DefaultCache.Lookup(bold, vg.Points(7.5)),
	}
	type step func(c vg.Canvas)
	translate := func(x, y vg.Length) step { return func(c vg.Canvas) { c.Translate(vg.Point{X: x, Y: y}) } }
	px := vg.Inch / PNGDPI // one pixel
	cases := []struct {
		name  string
		steps []step
		level bool // drawn by drawText
	}{
		{"level", nil, true},
		{"translated by whole pixels", []step{translate(3*px, -7*px)}, true},
		{"translated by a fraction of a pixel", []step{translate(0.3*px, 0)}, false},
		{"scaled", []step{func(c vg.Canvas) { c.Scale(1.5, 1.5) }}, false},
		{"flipped", []step{func(c vg.Canvas) { c.Scale(1, -1) }}, false},
		{"rotated", []step{func(c vg.Canvas) { c.Rotate(math.Pi / 2) }}, false},
		{"rotated a half turn", []step{func(c vg.Canvas) { c.Rotate(math.Pi / 2) }, func(c vg.Canvas) { c.Rotate(math.Pi / 2) }}, false},
		{"rotated in a Push, then Pop", []step{func(c vg.Canvas) { c.Push(); c.Rotate(math.Pi / 2); c.SetColor(color.NRGBA{200, 10, 10, 255}) }, func(c vg.Canvas) { c.Pop() }}, true},
	}
	colours := []color.Color{nil, color.NRGBA{0x4e, 0x79, 0xa7, 0xff}, color.NRGBA{0xe1, 0x57, 0x59, 0x80}}
	points := []vg.Point{{X: 10.3, Y: 20.7}, {X: -5, Y: 30.01}, {X: 200, Y: 2}, {X: 100.49, Y: 140}, {X: 33.333, Y: 70.5}}
	w, h := 3*vg.Inch, 2*vg.Inch
	for _, tc := range cases {
		for ci, clr := range colours {
			name := fmt.Sprintf("%s, colour %d", tc.name, ci)
			c := newPNGCanvas(w, h)
			ref := vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(PNGDPI), vgimg.UseBackgroundColor(color.White))
			for _, cv := range []vg.Canvas{c, ref} {
				for _, s := range tc.steps {
					s(cv)
				}
				cv.SetColor(clr)
				for i, f := range faces {
					for j, pt := range points {
						cv.FillString(f, pt, fmt.Sprintf("Tick %d.%d AVWa -0.25e+3 ×", i, j))
					}
				}
			}
			for _, p := range [][2]float64{{0, 0}, {1, 0}, {0, 1}, {123.4, -5.6}} {
				gx, gy := c.gc.TransformPoint(p[0], p[1])
				kx, ky := c.matrix.TransformPoint(p[0], p[1])
				if gx != kx || gy != ky {
					t.Fatalf("%s: kept matrix maps %v to (%v, %v), gc to (%v, %v)", name, p, kx, ky, gx, gy)
				}
			}
			_, _, level := wholeTranslation(c.matrix.Translate(0, float64(c.img.Rect.Dy())).Scale(1, -1))
			if level != tc.level {
				t.Errorf("%s: drawn by drawText %v, want %v", name, level, tc.level)
			}
			if !bytes.Equal(c.img.Pix, ref.Image().(*image.RGBA).Pix) {
				t.Errorf("%s: pixels differ from vgimg's", name)
			}
			c.release()
		}
	}
}

// TestWholeTranslation: only a matrix that is the identity but for a
// translation by whole pixels is one.
func TestWholeTranslation(t *testing.T) {
	for _, tc := range []struct {
		m      gg.Matrix
		tx, ty int
		ok     bool
	}{
		{gg.Identity(), 0, 0, true},
		{gg.Translate(3, -4), 3, -4, true},
		{gg.Translate(3.5, 0), 0, 0, false},
		{gg.Translate(0, 1e-9), 0, 0, false},
		{gg.Translate(1<<31, 0), 0, 0, false},
		{gg.Scale(1, -1), 0, 0, false},
		{gg.Scale(1+1e-15, 1), 0, 0, false},
		{gg.Rotate(2 * math.Pi), 0, 0, false},
		{gg.Translate(math.NaN(), 0), 0, 0, false},
		{gg.Translate(math.Inf(1), 0), 0, 0, false},
	} {
		tx, ty, ok := wholeTranslation(tc.m)
		if ok != tc.ok || ok && (tx != tc.tx || ty != tc.ty) {
			t.Errorf("%+v: (%d, %d, %v), want (%d, %d, %v)", tc.m, tx, ty, ok, tc.tx, tc.ty, tc.ok)
		}
	}
}

// TestMeasuredTextIsPlain: the package's text handler measures what
// text.Plain measures (extents, boxes) and draws what it draws (the same
// canvas commands, to a recorder), for strings single and multi-line,
// empty, and with trailing newlines, in several fonts, aligned and
// rotated; measured a second time (from what it keeps) the same again.
// And it is the handler gonum/plot's new plots, axes and legends use.
func TestMeasuredTextIsPlain(t *testing.T) {
	h, ok := plot.DefaultTextHandler.(*measuredText)
	if !ok {
		t.Fatalf("plot.DefaultTextHandler is %T", plot.DefaultTextHandler)
	}
	p := plot.New()
	for name, got := range map[string]text.Handler{"plot": p.TextHandler, "title": p.Title.TextStyle.Handler, "x label": p.X.Label.TextStyle.Handler, "y tick": p.Y.Tick.Label.Handler, "legend": p.Legend.TextStyle.Handler} {
		if got != text.Handler(h) {
			t.Errorf("%s's handler is %T", name, got)
		}
	}
	plain := text.Plain{Fonts: font.DefaultCache}
	fonts := []font.Font{
		{Typeface: "Liberation", Variant: "Sans", Size: vg.Points(10)},
		{Typeface: "Liberation", Variant: "Sans", Size: vg.Points(11)},
		{Typeface: "Liberation", Variant: "Serif", Weight: 700, Size: vg.Points(7.5)},
		{Typeface: "Liberation", Variant: "Mono", Style: 1, Size: vg.Points(8)},
	}
	texts := []string{"", "0", "-0.25", "1e+06", "AVWa ×", "two\nlines", "trailing\n\n", "\n"}
	for round := range 2 {
		for _, fnt := range fonts {
			if got, want := h.Extents(fnt), plain.Extents(fnt); got != want {
				t.Errorf("round %d, %v: extents %v, want %v", round, fnt, got, want)
			}
			for _, s := range texts {
				gw, gh, gd := h.Box(s, fnt)
				ww, wh, wd := plain.Box(s, fnt)
				if gw != ww || gh != wh || gd != wd {
					t.Errorf("round %d, %v, %q: box (%v %v %v), want (%v %v %v)", round, fnt, s, gw, gh, gd, ww, wh, wd)
				}
				for _, rot := range []float64{0, math.Pi / 2, -0.3} {
					for _, align := range [][2]text.XAlignment{{text.XLeft, text.XAlignment(text.YBottom)}, {text.XCenter, text.XAlignment(text.YCenter)}, {text.XRight, text.XAlignment(text.YTop)}} {
						sty := text.Style{Color: color.NRGBA{1, 2, 3, 255}, Font: fnt, Rotation: rot, XAlign: align[0], YAlign: text.YAlignment(align[1]), Handler: h}
						var got, want recorder.Canvas
						h.Draw(&got, s, sty, vg.Point{X: 12.5, Y: -3})
						sty.Handler = plain
						plain.Draw(&want, s, sty, vg.Point{X: 12.5, Y: -3})
						if len(got.Actions) != len(want.Actions) {
							t.Fatalf("round %d, %v, %q, rotation %v: %d commands, want %d", round, fnt, s, rot, len(got.Actions), len(want.Actions))
						}
						for i := range got.Actions {
							if g, w := fmt.Sprintf("%#v", got.Actions[i]), fmt.Sprintf("%#v", want.Actions[i]); g != w {
								t.Errorf("round %d, %v, %q, rotation %v: command %d %s, want %s", round, fnt, s, rot, i, g, w)
							}
						}
					}
				}
			}
		}
	}
}
