package skillshiftscore

import (
	"fmt"
	"slices"

	"github.com/crlbatch/crlbatch/figures"
	"github.com/crlbatch/crlbatch/protocol"
	"github.com/crlbatch/crlbatch/protocol/skillshift"
	"github.com/crlbatch/crlbatch/scoring"
)

// headlines are skillshift's metrics drawn as interval estimates.
var headlines = []figures.Headline{
	{Metric: skillshift.SR, Label: "SR (success rate, %)"},
	{Metric: skillshift.AS, Label: "AS"},
	{Metric: skillshift.ASC, Label: "ASC"},
	{Metric: skillshift.SFR, Label: "SFR (%)"},
}

// Figures draws each method's success-rate grid (websites × conditions),
// then the interval estimates and the probability of improvement.
func (j *job) Figures(res *scoring.Results) (*scoring.Drawn, error) {
	d := &scoring.Drawn{}
	names := figures.Names{}
	for _, f := range res.Families.Families {
		var runs []*skillshift.RunResult
		for _, r := range res.Runs {
			if r.Family != f.Name || r.Excluded {
				continue
			}
			rr, ok := r.Result.(*skillshift.RunResult)
			if !ok {
				return nil, fmt.Errorf("run %s has no skillshift result", r.Key)
			}
			runs = append(runs, rr)
		}
		if len(runs) == 0 {
			continue
		}
		fam := f.Name
		if fam == "" {
			fam = "(none)"
		}
		g := SuccessGrid(runs)
		caption := fmt.Sprintf("SR (%%) of each website × condition cell, the mean over the method's %d run(s) that have a value in the cell.", len(runs))
		d.Figures = append(d.Figures, figures.Heatmap(names.Unique("success-grid-"+figures.Slug(f.Name)), "Success rate of "+figures.Name(fam), g, "condition", "website", 0, 100, "%.1f", caption))
	}
	d.Figures = append(d.Figures, scoring.StandardFigures(res, headlines)...)
	return d, nil
}

// SuccessGrid is the SR grid of a method's runs: the expected websites and
// conditions first, then any other in order of first appearance; a cell's
// value is the mean of the runs' SR there, absent (with the first run's
// reason) when no run has one.
func SuccessGrid(runs []*skillshift.RunResult) figures.Grid {
	sites := slices.Clone(skillshift.ExpectedSites)
	conds := slices.Clone(skillshift.ExpectedConditions)
	for _, r := range runs {
		for _, s := range r.Sites {
			if !slices.Contains(sites, s) {
				sites = append(sites, s)
			}
		}
		for _, c := range r.Conditions {
			if !slices.Contains(conds, c) {
				conds = append(conds, c)
			}
		}
	}
	g := figures.Grid{}
	for _, s := range sites {
		g.Rows = append(g.Rows, skillshift.Title(s))
	}
	for _, c := range conds {
		g.Cols = append(g.Cols, skillshift.Title(c))
	}
	for _, s := range sites {
		row := make([]protocol.Value, len(conds))
		for k, c := range conds {
			sum, n, reason := 0.0, 0, ""
			for _, r := range runs {
				cell := r.Cell(s, c)
				switch {
				case cell == nil:
					if reason == "" {
						reason = skillshift.ReasonNoTask
					}
				case cell.SR.OK:
					sum += cell.SR.V
					n++
				case reason == "":
					reason = cell.SR.Reason
				}
			}
			if n > 0 {
				row[k] = protocol.Finite(sum / float64(n))
			} else {
				row[k] = protocol.None(reason)
			}
		}
		g.Cells = append(g.Cells, row)
	}
	return g
}
