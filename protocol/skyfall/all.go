package skyfall

import "github.com/crlbatch/crlbatch/protocol"

// AllMetrics is one result over several traces (the seed's
// compute_all_metrics): per label, each metric averaged over the traces that
// have a value; the Aggregate row averages the labels; the per-run metrics are
// averaged over traces.
type AllMetrics struct {
	// Labels in order of first appearance across the traces, in trace order.
	Labels []string
	// PerLabel[i][m] is label Labels[i]'s value of LabelMetrics[m].
	PerLabel [][]protocol.Value
	// Aggregate[m] averages PerLabel[·][m] over labels, nulls dropped.
	Aggregate []protocol.Value
	// Run[m] averages the traces' values of RunMetrics[m], nulls dropped.
	Run []protocol.Value
}

// ComputeAll reduces scored runs to one result. Nulls are dropped at both
// stages, and a metric null everywhere stays null with the first reason met.
func ComputeAll(runs []*RunResult) *AllMetrics {
	out := &AllMetrics{}
	idx := map[string]int{}
	var vals [][][]protocol.Value // label → metric → per-trace values
	for _, r := range runs {
		for li := range r.Labels {
			l := &r.Labels[li]
			i, ok := idx[l.Label]
			if !ok {
				i = len(out.Labels)
				idx[l.Label] = i
				out.Labels = append(out.Labels, l.Label)
				vals = append(vals, make([][]protocol.Value, len(LabelMetrics)))
			}
			for m, name := range LabelMetrics {
				v, _ := l.Metric(name)
				vals[i][m] = append(vals[i][m], v)
			}
		}
	}
	out.PerLabel = make([][]protocol.Value, len(out.Labels))
	for i := range out.Labels {
		out.PerLabel[i] = make([]protocol.Value, len(LabelMetrics))
		for m := range LabelMetrics {
			out.PerLabel[i][m] = protocol.MeanOfPresent(vals[i][m], ReasonNoTraceValue+": "+protocol.FirstReason(vals[i][m], "no trace"))
		}
	}
	out.Aggregate = make([]protocol.Value, len(LabelMetrics))
	for m := range LabelMetrics {
		col := make([]protocol.Value, len(out.Labels))
		for i := range out.Labels {
			col[i] = out.PerLabel[i][m]
		}
		out.Aggregate[m] = protocol.MeanOfPresent(col, ReasonNoLabelValue+": "+protocol.FirstReason(col, "no label"))
	}
	out.Run = make([]protocol.Value, len(RunMetrics))
	for m, name := range RunMetrics {
		col := make([]protocol.Value, len(runs))
		for i, r := range runs {
			col[i], _ = r.RunMetric(name)
		}
		out.Run[m] = protocol.MeanOfPresent(col, ReasonNoTraceValue+": "+protocol.FirstReason(col, "no trace"))
	}
	return out
}
