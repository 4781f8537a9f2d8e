package figures

import (
	"context"
	"math"
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"

	"github.com/crlbatch/crlbatch/internal/benchcpu"
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
