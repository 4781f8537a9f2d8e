package safecrlscore

import (
	"github.com/crlbatch/crlbatch/protocol"
	"github.com/crlbatch/crlbatch/protocol/family"
	"github.com/crlbatch/crlbatch/protocol/safecrl"
	"github.com/crlbatch/crlbatch/scoring"
	"github.com/crlbatch/crlbatch/scoring/records"
	"github.com/crlbatch/crlbatch/writers"
)

// Params is safecrl's crlbatch.params: the protocol, W, then the engine's
// parameters.
type Params struct {
	Protocol       string `json:"protocol"`
	WindowEpisodes int    `json:"window_episodes"`
	scoring.Common
}

// output is what the tables are built from: the runs in canonical order
// with their results.
type output struct {
	res      *scoring.Results
	results  []*safecrl.RunResult
	identity []string
}

// Render builds runs.parquet (run × task), run_summary.parquet (run),
// families.parquet and the report.
func (j *job) Render(res *scoring.Results) (*scoring.Rendered, error) {
	results, err := records.Results[*safecrl.RunResult](records.Scored(res))
	if err != nil {
		return nil, err
	}
	o := &output{res: res, results: results, identity: res.Common.IdentityFields}
	params := Params{Protocol: Name, WindowEpisodes: j.params.WindowEpisodes, Common: res.Common}
	return records.Render(Name, params, res, o.report,
		records.Table{Name: "runs.parquet", Build: o.runsTable},
		records.Table{Name: "run_summary.parquet", Build: o.runSummaryTable},
		records.Families(res))
}

// runsTable is runs.parquet: one row per run × task.
func (o *output) runsTable() (*writers.Table, error) {
	t := writers.NewTable()
	rc := writers.DeclareRunColumns(t, records.Metas(o.res.Runs), o.identity, true)
	task := t.String("task")
	nVisits := t.Int64("n_visits")
	nEpisodes := t.Int64("n_episodes")
	cols := make([]writers.MetricColumn, len(safecrl.TaskMetrics))
	for i, m := range safecrl.TaskMetrics {
		cols[i] = t.Metric(m)
	}
	t.Reasons()
	for i := range o.res.Runs {
		r := &o.res.Runs[i]
		res := o.results[i]
		for ti := range res.Tasks {
			tr := &res.Tasks[ti]
			rc.Append(r.Key, r.Source(), r.Family, r.Meta, &r.Excluded)
			task.Append(tr.Task)
			nVisits.Append(int64(tr.NVisits))
			nEpisodes.Append(int64(tr.NEpisodes))
			for m, name := range safecrl.TaskMetrics {
				v, _ := tr.Metric(name)
				cols[m].Append(v)
			}
			if err := t.EndRow(); err != nil {
				return nil, err
			}
		}
	}
	return t, t.Err()
}

// runSummaryTable is run_summary.parquet: one row per run, with each
// metric's seed value (the mean over tasks).
func (o *output) runSummaryTable() (*writers.Table, error) {
	t := writers.NewTable()
	rc := writers.DeclareRunColumns(t, records.Metas(o.res.Runs), o.identity, true)
	nTasks := t.Int64("n_tasks")
	nEpisodes := t.Int64("n_episodes")
	cols := make([]writers.MetricColumn, len(safecrl.TaskMetrics))
	for i, m := range safecrl.TaskMetrics {
		cols[i] = t.Metric(m)
	}
	t.Reasons()
	for i := range o.res.Runs {
		r := &o.res.Runs[i]
		res := o.results[i]
		rc.Append(r.Key, r.Source(), r.Family, r.Meta, &r.Excluded)
		nTasks.Append(int64(res.NTasks))
		nEpisodes.Append(int64(res.NEpisodes))
		for m, name := range safecrl.TaskMetrics {
			cols[m].Append(res.SeedValue(name))
		}
		if err := t.EndRow(); err != nil {
			return nil, err
		}
	}
	return t, t.Err()
}

// reportRows are the rows of the family tables.
var reportRows = []writers.ReportRow{
	{Title: "Final task reward", Metric: "final_task_reward", PerLabel: true},
	{Title: "Total cost (per visit)", Metric: "total_cost", PerLabel: true},
	{Title: "Mean episode cost", Metric: "mean_episode_cost", PerLabel: true},
	{Title: "Forgetting", Metric: "forgetting", PerLabel: true},
	{Title: "Normalized forgetting", Metric: "normalized_forgetting", PerLabel: true},
	{Title: "Success rate", Metric: "success_rate", PerLabel: true},
	{Title: "Forgetting (success)", Metric: "forgetting_success", PerLabel: true},
	{Title: "Tasks", Metric: "n_tasks"},
	{Title: "Episodes", Metric: "n_episodes"},
}

// report renders report.md: a table per family, its tasks as columns.
func (o *output) report(h writers.ReportHeader) string {
	byFamily := map[string][]*safecrl.RunResult{}
	for i := range o.res.Runs {
		if r := &o.res.Runs[i]; !r.Excluded {
			byFamily[r.Family] = append(byFamily[r.Family], o.results[i])
		}
	}
	index := map[string]int{}
	for i, m := range safecrl.TaskMetrics {
		index[m] = i
	}
	rep := &writers.Report{
		Header:      h,
		Rows:        reportRows,
		KeyNoun:     "task",
		Families:    o.res.Families,
		Notes:       o.res.Notes,
		SeedReasons: o.res.SeedReasons,
		KeyReasons: func(fam, key, metric string) []string {
			return writers.AbsentReasons(func(add func(protocol.Value)) {
				for _, r := range byFamily[fam] {
					for i := range r.Tasks {
						if r.Tasks[i].Task == key {
							v, _ := r.Tasks[i].Metric(metric)
							add(v)
						}
					}
				}
			})
		},
		Columns: func(fam string) ([]string, func(int, string) family.Cell) {
			runs := byFamily[fam]
			sum := family.SummarizeKeyed(len(runs), len(safecrl.TaskMetrics),
				func(r int) []string {
					keys := make([]string, len(runs[r].Tasks))
					for i := range runs[r].Tasks {
						keys[i] = runs[r].Tasks[i].Task
					}
					return keys
				},
				func(r, k, m int) protocol.Value {
					v, _ := runs[r].Tasks[k].Metric(safecrl.TaskMetrics[m])
					return v
				})
			return sum.Keys, func(k int, metric string) family.Cell { return sum.Cells[k][index[metric]] }
		},
	}
	return rep.Render()
}
