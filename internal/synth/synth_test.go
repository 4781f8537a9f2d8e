package synth

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"gocloud.dev/blob"
	_ "gocloud.dev/blob/fileblob"
	"gocloud.dev/blob/memblob"

	"github.com/crlbatch/crlbatch/protocol/skyfall"
	"github.com/crlbatch/crlbatch/readers"
	"github.com/crlbatch/crlbatch/storage"
)

// synthTestRun writes cfg into a fresh in-memory bucket under prefix and
// returns the bucket with the summary.
func synthTestRun(t *testing.T, cfg Config, prefix string) (*blob.Bucket, Summary) {
	t.Helper()
	b := memblob.OpenBucket(nil)
	t.Cleanup(func() { b.Close() })
	if cfg.Out == "" {
		cfg.Out = "mem://" + prefix
	}
	sum, err := Write(context.Background(), b, prefix, cfg)
	if err != nil {
		t.Fatalf("Write: %v", err)
	}
	return b, sum
}

// synthTestObjects reads every object of b under prefix: key (relative to
// prefix) → stored bytes, keys in bytewise order.
func synthTestObjects(t *testing.T, b *blob.Bucket, prefix string) ([]string, map[string][]byte) {
	t.Helper()
	ctx := context.Background()
	it := b.List(&blob.ListOptions{Prefix: prefix})
	objs := map[string][]byte{}
	var keys []string
	for {
		o, err := it.Next(ctx)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		data, err := b.ReadAll(ctx, o.Key)
		if err != nil {
			t.Fatal(err)
		}
		k := strings.TrimPrefix(o.Key, prefix)
		keys = append(keys, k)
		objs[k] = data
	}
	slices.Sort(keys)
	return keys, objs
}

// synthTestSniff names an object's compression from its magic bytes.
func synthTestSniff(b []byte) string {
	switch {
	case bytes.HasPrefix(b, []byte{0x1f, 0x8b}):
		return "gzip"
	case bytes.HasPrefix(b, []byte{0x28, 0xb5, 0x2f, 0xfd}):
		return "zstd"
	}
	return "none"
}

func synthTestDecompress(t *testing.T, key string, data []byte) []byte {
	t.Helper()
	r, _, err := readers.Open(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("%s: %v", key, err)
	}
	out, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("%s: %v", key, err)
	}
	return out
}

// synthTestJSONL is the JSONL of a sweep per run_id, parts concatenated in
// key order.
func synthTestJSONL(t *testing.T, b *blob.Bucket, prefix string) map[string][]byte {
	t.Helper()
	keys, objs := synthTestObjects(t, b, prefix)
	runs := map[string][]byte{}
	for _, k := range keys {
		run := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(k, ".gz"), ".zst"), ".jsonl")
		if i := strings.Index(run, "/part-"); i >= 0 {
			run = run[:i]
		}
		run = run[strings.LastIndexByte(run, '/')+1:]
		runs[run] = append(runs[run], synthTestDecompress(t, k, objs[k])...)
	}
	return runs
}

