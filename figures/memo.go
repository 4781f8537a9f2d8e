package figures

import (
	"context"
	"crypto/sha256"
	"fmt"
	"sync"

	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/recorder"
)

// memo keeps rendered figures by their drawing, for a process that renders
// the same figures over and over (the command's tests run the bundled
// examples under dozens of flag sets); off unless Memoize turned it on.
var memo struct {
	sync.Mutex
	on           bool
	m            map[[sha256.Size]byte]rendered
	hits, misses int
}

type rendered struct{ svg, png []byte }

// Memoize turns the memo of Render on or off (off: the default). With it
// on, Render draws the figure on a recording canvas first and hashes every
// drawing command at full precision (each float as Go prints it, which
// reads back to the same bits); a figure whose commands were rendered
// before gets the same SVG and PNG bytes back without being rasterized
// again. The bytes are those a fresh render gives: SVG and PNG are
// functions of the commands and the canvas size alone. It returns the
// memo's hits and misses so far.
func Memoize(on bool) (hits, misses int) {
	memo.Lock()
	defer memo.Unlock()
	memo.on = on
	if !on {
		memo.m = nil
	}
	return memo.hits, memo.misses
}

// Render renders the figure as SVG and PNG.
func (f *Figure) Render() (svg, png []byte, err error) {
	return f.RenderContext(context.Background())
}

// RenderContext is Render stopped when ctx is done: the figure stops
// drawing at its next stroke, fill or text and returns ctx's error, so
// that a cancelled job does not wait for its figures to be rasterized.
func (f *Figure) RenderContext(ctx context.Context) (svg, png []byte, err error) {
	memo.Lock()
	on := memo.on
	memo.Unlock()
	if !on {
		return f.render(ctx)
	}
	key, err := f.drawingKey()
	if err != nil {
		return nil, nil, err
	}
	memo.Lock()
	r, ok := memo.m[key]
	if ok {
		memo.hits++
	}
	memo.Unlock()
	if ok {
		return r.svg, r.png, nil
	}
	if svg, png, err = f.render(ctx); err != nil {
		return nil, nil, err
	}
	memo.Lock()
	if memo.m == nil {
		memo.m = map[[sha256.Size]byte]rendered{}
	}
	memo.m[key] = rendered{svg, png}
	memo.misses++
	memo.Unlock()
	return svg, png, nil
}

func (f *Figure) render(ctx context.Context) (svg, png []byte, err error) {
	if svg, err = f.svg(ctx); err != nil {
		return nil, nil, err
	}
	if png, err = f.png(ctx); err != nil {
		return nil, nil, err
	}
	return svg, png, nil
}

// DrawingKey is the key Memoize keeps a figure's SVG and PNG under: a
// SHA-256 of its size, the PNG's resolution and every drawing command at
// full precision. Two figures with one key render to the same bytes (with
// one build of this package); the engine keeps rendered figures in --cache
// under it.
func (f *Figure) DrawingKey() ([sha256.Size]byte, error) { return f.drawingKey() }

// drawingKey hashes the figure's size and every command it draws.
func (f *Figure) drawingKey() ([sha256.Size]byte, error) {
	if len(f.Panels) == 0 {
		return [sha256.Size]byte{}, fmt.Errorf("figure %s: no panel", f.Name)
	}
	w, h := f.size()
	rec := &recorder.Canvas{}
	f.draw(draw.NewCanvas(rec, w, h))
	hs := sha256.New()
	fmt.Fprintf(hs, "%v %v %d\n", w, h, PNGDPI)
	for _, a := range rec.Actions {
		fmt.Fprintf(hs, "%T %+v\n", a, a)
	}
	var key [sha256.Size]byte
	hs.Sum(key[:0])
	return key, nil
}
