package figures

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"math/rand/v2"
	"sync"
	"testing"

	"gonum.org/v1/plot/vg"

	"github.com/crlbatch/crlbatch/protocol"
	"github.com/crlbatch/crlbatch/protocol/family"
)

// vgimgPNG is the PNG of f drawn as PNG drew it before pngCanvas: on
// vgimg.NewWith(UseWH, UseDPI, UseBackgroundColor(white)) (raster), whose
// image gg copied into a second one.
func vgimgPNG(t testing.TB, f *Figure) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := encodePNGBefore(&buf, raster(f)); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// canvasOn is f's PNG canvas on the memory m (newPNGCanvasOn).
func canvasOn(f *Figure, m *pngMemory) *pngCanvas {
	w, h := f.size()
	return newPNGCanvasOn(w, h, m)
}

// pixels is f's size in pixels at PNGDPI.
func pixels(f *Figure) (int, int) {
	w, h := f.size()
	return pixelSize(w, h, PNGDPI)
}

// sizes are figure sizes (Width, PanelHeight) to draw at: the default,
// whole pixels at 96 DPI (1 inch), and lengths whose pixels round up and
// down (the canvas's size in pixels is rounded, the drawing's is not).
var sizes = [][2]vg.Length{
	{0, 0},
	{vg.Inch, vg.Inch / 2},
	{7.3 * vg.Centimeter, 3.21 * vg.Centimeter},
	{9.99 * vg.Centimeter, 4.04 * vg.Centimeter},
	{23 * vg.Centimeter, 11.5 * vg.Centimeter},
}

// twoMetrics is a reduction of three families with two metrics, one
// family's values absent: Intervals of both metrics draws two panels.
func twoMetrics() (*family.Result, []Headline) {
	hib, lib := true, false
	var fams []family.Family
	for i, name := range []string{"ppo", "ewc", "der"} {
		x := float64(i)
		rows := []family.Row{
			{Metric: "m", HigherIsBetter: &hib, IQM: protocol.Finite(x), IQMCILow: protocol.Finite(x - 0.5), IQMCIHigh: protocol.Finite(x + 0.7)},
			{Metric: "n", HigherIsBetter: &lib, IQM: protocol.Finite(10 * x), IQMCILow: protocol.Finite(9 * x), IQMCIHigh: protocol.Finite(11 * x)},
		}
		if i == 2 {
			rows[1] = family.Row{Metric: "n", HigherIsBetter: &lib, IQM: protocol.Value{Reason: "no runs"}, IQMCILow: protocol.Value{Reason: "no runs"}, IQMCIHigh: protocol.Value{Reason: "no runs"}}
		}
		fams = append(fams, family.Family{Name: name, Rows: rows})
	}
	return &family.Result{Families: fams}, []Headline{{Metric: "m", Label: "M"}, {Metric: "n", Label: "N"}}
}

// namedFigures makes each time a fresh copy of figures of every kind the
// engine draws at its sizes: reward figures small, large (bench-sweep's)
// and of merged regimes, interval estimates and the probability of
// improvement over two metrics (two panels).
func namedFigures() map[string]func() *Figure {
	fres, hs := twoMetrics()
	return map[string]func() *Figure{
		"small reward":   func() *Figure { return Reward("r", "f", 5, smallLine()) },
		"reward":         func() *Figure { return Reward("r", "f", 5, benchLine()) },
		"merged regimes": func() *Figure { return Reward("r", "f", 1, burstLine()) },
		"intervals":      func() *Figure { return Intervals("i", fres, hs) },
		"improvement":    func() *Figure { return ProbImprovement("p", fres, hs) },
	}
}

// TestPNGCanvasMatchesVgimg: every figure kind the package draws (reward,
// heatmap, trade-off, critical difference, interval estimates,
// probability of improvement), from random inputs and at sizes of whole
// and of rounded pixels, one and several panels, renders through
// pngCanvas (PNG, and RenderContext under a live context, which wraps the
// canvas in stopCanvas) to exactly the bytes of the vgimg.NewWith canvas
// it replaced.
func TestPNGCanvasMatchesVgimg(t *testing.T) {
	check := func(name string, mk func() *Figure) {
		t.Helper()
		want := vgimgPNG(t, mk())
		got, err := mk().PNG()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s: PNG differs from vgimg.NewWith's (%d B, want %d B)", name, len(got), len(want))
		}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		_, got, err = mk().RenderContext(ctx)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s: RenderContext's PNG differs from vgimg.NewWith's", name)
		}
	}
	sized := func(mk func() *Figure, s [2]vg.Length) func() *Figure {
		return func() *Figure {
			f := mk()
			f.Width, f.PanelHeight = s[0], s[1]
			return f
		}
	}
	for name, mk := range namedFigures() {
		if raceEnabled && name != "small reward" && name != "intervals" {
			continue
		}
		for _, s := range sizes {
			check(fmt.Sprintf("%s at %v", name, s), sized(mk, s))
		}
	}
	rounds := 12
	if raceEnabled {
		rounds = 2
	}
	r := rand.New(rand.NewPCG(7, 8))
	for round := range rounds {
		seed1, seed2 := r.Uint64(), r.Uint64()
		n := len(randArgs(rand.New(rand.NewPCG(seed1, seed2))))
		for i := range n {
			mk := func() *Figure { return randArgs(rand.New(rand.NewPCG(seed1, seed2)))[i].figure("x") }
			s := sizes[(round+i)%len(sizes)]
			check(fmt.Sprintf("round %d %T at %v", round, randArgs(rand.New(rand.NewPCG(seed1, seed2)))[i], s), sized(mk, s))
		}
	}
}

