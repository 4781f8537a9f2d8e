package figures

import (
	"image"
	"sync"

	"git.sr.ht/~sbinet/gg"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/vgimg"
)

// pngCanvas is the raster canvas a PNG figure is drawn on: one RGBA image,
// its pixel memory taken from rgbaPool, drawn by a gg context made on it
// without a copy. vgimg.NewWith(UseWH, UseDPI, UseBackgroundColor(white))
// allocated a zeroed image, had gg copy it into a second fresh one and
// filled that with the background: two images' worth of fresh pages per
// figure, and a copy (the copy alone 7 % of the warm nightly job's
// sampled CPU; docs/performance.md, issue 15).
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
}

// pixelSize is the size in pixels of an image canvas of w×h at dpi, as
// vgimg.NewWith computes it.
func pixelSize(w, h vg.Length, dpi int) (int, int) {
	pw := w / vg.Inch * vg.Length(dpi)
	ph := h / vg.Inch * vg.Length(dpi)
	return int(pw + 0.5), int(ph + 0.5)
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
		m = &pngMemory{pix: make([]byte, n)}
		m.img = &image.RGBA{Pix: m.pix[:n:n], Stride: 4 * pw, Rect: image.Rect(0, 0, pw, ph)}
		m.gc = newContext(m.img)
	}
	// NewWith fills img with its default background, white (a background
	// option cannot go with an image and context), and sets the line
	// width, dashes and colour (vg.Initialize).
	c := vgimg.NewWith(vgimg.UseImageWithContext(m.img, m.gc), vgimg.UseDPI(PNGDPI))
	return &pngCanvas{Canvas: c, gc: m.gc, img: m.img, mem: m, w: w, h: h}
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

// FillString is vgimg.Canvas.FillString with the canvas height asked for.
func (c *pngCanvas) FillString(f font.Face, pt vg.Point, str string) {
	if f.Font.Size == 0 {
		return
	}
	c.gc.Push()
	defer c.gc.Pop()

	face := f.FontFace(c.DPI())
	defer face.Close()
	c.gc.SetFontFace(face)

	dpi := c.DPI()
	x := pt.X.Dots(dpi)
	y := pt.Y.Dots(dpi)
	h := c.h.Dots(dpi)

	c.gc.InvertY()
	c.gc.DrawString(str, x, h-y)
}
