package pipeline

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
)

// TestOrdered: ordered returns the failure of the first task in index
// order, whatever the order in time: a task that fails after a later one
// has failed (and cancelled the tasks after it) takes its place; the tasks
// before a failure run to their end uncancelled; the tasks after it are
// cancelled or never started; a panic is its task's failure; with the
// parent context cancelled (a signal), the result is its error, also when
// it comes while tasks before a failure still run, which it ends. The
// timing is forced by channels, so that each case is the same at every
// run.
func TestOrdered(t *testing.T) {
	t.Parallel()
	errAt := func(i int) error { return fmt.Errorf("task %d failed", i) }

	t.Run("an earlier failure after a later one wins", func(t *testing.T) {
		t.Parallel()
		// Task 4 fails first in time; task 5, after it, sees its context
		// cancelled (task 4's failure is recorded); tasks 2 and 3, before
		// it, find theirs still live; only then does task 1 fail. Task 0
		// runs to its end.
		// Task 4 fails only once task 5 has started: a failure recorded
		// before the loop reaches task 5 would leave it never started.
		const n = 6
		fiveStarted, fiveCancelled := make(chan struct{}), make(chan struct{})
		var checked sync.WaitGroup
		checked.Add(2)
		var live [n]atomic.Bool
		i, err := ordered(context.Background(), n, n, func(ctx context.Context, i int) error {
			switch i {
			case 4:
				<-fiveStarted
				return errAt(4)
			case 5:
				close(fiveStarted)
				<-ctx.Done()
				close(fiveCancelled)
				return ctx.Err()
			case 1:
				<-fiveCancelled
				checked.Wait()
				return errAt(1)
			case 2, 3:
				<-fiveCancelled
				live[i].Store(ctx.Err() == nil)
				checked.Done()
				return nil
			}
			<-fiveCancelled
			checked.Wait()
			live[i].Store(ctx.Err() == nil)
			return nil
		})
		if i != 1 || err == nil || err.Error() != errAt(1).Error() {
			t.Fatalf("ordered: %d, %v; want 1, %v", i, err, errAt(1))
		}
		for _, k := range []int{0, 2, 3} {
			if !live[k].Load() {
				t.Errorf("task %d, before task 4's failure, was cancelled by it", k)
			}
		}
	})

	t.Run("no task starts after a failure", func(t *testing.T) {
		t.Parallel()
		// One at a time: task 2 fails, and tasks 3… never start.
		var started []int
		i, err := ordered(context.Background(), 8, 1, func(ctx context.Context, i int) error {
			started = append(started, i) // one at a time: no race
			if i == 2 {
				return errAt(2)
			}
			return nil
		})
		if i != 2 || err == nil || err.Error() != errAt(2).Error() || fmt.Sprint(started) != "[0 1 2]" {
			t.Fatalf("ordered: %d, %v, tasks started %v; want 2, %v, [0 1 2]", i, err, started, errAt(2))
		}
	})

	t.Run("a waiting task does not start after an earlier failure", func(t *testing.T) {
		t.Parallel()
		// Three at a time: tasks 0, 1 and 2 run while task 3 waits for a
		// slot. Task 1 fails; every slot is freed after that failure is
		// recorded (task 2 ends on its cancellation, task 0 after task 2):
		// tasks 3 and 4 never start. Task 1 fails only once task 2 has
		// started.
		var mu sync.Mutex
		var started []int
		twoStarted, twoCancelled := make(chan struct{}), make(chan struct{})
		i, err := ordered(context.Background(), 5, 3, func(ctx context.Context, i int) error {
			mu.Lock()
			started = append(started, i)
			mu.Unlock()
			switch i {
			case 0:
				<-twoCancelled
			case 1:
				<-twoStarted
				return errAt(1)
			case 2:
				close(twoStarted)
				<-ctx.Done()
				close(twoCancelled)
				return ctx.Err()
			}
			return nil
		})
		slices.Sort(started)
		if i != 1 || err == nil || err.Error() != errAt(1).Error() || fmt.Sprint(started) != "[0 1 2]" {
			t.Fatalf("ordered: %d, %v, tasks started %v; want 1, %v, [0 1 2]", i, err, started, errAt(1))
		}
	})

	t.Run("a panic is its task's failure", func(t *testing.T) {
		t.Parallel()
		i, err := ordered(context.Background(), 5, 5, func(ctx context.Context, i int) error {
			switch i {
			case 3:
				panic("task 3")
			case 4:
				return errAt(4)
			}
			return nil
		})
		var ie *InternalError
		if i != 3 || !errors.As(err, &ie) {
			t.Fatalf("ordered: %d, %v; want 3 and an *InternalError", i, err)
		}
	})

	t.Run("the parent cancelled", func(t *testing.T) {
		t.Parallel()
		ctx, cancel := context.WithCancel(context.Background())
		i, err := ordered(ctx, 4, 4, func(ctx context.Context, i int) error {
			if i == 0 {
				cancel()
				return errAt(0)
			}
			<-ctx.Done()
			return ctx.Err()
		})
		if i != 4 || !errors.Is(err, context.Canceled) {
			t.Fatalf("ordered: %d, %v; want 4, context.Canceled", i, err)
		}
	})

	t.Run("the parent cancelled while an earlier task runs after a failure", func(t *testing.T) {
		t.Parallel()
		// Task 2 fails; task 0, before it, is still reading (or waiting
		// out a retry's backoff) when a signal cancels the job, once task
		// 3 has seen its own cancellation: task 0 ends on the signal and
		// the job's error is the signal's, not task 2's failure. Task 2
		// fails only once task 3 has started.
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		threeStarted := make(chan struct{})
		i, err := ordered(ctx, 4, 4, func(ctx context.Context, i int) error {
			switch i {
			case 2:
				<-threeStarted
				return errAt(2)
			case 3:
				close(threeStarted)
				<-ctx.Done()
				cancel() // the signal
				return ctx.Err()
			case 0:
				<-ctx.Done()
				return ctx.Err()
			}
			return nil
		})
		if i != 4 || !errors.Is(err, context.Canceled) {
			t.Fatalf("ordered: %d, %v; want 4, context.Canceled", i, err)
		}
	})

	t.Run("all succeed, at most limit at once", func(t *testing.T) {
		t.Parallel()
		var running, most atomic.Int32
		done := make([]bool, 20)
		i, err := ordered(context.Background(), len(done), 3, func(ctx context.Context, i int) error {
			n := running.Add(1)
			defer running.Add(-1)
			for {
				m := most.Load()
				if n <= m || most.CompareAndSwap(m, n) {
					break
				}
			}
			done[i] = true // each task its own slot
			return nil
		})
		if i != len(done) || err != nil || most.Load() > 3 {
			t.Fatalf("ordered: %d, %v, %d at once; want %d, nil, at most 3", i, err, most.Load(), len(done))
		}
		for k, d := range done {
			if !d {
				t.Errorf("task %d did not run", k)
			}
		}
	})
}
