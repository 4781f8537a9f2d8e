package pipeline

import (
	"fmt"
	"testing"
)

// panickyChunks is a fakeChunks whose Decode or Merge panics at one chunk.
type panickyChunks struct {
	*fakeChunks
	decodeAt, mergeAt int // -1: never
}

func (p *panickyChunks) Decode(ch any) any {
	if ch.(int) == p.decodeAt {
		panic(fmt.Sprintf("decode %d", p.decodeAt))
	}
	return p.fakeChunks.Decode(ch)
}

func (p *panickyChunks) Merge(d any) error {
	if d.(int) == p.mergeAt {
		panic(fmt.Sprintf("merge %d", p.mergeAt))
	}
	return p.fakeChunks.Merge(d)
}

// catchPanic calls fn and returns what it panicked with.
func catchPanic(fn func()) (p any) {
	defer func() { p = recover() }()
	fn()
	return nil
}

// TestDecodeChunkedPanic: a panic in a chunk's decode or merge, on
// whichever goroutine, is panicked again by decodeChunked on its caller's
// goroutine (where the job's errgroup turns it into an InternalError),
// once no goroutine of it is at work; before, it killed the process.
func TestDecodeChunkedPanic(t *testing.T) {
	t.Parallel()
	for _, compressed := range []bool{false, true} {
		for _, workers := range []int{1, 2, 3} {
			for _, at := range []int{0, 17, 39} {
				for _, inMerge := range []bool{false, true} {
					f := &fakeChunks{t: t, n: 40, failAt: -1, workers: workers, compressed: compressed}
					c := &panickyChunks{fakeChunks: f, decodeAt: at, mergeAt: -1}
					want := fmt.Sprintf("decode %d", at)
					if inMerge {
						c.decodeAt, c.mergeAt, want = -1, at, fmt.Sprintf("merge %d", at)
					}
					name := fmt.Sprintf("compressed %v, workers %d, %s", compressed, workers, want)
					p := catchPanic(func() { decodeChunked(c, workers, 1) })
					f.mu.Lock()
					f.returned = true
					ie, ok := p.(*InternalError)
					if !ok || ie.Value != want || len(ie.Stack) == 0 {
						t.Errorf("%s: panicked with %#v", name, p)
					}
					if f.decoding != 0 || f.inNext || f.closed != 1 {
						t.Errorf("%s: still at work after it returned, or closed %d times", name, f.closed)
					}
					f.mu.Unlock()
				}
			}
		}
	}
}

// TestGuardedAndParallel: an errgroup task's panic is its error, an
// *InternalError; a panic of one of parallel's workers is panicked again
// on parallel's caller once every worker has returned (on one worker, the
// work runs on the caller's goroutine and its panic is the caller's).
func TestGuardedAndParallel(t *testing.T) {
	t.Parallel()
	err := guarded(func() error { panic("task") })()
	if ie, ok := err.(*InternalError); !ok || ie.Value != "task" ||
		ie.Error() != "internal error: task (a bug in crlbatch; please report it)" {
		t.Errorf("guarded: %v", err)
	}
	for _, workers := range []int{1, 2, 4} {
		j := &job{cfg: &Config{Concurrency: workers}}
		done := make([]bool, 100)
		p := catchPanic(func() {
			j.parallel(100, func(i int) {
				if i == 50 {
					panic("work 50")
				}
				done[i] = true
			})
		})
		// On one worker, the work runs on the caller's goroutine.
		if ie, ok := p.(*InternalError); (!ok && (workers > 1 || p != "work 50")) || (ok && ie.Value != "work 50") {
			t.Errorf("workers %d: panicked with %#v", workers, p)
		}
	}
}
