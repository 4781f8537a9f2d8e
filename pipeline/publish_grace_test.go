package pipeline

import (
	"context"
	"errors"
	"runtime"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"
)

// objectStore is publishStores' entry of an object store (an in-memory
// bucket behind an s3:// URL).
func objectStore(t *testing.T) publishStore {
	t.Helper()
	for _, st := range publishStores {
		if st.name == "object store" {
			return st
		}
	}
	t.Fatal("no object store among publishStores")
	return publishStore{}
}

// An object store gets a grace for the upload under way; a local folder and
// an in-memory bucket, where a cancelled write is never committed, none.
func TestUploadGrace(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		url   string
		grace bool
	}{
		{t.TempDir(), false},
		{"file://" + t.TempDir(), false},
		{"mem://lab/out", false},
		{"s3://bucket/results?region=us-east-1", true},
		{"gs://bucket/results", true},
		{"azblob://container/results", true},
	} {
		loc, err := ParseLocation(c.url, true)
		if err != nil {
			t.Fatalf("%s: %v", c.url, err)
		}
		j := &job{out: loc}
		if got := j.uploadGrace(); (got > 0) != c.grace || c.grace && got != uploadGraceTime {
			t.Errorf("%s: grace %v", c.url, got)
		}
	}
}

// outlive's context ends grace after its parent, with the parent's cause,
// or at once when stopped; its goroutine ends either way.
//
// Not parallel (see TestMain): it counts the goroutines of the process and
// bounds a wait in time.
func TestOutlive(t *testing.T) {
	base := runtime.NumGoroutine()
	cause := errors.New("the job's cause")
	parent, cancel := context.WithCancelCause(context.Background())
	const grace = 150 * time.Millisecond
	ctx, stop := outlive(parent, grace)
	defer stop()
	start := time.Now()
	cancel(cause)
	select {
	case <-ctx.Done():
		// This goroutine may run again only after the grace (a loaded
		// machine): then the context is rightly done already.
		if d := time.Since(start); d < grace {
			t.Fatalf("done %v after its parent, before the grace", d)
		}
	case <-time.After(grace / 3):
	}
	<-ctx.Done()
	if d := time.Since(start); d < grace {
		t.Errorf("done %v after its parent, want at least %v", d, grace)
	}
	if !errors.Is(context.Cause(ctx), cause) || !errors.Is(ctx.Err(), context.Canceled) {
		t.Errorf("cause %v, err %v", context.Cause(ctx), ctx.Err())
	}

	ctx2, stop2 := outlive(context.Background(), time.Hour)
	stop2()
	select {
	case <-ctx2.Done():
	case <-time.After(time.Second):
		t.Fatal("stop did not end the context")
	}
	parent3, cancel3 := context.WithCancel(context.Background())
	_, stop3 := outlive(parent3, time.Hour)
	cancel3()
	stop3() // during the grace
	checkGoroutines(t, base)
}

// TestUploadUnderWayFinishes: on an object store, an upload that is under
// way when the job is cancelled is not cut: it finishes, clean-up deletes
// the file it wrote, no other upload starts, and the job returns
// context.Canceled without waiting for the grace.
//
// The first publishAtOnce uploads are held until after the cancel, which
// comes once all of them have started: no other upload can have passed its
// check then (none has a slot), so that one started after the cancel is
// one started in spite of it, whatever the scheduling.
//
// Not parallel (see TestMain): it sets uploadGraceTime and testHookPut
// (newPutWatch), process-wide.
func TestUploadUnderWayFinishes(t *testing.T) {
	st := objectStore(t)
	cfg, left := st.job(t)
	uploadGraceTime = 10 * time.Second // restored by st.job's cleanup
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	reached, release := make(chan struct{}), make(chan struct{})
	var reachedOnce sync.Once
	var mu sync.Mutex
	var startedAtCancel, cutAtCancel int
	var finished []string
	w := newPutWatch(t, func(w *putWatch, pctx context.Context, name string, committed bool) error {
		if committed {
			mu.Lock()
			finished = append(finished, name)
			mu.Unlock()
			return nil
		}
		w.mu.Lock()
		all := len(w.started) == publishAtOnce
		w.mu.Unlock()
		if all {
			reachedOnce.Do(func() { close(reached) })
		}
		<-release
		if pctx.Err() != nil {
			mu.Lock()
			cutAtCancel++
			mu.Unlock()
		}
		return nil
	})
	cancelled := make(chan time.Time, 1)
	go func() {
		<-reached
		cancelled <- time.Now()
		cancel()
		time.Sleep(50 * time.Millisecond) // the put still under way
		w.mu.Lock()
		startedAtCancel = len(w.started)
		w.mu.Unlock()
		close(release)
	}()
	_, err := Run(ctx, cfg)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
	// From the cancel, not from the job's start: the job's work before
	// publishing took up to 5 s under the race detector on a loaded CI
	// machine.
	if d := time.Since(<-cancelled); d > uploadGraceTime/2 {
		t.Errorf("the job ended %v after the cancel: it waited for the grace (%v)", d, uploadGraceTime)
	}
	mu.Lock()
	defer mu.Unlock()
	if cutAtCancel > 0 {
		t.Errorf("%d uploads under way were cut at the cancel", cutAtCancel)
	}
	w.mu.Lock()
	for name := range w.started {
		if !slices.Contains(finished, name) {
			t.Errorf("%s's upload, under way at the cancel, did not finish (finished: %v)", name, finished)
		}
	}
	if n := len(w.started); n != startedAtCancel {
		t.Errorf("%d uploads started, %d when the job was cancelled: one started after it", n, startedAtCancel)
	}
	w.mu.Unlock()
	if l := left(); len(l) > 0 {
		t.Errorf("a cancelled job left %q", l)
	}
}

