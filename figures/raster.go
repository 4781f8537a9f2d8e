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
// figure, and a copy (most of a warm job's memmove; issue 15).
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
	pix  *[]byte // the pooled memory under img
	w, h vg.Length
}

// rgbaPool holds the pixel memory of PNG figures drawn, for the next
// (figures are drawn concurrently: sync.Pool is safe for that). A pooled
// slice is never read before it is written: the canvas fills every pixel
// with the background first.
var rgbaPool sync.Pool // of *[]byte

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
	p, _ := rgbaPool.Get().(*[]byte)
	return newPNGCanvasOn(w, h, p)
}

// newPNGCanvasOn is newPNGCanvas on the memory p (whatever it holds), or
// on fresh memory when p is nil or too small.
func newPNGCanvasOn(w, h vg.Length, p *[]byte) *pngCanvas {
	pw, ph := pixelSize(w, h, PNGDPI)
	n := 4 * pw * ph
	if p == nil || cap(*p) < n {
		// A smaller pooled slice is dropped: the figures of a job come in
		// few sizes, and the largest stays.
		p = new([]byte)
		*p = make([]byte, n)
	}
	img := &image.RGBA{Pix: (*p)[:n:n], Stride: 4 * pw, Rect: image.Rect(0, 0, pw, ph)}
	gc := gg.NewContextForRGBA(img)
	gc.SetLineCapButt()
	gc.InvertY()
	// NewWith fills img with its default background, white (a background
	// option cannot go with an image and context).
	c := vgimg.NewWith(vgimg.UseImageWithContext(img, gc), vgimg.UseDPI(PNGDPI))
	return &pngCanvas{Canvas: c, gc: gc, img: img, pix: p, w: w, h: h}
}

// release returns the canvas's pixel memory to rgbaPool; the canvas and
// its image are not used after.
func (c *pngCanvas) release() {
	if c.pix == nil {
		return
	}
	rgbaPool.Put(c.pix)
	c.pix, c.img, c.Canvas, c.gc = nil, nil, nil, nil
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
