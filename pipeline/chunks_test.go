package pipeline

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
	"gocloud.dev/blob"

	"github.com/crlbatch/crlbatch/internal/synth"
	"github.com/crlbatch/crlbatch/scoring"
)

// oneBigObject writes a synthetic sweep as one object whose runs
// interleave line by line, with a few bad rows among them, beside one small
// object: the big one is more than a core's share of the sweep.
func oneBigObject(t *testing.T, ctx context.Context, b *blob.Bucket) {
	t.Helper()
	if _, err := synth.Write(ctx, b, "src/", synth.Config{Seeds: 2, Steps: 150, Seed: 9, Extras: true}); err != nil {
		t.Fatal(err)
	}
	var runs [][]string
	it := b.List(&blob.ListOptions{Prefix: "src/"})
	for {
		obj, err := it.Next(ctx)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		data, err := b.ReadAll(ctx, obj.Key)
		if err != nil {
			t.Fatal(err)
		}
		runs = append(runs, strings.Split(strings.TrimSuffix(string(data), "\n"), "\n"))
	}
	if len(runs) < 2 {
		t.Fatalf("%d synthetic runs", len(runs))
	}
	small := runs[len(runs)-1]
	runs = runs[:len(runs)-1]
	var big strings.Builder
	for i := 0; ; i++ {
		wrote := false
		for _, r := range runs {
			if i < len(r) {
				big.WriteString(r[i])
				big.WriteByte('\n')
				wrote = true
			}
		}
		if !wrote {
			break
		}
		if i == 40 || i == 97 {
			big.WriteString(`{"reward": "not a number", "regime_id": "calm"}` + "\n")
		}
	}
	if err := b.WriteAll(ctx, "sweep/big.jsonl", []byte(big.String()), nil); err != nil {
		t.Fatal(err)
	}
	if err := b.WriteAll(ctx, "sweep/small.jsonl", []byte(strings.Join(small, "\n")+"\n"), nil); err != nil {
		t.Fatal(err)
	}
}

// TestSplitObjectIsInvisible: an object decoded in chunks on several
// goroutines gives the same result files, byte for byte, and the same
// manifest (bad rows included) as the same object decoded on one, and the
// same error when its bad rows go over --max-bad-rows; plain, and
// compressed (decoded by decodeCompressed).
func TestSplitObjectIsInvisible(t *testing.T) {
	t.Parallel()
	t.Run("plain", func(t *testing.T) { splitIsInvisible(t, nil) })
	t.Run("gzip", func(t *testing.T) {
		splitIsInvisible(t, func(data []byte) []byte {
			var buf bytes.Buffer
			zw := gzip.NewWriter(&buf)
			if _, err := zw.Write(data); err != nil {
				t.Fatal(err)
			}
			if err := zw.Close(); err != nil {
				t.Fatal(err)
			}
			return buf.Bytes()
		})
	})
	t.Run("zstd", func(t *testing.T) {
		splitIsInvisible(t, func(data []byte) []byte {
			zw, err := zstd.NewWriter(nil)
			if err != nil {
				t.Fatal(err)
			}
			defer zw.Close()
			return zw.EncodeAll(data, nil)
		})
	})
}

