package skyfallscore

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/crlbatch/crlbatch/figures"
	"github.com/crlbatch/crlbatch/protocol"
	"github.com/crlbatch/crlbatch/protocol/family"
	"github.com/crlbatch/crlbatch/protocol/skyfall"
	"github.com/crlbatch/crlbatch/scoring"
	"github.com/crlbatch/crlbatch/upperbound"
)

// job is a skyfall job: its parameters, the ceiling once known, and the
// decoder of its traces.
type job struct {
	cfg  Config
	p    skyfall.Params // cfg.Params with the ceiling and the spec's episode-end components
	info *ceilingInfo
	dec  *decoder
	// curves are the families' reward curves, folded as runs are scored
	// (figures.go).
	curves curves
}

// NewJob checks cfg and returns its job.
func NewJob(cfg Config, env scoring.Env) (scoring.Job, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	j := &job{cfg: cfg, p: cfg.Params}
	ropts := env.Reader
	ropts.Protocol = Name
	ropts.Components = cfg.components()
	j.dec = &decoder{opts: ropts, max: env.Concurrency + 1}
	if cfg.EpisodeEndFromSpec {
		for _, c := range upperbound.EpisodeEndComponents(cfg.Spec) {
			if !slices.Contains(j.p.EpisodeEnd, c) {
				j.p.EpisodeEnd = append(j.p.EpisodeEnd, c)
			}
		}
	}
	return j, nil
}

// check validates a skyfall configuration, returning a *UsageError.
func (c *Config) check() error {
	if err := c.Params.Check(); err != nil {
		return &scoring.UsageError{Err: err}
	}
	if c.BoundScalar != nil && (math.IsNaN(*c.BoundScalar) || math.IsInf(*c.BoundScalar, 0)) {
		return scoring.Usagef("--bound %v: want a finite number", *c.BoundScalar)
	}
	sources := 0
	if c.BoundScalar != nil {
		sources++
	}
	if c.BoundMap != nil {
		sources++
	}
	if c.Spec != nil {
		sources++
	}
	if sources > 1 {
		return scoring.Usagef("--bound, --bound-map and --spec are alternatives: give one")
	}
	switch c.CeilingMode {
	case "":
	case CeilingByConfiguration, CeilingPerStep, CeilingFinalStep:
		if c.Spec == nil {
			return scoring.Usagef("--ceiling %s needs --spec", c.CeilingMode)
		}
	case CeilingDataRelative:
		if c.BoundScalar != nil || c.BoundMap != nil {
			return scoring.Usagef("--ceiling data_relative derives its own ceiling: drop --bound/--bound-map")
		}
	default:
		return scoring.Usagef("--ceiling %q: want by_configuration, per_step, final_step or data_relative", c.CeilingMode)
	}
	if c.EpisodeEndFromSpec && c.Spec == nil {
		return scoring.Usagef("--episode-end-from-spec needs --spec")
	}
	if c.Params.Anchor == skyfall.AnchorCeiling && sources == 0 && c.CeilingMode != CeilingDataRelative {
		return scoring.Usagef("--anchor ceiling needs a ceiling: give --bound, --bound-map or --spec")
	}
	for k, v := range c.BoundMap {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return scoring.Usagef("--bound-map: label %q has a ceiling that is not a finite number", k)
		}
	}
	return nil
}

// components are the reward components the reader must keep.
func (c *Config) components() []string {
	var out []string
	add := func(n string) {
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	for _, n := range c.Params.EpisodeEnd {
		add(n)
	}
	if c.Params.SolveComponent != "" {
		add(c.Params.SolveComponent)
	}
	if c.Spec != nil {
		for _, n := range upperbound.EpisodeEndComponents(c.Spec) {
			add(n)
		}
	}
	return out
}

func (j *job) Decoder() scoring.Decoder { return j.dec }

func (j *job) AdvantageMetric() string { return family.DefaultOptions().AdvantageMetric }

// Check finds nothing beyond the rows: a skyfall run's problems depend on
// score's flags (a ceiling missing a label).
func (j *job) Check(*scoring.Run) error { return nil }

// Score scores one trace.
func (j *job) Score(run *scoring.Run) (*scoring.Scored, error) {
	t := run.Data.(*skyfall.Trace)
	s := &scoring.Scored{Key: t.Key, Meta: t.Meta, Rows: t.Len()}
	if _, constant := t.Meta["gamma"]; t.HasGamma && !constant && j.p.Gamma == nil {
		s.DataNotes = append(s.DataNotes, fmt.Sprintf("run %s: gamma differs between rows (or is missing from some); the first recorded, %s, discounts its return",
			t.Key, strconv.FormatFloat(t.Gamma, 'g', -1, 64)))
	}
	var ref *skyfall.Reference
	r, hasRef := j.reference(t.Key, t.Meta)
	if hasRef {
		ref = &skyfall.Reference{Rewards: r}
	}
	res, err := skyfall.Score(t, &j.p, ref)
	if err != nil {
		var miss *skyfall.MissingLabelError
		if errors.As(err, &miss) {
			return nil, scoring.Usagef("%s: %v", j.describeCeilingSource(), err)
		}
		return nil, &scoring.DataError{Err: err}
	}
	if allZero(t.Rewards) {
		s.Remarks = append(s.Remarks, "earned nothing: every reward is zero")
	}
	if res.NIntervals == 1 {
		s.Remarks = append(s.Remarks, "never shifted: a single interval")
	}
	if j.cfg.Reference != nil {
		if !hasRef {
			s.Notes = append(s.Notes, fmt.Sprintf("run %s has no reference trajectory: its regret is null", t.Key))
		}
		s.Notes = append(s.Notes, res.Notes...)
	}
	metrics := metricNames()
	s.Values = make(map[string]protocol.Value, len(metrics))
	for _, m := range metrics {
		if v, ok := res.RunMetric(m); ok {
			s.Values[m] = v
		} else {
			s.Values[m] = res.SeedValue(m)
		}
	}
	s.Result = res
	s.Figure = figures.Downsample(t.Rewards, t.Labels, labelNames(t.LabelNames))
	return s, nil
}

// metricNames lists every metric of run_summary in families.parquet order:
// the per-label seed values, the per-run metrics, the counts.
func metricNames() []string {
	var out []string
	out = append(out, skyfall.LabelMetrics...)
	out = append(out, skyfall.RunMetrics...)
	return append(out, skyfall.CountMetrics...)
}

func (j *job) Metrics([]*scoring.Scored) []scoring.Metric {
	var out []scoring.Metric
	for i, n := range metricNames() {
		m := scoring.Metric{Name: n, PerKey: i < len(skyfall.LabelMetrics)}
		if hib, ok := skyfall.HigherIsBetter(n); ok {
			m.HigherIsBetter = &hib
		}
		out = append(out, m)
	}
	return out
}

// reference finds a run's reference trajectory: by run key, then run_id.
func (j *job) reference(key string, meta map[string]string) ([]float64, bool) {
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

func (j *job) describeCeilingSource() string {
	switch {
	case j.cfg.BoundMap != nil:
		return "--bound-map " + j.cfg.BoundMapURL
	case j.cfg.Spec != nil:
		return "--spec " + j.cfg.SpecName
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
