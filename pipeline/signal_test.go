package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/crlbatch/crlbatch/internal/synth"
)

// jobPhases are the phases of a job in the order it goes through them (see
// testHookPhase).
var jobPhases = []string{"list", "read", "score", "reduce", "figures", "render", "parquet", "publish"}

// TestCancelEndsEveryPhase: a signal (the job's context cancelled, as
// cmd/crlbatch does on SIGINT and SIGTERM) ends the job within a couple of
// seconds in every phase (issue 16), output building included, and leaves
// nothing behind: no output file, no spill file, no goroutine. The context
// is cancelled as the second piece of work of the phase starts (the only
// one for the listing and the rendering), so that the phase is under way;
// after that no piece of work of a later phase may start, and of the phase
// itself no more than it runs at once (those already past their check):
// --concurrency, or publishAtOnce result files being written (one of
// those may finish, and free its slot for another to pass its check,
// before the second one's piece of work starts and cancels). The
// bounds are on latency, with margins for a loaded machine, not on speed:
// uncancelled, the job takes a few seconds.
//
// Not parallel (see TestMain): it sets testHookPhase and counts the
// goroutines of the process.
func TestCancelEndsEveryPhase(t *testing.T) {
	in := filepath.Join(t.TempDir(), "in")
	// 4 families × 4 seeds, each run in two objects of 1,500 rows (several
	// reads each), so that every phase has several pieces of work.
	if _, err := synth.Run(context.Background(), synth.Config{Out: in, Seeds: 4, Steps: 3000, SplitFiles: 2, Seed: 11}); err != nil {
		t.Fatal(err)
	}
	const bound = 2 * time.Second
	for pi, name := range jobPhases {
		t.Run(name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			cfg := localJob(in, out, nil)
			cfg.Concurrency = 2
			cfg.Resamples = 20000
			cfg.SpillDir = t.TempDir()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var mu sync.Mutex
			seen := map[string]int{}  // pieces of work started before the cancel
			after := map[string]int{} // and after it
			var cancelled time.Time
			testHookPhase = func(p string) {
				mu.Lock()
				defer mu.Unlock()
				if !cancelled.IsZero() {
					after[p]++
					return
				}
				seen[p]++
				if p == name && (seen[p] == 2 || p == "list" || p == "render") {
					cancelled = time.Now()
					cancel()
				}
			}
			defer func() { testHookPhase = nil }()
			base := runtime.NumGoroutine()

			_, err := Run(ctx, cfg)
			returned := time.Now()
			mu.Lock()
			defer mu.Unlock()
			if cancelled.IsZero() {
				t.Fatalf("the job ended (%v) without reaching the phase's second piece of work; phases seen: %v", err, seen)
			}
			checkReturned(t, name, err, returned.Sub(cancelled), bound)
			atOnce := cfg.Concurrency
			if name == "publish" {
				atOnce = publishAtOnce
			}
			for p, n := range after {
				switch i := slices.Index(jobPhases, p); {
				case i > pi:
					t.Errorf("cancelled during %s, the job went on to %s (%d pieces of work)", name, p, n)
				case i == pi && n > atOnce:
					t.Errorf("cancelled during %s, it started %d more pieces of it, want ≤ %d", name, n, atOnce)
				}
			}
			// Nothing left behind: the goroutines end (the reduction and
			// the rendering, which Run stops waiting for, soon after it).
			checkLeftNothing(t, name, base, bound, out, cfg.SpillDir)
		})
	}
}

// checkReturned checks a job cancelled during phase: it returned err, d
// after the cancel; want context.Canceled within bound.
func checkReturned(t *testing.T, phase string, err error, d, bound time.Duration) {
	t.Helper()
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Run cancelled during %s: %v, want context.Canceled", phase, err)
	}
	if d > bound {
		t.Errorf("Run returned %v after the cancel during %s, want ≤ %v", d.Round(time.Millisecond), phase, bound)
	}
}

