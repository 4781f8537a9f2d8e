package pipeline

import (
	"errors"
	"io"
	"log/slog"
	"os"
	"path"
	"runtime"
	"slices"
	"strings"

	"github.com/crlbatch/crlbatch/readers"
	"github.com/crlbatch/crlbatch/scoring"
)

// DefaultPatterns are the object base names read when no --pattern is given.
var DefaultPatterns = []string{"*.jsonl", "*.jsonl.gz", "*.jsonl.zst", "*.ndjson"}

// Filter keeps runs whose metadata field equals one of Values.
type Filter = scoring.Filter

// Config is one job. The zero value is not usable: start from DefaultConfig.
type Config struct {
	Input  string
	Output string
	// Protocol names a registered protocol (scoring.Lookup); "" means the
	// default one (scoring.Default).
	Protocol string
	// ProtocolFlags are the values of the protocol's own flags
	// (scoring.Description.Flags); nil means their defaults.
	ProtocolFlags scoring.Flags
	Patterns      []string
	// Concurrency bounds the objects read and the runs scored at once.
	Concurrency int

	// GroupBy are the metadata fields naming a family; nil means the
	// protocol's default.
	GroupBy  []string
	Baseline string
	// AllowMissingBaseline publishes when no family is named Baseline (every
	// comparison column null, and a note says why); without it that is a
	// usage error naming the families there are.
	AllowMissingBaseline bool
	// NoFigures (--figures=false) renders no figure: no figure files, no
	// Figures section in report.md, report.html without images. The data
	// behind the figures (curves.parquet) is still written.
	NoFigures     bool
	MinSteps      int
	Where         []Filter
	Resamples     int
	BootstrapSeed uint64

	Reader readers.Options
	// ParquetWholeBytes is the largest Parquet object of known size read
	// whole, in the one stream that also checks its size and hashes it;
	// larger ones are read by ranges (the footer, then column chunks).
	// 0 means 16 MiB; a hidden flag, --parquet-whole-bytes, sets it (the
	// integration tests read every object by ranges with 1).
	ParquetWholeBytes int64

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

	// Cache is --cache: a folder or blob prefix (or "auto") keeping every
	// object's decoded runs between jobs; "" means none.
	Cache string

	// Overwrite replaces a complete one-off result in place (its manifest
	// removed first, the new one written last).
	Overwrite bool
	// History publishes in the nightly layout: every result under
	// OUTPUT/results/<attempt-id>/, OUTPUT/LATEST naming the newest
	// complete one, and the Hive-partitioned view under OUTPUT/history/.
	History bool
	// Keep, under History, removes after a successful publication the
	// oldest complete results beyond the Keep newest (never the one LATEST
	// names, nor the job's own); 0 keeps every one.
	Keep int

	// Version is the crlbatch version written into every output.
	Version string
	// Commit is the VCS revision of the binary (runtime/debug build
	// info), in the manifest and crlbatch.commit; "" when unknown.
	Commit string
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
	// appendedMinBytes overrides AppendedMinBytes (tests).
	appendedMinBytes int64
}

// DefaultConfig returns the defaults of INTERFACE.md.
func DefaultConfig() Config {
	return Config{
		Patterns:    DefaultPatterns,
		Concurrency: runtime.NumCPU(),
		Resamples:   10000,
		Retry:       DefaultRetry(),
		Version:     "dev",
	}
}

// Check validates the configuration, returning a *UsageError.
// CheckPatterns refuses, as usage errors, a --pattern that can match no
// object's base name: an empty glob, one that does not parse, and one
// holding a "/" (a base name has none: the job would find nothing and fail
// as bad input, every night).
func CheckPatterns(patterns []string) error {
	for _, p := range patterns {
		if p == "" {
			return Usagef("--pattern: an empty glob matches no object")
		}
		if _, err := path.Match(p, ""); err != nil {
			return Usagef("--pattern %q: %v", p, err)
		}
		if strings.Contains(p, "/") {
			return Usagef("--pattern %q: a pattern matches an object's base name (after its last /), which has no /: give the folder in INPUT", p)
		}
	}
	return nil
}

func (c *Config) Check() error {
	if c.Input == "" {
		return Usagef("no INPUT given")
	}
	if c.Output == "" {
		return Usagef("no --out given")
	}
	if _, err := scoring.Lookup(c.protocolName()); err != nil {
		return err
	}
	if c.Concurrency < 1 {
		return Usagef("--concurrency %d: want at least 1", c.Concurrency)
	}
	if len(c.Patterns) == 0 {
		return Usagef("--pattern: at least one glob is needed")
	}
	if err := CheckPatterns(c.Patterns); err != nil {
		return err
	}
	if c.GroupBy != nil && len(c.GroupBy) == 0 {
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
	if c.Keep < 0 {
		return Usagef("--keep %d: want at least 1 (or 0, the default, to keep every result)", c.Keep)
	}
	if c.Keep > 0 && !c.History {
		return Usagef("--keep %d: only a nightly OUTPUT (--history) keeps several results", c.Keep)
	}
	if c.History && c.Overwrite {
		return Usagef("--overwrite with --history: a nightly OUTPUT never replaces a result, it adds one (drop --overwrite)")
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
	return nil
}

func (c *Config) protocolName() string {
	if c.Protocol == "" {
		return scoring.Default()
	}
	return c.Protocol
}

// bind looks the protocol up and binds its flags and the engine's settings
// into its job.
func (c *Config) bind() (bound, error) {
	name := c.protocolName()
	p, err := scoring.Lookup(name)
	if err != nil {
		return bound{}, err
	}
	b := bound{name: name, desc: p.Describe(), identity: c.Reader.IdentityFields, groupBy: c.GroupBy}
	if b.identity == nil {
		b.identity = slices.Clone(b.desc.Identity)
	}
	if b.groupBy == nil {
		b.groupBy = slices.Clone(b.desc.GroupBy)
	}
	flags := c.ProtocolFlags
	if flags == nil {
		flags = scoring.DefaultValues(p)
	}
	env := scoring.Env{Reader: c.Reader, Concurrency: c.Concurrency}
	env.Reader.IdentityFields = b.identity
	env.Reader.OnBadRow = nil
	if b.job, err = p.New(flags, env); err != nil {
		var ue *UsageError
		if !errors.As(err, &ue) {
			err = &UsageError{Err: err}
		}
		return bound{}, err
	}
	b.dec = b.job.Decoder()
	b.flags = flags
	return b, nil
}

// spillDir is where spilled rows go.
func (c *Config) spillDir() string {
	if c.SpillDir == "" {
		return os.TempDir()
	}
	return c.SpillDir
}

// familyOf names a run's family from its metadata: the group-by values joined
// with "/", or "" when a field is missing.
func (c *Config) familyOf(groupBy []string, meta map[string]string) (string, bool) {
	parts := make([]string, len(groupBy))
	for i, g := range groupBy {
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
