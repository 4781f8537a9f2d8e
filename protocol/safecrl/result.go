package safecrl

import (
	"math"

	"github.com/crlbatch/crlbatch/protocol"
)

// TaskMetrics are the per-task metrics of PROTOCOLS 3, in the order of its
// table with mean_episode_cost after total_cost. The names are the output
// column names; each also has a per-run seed value (RunResult.SeedValue).
var TaskMetrics = []string{
	"final_task_reward",
	"total_cost",
	"mean_episode_cost",
	"forgetting",
	"normalized_forgetting",
	"success_rate",
	"forgetting_success",
}

// TaskCounts are the per-task counts (columns of runs.parquet).
var TaskCounts = []string{"n_visits", "n_episodes"}

// RunCounts are the per-run counts (columns of run_summary.parquet),
// aggregated over families like metrics.
var RunCounts = []string{"n_tasks", "n_episodes"}

// HigherIsBetter says which way is better for a metric: true, false, or
// (ok=false) neither, for counts and unknown names.
func HigherIsBetter(metric string) (better, ok bool) {
	switch metric {
	case "total_cost", "mean_episode_cost", "forgetting", "normalized_forgetting",
		"forgetting_success":
		return false, true
	case "final_task_reward", "success_rate":
		return true, true
	}
	return false, false
}

// Reasons an absent value carries. They are part of the output contract
// (Parquet reasons column, Markdown notes): change them only deliberately.
const (
	ReasonNeverRevisited = "task never revisited"
	ReasonZeroRange      = "the reward range is zero"
	ReasonNoCost         = "no cost recorded"
	ReasonNoSuccess      = "no success recorded"
	ReasonNoSuccessPair  = "no revisit has success recorded on both sides"
	ReasonOverflow       = "the value overflows float64"
	ReasonNoTaskValue    = "no task has a value"
	ReasonNoTask         = "the run has no task"
	ReasonUnknownMetric  = "no such metric"
)

// Visit is a maximal block of consecutive rows with the same task, rows
// [StartRow, EndRow).
type Visit struct {
	Task string
	// Ordinal counts the task's visits from 0 (1 is its first revisit).
	Ordinal  int
	StartRow int
	EndRow   int
}

// TaskResult holds one task's metrics.
type TaskResult struct {
	Task string
	// NVisits and NEpisodes count the task's visits and rows.
	NVisits   int
	NEpisodes int
	// NCostEpisodes and NCostVisits count the episodes that record a cost and
	// the visits with at least one such episode (the divisors of
	// mean_episode_cost and total_cost); NSuccessEpisodes the episodes that
	// record a success.
	NCostEpisodes    int
	NCostVisits      int
	NSuccessEpisodes int

	FinalTaskReward      protocol.Value
	TotalCost            protocol.Value
	MeanEpisodeCost      protocol.Value
	Forgetting           protocol.Value
	NormalizedForgetting protocol.Value
	SuccessRate          protocol.Value
	ForgettingSuccess    protocol.Value
	// InitialReward is the mean of the first W returns of the task's first
	// visit, the other end of normalized_forgetting's range (not an output
	// column; absent only on overflow).
	InitialReward protocol.Value
}

// Metric returns the named per-task metric (one of TaskMetrics or
// TaskCounts).
func (t *TaskResult) Metric(name string) (protocol.Value, bool) {
	switch name {
	case "final_task_reward":
		return t.FinalTaskReward, true
	case "total_cost":
		return t.TotalCost, true
	case "mean_episode_cost":
		return t.MeanEpisodeCost, true
	case "forgetting":
		return t.Forgetting, true
	case "normalized_forgetting":
		return t.NormalizedForgetting, true
	case "success_rate":
		return t.SuccessRate, true
	case "forgetting_success":
		return t.ForgettingSuccess, true
	case "n_visits":
		return protocol.Some(float64(t.NVisits)), true
	case "n_episodes":
		return protocol.Some(float64(t.NEpisodes)), true
	}
	return protocol.Value{}, false
}

// RunResult holds every metric of one run.
type RunResult struct {
	Key string
	// WindowEpisodes is the W the run was scored with.
	WindowEpisodes int
	// Tasks in order of first appearance.
	Tasks []TaskResult
	// Visits in row order.
	Visits []Visit

	NTasks    int
	NEpisodes int
}

// RunMetric returns the named per-run count (one of RunCounts).
func (r *RunResult) RunMetric(name string) (protocol.Value, bool) {
	switch name {
	case "n_tasks":
		return protocol.Some(float64(r.NTasks)), true
	case "n_episodes":
		return protocol.Some(float64(r.NEpisodes)), true
	}
	return protocol.Value{}, false
}

// SeedValue is the run's value of a per-task metric (one of TaskMetrics): the
// mean over its tasks in task order, absent ones dropped (PROTOCOLS 1.6 and
// 3). With no task value it is absent with ReasonNoTaskValue and the first
// task's reason; a mean that overflows is absent with ReasonOverflow.
func (r *RunResult) SeedValue(metric string) protocol.Value {
	if _, known := (&TaskResult{}).Metric(metric); !known {
		return protocol.None(ReasonUnknownMetric + ": " + metric)
	}
	sum, n := 0.0, 0
	first := ""
	for i := range r.Tasks {
		v, _ := r.Tasks[i].Metric(metric)
		if v.OK {
			sum += v.V
			n++
		} else if first == "" {
			first = v.Reason
		}
	}
	if n == 0 {
		if first == "" {
			first = ReasonNoTask
		}
		return protocol.None(ReasonNoTaskValue + ": " + first)
	}
	return finite(sum / float64(n))
}

// finite wraps x, or reports it absent when it left the float64 range.
func finite(x float64) protocol.Value {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return protocol.None(ReasonOverflow)
	}
	return protocol.Some(x)
}
