package figures

import (
	"image"
	"image/draw"

	"github.com/crlbatch/crlbatch/figures/internal/vector"
	xfont "golang.org/x/image/font"
	"golang.org/x/image/font/sfnt"
	"golang.org/x/image/math/fixed"
	"gonum.org/v1/plot/font"
)

// glyphFace is the face a PNG figure's text is drawn with (pngMemory.face):
// opentype's face, as gonum's font.Face.FontFace makes it, for the
// metrics, kerning, advances and bounds, and glyph masks rasterized as
// opentype's (*Face).Glyph rasterizes them, but by figures/internal/vector,
// a copy of golang.org/x/image/vector whose multiply-adds the arm64
// compiler cannot fuse, so that a glyph is the same pixels on arm64 as on
// amd64 (docs/decisions.md). Not safe for concurrent use, as opentype's.
type glyphFace struct {
	xfont.Face // opentype's face of the same font, size and resolution

	f       *sfnt.Font
	scale   fixed.Int26_6
	hinting xfont.Hinting

	buf  sfnt.Buffer
	rast vector.Rasterizer
	mask image.Alpha
}

// newGlyphFace is f's face at dpi: gonum's f.FontFace(dpi) with its
// glyphs rasterized by our vector. The scale and hinting are those
// FontFace gives opentype.NewFace (the size in points, dpi, no hinting),
// computed as NewFace computes them.
func newGlyphFace(f font.Face, dpi float64) *glyphFace {
	return &glyphFace{
		Face:    f.FontFace(dpi),
		f:       f.Face,
		scale:   fixed.Int26_6(0.5 + (f.Font.Size.Points() * dpi * 64 / 72)),
		hinting: xfont.HintingNone,
	}
}

// Glyph is golang.org/x/image/font/opentype v0.30.0's (*Face).Glyph, line
// for line (its comments shortened, a point's conversion in pt), but for
// the rasterizer: the glyph's segments loaded unhinted at the face's
// scale, the mask the glyph's bounds shifted by dot and rounded out to
// whole pixels, each segment biased into the mask and converted to float32
// pixels, drawn with draw.Src into the face's reused mask. ok is false for
// a rune the font lacks (glyph 0, still drawn, as opentype draws it) and
// on any error of the font.
func (g *glyphFace) Glyph(dot fixed.Point26_6, r rune) (dr image.Rectangle, mask image.Image, maskp image.Point, advance fixed.Int26_6, ok bool) {
	x, err := g.f.GlyphIndex(&g.buf, r)
	if err != nil {
		return image.Rectangle{}, nil, image.Point{}, 0, false
	}
	// The advance before LoadGlyph: its segments are invalid once the
	// buffer is reused.
	advance, err = g.f.GlyphAdvance(&g.buf, x, g.scale, g.hinting)
	if err != nil {
		return image.Rectangle{}, nil, image.Point{}, 0, false
	}
	segments, err := g.f.LoadGlyph(&g.buf, x, g.scale, nil)
	if err != nil {
		return image.Rectangle{}, nil, image.Point{}, 0, false
	}

	// The sub-pixel bounds in dst space, quantized to whole pixels.
	dBounds := segments.Bounds().Add(dot)
	dr.Min.X = dBounds.Min.X.Floor()
	dr.Min.Y = dBounds.Min.Y.Floor()
	dr.Max.X = dBounds.Max.X.Ceil()
	dr.Max.Y = dBounds.Max.Y.Ceil()
	width := dr.Dx()
	height := dr.Dy()
	if width < 0 || height < 0 {
		return image.Rectangle{}, nil, image.Point{}, 0, false
	}

	// The bias from glyph space to rasterizer space (the mask's origin).
	biasX := dot.X - fixed.Int26_6(dr.Min.X<<6)
	biasY := dot.Y - fixed.Int26_6(dr.Min.Y<<6)

	nPixels := width * height
	if cap(g.mask.Pix) < nPixels {
		g.mask.Pix = make([]uint8, 2*nPixels)
	}
	g.mask.Pix = g.mask.Pix[:nPixels]
	g.mask.Stride = width
	g.mask.Rect.Min.X = 0
	g.mask.Rect.Min.Y = 0
	g.mask.Rect.Max.X = width
	g.mask.Rect.Max.Y = height

	g.rast.Reset(width, height)
	g.rast.DrawOp = draw.Src
	pt := func(p fixed.Point26_6) (float32, float32) {
		return float32(p.X+biasX) / 64, float32(p.Y+biasY) / 64
	}
	for _, seg := range segments {
		switch seg.Op {
		case sfnt.SegmentOpMoveTo:
			g.rast.MoveTo(pt(seg.Args[0]))
		case sfnt.SegmentOpLineTo:
			g.rast.LineTo(pt(seg.Args[0]))
		case sfnt.SegmentOpQuadTo:
			ax, ay := pt(seg.Args[0])
			bx, by := pt(seg.Args[1])
			g.rast.QuadTo(ax, ay, bx, by)
		case sfnt.SegmentOpCubeTo:
			ax, ay := pt(seg.Args[0])
			bx, by := pt(seg.Args[1])
			cx, cy := pt(seg.Args[2])
			g.rast.CubeTo(ax, ay, bx, by, cx, cy)
		}
	}
	g.rast.Draw(&g.mask, g.mask.Bounds(), image.Opaque, image.Point{})

	return dr, &g.mask, g.mask.Rect.Min, advance, x != 0
}
