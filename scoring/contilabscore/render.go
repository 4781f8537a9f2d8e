package contilabscore

import (
	"fmt"
	"strings"

	"github.com/crlbatch/crlbatch/protocol"
	"github.com/crlbatch/crlbatch/protocol/contilab"
	"github.com/crlbatch/crlbatch/protocol/family"
	"github.com/crlbatch/crlbatch/scoring"
	"github.com/crlbatch/crlbatch/scoring/records"
	"github.com/crlbatch/crlbatch/writers"
)

// Params is contilab's crlbatch.params: the protocol, the window fraction,
// the rank metric, then the engine's parameters.
type Params struct {
	Protocol       string  `json:"protocol"`
	WindowFraction float64 `json:"window_fraction"`
	RankMetric     string  `json:"rank_metric,omitempty"`
	scoring.Common
}

// output is what the tables are built from, runs in canonical order.
// benchmarks is nil unless the runs kept carry several values of the
// benchmark metadata field.
type output struct {
	res        *scoring.Results
	results    []*contilab.RunResult
	identity   []string
	benchmarks *contilab.BenchmarkResult
	rank       string
	notes      []string
}

// Render ranks the families across benchmarks when the runs carry several
// benchmark values (a run without one is left out of the ranking and named
// in the notes), and builds runs.parquet, matrix.parquet,
// families.parquet, benchmarks.parquet (when ranked) and the report.
func (j *job) Render(res *scoring.Results) (*scoring.Rendered, error) {
	results, err := records.Results[*contilab.RunResult](records.Scored(res))
	if err != nil {
		return nil, err
	}
	o := &output{res: res, results: results, identity: res.Common.IdentityFields, rank: j.rank,
		notes: append([]string{}, res.Notes...)}
	if err := o.acrossBenchmarks(j.rankHigher); err != nil {
		return nil, err
	}
	params := Params{Protocol: Name, WindowFraction: j.params.WindowFraction, RankMetric: j.rank, Common: res.Common}
	ts := []records.Table{
		{Name: "runs.parquet", Build: o.runsTable},
		{Name: "matrix.parquet", Build: o.matrixTable},
		records.Families(res),
	}
	if o.benchmarks != nil {
		ts = append(ts, records.Table{Name: "benchmarks.parquet", Build: o.benchmarksTable})
	}
	rd, err := records.Render(Name, params, res, o.report, ts...)
	if err != nil {
		return nil, err
	}
	// The notes of the ranking across benchmarks follow the job's, in the
	// report and in the manifest.
	rd.Notes = o.notes[len(res.Notes):]
	return rd, nil
}

// acrossBenchmarks ranks the families by their mean rank metric per
// benchmark, over the runs in the aggregates, when they carry several
// values of `benchmark`; its notes follow the job's.
func (o *output) acrossBenchmarks(higher bool) error {
	var values []contilab.BenchmarkValue
	var unbenched []string // runs in the aggregates without a benchmark
	benchmarks := map[string]bool{}
	for i := range o.res.Runs {
		r := &o.res.Runs[i]
		if r.Excluded {
			continue
		}
		b, ok := r.Meta["benchmark"]
		if !ok {
			unbenched = append(unbenched, fmt.Sprint(r.Key))
			continue
		}
		benchmarks[b] = true
		v, _ := o.results[i].Metric(o.rank)
		values = append(values, contilab.BenchmarkValue{Family: r.Family, Benchmark: b, Value: v})
	}
	if len(benchmarks) <= 1 {
		return nil
	}
	mt := contilab.NewMeanTable(values)
	bres, err := contilab.Benchmarks(mt.Families, mt.Benchmarks, higher, mt.Score)
	if err != nil {
		return &scoring.DataError{Err: err}
	}
	o.benchmarks = bres
	if len(unbenched) > 0 {
		// Ranked per benchmark, a run with none has no place in the
		// ranking; it stays in every other table and is named here (the
		// first 20 of a large sweep, and how many more).
		named := unbenched
		more := ""
		if len(named) > 20 {
			named, more = named[:20], fmt.Sprintf(" and %d more", len(unbenched)-20)
		}
		o.notes = append(o.notes, fmt.Sprintf("%d run(s) carry no benchmark and are left out of the ranking across benchmarks: %s%s",
			len(unbenched), strings.Join(named, ", "), more))
	}
	o.notes = append(o.notes, bres.Notes...)
	return nil
}

