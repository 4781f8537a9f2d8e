package pipeline

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/crlbatch/crlbatch/internal/synth"
	"github.com/crlbatch/crlbatch/readers"
	"github.com/crlbatch/crlbatch/scoring"
)

// lightLine is what the job logs (at debug level) when its preparing pass
// went through the decoder's light assembly.
const lightLine = "preparing pass over the runs' light assembly"

// runPrepared runs cfg with the light preparing pass on or off, into a
// fresh output folder, and says whether the light pass was taken (and, in
// scored, whether the scoring pass began).
func runPrepared(t *testing.T, cfg Config, light bool) (sum *Summary, took bool, err error) {
	t.Helper()
	defer func(was bool) { lightPrepare = was }(lightPrepare)
	lightPrepare = light
	var log bytes.Buffer
	cfg.Logger = slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelDebug}))
	cfg.Output = filepath.Join(t.TempDir(), "out")
	sum, err = Run(context.Background(), cfg)
	if err != nil {
		if _, serr := os.Stat(cfg.Output); !errors.Is(serr, os.ErrNotExist) {
			t.Errorf("a failed job left %s (%v)", cfg.Output, serr)
		}
		if strings.Contains(log.String(), "scoring one run at a time") {
			t.Errorf("light %v: the scoring pass began before %v", light, err)
		}
	}
	return sum, strings.Contains(log.String(), lightLine), err
}

func skyfallFlags(t *testing.T, set map[string]any) scoring.Flags {
	t.Helper()
	p, err := scoring.Lookup(scoring.Default())
	if err != nil {
		t.Fatal(err)
	}
	vals := scoring.DefaultValues(p)
	for k, v := range set {
		vals.Set(k, v)
	}
	return vals
}

// TestLightPrepareMatchesAssembly: the by_configuration ceiling counted
// part by part on the job's goroutines (the decoder's light assembly)
// publishes the files the pass over assembled runs publishes, byte for
// byte: runs spread over three objects each, --where, a spec without an
// episode-end component (each run's last row final: in its last object),
// one goroutine. A spilled sweep, and the other ceilings, take the
// assembled runs.
//
// Not parallel (see TestMain): runPrepared sets lightPrepare, which every
// job in the process reads.
func TestLightPrepareMatchesAssembly(t *testing.T) {
	in := filepath.Join(t.TempDir(), "sweep")
	if _, err := synth.Run(context.Background(), synth.Config{Out: in, Seeds: 3, Steps: 300, SplitFiles: 3, Compression: "mixed", Seed: 7}); err != nil {
		t.Fatal(err)
	}
	stepOnly := filepath.Join(t.TempDir(), "step_only.yaml")
	os.WriteFile(stepOnly, []byte("name: step_only\ncomponents:\n  - {name: progress, weight: 1.0, clip: [0.0, 1.0], cadence: step}\n"), 0o644)
	spec := map[string]any{"spec": "experiment", "episode-end-from-spec": true}
	for _, c := range []struct {
		name  string
		flags map[string]any
		where []Filter
		conc  int
		spill bool
		light bool
	}{
		{name: "by_configuration", flags: spec, conc: 2, light: true},
		{name: "where", flags: spec, where: []Filter{{Field: "algorithm_id", Values: []string{"sac", "ewc"}}}, conc: 2, light: true},
		{name: "step-only spec", flags: map[string]any{"spec": stepOnly}, conc: 2, light: true},
		{name: "one goroutine", flags: spec, conc: 1, light: true},
		{name: "spilled", flags: spec, conc: 2, spill: true},
		{name: "data_relative", flags: map[string]any{"ceiling": "data_relative"}, conc: 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.Input, cfg.Concurrency, cfg.Resamples, cfg.Where = in, c.conc, 500, c.where
			cfg.ProtocolFlags = skyfallFlags(t, c.flags)
			if c.spill {
				cfg.MemoryLimit, cfg.SpillDir = 1024, t.TempDir()
			}
			want, wlight, err := runPrepared(t, cfg, false)
			if err != nil || wlight {
				t.Fatalf("assembled pass: %v (light %v)", err, wlight)
			}
			got, light, err := runPrepared(t, cfg, true)
			if err != nil {
				t.Fatal(err)
			}
			if light != c.light {
				t.Errorf("light pass taken: %v, want %v", light, c.light)
			}
			if got.Runs != want.Runs || got.Rows != want.Rows || got.Runs == 0 {
				t.Errorf("summary %+v, want %+v", got, want)
			}
			sameFiles(t, want.Result, got.Result)
		})
	}
}

