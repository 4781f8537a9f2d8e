package pipeline

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"sort"
	"strconv"
	"strings"

	"golang.org/x/sync/errgroup"

	"github.com/crlbatch/crlbatch/protocol/family"
	"github.com/crlbatch/crlbatch/protocol/skyfall"
	"github.com/crlbatch/crlbatch/readers"
	"github.com/crlbatch/crlbatch/upperbound"
	"github.com/crlbatch/crlbatch/writers"
)

// SchemaVersion is crlbatch.schema_version of every Parquet file: raise it
// when a column is renamed or removed.
const SchemaVersion = "1"

// outFile is one result file, fully built in memory before anything is
// written.
type outFile struct {
	name string
	data []byte
	rows *int64
}

// ceilingInfo describes the ceiling in force for params and the report.
type ceilingInfo struct {
	Derivation string             `json:"derivation"`
	Source     string             `json:"source"`
	Value      *float64           `json:"value,omitempty"`
	PerStep    *float64           `json:"per_step,omitempty"`
	FinalStep  *float64           `json:"final_step,omitempty"`
	Values     map[string]float64 `json:"values,omitempty"`
}

// skyfallParams is crlbatch.params: every parameter that shaped a number.
type skyfallParams struct {
	Protocol           string       `json:"protocol"`
	Anchor             string       `json:"anchor"`
	Window             string       `json:"window"`
	Alpha              float64      `json:"alpha"`
	Epsilon            *float64     `json:"epsilon"`
	EpsilonFraction    float64      `json:"epsilon_fraction"`
	EpsilonAbsFloor    float64      `json:"epsilon_abs_floor"`
	TailFraction       float64      `json:"tail_fraction"`
	ZeroShotWindow     int          `json:"zero_shot_window"`
	Gamma              *float64     `json:"gamma"`
	Bound              *ceilingInfo `json:"bound"`
	EpisodeEnd         []string     `json:"episode_end"`
	SolveComponent     *string      `json:"solve_component"`
	Reference          bool         `json:"reference"`
	GroupBy            []string     `json:"group_by"`
	Baseline           *string      `json:"baseline"`
	MinSteps           int          `json:"min_steps"`
	Where              []Filter     `json:"where"`
	IdentityFields     []string     `json:"identity_fields"`
	Patterns           []string     `json:"patterns"`
	BootstrapResamples int          `json:"bootstrap_resamples"`
	BootstrapSeed      uint64       `json:"bootstrap_seed"`
	ConfidenceLevel    float64      `json:"confidence_level"`
}

// traceSource hands over the assembled runs one at a time, in canonical
// order, through each. A run handed to fn may be kept only until fn's work
// on it is done; it is then given back with done, which lends its row
// columns to a later run. release, when set, drops the runs for good once
// the last pass is over.
type traceSource struct {
	each    func(fn func(t *skyfall.Trace) error) error
	pool    *skyfall.TracePool
	release func()
}

func (s traceSource) done(t *skyfall.Trace) { s.pool.Put(t) }

// runInfo is what the reduction and the tables need of a run once its
// columns are gone.
type runInfo struct {
	key     string
	meta    map[string]string
	nSteps  int
	allZero bool
	res     *skyfall.RunResult
}