func splitIsInvisible(t *testing.T, encode func([]byte) []byte) {
	ctx := context.Background()
	op := &memOpener{}
	b, _, _ := op.open(ctx, "mem://lab")
	oneBigObject(t, ctx, b)
	if encode != nil {
		for _, key := range []string{"sweep/big.jsonl", "sweep/small.jsonl"} {
			data, err := b.ReadAll(ctx, key)
			if err != nil {
				t.Fatal(err)
			}
			if err := b.WriteAll(ctx, key, encode(data), nil); err != nil {
				t.Fatal(err)
			}
		}
	}

	score := func(out string, concurrency, chunk, maxBad int) (map[string][]byte, error) {
		cfg := memJob(t, op, "mem://lab/sweep", "mem://lab/"+out)
		cfg.Concurrency, cfg.chunkBytes, cfg.MaxBadRows = concurrency, chunk, maxBad
		j, err := newJob(&cfg)
		if err != nil {
			t.Fatal(err)
		}
		var objs []object
		for _, key := range []string{"sweep/big.jsonl", "sweep/small.jsonl"} {
			a, err := b.Attributes(ctx, key)
			if err != nil {
				t.Fatal(err)
			}
			objs = append(objs, object{Key: key, Size: a.Size})
		}
		// The big object as more than a core's share, the small one as
		// the last of several (it is more than two chunks long).
		if split := j.splitObjects(objs); split[0] != (concurrency > 1) || split[1] != (concurrency > 1) {
			t.Fatalf("concurrency %d: both objects must be split exactly when there are several cores", concurrency)
		}
		if _, err := Run(ctx, cfg); err != nil {
			return nil, err
		}
		files := map[string][]byte{}
		for _, name := range []string{"runs.parquet", "intervals.parquet", "run_summary.parquet", "families.parquet", "report.md", "manifest.json"} {
			data, err := b.ReadAll(ctx, out+"/"+name)
			if err != nil {
				t.Fatal(err)
			}
			files[name] = data
		}
		var m map[string]any
		if err := json.Unmarshal(files["manifest.json"], &m); err != nil {
			t.Fatal(err)
		}
		delete(m, "started_at")
		delete(m, "finished_at")
		delete(m, "attempt_id")
		delete(m, "output")
		files["manifest.json"], _ = json.Marshal(m)
		return files, nil
	}
	whole, err := score("whole", 1, 300, 2)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Count(whole["manifest.json"], []byte(`"reason":"reward: got string, want number"`)) != 2 {
		t.Fatalf("the bad rows are not in the manifest: %s", whole["manifest.json"])
	}
	split, err := score("split", 3, 300, 2)
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range whole {
		if !bytes.Equal(split[name], data) {
			t.Errorf("%s differs when the big object is decoded in chunks:\n%s\n%s", name, split[name], data)
		}
	}
	// validate reads the big object in chunks too, and finds the same.
	validate := func(concurrency int) string {
		cfg := memJob(t, op, "mem://lab/sweep", "")
		cfg.Concurrency, cfg.chunkBytes = concurrency, 300
		rep, err := Validate(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		return fmt.Sprintf("%+v", *rep)
	}
	if w, s := validate(1), validate(3); w != s {
		t.Errorf("validate differs when the big object is decoded in chunks:\n%s\n%s", s, w)
	} else if !strings.Contains(w, "BadRows:2") {
		t.Errorf("validate found other than the two bad rows: %s", w)
	}
	_, werr := score("whole-over", 1, 300, 1)
	_, serr := score("split-over", 3, 300, 1)
	if werr == nil || serr == nil || werr.Error() != serr.Error() {
		t.Errorf("over --max-bad-rows: whole %v, split %v", werr, serr)
	}
}

// TestSplitObjects: with more than one core, an object is decoded in
// chunks when it is at least two chunks long and either holds more than
// 1/--concurrency of the sweep's bytes or is the last of several objects
// (read last, it would otherwise end alone on one core) and not named as
// gzip or zstd; with one core, never.
func TestSplitObjects(t *testing.T) {
	t.Parallel()
	const chunk = 100
	for _, tc := range []struct {
		name        string
		concurrency int
		sizes       []int64
		want        []bool
		keys        []string // the objects' names (default: N.jsonl)
	}{
		{"one core", 1, []int64{1000, 1000, 1000}, []bool{false, false, false}, nil},
		{"one core, one big object", 1, []int64{5000, 100}, []bool{false, false}, nil},
		{"equal objects: the last", 2, []int64{1000, 1000, 1000, 1000}, []bool{false, false, false, true}, nil},
		{"equal objects, four cores: the last", 4, []int64{1000, 1000, 1000, 1000, 1000}, []bool{false, false, false, false, true}, nil},
		{"the last under two chunks", 2, []int64{1000, 1000, 199}, []bool{false, false, false}, nil},
		{"the last at two chunks", 2, []int64{1000, 1000, 200}, []bool{false, false, true}, nil},
		{"one object of two chunks", 2, []int64{200}, []bool{true}, nil},
		{"one object under two chunks", 2, []int64{199}, []bool{false}, nil},
		{"a big one first and the last", 2, []int64{5000, 300, 300}, []bool{true, false, true}, nil},
		{"a core's share exactly is not more", 2, []int64{1000, 1000}, []bool{false, true}, nil},
		{"two of three cores' shares", 3, []int64{1000, 1000, 200}, []bool{true, true, true}, nil},
		{"the last compressed, zstd", 2, []int64{1000, 1000, 1000}, []bool{false, false, false}, []string{"a.jsonl.zst", "b.jsonl.zst", "c.jsonl.zst"}},
		{"the last compressed, gzip", 2, []int64{1000, 1000}, []bool{false, false}, []string{"a.jsonl", "b.jsonl.gz"}},
		{"the last compressed, .zstd", 2, []int64{1000, 1000}, []bool{false, false}, []string{"a.jsonl", "b.zstd"}},
		{"only the last plain", 2, []int64{1000, 1000}, []bool{false, true}, []string{"a.jsonl.zst", "b.jsonl"}},
		{"a big compressed one still split", 2, []int64{5000, 300}, []bool{true, false}, []string{"a.jsonl.zst", "b.jsonl.gz"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := memJob(t, &memOpener{}, "mem://lab/sweep", "mem://lab/out")
			cfg.Concurrency, cfg.chunkBytes = tc.concurrency, chunk
			j, err := newJob(&cfg)
			if err != nil {
				t.Fatal(err)
			}
			objs := make([]object, len(tc.sizes))
			for i, size := range tc.sizes {
				objs[i] = object{Key: fmt.Sprintf("sweep/%d.jsonl", i), Size: size}
				if tc.keys != nil {
					objs[i].Key = "sweep/" + tc.keys[i]
				}
			}
			if got := j.splitObjects(objs); fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("sizes %v, concurrency %d: split %v, want %v", tc.sizes, tc.concurrency, got, tc.want)
			}
		})
	}
}

