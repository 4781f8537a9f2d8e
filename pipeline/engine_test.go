package pipeline

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/crlbatch/crlbatch/internal/synth"
	"github.com/crlbatch/crlbatch/readers"
	"github.com/crlbatch/crlbatch/scoring"
)

// engineRun drives Engine as a distributed engine would, in the worst
// order it may: objects decoded in reverse, each on an Engine of its own
// (a worker), run pieces grouped by run key and handed over in reverse,
// scored runs in reverse; then Finish.
func engineRun(t *testing.T, cfg Config) (*Summary, bool) {
	t.Helper()
	sum, split, err := engineTry(t, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return sum, split
}

// engineTry is engineRun returning Finish's error: every other step's
// error fails the test (a failure of the data or the store reaches Finish
// as data).
func engineTry(t *testing.T, cfg Config) (*Summary, bool, error) {
	t.Helper()
	ctx := context.Background()
	worker := func() *Engine {
		e, err := NewEngine(cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(e.Close)
		return e
	}
	driver := worker()
	if err := driver.Preflight(ctx); err != nil {
		t.Fatal(err)
	}
	refs, err := driver.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	slices.Reverse(refs)
	var sums [][]byte
	byRun := map[string][][]byte{}
	for _, ref := range refs {
		sum, err := worker().DecodeObject(ctx, ref, func(key string, piece []byte) {
			byRun[key] = append(byRun[key], slices.Clone(piece))
		})
		if err != nil {
			t.Fatal(err)
		}
		sums = append(sums, sum)
	}
	var runs [][]byte
	if driver.Split() {
		var keys []string
		for k := range byRun {
			keys = append(keys, k)
		}
		sort.Sort(sort.Reverse(sort.StringSlice(keys)))
		for _, k := range keys {
			pcs := byRun[k]
			slices.Reverse(pcs)
			err := worker().ScoreRun(pcs, func(_ string, scored []byte) { runs = append(runs, scored) })
			if err != nil {
				t.Fatal(err)
			}
		}
		slices.Reverse(runs)
	} else {
		runs = byRun[""]
	}
	sum, err := worker().Finish(ctx, sums, runs)
	return sum, driver.Split(), err
}

// TestEngineMatchesRun: Engine's steps, in any order, publish the files
// Run publishes, byte for byte (manifest.json but for its times, attempt
// and host): runs split across objects, --where leaving runs out, and a
// ceiling from the data (a Preparer that needs every run: scored in
// Finish).
func TestEngineMatchesRun(t *testing.T) {
	t.Parallel()
	in := filepath.Join(t.TempDir(), "sweep")
	if _, err := synth.Run(context.Background(), synth.Config{Out: in, Seeds: 3, Steps: 200, SplitFiles: 3, Compression: "mixed", Seed: 5}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		where []Filter
		flags map[string]any
		split bool
	}{
		{name: "split", split: true},
		{name: "where", where: []Filter{{Field: "algorithm_id", Values: []string{"sac", "ewc"}}}, split: true},
		{name: "data-relative", flags: map[string]any{"ceiling": "data_relative"}, split: false},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.Input, cfg.Concurrency, cfg.Resamples, cfg.Where = in, 2, 500, c.where
			p, err := scoring.Lookup(scoring.Default())
			if err != nil {
				t.Fatal(err)
			}
			vals := scoring.DefaultValues(p)
			for k, v := range c.flags {
				vals.Set(k, v)
			}
			cfg.ProtocolFlags = vals
			cfg.Output = filepath.Join(t.TempDir(), "local")
			want, err := Run(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			cfg.Output = filepath.Join(t.TempDir(), "engine")
			got, split := engineRun(t, cfg)
			if split != c.split {
				t.Errorf("Split() = %v, want %v", split, c.split)
			}
			if got.Runs != want.Runs || got.Families != want.Families || got.Rows != want.Rows || got.Objects != want.Objects {
				t.Errorf("summary %+v, want %+v", got, want)
			}
			sameFiles(t, want.Result, got.Result)
		})
	}
}

func sameFiles(t *testing.T, wantDir, gotDir string) {
	t.Helper()
	read := func(dir string) map[string][]byte {
		out := map[string][]byte{}
		ents, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ents {
			data, err := os.ReadFile(filepath.Join(dir, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			if e.Name() == ManifestName {
				var m map[string]any
				if err := json.Unmarshal(data, &m); err != nil {
					t.Fatal(err)
				}
				for _, k := range []string{"started_at", "finished_at", "attempt_id", "host"} {
					delete(m, k)
				}
				data, _ = json.Marshal(m)
				data = bytes.ReplaceAll(data, []byte(dir), []byte("OUT"))
			}
			out[e.Name()] = data
		}
		return out
	}
	want, got := read(wantDir), read(gotDir)
	if len(want) < 5 || len(got) != len(want) {
		t.Fatalf("%d files from the engine's steps, %d from Run", len(got), len(want))
	}
	for n, w := range want {
		if !bytes.Equal(w, got[n]) {
			t.Errorf("%s differs", n)
		}
	}
}

// TestEngineFailsAsRun: with several objects or runs failing, Engine's
// steps driven in the worst order (engineTry: objects and runs in reverse)
// fail with Run's error, the same text and kind (exit status): the first
// object in key order that fails, the row breaking --max-bad-rows counted
// over every object, the first run in canonical order that fails to
// assemble (after the grouping's --max-runs and run key clashes, as
// readers' groupRuns meets them). Each step meets its own failure first in
// time.
func TestEngineFailsAsRun(t *testing.T) {
	t.Parallel()
	row := func(run, label string, step int) string {
		return fmt.Sprintf(`{"run_id":%q,"step":%d,"reward":0.5,"regime_id":%q}`, run, step, label)
	}
	bad := func(run string, step int) string {
		return fmt.Sprintf(`{"run_id":%q,"step":%d,"reward":"x","regime_id":"a"}`, run, step)
	}
	lines := func(rs ...string) string { return strings.Join(rs, "\n") + "\n" }
	good := func(run string) string { return lines(row(run, "a", 0), row(run, "a", 1), row(run, "b", 2)) }
	for _, c := range []struct {
		name    string
		objects map[string]string
		flags   func(*Config)
		want    string // in the error
	}{
		{name: "two objects fail", objects: map[string]string{
			"a.jsonl": lines(row("r1", "a", 0), row("r1", "a", 1), bad("r1", 2)),
			"b.jsonl": lines(bad("r2", 0), row("r2", "a", 1)),
			"c.jsonl": good("r3"),
		}, want: "a.jsonl: line 3"},
		{name: "two objects fail, runs scored in Finish", flags: func(c *Config) {
			p, err := scoring.Lookup(scoring.Default())
			if err != nil {
				t.Fatal(err)
			}
			vals := scoring.DefaultValues(p)
			vals.Set("ceiling", "data_relative")
			c.ProtocolFlags = vals
		}, objects: map[string]string{
			"a.jsonl": lines(row("r1", "a", 0), bad("r1", 1)),
			"b.jsonl": lines(bad("r2", 0)),
		}, want: "a.jsonl: line 2"},
		{name: "bad rows over objects", flags: func(c *Config) { c.MaxBadRows = 2 }, objects: map[string]string{
			"a.jsonl": lines(row("r1", "a", 0), bad("r1", 1), row("r1", "b", 2)),
			"b.jsonl": lines(bad("r2", 0), row("r2", "a", 1), bad("r2", 2), bad("r2", 3), row("r2", "b", 4)),
		}, want: "b.jsonl: line 3"},
		{name: "bad rows before a failing object", flags: func(c *Config) { c.MaxBadRows, c.Reader.MaxLabels = 1, 1 }, objects: map[string]string{
			"a.jsonl": lines(bad("r1", 0), row("r1", "a", 1), bad("r1", 2), row("r1", "a", 3)),
			"b.jsonl": lines(row("r2", "a", 0), row("r2", "b", 1)),
		}, want: "a.jsonl: line 3"},
		{name: "a failing object before the bad rows", flags: func(c *Config) { c.MaxBadRows, c.Reader.MaxLabels = 1, 1 }, objects: map[string]string{
			"a.jsonl": lines(row("r1", "a", 0), row("r1", "b", 1), row("r1", "a", 2)),
			"b.jsonl": lines(bad("r2", 0), bad("r2", 1), row("r2", "a", 2)),
		}, want: "a.jsonl: line 2"},
		{name: "bad rows before the failure in its object", flags: func(c *Config) { c.MaxBadRows, c.Reader.MaxLabels = 1, 1 }, objects: map[string]string{
			"a.jsonl": lines(bad("r1", 0), row("r1", "a", 1)),
			"b.jsonl": lines(bad("r2", 0), row("r2", "a", 1), row("r2", "b", 2)),
		}, want: "b.jsonl: line 1"},
		{name: "two runs fail to assemble", flags: func(c *Config) { c.Reader.MaxLabels = 1 }, objects: map[string]string{
			"a.jsonl": lines(row("r1", "a", 0), row("r2", "a", 0), row("r3", "a", 0)),
			"b.jsonl": lines(row("r1", "a", 1), row("r2", "b", 1), row("r3", "b", 1)),
		}, want: "run run_id=r2 has more than 1 labels"},
		{name: "--max-runs passed before a run fails to assemble", flags: func(c *Config) { c.Reader.MaxLabels, c.Reader.MaxRuns = 1, 2 }, objects: map[string]string{
			"a.jsonl": lines(row("r1", "a", 0), row("r2", "a", 0)),
			"b.jsonl": lines(row("r1", "b", 1), row("r3", "a", 0)),
		}, want: "b.jsonl: line 2: more than 2 runs"},
		{name: "--max-runs passed before a bad row", flags: func(c *Config) { c.Reader.MaxRuns = 2 }, objects: map[string]string{
			"a.jsonl": lines(row("r1", "a", 0), row("r2", "a", 0)),
			"b.jsonl": lines(row("r3", "a", 0), bad("r3", 1)),
		}, want: "b.jsonl: line 2: reward"},
		{name: "--max-runs counts run keys", flags: func(c *Config) { c.Reader.MaxLabels, c.Reader.MaxRuns = 1, 2 }, objects: map[string]string{
			"a.jsonl": lines(row("r0", "a", 0), `{"run_id":"1","step":0,"reward":0.5,"regime_id":"a"}`),
			"b.jsonl": lines(row("r0", "b", 1), `{"run_id":1,"step":0,"reward":0.5,"regime_id":"a"}`, row("r2", "a", 0)),
		}, want: "b.jsonl: line 3: more than 2 runs"},
		{name: "a run key clash after a run that fails to assemble", flags: func(c *Config) { c.Reader.MaxLabels = 1 }, objects: map[string]string{
			"a.jsonl": lines(row("r0", "a", 0), `{"run_id":"1","step":0,"reward":0.5,"regime_id":"a"}`),
			"b.jsonl": lines(row("r0", "b", 1), `{"run_id":1,"step":0,"reward":0.5,"regime_id":"a"}`),
		}, want: "b.jsonl: line 2: run key \"run_id=1\" stands for two distinct identities"},
		{name: "a run key clash before a run that fails to assemble", flags: func(c *Config) { c.Reader.MaxLabels = 1 }, objects: map[string]string{
			"a.jsonl": lines(`{"run_id":"1","step":0,"reward":0.5,"regime_id":"a"}`, row("r0", "a", 0)),
			"b.jsonl": lines(`{"run_id":1,"step":0,"reward":0.5,"regime_id":"a"}`, row("r0", "b", 1)),
		}, want: "b.jsonl: line 1: run key \"run_id=1\" stands for two distinct identities"},
		{name: "--max-runs before a run key clash", flags: func(c *Config) { c.Reader.MaxRuns = 2 }, objects: map[string]string{
			"a.jsonl": lines(row("r0", "a", 0), `{"run_id":"1","step":0,"reward":0.5,"regime_id":"a"}`),
			"b.jsonl": lines(row("r2", "a", 0), `{"run_id":1,"step":0,"reward":0.5,"regime_id":"a"}`),
		}, want: "b.jsonl: line 1: more than 2 runs"},
	} {
		t.Run(c.name, func(t *testing.T) {
			in := t.TempDir()
			for name, text := range c.objects {
				if err := os.WriteFile(filepath.Join(in, name), []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			cfg := DefaultConfig()
			cfg.Input, cfg.Concurrency, cfg.Resamples = in, 2, 200
			if c.flags != nil {
				c.flags(&cfg)
			}
			cfg.Output = filepath.Join(t.TempDir(), "local")
			_, want := Run(context.Background(), cfg)
			if want == nil || !strings.Contains(want.Error(), c.want) {
				t.Fatalf("Run: %v; want an error naming %q", want, c.want)
			}
			cfg.Output = filepath.Join(t.TempDir(), "engine")
			_, _, got := engineTry(t, cfg)
			if got == nil || got.Error() != want.Error() {
				t.Fatalf("the engine's steps: %v\nRun: %v", got, want)
			}
			var wu, gu *UsageError
			var ws, gs *StorageError
			var wd, gd *readers.DataError
			if errors.As(want, &wu) != errors.As(got, &gu) || errors.As(want, &ws) != errors.As(got, &gs) {
				t.Errorf("the engine's error is of another kind: %T, Run's %T", got, want)
			}
			if errors.As(want, &wd) != errors.As(got, &gd) || (wd != nil && gd != nil && (wd.Field != gd.Field || wd.Line != gd.Line)) {
				t.Errorf("the engine's row error %+v, Run's %+v", gd, wd)
			}
			if _, err := os.Stat(cfg.Output); !errors.Is(err, os.ErrNotExist) {
				if ents, _ := os.ReadDir(cfg.Output); len(ents) > 0 {
					t.Errorf("a failed Finish left %v", ents)
				}
			}
		})
	}
}
