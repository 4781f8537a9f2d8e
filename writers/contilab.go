package writers

import (
	"fmt"
	"strings"

	"github.com/crlbatch/crlbatch/protocol"
	"github.com/crlbatch/crlbatch/protocol/contilab"
	"github.com/crlbatch/crlbatch/protocol/family"
)

// ContilabIdentity are the identity columns of contilab's run tables.
var ContilabIdentity = []string{"run_id", "seed", "algorithm_id", "policy_id"}

// ContilabRun is one scored contilab run.
type ContilabRun struct {
	Key      string
	Source   string
	Family   string
	Meta     map[string]string
	Excluded bool
	Result   *contilab.RunResult
}

// ContilabOutput is what contilab's tables are built from, runs in
// canonical order. Benchmarks is nil unless the runs carry several values
// of the benchmark metadata field.
type ContilabOutput struct {
	Runs       []ContilabRun
	Families   *family.Result
	Benchmarks *contilab.BenchmarkResult
	RankMetric string
}

func (o *ContilabOutput) metas() []map[string]string {
	out := make([]map[string]string, len(o.Runs))
	for i := range o.Runs {
		out[i] = o.Runs[i].Meta
	}
	return out
}

func (o *ContilabOutput) results() []*contilab.RunResult {
	out := make([]*contilab.RunResult, len(o.Runs))
	for i := range o.Runs {
		out[i] = o.Runs[i].Result
	}
	return out
}

// ContilabRunsTable is runs.parquet: one row per run, every metric, and one
// diag_<name> column per recorded diagnostic.
func ContilabRunsTable(o *ContilabOutput) (*Table, error) {
	t := NewTable()
	rc := declareRunColumns(t, o.metas(), ContilabIdentity, true)
	nTasks := t.Int64("n_tasks")
	scenario := t.NullableString("scenario")
	cols := make([]MetricColumn, len(contilab.Metrics))
	for i, m := range contilab.Metrics {
		cols[i] = t.Metric(m)
	}
	diagNames := contilab.DiagColumns(o.results())
	diags := make([]MetricColumn, len(diagNames))
	for i, d := range diagNames {
		diags[i] = t.Metric(d)
	}
	t.Reasons()
	for i := range o.Runs {
		r := &o.Runs[i]
		res := r.Result
		rc.append(r.Key, r.Source, r.Family, r.Meta, &r.Excluded)
		if res.NTasks.OK {
			nTasks.Append(int64(res.NTasks.V))
		} else {
			nTasks.AppendNull()
		}
		if res.Scenario == "" {
			scenario.AppendNull()
		} else {
			scenario.Append(string(res.Scenario))
		}
		for m, name := range contilab.Metrics {
			v, _ := res.Metric(name)
			cols[m].Append(v)
		}
		for di, name := range diagNames {
			v := protocol.None("not recorded in this run")
			for _, d := range res.Diagnostics {
				if d.Column == name {
					v = d.Value
				}
			}
			diags[di].Append(v)
		}
		if err := t.EndRow(); err != nil {
			return nil, err
		}
	}
	return t, t.Err()
}

// ContilabMatrixTable is matrix.parquet: the accuracy matrices, one row per
// run × after_task × eval_task, for heatmaps.
func ContilabMatrixTable(o *ContilabOutput) (*Table, error) {
	t := NewTable()
	key := t.String("run_key")
	after := t.Int64("after_task")
	eval := t.Int64("eval_task")
	acc := t.Metric("acc")
	t.Reasons()
	for i := range o.Runs {
		r := &o.Runs[i]
		for _, e := range r.Result.Matrix {
			key.Append(r.Key)
			after.Append(int64(e.AfterTask))
			eval.Append(int64(e.EvalTask))
			acc.Append(protocol.Finite(e.Acc))
			if err := t.EndRow(); err != nil {
				return nil, err
			}
		}
	}
	return t, t.Err()
}

// ContilabBenchmarksTable is benchmarks.parquet: one row per family ranked
// across benchmarks.
func ContilabBenchmarksTable(o *ContilabOutput) (*Table, error) {
	t := NewTable()
	fam := t.String("family")
	rank := t.Metric("average_rank")
	nb := t.Int64("n_benchmarks")
	stat := t.Metric("friedman_statistic")
	p := t.Metric("friedman_p_value")
	cd := t.Metric("critical_difference")
	t.Reasons()
	b := o.Benchmarks
	for _, f := range b.Families {
		fam.Append(f.Family)
		rank.Append(f.AverageRank)
		nb.Append(int64(f.NBenchmarks))
		stat.Append(b.FriedmanStatistic)
		p.Append(b.FriedmanP)
		cd.Append(b.CriticalDifference)
		if err := t.EndRow(); err != nil {
			return nil, err
		}
	}
	return t, t.Err()
}

// ContilabReport renders report.md for contilab.
func ContilabReport(h ReportHeader, o *ContilabOutput, notes []string) string {
	var rows []ReportRow
	for _, m := range contilab.Metrics {
		rows = append(rows, ReportRow{Title: m, Metric: m})
	}
	for _, m := range contilab.DiagColumns(o.results()) {
		rows = append(rows, ReportRow{Title: m, Metric: m})
	}
	rep := &Report{
		Header:   h,
		Rows:     rows,
		KeyNoun:  "run",
		Families: o.Families,
		Notes:    notes,
		Columns: func(string) ([]string, func(int, string) family.Cell) {
			return nil, nil
		},
	}
	if b := o.Benchmarks; b != nil {
		var sb strings.Builder
		fmt.Fprintf(&sb, "## Across benchmarks\n\nEach family's mean `%s` per benchmark, ranked per benchmark (1 = best, ties averaged). Friedman statistic %s, p %s; Nemenyi critical difference (α = %g) %s.\n\n",
			o.RankMetric, FormatValue(b.FriedmanStatistic), FormatValue(b.FriedmanP), b.Alpha, FormatValue(b.CriticalDifference))
		header := append([]string{"Family"}, b.Benchmarks...)
		header = append(header, "average rank")
		var trs [][]string
		for _, f := range b.Families {
			row := []string{familyTitle(f.Family, "")}
			for _, s := range f.Scores {
				row = append(row, FormatValue(s))
			}
			for len(row) < len(header)-1 {
				row = append(row, Absent)
			}
			row = append(row, FormatValue(f.AverageRank))
			trs = append(trs, row)
		}
		sb.WriteString(MarkdownTable(header, trs))
		sb.WriteString("\n")
		rep.Extra = sb.String()
	}
	return rep.Render()
}
