package figures

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"

	"github.com/crlbatch/crlbatch/internal/benchcpu"
	"github.com/crlbatch/crlbatch/protocol"
	"github.com/crlbatch/crlbatch/protocol/family"
)

// benchLine is a family of five runs of 40,000 steps (bench-sweep's shape).
func benchLine() Line {
	var curves []Curve
	for r := range 5 {
		n := 40000
		rw, lb := make([]float64, n), make([]int32, n)
		for i := range n {
			rw[i] = math.Sin(float64(i+r)/300) + float64(i%97)/100
			lb[i] = int32(i / 10000 % 3)
		}
		curves = append(curves, Downsample(rw, lb, []string{"calm", "gusty", "storm"}))
	}
	return Merge(curves)
}

func BenchmarkRewardSVG(b *testing.B) {
	ln := benchLine()
	b.ReportAllocs()
	before := benchcpu.Now()
	for b.Loop() {
		if _, err := Reward("r", "f", 5, ln).SVG(); err != nil {
			b.Fatal(err)
		}
	}
	benchcpu.Report(b, before)
}

func BenchmarkRewardPNG(b *testing.B) {
	ln := benchLine()
	b.ReportAllocs()
	before := benchcpu.Now()
	for b.Loop() {
		if _, err := Reward("r", "f", 5, ln).PNG(); err != nil {
			b.Fatal(err)
		}
	}
	benchcpu.Report(b, before)
}

// noisyLine is one run of 2,000 steps whose per-step reward is uniform
// random in [0, 1], "calm" then "storm" from step 1,000: a line of 2,000
// points zigzagging across the whole plot, several per pixel column.
func noisyLine() Line {
	rng := rand.New(rand.NewPCG(20, 0))
	n := 2000
	rw, lb := make([]float64, n), make([]int32, n)
	for i := range n {
		rw[i] = rng.Float64()
		lb[i] = int32(i / 1000)
	}
	return Merge([]Curve{Downsample(rw, lb, []string{"calm", "storm"})})
}

// BenchmarkRewardNoisyPNG is the PNG of a noisy run's reward figure
// (noisyLine): its mean line is stroked through every point, and the
// rasterizer finds each cell of a scanline crossed hundreds of times.
func BenchmarkRewardNoisyPNG(b *testing.B) {
	ln := noisyLine()
	b.ReportAllocs()
	before := benchcpu.Now()
	for b.Loop() {
		if _, err := Reward("r", "f", 1, ln).PNG(); err != nil {
			b.Fatal(err)
		}
	}
	benchcpu.Report(b, before)
}

// smallLine is a family of the bench-scale families step: five runs of
// 200 steps, four labels.
func smallLine() Line {
	var curves []Curve
	for r := range 5 {
		n := 200
		rw, lb := make([]float64, n), make([]int32, n)
		for i := range n {
			rw[i] = math.Sin(float64(i+r)/30) + float64(i%7)/10
			lb[i] = int32(i / 50)
		}
		curves = append(curves, Downsample(rw, lb, []string{"a", "b", "c", "d"}))
	}
	return Merge(curves)
}

