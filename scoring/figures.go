package scoring

import (
	"github.com/crlbatch/crlbatch/figures"
	"github.com/crlbatch/crlbatch/protocol"
	"github.com/crlbatch/crlbatch/writers"
)

// Figurer is implemented by jobs that draw figures. The engine calls
// Figures after Render with the same Results, renders every figure to
// figure-<name>.svg and .png, writes Tables as Parquet after the
// protocol's own, lists the figures in report.md's Figures section and
// builds report.html from that report.
type Figurer interface {
	Figures(res *Results) (*Drawn, error)
}

// Folder is implemented by Figurer jobs whose figures reduce each run's
// Scored.Figure across the runs of a family (skyfall's curves): the engine
// hands every scored run that the reduction includes to Fold, with its
// family, as soon as it and every run before it in canonical order are
// scored, so that the job can merge it and drop it (set s.Figure to nil)
// rather than keep one per run until Figures. The engine calls Fold from
// one goroutine at a time, once per run, in canonical order, within one
// scoring pass; it drops the Figure of a run the reduction excludes
// (--min-steps) without folding it. An engine that does not fold leaves
// every Figure in place, and Figures must then fold them itself, in the
// order of Results.Runs.
type Folder interface {
	Fold(family string, s *Scored)
}

// Drawn is what a job draws: figures in the order of the report, and the
// tables behind them (curves.parquet).
type Drawn struct {
	Figures []*figures.Figure
	Tables  []Table
}

// StandardFigures are the figures every protocol draws from the
// reduction: each headline metric as an interval estimate per family, and
// each family's probability of improvement over the baseline (when there
// is a baseline and another family).
func StandardFigures(res *Results, hs []figures.Headline) []*figures.Figure {
	out := []*figures.Figure{figures.Intervals("interval-estimates", res.Families, hs)}
	if res.Families.BaselineFound && len(res.Families.Families) > 1 {
		out = append(out, figures.ProbImprovement("probability-of-improvement", res.Families, hs))
	}
	return out
}

// FamilyLine is one family's merged curve.
type FamilyLine struct {
	Family string
	Line   figures.Line
}

// CurvesTable is curves.parquet: one row per family, bucket and label of
// the downsampled curves (figures.Merge), in family order then step.
func CurvesTable(lines []FamilyLine) (*writers.Table, error) {
	t := writers.NewTable()
	fam := t.NullableString("family")
	label := t.String("label")
	start := t.Int64("step_start")
	end := t.Int64("step_end")
	runs := t.Int64("runs")
	mean := t.Metric("mean")
	lo := t.Metric("band_low")
	hi := t.Metric("band_high")
	mn := t.Metric("min")
	mx := t.Metric("max")
	t.Reasons()
	for _, fl := range lines {
		for _, p := range fl.Line.Points {
			if fl.Family == "" {
				fam.AppendNull()
			} else {
				fam.Append(fl.Family)
			}
			label.Append(p.Label)
			start.Append(p.Start)
			end.Append(p.End)
			runs.Append(int64(p.Runs))
			mean.Append(protocol.Finite(p.Mean))
			lo.Append(p.BandLow)
			hi.Append(p.BandHigh)
			mn.Append(protocol.Finite(p.Min))
			mx.Append(protocol.Finite(p.Max))
			if err := t.EndRow(); err != nil {
				return nil, err
			}
		}
	}
	return t, t.Err()
}
