package figures

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math"
	"sync"

	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/recorder"
)

// memo keeps rendered figures by their Key, for a process that renders
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
// on, Render looks the figure up by its Key (for a figure made by a
// constructor, a hash of every input it is drawn from, computed without
// drawing; otherwise its DrawingKey); a figure whose key was rendered
// before gets the same SVG and PNG bytes back without being drawn or
// rasterized again. The bytes are those a fresh render gives
// (TestInputKeyDrawsEqualBytes, TestMemoizedRenderIsAFreshRender). It
// returns the memo's hits and misses so far.
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
	key, err := f.Key()
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

// DrawingKey is a SHA-256 of the figure's size, the PNG's resolution and
// every drawing command at full precision, strokes' and fills' paths by
// the bits of their floats (stroke and fill commands, drawn to a recorder).
// Two figures with one drawing key render to the same bytes (with one
// build of this package). It is the Key of a figure that no constructor
// keyed, and what the tests compare input keys with.
func (f *Figure) DrawingKey() ([sha256.Size]byte, error) { return f.drawingKey() }

// drawingKey hashes the figure's size and every command it draws.
func (f *Figure) drawingKey() ([sha256.Size]byte, error) {
	if len(f.Panels) == 0 {
		return [sha256.Size]byte{}, errNoPanel(f)
	}
	w, h := f.size()
	rec := &recorder.Canvas{}
	f.draw(draw.NewCanvas(rec, w, h))
	hs := sha256.New()
	fmt.Fprintf(hs, "%v %v %d\n", w, h, PNGDPI)
	var buf []byte
	for _, a := range rec.Actions {
		// Strokes and fills, most of the commands, by the exact bits of
		// their paths (fmt's reflection was most of the key's cost); the
		// others as Go prints them.
		switch a := a.(type) {
		case *recorder.Stroke:
			buf = appendPath(append(buf[:0], 'S'), a.Path)
		case *recorder.Fill:
			buf = appendPath(append(buf[:0], 'F'), a.Path)
		default:
			buf = fmt.Appendf(buf[:0], "%T %+v\n", a, a)
		}
		hs.Write(buf)
	}
	var key [sha256.Size]byte
	hs.Sum(key[:0])
	return key, nil
}

// appendPath appends every field of every component of p (vg.PathComp:
// TestDrawingKeyFields fails when it gains one), each float by its bits.
func appendPath(buf []byte, p vg.Path) []byte {
	f := func(x float64) { buf = binary.LittleEndian.AppendUint64(buf, math.Float64bits(x)) }
	buf = binary.AppendUvarint(buf, uint64(len(p)))
	for _, c := range p {
		buf = binary.AppendVarint(buf, int64(c.Type))
		f(float64(c.Pos.X))
		f(float64(c.Pos.Y))
		buf = binary.AppendUvarint(buf, uint64(len(c.Control)))
		for _, q := range c.Control {
			f(float64(q.X))
			f(float64(q.Y))
		}
		f(float64(c.Radius))
		f(c.Start)
		f(c.Angle)
	}
	return buf
}