// skyfall scores the runs and builds every result file. It passes over the
// runs once to score them, and once before that when the ceiling is derived
// from the data (per-label ceilings of a spec, data-relative ceilings).
func (j *job) skyfall(ctx context.Context, src traceSource) ([]outFile, error) {
	cfg := j.cfg
	p := cfg.Skyfall
	ceil, info, err := j.ceiling(src)
	if err != nil {
		return nil, err
	}
	p.Ceiling = ceil
	if cfg.EpisodeEndFromSpec {
		for _, c := range upperbound.EpisodeEndComponents(cfg.Spec) {
			if !contains(p.EpisodeEnd, c) {
				p.EpisodeEnd = append(p.EpisodeEnd, c)
			}
		}
	}

	// Score every run, each into its own slot; at most Concurrency runs are
	// held at once.
	var runsInfo []*runInfo
	total := 0
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(cfg.Concurrency)
	err = src.each(func(t *skyfall.Trace) error {
		if err := gctx.Err(); err != nil {
			return err
		}
		total++
		if !cfg.keep(t.Meta) {
			src.done(t)
			return nil
		}
		ri := &runInfo{key: t.Key, meta: t.Meta, nSteps: t.Len(), allZero: allZero(t.Rewards)}
		if _, constant := t.Meta["gamma"]; t.HasGamma && !constant && p.Gamma == nil {
			j.notes = append(j.notes, fmt.Sprintf("run %s: gamma differs between rows (or is missing from some); the first recorded, %s, discounts its return",
				t.Key, strconv.FormatFloat(t.Gamma, 'g', -1, 64)))
		}
		runsInfo = append(runsInfo, ri)
		g.Go(func() error {
			if err := gctx.Err(); err != nil {
				return err
			}
			var ref *skyfall.Reference
			if r, ok := j.reference(t); ok {
				ref = &skyfall.Reference{Rewards: r}
			}
			res, err := skyfall.Score(t, &p, ref)
			src.done(t)
			if err != nil {
				var miss *skyfall.MissingLabelError
				if errors.As(err, &miss) {
					return Usagef("%s: %v", describeCeilingSource(cfg), err)
				}
				return &DataError{Err: err}
			}
			ri.res = res
			return nil
		})
		return nil
	})
	// A scoring error cancels gctx, which stops src with gctx's error:
	// report the cause, not the cancellation.
	if werr := g.Wait(); werr != nil {
		err = werr
	}
	// Nothing reads the runs after this pass. Their decoded rows and the
	// pooled columns are most of the heap: drop them and collect now, so
	// that the reduction and the writers reuse that memory rather than
	// grow the heap past it (docs/decisions.md).
	src.pool = nil
	if src.release != nil {
		src.release()
	}
	runtime.GC()
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if len(cfg.Where) > 0 {
		j.notes = append(j.notes, fmt.Sprintf("--where kept %d of %d runs", len(runsInfo), total))
		if len(runsInfo) == 0 {
			return nil, &DataError{Err: fmt.Errorf("--where: no run matches %s", describeWhere(cfg.Where))}
		}
	}
	results := make([]*skyfall.RunResult, len(runsInfo))
	for i, ri := range runsInfo {
		results[i] = ri.res
		if cfg.Reference != nil {
			if _, ok := j.referenceFor(ri.key, ri.meta); !ok {
				j.notes = append(j.notes, fmt.Sprintf("run %s has no reference trajectory: its regret is null", ri.key))
			}
			j.notes = append(j.notes, ri.res.Notes...)
		}
	}

	// Reduce to families.
	metrics := skyfallMetrics()
	runs := make([]family.Run, len(runsInfo))
	for i, t := range runsInfo {
		fam, _ := cfg.familyOf(t.meta)
		seed, hasSeed := t.meta["seed"]
		r := family.Run{Key: t.key, Family: fam, Seed: seed, HasSeed: hasSeed, NSteps: t.nSteps}
		if cfg.MinSteps > 0 && t.nSteps < cfg.MinSteps {
			r.Excluded, r.ExcludedWhy = true, fmt.Sprintf("%d rows, fewer than --min-steps %d", t.nSteps, cfg.MinSteps)
		}
		if t.allZero {
			r.Remarks = append(r.Remarks, "earned nothing: every reward is zero")
		}
		if results[i].NIntervals == 1 {
			r.Remarks = append(r.Remarks, "never shifted: a single interval")
		}
		for _, m := range metrics {
			if v, ok := results[i].RunMetric(m.Name); ok {
				r.Values = append(r.Values, v)
			} else {
				r.Values = append(r.Values, results[i].SeedValue(m.Name))
			}
		}
		runs[i] = r
	}
	fopt := family.DefaultOptions()
	fopt.Baseline = cfg.Baseline
	fopt.Resamples = cfg.Resamples
	fopt.Seed = cfg.BootstrapSeed
	fopt.GroupBy = strings.Join(cfg.GroupBy, ",")
	fopt.Each = j.each
	fres, err := family.Aggregate(metrics, runs, fopt)
	if err != nil {
		return nil, err
	}
	j.families = len(fres.Families)
	j.runs = len(runsInfo)

	out := &writers.SkyfallOutput{Families: fres, Anchor: string(p.Anchor), Window: string(p.Window)}
	for _, f := range fres.Families {
		for _, i := range f.Runs {
			t := runsInfo[i]
			out.Runs = append(out.Runs, writers.SkyfallRun{
				Key: t.key, Source: t.meta[readers.SourceField], Family: f.Name, Meta: t.meta,
				Excluded: runs[i].Excluded, Result: results[i],
			})
		}
	}

	params := j.skyfallParams(&p, info, fres)
	pj, err := json.Marshal(params)
	if err != nil {
		return nil, err
	}
	j.params = pj
	md, err := writers.NewMetadata(cfg.Version, "skyfall", SchemaVersion, json.RawMessage(pj))
	if err != nil {
		return nil, err
	}
	var files []outFile
	for _, tb := range []struct {
		name  string
		build func(*writers.SkyfallOutput) (*writers.Table, error)
	}{
		{"runs.parquet", writers.SkyfallRunsTable},
		{"intervals.parquet", writers.SkyfallIntervalsTable},
		{"run_summary.parquet", writers.SkyfallRunSummaryTable},
		{"families.parquet", func(o *writers.SkyfallOutput) (*writers.Table, error) { return writers.FamiliesTable(o.Families) }},
	} {
		t, err := tb.build(out)
		if err != nil {
			return nil, fmt.Errorf("building %s: %w", tb.name, err)
		}
		var buf bytes.Buffer
		if err := writers.WriteParquet(&buf, t, md); err != nil {
			return nil, fmt.Errorf("writing %s: %w", tb.name, err)
		}
		rows := int64(t.NumRows())
		files = append(files, outFile{name: tb.name, data: buf.Bytes(), rows: &rows})
	}
	report := writers.SkyfallReport(writers.ReportHeader{
		Title:    "crlbatch report: skyfall",
		Input:    j.in.String(),
		Protocol: "skyfall",
		Version:  cfg.Version,
		Params:   paramList(params),
		Bound:    boundSentence(info),
	}, out, j.notes)
	files = append(files, outFile{name: "report.md", data: []byte(report)})
	return files, nil
}