func TestDeterministic(t *testing.T) {
	cfg := Config{Seeds: 2, Steps: 900, Compression: "mixed", SplitFiles: 2, Extras: true, Seed: 7}
	b1, s1 := synthTestRun(t, cfg, "a/")
	cfg.Concurrency = 1
	b2, s2 := synthTestRun(t, cfg, "sweep/x/")
	k1, o1 := synthTestObjects(t, b1, "a/")
	k2, o2 := synthTestObjects(t, b2, "sweep/x/")
	if !slices.Equal(k1, k2) || len(k1) != 3*2*2 {
		t.Fatalf("keys differ or wrong count:\n%q\n%q", k1, k2)
	}
	for _, k := range k1 {
		if !bytes.Equal(o1[k], o2[k]) {
			t.Errorf("%s: bytes differ between two runs of one config", k)
		}
	}
	if len(s1.Objects) != len(s2.Objects) {
		t.Fatal("summaries differ")
	}
	for i := range s1.Objects {
		if s1.Objects[i] != s2.Objects[i] {
			t.Errorf("summary object %d: %+v vs %+v", i, s1.Objects[i], s2.Objects[i])
		}
		if s1.Objects[i].Key != k1[i] {
			t.Errorf("summary key %d = %q, listing %q", i, s1.Objects[i].Key, k1[i])
		}
		if got := int64(len(o1[k1[i]])); got != s1.Objects[i].Bytes {
			t.Errorf("%s: summary says %d bytes, stored %d", k1[i], s1.Objects[i].Bytes, got)
		}
	}

	// Another PRNG seed gives other data.
	cfg.Seed = 8
	b3, _ := synthTestRun(t, cfg, "a/")
	_, o3 := synthTestObjects(t, b3, "a/")
	if bytes.Equal(o1[k1[0]], o3[k1[0]]) {
		t.Errorf("%s: Seed 7 and Seed 8 wrote the same bytes", k1[0])
	}

	// Extras come from their own stream: without them, every other field is
	// the same.
	cfg.Seed, cfg.Extras = 7, false
	b4, _ := synthTestRun(t, cfg, "")
	with, without := synthTestJSONL(t, b1, "a/"), synthTestJSONL(t, b4, "")
	for run, data := range with {
		lw := bytes.Split(bytes.TrimSpace(data), []byte("\n"))
		lo := bytes.Split(bytes.TrimSpace(without[run]), []byte("\n"))
		if len(lw) != len(lo) {
			t.Fatalf("%s: %d vs %d lines", run, len(lw), len(lo))
		}
		for i := range lw {
			cut := bytes.Index(lw[i], []byte(`,"obs_hash":`))
			if cut < 0 || !bytes.Equal(append(slices.Clip(lw[i][:cut]), '}'), lo[i]) {
				t.Fatalf("%s line %d: extras changed other fields:\n%s\n%s", run, i+1, lw[i], lo[i])
			}
		}
	}
}

func TestCompression(t *testing.T) {
	base := Config{Seeds: 2, Steps: 700, Extras: true, Seed: 3}
	bn, _ := synthTestRun(t, base, "")
	want := synthTestJSONL(t, bn, "")
	if len(want) != 6 {
		t.Fatalf("%d runs, want 6", len(want))
	}
	for _, comp := range []string{"none", "gzip", "zstd", "mixed"} {
		t.Run(comp, func(t *testing.T) {
			cfg := base
			cfg.Compression = comp
			b, sum := synthTestRun(t, cfg, "p/")
			keys, objs := synthTestObjects(t, b, "p/")
			seen := map[string]int{}
			for i, k := range keys {
				got := synthTestSniff(objs[k])
				seen[got]++
				wantExt := map[string]string{"none": ".jsonl", "gzip": ".jsonl.gz", "zstd": ".jsonl.zst"}[got]
				if !strings.HasSuffix(k, wantExt) || (got == "none" && strings.HasSuffix(k, ".gz")) {
					t.Errorf("%s: content is %s", k, got)
				}
				if comp != "mixed" && got != comp {
					t.Errorf("%s: content is %s, want %s", k, got, comp)
				}
				if raw := int64(len(synthTestDecompress(t, k, objs[k]))); raw != sum.Objects[i].RawBytes {
					t.Errorf("%s: %d JSONL bytes, summary says %d", k, raw, sum.Objects[i].RawBytes)
				}
			}
			if comp == "mixed" && (seen["none"] != 2 || seen["gzip"] != 2 || seen["zstd"] != 2) {
				t.Errorf("mixed: %v, want 2 of each", seen)
			}
			got := synthTestJSONL(t, b, "p/")
			for run, w := range want {
				if !bytes.Equal(got[run], w) {
					t.Errorf("%s: decompressed rows differ from the uncompressed sweep", run)
				}
			}
		})
	}
}

// synthTestRow is a decoded row; pointers tell absent from zero.
type synthTestRow struct {
	RunID         *string             `json:"run_id"`
	Seed          *json.Number        `json:"seed"`
	AlgorithmID   *string             `json:"algorithm_id"`
	PolicyID      *string             `json:"policy_id"`
	Task          *string             `json:"task"`
	Step          *json.Number        `json:"step"`
	Reward        *float64            `json:"reward"`
	RegimeID      *string             `json:"regime_id"`
	RegimeOrigin  *string             `json:"regime_origin"`
	Components    map[string]*float64 `json:"components"`
	InvalidAction *bool               `json:"invalid_action"`
	Gamma         *float64            `json:"gamma"`
	EffectiveRank any                 `json:"effective_rank"` // checked through raw
	ObsHash       *string             `json:"obs_hash"`
	Logp          *float64            `json:"logp"`
	Value         *float64            `json:"value"`
}

