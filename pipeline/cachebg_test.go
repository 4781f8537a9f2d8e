package pipeline

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"gocloud.dev/blob"

	"github.com/crlbatch/crlbatch/cache"
	"github.com/crlbatch/crlbatch/internal/synth"
	"github.com/crlbatch/crlbatch/scoring"
)

// listKeys lists the keys under prefix in b.
func listKeys(t *testing.T, b *blob.Bucket, prefix string) []string {
	t.Helper()
	var keys []string
	it := b.List(&blob.ListOptions{Prefix: prefix})
	for {
		o, err := it.Next(context.Background())
		if err == io.EOF {
			return keys
		}
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, o.Key)
	}
}

// synthSweep writes a small sweep under mem://lab/sweep/ and returns the
// lab bucket and the sweep's keys.
func synthSweep(t *testing.T, op *memOpener) (*blob.Bucket, []string) {
	t.Helper()
	ctx := context.Background()
	b, _, _ := op.open(ctx, "mem://lab")
	if _, err := synth.Write(ctx, b, "sweep/", synth.Config{Seeds: 3, Steps: 150, Seed: 4, Extras: true}); err != nil {
		t.Fatal(err)
	}
	keys := listKeys(t, b, "sweep/")
	if len(keys) < 4 {
		t.Fatalf("%d objects", len(keys))
	}
	return b, keys
}

// changeReward changes the reward of the 11th row of object key in b.
func changeReward(t *testing.T, b *blob.Bucket, key string) {
	t.Helper()
	ctx := context.Background()
	data, err := b.ReadAll(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	lines[10] = regexp.MustCompile(`"reward":[^,]+,`).ReplaceAllString(lines[10], `"reward":0.25,`)
	if err := b.WriteAll(ctx, key, []byte(strings.Join(lines, "\n")+"\n"), nil); err != nil {
		t.Fatal(err)
	}
}

// warmSweep writes a small sweep under mem://lab/sweep/, scores it cold
// into the cache mem://cache/c, then changes one reward of its second
// object. It returns the lab bucket and the changed key.
func warmSweep(t *testing.T, op *memOpener) (*blob.Bucket, string) {
	t.Helper()
	b, keys := synthSweep(t, op)
	cfg := memJob(t, op, "mem://lab/sweep", "mem://lab/cold")
	cfg.Concurrency, cfg.Cache = 2, "mem://cache/c"
	if _, err := Run(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	changeReward(t, b, keys[1])
	return b, keys[1]
}

// TestChangedObjectEntryBesideScoring: on a warm rerun the changed
// object's entry is encoded and written beside the scoring, the
// reduction and the figures, not before them: its write is held here
// until the reduction has started, which a write on the job's path
// would never see. The object stays whole until its entry is written
// (the scoring pass releases the objects it read): a later job that has
// to read every object back finds the changed one's entry, and none of
// the results differ from a job without a cache.
//
// Not parallel (see TestMain): it sets testHookPhase and testHookEntryWrite,
// which every job in the process calls.
func TestChangedObjectEntryBesideScoring(t *testing.T) {
	ctx := context.Background()
	op := &memOpener{}
	b, changedKey := warmSweep(t, op)

	reduced := make(chan struct{})
	var once sync.Once
	testHookPhase = func(p string) {
		if p == "reduce" {
			once.Do(func() { close(reduced) })
		}
	}
	var held, late bool
	var writes []string
	testHookEntryWrite = func(url string) {
		writes = append(writes, url)
		select {
		case <-reduced:
			held = true
		case <-time.After(10 * time.Second):
			late = true
		}
	}
	defer func() { testHookPhase, testHookEntryWrite = nil, nil }()
	cfg := memJob(t, op, "mem://lab/sweep", "mem://lab/warm")
	cfg.Concurrency, cfg.Cache = 2, "mem://cache/c"
	var log bytes.Buffer
	cfg.Logger = slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelWarn}))
	sum, err := Run(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	testHookPhase, testHookEntryWrite = nil, nil
	if len(writes) != 1 || !strings.HasSuffix(writes[0], changedKey) {
		t.Fatalf("entries written in the background: %q, want the changed object's %s alone", writes, changedKey)
	}
	if late || !held {
		t.Fatalf("the changed object's entry was written on the job's path: the reduction did not start while it waited")
	}
	if sum.Read[ReadDecoded] != 1 {
		t.Errorf("warm job: %v, want 1 object decoded", sum.Read)
	}
	if log.Len() > 0 {
		t.Errorf("warnings: %s", log.String())
	}

	// Every object read back: another --alpha changes the scoring key, so
	// that no run is served from its entry and each object is read from
	// the cache, the changed one from the entry written above.
	p, err := scoring.Lookup(scoring.Default())
	if err != nil {
		t.Fatal(err)
	}
	again := memJob(t, op, "mem://lab/sweep", "mem://lab/again")
	again.Concurrency, again.Cache, again.Logger = 2, "mem://cache/c", cfg.Logger
	again.ProtocolFlags = scoring.DefaultValues(p).Set("alpha", 0.7)
	sum, err = Run(ctx, again)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Read[ReadDecoded] != 0 {
		t.Errorf("job with another --alpha: %v, want every object from the cache", sum.Read)
	}
	if log.Len() > 0 {
		t.Errorf("warnings: %s", log.String())
	}
	none := memJob(t, op, "mem://lab/sweep", "mem://lab/none")
	none.Concurrency = 2
	if _, err := Run(ctx, none); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"runs.parquet", "intervals.parquet", "run_summary.parquet", "families.parquet", "curves.parquet", "report.md"} {
		want, err := b.ReadAll(ctx, "none/"+name)
		if err != nil {
			t.Fatal(err)
		}
		got, err := b.ReadAll(ctx, "warm/"+name)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(want, got) {
			t.Errorf("%s of the warm job differs from a job without a cache", name)
		}
	}
}

