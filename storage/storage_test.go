package storage

import (
	"context"
	"errors"
	"fmt"
	"io"
	"testing"
	"time"
)

// TestRetryAbandonsStalledAttempts: an attempt that makes no progress is
// cancelled after IdleTimeout and retried; retries stop once MaxElapsed has
// passed, so a store that never answers fails the job in bounded time.
//
// The bounds leave a loaded machine (a goroutine descheduled for hundreds
// of milliseconds, a timer firing late) room: MaxElapsed is twenty idle
// timeouts, so that the first attempt ends well before it; the progress
// of a moving attempt comes every 20 ms against an IdleTimeout of 500 ms.
func TestRetryAbandonsStalledAttempts(t *testing.T) {
	p := RetryPolicy{Attempts: 100, Initial: time.Millisecond, Max: time.Millisecond, IdleTimeout: 50 * time.Millisecond, MaxElapsed: time.Second}
	calls := 0
	start := time.Now()
	err := p.Retry(context.Background(), func(ctx context.Context, _ func()) error {
		calls++
		<-ctx.Done() // a request the store never answers
		return ctx.Err()
	})
	if !errors.Is(err, errStalled) {
		t.Fatalf("err %v, want a stall", err)
	}
	// Each attempt lasts IdleTimeout at least: MaxElapsed, not Attempts,
	// ended the retries.
	if el := time.Since(start); el > 5*time.Second || calls < 2 || calls > int(p.MaxElapsed/p.IdleTimeout)+1 {
		t.Errorf("%d attempts in %v", calls, el)
	}

	// Progress keeps an attempt alive past IdleTimeout.
	p.IdleTimeout = 500 * time.Millisecond
	calls = 0
	err = p.Retry(context.Background(), func(ctx context.Context, touch func()) error {
		calls++
		for range 30 { // 600 ms at least
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(20 * time.Millisecond):
				touch()
			}
		}
		return nil
	})
	if err != nil || calls != 1 {
		t.Errorf("a slow but moving attempt: err %v after %d calls", err, calls)
	}

	// Cancelling the job is not a stall and is not retried.
	ctx, cancel := context.WithCancel(context.Background())
	calls = 0
	err = p.Retry(ctx, func(actx context.Context, _ func()) error {
		calls++
		cancel()
		<-actx.Done()
		return actx.Err()
	})
	if !errors.Is(err, context.Canceled) || errors.Is(err, errStalled) || calls != 1 {
		t.Errorf("cancelled job: err %v after %d calls", err, calls)
	}
}

// TestRetryPermanent: a transient-looking error marked Permanent (bad data
// that wraps io.ErrUnexpectedEOF) is returned at once, without the mark;
// unmarked, it is retried. An error that looks permanent is retried when
// marked Transient, and returned without the mark.
func TestRetryPermanent(t *testing.T) {
	p := RetryPolicy{Attempts: 3, Initial: time.Millisecond, Max: time.Millisecond}
	cause := fmt.Errorf("line 3: truncated gzip: %w", io.ErrUnexpectedEOF)
	changed := errors.New("the object changed while it was read twice")
	for _, tc := range []struct {
		err, cause error
		calls      int
	}{
		{Permanent(cause), cause, 1},
		{cause, cause, 3},
		{changed, changed, 1},
		{Transient(changed), changed, 3},
	} {
		calls := 0
		err := p.Retry(context.Background(), func(context.Context, func()) error {
			calls++
			return tc.err
		})
		if err != tc.cause || calls != tc.calls {
			t.Errorf("%v: returned %#v after %d calls, want the cause after %d", tc.err, err, calls, tc.calls)
		}
	}
	if Permanent(nil) != nil || Transient(nil) != nil {
		t.Error("Permanent(nil) or Transient(nil) is not nil")
	}
}