func TestRows(t *testing.T) {
	cfg := Config{Seeds: 2, Steps: 1200, Intervals: 7, Extras: true, SplitFiles: 3, Seed: 11}
	b, sum := synthTestRun(t, cfg, "")
	if sum.Runs != 6 || sum.Rows != 6*1200 || sum.Steps != 1200 || len(sum.Objects) != 18 {
		t.Fatalf("summary %+v", sum)
	}
	wantLabels := []string{"calm", "gusty", "storm", "calm_again", "gusty", "storm", "calm_again"}
	for run, data := range synthTestJSONL(t, b, "") {
		lines := bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n"))
		if len(lines) != 1200 {
			t.Fatalf("%s: %d rows", run, len(lines))
		}
		var intervals []string
		var successes, solved, invalid, ranks, nulls int
		for i, line := range lines {
			var raw map[string]json.RawMessage
			if err := json.Unmarshal(line, &raw); err != nil {
				t.Fatalf("%s line %d: %v\n%s", run, i+1, err, line)
			}
			var r synthTestRow
			dec := json.NewDecoder(bytes.NewReader(line))
			dec.UseNumber()
			dec.DisallowUnknownFields()
			if err := dec.Decode(&r); err != nil {
				t.Fatalf("%s line %d: %v\n%s", run, i+1, err, line)
			}
			if r.RunID == nil || *r.RunID != run || r.Seed == nil || r.AlgorithmID == nil || !strings.HasPrefix(run, *r.AlgorithmID+"-s") ||
				r.PolicyID == nil || r.Task == nil || *r.Task != "navigate" || r.Reward == nil || r.RegimeID == nil ||
				r.InvalidAction == nil || r.Gamma == nil || *r.Gamma != 0.99 || r.ObsHash == nil || r.Logp == nil || r.Value == nil {
				t.Fatalf("%s line %d: a field is missing or wrong:\n%s", run, i+1, line)
			}
			if seed, err := r.Seed.Int64(); err != nil || run != *r.AlgorithmID+"-s"+r.Seed.String() || seed < 0 {
				t.Fatalf("%s line %d: seed %s", run, i+1, r.Seed)
			}
			if step, err := r.Step.Int64(); err != nil || step != int64(i) {
				t.Fatalf("%s line %d: step %v", run, i+1, r.Step)
			}
			if len(*r.ObsHash) != 16 || strings.Trim(*r.ObsHash, "0123456789abcdef") != "" || *r.Logp >= 0 {
				t.Fatalf("%s line %d: extras %q %v", run, i+1, *r.ObsHash, *r.Logp)
			}
			if _, ok := raw["regime_origin"]; !ok {
				t.Fatalf("%s line %d: no regime_origin", run, i+1)
			}
			if *r.RegimeID == "calm_again" {
				if r.RegimeOrigin == nil || *r.RegimeOrigin != "calm" {
					t.Fatalf("%s line %d: calm_again without origin calm", run, i+1)
				}
			} else if r.RegimeOrigin != nil {
				t.Fatalf("%s line %d: origin %q on %q", run, i+1, *r.RegimeOrigin, *r.RegimeID)
			}
			if len(intervals) == 0 || intervals[len(intervals)-1] != *r.RegimeID {
				intervals = append(intervals, *r.RegimeID)
			}
			p, c, s := r.Components["progress"], r.Components["collision"], r.Components["success"]
			if len(r.Components) != 3 || p == nil || c == nil || s == nil ||
				*p < 0 || *p > 1 || *c < -1 || *c > 0 || (*s != 0 && *s != 1) {
				t.Fatalf("%s line %d: components %s", run, i+1, raw["components"])
			}
			// The bundled experiment spec, computed literally.
			if want := 0.3333333333333333**p + *c + 0.6666666666666667**s; *r.Reward != want || math.IsNaN(want) {
				t.Fatalf("%s line %d: reward %v, spec gives %v", run, i+1, *r.Reward, want)
			}
			if *s != 0 {
				successes++
			}
			if *p > 0 {
				solved++
			}
			if *r.InvalidAction {
				invalid++
			}
			er, ok := raw["effective_rank"]
			switch {
			case i%10 == 0:
				var x float64
				if !ok || json.Unmarshal(er, &x) != nil || x <= 0 {
					t.Fatalf("%s line %d: effective_rank %s", run, i+1, er)
				}
				ranks++
			case i%10 == 5:
				if string(er) != "null" {
					t.Fatalf("%s line %d: effective_rank %s, want null", run, i+1, er)
				}
				nulls++
			case ok:
				t.Fatalf("%s line %d: effective_rank %s, want absent", run, i+1, er)
			}
		}
		if !slices.Equal(intervals, wantLabels) {
			t.Errorf("%s: intervals %q, want %q", run, intervals, wantLabels)
		}
		// Episodes end every 160–240 steps: 5 to 7 ends in 1200 rows.
		if successes < 1 || successes > 7 {
			t.Errorf("%s: %d successes", run, successes)
		}
		if solved < 1200*6/10 || invalid == 0 || invalid > 1200/20 || ranks != 120 || nulls != 120 {
			t.Errorf("%s: solved %d, invalid %d, ranks %d, nulls %d", run, solved, invalid, ranks, nulls)
		}
	}
}

