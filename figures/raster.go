package figures

import (
	"image"
	"image/color"
	"sync"

	"git.sr.ht/~sbinet/gg"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/vgimg"

	ftraster "github.com/crlbatch/crlbatch/figures/internal/raster"
)

// pngCanvas is the raster canvas a PNG figure is drawn on: one RGBA image,
// its pixel memory taken from rgbaPool, drawn by a gg context made on it
// without a copy. vgimg.NewWith(UseWH, UseDPI, UseBackgroundColor(white))
// allocated a zeroed image, had gg copy it into a second fresh one and
// filled that with the background: two images' worth of fresh pages per
// figure, and a copy (the copy alone 7 % of the warm nightly job's
// sampled CPU; docs/performance-history.md, issue 15).
//
// It draws what that canvas drew, to the bit (TestPNGCanvasMatchesVgimg):
// the image has the size NewWith gives it, the context the line cap and
// inverted Y axis NewWith sets, and NewWith fills the image with white
// (with a context given it skips only the cap, the inversion and the
// copy). The one difference NewWith leaves — with an image given it takes
// the canvas's size from the whole pixels, not the length asked for — is
// undone here: Size and FillString (the two methods that use it) use the
// length asked for, as the canvas of UseWH does.
type pngCanvas struct {
	*vgimg.Canvas
	gc   *gg.Context
	img  *image.RGBA
	mem  *pngMemory // the pooled memory under img, and gc
	w, h vg.Length

	// matrix and clr are gc's matrix and colour, kept as gc keeps them
	// (Rotate, Translate, Scale and SetColor pass through pngCanvas, Push
	// and Pop save and restore them with gc's) for FillString to draw
	// text without gg (text.go); saved is their stack.
	matrix gg.Matrix
	clr    color.Color
	saved  []savedState

	// lineWidth (in pixels) and dashed are gc's line width and whether it
	// has dashes, kept as gc keeps them (SetLineWidth and SetLineDash,
	// saved by Push) for Stroke (stroke.go); width is vgimg's own line
	// width, which its Push does not save.
	lineWidth float64
	dashed    bool
	width     vg.Length
}

// savedState is what pngCanvas.Push saves of gc's state.
type savedState struct {
	matrix    gg.Matrix
	clr       color.Color
	lineWidth float64
	dashed    bool
}

// rgbaPool holds the pixel memory of PNG figures drawn, with the gg
// context that drew on it, for the next (figures are drawn concurrently:
// sync.Pool is safe for that). A pooled image is never read before it is
// written: the canvas fills every pixel with the background first.
var rgbaPool sync.Pool // of *pngMemory

// pngMemory is the pixel memory of a PNG canvas, the image on it and the
// gg context that draws on that image.
type pngMemory struct {
	pix []byte
	img *image.RGBA
	gc  *gg.Context
	// faces are the font faces text was drawn with (text.go), kept with
	// the memory when a larger image replaces it.
	faces map[faceKey]*glyphFace
	// rasts fill paths (fill.go) on images of each size the memory has
	// held (a rasterizer's cells grow with the paths it fills; a job's
	// figures come in few sizes), kept as faces are; path is the memory
	// of the path filled.
	rasts map[image.Point]*ftraster.Rasterizer
	path  ftraster.Path
	// stroke, flat and outline are the memory of a stroke's path, of it
	// flattened and of the outline it is filled as (stroke.go).
	stroke, flat, outline ftraster.Path
}

// rasterizer is the memory's rasterizer for images of size.
func (m *pngMemory) rasterizer(size image.Point) *ftraster.Rasterizer {
	r, ok := m.rasts[size]
	if !ok {
		if m.rasts == nil {
			m.rasts = make(map[image.Point]*ftraster.Rasterizer)
		}
		r = ftraster.NewRasterizer(size.X, size.Y)
		m.rasts[size] = r
	}
	return r
}

