package pipeline

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"gocloud.dev/blob"

	"github.com/crlbatch/crlbatch/internal/synth"
	"github.com/crlbatch/crlbatch/writers"
)

// The result files are written publishAtOnce at once (putFiles). These
// tests hold some writes open (testHookPut) so that several are under way
// when one fails or the job is cancelled, through a local folder
// (fileblob) and an in-memory bucket (memblob).

// publishStore is a job's OUTPUT on one store: the job's configuration,
// and what the store holds under OUTPUT once the job is over.
type publishStore struct {
	name string
	job  func(t *testing.T) (cfg Config, left func() []string)
}

var publishStores = []publishStore{
	{"fileblob", func(t *testing.T) (Config, func() []string) {
		out := filepath.Join(t.TempDir(), "out")
		cfg := localJob(localSweep(t), out, nil)
		return cfg, func() []string {
			var left []string
			filepath.WalkDir(out, func(p string, d fs.DirEntry, err error) error {
				if err == nil && !d.IsDir() {
					left = append(left, p)
				}
				return nil
			})
			return left
		}
	}},
	{"memblob", func(t *testing.T) (Config, func() []string) {
		return memPublishJob(t, "mem://lab/out")
	}},
	{"object store", func(t *testing.T) (Config, func() []string) {
		// An in-memory bucket behind an s3:// URL: the job treats it as
		// an object store (an upload under way at a cancel may finish).
		grace := uploadGraceTime
		uploadGraceTime = 100 * time.Millisecond
		t.Cleanup(func() { uploadGraceTime = grace })
		return memPublishJob(t, "s3://lab/out?region=us-east-1")
	}},
}

// memPublishJob is a job reading an in-memory sweep and writing to out,
// whose bucket the job's opener serves from memory too, and the listing of
// what OUTPUT holds.
func memPublishJob(t *testing.T, out string) (Config, func() []string) {
	ctx := context.Background()
	op := &memOpener{}
	in, _, _ := op.open(ctx, "mem://lab")
	if _, err := synth.Write(ctx, in, "in/", synth.Config{Seeds: 1, Steps: 80, Seed: 3}); err != nil {
		t.Fatal(err)
	}
	loc, err := ParseLocation(out, false)
	if err != nil {
		t.Fatal(err)
	}
	b, _, _ := op.open(ctx, loc.BucketURL)
	cfg := memJob(t, op, "mem://lab/in", out)
	cfg.Resamples = 200
	cfg.Retry = RetryPolicy{Attempts: 2, Initial: time.Millisecond, Max: time.Millisecond}
	return cfg, func() []string {
		var left []string
		it := b.List(&blob.ListOptions{Prefix: loc.Prefix})
		for {
			o, err := it.Next(ctx)
			if err != nil {
				return left
			}
			left = append(left, o.Key)
		}
	}
}

// putWatch records the puts of result files a job starts (by name) and
// holds those it is told to until their context is done.
type putWatch struct {
	mu        sync.Mutex
	started   map[string]bool
	cancelled map[string]bool // held, and their context was done
}

func newPutWatch(t *testing.T, hook func(w *putWatch, ctx context.Context, name string, committed bool) error) *putWatch {
	w := &putWatch{started: map[string]bool{}, cancelled: map[string]bool{}}
	testHookPut = func(ctx context.Context, key string, committed bool) error {
		name := path.Base(key)
		if name == ManifestName || strings.HasPrefix(key, stateDir) || strings.Contains(key, "/"+stateDir) {
			return nil
		}
		if !committed {
			w.mu.Lock()
			w.started[name] = true
			w.mu.Unlock()
		}
		return hook(w, ctx, name, committed)
	}
	t.Cleanup(func() { testHookPut = nil })
	return w
}

// hold blocks until ctx is done and records that it was.
func (w *putWatch) hold(ctx context.Context, name string) error {
	<-ctx.Done()
	w.mu.Lock()
	w.cancelled[name] = true
	w.mu.Unlock()
	return ctx.Err()
}

