package readers

import "sync"

// freeList keeps values for reuse, safe for several goroutines. Unlike a
// sync.Pool, what it holds goes exactly when it is dropped or emptied: a
// sync.Pool is reachable from the runtime until two collections have
// passed, and with it the struct it is a field of (issue 16: a one-object
// sweep's chunk buffers, 9.6 MiB at the 1 GB benchmark, were still held
// while the runs were scored).
type freeList[T any] struct {
	mu   sync.Mutex
	free []T
}

// get returns a value put before, if any.
func (f *freeList[T]) get() (v T, ok bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if n := len(f.free); n > 0 {
		v, f.free[n-1] = f.free[n-1], v
		f.free = f.free[:n-1]
		return v, true
	}
	return v, false
}

// put keeps v for a later get.
func (f *freeList[T]) put(v T) {
	f.mu.Lock()
	f.free = append(f.free, v)
	f.mu.Unlock()
}

// drop forgets every value kept.
func (f *freeList[T]) drop() {
	f.mu.Lock()
	f.free = nil
	f.mu.Unlock()
}
