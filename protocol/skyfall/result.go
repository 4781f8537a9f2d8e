package skyfall

import "github.com/crlbatch/crlbatch/protocol"

// LabelMetrics are the per-label metrics of PROTOCOLS 1.4, in the order of the
// seed's table. The names are the output column names.
var LabelMetrics = []string{
	"per_configuration_reward",
	"adaptation_speed",
	"recovery_time",
	"forgetting",
	"stability_variance",
	"performance_gap",
	"zero_shot_reward",
	"settled_reward",
	"settled_reward_policy",
	"effective_rank",
}

// RunMetrics are the per-run metrics of PROTOCOLS 1.5 that are numbers.
var RunMetrics = []string{
	"return_discounted",
	"return_undiscounted",
	"invalid_action_rate",
	"solve_rate",
	"regret",
	"effective_rank_run",
}

// CountMetrics are the per-run counts, aggregated over families like metrics.
var CountMetrics = []string{"n_steps", "n_intervals", "n_shifts", "n_labels"}

// HigherIsBetter says which way is better for a metric: true, false, or
// (ok=false) neither, for counts.
func HigherIsBetter(metric string) (better, ok bool) {
	switch metric {
	case "adaptation_speed", "recovery_time", "forgetting", "stability_variance",
		"performance_gap", "regret", "invalid_action_rate":
		return false, true
	case "per_configuration_reward", "zero_shot_reward", "settled_reward",
		"settled_reward_policy", "effective_rank", "return_discounted",
		"return_undiscounted", "solve_rate", "effective_rank_run":
		return true, true
	}
	return false, false
}

// LabelResult holds one label's metrics.
type LabelResult struct {
	Label  string
	Origin string
	// NSteps and NIntervals count the label's rows and intervals.
	NSteps     int
	NIntervals int

	PerConfigurationReward protocol.Value
	AdaptationSpeed        protocol.Value
	RecoveryTime           protocol.Value
	Forgetting             protocol.Value
	StabilityVariance      protocol.Value
	PerformanceGap         protocol.Value
	ZeroShotReward         protocol.Value
	SettledReward          protocol.Value
	SettledRewardPolicy    protocol.Value
	EffectiveRank          protocol.Value
	// StabilityVariancePerInterval has one sample variance per interval of the
	// label, in time order.
	StabilityVariancePerInterval []protocol.Value
	// UpperBound is R_ub,k, absent without a ceiling.
	UpperBound protocol.Value
}

// Metric returns the named per-label metric (one of LabelMetrics).
func (l *LabelResult) Metric(name string) (protocol.Value, bool) {
	switch name {
	case "per_configuration_reward":
		return l.PerConfigurationReward, true
	case "adaptation_speed":
		return l.AdaptationSpeed, true
	case "recovery_time":
		return l.RecoveryTime, true
	case "forgetting":
		return l.Forgetting, true
	case "stability_variance":
		return l.StabilityVariance, true
	case "performance_gap":
		return l.PerformanceGap, true
	case "zero_shot_reward":
		return l.ZeroShotReward, true
	case "settled_reward":
		return l.SettledReward, true
	case "settled_reward_policy":
		return l.SettledRewardPolicy, true
	case "effective_rank":
		return l.EffectiveRank, true
	}
	return protocol.Value{}, false
}

// IntervalResult holds one interval's values. Rows are [StartRow, EndRow).
type IntervalResult struct {
	Label     string
	Origin    string
	Index     int
	Encounter int
	StartRow  int
	EndRow    int
	FirstStep *int64
	LastStep  *int64
	NSteps    int

	Mean            protocol.Value
	Variance        protocol.Value
	AdaptationSpeed protocol.Value
	RecoveryTime    protocol.Value
	ZeroShotReward  protocol.Value
	// TailMean is the mean of the interval's final TailCount rows.
	TailMean protocol.Value
}

// RunResult holds every metric of one run.
type RunResult struct {
	Key       string
	Labels    []LabelResult
	Intervals []IntervalResult

	ReturnDiscounted   protocol.Value
	ReturnUndiscounted protocol.Value
	InvalidActionRate  protocol.Value
	SolveRate          protocol.Value
	Regret             protocol.Value
	EffectiveRankRun   protocol.Value

	NSteps     int
	NIntervals int
	NShifts    int
	NLabels    int
	// Gamma is the discount return_discounted used.
	Gamma float64
	// Notes are findings worth a reader's eye (a reference of another length).
	Notes []string
	// Uncarried lists, in increasing bytewise order, the episode-end and
	// solve components of Params that no row of the run carried (as
	// Trace.Uncarried says): they count as 0 on every row.
	Uncarried []string
}

// RunMetric returns the named per-run metric (one of RunMetrics or
// CountMetrics).
func (r *RunResult) RunMetric(name string) (protocol.Value, bool) {
	switch name {
	case "return_discounted":
		return r.ReturnDiscounted, true
	case "return_undiscounted":
		return r.ReturnUndiscounted, true
	case "invalid_action_rate":
		return r.InvalidActionRate, true
	case "solve_rate":
		return r.SolveRate, true
	case "regret":
		return r.Regret, true
	case "effective_rank_run":
		return r.EffectiveRankRun, true
	case "n_steps":
		return protocol.Some(float64(r.NSteps)), true
	case "n_intervals":
		return protocol.Some(float64(r.NIntervals)), true
	case "n_shifts":
		return protocol.Some(float64(r.NShifts)), true
	case "n_labels":
		return protocol.Some(float64(r.NLabels)), true
	}
	return protocol.Value{}, false
}

// SeedValue is the run's value of a per-label metric: the mean over its
// labels, absent ones dropped (PROTOCOLS 1.6).
func (r *RunResult) SeedValue(metric string) protocol.Value {
	vals := make([]protocol.Value, 0, len(r.Labels))
	for i := range r.Labels {
		v, _ := r.Labels[i].Metric(metric)
		vals = append(vals, v)
	}
	return protocol.MeanOfPresent(vals, ReasonNoLabelValue+": "+protocol.FirstReason(vals, "the run has no label"))
}
