package contilabscore

import (
	"fmt"
	"math"
	"strconv"

	"github.com/crlbatch/crlbatch/figures"
	"github.com/crlbatch/crlbatch/protocol"
	"github.com/crlbatch/crlbatch/protocol/contilab"
	"github.com/crlbatch/crlbatch/scoring"
	"github.com/crlbatch/crlbatch/scoring/records"
)

// headlines are contilab's metrics drawn as interval estimates.
var headlines = []figures.Headline{
	{Metric: "acc", Label: "ACC (final average accuracy)"},
	{Metric: "aia", Label: "AIA"},
	{Metric: "bwt", Label: "BWT"},
	{Metric: "fwt", Label: "FWT"},
	{Metric: "forgetting", Label: "Forgetting"},
}

// ReasonNotRecorded is why a cell of a family's accuracy matrix is empty.
const ReasonNotRecorded = "no run of the family recorded it"

// Figures draws each family's accuracy matrix (one per benchmark when the
// runs carry several), the critical-difference diagram when they do, then
// the interval estimates and the probability of improvement.
func (j *job) Figures(res *scoring.Results) (*scoring.Drawn, error) {
	results, err := records.Results[*contilab.RunResult](records.Scored(res))
	if err != nil {
		return nil, err
	}
	d := &scoring.Drawn{}
	names := figures.Names{}
	for _, f := range res.Families.Families {
		var benches []string
		byBench := map[string][]*contilab.RunResult{}
		for i, r := range res.Runs {
			if r.Family != f.Name || r.Excluded {
				continue
			}
			b := r.Meta["benchmark"]
			if _, ok := byBench[b]; !ok {
				benches = append(benches, b)
			}
			byBench[b] = append(byBench[b], results[i])
		}
		fam := f.Name
		if fam == "" {
			fam = "(none)"
		}
		for _, b := range benches {
			runs := byBench[b]
			g, lo, hi, ok := AccuracyGrid(runs)
			if !ok {
				continue
			}
			stem, title := "accuracy-matrix-"+figures.Slug(f.Name), "Accuracy matrix of "+figures.Name(fam)
			if len(benches) > 1 || b != "" {
				stem, title = stem+"-"+figures.Slug(b), title+" on "+figures.Name(b)
			}
			caption := fmt.Sprintf("Accuracy on task j (column) after learning task i (row), the mean over the %d run(s) that recorded the cell.", len(runs))
			d.Figures = append(d.Figures, figures.Heatmap(names.Unique(stem), title, g, "evaluated task j", "after task i", lo, hi, "%.2f", caption))
		}
	}
	o := &output{res: res, results: results, rank: j.rank}
	if err := o.acrossBenchmarks(j.rankHigher); err != nil {
		return nil, err
	}
	if b := o.benchmarks; b != nil {
		var fams []figures.Ranked
		for _, f := range b.Families {
			fams = append(fams, figures.Ranked{Family: f.Family, Rank: f.AverageRank})
		}
		d.Figures = append(d.Figures, figures.CriticalDifference(names.Unique("critical-difference"),
			"Critical difference ("+j.rank+")", fams, b.CriticalDifference, len(b.Ranked), b.Alpha))
	}
	d.Figures = append(d.Figures, scoring.StandardFigures(res, headlines)...)
	return d, nil
}

// AccuracyGrid is the mean accuracy matrix of a family's runs: rows and
// columns 0…T−1 over the largest task index any run recorded, a cell the
// mean of the runs that recorded it, absent otherwise; lo and hi are the
// smallest and largest cell. ok is false when no run has a matrix.
func AccuracyGrid(runs []*contilab.RunResult) (g figures.Grid, lo, hi float64, ok bool) {
	t := 0
	for _, r := range runs {
		for _, e := range r.Matrix {
			t = max(t, e.AfterTask+1, e.EvalTask+1)
		}
	}
	if t == 0 {
		return g, 0, 0, false
	}
	sum := make([][]float64, t)
	n := make([][]int, t)
	for i := range t {
		sum[i], n[i] = make([]float64, t), make([]int, t)
		g.Rows = append(g.Rows, strconv.Itoa(i))
		g.Cols = append(g.Cols, strconv.Itoa(i))
	}
	for _, r := range runs {
		for _, e := range r.Matrix {
			sum[e.AfterTask][e.EvalTask] += e.Acc
			n[e.AfterTask][e.EvalTask]++
		}
	}
	lo, hi = math.Inf(1), math.Inf(-1)
	for i := range t {
		row := make([]protocol.Value, t)
		for k := range t {
			if n[i][k] == 0 {
				row[k] = protocol.None(ReasonNotRecorded)
				continue
			}
			v := sum[i][k] / float64(n[i][k])
			row[k] = protocol.Finite(v)
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
		g.Cells = append(g.Cells, row)
	}
	return g, lo, hi, true
}