// skyfallMetrics lists every metric of run_summary in families.parquet order:
// the per-label seed values, the per-run metrics, the counts.
func skyfallMetrics() []family.Metric {
	var out []family.Metric
	add := func(names []string) {
		for _, n := range names {
			m := family.Metric{Name: n}
			if hib, ok := skyfall.HigherIsBetter(n); ok {
				m.HigherIsBetter = &hib
			}
			out = append(out, m)
		}
	}
	add(skyfall.LabelMetrics)
	add(skyfall.RunMetrics)
	add(skyfall.CountMetrics)
	return out
}

// reference finds a run's reference trajectory: by run key, then run_id.
func (j *job) reference(t *skyfall.Trace) ([]float64, bool) {
	return j.referenceFor(t.Key, t.Meta)
}

func (j *job) referenceFor(key string, meta map[string]string) ([]float64, bool) {
	if j.cfg.Reference == nil {
		return nil, false
	}
	if r, ok := j.cfg.Reference[key]; ok {
		return r, true
	}
	if id, ok := meta["run_id"]; ok {
		if r, ok := j.cfg.Reference[id]; ok {
			return r, true
		}
	}
	return nil, false
}

// ceiling builds R_ub from the configured source; ceilings derived from the
// data take one pass over the runs kept by --where.
func (j *job) ceiling(src traceSource) (*skyfall.Ceiling, *ceilingInfo, error) {
	cfg := j.cfg
	switch {
	case cfg.BoundScalar != nil:
		x := *cfg.BoundScalar
		return skyfall.ScalarCeiling(x, upperbound.DerivationExplicit),
			&ceilingInfo{Derivation: upperbound.DerivationExplicit, Source: "--bound", Value: &x}, nil
	case cfg.BoundMap != nil:
		// A label missing from the map fails the run that has it, as a
		// usage error, when it is scored.
		return skyfall.MapCeiling(cfg.BoundMap, upperbound.DerivationExplicit),
			&ceilingInfo{Derivation: upperbound.DerivationExplicit, Source: "--bound-map " + cfg.BoundMapURL, Values: cfg.BoundMap}, nil
	case cfg.CeilingMode == CeilingDataRelative:
		// The best reward observed per label over every run kept.
		m := map[string]float64{}
		err := src.each(func(t *skyfall.Trace) error {
			defer src.done(t)
			if !cfg.keep(t.Meta) {
				return nil
			}
			for i, r := range t.Rewards {
				l := t.LabelNames[t.Labels[i]]
				if best, ok := m[l]; !ok || r > best {
					m[l] = r
				}
			}
			return nil
		})
		if err != nil {
			return nil, nil, err
		}
		return skyfall.MapCeiling(m, upperbound.DerivationDataRelative),
			&ceilingInfo{Derivation: upperbound.DerivationDataRelative, Source: "--ceiling data_relative", Values: m}, nil
	case cfg.Spec != nil:
		b, err := upperbound.Analytic(cfg.Spec)
		if err != nil {
			return nil, nil, Usagef("--spec %s: %v", cfg.SpecName, err)
		}
		ps, fs := b.PerStep, b.FinalStep
		info := &ceilingInfo{Derivation: b.Derivation, PerStep: &ps, FinalStep: &fs}
		switch cfg.CeilingMode {
		case CeilingPerStep:
			info.Source = "--spec " + cfg.SpecName + " --ceiling per_step"
			info.Value = &ps
			return skyfall.ScalarCeiling(ps, b.Derivation), info, nil
		case CeilingFinalStep:
			info.Source = "--spec " + cfg.SpecName + " --ceiling final_step"
			info.Value = &fs
			return skyfall.ScalarCeiling(fs, b.Derivation), info, nil
		default:
			lb, err := upperbound.NewLabelBounds(b, cfg.Spec)
			if err != nil {
				return nil, nil, &DataError{Err: err}
			}
			err = src.each(func(t *skyfall.Trace) error {
				defer src.done(t)
				if !cfg.keep(t.Meta) {
					return nil
				}
				if err := lb.Add(t); err != nil {
					return &DataError{Err: err}
				}
				return nil
			})
			if err != nil {
				return nil, nil, err
			}
			lb.Finish()
			info.Source = "--spec " + cfg.SpecName + " --ceiling by_configuration"
			info.Values = lb.Map()
			return skyfall.MapCeiling(info.Values, b.Derivation), info, nil
		}
	}
	return nil, nil, nil
}

