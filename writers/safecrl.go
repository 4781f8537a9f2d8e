package writers

import (
	"github.com/crlbatch/crlbatch/protocol"
	"github.com/crlbatch/crlbatch/protocol/family"
	"github.com/crlbatch/crlbatch/protocol/safecrl"
)

// SafecrlIdentity are the identity columns of safecrl's run tables.
var SafecrlIdentity = []string{"run_id", "seed", "algorithm_id", "policy_id"}

// SafecrlRun is one scored safecrl run.
type SafecrlRun struct {
	Key      string
	Source   string
	Family   string
	Meta     map[string]string
	Excluded bool
	Result   *safecrl.RunResult
}

// SafecrlOutput is what safecrl's tables are built from, runs in canonical
// order (families, then runs).
type SafecrlOutput struct {
	Runs     []SafecrlRun
	Families *family.Result
}

func safecrlMetas(runs []SafecrlRun) []map[string]string {
	out := make([]map[string]string, len(runs))
	for i := range runs {
		out[i] = runs[i].Meta
	}
	return out
}

// SafecrlRunsTable is runs.parquet: one row per run × task.
func SafecrlRunsTable(o *SafecrlOutput) (*Table, error) {
	t := NewTable()
	rc := declareRunColumns(t, safecrlMetas(o.Runs), SafecrlIdentity, true)
	task := t.String("task")
	nVisits := t.Int64("n_visits")
	nEpisodes := t.Int64("n_episodes")
	cols := make([]MetricColumn, len(safecrl.TaskMetrics))
	for i, m := range safecrl.TaskMetrics {
		cols[i] = t.Metric(m)
	}
	t.Reasons()
	for i := range o.Runs {
		r := &o.Runs[i]
		for ti := range r.Result.Tasks {
			tr := &r.Result.Tasks[ti]
			rc.append(r.Key, r.Source, r.Family, r.Meta, &r.Excluded)
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

// SafecrlRunSummaryTable is run_summary.parquet: one row per run, with each
// metric's seed value (the mean over tasks).
func SafecrlRunSummaryTable(o *SafecrlOutput) (*Table, error) {
	t := NewTable()
	rc := declareRunColumns(t, safecrlMetas(o.Runs), SafecrlIdentity, true)
	nTasks := t.Int64("n_tasks")
	nEpisodes := t.Int64("n_episodes")
	cols := make([]MetricColumn, len(safecrl.TaskMetrics))
	for i, m := range safecrl.TaskMetrics {
		cols[i] = t.Metric(m)
	}
	t.Reasons()
	for i := range o.Runs {
		r := &o.Runs[i]
		rc.append(r.Key, r.Source, r.Family, r.Meta, &r.Excluded)
		nTasks.Append(int64(r.Result.NTasks))
		nEpisodes.Append(int64(r.Result.NEpisodes))
		for m, name := range safecrl.TaskMetrics {
			cols[m].Append(r.Result.SeedValue(name))
		}
		if err := t.EndRow(); err != nil {
			return nil, err
		}
	}
	return t, t.Err()
}

// SafecrlReportRows are the rows of safecrl's family tables.
var SafecrlReportRows = []ReportRow{
	{"Final task reward", "final_task_reward", true},
	{"Total cost (per visit)", "total_cost", true},
	{"Mean episode cost", "mean_episode_cost", true},
	{"Forgetting", "forgetting", true},
	{"Normalized forgetting", "normalized_forgetting", true},
	{"Success rate", "success_rate", true},
	{"Forgetting (success)", "forgetting_success", true},
	{"Tasks", "n_tasks", false},
	{"Episodes", "n_episodes", false},
}

// SafecrlReport renders report.md for safecrl.
func SafecrlReport(h ReportHeader, o *SafecrlOutput, notes []string) string {
	byFamily := map[string][]*safecrl.RunResult{}
	for i := range o.Runs {
		if r := &o.Runs[i]; !r.Excluded {
			byFamily[r.Family] = append(byFamily[r.Family], r.Result)
		}
	}
	index := map[string]int{}
	for i, m := range safecrl.TaskMetrics {
		index[m] = i
	}
	rep := &Report{
		Header:   h,
		Rows:     SafecrlReportRows,
		KeyNoun:  "task",
		Families: o.Families,
		Notes:    notes,
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
