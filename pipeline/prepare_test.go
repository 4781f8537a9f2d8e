package pipeline

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/crlbatch/crlbatch/scoring"
)

// fakeAssembly is an each over n runs named r0, r1, ... that counts the
// runs held (assembled and not given back) and fails, when failAt >= 0,
// instead of assembling run failAt.
type fakeAssembly struct {
	n, failAt int
	assembled func(i int) // called as run i is assembled, before it is given

	mu            sync.Mutex
	held, maxHeld int
	doneOrder     []string
}

var errAssembly = errors.New("assembly failed")

func (f *fakeAssembly) each(give func(*scoring.Run) error) error {
	for i := range f.n {
		if i == f.failAt {
			return errAssembly
		}
		f.mu.Lock()
		f.held++
		f.maxHeld = max(f.maxHeld, f.held)
		f.mu.Unlock()
		if f.assembled != nil {
			f.assembled(i)
		}
		if err := give(&scoring.Run{Key: fmt.Sprintf("r%d", i)}); err != nil {
			return err
		}
	}
	return nil
}

func (f *fakeAssembly) done(r *scoring.Run) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.held--
	f.doneOrder = append(f.doneOrder, r.Key)
}

func TestHandBesideInCanonicalOrder(t *testing.T) {
	f := &fakeAssembly{n: 6, failAt: -1}
	var seen []string
	err := handBeside(f.each, func(r *scoring.Run) error {
		f.mu.Lock()
		defer f.mu.Unlock()
		// The run before was given back before this one was handed over.
		if want := len(seen); len(f.doneOrder) != want {
			t.Errorf("fn given %s with %d runs given back, want %d", r.Key, len(f.doneOrder), want)
		}
		seen = append(seen, r.Key)
		return nil
	}, f.done)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"r0", "r1", "r2", "r3", "r4", "r5"}
	if fmt.Sprint(seen) != fmt.Sprint(want) || fmt.Sprint(f.doneOrder) != fmt.Sprint(want) {
		t.Errorf("fn saw %v, given back %v; want %v for both", seen, f.doneOrder, want)
	}
	if f.held != 0 || f.maxHeld > 2 {
		t.Errorf("%d runs still held, at most %d at once; want 0 and at most 2", f.held, f.maxHeld)
	}
}

// The next run is assembled while fn still holds the last one: fn for r0
// returns only once r1's assembly has started.
func TestHandBesideAssemblesTheNextRunMeanwhile(t *testing.T) {
	r1 := make(chan struct{})
	f := &fakeAssembly{n: 3, failAt: -1, assembled: func(i int) {
		if i == 1 {
			close(r1)
		}
	}}
	err := handBeside(f.each, func(r *scoring.Run) error {
		if r.Key != "r0" {
			return nil
		}
		select {
		case <-r1:
			return nil
		case <-time.After(10 * time.Second):
			return errors.New("r1 was not assembled while fn held r0")
		}
	}, f.done)
	if err != nil {
		t.Fatal(err)
	}
	if f.maxHeld != 2 || f.held != 0 {
		t.Errorf("at most %d runs held at once, %d at the end; want 2 and 0", f.maxHeld, f.held)
	}
}

func TestHandBesideFirstErrorInCanonicalOrder(t *testing.T) {
	errFn := errors.New("fn failed on r2")
	for _, c := range []struct {
		name      string
		failAt    int  // the assembly fails on this run (-1: never)
		fnFails   bool // fn fails on r2
		want      error
		wantGiven string // the runs fn was given
	}{
		{name: "fn fails", failAt: -1, fnFails: true, want: errFn, wantGiven: "[r0 r1 r2]"},
		{name: "fn fails, the next assembly too", failAt: 3, fnFails: true, want: errFn, wantGiven: "[r0 r1 r2]"},
		{name: "the assembly fails", failAt: 3, want: errAssembly, wantGiven: "[r0 r1 r2]"},
		{name: "the first assembly fails", failAt: 0, want: errAssembly, wantGiven: "[]"},
	} {
		t.Run(c.name, func(t *testing.T) {
			// r3's assembly waits for fn on r2 to have failed, so that
			// both errors are there whatever the goroutines' order.
			r2failed := make(chan struct{})
			f := &fakeAssembly{n: 6, failAt: c.failAt}
			var given []string
			err := handBeside(func(give func(*scoring.Run) error) error {
				err := f.each(give)
				if c.fnFails && c.failAt == 3 {
					<-r2failed
				}
				return err
			}, func(r *scoring.Run) error {
				given = append(given, r.Key)
				if c.fnFails && r.Key == "r2" {
					close(r2failed)
					return errFn
				}
				return nil
			}, f.done)
			if !errors.Is(err, c.want) {
				t.Errorf("error %v, want %v", err, c.want)
			}
			if fmt.Sprint(given) != c.wantGiven {
				t.Errorf("fn given %v, want %s", given, c.wantGiven)
			}
			if f.held != 0 {
				t.Errorf("%d runs not given back", f.held)
			}
		})
	}
}
