package figures

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/recorder"
)

// TestRenderContext: a figure rendered under a live context is the same
// bytes as Render's; under a cancelled one it returns the context's error
// and draws nothing further (the costly calls reach no canvas).
func TestRenderContext(t *testing.T) {
	f := Reward("r", "f", 5, benchLine())
	svg, png, err := f.Render()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	svg2, png2, err := f.RenderContext(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(svg, svg2) || !bytes.Equal(png, png2) {
		t.Error("RenderContext under a live context differs from Render")
	}
	cancel()
	if _, _, err := f.RenderContext(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("RenderContext after cancel: %v, want context.Canceled", err)
	}

	// What reaches the canvas after done: only the cheap state calls.
	rec := &recorder.Canvas{}
	done := make(chan struct{})
	close(done)
	c := stopCanvas{CanvasSizer: sized{rec}, done: done}
	c.Push()
	c.Stroke(vg.Path{})
	c.Fill(vg.Path{})
	c.FillString(font.Face{}, vg.Point{}, "x")
	c.DrawImage(vg.Rectangle{}, nil)
	c.Pop()
	if len(rec.Actions) != 2 {
		t.Errorf("a stopped canvas passed on %d calls, want 2 (Push, Pop): %v", len(rec.Actions), rec.Actions)
	}
}

// sized gives the recorder a size.
type sized struct{ *recorder.Canvas }

func (sized) Size() (vg.Length, vg.Length) { return 100, 100 }