// runsTable is runs.parquet: one row per run, every metric, and one
// diag_<name> column per recorded diagnostic.
func (o *output) runsTable() (*writers.Table, error) {
	t := writers.NewTable()
	rc := writers.DeclareRunColumns(t, records.Metas(o.res.Runs), o.identity, true)
	nTasks := t.Int64("n_tasks")
	scenario := t.NullableString("scenario")
	cols := make([]writers.MetricColumn, len(contilab.Metrics))
	for i, m := range contilab.Metrics {
		cols[i] = t.Metric(m)
	}
	diagNames := contilab.DiagColumns(o.results)
	diags := make([]writers.MetricColumn, len(diagNames))
	for i, d := range diagNames {
		diags[i] = t.Metric(d)
	}
	t.Reasons()
	for i := range o.res.Runs {
		r := &o.res.Runs[i]
		res := o.results[i]
		rc.Append(r.Key, r.Source(), r.Family, r.Meta, &r.Excluded)
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

// matrixTable is matrix.parquet: the accuracy matrices, one row per run ×
// after_task × eval_task, for heatmaps.
func (o *output) matrixTable() (*writers.Table, error) {
	t := writers.NewTable()
	key := t.String("run_key")
	after := t.Int64("after_task")
	eval := t.Int64("eval_task")
	acc := t.Metric("acc")
	t.Reasons()
	for i := range o.res.Runs {
		r := &o.res.Runs[i]
		for _, e := range o.results[i].Matrix {
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

// benchmarksTable is benchmarks.parquet: one row per family ranked across
// benchmarks.
func (o *output) benchmarksTable() (*writers.Table, error) {
	t := writers.NewTable()
	fam := t.String("family")
	rank := t.Metric("average_rank")
	nb := t.Int64("n_benchmarks")
	stat := t.Metric("friedman_statistic")
	p := t.Metric("friedman_p_value")
	cd := t.Metric("critical_difference")
	t.Reasons()
	b := o.benchmarks
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

// report renders report.md: per-run metrics only (no per-key columns), and
// the ranking across benchmarks.
func (o *output) report(h writers.ReportHeader) string {
	var rows []writers.ReportRow
	for _, m := range contilab.Metrics {
		rows = append(rows, writers.ReportRow{Title: m, Metric: m})
	}
	for _, m := range contilab.DiagColumns(o.results) {
		rows = append(rows, writers.ReportRow{Title: m, Metric: m})
	}
	rep := &writers.Report{
		Header:      h,
		Rows:        rows,
		KeyNoun:     "run",
		Families:    o.res.Families,
		SeedReasons: o.res.SeedReasons,
		Notes:       o.notes,
		Columns: func(string) ([]string, func(int, string) family.Cell) {
			return nil, nil
		},
	}
	if b := o.benchmarks; b != nil {
		rep.ExtraNotes = func(footnote func(string) string) string {
			value := func(v protocol.Value) string {
				if v.OK {
					return writers.FormatValue(v)
				}
				return writers.Absent + footnote(v.Reason)
			}
			var sb strings.Builder
			fmt.Fprintf(&sb, "## Across benchmarks\n\nEach family's mean %s per benchmark, ranked per benchmark (1 = best, ties averaged). Friedman statistic %s, p %s; Nemenyi critical difference (α = %g) %s.\n\n",
				writers.Code(o.rank), value(b.FriedmanStatistic), value(b.FriedmanP), b.Alpha, value(b.CriticalDifference))
			header := []string{"Family"}
			for _, name := range b.Benchmarks {
				header = append(header, writers.Text(name))
			}
			header = append(header, "average rank")
			var trs [][]string
			for _, f := range b.Families {
				row := []string{writers.FamilyName(f.Family)}
				for _, s := range f.Scores {
					row = append(row, value(s))
				}
				for len(row) < len(header)-1 {
					row = append(row, writers.Absent+footnote("the family has no run in this benchmark"))
				}
				row = append(row, value(f.AverageRank))
				trs = append(trs, row)
			}
			sb.WriteString(writers.MarkdownTable(header, trs))
			sb.WriteString("\n")
			return sb.String()
		}
	}
	return rep.Render()
}