// TestLightPrepareErrors: a failing preparing pass reports, through the
// light assembly, exactly the error of the pass over assembled runs (its
// text, object URL and line), whatever failed: --max-labels on a run
// spread over two objects, after a run that passes (and before a run the
// scoring pass would reject for the same limit), a run key standing for
// two identities, --max-runs; each before the scoring pass begins (where
// the same limit would fail the same run); and nothing is left behind.
//
// Not parallel (see TestMain): runPrepared sets lightPrepare, which every
// job in the process reads.
func TestLightPrepareErrors(t *testing.T) {
	row := func(run, label string, success float64) string {
		s := `{"run_id":"` + run + `","reward":0.5,"regime_id":"` + label + `"`
		if success != 0 {
			s += `,"components":{"success":1}`
		}
		return s + "}\n"
	}
	cases := []struct {
		name  string
		objs  map[string]string
		opts  func(*readers.Options)
		want  []string
		where []Filter
	}{
		{"max-labels across objects",
			map[string]string{
				"a.jsonl": row("q", "x", 0) + row("q", "y", 1) + row("r", "x", 0) + row("r", "y", 1),
				"b.jsonl": row("q", "y", 0) + row("r", "z", 1) + row("s", "x", 0),
				"c.jsonl": row("s", "y", 0) + row("s", "z", 0),
			},
			func(o *readers.Options) { o.MaxLabels = 2 },
			[]string{"a.jsonl: line 3", "run run_id=r has more than 2 labels"}, nil},
		// A run --where leaves out is assembled, and fails, all the same.
		{"max-labels on a run --where leaves out",
			map[string]string{
				"a.jsonl": row("q", "x", 0) + row("q", "y", 1) + row("r", "x", 0) + row("r", "y", 1),
				"b.jsonl": row("q", "y", 0) + row("r", "z", 1) + row("s", "x", 0),
			},
			func(o *readers.Options) { o.MaxLabels = 2 },
			[]string{"a.jsonl: line 3", "run run_id=r has more than 2 labels"},
			[]Filter{{Field: "run_id", Values: []string{"q", "s"}}}},
		{"run key for two identities",
			map[string]string{
				"a.jsonl": `{"run_id":"r","seed":"1","reward":1,"regime_id":"x"}` + "\n",
				"b.jsonl": row("q", "x", 1) + `{"run_id":"r","seed":1,"reward":1,"regime_id":"x"}` + "\n",
			},
			nil,
			[]string{"b.jsonl: line 2", "stands for two distinct identities"}, nil},
		{"max-runs",
			map[string]string{
				"a.jsonl": row("q", "x", 1) + row("r", "x", 0),
				"b.jsonl": row("s", "x", 1),
			},
			func(o *readers.Options) { o.MaxRuns = 2 },
			[]string{"b.jsonl: line 1", "more than 2 runs"}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := filepath.Join(t.TempDir(), "in")
			os.MkdirAll(in, 0o755)
			for name, data := range c.objs {
				if err := os.WriteFile(filepath.Join(in, name), []byte(data), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			cfg := DefaultConfig()
			cfg.Input, cfg.Concurrency, cfg.Resamples, cfg.Where = in, 2, 500, c.where
			cfg.ProtocolFlags = skyfallFlags(t, map[string]any{"spec": "experiment", "episode-end-from-spec": true})
			if c.opts != nil {
				c.opts(&cfg.Reader)
			}
			_, _, werr := runPrepared(t, cfg, false)
			_, light, gerr := runPrepared(t, cfg, true)
			if !light {
				t.Error("the light pass was not taken")
			}
			if werr == nil || gerr == nil {
				t.Fatalf("errors %v and %v, want both", werr, gerr)
			}
			if gerr.Error() != werr.Error() {
				t.Errorf("light pass: %v\nassembled: %v", gerr, werr)
			}
			var gde, wde *readers.DataError
			if !errors.As(gerr, &gde) || !errors.As(werr, &wde) || gde.URL != wde.URL || gde.Line != wde.Line {
				t.Errorf("light pass: %#v\nassembled: %#v", gerr, werr)
			}
			if isUsage(gerr) != isUsage(werr) {
				t.Errorf("kinds differ: %T, %T", gerr, werr)
			}
			for _, w := range c.want {
				if !strings.Contains(gerr.Error(), w) {
					t.Errorf("%v\ndoes not say %q", gerr, w)
				}
			}
		})
	}
}
