package skyfallscore

import (
	"fmt"
	"strings"
	"sync"

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

// curves are the families' lines, each merged run by run (Fold) in
// canonical order; what they keep does not grow with the runs.
type curves struct {
	mu  sync.Mutex
	fam map[string]*figures.Accumulator
}

func (c *curves) add(fam string, cv figures.Curve) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.fam == nil {
		c.fam = map[string]*figures.Accumulator{}
	}
	a := c.fam[fam]
	if a == nil {
		a = &figures.Accumulator{}
		c.fam[fam] = a
	}
	a.Fold(cv)
}

// Fold merges a scored run's curve into its family's line and drops it.
func (j *job) Fold(fam string, s *scoring.Scored) {
	if cv, ok := s.Figure.(figures.Curve); ok {
		j.curves.add(fam, cv)
		s.Figure = nil
	}
}

// Figures draws each family's reward against step (from the curves
// downsampled while its runs were scored and folded into the family's
// line), then the interval estimates and the probability of improvement;
// curves.parquet holds the lines.
func (j *job) Figures(res *scoring.Results) (*scoring.Drawn, error) {
	// Runs the engine did not fold (an engine without Fold) are folded
	// here, in run order within each family.
	included := map[string]int{}
	for _, r := range res.Runs {
		if r.Excluded {
			continue
		}
		included[r.Family]++
		if cv, ok := r.Figure.(figures.Curve); ok {
			j.curves.add(r.Family, cv)
			r.Figure = nil
		}
	}
	d := &scoring.Drawn{}
	names := figures.Names{}
	var lines []scoring.FamilyLine
	for _, f := range res.Families.Families {
		fam := f.Name
		if fam == "" {
			fam = "(none)"
		}
		if included[f.Name] == 0 {
			continue
		}
		a := j.curves.fam[f.Name]
		if a == nil || a.Runs() != included[f.Name] {
			folded := 0
			if a != nil {
				folded = a.Runs()
			}
			return nil, fmt.Errorf("family %s: %d runs have a reward curve, %d runs are included", fam, folded, included[f.Name])
		}
		ln := a.Line()
		// The family's line is read: what it was folded from goes (for
		// a run of 100,000 labels ~70 MB, before the tables are built).
		delete(j.curves.fam, f.Name)
		lines = append(lines, scoring.FamilyLine{Family: f.Name, Line: ln})
		d.Figures = append(d.Figures, figures.Reward(names.Unique("reward-"+figures.Slug(f.Name)), fam, a.Runs(), ln))
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