func (j *job) skyfallParams(p *skyfall.Params, info *ceilingInfo, fres *family.Result) skyfallParams {
	cfg := j.cfg
	sp := skyfallParams{
		Protocol:           "skyfall",
		Anchor:             string(p.Anchor),
		Window:             string(p.Window),
		Alpha:              p.AlphaValue(),
		Epsilon:            p.Epsilon,
		EpsilonFraction:    p.EpsilonFraction,
		EpsilonAbsFloor:    p.EpsilonAbsFloor,
		TailFraction:       p.TailFraction,
		ZeroShotWindow:     p.ZeroShotWindow,
		Gamma:              p.Gamma,
		Bound:              info,
		EpisodeEnd:         nonNil(p.EpisodeEnd),
		Reference:          cfg.Reference != nil,
		GroupBy:            cfg.GroupBy,
		MinSteps:           cfg.MinSteps,
		Where:              cfg.Where,
		IdentityFields:     cfg.Reader.IdentityFields,
		Patterns:           cfg.Patterns,
		BootstrapResamples: cfg.Resamples,
		BootstrapSeed:      cfg.BootstrapSeed,
		ConfidenceLevel:    family.DefaultOptions().Level,
	}
	if sp.IdentityFields == nil {
		sp.IdentityFields = readers.DefaultIdentityFields
	}
	if sp.Where == nil {
		sp.Where = []Filter{}
	}
	if p.SolveComponent != "" {
		s := p.SolveComponent
		sp.SolveComponent = &s
	}
	if fres.BaselineFound || fres.Baseline != "" {
		b := fres.Baseline
		sp.Baseline = &b
	}
	return sp
}

