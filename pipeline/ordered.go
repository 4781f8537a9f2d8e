package pipeline

import (
	"context"
	"sync"
)

// ordered runs fn for 0..n-1, at most limit at once, and returns the error
// of the first task in index order that failed, whatever the order in time
// (docs/decisions.md, "Reading faults (issue 13)": a failed job reports the
// first object in key order that fails, at any --concurrency). When task f
// fails, the tasks after f are cancelled (their context) or not started;
// the tasks before f run to their end or to their own failure, which then
// takes f's place. Errors of tasks after the first failure are dropped:
// they may be the cancellation's doing. Each task runs through guarded (a
// panic is its failure). With the parent context done, the result is its
// error. The index returned is the failed task's (n for none).
func ordered(ctx context.Context, n, limit int, fn func(ctx context.Context, i int) error) (int, error) {
	if limit <= 0 || limit > n {
		limit = n
	}
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		next    int // the next task to start
		first   = n // the first failed task so far
		err     error
		cancels = make([]context.CancelFunc, n)
	)
	// limit workers take the tasks in index order: a task's goroutine
	// keeps the stack the tasks before it grew (a goroutine per task grew
	// one anew for each of 20,000 small objects: 8 % of such a job's CPU).
	for range limit {
		wg.Go(func() {
			for {
				mu.Lock()
				i := next
				if i >= n || i > first || ctx.Err() != nil {
					mu.Unlock()
					return
				}
				next++
				tctx, cancel := context.WithCancel(ctx)
				cancels[i] = cancel
				mu.Unlock()
				e := guarded(func() error { return fn(tctx, i) })()
				mu.Lock()
				if e != nil && i < first {
					first, err = i, e
					for k := i + 1; k < n; k++ {
						if cancels[k] != nil {
							cancels[k]()
						}
					}
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	for _, cancel := range cancels {
		if cancel != nil {
			cancel()
		}
	}
	if e := ctx.Err(); e != nil {
		return n, e
	}
	return first, err
}
