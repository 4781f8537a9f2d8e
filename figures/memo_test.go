package figures

import (
	"bytes"
	"reflect"
	"slices"
	"testing"

	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/recorder"
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

// TestDrawingKeyFields: the drawing key writes every field of a path
// component and of a stroke and fill (appendPath); a gonum/plot that
// adds one fails here rather than leave it out of the key.
func TestDrawingKeyFields(t *testing.T) {
	want := map[reflect.Type][]string{
		reflect.TypeOf(vg.PathComp{}):     {"Type", "Pos", "Control", "Radius", "Start", "Angle"},
		reflect.TypeOf(vg.Point{}):        {"X", "Y"},
		reflect.TypeOf(recorder.Stroke{}): {"Path", "l"},
		reflect.TypeOf(recorder.Fill{}):   {"Path", "l"},
	}
	for typ, fields := range want {
		var got []string
		for i := range typ.NumField() {
			got = append(got, typ.Field(i).Name)
		}
		if !slices.Equal(got, fields) {
			t.Errorf("%s has the fields %v, the key writes %v", typ, got, fields)
		}
	}
}
