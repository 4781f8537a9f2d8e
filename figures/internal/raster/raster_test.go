package raster

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	ftraster "github.com/golang/freetype/raster"
	"golang.org/x/image/math/fixed"
)

// spans records the spans a rasterizer paints, in order, and whether the
// last call said done.
type spans struct {
	got  []Span
	done bool
}

func (s *spans) Paint(ss []Span, done bool) {
	s.got = append(s.got, ss...)
	s.done = done
}

// ftSpans is spans for freetype's rasterizer.
type ftSpans struct {
	got  []Span
	done bool
}

func (s *ftSpans) Paint(ss []ftraster.Span, done bool) {
	for _, x := range ss {
		s.got = append(s.got, Span(x))
	}
	s.done = done
}

// zigzag is a random path on a w × h image: subpaths of up to n points
// (a noisy reward line: each point a little to the right of the one
// before, at a random height), some of the points and whole subpaths
// beyond the image on every side, some segments quadratic or cubic
// curves (cubic only if cubic: freetype strokes none), some subpaths
// closed.
func zigzag(r *rand.Rand, w, h, n int, cubic bool) Path {
	var p Path
	margin := 1 + r.IntN(40)
	pt := func(x float64) fixed.Point26_6 {
		y := r.Float64()*float64(h+2*margin) - float64(margin)
		return fixed.Point26_6{X: fixed.Int26_6(x * 64), Y: fixed.Int26_6(y * 64)}
	}
	for range 1 + r.IntN(3) {
		x := r.Float64()*float64(w+2*margin) - float64(2*margin)
		step := float64(w+2*margin) / float64(1+r.IntN(n))
		start := pt(x)
		p.Start(start)
		for range r.IntN(n) {
			x += r.Float64() * step
			switch r.IntN(20) {
			case 0:
				p.Add2(pt(x-step/2), pt(x))
			case 1:
				if !cubic {
					p.Add2(pt(x-step/3), pt(x))
					continue
				}
				p.Add3(pt(x-step/2), pt(x-step/3), pt(x))
			default:
				p.Add1(pt(x))
			}
		}
		if r.IntN(2) == 0 {
			p.Add1(start)
		}
	}
	return p
}

// TestRasterizerMatchesFreetype: the copy's rasterizer paints the spans
// freetype's paints (the same spans in the same order), for random
// zigzag paths of up to 2,000 points (rows crossed hundreds of times, so
// that rows get their x-indexed tables), filled and stroked, under both
// winding rules, with offsets (Dx, Dy), on images of every size class of
// the curve subdivision (24 and 120 pixels), with points and whole
// subpaths beyond the image's bounds; one rasterizer of each side is
// reused, cleared and resized from round to round.
func TestRasterizerMatchesFreetype(t *testing.T) {
	r := rand.New(rand.NewPCG(61, 62))
	mine, theirs := NewRasterizer(1, 1), ftraster.NewRasterizer(1, 1)
	tabled := 0
	for round := range 160 {
		var w, h int
		switch round % 4 {
		case 0:
			w, h = 1+r.IntN(24), 1+r.IntN(24)
		case 1:
			w, h = 1+r.IntN(120), 1+r.IntN(120)
		default:
			w, h = 1+r.IntN(700), 1+r.IntN(500)
		}
		n := []int{3, 30, 300}[r.IntN(3)]
		if round%8 == 7 {
			// A noisy reward line's points, on a smaller image (freetype
			// takes seconds over the full size).
			n, w, h = 2000, min(w, 300), min(h, 120)
		}
		stroked := round%3 == 0
		path := zigzag(r, w, h, n, !stroked)
		if r.IntN(4) > 0 {
			mine.SetBounds(w, h)
			theirs.SetBounds(w, h)
		} else {
			// Cleared, not resized (a pooled rasterizer).
			w, h = mine.width, len(mine.cellIndex)
			mine.Clear()
			theirs.Clear()
		}
		mine.UseNonZeroWinding = round%2 == 0
		theirs.UseNonZeroWinding = mine.UseNonZeroWinding
		mine.Dx, mine.Dy = r.IntN(200)-100, r.IntN(200)-100
		theirs.Dx, theirs.Dy = mine.Dx, mine.Dy
		if stroked {
			width := fixed.Int26_6(r.IntN(6*64) + 1)
			mine.AddStroke(path, width, ButtCapper, RoundJoiner)
			theirs.AddStroke(ftraster.Path(path), width, ftraster.ButtCapper, ftraster.RoundJoiner)
		} else {
			mine.AddPath(path)
			theirs.AddPath(ftraster.Path(path))
		}
		if len(mine.tabled) > 0 {
			tabled++
		}
		var got spans
		var want ftSpans
		mine.Rasterize(&got)
		theirs.Rasterize(&want)
		name := fmt.Sprintf("round %d (%d × %d, %d path values, stroked %v, non-zero %v, Dx %d, Dy %d)",
			round, w, h, len(path), stroked, mine.UseNonZeroWinding, mine.Dx, mine.Dy)
		if !got.done {
			t.Errorf("%s: the last Paint not done", name)
		}
		if !slices.Equal(got.got, want.got) {
			t.Errorf("%s: %d spans, freetype's %d", name, len(got.got), len(want.got))
			for i := range min(len(got.got), len(want.got)) {
				if got.got[i] != want.got[i] {
					t.Errorf("%s: span %d is %+v, freetype's %+v", name, i, got.got[i], want.got[i])
					break
				}
			}
		}
	}
	if tabled < 20 {
		t.Errorf("%d rounds with rows found through a table, want at least 20", tabled)
	}
}
