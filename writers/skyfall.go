package writers

import (
	"strconv"

	"github.com/crlbatch/crlbatch/protocol"
	"github.com/crlbatch/crlbatch/protocol/family"
	"github.com/crlbatch/crlbatch/protocol/skyfall"
)

// SkyfallRun is one scored run with what the tables say about it.
type SkyfallRun struct {
	Key      string
	Source   string
	Family   string
	Meta     map[string]string
	Excluded bool
	Result   *skyfall.RunResult
}

// SkyfallOutput is everything the skyfall tables are built from. Runs are in
// canonical order: families in order of first appearance, then runs.
type SkyfallOutput struct {
	Runs     []SkyfallRun
	Families *family.Result
	Anchor   string
	Window   string
}

// SkyfallIdentity are the identity columns of skyfall's run tables.
var SkyfallIdentity = []string{"run_id", "seed", "algorithm_id", "policy_id", "task"}

// seedColumn decides whether seed is an int64 column: only when every run
// that has a seed has an integer one that fits.
func seedColumn(metas []map[string]string) bool {
	for _, m := range metas {
		if s, ok := m["seed"]; ok {
			if _, err := strconv.ParseInt(s, 10, 64); err != nil {
				return false
			}
		}
	}
	return true
}

// runColumns declares and fills the run columns every protocol's run tables
// share: run_key, source, family, the identity fields (seed as int64 when
// every seed is an integer, else null with the value in run_meta; the others
// nullable strings), run_meta and, optionally, excluded.
type runColumns struct {
	key, source, fam StringColumn
	identity         []string
	ids              []StringColumn // nil entry for seed
	seed             Int64Column
	meta             MapColumn
	excluded         BoolColumn
	seedInt          bool
}

func declareRunColumns(t *Table, metas []map[string]string, identity []string, withExcluded bool) *runColumns {
	rc := &runColumns{
		key:      t.String("run_key"),
		source:   t.String("source"),
		fam:      t.String("family"),
		identity: identity,
	}
	for _, f := range identity {
		if f == "seed" {
			rc.seed = t.Int64("seed")
			rc.ids = append(rc.ids, StringColumn{})
		} else {
			rc.ids = append(rc.ids, t.NullableString(f))
		}
	}
	rc.meta = t.Map("run_meta")
	if withExcluded {
		rc.excluded = t.Bool("excluded")
	}
	rc.seedInt = seedColumn(metas)
	return rc
}

func (rc *runColumns) append(key, source, fam string, meta map[string]string, excluded *bool) {
	rc.key.Append(key)
	rc.source.Append(source)
	rc.fam.Append(fam)
	for i, f := range rc.identity {
		v, ok := meta[f]
		if f == "seed" {
			if ok && rc.seedInt {
				n, _ := strconv.ParseInt(v, 10, 64)
				rc.seed.Append(n)
			} else {
				rc.seed.AppendNull()
			}
			continue
		}
		if ok {
			rc.ids[i].Append(v)
		} else {
			rc.ids[i].AppendNull()
		}
	}
	rc.meta.AppendMap(meta)
	if excluded != nil {
		rc.excluded.Append(*excluded)
	}
}

func metasOf(runs []SkyfallRun) []map[string]string {
	out := make([]map[string]string, len(runs))
	for i := range runs {
		out[i] = runs[i].Meta
	}
	return out
}

