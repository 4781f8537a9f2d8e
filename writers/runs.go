package writers

import (
	"strconv"

	"github.com/crlbatch/crlbatch/protocol/family"
)

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

// RunColumns declares and fills the run columns every protocol's run tables
// share: run_key, source, family, the identity fields (seed as int64 when
// every seed is an integer, else null with the value in run_meta; the others
// nullable strings), run_meta and, optionally, excluded.
type RunColumns struct {
	key, source, fam StringColumn
	identity         []string
	ids              []StringColumn // nil entry for seed
	seed             Int64Column
	meta             MapColumn
	excluded         BoolColumn
	seedInt          bool
}

// DeclareRunColumns declares the run columns of t; metas are the runs'
// metadata, in the order their rows will be appended.
func DeclareRunColumns(t *Table, metas []map[string]string, identity []string, withExcluded bool) *RunColumns {
	rc := &RunColumns{
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

// Append appends one row's run columns; excluded is nil when the table has
// no excluded column.
func (rc *RunColumns) Append(key, source, fam string, meta map[string]string, excluded *bool) {
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
	piLo := t.Metric("prob_improvement_ci_low")
	piHi := t.Metric("prob_improvement_ci_high")
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
			// Every row names the baseline it was compared with: "" is the
			// family of runs without a group-by value, as in the family
			// column.
			baseline.Append(r.Baseline)
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
			piLo.Append(r.ProbImprovementCILow)
			piHi.Append(r.ProbImprovementCIHigh)
			if err := t.EndRow(); err != nil {
				return nil, err
			}
		}
	}
	return t, t.Err()
}
