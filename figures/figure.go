package figures

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"image/color"
	"math"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Figure is one figure of a result: panels stacked in a column.
type Figure struct {
	// Name is the file stem (figures/<Name>.svg and .png): lower-case
	// letters, digits and dashes.
	Name string
	// Title heads the figure in the reports; Caption says what is drawn
	// and names every value left out, with its reason.
	Title   string
	Caption string
	Panels  []*plot.Plot
	// Width and PanelHeight size the figure (0: 16 cm and 8 cm).
	Width, PanelHeight vg.Length

	// inputKey is the hash of the kind and inputs a constructor drew the
	// figure from, keyedPanels the panels it drew them into (Key).
	inputKey    [32]byte
	keyedPanels []*plot.Plot
}

func errNoPanel(f *Figure) error { return fmt.Errorf("figure %s: no panel", f.Name) }

// PNGDPI is the resolution of the PNG figures.
const PNGDPI = 96

func init() {
	// The sans-serif face reads better on a screen; SVG text then names
	// "Liberation Sans", and a browser without it uses its own sans-serif.
	plot.DefaultFont = font.Font{Typeface: "Liberation", Variant: "Sans"}
	plotter.DefaultFont = plot.DefaultFont
}

func (f *Figure) size() (vg.Length, vg.Length) {
	w, h := f.Width, f.PanelHeight
	if w == 0 {
		w = 16 * vg.Centimeter
	}
	if h == 0 {
		h = 8 * vg.Centimeter
	}
	return w, h * vg.Length(len(f.Panels))
}

// fixRange gives an axis with no data, or one value, a range to draw.
func fixRange(a *plot.Axis) {
	switch {
	case math.IsInf(a.Min, 0) || math.IsInf(a.Max, 0) || math.IsNaN(a.Min) || math.IsNaN(a.Max):
		a.Min, a.Max = 0, 1
	case a.Min >= a.Max:
		d := math.Max(math.Abs(a.Min)*0.1, 0.5)
		a.Min, a.Max = a.Min-d, a.Max+d
	}
	a.Min, a.Max, _ = finiteSpan(a.Min, a.Max)
}

// finiteSpan returns a range gonum/plot can draw for lo < hi, either of
// which widening may have pushed past float64: an end beyond ±MaxFloat64
// comes back to it, and a span that leaves float64 (data near ±MaxFloat64
// of both signs) is cut to ±MaxFloat64/2, as gonum/plot's tick search
// never ends over an infinite span. clipped reports a cut.
func finiteSpan(lo, hi float64) (float64, float64, bool) {
	lo, hi = max(lo, -math.MaxFloat64), min(hi, math.MaxFloat64)
	if !math.IsInf(hi-lo, 0) {
		return lo, hi, false
	}
	const half = math.MaxFloat64 / 2
	return max(lo, -half), min(hi, half), true
}

func (f *Figure) draw(c draw.Canvas) {
	for _, p := range f.Panels {
		fixRange(&p.X)
		fixRange(&p.Y)
	}
	if len(f.Panels) == 1 {
		f.Panels[0].Draw(c)
		return
	}
	rows := make([][]*plot.Plot, len(f.Panels))
	for i, p := range f.Panels {
		rows[i] = []*plot.Plot{p}
	}
	tiles := draw.Tiles{Rows: len(f.Panels), Cols: 1, PadY: vg.Millimeter * 4, PadTop: vg.Millimeter, PadBottom: vg.Millimeter}
	cs := plot.Align(rows, tiles, c)
	for i, p := range f.Panels {
		p.Draw(cs[i][0])
	}
}

// SVG renders the figure as SVG, fonts named but not embedded (the page
// that shows it supplies a sans-serif face).
func (f *Figure) SVG() ([]byte, error) { return f.svg(context.Background()) }

