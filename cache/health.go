package cache

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/crlbatch/crlbatch/storage"
)

// ReadsOffAfter is how many requests for entries (reads, and asking whether
// one is there) failing in a row stop a Cache reading: a store that
// refuses or does not answer every request fails each for the same cause,
// and a job that asked it about every entry would wait on each and learn
// nothing more. A store's answer that an entry is not there, and an entry
// not to be trusted (ErrCorrupt), are answers: they count as successes.
const ReadsOffAfter = 3

// ErrOff matches the error of a request a Cache did not make: its reads
// stopped after ReadsOffAfter failures in a row, and its writes with them;
// or its writes stopped after one failed (a write fails for the store's
// reason, which its next write would meet too). Its message names the
// failure that stopped them.
var ErrOff = errors.New("cache not used for the rest of the job")

// offError is ErrOff with the failure that stopped the requests.
type offError struct {
	what  string // "read" or "written"
	cause error
}

func (e *offError) Error() string {
	if e.what == "read" {
		return fmt.Sprintf("%v: not read after %d requests in a row failed, the last: %v", ErrOff, ReadsOffAfter, e.cause)
	}
	return fmt.Sprintf("%v: not written after a write failed: %v", ErrOff, e.cause)
}

func (e *offError) Is(target error) bool { return target == ErrOff }

// health is what a Cache and its Kinds know of their store in one job:
// how long a request may make no progress, and whether it is still read
// and written.
type health struct {
	idle time.Duration // a remote request without progress for this long is abandoned; 0: never

	inARow atomic.Int32 // requests for entries failed in a row

	mu           sync.Mutex
	reads, write error // set once: the *offError that stopped them
}

// StallAfter bounds every request of the cache (and of its Kinds) on a
// remote store: one that makes no progress for d (a store that accepted
// the connection and never answers, a body that stopped halfway) is
// abandoned, and fails as the store's error would. A write of n bytes is
// given at least n at uploadRate; Stats and Prune retry their requests as
// the default retry policy does. Open sets the default policy's bound,
// 20 s; d <= 0 leaves them unbounded. A local cache is never bounded (a
// read of a local file does not look at its context).
func (c *Cache) StallAfter(d time.Duration) {
	if c.loc.Remote() {
		c.h.idle = max(d, 0)
	}
}

// ReadsOff returns the error that stopped the cache's reads (matching
// ErrOff), or nil while it is read.
func (c *Cache) ReadsOff() error {
	c.h.mu.Lock()
	defer c.h.mu.Unlock()
	return c.h.reads
}

// read runs a request for an entry, unless reads are off, under the stall
// bound, and counts its failure: found false and a nil error (not there)
// and ErrCorrupt are answers. A request cut short by ctx counts for
// nothing.
func (c *Cache) read(ctx context.Context, op func(ctx context.Context, touch func()) error) error {
	if err := c.ReadsOff(); err != nil {
		return err
	}
	err := c.bounded(ctx, c.h.idle, op)
	switch {
	case err == nil || errors.Is(err, ErrCorrupt):
		c.h.inARow.Store(0)
	case ctx.Err() != nil:
	default:
		if c.h.inARow.Add(1) >= ReadsOffAfter {
			c.h.mu.Lock()
			if c.h.reads == nil {
				c.h.reads = &offError{what: "read", cause: err}
				if c.h.write == nil {
					c.h.write = c.h.reads
				}
			}
			c.h.mu.Unlock()
		}
	}
	return err
}

// uploadRate is the slowest upload a write of an entry is given time for:
// a blob writer sends an object smaller than its buffer (S3's: 16 MiB) at
// Close, in one request whose progress it does not report, so the stall
// bound of a write of n bytes is at least n at this rate (64 s for 16 MiB).
const uploadRate = 256 << 10 // bytes a second

// written runs a write of an entry of n bytes, unless writes are off,
// under the stall bound (at least n at uploadRate); its failure stops the
// cache's writes.
func (c *Cache) written(ctx context.Context, n int64, op func(ctx context.Context, touch func()) error) error {
	c.h.mu.Lock()
	off := c.h.write
	c.h.mu.Unlock()
	if off != nil {
		return off
	}
	idle := c.h.idle
	if idle > 0 {
		idle = max(idle, time.Duration(n/uploadRate+1)*time.Second)
	}
	err := c.bounded(ctx, idle, op)
	if err != nil && ctx.Err() == nil {
		c.h.mu.Lock()
		if c.h.write == nil {
			c.h.write = &offError{what: "written", cause: err}
		}
		c.h.mu.Unlock()
	}
	return err
}

// bounded runs op once, abandoned after idle without progress
// (storage.RetryPolicy's watchdog); idle <= 0 (a local cache): unbounded.
func (c *Cache) bounded(ctx context.Context, idle time.Duration, op func(ctx context.Context, touch func()) error) error {
	if idle <= 0 {
		return op(ctx, func() {})
	}
	return storage.RetryPolicy{Attempts: 1, IdleTimeout: idle}.Retry(ctx, op)
}

// maintain runs a request of Stats or Prune (a listing, a delete, an
// upload's listing or abort: each may be made again) under the default
// retry policy, its stall bound the cache's: a store that fails them or
// does not answer ends the command with its error in bounded time.
func (c *Cache) maintain(ctx context.Context, op func(ctx context.Context, touch func()) error) error {
	p := storage.DefaultRetry()
	p.IdleTimeout = c.h.idle
	return p.Retry(ctx, op)
}