// BenchmarkRewardSmall is one small family's reward figure, SVG and PNG:
// a job of 200 families draws 200 of them.
func BenchmarkRewardSmall(b *testing.B) {
	ln := smallLine()
	b.ReportAllocs()
	before := benchcpu.Now()
	for b.Loop() {
		if _, _, err := Reward("r", "f", 5, ln).render(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
	benchcpu.Report(b, before)
}

// BenchmarkFigureKey is what finding a reward figure in the cache costs:
// its input key (Key, computed when the figure is made) against the
// drawing key it replaced (the figure drawn to a recorder and every
// command hashed), each with the figure's construction, and the
// construction alone.
func BenchmarkFigureKey(b *testing.B) {
	ln := benchLine()
	b.Run("construction", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			Reward("r", "f", 5, ln)
		}
	})
	b.Run("input", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := Reward("r", "f", 5, ln).Key(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("drawing", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := Reward("r", "f", 5, ln).DrawingKey(); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkWarmFigures is what the nightly warm job (issue 15) draws when
// one object of bench-sweep changed: one family's reward figure, the
// interval estimates and the probability of improvement, each as SVG and
// PNG.
func BenchmarkWarmFigures(b *testing.B) {
	ln := benchLine()
	fres, hs := twoMetrics()
	b.ReportAllocs()
	before := benchcpu.Now()
	for b.Loop() {
		for _, f := range []*Figure{Reward("r", "f", 5, ln), Intervals("i", fres, hs), ProbImprovement("p", fres, hs)} {
			if _, _, err := f.render(context.Background()); err != nil {
				b.Fatal(err)
			}
		}
	}
	benchcpu.Report(b, before)
}

// BenchmarkWarmFiguresOnce is BenchmarkWarmFigures with the text handler
// emptied before each iteration, as a job that draws each figure once
// finds it: only what each figure's own SVG and PNG measure again is kept.
func BenchmarkWarmFiguresOnce(b *testing.B) {
	ln := benchLine()
	fres, hs := twoMetrics()
	kept := plot.DefaultTextHandler
	defer func() { plot.DefaultTextHandler = kept }()
	b.ReportAllocs()
	before := benchcpu.Now()
	for b.Loop() {
		plot.DefaultTextHandler = newMeasuredText(font.DefaultCache)
		for _, f := range []*Figure{Reward("r", "f", 5, ln), Intervals("i", fres, hs), ProbImprovement("p", fres, hs)} {
			if _, _, err := f.render(context.Background()); err != nil {
				b.Fatal(err)
			}
		}
	}
	benchcpu.Report(b, before)
}

// manyFamilies is a reduction of n families over skyfall's four headline
// metrics, the baseline (ppo) first: the bench-scale families step's
// interval estimates and probability of improvement draw a row per family
// in each of four panels (at 200 families, a 605 × 24,643-pixel PNG).
func manyFamilies(n int) (*family.Result, []Headline) {
	hib, lib := true, false
	hs := []Headline{{Metric: "a", Label: "A"}, {Metric: "b", Label: "B (steps)"}, {Metric: "c", Label: "C (steps)"}, {Metric: "d", Label: "D"}}
	var fams []family.Family
	for i := range n {
		name := "ppo"
		if i > 0 {
			name = fmt.Sprintf("%s%d", []string{"ewc", "a2c", "ddpg", "sac", "dqn"}[i%5], i)
		}
		var rows []family.Row
		for mi, h := range hs {
			x := math.Sin(float64(i*4+mi)) * 10
			r := family.Row{Metric: h.Metric, HigherIsBetter: &hib, IQM: protocol.Finite(x), IQMCILow: protocol.Finite(x - 1), IQMCIHigh: protocol.Finite(x + 1.5)}
			if mi%2 == 1 {
				r.HigherIsBetter = &lib
			}
			if i > 0 {
				p := 0.5 + math.Sin(float64(i+mi))/3
				r.ProbImprovement, r.ProbImprovementCILow, r.ProbImprovementCIHigh = protocol.Finite(p), protocol.Finite(p-0.1), protocol.Finite(p+0.1)
			}
			rows = append(rows, r)
		}
		fams = append(fams, family.Family{Name: name, Rows: rows})
	}
	return &family.Result{Families: fams, Baseline: "ppo", BaselineFound: true}, hs
}

// BenchmarkFamilies200 is what the bench-scale families step at 200
// families draws besides its 200 small reward figures
// (BenchmarkRewardSmall): the interval estimates and the probability of
// improvement, each as SVG and PNG.
func BenchmarkFamilies200(b *testing.B) {
	fres, hs := manyFamilies(200)
	for _, k := range []struct {
		name string
		mk   func() *Figure
	}{
		{"intervals", func() *Figure { return Intervals("i", fres, hs) }},
		{"improvement", func() *Figure { return ProbImprovement("p", fres, hs) }},
	} {
		b.Run(k.name, func(b *testing.B) {
			b.ReportAllocs()
			before := benchcpu.Now()
			for b.Loop() {
				if _, _, err := k.mk().render(context.Background()); err != nil {
					b.Fatal(err)
				}
			}
			benchcpu.Report(b, before)
		})
	}
}