// svg is SVG, stopped (with ctx's error) when ctx is done.
func (f *Figure) svg(ctx context.Context) ([]byte, error) {
	if len(f.Panels) == 0 {
		return nil, errNoPanel(f)
	}
	w, h := f.size()
	c := vgsvg.NewWith(vgsvg.UseWH(w, h), vgsvg.EmbedFonts(false))
	f.draw(draw.New(stoppable(ctx, c)))
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if _, err := c.WriteTo(&buf); err != nil {
		return nil, fmt.Errorf("figure %s: %w", f.Name, err)
	}
	// A browser without Liberation Sans falls back to its own sans-serif.
	return bytes.ReplaceAll(buf.Bytes(), []byte("font-family:Liberation Sans;"), []byte("font-family:'Liberation Sans',Arial,sans-serif;")), nil
}

// PNG renders the figure as a PNG on a white background.
func (f *Figure) PNG() ([]byte, error) { return f.png(context.Background()) }

// png is PNG, stopped (with ctx's error) when ctx is done.
func (f *Figure) png(ctx context.Context) ([]byte, error) {
	if len(f.Panels) == 0 {
		return nil, errNoPanel(f)
	}
	c := newPNGCanvas(f.size())
	defer c.release()
	return f.pngOn(ctx, c)
}

// pngOn is png drawn on c.
func (f *Figure) pngOn(ctx context.Context, c *pngCanvas) ([]byte, error) {
	f.draw(draw.New(stoppable(ctx, c)))
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	b, err := encodePNG(c.img)
	if err != nil {
		return nil, fmt.Errorf("figure %s: %w", f.Name, err)
	}
	return b, nil
}

// maxSlug is the most bytes a Slug holds: a figure's file name is a
// stem of one or two slugs and a few words, and a local file system takes
// names of 255 bytes at most.
const maxSlug = 64

// Slug turns a family or metric name into a file-name part: lower-case
// letters and digits, anything else a dash, no dash at either end; past
// maxSlug bytes, the first ones and a hash of s.
func Slug(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			dash = false
			b.WriteRune(r)
		} else {
			dash = true
		}
	}
	if b.Len() == 0 {
		return "none"
	}
	if b.Len() > maxSlug {
		// Its start, then a hash of the whole name, so that long names
		// sharing their start still differ (Names makes what is left
		// unique).
		sum := sha256.Sum256([]byte(s))
		h := hex.EncodeToString(sum[:6])
		return strings.TrimRight(b.String()[:maxSlug-len(h)-1], "-") + "-" + h
	}
	return b.String()
}

// Names makes file stems unique: the second "x" becomes "x-2", and so on.
type Names map[string]int

// Unique returns stem, or stem-n when stem was taken.
func (n Names) Unique(stem string) string {
	n[stem]++
	if n[stem] == 1 {
		return stem
	}
	s := fmt.Sprintf("%s-%d", stem, n[stem])
	return n.Unique(s)
}

// palette is the colour of the i-th series (Tableau 10).
var palette = []color.NRGBA{
	{0x4e, 0x79, 0xa7, 0xff}, {0xf2, 0x8e, 0x2b, 0xff}, {0xe1, 0x57, 0x59, 0xff}, {0x76, 0xb7, 0xb2, 0xff},
	{0x59, 0xa1, 0x4f, 0xff}, {0xed, 0xc9, 0x48, 0xff}, {0xb0, 0x7a, 0xa1, 0xff}, {0xff, 0x9d, 0xa7, 0xff},
	{0x9c, 0x75, 0x5f, 0xff}, {0xba, 0xb0, 0xac, 0xff},
}

// Color is the colour of series i.
func Color(i int) color.NRGBA { return palette[i%len(palette)] }

func fade(c color.NRGBA, a uint8) color.NRGBA { c.A = a; return c }

// newPlot is a panel with the house style.
func newPlot(title, x, y string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = x
	p.Y.Label.Text = y
	p.Title.TextStyle.Font.Size = vg.Points(11)
	p.Legend.Top = true
	return p
}
