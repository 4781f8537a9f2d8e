package figures

import (
	"bytes"
	"fmt"
	"image"
	"runtime"
	"testing"

	"golang.org/x/image/math/fixed"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"
)

// TestGlyphFaceMatchesOpentype: the face a PNG canvas draws with
// (pngMemory.face, a glyphFace kept per font and size) gives, for
// printable ASCII, a few symbols and a rune the fonts lack, at sub-pixel
// positions near and far from the origin, the glyph opentype's own face
// (gonum's FontFace, what vgimg draws with) gives: the same rectangle,
// mask pixels, mask point, advance and ok, and the same metrics, kerning,
// bounds and advances; its masks are
// glyphFace's own (rasterized by figures/internal/vector), not the
// embedded opentype face's. On amd64 only: elsewhere opentype's vector
// fuses multiply-adds, the difference glyphFace is for.
func TestGlyphFaceMatchesOpentype(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		t.Skipf("GOARCH=%s: opentype's rasterizer fuses multiply-adds here", runtime.GOARCH)
	}
	faces := []font.Face{
		font.DefaultCache.Lookup(font.Font{Typeface: "Liberation", Variant: "Sans"}, vg.Points(10)),
		font.DefaultCache.Lookup(font.Font{Typeface: "Liberation", Variant: "Sans"}, vg.Points(11)),
		font.DefaultCache.Lookup(font.Font{Typeface: "Liberation", Variant: "Serif", Weight: 700}, vg.Points(7.5)),
		font.DefaultCache.Lookup(font.Font{Typeface: "Liberation", Variant: "Mono", Style: 1}, vg.Points(8)),
	}
	var runes []rune
	for r := rune(' '); r <= '~'; r++ {
		runes = append(runes, r)
	}
	runes = append(runes, '×', '−', '±', 'µ', 'σ', '≤', '…', '\U0001F600')
	dots := []fixed.Point26_6{{X: 0, Y: 0}, {X: 1, Y: 63}, {X: 13, Y: 32}, {X: 32, Y: 5}, {X: 63, Y: 48}, {X: 640*64 + 27, Y: -(70*64 + 11)}}
	var m pngMemory
	for _, f := range faces {
		name := fmt.Sprintf("%s %s %v", f.Font.Typeface, f.Font.Variant, f.Font.Size)
		g := m.face(f)
		if again := m.face(f); again != g {
			t.Errorf("%s: pngMemory.face made a second face", name)
		}
		ref := f.FontFace(PNGDPI)
		if got, want := g.Metrics(), ref.Metrics(); got != want {
			t.Errorf("%s: metrics %+v, want %+v", name, got, want)
		}
		prev := rune(-1)
		for _, r := range runes {
			if prev >= 0 && g.Kern(prev, r) != ref.Kern(prev, r) {
				t.Errorf("%s: kern %q %q %v, want %v", name, prev, r, g.Kern(prev, r), ref.Kern(prev, r))
			}
			prev = r
			gb, ga, gok := g.GlyphBounds(r)
			wb, wa, wok := ref.GlyphBounds(r)
			if gb != wb || ga != wa || gok != wok {
				t.Errorf("%s %q: bounds %v %v %v, want %v %v %v", name, r, gb, ga, gok, wb, wa, wok)
			}
			ga, gok = g.GlyphAdvance(r)
			wa, wok = ref.GlyphAdvance(r)
			if ga != wa || gok != wok {
				t.Errorf("%s %q: advance %v %v, want %v %v", name, r, ga, gok, wa, wok)
			}
			for _, dot := range dots {
				dr, mask, maskp, adv, ok := g.Glyph(dot, r)
				wdr, wmask, wmaskp, wadv, wok := ref.Glyph(dot, r)
				at := fmt.Sprintf("%s %q at %v", name, r, dot)
				if dr != wdr || maskp != wmaskp || adv != wadv || ok != wok {
					t.Errorf("%s: %v %v %v %v, want %v %v %v %v", at, dr, maskp, adv, ok, wdr, wmaskp, wadv, wok)
					continue
				}
				if (mask == nil) != (wmask == nil) {
					t.Errorf("%s: mask %v, want %v", at, mask, wmask)
					continue
				}
				if mask == nil {
					continue
				}
				if mask != image.Image(&g.mask) {
					t.Fatalf("%s: the mask is not glyphFace's", at)
				}
				got, want := mask.(*image.Alpha), wmask.(*image.Alpha)
				if got.Rect != want.Rect || got.Stride != want.Stride || !bytes.Equal(got.Pix, want.Pix) {
					t.Errorf("%s: mask %v differs from opentype's %v", at, got.Rect, want.Rect)
				}
			}
		}
	}
}
