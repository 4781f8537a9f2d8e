package pipeline

import (
	"fmt"
	"io"
	"log/slog"
	"math"
	"path"
	"runtime"
	"strings"

	"github.com/crlbatch/crlbatch/protocol/skyfall"
	"github.com/crlbatch/crlbatch/readers"
	"github.com/crlbatch/crlbatch/upperbound"
)

// DefaultPatterns are the object base names read when no --pattern is given.
var DefaultPatterns = []string{"*.jsonl", "*.jsonl.gz", "*.jsonl.zst", "*.ndjson"}

// Ceiling modes of --ceiling.
const (
	CeilingByConfiguration = "by_configuration"
	CeilingPerStep         = "per_step"
	CeilingFinalStep       = "final_step"
	CeilingDataRelative    = "data_relative"
)

// Filter keeps runs whose metadata field equals one of Values.
type Filter struct {
	Field  string
	Values []string
}

// Config is one job. The zero value is not usable: start from DefaultConfig.
type Config struct {
	Input  string
	Output string
	// Protocol is skyfall, safecrl, contilab or skillshift.
	Protocol string
	Patterns []string
	// Concurrency bounds the objects read and the runs scored at once.
	Concurrency int

	Skyfall skyfall.Params

	// WindowEpisodes is safecrl's W (0: its default, 20).
	WindowEpisodes int
	// WindowFraction is contilab's windowed-forgetting window (0: 0.1).
	WindowFraction float64
	// RankMetric is contilab's metric ranked across benchmarks ("" = acc).
	RankMetric string

	// Ceiling sources; at most one of BoundScalar, BoundMap and Spec.
	BoundScalar *float64
	BoundMap    map[string]float64
	BoundMapURL string // where BoundMap came from, for the report
	Spec        *upperbound.Spec
	SpecName    string
	// CeilingMode applies with Spec: by_configuration (default),
	// per_step, final_step, data_relative. data_relative needs no spec.
	CeilingMode string
	// EpisodeEndFromSpec names the spec's episode-end components as the
	// episode-end components of forgetting and the policy's settled reward.
	EpisodeEndFromSpec bool

	// Reference maps run keys (or run_ids) to reference trajectories.
	Reference map[string][]float64

	GroupBy       []string
	Baseline      string
	MinSteps      int
	Where         []Filter
	Resamples     int
	BootstrapSeed uint64

	Reader readers.Options

	// MaxBadRows is how many bad rows (--max-bad-rows) the job may skip in
	// all objects together: each is listed in manifest.json (skipped) and
	// counted in the report's notes; one more fails the job, naming the row
	// that broke the limit. A bad row is a line that is not a valid row
	// (readers.BadRowFunc); errors of a whole object are never skipped. 0
	// (the default) skips none. Validate lists every bad row whatever the
	// limit, and counts them as problems only past it.
	MaxBadRows int

	// MemoryLimit bounds the decoded rows held in memory; past it, objects
	// spill to SpillDir and runs are scored one at a time. 0 means
	// DefaultMemoryLimit().
	MemoryLimit int64
	// SpillDir is where spilled rows go; "" means the system temp dir.
	SpillDir string

	// Overwrite replaces a complete earlier output.
	Overwrite bool

	// Version is the crlbatch version written into every output.
	Version string
	// Logger receives structured logs; nil discards them.
	Logger *slog.Logger
	// Progress receives progress reports; nil disables them. Terminal says
	// whether it is a terminal (a bar) or not (periodic lines).
	Progress io.Writer
	Terminal bool
	// Opener opens buckets; nil means gocloud.dev's default URL mux.
	Opener Opener
	// Retry tunes retries of transient storage errors.
	Retry RetryPolicy

	// chunkBytes overrides readers.DefaultChunkBytes, the size of the
	// chunks of an object decoded on several cores (tests).
	chunkBytes int
}

// DefaultConfig returns the defaults of INTERFACE.md.
func DefaultConfig() Config {
	return Config{
		Protocol:    "skyfall",
		Patterns:    DefaultPatterns,
		Concurrency: runtime.NumCPU(),
		Skyfall:     skyfall.DefaultParams(),
		GroupBy:     []string{"algorithm_id"},
		Resamples:   10000,
		Retry:       DefaultRetry(),
		Version:     "dev",
	}
}