// TestSpilledObjectsEntries: objects that spill as they are read (a cold
// job under a tiny --memory-limit) are encoded for their entries before
// they spill, their entries written beside the job all the same: the next
// job, whose runs are not served, reads every object from the cache, and
// no spill file is left.
func TestSpilledObjectsEntries(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	op := &memOpener{}
	synthSweep(t, op)
	spill := t.TempDir()
	var log bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelInfo}))
	cold := memJob(t, op, "mem://lab/sweep", "mem://lab/cold")
	cold.Concurrency, cold.Cache, cold.MemoryLimit, cold.SpillDir, cold.Logger = 2, "mem://cache/c", 1024, spill, logger
	sum, err := Run(ctx, cold)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(log.String(), "spilled decoded rows") || strings.Contains(log.String(), "level=WARN") {
		t.Fatalf("cold job under a tiny --memory-limit: %s", log.String())
	}
	objects := sum.Objects
	p, err := scoring.Lookup(scoring.Default())
	if err != nil {
		t.Fatal(err)
	}
	again := memJob(t, op, "mem://lab/sweep", "mem://lab/again")
	again.Concurrency, again.Cache = 2, "mem://cache/c"
	again.ProtocolFlags = scoring.DefaultValues(p).Set("alpha", 0.7)
	sum, err = Run(ctx, again)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Read[ReadCache] != objects {
		t.Errorf("after the spilled cold job: %v, want all %d objects from the cache", sum.Read, objects)
	}
	if left, _ := os.ReadDir(spill); len(left) != 0 {
		t.Errorf("spill files left: %v", left)
	}
}