// TestPNGCanvasReusedMemory: a canvas on memory that held another figure
// (larger, smaller or the same size, other content; at the same size with
// the gg context that drew it), or any bytes at all, draws exactly the
// PNG of a fresh canvas: the background fill overwrites every pixel
// before anything reads one, and resetContext leaves nothing of the
// figure before in the context.
func TestPNGCanvasReusedMemory(t *testing.T) {
	figs := namedFigures()
	big := func() *Figure {
		f := figs["intervals"]()
		f.Width, f.PanelHeight = 23*vg.Centimeter, 11.5*vg.Centimeter
		return f
	}
	smallOdd := func() *Figure {
		f := figs["small reward"]()
		f.Width, f.PanelHeight = 7.3*vg.Centimeter, 3.21*vg.Centimeter
		return f
	}
	type pair struct {
		name string
		a, b func() *Figure
	}
	cases := []pair{
		{"large intervals, then a smaller reward", big, smallOdd},
		{"reward, then improvement of the same width", figs["reward"], figs["improvement"]},
		{"merged regimes, then a reward of the same size", figs["merged regimes"], figs["small reward"]},
		{"small reward, then a larger figure (fresh memory)", smallOdd, big},
	}
	// Every kind after every kind, at one size (one panel of the default
	// size): the context of each drawn on by each.
	r := rand.New(rand.NewPCG(15, 16))
	rounds := 2
	if raceEnabled {
		cases, rounds = cases[:1], 1
	}
	for round := range rounds {
		seed1, seed2 := r.Uint64(), r.Uint64()
		kinds := func() []figureArgs { return randArgs(rand.New(rand.NewPCG(seed1, seed2))) }
		for i := range kinds() {
			for j := range kinds() {
				cases = append(cases, pair{
					fmt.Sprintf("round %d: %T, then %T", round, kinds()[i], kinds()[j]),
					func() *Figure { return kinds()[i].figure("a") },
					func() *Figure { return kinds()[j].figure("b") },
				})
			}
		}
	}
	for _, c := range cases {
		// A, drawn on fresh memory and kept dirty.
		a := c.a()
		ca := canvasOn(a, nil)
		if _, err := a.pngOn(context.Background(), ca); err != nil {
			t.Fatal(err)
		}
		mem, gc := ca.mem, ca.gc
		aw, ah := pixels(a)
		b := c.b()
		want := vgimgPNG(t, c.b())
		cb := canvasOn(b, mem)
		bw, bh := pixels(b)
		reused := 4*aw*ah >= 4*bw*bh
		if reused != (&cb.img.Pix[:1][0] == &mem.pix[:1][0]) {
			t.Fatalf("%s: B on A's memory: %v, want %v", c.name, !reused, reused)
		}
		if sameSize := aw == bw && ah == bh; sameSize != (cb.gc == gc) {
			t.Fatalf("%s: B with A's context: %v, want %v", c.name, !sameSize, sameSize)
		}
		got, err := b.pngOn(context.Background(), cb)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s: B drawn on A's memory differs from B drawn fresh", c.name)
		}
	}

	// Memory of any content: all zeros, all ones, random bytes.
	f := figs["small reward"]
	want := vgimgPNG(t, f())
	w, h := pixels(f())
	for fill := range 3 {
		mem := make([]byte, 4*w*h+100)
		for i := range mem {
			switch fill {
			case 1:
				mem[i] = 0xff
			case 2:
				mem[i] = byte(r.Uint32())
			}
		}
		got, err := f().pngOn(context.Background(), canvasOn(f(), &pngMemory{pix: mem}))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("memory filled %d: differs from a fresh canvas", fill)
		}
	}
}

// TestPNGCanvasConcurrent: figures of several sizes and kinds rendered at
// once by several goroutines (as the engine renders them), their pixel
// memory passing through rgbaPool from one to another, each to its own
// bytes. Run under -race (make test-race) it also checks the pool's use.
func TestPNGCanvasConcurrent(t *testing.T) {
	figs := namedFigures()
	names := []string{"small reward", "intervals", "improvement", "reward"}
	if raceEnabled {
		names = names[:2]
	}
	type job struct {
		mk   func() *Figure
		want []byte
	}
	var jobs []job
	for _, name := range names {
		for _, s := range sizes[:3] {
			mk := func() *Figure {
				f := figs[name]()
				f.Width, f.PanelHeight = s[0], s[1]
				return f
			}
			jobs = append(jobs, job{mk, vgimgPNG(t, mk())})
		}
	}
	const workers = 4
	repeats := 3
	if raceEnabled {
		repeats = 1
	}
	var wg sync.WaitGroup
	errs := make(chan string, workers*repeats*len(jobs))
	for w := range workers {
		wg.Go(func() {
			for k := range repeats * len(jobs) {
				j := jobs[(k+w*len(jobs)/workers)%len(jobs)]
				got, err := j.mk().PNG()
				if err != nil {
					errs <- err.Error()
					continue
				}
				if !bytes.Equal(got, j.want) {
					errs <- fmt.Sprintf("worker %d, figure %d: bytes differ", w, (k+w*len(jobs)/workers)%len(jobs))
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// TestPixelSize: the canvas's size in pixels is vgimg's (raster's image).
func TestPixelSize(t *testing.T) {
	for _, s := range sizes {
		f := Reward("r", "f", 5, smallLine())
		f.Width, f.PanelHeight = s[0], s[1]
		w, h := pixels(f)
		if got := raster(f).Bounds(); got != image.Rect(0, 0, w, h) {
			t.Errorf("%v: %dx%d pixels, vgimg %v", s, w, h, got)
		}
	}
}
