package pipeline

import (
	"context"
	"errors"
	"io/fs"
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
// itself no more than --concurrency (those already past their check). The
// bounds are on latency, with margins for a loaded machine, not on speed:
// uncancelled, the job takes a few seconds.
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
			if !errors.Is(err, context.Canceled) {
				t.Errorf("Run cancelled during %s: %v, want context.Canceled", name, err)
			}
			if d := returned.Sub(cancelled); d > bound {
				t.Errorf("Run returned %v after the cancel during %s, want ≤ %v", d.Round(time.Millisecond), name, bound)
			}
			for p, n := range after {
				switch i := slices.Index(jobPhases, p); {
				case i > pi:
					t.Errorf("cancelled during %s, the job went on to %s (%d pieces of work)", name, p, n)
				case i == pi && n > cfg.Concurrency:
					t.Errorf("cancelled during %s, it started %d more pieces of it, want ≤ %d", name, n, cfg.Concurrency)
				}
			}
			// Nothing left behind: the goroutines end (the reduction and
			// the rendering, which Run stops waiting for, soon after it).
			deadline := time.Now().Add(bound)
			for runtime.NumGoroutine() > base && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
			if n := runtime.NumGoroutine(); n > base {
				buf := make([]byte, 1<<16)
				t.Errorf("%d goroutines still running %v after the cancel during %s (%d before the job):\n%s",
					n, bound, name, base, buf[:runtime.Stack(buf, true)])
			}
			filepath.WalkDir(out, func(p string, d fs.DirEntry, err error) error {
				if err == nil && !d.IsDir() {
					t.Errorf("cancelled during %s, left in the output: %s", name, p)
				}
				return nil
			})
			assertEmpty(t, cfg.SpillDir, "cancelled during "+name)
		})
	}
}
