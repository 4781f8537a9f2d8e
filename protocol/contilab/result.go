package contilab

import (
	"strings"

	"github.com/crlbatch/crlbatch/protocol"
)

// Metrics are the per-run metrics of PROTOCOLS 4, matrix metrics first, in
// the order of the seed's two tables. The names are the output column names.
var Metrics = []string{
	"acc",
	"aia",
	"bwt",
	"fwt",
	"forgetting",
	"relative_forgetting",
	"learning_acc",
	"intransigence",
	"min_acc",
	"wc_acc",
	"stability_gap",
	"windowed_forgetting",
	"aaa",
	"lca",
}

// MatrixMetrics are the metrics computed from the accuracy matrix (with the
// initial and joint rows).
var MatrixMetrics = Metrics[:8:8]

// StreamMetrics are the metrics computed from the continual-evaluation stream
// and the learning curve.
var StreamMetrics = Metrics[8:14:14]

// CountMetrics are the per-run counts, aggregated over families like metrics.
var CountMetrics = []string{"n_tasks"}

// DiagPrefix starts the column name of every recorded diagnostic.
const DiagPrefix = "diag_"

// DefaultRankMetric is the metric ranked across benchmarks by default.
const DefaultRankMetric = "acc"

// HigherIsBetter says which way is better for a metric: true, false, or
// (ok=false) neither, for counts and for diagnostics without a known
// direction. Of the diagnostics, diag_effective_rank and diag_srank are
// better high (more usable capacity), diag_dormant_ratio is better low.
func HigherIsBetter(metric string) (better, ok bool) {
	switch metric {
	case "acc", "aia", "bwt", "fwt", "learning_acc", "min_acc", "wc_acc", "aaa", "lca",
		DiagPrefix + "effective_rank", DiagPrefix + "srank":
		return true, true
	case "forgetting", "relative_forgetting", "intransigence", "stability_gap",
		"windowed_forgetting", DiagPrefix + "dormant_ratio":
		return false, true
	}
	return false, false
}

// Reasons an absent value carries. They are part of the output contract
// (Parquet reasons column, Markdown notes): change them only deliberately.
// Where a reason concerns one task, cell or batch, Score appends it after a
// colon: "accuracy-matrix cell missing: after_task 2, eval_task 0".
const (
	ReasonNoMatrix          = "no accuracy-matrix rows"
	ReasonNoStream          = "no continual-evaluation stream rows"
	ReasonNoCurve           = "no learning-curve rows"
	ReasonNoTasks           = "no accuracy-matrix or stream rows to count tasks from"
	ReasonFewerThanTwoTasks = "needs at least 2 tasks"
	ReasonClassIL           = "undefined in Class-IL: a task's classes are masked out before it is learned"
	ReasonNoInitial         = "no initial-accuracy rows"
	ReasonNoJoint           = "no joint-training rows"
	ReasonMissingCell       = "accuracy-matrix cell missing"
	ReasonMissingInitial    = "initial accuracy missing"
	ReasonMissingJoint      = "joint accuracy missing"
	ReasonAllZeroMax        = "every task's best accuracy is 0"
	ReasonNoPointAfter      = "no stream point of the task after it was learned"
	ReasonNoPointDuring     = "no stream point of the task while it was trained"
	ReasonNoPointNext       = "no stream point of the task while the next task was trained"
	ReasonNoLastTaskPoint   = "no stream point of the last task"
	ReasonOneStep           = "the stream has a single step, so no sampling interval"
	ReasonWindowTooShort    = "the window is shorter than the stream's sampling interval"
	ReasonNoWindowPair      = "no two stream points of the task after it was learned lie within one window"
	ReasonNoSeenTask        = "no stream row evaluates a task already being trained"
	ReasonMissingCurve      = "learning-curve point missing"
	ReasonNoDiag            = "diagnostic not recorded in this run"
)

// Diagnostic is one recorded diagnostic of a run, averaged over its rows.
type Diagnostic struct {
	// Name is the sanitized (snake_case) name; Column is DiagPrefix + Name.
	Name   string
	Column string
	// Value is the mean over the name's rows, summed in task order.
	Value protocol.Value
	// N counts the rows averaged.
	N int
}

// RunResult holds every metric of one run.
type RunResult struct {
	Key string
	// Scenario is the scenario in force (from Run.Scenario, else the
	// run's scenario metadata); ScenarioUnknown when neither says.
	Scenario Scenario
	// NTasks is T = 1 + the largest task index of the matrix rows, or of the
	// stream rows when there is no matrix; absent when there is neither.
	NTasks protocol.Value
	// TasksFrom says where T came from: "matrix", "stream" or "".
	TasksFrom string

	Acc                protocol.Value
	AIA                protocol.Value
	BWT                protocol.Value
	FWT                protocol.Value
	Forgetting         protocol.Value
	RelativeForgetting protocol.Value
	LearningAcc        protocol.Value
	Intransigence      protocol.Value
	MinAcc             protocol.Value
	WCAcc              protocol.Value
	StabilityGap       protocol.Value
	WindowedForgetting protocol.Value
	AAA                protocol.Value
	LCA                protocol.Value

	// Diagnostics are the recorded diagnostics in order of first appearance
	// of their sanitized names in Run.Diags.
	Diagnostics []Diagnostic
	// Matrix is the accuracy matrix as recorded, sorted by (after_task,
	// eval_task): the rows of matrix.parquet.
	Matrix []MatrixEntry
	// Rho is the stream's sampling interval ρ (the smallest positive gap
	// between distinct stream steps); 0 when the stream has fewer than two
	// distinct steps.
	Rho int64
	// Notes are findings worth a reader's eye.
	Notes []string
}

// Metric returns the named metric: one of Metrics, CountMetrics, or a
// diagnostic column DiagPrefix+name (absent with ReasonNoDiag when the run
// did not record it). ok is false for any other name.
func (r *RunResult) Metric(name string) (v protocol.Value, ok bool) {
	switch name {
	case "acc":
		return r.Acc, true
	case "aia":
		return r.AIA, true
	case "bwt":
		return r.BWT, true
	case "fwt":
		return r.FWT, true
	case "forgetting":
		return r.Forgetting, true
	case "relative_forgetting":
		return r.RelativeForgetting, true
	case "learning_acc":
		return r.LearningAcc, true
	case "intransigence":
		return r.Intransigence, true
	case "min_acc":
		return r.MinAcc, true
	case "wc_acc":
		return r.WCAcc, true
	case "stability_gap":
		return r.StabilityGap, true
	case "windowed_forgetting":
		return r.WindowedForgetting, true
	case "aaa":
		return r.AAA, true
	case "lca":
		return r.LCA, true
	case "n_tasks":
		return r.NTasks, true
	}
	if d, isDiag := strings.CutPrefix(name, DiagPrefix); isDiag && d != "" && SanitizeName(d) == d {
		for i := range r.Diagnostics {
			if r.Diagnostics[i].Name == d {
				return r.Diagnostics[i].Value, true
			}
		}
		return protocol.None(ReasonNoDiag), true
	}
	return protocol.Value{}, false
}

// DiagColumns lists the diagnostic columns of several runs, in order of first
// appearance (runs in the order given, then each run's own order): the
// diag_<name> columns of runs.parquet.
func DiagColumns(results []*RunResult) []string {
	var out []string
	seen := map[string]bool{}
	for _, r := range results {
		for _, d := range r.Diagnostics {
			if !seen[d.Column] {
				seen[d.Column] = true
				out = append(out, d.Column)
			}
		}
	}
	return out
}