// paramList renders the parameters for the report header, in a fixed order.
func paramList(p skyfallParams) []writers.KV {
	f := func(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
	opt := func(x *float64, absent string) string {
		if x == nil {
			return absent
		}
		return f(*x)
	}
	bound := "none"
	if p.Bound != nil {
		bound = p.Bound.Derivation + " (" + p.Bound.Source + ")"
	}
	baseline := "none"
	if p.Baseline != nil {
		baseline = *p.Baseline
	}
	solve := "none"
	if p.SolveComponent != nil {
		solve = *p.SolveComponent
	}
	list := func(xs []string) string {
		if len(xs) == 0 {
			return "none"
		}
		return strings.Join(xs, ",")
	}
	return []writers.KV{
		{Key: "anchor", Value: p.Anchor},
		{Key: "window", Value: p.Window},
		{Key: "alpha", Value: f(p.Alpha)},
		{Key: "epsilon", Value: opt(p.Epsilon, "0.5·R_ub (ceiling anchor)")},
		{Key: "epsilon_fraction", Value: f(p.EpsilonFraction)},
		{Key: "epsilon_abs_floor", Value: f(p.EpsilonAbsFloor)},
		{Key: "tail_fraction", Value: f(p.TailFraction)},
		{Key: "zero_shot_window", Value: strconv.Itoa(p.ZeroShotWindow)},
		{Key: "gamma", Value: opt(p.Gamma, "recorded, else 0.99")},
		{Key: "bound", Value: bound},
		{Key: "episode_end", Value: list(p.EpisodeEnd)},
		{Key: "solve_component", Value: solve},
		{Key: "reference", Value: strconv.FormatBool(p.Reference)},
		{Key: "group_by", Value: list(p.GroupBy)},
		{Key: "baseline", Value: baseline},
		{Key: "min_steps", Value: strconv.Itoa(p.MinSteps)},
		{Key: "where", Value: describeWhere(p.Where)},
		{Key: "identity_fields", Value: list(p.IdentityFields)},
		{Key: "patterns", Value: list(p.Patterns)},
		{Key: "bootstrap_resamples", Value: strconv.Itoa(p.BootstrapResamples)},
		{Key: "bootstrap_seed", Value: strconv.FormatUint(p.BootstrapSeed, 10)},
		{Key: "confidence_level", Value: f(p.ConfidenceLevel)},
	}
}

func boundSentence(info *ceilingInfo) string {
	if info == nil {
		return "No ceiling was supplied: the performance gap is null throughout, and adaptation and recovery are anchored to each segment's own behaviour."
	}
	f := func(x float64) string { return strconv.FormatFloat(x, 'f', 4, 64) }
	var b strings.Builder
	fmt.Fprintf(&b, "Derivation `%s`, from `%s`.", info.Derivation, info.Source)
	if info.PerStep != nil {
		fmt.Fprintf(&b, " Per step %s, final step %s.", f(*info.PerStep), f(*info.FinalStep))
	}
	if info.Value != nil {
		fmt.Fprintf(&b, " Every label's ceiling is %s.", f(*info.Value))
	}
	if info.Values != nil {
		keys := make([]string, 0, len(info.Values))
		for k := range info.Values {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = fmt.Sprintf("`%s` %s", k, f(info.Values[k]))
		}
		fmt.Fprintf(&b, " Per-label ceilings: %s.", strings.Join(parts, ", "))
	}
	if info.Derivation == upperbound.DerivationDataRelative {
		b.WriteString(" A data-relative ceiling is the best reward observed in these runs: it moves with the policies measured and is no basis for comparing families.")
	}
	return b.String()
}

func describeWhere(fs []Filter) string {
	if len(fs) == 0 {
		return "none"
	}
	parts := make([]string, len(fs))
	for i, f := range fs {
		parts[i] = f.Field + "=" + strings.Join(f.Values, "|")
	}
	return strings.Join(parts, ",")
}

func describeCeilingSource(cfg *Config) string {
	switch {
	case cfg.BoundMap != nil:
		return "--bound-map " + cfg.BoundMapURL
	case cfg.Spec != nil:
		return "--spec " + cfg.SpecName
	}
	return "ceiling"
}

func allZero(xs []float64) bool {
	for _, x := range xs {
		if x != 0 {
			return false
		}
	}
	return true
}

func contains(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}

func nonNil(xs []string) []string {
	if xs == nil {
		return []string{}
	}
	return xs
}