// TestPublishOneFileOfManyFails: while several result files are being
// written, one write fails after the store committed its file: the job
// fails with that write's error, naming the file; the writes under way
// are cancelled and no other is started; every file the job wrote, the
// failed one included, is deleted, and no manifest is written.
//
// Not parallel (see TestMain): newPutWatch sets testHookPut, and it counts
// the goroutines of the process.
func TestPublishOneFileOfManyFails(t *testing.T) {
	for _, st := range publishStores {
		t.Run(st.name, func(t *testing.T) {
			cfg, left := st.job(t)
			// runs.parquet is written whole, which lets a fifth put start;
			// then run_summary.parquet fails, its file committed.
			fifth := make(chan struct{})
			var fifthOnce sync.Once
			w := newPutWatch(t, func(w *putWatch, ctx context.Context, name string, committed bool) error {
				if !committed {
					w.mu.Lock()
					if len(w.started) == publishAtOnce+1 {
						fifthOnce.Do(func() { close(fifth) })
					}
					w.mu.Unlock()
				}
				switch {
				case name == "runs.parquet":
					return nil
				case name == "run_summary.parquet" && committed:
					<-fifth
					return errors.New("injected failure")
				case name == "run_summary.parquet":
					return nil
				case !committed:
					return w.hold(ctx, name)
				}
				return nil
			})
			base := runtime.NumGoroutine()
			_, err := Run(context.Background(), cfg)
			if !IsStorage(err) || !strings.Contains(err.Error(), "run_summary.parquet") || !strings.Contains(err.Error(), "injected failure") {
				t.Fatalf("got %v, want the storage error of run_summary.parquet", err)
			}
			w.mu.Lock()
			defer w.mu.Unlock()
			// Four at once: runs, intervals, run_summary, families; runs
			// done, a fifth. Held until the failure, and nothing after.
			if len(w.started) != publishAtOnce+1 {
				t.Errorf("%d puts started (%v), want %d", len(w.started), w.started, publishAtOnce+1)
			}
			if len(w.cancelled) != publishAtOnce-1 {
				t.Errorf("the puts under way cancelled: %v, want %d", w.cancelled, publishAtOnce-1)
			}
			if l := left(); len(l) > 0 {
				t.Errorf("a failed job left %q", l)
			}
			checkGoroutines(t, base)
		})
	}
}

// TestPublishCancelledMidway: a job cancelled while several result files
// are being written returns context.Canceled and leaves nothing: the
// files written before the cancel are deleted, those under way aborted.
//
// Not parallel (see TestMain): newPutWatch sets testHookPut, and it counts
// the goroutines of the process.
func TestPublishCancelledMidway(t *testing.T) {
	for _, st := range publishStores {
		t.Run(st.name, func(t *testing.T) {
			cfg, left := st.job(t)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var once sync.Once
			var n int
			w := newPutWatch(t, func(w *putWatch, pctx context.Context, name string, committed bool) error {
				if committed {
					return nil
				}
				w.mu.Lock()
				n++
				k := n
				w.mu.Unlock()
				switch {
				case k <= 2: // written whole before the cancel
					return nil
				case k == publishAtOnce+2:
					once.Do(cancel)
				}
				return w.hold(pctx, name)
			})
			base := runtime.NumGoroutine()
			_, err := Run(ctx, cfg)
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("got %v, want context.Canceled", err)
			}
			w.mu.Lock()
			defer w.mu.Unlock()
			if len(w.started) != publishAtOnce+2 || len(w.cancelled) != publishAtOnce {
				t.Errorf("%d puts started, %d cancelled; want %d and %d", len(w.started), len(w.cancelled), publishAtOnce+2, publishAtOnce)
			}
			if l := left(); len(l) > 0 {
				t.Errorf("a cancelled job left %q", l)
			}
			checkGoroutines(t, base)
		})
	}
}

