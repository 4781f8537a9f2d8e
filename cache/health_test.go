package cache

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"gocloud.dev/blob"
	_ "gocloud.dev/blob/s3blob"
)

// TestReadsOffAfterFailures: reads that fail ReadsOffAfter times in a row
// stop the cache's reads and writes (each later request answered ErrOff,
// naming the failure, without reaching the store); a success between two
// failures, an entry that is not there and one not to be trusted are
// answers, not failures; a write that fails stops the writes alone.
func TestReadsOffAfterFailures(t *testing.T) {
	ctx := context.Background()
	c, dir := openTemp(t)
	kc := c.Kind("runs")
	good, bad := Key("good"), Key("damaged")
	for _, k := range []string{good, bad} {
		if err := kc.Put(ctx, k, Entry{Payload: []byte("payload")}); err != nil {
			t.Fatal(err)
		}
	}
	name := func(k string) string {
		return filepath.Join(dir, fmt.Sprintf("v%d", FormatVersion), "runs", k+EntrySuffix)
	}
	data, err := os.ReadFile(name(bad))
	if err != nil {
		t.Fatal(err)
	}
	data[len(data)/2] ^= 1
	if err := os.WriteFile(name(bad), data, 0o644); err != nil {
		t.Fatal(err)
	}
	// An entry that cannot be read, whoever runs the test: a link to
	// itself where the entry's file should be.
	unreadable := func(s string) string {
		k := Key(s)
		if err := os.Symlink(filepath.Base(name(k)), name(k)); err != nil {
			t.Fatal(err)
		}
		return k
	}
	get := func(k string) error {
		t.Helper()
		_, _, err := kc.Get(ctx, k)
		return err
	}
	for i, k := range []string{unreadable("a"), unreadable("b"), good, unreadable("c"), Key("absent"), unreadable("d"), bad, unreadable("e"), unreadable("f")} {
		if err := get(k); errors.Is(err, ErrOff) {
			t.Fatalf("request %d: reads off after failures not in a row: %v", i, err)
		}
	}
	if c.ReadsOff() != nil {
		t.Fatalf("reads off: %v", c.ReadsOff())
	}
	last := unreadable("g")
	if err := get(last); err == nil || errors.Is(err, ErrOff) {
		t.Fatalf("the third failure in a row: %v, want the store's error", err)
	}
	off := c.ReadsOff()
	if !errors.Is(off, ErrOff) || !strings.Contains(off.Error(), "too many levels of symbolic links") {
		t.Fatalf("ReadsOff() = %v, want ErrOff naming the last failure", off)
	}
	// Every Kind shares it; nothing more is asked of the store.
	os.RemoveAll(dir)
	if _, found, err := c.Get(ctx, good); found || !errors.Is(err, ErrOff) {
		t.Errorf("Get after reads stopped: found %v, %v; want ErrOff", found, err)
	}
	if ok, err := kc.Has(ctx, good); ok || !errors.Is(err, ErrOff) {
		t.Errorf("Has after reads stopped: %v, %v; want ErrOff", ok, err)
	}
	if err := kc.Put(ctx, Key("new"), Entry{Payload: []byte("p")}); !errors.Is(err, ErrOff) {
		t.Errorf("Put after reads stopped: %v, want ErrOff", err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("a request reached the store after reads stopped: %v", err)
	}

	// A write that fails stops the writes, not the reads.
	c2, dir2 := openTemp(t)
	kc2 := c2.Kind("runs")
	if err := kc2.Put(ctx, good, Entry{Payload: []byte("p")}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir2, fmt.Sprintf("v%d", FormatVersion), "figures"), nil, 0o644); err != nil {
		t.Fatal(err) // a file where the Kind's folder goes
	}
	if err := c2.Kind("figures").Put(ctx, good, Entry{Payload: []byte("p")}); err == nil || errors.Is(err, ErrOff) {
		t.Fatalf("a write into a file's place: %v, want the store's error", err)
	}
	if err := kc2.Put(ctx, bad, Entry{Payload: []byte("p")}); !errors.Is(err, ErrOff) || !strings.Contains(err.Error(), "not written after a write failed") {
		t.Errorf("Put after a write failed: %v, want ErrOff", err)
	}
	if _, found, err := kc2.Get(ctx, good); !found || err != nil || c2.ReadsOff() != nil {
		t.Errorf("Get after a write failed: found %v, %v; reads off: %v", found, err, c2.ReadsOff())
	}
}