// TestEntriesWrittenBesideTheJob: a warm rerun's run, family, cell and
// figure entries are written beside the job (putLater), not on its path:
// each write is held here until the protocol's report is rendered (after
// the reduction and the figures), which a write on the job's path would
// never see. The job waits for them before it returns: a rerun of the
// same sweep is served every run, family and figure from them, and its
// results equal the warm job's.
//
// Not parallel (see TestMain): it sets testHookPhase and testHookPutLater,
// which every job in the process calls.
func TestEntriesWrittenBesideTheJob(t *testing.T) {
	ctx := context.Background()
	op := &memOpener{}
	b, _ := warmSweep(t, op)

	rendered := make(chan struct{})
	var once sync.Once
	testHookPhase = func(p string) {
		if p == "render" {
			once.Do(func() { close(rendered) })
		}
	}
	var mu sync.Mutex
	var kinds []string
	late := false
	testHookPutLater = func(url string) {
		select {
		case <-rendered:
		case <-time.After(10 * time.Second):
			mu.Lock()
			late = true
			mu.Unlock()
		}
		mu.Lock()
		defer mu.Unlock()
		for _, k := range []string{"/runs/", "/families/", "/cells/", "/figures/", "/index/"} {
			if strings.Contains(url, k) {
				kinds = append(kinds, k)
			}
		}
	}
	defer func() { testHookPhase, testHookPutLater = nil, nil }()
	var log bytes.Buffer
	cfg := memJob(t, op, "mem://lab/sweep", "mem://lab/warm")
	cfg.Concurrency, cfg.Cache = 2, "mem://cache/c"
	cfg.Logger = slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelInfo}))
	if _, err := Run(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	testHookPhase, testHookPutLater = nil, nil
	if late {
		t.Fatal("an entry was written on the job's path: the report was not rendered while it waited")
	}
	for _, k := range []string{"/runs/", "/families/", "/cells/", "/figures/"} {
		if !slices.Contains(kinds, k) {
			t.Errorf("no %s entry written beside the job (written: %q)", k, kinds)
		}
	}
	if strings.Contains(log.String(), "level=WARN") {
		t.Errorf("warnings: %s", log.String())
	}

	log.Reset()
	again := memJob(t, op, "mem://lab/sweep", "mem://lab/again")
	again.Concurrency, again.Cache, again.Logger = 2, "mem://cache/c", cfg.Logger
	if _, err := Run(ctx, again); err != nil {
		t.Fatal(err)
	}
	for _, re := range []*regexp.Regexp{
		regexp.MustCompile(`msg="runs from the cache" served=(\d+) assembled=0 scored=0 `),
		regexp.MustCompile(`msg="families from the cache" served=\d+ reduced=0 `),
		regexp.MustCompile(`msg="figures from the cache" served=\d+ drawn=0`),
	} {
		if !re.MatchString(log.String()) {
			t.Errorf("the rerun was not served everything from the entries the warm job wrote (%s):\n%s", re, log.String())
		}
	}
	for _, name := range []string{"runs.parquet", "intervals.parquet", "run_summary.parquet", "families.parquet", "curves.parquet", "report.md"} {
		want, err := b.ReadAll(ctx, "warm/"+name)
		if err != nil {
			t.Fatal(err)
		}
		got, err := b.ReadAll(ctx, "again/"+name)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(want, got) {
			t.Errorf("%s of the rerun differs from the warm job's", name)
		}
	}
}

// TestPutLaterQueueIsBounded: while the writer is held, putLater takes
// laterQueue writes and then waits for one to be done, so that a job
// writing many entries never holds more than laterQueue payloads; once
// the writer goes on, every entry is written.
//
// The calls are waited for until laterQueue of them have returned, however
// slow the machine, then given a while more in which a call past the bound
// would return too (on a slow machine the test may miss such a call, never
// fail for want of time).
//
// Not parallel (see TestMain): it sets testHookPutLater, which every job in
// the process calls.
func TestPutLaterQueueIsBounded(t *testing.T) {
	var log bytes.Buffer
	j := reduceJob(t, t.TempDir(), &log)
	release := make(chan struct{})
	var once sync.Once
	all := make(chan struct{})
	testHookPutLater = func(string) { <-release }
	t.Cleanup(func() {
		// The writers go on and end before the hook they call is unset.
		once.Do(func() { close(release) })
		<-all
		j.waitEntries()
		testHookPutLater = nil
	})
	c := j.cache.c.Kind("later")
	const n = laterQueue + 20
	var returned atomic.Int32
	go func() {
		defer close(all)
		for i := range n {
			j.putLater(context.Background(), c, cache.Key(strconv.Itoa(i)), []byte{byte(i)})
			returned.Add(1)
		}
	}()
	for deadline := time.Now().Add(time.Minute); returned.Load() < laterQueue; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d putLater calls returned in a minute while the writer was held, want %d", returned.Load(), laterQueue)
		}
	}
	time.Sleep(100 * time.Millisecond) // time for a call past the bound to return
	if got := returned.Load(); got != laterQueue {
		t.Fatalf("%d putLater calls returned while the writer was held, want %d", got, laterQueue)
	}
	once.Do(func() { close(release) })
	select {
	case <-all:
	case <-time.After(10 * time.Second):
		t.Fatalf("%d of %d putLater calls returned after the writer went on", returned.Load(), n)
	}
	j.waitEntries()
	s, err := c.Stats(context.Background())
	if err != nil || s.Entries != n {
		t.Fatalf("%d entries written (%v), want %d; log: %s", s.Entries, err, n, log.String())
	}
	for i := range n {
		if _, found, err := c.Get(context.Background(), cache.Key(strconv.Itoa(i))); !found || err != nil {
			t.Fatalf("entry %d: found %v, %v", i, found, err)
		}
	}
}

