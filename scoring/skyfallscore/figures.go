package skyfallscore

import (
	"fmt"
	"strings"

	"github.com/crlbatch/crlbatch/figures"
	"github.com/crlbatch/crlbatch/scoring"
)

// headlines are skyfall's metrics drawn as interval estimates.
var headlines = []figures.Headline{
	{Metric: "per_configuration_reward", Label: "Per-configuration reward"},
	{Metric: "adaptation_speed", Label: "Adaptation speed (steps)"},
	{Metric: "recovery_time", Label: "Recovery time (steps)"},
	{Metric: "forgetting", Label: "Forgetting"},
}

// Figures draws each family's reward against step (from the curves
// downsampled while its runs were scored), then the interval estimates and
// the probability of improvement; curves.parquet holds the lines.
func (j *job) Figures(res *scoring.Results) (*scoring.Drawn, error) {
	d := &scoring.Drawn{}
	names := figures.Names{}
	var lines []scoring.FamilyLine
	for _, f := range res.Families.Families {
		var curves []figures.Curve
		for _, r := range res.Runs {
			if r.Family != f.Name || r.Excluded {
				continue
			}
			c, ok := r.Figure.(figures.Curve)
			if !ok {
				return nil, fmt.Errorf("run %s has no curve", r.Key)
			}
			curves = append(curves, c)
		}
		if len(curves) == 0 {
			continue
		}
		ln := figures.Merge(curves)
		lines = append(lines, scoring.FamilyLine{Family: f.Name, Line: ln})
		fam := f.Name
		if fam == "" {
			fam = "(none)"
		}
		d.Figures = append(d.Figures, figures.Reward(names.Unique("reward-"+figures.Slug(f.Name)), fam, len(curves), ln))
	}
	d.Figures = append(d.Figures, scoring.StandardFigures(res, headlines)...)
	t, err := scoring.CurvesTable(lines)
	if err != nil {
		return nil, fmt.Errorf("curves.parquet: %w", err)
	}
	d.Tables = append(d.Tables, scoring.Table{Name: "curves.parquet", Table: t})
	return d, nil
}

// labelNames copies a trace's label names: the decoder reuses the trace
// once the run is scored.
func labelNames(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = strings.Clone(n)
	}
	return out
}