// checkLeftNothing checks that a job cancelled during phase leaves nothing
// behind: within wait no more goroutines run than the base before it, and
// no file is left in the output out or the spill folder.
func checkLeftNothing(t *testing.T, phase string, base int, wait time.Duration, out, spill string) {
	t.Helper()
	deadline := time.Now().Add(wait)
	for runtime.NumGoroutine() > base && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > base {
		buf := make([]byte, 1<<16)
		t.Errorf("%d goroutines still running %v after the cancel during %s (%d before the job):\n%s",
			n, wait, phase, base, buf[:runtime.Stack(buf, true)])
	}
	filepath.WalkDir(out, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			t.Errorf("cancelled during %s, left in the output: %s", phase, p)
		}
		return nil
	})
	assertEmpty(t, spill, "cancelled during "+phase)
}

// TestCancelEndsOutputAt100000Labels: a signal ends a job of one run of
// 100,000 labels (the default --max-labels) within a couple of seconds in
// every phase of output building (issue 16), and leaves nothing behind.
// The context is cancelled a little after the phase starts, so that the
// phase is under way: the figures being drawn, the report and tables being
// built, a Parquet file being encoded, report.html being converted and
// written (the 11th file published: five tables, four figure files,
// report.md). Not under -short (the job builds ~200 MB of outputs), nor
// under the race detector (which slows it 5-10 times: the bounds are the
// real binary's; TestCancelEndsEveryPhase runs the same paths under it).
//
// Not parallel (see TestMain): it sets testHookPhase and counts the
// goroutines of the process.
func TestCancelEndsOutputAt100000Labels(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("a 100,000-label job: not under -short or -race")
	}
	const labels = 100000
	in := filepath.Join(t.TempDir(), "in")
	if err := os.MkdirAll(in, 0o755); err != nil {
		t.Fatal(err)
	}
	// One run, two rows an interval, each interval its own label (as
	// bench/scalegen -runs 1 -rows 200000 -labels 100000 writes it).
	var b []byte
	for s := range 2 * labels {
		b = fmt.Appendf(b, `{"run_id":"ppo-s0","seed":0,"algorithm_id":"ppo","task":"navigate","step":%d,"reward":%g,"regime_id":"L%d","components":{"progress":%g}}`+"\n",
			s, 0.3+0.1*float64(s%7), s/2, 0.45+0.15*float64(s%7))
	}
	if err := os.WriteFile(filepath.Join(in, "o.jsonl"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	const bound = 2 * time.Second
	for _, c := range []struct {
		phase string
		nth   int // the piece of work of the phase after which the cancel comes
	}{{"figures", 1}, {"render", 1}, {"parquet", 1}, {"publish", 11}} {
		t.Run(c.phase, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			cfg := localJob(in, out, nil)
			cfg.Concurrency = 2
			cfg.SpillDir = t.TempDir()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var mu sync.Mutex
			seen := map[string]int{}
			var cancelled time.Time
			var after []string // phases started after the cancel
			testHookPhase = func(p string) {
				mu.Lock()
				defer mu.Unlock()
				if !cancelled.IsZero() {
					after = append(after, p)
					return
				}
				if seen[p]++; p == c.phase && seen[p] == c.nth {
					time.AfterFunc(50*time.Millisecond, func() {
						mu.Lock()
						cancelled = time.Now()
						mu.Unlock()
						cancel()
					})
				}
			}
			defer func() { testHookPhase = nil }()
			base := runtime.NumGoroutine()

			_, err := Run(ctx, cfg)
			returned := time.Now()
			mu.Lock()
			defer mu.Unlock()
			if cancelled.IsZero() {
				t.Fatalf("the job ended (%v) before the cancel; phases seen: %v", err, seen)
			}
			d := returned.Sub(cancelled)
			t.Logf("cancelled during %s (after %v): returned %v later", c.phase, seen, d.Round(time.Millisecond))
			checkReturned(t, c.phase, err, d, bound)
			for _, p := range after {
				if slices.Index(jobPhases, p) > slices.Index(jobPhases, c.phase) {
					t.Errorf("cancelled during %s, the job went on to %s", c.phase, p)
				}
			}
			// The protocol's Render, which Run stops waiting for, is pure
			// and cannot be stopped: for 100,000 labels it goes on for a
			// second or two of CPU (more on a loaded machine), writes
			// nothing and ends on its own (the command exits at once). It
			// runs beside the figures, so it may have started before a
			// cancel during them too.
			wait := bound
			if seen["render"] > 0 {
				wait = 30 * time.Second
			}
			checkLeftNothing(t, c.phase, base, wait, out, cfg.SpillDir)
		})
	}
}
