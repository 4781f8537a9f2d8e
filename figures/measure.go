package figures

import (
	"strings"
	"sync"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"

	"github.com/crlbatch/crlbatch/internal/bidi"
	"github.com/crlbatch/crlbatch/internal/fpmath"
)

// measuredText is gonum/plot's text/plain handler (text.Plain, which
// plot.DefaultTextHandler was) with what it measures kept: the face of
// each font (Fonts.Lookup), its extents, and the width of each string in
// each font. gonum/plot lays a figure out by measuring its text again and
// again — every tick label for the axis's size, again for its glyph
// boxes, again where it is drawn — and does all of it twice, once for the
// SVG and once for the PNG; text.Plain found the face, read the font's
// metrics and summed the string's advances each time (with an sfnt
// buffer allocated per call). The values are those text.Plain computes,
// from the same calls (TestMeasuredTextIsPlain), so the figures' bytes do
// not change; Draw is text.Plain's, with the kept values, and each line's
// open bidi controls closed (bidi.Close).
//
// The handler is the package's (plot.DefaultTextHandler, set in init) and
// shared by the figures the engine draws at once, under a mutex; what it
// keeps is dropped past maxMeasured strings.
type measuredText struct {
	text.Plain

	mu      sync.Mutex
	faces   map[font.Font]font.Face
	extents map[font.Font]font.Extents
	widths  map[measuredKey]vg.Length
}

// measuredKey is a string in a font.
type measuredKey struct {
	txt string
	fnt font.Font
}

// maxMeasured bounds the widths kept (a figure measures a few hundred
// strings).
const maxMeasured = 1 << 15

func newMeasuredText(fonts *font.Cache) *measuredText {
	return &measuredText{
		Plain:   text.Plain{Fonts: fonts},
		faces:   make(map[font.Font]font.Face),
		extents: make(map[font.Font]font.Extents),
		widths:  make(map[measuredKey]vg.Length),
	}
}

func init() {
	plot.DefaultTextHandler = newMeasuredText(font.DefaultCache)
}

// face is Fonts.Lookup(fnt, fnt.Size) and its extents; h.mu is held.
func (h *measuredText) face(fnt font.Font) (font.Face, font.Extents) {
	f, ok := h.faces[fnt]
	if !ok {
		f = h.Fonts.Lookup(fnt, fnt.Size)
		h.faces[fnt] = f
		h.extents[fnt] = f.Extents()
	}
	return f, h.extents[fnt]
}

// width is face f's Width(txt), f the face of fnt; h.mu is held.
func (h *measuredText) width(f font.Face, fnt font.Font, txt string) vg.Length {
	k := measuredKey{txt, fnt}
	w, ok := h.widths[k]
	if !ok {
		w = f.Width(txt)
		if len(h.widths) >= maxMeasured {
			clear(h.widths)
		}
		h.widths[k] = w
	}
	return w
}

// Extents is text.Plain's.
func (h *measuredText) Extents(fnt font.Font) font.Extents {
	h.mu.Lock()
	defer h.mu.Unlock()
	_, ext := h.face(fnt)
	return ext
}

// Box is text.Plain's.
func (h *measuredText) Box(txt string, fnt font.Font) (width, height, depth vg.Length) {
	h.mu.Lock()
	defer h.mu.Unlock()
	f, ext := h.face(fnt)
	return h.width(f, fnt, txt), ext.Ascent, ext.Descent
}

// Draw is text.Plain's (gonum/plot v0.17.0), with the face, extents and
// widths kept.
func (h *measuredText) Draw(c vg.Canvas, txt string, sty text.Style, pt vg.Point) {
	txt = strings.TrimRight(txt, "\n")
	if len(txt) == 0 {
		return
	}

	h.mu.Lock()
	fnt, ext := h.face(sty.Font)
	h.mu.Unlock()
	c.SetColor(sty.Color)

	if sty.Rotation != 0 {
		c.Push()
		c.Rotate(sty.Rotation)
	}

	sin64, cos64 := fpmath.Sincos(sty.Rotation)
	cos := vg.Length(cos64)
	sin := vg.Length(sin64)
	pt.X, pt.Y = vg.Length(pt.Y*sin)+vg.Length(pt.X*cos), vg.Length(pt.Y*cos)-vg.Length(pt.X*sin)

	lines := h.Lines(txt)
	ht := sty.Height(txt)
	pt.Y += vg.Length(ht*vg.Length(sty.YAlign)) - ext.Ascent
	for i, line := range lines {
		h.mu.Lock()
		w := h.width(fnt, sty.Font, line)
		h.mu.Unlock()
		xoffs := vg.Length(vg.Length(sty.XAlign) * w)
		n := vg.Length(len(lines) - i)
		// A name's open bidi controls closed at the end of its line (in
		// a title, legend or axis label: a right-to-left override must not
		// reverse the rest of an SVG's text; the PNG skips them as glyphs
		// its face lacks). The width stays the line's: they are zero-width.
		c.FillString(fnt, pt.Add(vg.Point{X: xoffs, Y: vg.Length(n * sty.Font.Size)}), bidi.Close(line))
	}

	if sty.Rotation != 0 {
		c.Pop()
	}
}
