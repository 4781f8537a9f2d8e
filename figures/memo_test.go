package figures

import (
	"bytes"
	"testing"
)

// TestMemoizedRenderIsAFreshRender: with the memo on, a figure drawn again
// gets the bytes a fresh render gives, and a figure that differs in the
// last bit of one value is rendered afresh (the SVG, which prints five
// digits, could not tell them apart).
func TestMemoizedRenderIsAFreshRender(t *testing.T) {
	mk := func(bump float64) *Figure {
		ln := benchLine()
		ln.Points[100].Mean += bump
		return Reward("r", "f", 5, ln)
	}
	fsvg, fpng, err := mk(0).Render()
	if err != nil {
		t.Fatal(err)
	}
	Memoize(true)
	defer Memoize(false)
	h0, m0 := Memoize(true)
	for range 2 {
		svg, png, err := mk(0).Render()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(svg, fsvg) || !bytes.Equal(png, fpng) {
			t.Fatal("a memoized render differs from a fresh one")
		}
	}
	if h, m := Memoize(true); h-h0 != 1 || m-m0 != 1 {
		t.Errorf("two renders of one figure: %d hits, %d misses; want 1 and 1", h-h0, m-m0)
	}
	if _, _, err := mk(1e-15).Render(); err != nil {
		t.Fatal(err)
	}
	if h, m := Memoize(true); h-h0 != 1 || m-m0 != 2 {
		t.Errorf("a figure differing in one value's last bits: %d hits, %d misses; want 1 and 2", h-h0, m-m0)
	}
}
