package skyfallscore

import (
	"github.com/crlbatch/crlbatch/protocol"
	"github.com/crlbatch/crlbatch/protocol/family"
	"github.com/crlbatch/crlbatch/protocol/skyfall"
	"github.com/crlbatch/crlbatch/writers"
)

// runRow is one scored run with what the tables say about it.
type runRow struct {
	Key      string
	Source   string
	Family   string
	Meta     map[string]string
	Excluded bool
	Result   *skyfall.RunResult
}

// output is everything the skyfall tables are built from. Runs are in
// canonical order: families in order of first appearance, then runs.
type output struct {
	Runs     []runRow
	Families *family.Result
	Anchor   string
	Window   string
	// Identity are the run identity fields, the identity columns of the
	// run tables.
	Identity []string
}

func metasOf(runs []runRow) []map[string]string {
	out := make([]map[string]string, len(runs))
	for i := range runs {
		out[i] = runs[i].Meta
	}
	return out
}

// runsTable is runs.parquet: one row per run × label.
func runsTable(o *output) (*writers.Table, error) {
	t := writers.NewTable()
	rc := writers.DeclareRunColumns(t, metasOf(o.Runs), o.Identity, true)
	regime := t.String("regime_id")
	origin := t.String("regime_origin")
	nSteps := t.Int64("n_steps")
	nIntervals := t.Int64("n_intervals")
	metrics := make([]writers.MetricColumn, 0, len(skyfall.LabelMetrics))
	var perInterval writers.ListColumn
	for _, m := range skyfall.LabelMetrics {
		metrics = append(metrics, t.Metric(m))
		if m == "stability_variance" {
			perInterval = t.MetricList("stability_variance_per_interval")
		}
	}
	ub := t.Metric("upper_bound")
	anchor := t.String("anchor")
	window := t.String("window")
	t.Reasons()
	for i := range o.Runs {
		r := &o.Runs[i]
		for li := range r.Result.Labels {
			l := &r.Result.Labels[li]
			rc.Append(r.Key, r.Source, r.Family, r.Meta, &r.Excluded)
			regime.Append(l.Label)
			origin.Append(l.Origin)
			nSteps.Append(int64(l.NSteps))
			nIntervals.Append(int64(l.NIntervals))
			for m, name := range skyfall.LabelMetrics {
				v, _ := l.Metric(name)
				metrics[m].Append(v)
			}
			perInterval.Append(l.StabilityVariancePerInterval)
			ub.Append(l.UpperBound)
			anchor.Append(o.Anchor)
			window.Append(o.Window)
			if err := t.EndRow(); err != nil {
				return nil, err
			}
		}
	}
	return t, t.Err()
}

// intervalsTable is intervals.parquet: one row per interval. Rows of
// an interval are [start_row, end_row), 0-based within the run.
func intervalsTable(o *output) (*writers.Table, error) {
	t := writers.NewTable()
	key := t.String("run_key")
	fam := t.String("family")
	regime := t.String("regime_id")
	origin := t.String("regime_origin")
	idx := t.Int64("interval_index")
	enc := t.Int64("encounter_index")
	start := t.Int64("start_row")
	end := t.Int64("end_row")
	first := t.Int64("first_step")
	last := t.Int64("last_step")
	n := t.Int64("n_steps")
	mean := t.Metric("mean")
	variance := t.Metric("variance")
	adapt := t.Metric("adaptation_speed")
	rec := t.Metric("recovery_time")
	zs := t.Metric("zero_shot_reward")
	tail := t.Metric("tail_mean")
	t.Reasons()
	opt := func(c writers.Int64Column, p *int64) {
		if p == nil {
			c.AppendNull()
		} else {
			c.Append(*p)
		}
	}
	for i := range o.Runs {
		r := &o.Runs[i]
		for _, iv := range r.Result.Intervals {
			key.Append(r.Key)
			fam.Append(r.Family)
			regime.Append(iv.Label)
			origin.Append(iv.Origin)
			idx.Append(int64(iv.Index))
			enc.Append(int64(iv.Encounter))
			start.Append(int64(iv.StartRow))
			end.Append(int64(iv.EndRow))
			opt(first, iv.FirstStep)
			opt(last, iv.LastStep)
			n.Append(int64(iv.NSteps))
			mean.Append(iv.Mean)
			variance.Append(iv.Variance)
			adapt.Append(iv.AdaptationSpeed)
			rec.Append(iv.RecoveryTime)
			zs.Append(iv.ZeroShotReward)
			tail.Append(iv.TailMean)
			if err := t.EndRow(); err != nil {
				return nil, err
			}
		}
	}
	return t, t.Err()
}

// runSummaryTable is run_summary.parquet: one row per run.
func runSummaryTable(o *output) (*writers.Table, error) {
	t := writers.NewTable()
	rc := writers.DeclareRunColumns(t, metasOf(o.Runs), o.Identity, true)
	runMetrics := make([]writers.MetricColumn, len(skyfall.RunMetrics))
	for i, m := range skyfall.RunMetrics {
		runMetrics[i] = t.Metric(m)
	}
	counts := make([]writers.Int64Column, len(skyfall.CountMetrics))
	for i, m := range skyfall.CountMetrics {
		counts[i] = t.Int64(m)
	}
	labels := t.StringList("labels")
	gamma := t.Metric("gamma")
	seedVals := make([]writers.MetricColumn, len(skyfall.LabelMetrics))
	for i, m := range skyfall.LabelMetrics {
		seedVals[i] = t.Metric(m)
	}
	t.Reasons()
	for i := range o.Runs {
		r := &o.Runs[i]
		res := r.Result
		rc.Append(r.Key, r.Source, r.Family, r.Meta, &r.Excluded)
		for j, m := range skyfall.RunMetrics {
			v, _ := res.RunMetric(m)
			runMetrics[j].Append(v)
		}
		for j, m := range skyfall.CountMetrics {
			v, _ := res.RunMetric(m)
			counts[j].Append(int64(v.V))
		}
		names := make([]string, len(res.Labels))
		for j := range res.Labels {
			names[j] = res.Labels[j].Label
		}
		labels.Append(names)
		gamma.Append(protocol.Some(res.Gamma))
		for j, m := range skyfall.LabelMetrics {
			seedVals[j].Append(res.SeedValue(m))
		}
		if err := t.EndRow(); err != nil {
			return nil, err
		}
	}
	return t, t.Err()
}
