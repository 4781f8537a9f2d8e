package pipeline

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"gocloud.dev/blob/fileblob"

	"github.com/crlbatch/crlbatch/internal/synth"
	"github.com/crlbatch/crlbatch/storage"
)

// withMapping sets storage.MapMinBytes for the test: 1 maps every
// local object read whole, MaxInt64 none.
func withMapping(t *testing.T, minBytes int64) {
	old := storage.MapMinBytes
	storage.MapMinBytes = minBytes
	t.Cleanup(func() { storage.MapMinBytes = old })
}

// TestMappedObjects: a local sweep decoded from its mapped objects gives
// byte for byte the results of one read, with an object stored twice
// (found by the hashes of the bytes consumed), objects decoded in chunks
// (cut from the mapped bytes), a cache filled and then reused, an object
// grown by appended lines (its head hash and last byte from the mapped
// bytes); an object cut shorter while its mapped bytes are decoded, whole
// or in chunks, fails the job as one cut while read does, and no fault
// crashes it.
//
// Not parallel: it sets storage.MapMinBytes and testHookPhase.
func TestMappedObjects(t *testing.T) {
	in := filepath.Join(t.TempDir(), "in")
	if _, err := synth.Run(context.Background(), synth.Config{Out: in, Seeds: 2, Steps: 400, Seed: 5, Extras: true}); err != nil {
		t.Fatal(err)
	}
	objs, _ := filepath.Glob(filepath.Join(in, "*", "*.jsonl"))
	if len(objs) < 4 {
		t.Fatalf("%d objects", len(objs))
	}
	twin, err := os.ReadFile(objs[1])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(filepath.Dir(objs[1]), "twin.jsonl"), twin, 0o644); err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	n := 0
	score := func(minBytes int64, cache string, edit func(*Config)) (string, error) {
		t.Helper()
		withMapping(t, minBytes)
		n++
		out := filepath.Join(tmp, "out", strings.Repeat("x", n))
		cfg := localJob(in, out, nil)
		cfg.Concurrency, cfg.Cache = 2, cache
		if edit != nil {
			edit(&cfg)
		}
		_, err := Run(context.Background(), cfg)
		return out, err
	}
	same := func(what string, edit func(*Config)) {
		t.Helper()
		read, err := score(math.MaxInt64, "", edit)
		if err != nil {
			t.Fatal(err)
		}
		mapped, err := score(1, "", edit)
		if err != nil {
			t.Fatal(err)
		}
		t.Run(what, func(t *testing.T) { sameFiles(t, read, mapped) })
	}
	same("whole objects", nil)
	same("objects in chunks", func(c *Config) { c.chunkBytes = 4096 })
	same("one at a time", func(c *Config) { c.Concurrency = 1 })
	report, err := os.ReadFile(filepath.Join(tmp, "out", "x", "report.md"))
	if err != nil || !strings.Contains(string(report), "twin.jsonl") {
		t.Errorf("the report does not name the object stored twice (%v)", err)
	}

	// A cache filled from mapped objects, then an object grown: its
	// appended lines alone decoded, the rest from the cache.
	cache := filepath.Join(tmp, "cache")
	if _, err := score(1, cache, nil); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(objs[0], os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(twin), "\n")
	if _, err := f.WriteString(strings.Join(lines[len(lines)-4:], "")); err != nil {
		t.Fatal(err)
	}
	f.Close()
	warm, err := score(1, cache, func(c *Config) { c.appendedMinBytes = 1 })
	if err != nil {
		t.Fatal(err)
	}
	cold, err := score(math.MaxInt64, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	all, _ := filepath.Glob(filepath.Join(in, "*", "*.jsonl"))
	for _, o := range all {
		rel, _ := filepath.Rel(in, o)
		keys = append(keys, filepath.ToSlash(rel))
	}
	out, err := fileblob.OpenBucket(filepath.Join(tmp, "out"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	files := []string{"runs.parquet", "intervals.parquet", "run_summary.parquet", "families.parquet", "curves.parquet", "report.md"}
	grown, _ := filepath.Rel(in, objs[0])
	sameNight(t, out, keys, files, "mapped, one object grown", filepath.Base(warm), filepath.Base(cold),
		map[string]string{filepath.ToSlash(grown): ReadAppended}, "")

	// Cut to 10 bytes once mapped, before its lines are decoded: whole,
	// and in chunks.
	for _, tc := range []struct {
		minBytes int64
		split    bool
	}{{1, false}, {math.MaxInt64, false}, {1, true}, {math.MaxInt64, true}} {
		minBytes := tc.minBytes
		// Alone in its folder: the hook cuts it as the job's first
		// object read starts.
		data, err := os.ReadFile(objs[2])
		if err != nil {
			t.Fatal(err)
		}
		victim := filepath.Join(t.TempDir(), "victim.jsonl")
		if err := os.WriteFile(victim, data, 0o644); err != nil {
			t.Fatal(err)
		}
		var cut atomic.Bool // the hook runs on the job's goroutines
		testHookPhase = func(name string) {
			if name == "read" && cut.CompareAndSwap(false, true) {
				if err := os.Truncate(victim, 10); err != nil {
					t.Error(err)
				}
			}
		}
		var log bytes.Buffer
		_, err = score(minBytes, "", func(c *Config) {
			c.Concurrency = 1
			if tc.split {
				c.Concurrency, c.chunkBytes = 2, 4096
				c.Logger = slog.New(slog.NewTextHandler(&log, nil))
			}
			c.Input = filepath.Dir(victim)
		})
		if tc.split != strings.Contains(log.String(), "decoding in chunks") {
			t.Errorf("split %v: the log says otherwise:\n%s", tc.split, log.String())
		}
		testHookPhase = nil
		if !cut.Load() || !IsStorage(err) || !strings.Contains(err.Error(), victim) || !strings.Contains(err.Error(), "changed while the job read it") {
			t.Errorf("mapped from %d bytes, split %v: error %v: want a storage error naming %s, saying it changed while read", minBytes, tc.split, err, victim)
		}
		// Mapped, its decode met the fault (and says so); read, the end.
		if faulted := strings.Contains(fmt.Sprint(err), storage.ErrFaulted.Error()); faulted != (minBytes == 1) {
			t.Errorf("mapped from %d bytes, split %v: error %v: the fault of a mapped page named %v", minBytes, tc.split, err, faulted)
		}
	}
}
