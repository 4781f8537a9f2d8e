package skyfall

import (
	"github.com/crlbatch/crlbatch/protocol"
	"github.com/crlbatch/crlbatch/protocol/family"
)

// SummarizeLabels is a family's per-label view: for each label (in order of
// first appearance over the family's runs, in run order) and each of
// LabelMetrics, the mean and sample standard deviation over the runs that
// have a value (std absent under two values).
func SummarizeLabels(runs []*RunResult) family.KeyedSummary {
	return family.SummarizeKeyed(len(runs), len(LabelMetrics),
		func(r int) []string {
			keys := make([]string, len(runs[r].Labels))
			for i := range runs[r].Labels {
				keys[i] = runs[r].Labels[i].Label
			}
			return keys
		},
		func(r, k, m int) protocol.Value {
			v, _ := runs[r].Labels[k].Metric(LabelMetrics[m])
			return v
		})
}