// pixelSize is the size in pixels of an image canvas of w×h at dpi, as
// vgimg.NewWith computes it.
func pixelSize(w, h vg.Length, dpi int) (int, int) {
	pw := w / vg.Inch * vg.Length(dpi)
	ph := h / vg.Inch * vg.Length(dpi)
	return int(float64(pw) + 0.5), int(float64(ph) + 0.5)
}

// newPNGCanvas is a white canvas of w×h at PNGDPI; release hands its
// memory back once its image is encoded.
func newPNGCanvas(w, h vg.Length) *pngCanvas {
	m, _ := rgbaPool.Get().(*pngMemory)
	return newPNGCanvasOn(w, h, m)
}

// newPNGCanvasOn is newPNGCanvas on the memory m (whatever its pixels
// hold), or on fresh memory when m is nil or too small. On memory whose
// image has the canvas's size it keeps the gg context too, set back to
// what newContext makes (resetContext): the context's rasterizer and path
// buffers, grown by the figure before, are not grown again from empty.
func newPNGCanvasOn(w, h vg.Length, m *pngMemory) *pngCanvas {
	pw, ph := pixelSize(w, h, PNGDPI)
	n := 4 * pw * ph
	switch {
	case m != nil && m.img != nil && m.img.Rect == image.Rect(0, 0, pw, ph):
		resetContext(m.gc)
	case m != nil && cap(m.pix) >= n:
		m.img = &image.RGBA{Pix: m.pix[:n:n], Stride: 4 * pw, Rect: image.Rect(0, 0, pw, ph)}
		m.gc = newContext(m.img)
	default:
		// A smaller pooled memory is dropped: the figures of a job come
		// in few sizes, and the largest stays.
		old := m
		m = &pngMemory{pix: make([]byte, n)}
		if old != nil {
			m.faces, m.rasts, m.path = old.faces, old.rasts, old.path
			m.stroke, m.flat, m.outline = old.stroke, old.flat, old.outline
		}
		m.img = &image.RGBA{Pix: m.pix[:n:n], Stride: 4 * pw, Rect: image.Rect(0, 0, pw, ph)}
		m.gc = newContext(m.img)
	}
	// NewWith fills img with its default background, white (a background
	// option cannot go with an image and context), and sets the line
	// width, dashes and colour (vg.Initialize).
	c := vgimg.NewWith(vgimg.UseImageWithContext(m.img, m.gc), vgimg.UseDPI(PNGDPI))
	// gc's matrix is newContext's (or resetContext's, the same), its
	// colour the black NewWith sets (vg.Initialize).
	matrix := gg.Identity().Translate(0, float64(ph)).Scale(1, -1)
	// Its line width and dashes are NewWith's (vg.Initialize: 1 point,
	// none).
	return &pngCanvas{Canvas: c, gc: m.gc, img: m.img, mem: m, w: w, h: h, matrix: matrix, clr: color.Black,
		lineWidth: vg.Length(1).Dots(PNGDPI), width: 1}
}

// newContext is the gg context vgimg.NewWith makes on img, without the
// copy: the line cap butt, the Y axis inverted.
func newContext(img *image.RGBA) *gg.Context {
	gc := gg.NewContextForRGBA(img)
	gc.SetLineCapButt()
	gc.InvertY()
	return gc
}

// resetContext sets back what a figure drawn with gc can have left in it,
// but for the line width, dashes and colour that vgimg.NewWith sets, to
// what newContext makes: its transformation, line cap, join and fill rule
// (vgimg sets only the cap; the others are set as they start), clip and
// path. The font face is set before each string is drawn, within a Push
// and Pop, as is the rest of what a figure changes (TestPNGCanvasReusedMemory
// draws figures of every kind on contexts that drew others).
func resetContext(gc *gg.Context) {
	gc.Identity()
	gc.InvertY()
	gc.SetLineCapButt()
	gc.SetLineJoin(gg.LineJoinRound)
	gc.SetFillRule(gg.FillRuleWinding)
	gc.ResetClip()
	gc.ClearPath()
}