// checkGoroutines waits a little for the goroutines a job started to end.
func checkGoroutines(t *testing.T, base int) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Second)
	for runtime.NumGoroutine() > base && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > base {
		t.Errorf("%d goroutines still running after the job (%d before)", n, base)
	}
}

// TestPublishOrderOfTheManifest: whatever order the writes end in (here
// the first table's write is held back until every file that is not a
// table is written),
// the manifest lists the outputs in the result's order with the same
// bytes and digests as a job whose writes end in order, and every file
// holds what its entry says.
//
// Not parallel (see TestMain): it sets testHookPut, which every job in the
// process calls.
func TestPublishOrderOfTheManifest(t *testing.T) {
	in := localSweep(t)
	run := func(hook func(ctx context.Context, key string, committed bool) error) (string, []writers.ManifestOutput, []byte) {
		t.Helper()
		testHookPut = hook
		defer func() { testHookPut = nil }()
		out := filepath.Join(t.TempDir(), "out")
		cfg := localJob(in, out, nil)
		cfg.BootstrapSeed = 7
		sum, err := Run(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		man, err := os.ReadFile(filepath.Join(out, ManifestName))
		if err != nil {
			t.Fatal(err)
		}
		return out, sum.Outputs, man
	}
	// A write of one file at a time ends in order.
	var one sync.Mutex
	_, want, _ := run(func(ctx context.Context, key string, committed bool) error {
		if committed {
			one.Unlock()
		} else {
			one.Lock()
		}
		return nil
	})
	// The first table's write ends after every other file's but the
	// tables'.
	var others sync.WaitGroup
	n := 0
	for _, o := range want {
		if !strings.HasSuffix(o.Name, ".parquet") {
			n++
		}
	}
	others.Add(n)
	out, got, man := run(func(ctx context.Context, key string, committed bool) error {
		switch {
		case !committed || path.Base(key) == ManifestName:
		case path.Base(key) == want[0].Name:
			others.Wait()
		case strings.HasSuffix(key, ".parquet"):
		default:
			others.Done()
		}
		return nil
	})
	if !reflect.DeepEqual(got, want) {
		t.Errorf("outputs\n%v\nwant\n%v", got, want)
	}
	var m struct {
		Outputs []writers.ManifestOutput `json:"outputs"`
	}
	if err := json.Unmarshal(man, &m); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(m.Outputs, want) {
		t.Errorf("manifest.json's outputs\n%v\nwant\n%v", m.Outputs, want)
	}
	for _, o := range m.Outputs {
		data, err := os.ReadFile(filepath.Join(out, o.Name))
		if sum := sha256.Sum256(data); err != nil || int64(len(data)) != o.Bytes || hex.EncodeToString(sum[:]) != o.SHA256 {
			t.Errorf("%s: %d bytes (%v), not as its entry says: %+v", o.Name, len(data), err, o)
		}
	}
}

// TestManifestNamesTheFirstMissingFile: the files are checked several at
// once before the manifest is written; of two that went, the error names
// the first in the result's order, whichever check ends first, and no
// manifest is written.
//
// Not parallel (see TestMain): it sets testHookBeforeManifest, which every
// job in the process calls.
func TestManifestNamesTheFirstMissingFile(t *testing.T) {
	in := localSweep(t)
	for range 5 {
		out := filepath.Join(t.TempDir(), "out")
		testHookBeforeManifest = func(target string) {
			for _, name := range []string{"report.html", "intervals.parquet"} {
				os.Remove(filepath.Join(out, filepath.FromSlash(target), name))
			}
		}
		_, err := Run(context.Background(), localJob(in, out, nil))
		testHookBeforeManifest = nil
		if !IsStorage(err) || !strings.Contains(err.Error(), "intervals.parquet") || !strings.Contains(err.Error(), "before the manifest was written") {
			t.Fatalf("got %v, want a storage error naming intervals.parquet", err)
		}
		if _, err := os.Stat(filepath.Join(out, ManifestName)); err == nil {
			t.Fatal("a manifest was written although two files are gone")
		}
	}
}