func TestSplitFiles(t *testing.T) {
	cfg := Config{Families: []string{"ppo"}, Seeds: 12, Steps: 100, Intervals: 4, SplitFiles: 3, Compression: "gzip"}
	b, sum := synthTestRun(t, cfg, "")
	keys, _ := synthTestObjects(t, b, "")
	if len(keys) != 36 || keys[0] != "ppo/ppo-s00/part-000.jsonl.gz" || keys[2] != "ppo/ppo-s00/part-002.jsonl.gz" ||
		keys[35] != "ppo/ppo-s11/part-002.jsonl.gz" {
		t.Fatalf("keys %q", keys)
	}
	rows := 0
	for i, o := range sum.Objects {
		rows += o.Rows
		if o.Rows != 33 && o.Rows != 34 || o.RunID != "ppo-s"+keys[i][len("ppo/ppo-s"):len("ppo/ppo-s00")] {
			t.Errorf("%+v", o)
		}
	}
	if rows != 1200 {
		t.Errorf("%d rows", rows)
	}
	whole, _ := synthTestRun(t, Config{Families: []string{"ppo"}, Seeds: 12, Steps: 100, Intervals: 4}, "")
	a, w := synthTestJSONL(t, b, ""), synthTestJSONL(t, whole, "")
	for run := range w {
		if !bytes.Equal(a[run], w[run]) {
			t.Errorf("%s: split rows differ from the whole run", run)
		}
	}

	// A thousand parts still sort in order.
	if k := (&plan{cfg: Config{Families: []string{"f"}, SplitFiles: 1001}, runs: []runSpec{{runID: "f-s0", comp: "none"}}}).keys(0); k[999] != "f/f-s0/part-0999.jsonl" || !slices.IsSorted(k) {
		t.Errorf("keys %q…", k[995:])
	}
}

func TestTargetBytes(t *testing.T) {
	for _, tc := range []struct {
		target int64
		cfg    Config
	}{
		{2 << 20, Config{}},
		{2 << 20, Config{Extras: true, Compression: "zstd", SplitFiles: 2}},
		{300 << 10, Config{Families: []string{"a", "b"}, Seeds: 12}},
		{5 << 20, Config{Seeds: 1, Steps: 100000}}, // shrinks Steps
		// Long runs: the estimate samples every 5th row (made 7th).
		{8 << 20, Config{Families: []string{"ppo"}, Seeds: 1, Extras: true}},
	} {
		tc.cfg.TargetBytes = tc.target
		_, sum := synthTestRun(t, tc.cfg, "")
		if d := math.Abs(float64(sum.RawBytes-tc.target)) / float64(tc.target); d > 0.10 {
			t.Errorf("target %d: %d bytes of JSONL (%.1f %% off), steps %d", tc.target, sum.RawBytes, 100*d, sum.Steps)
		} else {
			t.Logf("target %d: %d bytes (%.2f %% off), %d steps, %d stored", tc.target, sum.RawBytes, 100*d, sum.Steps, sum.Bytes)
		}
	}
}

