package pipeline

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/crlbatch/crlbatch/internal/synth"
	"github.com/crlbatch/crlbatch/scoring"
)

// TestPrepareEachInOrder: a Preparer's pass hands fn the runs kept in
// canonical order at any --concurrency (fn of one run overlaps the
// assembly of the next on two cores or more); fn's first error ends the
// pass, no run after it reaches fn, and it is returned as it is; a done
// context ends the pass with its error.
func TestPrepareEachInOrder(t *testing.T) {
	ctx := context.Background()
	op := &memOpener{}
	b, _, _ := op.open(ctx, "mem://lab")
	if _, err := synth.Write(ctx, b, "sweep/", synth.Config{Seeds: 3, Steps: 60, Seed: 4}); err != nil {
		t.Fatal(err)
	}
	errStop := errors.New("fn stops here")
	// pass decodes the sweep and runs prepareEach over it; fn fails on the
	// run of index failAt (-1: never) and cancels ctx on run cancelAt.
	pass := func(concurrency, failAt, cancelAt int) ([]string, error) {
		cfg := memJob(t, op, "mem://lab/sweep", "mem://lab/out")
		cfg.Concurrency = concurrency
		j, err := newJob(&cfg)
		if err != nil {
			t.Fatal(err)
		}
		j.prog = newProgress(nil, false)
		objs, err := list(ctx, b, j.in, cfg.Patterns, cfg.Retry)
		if err != nil {
			t.Fatal(err)
		}
		rd, err := j.read(ctx, b, objs)
		defer releaseAll(rd)
		if err != nil {
			t.Fatal(err)
		}
		pctx, cancel := context.WithCancel(ctx)
		defer cancel()
		var seen []string
		err = j.prepareEach(pctx, rd, func(r *scoring.Run) error {
			seen = append(seen, r.Key)
			if len(seen)-1 == cancelAt {
				cancel()
			}
			if len(seen)-1 == failAt {
				return errStop
			}
			return nil
		})
		return seen, err
	}
	all, err := pass(1, -1, -1)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) < 4 {
		t.Fatalf("%d runs in the synthetic sweep; want at least 4", len(all))
	}
	for _, tc := range []struct {
		concurrency, failAt, cancelAt int
		want                          []string
		wantErr                       error
	}{
		{1, -1, -1, all, nil},
		{2, -1, -1, all, nil},
		{4, -1, -1, all, nil},
		{1, 0, -1, all[:1], errStop},
		{2, 0, -1, all[:1], errStop},
		{2, 2, -1, all[:3], errStop},
		{4, len(all) - 1, -1, all, errStop},
		{2, -1, 1, nil, context.Canceled},
	} {
		name := fmt.Sprintf("concurrency %d, fail at %d, cancel at %d", tc.concurrency, tc.failAt, tc.cancelAt)
		seen, err := pass(tc.concurrency, tc.failAt, tc.cancelAt)
		if !errors.Is(err, tc.wantErr) || (tc.wantErr == errStop && err != errStop) {
			t.Errorf("%s: error %v, want %v", name, err, tc.wantErr)
		}
		if tc.wantErr == context.Canceled {
			// The run being assembled when ctx ended may still reach fn;
			// none after it does, and those that do come in order.
			if len(seen) > tc.cancelAt+2 || !slices.Equal(seen, all[:len(seen)]) {
				t.Errorf("%s: fn saw %v after the cancel; want a prefix of %v no longer than %d", name, seen, all, tc.cancelAt+2)
			}
			continue
		}
		if !slices.Equal(seen, tc.want) {
			t.Errorf("%s: fn saw %v, want %v", name, seen, tc.want)
		}
	}
}
