package pipeline

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"testing"

	"github.com/crlbatch/crlbatch/internal/synth"
	"github.com/crlbatch/crlbatch/scoring"
)

// engineRun drives Engine as a distributed engine would, in the worst
// order it may: objects decoded in reverse, each on an Engine of its own
// (a worker), run pieces grouped by run key and handed over in reverse,
// scored runs in reverse; then Finish.
func engineRun(t *testing.T, cfg Config) (*Summary, bool) {
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
	if err != nil {
		t.Fatal(err)
	}
	return sum, driver.Split()
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