func TestCancel(t *testing.T) {
	t.Run("before", func(t *testing.T) {
		b := memblob.OpenBucket(nil)
		defer b.Close()
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := Write(ctx, b, "", Config{})
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want context.Canceled", err)
		}
		if keys, _ := synthTestObjects(t, b, ""); len(keys) != 0 {
			t.Errorf("objects written: %q", keys)
		}
	})
	t.Run("midway", func(t *testing.T) {
		b := memblob.OpenBucket(nil)
		defer b.Close()
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		done := make(chan error, 1)
		go func() {
			_, err := Write(ctx, b, "", Config{Steps: 40000, Concurrency: 1})
			done <- err
		}()
		// Cancel once the first run is committed, while the next is half
		// written. No clock: under -race on a loaded machine the first run
		// took over 30 s (the test's old deadline); go test's -timeout is
		// the safety net for a synth that never writes.
		for {
			if ok, _ := b.Exists(context.Background(), "ewc/ewc-s0.jsonl"); ok {
				break
			}
			select {
			case err := <-done:
				t.Fatalf("synth ended (err = %v) before its first object was seen", err)
			default:
			}
			time.Sleep(time.Millisecond)
		}
		cancel()
		err := <-done
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want context.Canceled", err)
		}
		if keys, _ := synthTestObjects(t, b, ""); len(keys) != 0 {
			t.Errorf("objects left behind after a cancelled synth: %q", keys)
		}
	})
}

func TestLocal(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "sweep")
	sum, err := Run(context.Background(), Config{Out: out, Seeds: 1, Steps: 60, Compression: "mixed"})
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	err = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(out, p)
			files = append(files, filepath.ToSlash(rel))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"ewc/ewc-s0.jsonl.zst", "ppo/ppo-s0.jsonl", "sac/sac-s0.jsonl.gz"}
	if !slices.Equal(files, want) {
		t.Errorf("files %q, want %q (no .attrs sidecars)", files, want)
	}
	for _, o := range sum.Objects {
		fi, err := os.Stat(filepath.Join(out, filepath.FromSlash(o.Key)))
		if err != nil || fi.Size() != o.Bytes {
			t.Errorf("%s: %v, size vs summary %d", o.Key, err, o.Bytes)
		}
	}

	// A file:// URL with a sub-directory writes the same bytes.
	out2 := filepath.Join(dir, "again")
	if _, err := Run(context.Background(), Config{Out: "file://" + filepath.ToSlash(out2), Seeds: 1, Steps: 60, Compression: "mixed"}); err != nil {
		t.Fatal(err)
	}
	for _, f := range want {
		a, _ := os.ReadFile(filepath.Join(out, f))
		b, err := os.ReadFile(filepath.Join(out2, f))
		if err != nil || !bytes.Equal(a, b) {
			t.Errorf("%s: %v or bytes differ", f, err)
		}
	}
	if _, err := os.Stat(filepath.Join(out2, "ppo", "ppo-s0.jsonl.attrs")); err == nil {
		t.Error("file:// output wrote .attrs sidecars")
	}

	// mem:// opens through the URL mux (the bucket is gone after Close).
	for _, out := range []string{"mem://", "mem://x/y", "mem:///p?nomd5=1"} {
		if _, err := Run(context.Background(), Config{Out: out, Seeds: 1, Steps: 60}); err != nil {
			t.Fatal(err)
		}
	}
	// An unknown scheme is a usage error.
	var ue *storage.UsageError
	if _, err := Run(context.Background(), Config{Out: "nosuch://b/p", Seeds: 1, Steps: 60}); !errors.As(err, &ue) {
		t.Errorf("unknown scheme: %v, want a *UsageError", err)
	}
}