// SkyfallRunsTable is runs.parquet: one row per run × label.
func SkyfallRunsTable(o *SkyfallOutput) (*Table, error) {
	t := NewTable()
	rc := declareRunColumns(t, metasOf(o.Runs), SkyfallIdentity, true)
	regime := t.String("regime_id")
	origin := t.String("regime_origin")
	nSteps := t.Int64("n_steps")
	nIntervals := t.Int64("n_intervals")
	metrics := make([]MetricColumn, 0, len(skyfall.LabelMetrics))
	var perInterval ListColumn
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
			rc.append(r.Key, r.Source, r.Family, r.Meta, &r.Excluded)
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

// SkyfallIntervalsTable is intervals.parquet: one row per interval. Rows of
// an interval are [start_row, end_row), 0-based within the run.
func SkyfallIntervalsTable(o *SkyfallOutput) (*Table, error) {
	t := NewTable()
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
	opt := func(c Int64Column, p *int64) {
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

// SkyfallRunSummaryTable is run_summary.parquet: one row per run.
func SkyfallRunSummaryTable(o *SkyfallOutput) (*Table, error) {
	t := NewTable()
	rc := declareRunColumns(t, metasOf(o.Runs), SkyfallIdentity, true)
	runMetrics := make([]MetricColumn, len(skyfall.RunMetrics))
	for i, m := range skyfall.RunMetrics {
		runMetrics[i] = t.Metric(m)
	}
	counts := make([]Int64Column, len(skyfall.CountMetrics))
	for i, m := range skyfall.CountMetrics {
		counts[i] = t.Int64(m)
	}
	labels := t.StringList("labels")
	gamma := t.Metric("gamma")
	seedVals := make([]MetricColumn, len(skyfall.LabelMetrics))
	for i, m := range skyfall.LabelMetrics {
		seedVals[i] = t.Metric(m)
	}
	t.Reasons()
	for i := range o.Runs {
		r := &o.Runs[i]
		res := r.Result
		rc.append(r.Key, r.Source, r.Family, r.Meta, &r.Excluded)
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

// FamiliesTable is families.parquet: one row per family × metric, for every
// protocol.
func FamiliesTable(res *family.Result) (*Table, error) {
	t := NewTable()
	fam := t.String("family")
	metric := t.String("metric")
	hib := t.Bool("higher_is_better")
	n := t.Int64("n")
	mean := t.Metric("mean")
	std := t.Metric("std")
	mn := t.Metric("min")
	mx := t.Metric("max")
	median := t.Metric("median")
	iqm := t.Metric("iqm")
	ciLo := t.Metric("ci_low")
	ciHi := t.Metric("ci_high")
	iqmLo := t.Metric("iqm_ci_low")
	iqmHi := t.Metric("iqm_ci_high")
	baseline := t.NullableString("baseline")
	adv := t.Metric("relative_adaptation_advantage")
	nPairs := t.Int64("n_pairs")
	test := t.NullableString("test")
	p := t.Metric("p_value")
	padj := t.Metric("p_value_adjusted")
	minP := t.Metric("min_p")
	warn := t.Bool("power_warning")
	dMean := t.Metric("diff_mean")
	dLo := t.Metric("diff_ci_low")
	dHi := t.Metric("diff_ci_high")
	pi := t.Metric("prob_improvement")
	t.Reasons()
	for _, f := range res.Families {
		for _, r := range f.Rows {
			fam.Append(r.Family)
			metric.Append(r.Metric)
			if r.HigherIsBetter == nil {
				hib.AppendNull()
			} else {
				hib.Append(*r.HigherIsBetter)
			}
			n.Append(int64(r.N))
			mean.Append(r.Mean)
			std.Append(r.Std)
			mn.Append(r.Min)
			mx.Append(r.Max)
			median.Append(r.Median)
			iqm.Append(r.IQM)
			ciLo.Append(r.CILow)
			ciHi.Append(r.CIHigh)
			iqmLo.Append(r.IQMCILow)
			iqmHi.Append(r.IQMCIHigh)
			if r.Baseline == "" {
				baseline.AppendNull()
			} else {
				baseline.Append(r.Baseline)
			}
			adv.Append(r.RelativeAdaptationAdvantage)
			nPairs.Append(int64(r.NPairs))
			if r.Test == "" {
				test.AppendNull()
			} else {
				test.Append(r.Test)
			}
			p.Append(r.PValue)
			padj.Append(r.PValueAdjusted)
			minP.Append(r.MinP)
			if r.Test == "" {
				warn.AppendNull()
			} else {
				warn.Append(r.PowerWarning)
			}
			dMean.Append(r.DiffMean)
			dLo.Append(r.DiffCILow)
			dHi.Append(r.DiffCIHigh)
			pi.Append(r.ProbImprovement)
			if err := t.EndRow(); err != nil {
				return nil, err
			}
		}
	}
	return t, t.Err()
}