// TestStalledStoreIsLeft: on a remote store that accepts every request and
// never answers, each request is abandoned once it has made no progress
// for the bound StallAfter set, and the cache stops reading after
// ReadsOffAfter of them: four lookups at once end within a few bounds, and
// the next asks the store nothing. Stats, whose requests are retried,
// fails in bounded time.
func TestStalledStoreIsLeft(t *testing.T) {
	var requests atomic.Int32
	release := make(chan struct{})
	var once sync.Once
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer srv.Close()
	defer once.Do(func() { close(release) })
	t.Setenv("AWS_ACCESS_KEY_ID", "test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "test")
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	ctx := context.Background()
	op := func(ctx context.Context, _ string) (*blob.Bucket, func() error, error) {
		b, err := blob.OpenBucket(ctx, "s3://lab?region=us-east-1&use_path_style=true&endpoint="+srv.URL)
		if err != nil {
			return nil, nil, err
		}
		return b, b.Close, nil
	}
	c, err := Open(ctx, "s3://lab/cache", op)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	const bound = 300 * time.Millisecond
	c.StallAfter(bound)
	// A write is given time for its bytes at uploadRate: 512 KiB that
	// do not compress, 3 s.
	payload := make([]byte, 512<<10)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range payload {
		payload[i] = byte(rng.Uint32())
	}
	start := time.Now()
	err = c.Put(ctx, Key("big"), Entry{Payload: payload})
	if el := time.Since(start); err == nil || !strings.Contains(err.Error(), "made no progress for 3s") || el < 3*time.Second || el > 10*time.Second {
		t.Errorf("a 512 KiB write to a store that never answers: %v after %v, want it abandoned after 3 s", err, el)
	}
	c.h.write = nil // the writes stopped: start again
	start = time.Now()
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if i%2 == 0 {
				_, _, errs[i] = c.Get(ctx, Key("k", string(rune('a'+i))))
			} else {
				_, errs[i] = c.Kind("runs").Has(ctx, Key("k", string(rune('a'+i))))
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	for i, err := range errs {
		if err == nil || !strings.Contains(err.Error(), "made no progress") {
			t.Errorf("request %d: %v, want it abandoned", i, err)
		}
	}
	if elapsed > 20*bound {
		t.Errorf("four stalled requests took %v, bound %v", elapsed, bound)
	}
	if c.ReadsOff() == nil {
		t.Fatal("four stalled requests in a row: reads not stopped")
	}
	before := requests.Load()
	if _, _, err := c.Get(ctx, Key("next")); !errors.Is(err, ErrOff) {
		t.Errorf("Get after reads stopped: %v", err)
	}
	if err := c.Put(ctx, Key("next"), Entry{Payload: []byte("p")}); !errors.Is(err, ErrOff) {
		t.Errorf("Put after reads stopped: %v", err)
	}
	if n := requests.Load(); n != before {
		t.Errorf("%d requests reached the store after reads stopped", n-before)
	}
	// Stats (and Prune, which lists as it does) retries its requests,
	// each abandoned after the bound: it fails, in bounded time.
	start = time.Now()
	if _, err := c.Stats(ctx); err == nil || !strings.Contains(err.Error(), "made no progress") {
		t.Errorf("Stats of a store that never answers: %v", err)
	}
	if elapsed := time.Since(start); elapsed > 30*time.Second {
		t.Errorf("Stats took %v", elapsed)
	}
	once.Do(func() { close(release) })
}