// fakeChunks is an object of n chunks whose Merge fails at chunk failAt
// (-1: never). It records the merge order and checks what decodeChunked
// promises: Next and Merge are never called at once with themselves,
// nothing is called after decodeChunked returned, and at most 2×workers
// chunks are read and not yet merged.
type fakeChunks struct {
	t          *testing.T
	n          int
	failAt     int
	workers    int
	compressed bool

	mu       sync.Mutex
	read     int
	merges   []int
	inNext   bool
	inMerge  bool
	decoding int
	maxOut   int
	closed   int
	returned bool
}

var errFakeMerge = errors.New("merge failed")

func (f *fakeChunks) enter(flag *bool, what string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if *flag {
		f.t.Errorf("%s called while another %s runs", what, what)
	}
	if f.returned {
		f.t.Errorf("%s called after decodeChunked returned", what)
	}
	*flag = true
}

func (f *fakeChunks) leave(flag *bool) {
	f.mu.Lock()
	*flag = false
	f.mu.Unlock()
}

func (f *fakeChunks) Next(int) (any, error) {
	f.enter(&f.inNext, "Next")
	defer f.leave(&f.inNext)
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.read == f.n {
		return nil, io.EOF
	}
	seq := f.read
	f.read++
	f.maxOut = max(f.maxOut, f.read-len(f.merges))
	return seq, nil
}

func (f *fakeChunks) Decode(ch any) any {
	f.mu.Lock()
	f.decoding++
	f.mu.Unlock()
	// Chunks take unequal times, so that they end out of order.
	if seq := ch.(int); seq%3 == 0 {
		time.Sleep(time.Duration(1+seq%4) * time.Millisecond)
	}
	f.mu.Lock()
	f.decoding--
	f.mu.Unlock()
	return ch
}

func (f *fakeChunks) Merge(d any) error {
	f.enter(&f.inMerge, "Merge")
	defer f.leave(&f.inMerge)
	f.mu.Lock()
	defer f.mu.Unlock()
	seq := d.(int)
	if seq != len(f.merges) {
		f.t.Errorf("chunk %d merged after %v", seq, f.merges)
	}
	f.merges = append(f.merges, seq)
	if seq == f.failAt {
		return errFakeMerge
	}
	return nil
}

func (f *fakeChunks) Object() (scoring.Object, error) { return nil, nil }
func (f *fakeChunks) Compressed() bool                { return f.compressed }

func (f *fakeChunks) Close() error {
	f.mu.Lock()
	f.closed++
	f.mu.Unlock()
	return nil
}

// TestDecodeChunkedOrder: whatever order the chunks are decoded in, they
// are merged in order, each once; a failed merge is the object's error,
// stops the reading within the chunks already allowed ahead, and leaves no
// goroutine at work; at most 2×workers chunks are out at once.
func TestDecodeChunkedOrder(t *testing.T) {
	t.Parallel()
	for _, compressed := range []bool{false, true} {
		for _, workers := range []int{1, 2, 3, 8} {
			out := 2 * workers
			for _, n := range []int{0, 1, 2, 40} {
				for _, failAt := range []int{-1, 0, n / 2, n - 1} {
					if failAt >= n || failAt < -1 {
						continue
					}
					f := &fakeChunks{t: t, n: n, failAt: failAt, workers: workers, compressed: compressed}
					_, err := decodeChunked(f, workers, 1)
					f.mu.Lock()
					f.returned = true
					name := fmt.Sprintf("compressed %v, workers %d, %d chunks, merge failing at %d", compressed, workers, n, failAt)
					want := n
					if failAt >= 0 {
						want = failAt + 1
						if !errors.Is(err, errFakeMerge) {
							t.Errorf("%s: error %v", name, err)
						}
						if f.read > want+out {
							t.Errorf("%s: %d chunks read, more than %d ahead of the failure", name, f.read, out)
						}
					} else {
						if err != nil {
							t.Errorf("%s: %v", name, err)
						}
						if f.read != n {
							t.Errorf("%s: %d chunks read", name, f.read)
						}
					}
					if len(f.merges) != want {
						t.Errorf("%s: merged %v", name, f.merges)
					}
					if f.maxOut > out {
						t.Errorf("%s: %d chunks read and not merged at once", name, f.maxOut)
					}
					if f.decoding != 0 || f.inNext || f.inMerge {
						t.Errorf("%s: still at work after it returned", name)
					}
					if f.closed != 1 {
						t.Errorf("%s: closed %d times", name, f.closed)
					}
					f.mu.Unlock()
				}
			}
		}
	}
}