// Check validates the configuration, returning a *UsageError.
func (c *Config) Check() error {
	if c.Input == "" {
		return Usagef("no INPUT given")
	}
	if c.Output == "" {
		return Usagef("no --out given")
	}
	switch c.Protocol {
	case "skyfall", "safecrl", "contilab", "skillshift":
	default:
		return Usagef("--protocol %q: want skyfall, safecrl, contilab or skillshift", c.Protocol)
	}
	if c.WindowEpisodes < 0 {
		return Usagef("--window-episodes %d: want at least 1", c.WindowEpisodes)
	}
	if c.WindowFraction < 0 || c.WindowFraction > 1 {
		return Usagef("--window-fraction %v: want 0 < x ≤ 1", c.WindowFraction)
	}
	if c.Concurrency < 1 {
		return Usagef("--concurrency %d: want at least 1", c.Concurrency)
	}
	if err := c.Skyfall.Check(); err != nil {
		return &UsageError{Err: err}
	}
	if len(c.Patterns) == 0 {
		return Usagef("--pattern: at least one glob is needed")
	}
	if c.BoundScalar != nil && (math.IsNaN(*c.BoundScalar) || math.IsInf(*c.BoundScalar, 0)) {
		return Usagef("--bound %v: want a finite number", *c.BoundScalar)
	}
	for _, p := range c.Patterns {
		if p == "" {
			return Usagef("--pattern: an empty glob matches no object")
		}
		if _, err := path.Match(p, ""); err != nil {
			return Usagef("--pattern %q: %v", p, err)
		}
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
		return Usagef("--bound, --bound-map and --spec are alternatives: give one")
	}
	switch c.CeilingMode {
	case "":
	case CeilingByConfiguration, CeilingPerStep, CeilingFinalStep:
		if c.Spec == nil {
			return Usagef("--ceiling %s needs --spec", c.CeilingMode)
		}
	case CeilingDataRelative:
		if c.BoundScalar != nil || c.BoundMap != nil {
			return Usagef("--ceiling data_relative derives its own ceiling: drop --bound/--bound-map")
		}
	default:
		return Usagef("--ceiling %q: want by_configuration, per_step, final_step or data_relative", c.CeilingMode)
	}
	if c.EpisodeEndFromSpec && c.Spec == nil {
		return Usagef("--episode-end-from-spec needs --spec")
	}
	if c.Skyfall.Anchor == skyfall.AnchorCeiling && sources == 0 && c.CeilingMode != CeilingDataRelative {
		return Usagef("--anchor ceiling needs a ceiling: give --bound, --bound-map or --spec")
	}
	if len(c.GroupBy) == 0 {
		return Usagef("--group-by: at least one field is needed")
	}
	for _, g := range c.GroupBy {
		if strings.TrimSpace(g) == "" {
			return Usagef("--group-by: empty field name")
		}
	}
	for _, f := range c.Where {
		if f.Field == "" {
			return Usagef("--where: empty field name (want FIELD=VALUE)")
		}
	}
	if c.Resamples < 1 {
		return Usagef("--bootstrap-resamples %d: want at least 1", c.Resamples)
	}
	if c.MemoryLimit < 0 {
		return Usagef("--memory-limit %d: want a positive size", c.MemoryLimit)
	}
	if c.MaxBadRows < 0 {
		return Usagef("--max-bad-rows %d: want at least 0", c.MaxBadRows)
	}
	if c.MinSteps < 0 {
		return Usagef("--min-steps %d: want at least 0", c.MinSteps)
	}
	for k, v := range c.BoundMap {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return Usagef("--bound-map: label %q has a ceiling that is not a finite number", k)
		}
	}
	return nil
}

// components are the reward components the reader must keep.
func (c *Config) components() []string {
	var out []string
	add := func(n string) {
		for _, x := range out {
			if x == n {
				return
			}
		}
		out = append(out, n)
	}
	for _, n := range c.Skyfall.EpisodeEnd {
		add(n)
	}
	if c.Skyfall.SolveComponent != "" {
		add(c.Skyfall.SolveComponent)
	}
	if c.Spec != nil {
		for _, n := range upperbound.EpisodeEndComponents(c.Spec) {
			add(n)
		}
	}
	return out
}

// familyOf names a run's family from its metadata: the group-by values joined
// with "/", or "" when a field is missing.
func (c *Config) familyOf(meta map[string]string) (string, bool) {
	parts := make([]string, len(c.GroupBy))
	for i, g := range c.GroupBy {
		v, ok := meta[g]
		if !ok {
			return "", false
		}
		parts[i] = v
	}
	return strings.Join(parts, "/"), true
}

// keep applies the --where filters: different fields must all match; values
// given for one field are alternatives.
func (c *Config) keep(meta map[string]string) bool {
	for _, f := range c.Where {
		v, ok := meta[f.Field]
		if !ok {
			return false
		}
		match := false
		for _, want := range f.Values {
			if v == want {
				match = true
				break
			}
		}
		if !match {
			return false
		}
	}
	return true
}

// ParseWhere turns repeated FIELD=VALUE strings into filters, merging values
// given for one field.
func ParseWhere(items []string) ([]Filter, error) {
	var out []Filter
	for _, it := range items {
		k, v, ok := strings.Cut(it, "=")
		if !ok || k == "" {
			return nil, Usagef("--where %q: want FIELD=VALUE", it)
		}
		found := false
		for i := range out {
			if out[i].Field == k {
				out[i].Values = append(out[i].Values, v)
				found = true
			}
		}
		if !found {
			out = append(out, Filter{Field: k, Values: []string{v}})
		}
	}
	return out, nil
}

var _ = fmt.Sprint
