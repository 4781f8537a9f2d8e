package pipeline

import (
	"fmt"
	"runtime/debug"
	"sync/atomic"
)

// InternalError is a panic in crlbatch's own code (a bug), recovered on
// the goroutine where it happened and turned into the job's failure: the
// job then fails as on any other error (nothing published, the claim
// released, spill files removed). The command exits 70 on it and prints
// Stack.
type InternalError struct {
	Value any    // what was passed to panic
	Stack []byte // the panicking goroutine's stack
}

func (e *InternalError) Error() string {
	return fmt.Sprintf("internal error: %v (a bug in crlbatch; please report it)", e.Value)
}

// internalError is the InternalError of the panic value p; one recovered
// on another goroutine and panicked again keeps its first stack.
func internalError(p any) *InternalError {
	if ie, ok := p.(*InternalError); ok {
		return ie
	}
	return &InternalError{Value: p, Stack: debug.Stack()}
}

// Recover, deferred, turns a panic of the goroutine into an *InternalError
// in *err.
func Recover(err *error) {
	if p := recover(); p != nil {
		*err = internalError(p)
	}
}

// guarded is fn with its panics returned as an *InternalError: every
// goroutine of an errgroup runs through it (errgroup does not recover).
func guarded(fn func() error) func() error {
	return func() (err error) {
		defer Recover(&err)
		return fn()
	}
}

// bugs keeps the first panic of goroutines that have no error to return
// (the workers of a sync.WaitGroup, the cache's writers); whoever waits for
// them panics again with it on its own goroutine (rethrow), where a guarded
// function or Run's recover turns it into the job's failure.
type bugs struct{ first atomic.Pointer[InternalError] }

// catch, deferred on such a goroutine, keeps its panic.
func (b *bugs) catch() {
	if p := recover(); p != nil {
		b.first.CompareAndSwap(nil, internalError(p))
	}
}

// keep keeps ie (a panic recovered by other means).
func (b *bugs) keep(ie *InternalError) { b.first.CompareAndSwap(nil, ie) }

// rethrow panics with the first panic kept, if any.
func (b *bugs) rethrow() {
	if ie := b.first.Load(); ie != nil {
		panic(ie)
	}
}