// TestLocalTempBeside: a local sweep is written with its temporary files
// beside their final names, not in $TMPDIR (which may lie on another file
// system, where the rename fails with "invalid cross-device link"): with
// $TMPDIR a folder that does not exist, the sweep is written all the same,
// and nothing but the objects is left; what a killed synth left beside
// an object goes when the object is written again. Not parallel: it sets
// TMPDIR.
func TestLocalTempBeside(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("TMPDIR", filepath.Join(dir, "no-such-folder"))
	out := filepath.Join(dir, "sweep")
	sum, err := Run(context.Background(), Config{Out: out, Seeds: 1, Steps: 60, Compression: "mixed"})
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	filepath.WalkDir(out, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(out, p)
			files = append(files, filepath.ToSlash(rel))
		}
		return err
	})
	if len(files) != len(sum.Objects) || len(files) != 3 {
		t.Errorf("files %q, want the %d objects alone", files, len(sum.Objects))
	}

	// A killed synth's temporary files beside an object (fileblob's
	// names) go once the object is written again; a user's file stays.
	stale := []string{"ppo/ppo-s0.jsonl.18ee693da6b6ddcb.tmp", "sac/sac-s0.jsonl.gz.0123abcd.tmp"}
	kept := []string{"ppo/ppo-s0.jsonl.notes.tmp", "ppo/other.jsonl.18ee693da6b6ddcb.tmp"}
	for _, f := range append(slices.Clone(stale), kept...) {
		if err := os.WriteFile(filepath.Join(out, filepath.FromSlash(f)), []byte("partial"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := Run(context.Background(), Config{Out: out, Seeds: 1, Steps: 60, Compression: "mixed"}); err != nil {
		t.Fatal(err)
	}
	for _, f := range stale {
		if _, err := os.Stat(filepath.Join(out, filepath.FromSlash(f))); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s: left (%v)", f, err)
		}
	}
	for _, f := range kept {
		if _, err := os.Stat(filepath.Join(out, filepath.FromSlash(f))); err != nil {
			t.Errorf("%s: %v, want it kept", f, err)
		}
	}
}

func TestConfigErrors(t *testing.T) {
	for _, cfg := range []Config{
		{Seeds: -1},
		{Steps: -5},
		{Steps: 5},
		{Intervals: 1},
		{Intervals: -2},
		{Compression: "lz4"},
		{SplitFiles: -1},
		{SplitFiles: 601},
		{TargetBytes: -1},
		{Families: []string{"ppo", "ppo"}},
		{Families: []string{"a/b"}},
		{Families: []string{""}},
		{Families: []string{".."}},
		{Labels: []string{"calm", "calm_again"}},
		{Labels: []string{"a", "b", "a"}},
		{Labels: []string{"a", ""}},
	} {
		b := memblob.OpenBucket(nil)
		_, err := Write(context.Background(), b, "", cfg)
		var ue *storage.UsageError
		if !errors.As(err, &ue) {
			t.Errorf("%+v: err = %v, want a *UsageError", cfg, err)
		}
		if keys, _ := synthTestObjects(t, b, ""); len(keys) != 0 {
			t.Errorf("%+v: wrote %q", cfg, keys)
		}
		b.Close()
	}
	// Nothing is created for a bad config.
	dir := filepath.Join(t.TempDir(), "never")
	if _, err := Run(context.Background(), Config{Out: dir, Intervals: 1}); err == nil {
		t.Error("bad config accepted")
	}
	if _, err := os.Stat(dir); err == nil {
		t.Error("a bad config created the output directory")
	}
}

func TestSchedule(t *testing.T) {
	names := func(n, k int) []int {
		var s []int
		for i := range k {
			s = append(s, scheduleAt(n, i))
		}
		return s
	}
	for _, tc := range []struct {
		n, k int
		want []int
	}{
		{3, 6, []int{0, 1, 2, 3, 1, 2}},
		{3, 10, []int{0, 1, 2, 3, 1, 2, 3, 1, 2, 3}},
		{3, 2, []int{0, 1}},
		{2, 5, []int{0, 1, 2, 1, 2}},
		{1, 4, []int{0, 1, 0, 1}},
	} {
		if got := names(tc.n, tc.k); !slices.Equal(got, tc.want) {
			t.Errorf("%d labels, %d intervals: %v, want %v", tc.n, tc.k, got, tc.want)
		}
	}
}

// TestSynthScores reads a sweep back through readers and scores it with
// skyfall: the families must differ the way their dynamics say.
func TestScores(t *testing.T) {
	for seed := range uint64(4) {
		t.Run(strconv.FormatUint(seed, 10), func(t *testing.T) { synthTestScores(t, seed) })
	}
}

func synthTestScores(t *testing.T, seed uint64) {
	cfg := Config{Seeds: 5, Compression: "mixed", SplitFiles: 2, Extras: true, Seed: seed}
	b, _ := synthTestRun(t, cfg, "in/")
	keys, objs := synthTestObjects(t, b, "in/")
	opts := readers.Options{Components: []string{"progress", "success"}}
	var decoded []*readers.ObjectRuns
	for _, k := range keys {
		o, err := readers.DecodeObject("mem://in/"+k, k, bytes.NewReader(objs[k]), opts)
		if err != nil {
			t.Fatal(err)
		}
		decoded = append(decoded, o)
	}
	traces, err := readers.Assemble(decoded, opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(traces) != 15 {
		t.Fatalf("%d runs, want 15", len(traces))
	}
	params := skyfall.DefaultParams()
	params.EpisodeEnd = []string{"success"}
	params.SolveComponent = "progress"
	type agg struct{ forget, adapt, reward, rank float64 }
	fams := map[string]*agg{}
	for _, tr := range traces {
		if tr.Meta["gamma"] != "0.99" || tr.Meta["task"] != "navigate" || tr.Meta["policy_id"] != "mlp-256x2" {
			t.Errorf("%s: meta %v", tr.Key, tr.Meta)
		}
		for _, x := range []string{"obs_hash", "logp", "value", "step"} {
			if _, ok := tr.Meta[x]; ok {
				t.Errorf("%s: per-step %s became metadata", tr.Key, x)
			}
		}
		if !slices.Equal(tr.LabelNames, []string{"calm", "gusty", "storm", "calm_again"}) ||
			!slices.Equal(tr.Origins, []string{"calm", "gusty", "storm", "calm"}) {
			t.Errorf("%s: labels %q origins %q", tr.Key, tr.LabelNames, tr.Origins)
		}
		res, err := skyfall.Score(tr, &params, nil)
		if err != nil {
			t.Fatal(err)
		}
		if res.NIntervals != 6 || res.NShifts != 5 || !res.SolveRate.OK || !res.InvalidActionRate.OK || !res.EffectiveRankRun.OK {
			t.Errorf("%s: %+v", tr.Key, res)
		}
		a := fams[tr.Meta["algorithm_id"]]
		if a == nil {
			a = &agg{}
			fams[tr.Meta["algorithm_id"]] = a
		}
		for _, l := range res.Labels {
			if l.Label == "calm" {
				if !l.Forgetting.OK {
					t.Fatalf("%s: forgetting %+v", tr.Key, l.Forgetting)
				}
				a.forget += l.Forgetting.V / 5
			}
			a.reward += l.PerConfigurationReward.V / 20
		}
		a.rank += res.EffectiveRankRun.V / 5
		// Adaptation to a regime met for the first time (a revisit also
		// depends on what the family retained).
		for _, iv := range res.Intervals {
			if iv.Index > 0 && iv.Encounter == 0 {
				a.adapt += iv.AdaptationSpeed.V / 10
			}
		}
	}
	for _, f := range []string{"ppo", "sac", "ewc"} {
		t.Logf("%s: forgetting %+.4f  adaptation %.1f  reward %.4f  effective rank %.1f", f, fams[f].forget, fams[f].adapt, fams[f].reward, fams[f].rank)
	}
	// ewc forgets least, sac most; sac adapts fastest, ewc slowest.
	if !(fams["ewc"].forget < fams["ppo"].forget && fams["ppo"].forget < fams["sac"].forget) {
		t.Error("forgetting is not ewc < ppo < sac")
	}
	if !(fams["sac"].adapt < fams["ppo"].adapt && fams["ppo"].adapt < fams["ewc"].adapt) {
		t.Error("adaptation speed is not sac < ppo < ewc")
	}
}

func BenchmarkRun(b *testing.B) {
	cfg := Config{Seeds: 2, TargetBytes: 32 << 20, Extras: true}
	for _, comp := range []string{"none", "zstd"} {
		b.Run(comp, func(b *testing.B) {
			cfg.Compression = comp
			b.ReportAllocs()
			var raw int64
			for b.Loop() {
				bkt := memblob.OpenBucket(nil)
				sum, err := Write(context.Background(), bkt, "", cfg)
				if err != nil {
					b.Fatal(err)
				}
				raw = sum.RawBytes
				bkt.Close()
			}
			b.SetBytes(raw)
		})
	}
}

func ExampleRun() {
	dir, err := os.MkdirTemp("", "synth-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	sum, err := Run(context.Background(), Config{
		Out:         dir, // or s3://bucket/prefix, gs://…, mem://
		Families:    []string{"ppo", "ewc"},
		Seeds:       2,
		Steps:       300,
		Compression: "mixed",
	})
	if err != nil {
		panic(err)
	}
	for _, o := range sum.Objects {
		fmt.Println(o.Key, o.Rows)
	}
	fmt.Println(sum.Runs, "runs,", sum.Rows, "rows")
	// Output:
	// ewc/ewc-s0.jsonl.zst 300
	// ewc/ewc-s1.jsonl 300
	// ppo/ppo-s0.jsonl 300
	// ppo/ppo-s1.jsonl.gz 300
	// 4 runs, 1200 rows
}