// release returns the canvas's memory to rgbaPool; the canvas and its
// image are not used after.
func (c *pngCanvas) release() {
	if c.mem == nil {
		return
	}
	rgbaPool.Put(c.mem)
	c.mem, c.img, c.Canvas, c.gc = nil, nil, nil, nil
}

// Size is the size asked for (vgimg's canvas on a given image would say
// its whole pixels).
func (c *pngCanvas) Size() (vg.Length, vg.Length) { return c.w, c.h }

// FillString is vgimg.Canvas.FillString with the canvas height asked
// for, its face kept with the canvas's memory and, when the string is
// drawn level at whole pixels (gc's matrix, Y inverted again as vgimg
// inverts it for text, a translation by whole pixels), drawn without gg
// (drawText): the same pixels (text.go).
func (c *pngCanvas) FillString(f font.Face, pt vg.Point, str string) {
	if f.Font.Size == 0 {
		return
	}
	face := c.mem.face(f)

	dpi := c.DPI()
	x := float64(pt.X.Dots(dpi))
	y := float64(pt.Y.Dots(dpi))
	h := float64(c.h.Dots(dpi))

	inverted := c.matrix.Translate(0, float64(c.img.Rect.Dy())).Scale(1, -1) // gc.InvertY
	if tx, ty, ok := wholeTranslation(inverted); ok {
		drawText(c.img, face, c.clr, tx, ty, str, x, h-y)
		return
	}

	c.gc.Push()
	defer c.gc.Pop()
	c.gc.SetFontFace(face)
	c.gc.InvertY()
	c.gc.DrawString(str, x, h-y)
}

// Fill is vgimg's: a path of moves, lines, arcs and closes filled as gg fills
// it, painted by memoPainter (fill.go); any other through gg.
func (c *pngCanvas) Fill(p vg.Path) {
	path, ok := fillPath(c.mem.path, p, c.DPI(), c.matrix)
	c.mem.path = path
	if !ok {
		c.Canvas.Fill(p)
		return
	}
	b := c.img.Rect.Size()
	r := c.mem.bandRasterizer(path, b)
	r.UseNonZeroWinding = true // gg's fill rule, FillRuleWinding (resetContext)
	r.AddPath(path)
	cr, cg, cb, ca := c.clr.RGBA()
	r.Rasterize(&memoPainter{pix: c.img.Pix, stride: c.img.Stride, w: b.X, h: b.Y, cr: cr, cg: cg, cb: cb, ca: ca})
}

// SetColor is vgimg's, the colour kept (nil is black, as vgimg sets it).
func (c *pngCanvas) SetColor(clr color.Color) {
	c.Canvas.SetColor(clr)
	if clr == nil {
		clr = color.Black
	}
	c.clr = clr
}

// Rotate is vgimg's, the matrix kept as gg changes it.
func (c *pngCanvas) Rotate(t float64) {
	c.Canvas.Rotate(t)
	c.matrix = c.matrix.Rotate(t)
}

// Translate is vgimg's, the matrix kept as gg changes it.
func (c *pngCanvas) Translate(pt vg.Point) {
	c.Canvas.Translate(pt)
	c.matrix = c.matrix.Translate(pt.X.Dots(c.DPI()), pt.Y.Dots(c.DPI()))
}

// Scale is vgimg's, the matrix kept as gg changes it.
func (c *pngCanvas) Scale(x, y float64) {
	c.Canvas.Scale(x, y)
	c.matrix = c.matrix.Scale(x, y)
}

// Push is vgimg's, the kept matrix and colour saved with gc's.
func (c *pngCanvas) Push() {
	c.Canvas.Push()
	c.saved = append(c.saved, savedState{c.matrix, c.clr, c.lineWidth, c.dashed})
}

// Pop is vgimg's, the kept matrix and colour restored with gc's.
func (c *pngCanvas) Pop() {
	c.Canvas.Pop()
	s := c.saved[len(c.saved)-1]
	c.saved = c.saved[:len(c.saved)-1]
	c.matrix, c.clr, c.lineWidth, c.dashed = s.matrix, s.clr, s.lineWidth, s.dashed
}