// TestCacheEntryIOOnRemoteStores: on a cache reached over the network
// (here s3://, opened as an in-memory bucket) a job writes remoteWrites
// entries beside it at once and looks remoteReads up at once, at
// --concurrency 2: each is a round trip there, and one or two at a time
// left a warm rerun against S3 waiting on its requests. On a local cache
// writes stay one at a time and lookups within --concurrency. Each case
// holds its writers (testHookPutLater) or lookups until as many as it
// expects have started, then checks that no more start.
//
// Not parallel (see TestMain): it sets testHookPutLater, which every job in
// the process calls.
func TestCacheEntryIOOnRemoteStores(t *testing.T) {
	for _, tc := range []struct {
		name, cache            string
		writers, lookups, conc int
	}{
		{"local", "", 1, 2, 2},
		{"local, --concurrency 4", "", 1, 4, 4},
		{"s3", "s3://lab/cache", remoteWrites, remoteReads, 2},
		{"s3, --concurrency 64", "s3://lab/cache", remoteWrites, 64, 64},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			where := tc.cache
			if where == "" {
				where = t.TempDir()
			}
			c, err := cache.Open(ctx, where, (&memOpener{}).open)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if c.Remote() != (tc.cache != "") {
				t.Fatalf("Remote() = %v for %s", c.Remote(), where)
			}
			var log bytes.Buffer
			j := reduceJob(t, t.TempDir(), &log)
			j.cfg.Concurrency = tc.conc
			j.cache = newJobCache(c, nil, tc.conc)

			// Writers: each held in the hook until the test lets go.
			var writes gauge
			const n = 3 * remoteWrites
			started, release := make(chan struct{}, n), make(chan struct{})
			testHookPutLater = func(string) {
				writes.enter()
				started <- struct{}{}
				<-release
				writes.leave()
			}
			defer func() { testHookPutLater = nil }()
			kc := c.Kind("io")
			go func() {
				for i := range n {
					j.putLater(ctx, kc, cache.Key(strconv.Itoa(i)), []byte{byte(i)})
				}
			}()
			writes.await(t, "entry writes", started, tc.writers)
			close(release) // started holds a slot for every write: none waits on it
			j.waitEntries()
			if s, err := kc.Stats(ctx); err != nil || s.Entries != n {
				t.Fatalf("%d entries written (%v), want %d; log: %s", s.Entries, err, n, log.String())
			}
			if got := writes.most.Load(); int(got) > tc.writers {
				t.Errorf("%d entry writes under way at once, want at most %d", got, tc.writers)
			}

			// Lookups: each held until the test lets go.
			var lookups gauge
			m := 4 * tc.lookups
			started, gate := make(chan struct{}, m), make(chan struct{})
			done := make(chan error, 1)
			go func() {
				done <- j.eachEntry(ctx, m, func(ctx context.Context, i int) error {
					lookups.enter()
					started <- struct{}{}
					<-gate
					lookups.leave()
					return nil
				})
			}()
			lookups.await(t, "lookups", started, tc.lookups)
			close(gate)
			if err := <-done; err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestRemoteCacheRerun: a job on a cache reached over the network (s3://,
// opened here as an in-memory bucket) takes its entries' remote ways (the
// figures' entries looked up together before any is drawn, lookups
// thirty-two and writes sixteen at a time, the objects' entries asked for
// first): a rerun
// serves every run and every figure from the cache, one whose object
// indexes and runs' entries are gone serves every object from its entry,
// and each of them and the job that filled the cache write what a job
// without a cache writes, file for file.
func TestRemoteCacheRerun(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	op := &memOpener{}
	b, _ := synthSweep(t, op)
	var log bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelInfo}))
	run := func(out, cacheURL string) *Summary {
		t.Helper()
		cfg := memJob(t, op, "mem://lab/sweep", "mem://lab/"+out)
		cfg.Concurrency, cfg.Cache, cfg.Logger = 2, cacheURL, logger
		sum, err := Run(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		return sum
	}
	run("none", "")
	run("cold", "s3://cache/c")
	log.Reset()
	sum := run("warm", "s3://cache/c")
	if sum.Read[ReadDecoded] != 0 {
		t.Errorf("rerun: %v, want nothing decoded", sum.Read)
	}
	if !regexp.MustCompile(`figures from the cache" served=[1-9][0-9]* drawn=0`).MatchString(log.String()) {
		t.Errorf("rerun: want every figure from the cache; log:\n%s", log.String())
	}
	if strings.Contains(log.String(), "level=WARN") {
		t.Errorf("warnings:\n%s", log.String())
	}
	// Without the object indexes and the runs' entries, every object is
	// looked up (whether its entry is there, then the entry) and served.
	var cb *blob.Bucket
	for u, bk := range op.buckets {
		if strings.HasPrefix(u, "s3://cache") {
			cb = bk
		}
	}
	dropped := 0
	for _, kind := range []string{indexKind, runsKind} {
		for _, k := range listKeys(t, cb, fmt.Sprintf("c/v%d/%s/", cache.FormatVersion, kind)) {
			if err := cb.Delete(ctx, k); err != nil {
				t.Fatal(err)
			}
			dropped++
		}
	}
	if dropped == 0 {
		t.Fatal("no object index or run entry in the cache to drop")
	}
	log.Reset()
	sum = run("objects", "s3://cache/c")
	if sum.Read[ReadDecoded] != 0 || sum.Read[ReadCache] != sum.Objects {
		t.Errorf("without indexes: %v, want all %d objects from the cache", sum.Read, sum.Objects)
	}
	if strings.Contains(log.String(), "level=WARN") {
		t.Errorf("warnings:\n%s", log.String())
	}
	names := func(prefix string) []string {
		var out []string
		for _, k := range listKeys(t, b, prefix) {
			if !strings.HasSuffix(k, "manifest.json") {
				out = append(out, strings.TrimPrefix(k, prefix))
			}
		}
		return out
	}
	want := names("none/")
	for _, out := range []string{"cold/", "warm/", "objects/"} {
		if got := names(out); !slices.Equal(got, want) {
			t.Fatalf("%s holds %q, want %q", out, got, want)
		}
		for _, name := range want {
			w, err := b.ReadAll(ctx, "none/"+name)
			if err != nil {
				t.Fatal(err)
			}
			g, err := b.ReadAll(ctx, out+name)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(w, g) {
				t.Errorf("%s%s differs from a job without a cache", out, name)
			}
		}
	}
}

// gauge counts what is under way and the most that ever was at once.
type gauge struct{ now, most atomic.Int32 }

func (g *gauge) enter() {
	n := g.now.Add(1)
	for m := g.most.Load(); n > m && !g.most.CompareAndSwap(m, n); m = g.most.Load() {
	}
}

func (g *gauge) leave() { g.now.Add(-1) }

// await waits for want of what g counts to have started (a receive on
// started each), then a while for one past that bound to start too, and
// fails unless exactly want were ever under way at once.
func (g *gauge) await(t *testing.T, what string, started <-chan struct{}, want int) {
	t.Helper()
	for range want {
		select {
		case <-started:
		case <-time.After(20 * time.Second):
			t.Fatalf("%d %s started in 20 s, want %d", g.most.Load(), what, want)
		}
	}
	time.Sleep(100 * time.Millisecond) // time for one past the bound to start
	if got := g.most.Load(); int(got) != want {
		t.Errorf("%d %s under way at once, want %d", got, what, want)
	}
}
