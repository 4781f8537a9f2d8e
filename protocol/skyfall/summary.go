package skyfall

import "github.com/crlbatch/crlbatch/protocol/family"

// LabelSummary is a family's per-label view: for each label (in order of
// first appearance over the family's runs, in run order) and each of
// LabelMetrics, the mean and sample standard deviation over the runs that
// have a value (std absent under two values).
type LabelSummary struct {
	Labels []string
	// Cells[l][m] is label Labels[l], metric LabelMetrics[m].
	Cells [][]family.Cell
}

// SummarizeLabels builds the per-label view of a family's runs.
func SummarizeLabels(runs []*RunResult) LabelSummary {
	var out LabelSummary
	idx := map[string]int{}
	var vals [][][]float64
	for _, r := range runs {
		for li := range r.Labels {
			l := &r.Labels[li]
			i, ok := idx[l.Label]
			if !ok {
				i = len(out.Labels)
				idx[l.Label] = i
				out.Labels = append(out.Labels, l.Label)
				vals = append(vals, make([][]float64, len(LabelMetrics)))
			}
			for m, name := range LabelMetrics {
				if v, _ := l.Metric(name); v.OK {
					vals[i][m] = append(vals[i][m], v.V)
				}
			}
		}
	}
	out.Cells = make([][]family.Cell, len(out.Labels))
	for i := range out.Labels {
		out.Cells[i] = make([]family.Cell, len(LabelMetrics))
		for m := range LabelMetrics {
			out.Cells[i][m] = family.Describe(vals[i][m])
		}
	}
	return out
}
