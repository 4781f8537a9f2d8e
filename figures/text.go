package figures

import (
	"image"
	"image/color"
	"math"

	"git.sr.ht/~sbinet/gg"
	"golang.org/x/image/draw"
	xfont "golang.org/x/image/font"
	"golang.org/x/image/font/opentype"
	"golang.org/x/image/math/f64"
	"golang.org/x/image/math/fixed"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"
)

// The text of a PNG figure, drawn to the pixels gg drew it with, cheaper.
//
// vgimg's FillString (which pngCanvas.FillString was) made a new opentype
// face for every string, and gg's DrawString composited each glyph's mask
// through the context's matrix with x/image/draw's BiLinear kernel, on
// its generic path (a color.Color per pixel, read and written through
// interfaces): for a string drawn level, that matrix is a translation by
// whole pixels and the kernel samples each mask pixel with weight 1.
// pngCanvas keeps, with its pooled memory, one face per font and size, and
// composites a mask translated by whole pixels with the kernel's
// arithmetic done on integers (compositeGlyph). A string drawn rotated
// (a Y axis label) or with any other matrix goes through gg, with the kept
// face (TestPNGCanvasMatchesVgimg, TestCompositeGlyph, TestFillStringPaths).
//
// The glyphs' masks are not kept: a mask depends on the 1/64-pixel
// fraction of the glyph's position, and the three figures of
// BenchmarkWarmFigures (the nightly warm job's kinds and sizes) rasterize
// 412 glyphs at 397 distinct (rune, fraction) pairs (docs/decisions.md).

// faceKey names a face of a PNG canvas: the font (gonum's face holds
// the parsed font) and the size, at PNGDPI.
type faceKey struct {
	font *opentype.Font
	size vg.Length
}

// face is the kept face of f at PNGDPI: opentype's, made as vgimg made one
// for every string (font.Face.FontFace), with its glyphs rasterized by our
// copy of x/image/vector (glyphFace). A face depends on nothing but the
// font, size and resolution (it keeps its metrics and reuses its
// rasterizer and mask buffer from glyph to glyph).
func (m *pngMemory) face(f font.Face) *glyphFace {
	k := faceKey{f.Face, f.Font.Size}
	if face, ok := m.faces[k]; ok {
		return face
	}
	if m.faces == nil {
		m.faces = make(map[faceKey]*glyphFace)
	}
	face := newGlyphFace(f, PNGDPI)
	m.faces[k] = face
	return face
}

// wholeTranslation says whether m is a translation by whole pixels (of
// at most 2^30), and by how much.
func wholeTranslation(m gg.Matrix) (int, int, bool) {
	if m.XX != 1 || m.YX != 0 || m.XY != 0 || m.YY != 1 {
		return 0, 0, false
	}
	if m.X0 != math.Trunc(m.X0) || m.Y0 != math.Trunc(m.Y0) || math.Abs(m.X0) > 1<<30 || math.Abs(m.Y0) > 1<<30 {
		return 0, 0, false
	}
	return int(m.X0), int(m.Y0), true
}

// drawText is gg's DrawString(s, x, y) on img, in the colour clr, with
// the matrix a translation by (tx, ty) whole pixels: the glyphs placed as
// gg's drawString places them (the dot at x, y rounded to 1/64 pixel,
// kerning and advances from the face, a glyph the face lacks skipped),
// each mask composited by compositeGlyph.
func drawText(img *image.RGBA, face xfont.Face, clr color.Color, tx, ty int, s string, x, y float64) {
	dot := fixed.Point26_6{X: fixed.Int26_6(math.Round(x * 64)), Y: fixed.Int26_6(math.Round(y * 64))}
	cr, cg, cb, ca := clr.RGBA()
	prev := rune(-1)
	for _, r := range s {
		if prev >= 0 {
			dot.X += face.Kern(prev, r)
		}
		dr, mask, maskp, advance, ok := face.Glyph(dot, r)
		if !ok {
			continue
		}
		dr = dr.Add(image.Pt(tx, ty))
		if a, isAlpha := mask.(*image.Alpha); isAlpha {
			compositeGlyph(img, a, maskp, dr, cr, cg, cb, ca)
		} else {
			// What gg does (not with glyphFace, whose masks are
			// *image.Alpha).
			s2d := f64.Aff3{1, 0, float64(dr.Min.X), 0, 1, float64(dr.Min.Y)}
			draw.BiLinear.Transform(img, s2d, image.NewUniform(clr), dr.Sub(dr.Min), draw.Over, &draw.Options{SrcMask: mask, SrcMaskP: maskp})
		}
		dot.X += advance
		prev = r
	}
}

// compositeGlyph draws the colour (cr, cg, cb, ca: 16-bit, premultiplied)
// through mask (from maskp) over img at dr, to the bit what
// x/image/draw's BiLinear.Transform does with a uniform source, that
// mask, the Over operator and a translation by whole pixels (its generic
// path, transform_Image_Image_Over): each pixel's source sample has
// weight 1; the colour times the mask's alpha (widened to 16 bits), each
// channel at most the alpha; the destination's 16-bit channels times one
// less that alpha, plus the source, stored in 8 bits. A mask pixel of
// zero leaves its pixel as it is.
func compositeGlyph(img *image.RGBA, mask *image.Alpha, maskp image.Point, dr image.Rectangle, cr, cg, cb, ca uint32) {
	cl := dr.Intersect(img.Rect)
	for y := cl.Min.Y; y < cl.Max.Y; y++ {
		o := img.PixOffset(cl.Min.X, y)
		pix := img.Pix[o : o+4*cl.Dx()]
		for x := cl.Min.X; x < cl.Max.X; x++ {
			// The mask's pixel for (x, y) (transparent outside it).
			mp := image.Pt(maskp.X+x-dr.Min.X, maskp.Y+y-dr.Min.Y)
			if !mp.In(mask.Rect) {
				continue
			}
			m := mask.Pix[mask.PixOffset(mp.X, mp.Y)]
			if m == 0 {
				continue
			}
			ma := uint32(m) * 0x101
			pa := ca * ma / 0xffff
			pr := min(cr*ma/0xffff, pa)
			pg := min(cg*ma/0xffff, pa)
			pb := min(cb*ma/0xffff, pa)
			pa1 := 0xffff - pa
			p := pix[4*(x-cl.Min.X) : 4*(x-cl.Min.X)+4 : 4*(x-cl.Min.X)+4]
			p[0] = uint8(uint16(uint32(p[0])*0x101*pa1/0xffff+pr) >> 8)
			p[1] = uint8(uint16(uint32(p[1])*0x101*pa1/0xffff+pg) >> 8)
			p[2] = uint8(uint16(uint32(p[2])*0x101*pa1/0xffff+pb) >> 8)
			p[3] = uint8(uint16(uint32(p[3])*0x101*pa1/0xffff+pa) >> 8)
		}
	}
}
