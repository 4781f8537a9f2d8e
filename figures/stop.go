package figures

import (
	"context"
	"image"

	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"
)

// stopCanvas passes drawing on to its canvas until done is closed, then
// drops every stroke, fill, text and image (the costly calls): a figure
// whose job was cancelled stops drawing at its next command instead of
// rasterizing to the end (a reward figure can take seconds).
type stopCanvas struct {
	vg.CanvasSizer
	done <-chan struct{}
}

func (c stopCanvas) stopped() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

func (c stopCanvas) Stroke(p vg.Path) {
	if !c.stopped() {
		c.CanvasSizer.Stroke(p)
	}
}

func (c stopCanvas) Fill(p vg.Path) {
	if !c.stopped() {
		c.CanvasSizer.Fill(p)
	}
}

func (c stopCanvas) FillString(f font.Face, pt vg.Point, text string) {
	if !c.stopped() {
		c.CanvasSizer.FillString(f, pt, text)
	}
}

func (c stopCanvas) DrawImage(rect vg.Rectangle, img image.Image) {
	if !c.stopped() {
		c.CanvasSizer.DrawImage(rect, img)
	}
}

// stoppable wraps c for ctx; a context that is never done (Background)
// leaves c as it is.
func stoppable(ctx context.Context, c vg.CanvasSizer) vg.CanvasSizer {
	if ctx.Done() == nil {
		return c
	}
	return stopCanvas{CanvasSizer: c, done: ctx.Done()}
}