// TestUploadCutAfterGrace: on an object store, an upload that does not end
// within the grace after the cancel is cut then, and the job ends soon
// after, leaving nothing.
//
// Not parallel (see TestMain): it sets uploadGraceTime and testHookPut
// (newPutWatch), process-wide.
func TestUploadCutAfterGrace(t *testing.T) {
	st := objectStore(t)
	cfg, left := st.job(t)
	const grace = 300 * time.Millisecond
	uploadGraceTime = grace // restored by st.job's cleanup
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var cancelled time.Time
	var heldFor time.Duration
	newPutWatch(t, func(w *putWatch, pctx context.Context, name string, committed bool) error {
		if committed || name != "report.md" {
			return nil
		}
		cancelled = time.Now()
		cancel()
		<-pctx.Done() // a store that does not answer
		heldFor = time.Since(cancelled)
		return pctx.Err()
	})
	_, err := Run(ctx, cfg)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
	if heldFor < grace {
		t.Errorf("the upload was cut %v after the cancel, before the grace (%v)", heldFor, grace)
	}
	if d := time.Since(cancelled); d > grace+2*time.Second {
		t.Errorf("the job ended %v after the cancel", d)
	}
	if l := left(); len(l) > 0 {
		t.Errorf("a cancelled job left %q", l)
	}
}

// TestNoRetryAfterCancel: on an object store, an upload whose attempt fails
// with a transient error after the job was cancelled is not tried again,
// even within the grace.
//
// Not parallel (see TestMain): it sets uploadGraceTime and testHookPut
// (newPutWatch), process-wide.
func TestNoRetryAfterCancel(t *testing.T) {
	st := objectStore(t)
	cfg, left := st.job(t)
	cfg.Retry = RetryPolicy{Attempts: 5, Initial: time.Millisecond, Max: time.Millisecond}
	uploadGraceTime = 10 * time.Second // restored by st.job's cleanup
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var mu sync.Mutex
	attempts := 0
	var cancelled time.Time // when the first attempt cancelled the job
	newPutWatch(t, func(w *putWatch, pctx context.Context, name string, committed bool) error {
		if committed || name != "runs.parquet" {
			return nil
		}
		mu.Lock()
		attempts++
		if cancelled.IsZero() {
			cancelled = time.Now()
		}
		mu.Unlock()
		cancel()
		return syscall.ECONNRESET
	})
	_, err := Run(ctx, cfg)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
	// From the cancel, as in TestUploadUnderWayFinishes.
	mu.Lock()
	if d := time.Since(cancelled); cancelled.IsZero() || d > uploadGraceTime/2 {
		t.Errorf("the job ended %v after the cancel (at %v)", d, cancelled)
	}
	mu.Unlock()
	if attempts != 1 {
		t.Errorf("runs.parquet's upload was attempted %d times", attempts)
	}
	if l := left(); len(l) > 0 {
		t.Errorf("a cancelled job left %q", l)
	}
}
