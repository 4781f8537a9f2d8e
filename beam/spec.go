package crlbeam

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime"
	"sync"

	"github.com/crlbatch/crlbatch/pipeline"
	"github.com/crlbatch/crlbatch/readers"
	"github.com/crlbatch/crlbatch/scoring"
)

// Version is the crlbatch version written into every output: the same as
// cmd/crlbatch's, so that outputs compare byte for byte.
const Version = "0.1.0-dev"

// logs is where the engines' logs go: the stderr of Main while it runs
// (the launcher, and the workers of a runner in this process), else
// os.Stderr (a worker of a runner elsewhere).
var logs = struct {
	sync.Mutex
	w io.Writer
}{w: os.Stderr}

// logWriter writes to logs.w, one record at a time.
type logWriter struct{}

func (logWriter) Write(p []byte) (int, error) {
	logs.Lock()
	defer logs.Unlock()
	return logs.w.Write(p)
}

// logTo sends the engines' logs to w until restore is called.
func logTo(w io.Writer) (restore func()) {
	logs.Lock()
	old := logs.w
	logs.w = w
	logs.Unlock()
	return func() {
		logs.Lock()
		logs.w = old
		logs.Unlock()
	}
}

// logger is the engines' logger at --log-level (warn by default, as
// crlbatch's: skipped bad rows, a previous result that could not be read,
// a failure to tidy), writing to logs.
func (s *Spec) logger() *slog.Logger {
	level, err := pipeline.ParseLogLevel(s.LogLevel)
	if s.LogLevel == "" || err != nil {
		level = slog.LevelWarn
	}
	return slog.New(slog.NewTextHandler(logWriter{}, &slog.HandlerOptions{Level: level}))
}

// Spec is one job as every worker rebuilds it: pipeline.Config's settings
// that shape a result, and the protocol's flags that were set.
type Spec struct {
	Input, Output        string
	Protocol             string
	ProtocolFlags        map[string]json.RawMessage `json:",omitempty"`
	Patterns             []string
	GroupBy              []string `json:",omitempty"`
	Baseline             string   `json:",omitempty"`
	AllowMissingBaseline bool     `json:",omitempty"`
	MinSteps             int      `json:",omitempty"`
	Where                []pipeline.Filter
	Resamples            int
	BootstrapSeed        uint64
	// LogLevel is --log-level when not the default, warn.
	LogLevel string `json:",omitempty"`
	// IdentityFields: nil is the protocol's default, empty is none.
	IdentityFields *[]string `json:",omitempty"`
	MaxLineBytes   int
	MaxObjectBytes int64
	MaxLabels      int
	MaxRuns        int
	MaxBadRows     int
	Overwrite      bool `json:",omitempty"`
	History        bool `json:",omitempty"`
	Keep           int  `json:",omitempty"`
	Version        string
	Commit         string `json:",omitempty"`
}

// Config is the job's pipeline.Config (its protocol flags bound to the
// protocol's declared kinds).
func (s *Spec) Config() (pipeline.Config, error) {
	cfg := pipeline.DefaultConfig()
	cfg.Input, cfg.Output, cfg.Protocol = s.Input, s.Output, s.Protocol
	cfg.Patterns = s.Patterns
	cfg.GroupBy, cfg.Baseline, cfg.AllowMissingBaseline = s.GroupBy, s.Baseline, s.AllowMissingBaseline
	cfg.MinSteps, cfg.Where = s.MinSteps, s.Where
	cfg.Resamples, cfg.BootstrapSeed = s.Resamples, s.BootstrapSeed
	if s.IdentityFields != nil {
		cfg.Reader.IdentityFields = *s.IdentityFields
		if cfg.Reader.IdentityFields == nil {
			cfg.Reader.IdentityFields = []string{}
		}
	}
	cfg.Reader = readers.Options{IdentityFields: cfg.Reader.IdentityFields, MaxLineBytes: s.MaxLineBytes,
		MaxObjectBytes: s.MaxObjectBytes, MaxLabels: s.MaxLabels, MaxRuns: s.MaxRuns}
	cfg.MaxBadRows = s.MaxBadRows
	cfg.Overwrite, cfg.History, cfg.Keep = s.Overwrite, s.History, s.Keep
	cfg.Version, cfg.Commit = s.Version, s.Commit
	cfg.Logger = s.logger()
	// A worker scores one run per element (Beam runs elements in
	// parallel); the final step reduces on the worker's cores.
	cfg.Concurrency = runtime.NumCPU()
	name := s.Protocol
	if name == "" {
		name = scoring.Default()
	}
	p, err := scoring.Lookup(name)
	if err != nil {
		return cfg, err
	}
	vals := scoring.DefaultValues(p)
	kinds := map[string]scoring.FlagKind{}
	for _, f := range p.Describe().Flags {
		kinds[f.Name] = f.Kind
	}
	for name, raw := range s.ProtocolFlags {
		kind, ok := kinds[name]
		if !ok {
			return cfg, pipeline.Usagef("--%s: not a flag of --protocol %s", name, p.Name())
		}
		var v any
		var err error
		switch kind {
		case scoring.FlagString:
			var x string
			err = json.Unmarshal(raw, &x)
			v = x
		case scoring.FlagFloat:
			var x float64
			err = json.Unmarshal(raw, &x)
			v = x
		case scoring.FlagInt:
			var x int
			err = json.Unmarshal(raw, &x)
			v = x
		case scoring.FlagBool:
			var x bool
			err = json.Unmarshal(raw, &x)
			v = x
		case scoring.FlagStrings:
			var x []string
			err = json.Unmarshal(raw, &x)
			v = x
		default:
			return cfg, fmt.Errorf("--%s: unknown kind %d", name, kind)
		}
		if err != nil {
			return cfg, fmt.Errorf("--%s: %w", name, err)
		}
		vals.Set(name, v)
	}
	cfg.ProtocolFlags = vals
	return cfg, nil
}

// encode and decodeSpec move a Spec into the DoFns (their exported fields
// are what Beam serializes).
func (s *Spec) encode() string {
	b, err := json.Marshal(s)
	if err != nil {
		panic(err) // only plain values
	}
	return string(b)
}

func decodeSpec(data string) (*Spec, error) {
	s := new(Spec)
	if err := json.Unmarshal([]byte(data), s); err != nil {
		return nil, fmt.Errorf("crlbeam: the job's spec: %w", err)
	}
	return s, nil
}
