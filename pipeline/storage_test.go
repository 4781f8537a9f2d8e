package pipeline

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestRetryAbandonsStalledAttempts: an attempt that makes no progress is
// cancelled after IdleTimeout and retried; retries stop once MaxElapsed has
// passed, so a store that never answers fails the job in bounded time.
func TestRetryAbandonsStalledAttempts(t *testing.T) {
	p := RetryPolicy{Attempts: 10, Initial: time.Millisecond, Max: time.Millisecond, IdleTimeout: 50 * time.Millisecond, MaxElapsed: 200 * time.Millisecond}
	calls := 0
	start := time.Now()
	err := p.retry(context.Background(), func(ctx context.Context, _ func()) error {
		calls++
		<-ctx.Done() // a request the store never answers
		return ctx.Err()
	})
	if !errors.Is(err, errStalled) {
		t.Fatalf("err %v, want a stall", err)
	}
	if el := time.Since(start); el > 2*time.Second || calls < 2 || calls > 5 {
		t.Errorf("%d attempts in %v", calls, el)
	}

	// Progress keeps an attempt alive past IdleTimeout.
	calls = 0
	err = p.retry(context.Background(), func(ctx context.Context, touch func()) error {
		calls++
		for i := 0; i < 6; i++ {
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
	err = p.retry(ctx, func(actx context.Context, _ func()) error {
		calls++
		cancel()
		<-actx.Done()
		return actx.Err()
	})
	if !errors.Is(err, context.Canceled) || errors.Is(err, errStalled) || calls != 1 {
		t.Errorf("cancelled job: err %v after %d calls", err, calls)
	}
}
