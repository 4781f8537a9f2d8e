package pipeline

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/crlbatch/crlbatch/protocol"
	"github.com/crlbatch/crlbatch/protocol/family"
	"github.com/crlbatch/crlbatch/scoring"
)

// TestReduceCancelled: a job interrupted while it reduces (SIGTERM during
// the bootstrap) returns the context's error; the cells the reduction
// skipped once the context was done made family.Aggregate panic on their
// empty p values (a crash with exit 2, nothing cleaned up).
func TestReduceCancelled(t *testing.T) {
	t.Parallel()
	cfg := localJob(t.TempDir(), t.TempDir(), nil)
	j, err := newJob(&cfg)
	if err != nil {
		t.Fatal(err)
	}
	var scored []*scoring.Scored
	for f, fam := range []string{"ppo", "sac"} {
		for seed := range 3 {
			scored = append(scored, &scoring.Scored{Key: fmt.Sprintf("%s-%d", fam, seed),
				Meta: map[string]string{"algorithm_id": fam, "seed": fmt.Sprint(seed)}, Rows: 10,
				Values: map[string]protocol.Value{"reward": protocol.Some(float64(f + seed))}})
		}
	}
	up := true
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, _, err = j.reduce(ctx, scored, []family.Metric{{Name: "reward", HigherIsBetter: &up}})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("reduce under a done context: %v, want context.Canceled", err)
	}
}

// TestMinStepsExcludingEveryRunWarns: a --min-steps above every run's
// rows publishes (the notes name each exclusion) but no family has a
// statistic; a nightly job set so said nothing on stderr. It now warns,
// naming the limit and the longest run; a limit that leaves one run in
// does not.
func TestMinStepsExcludingEveryRunWarns(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		minSteps int
		warn     bool
	}{{0, false}, {10, false}, {11, false}, {12, true}, {1000, true}} {
		t.Run(fmt.Sprint(tc.minSteps), func(t *testing.T) {
			t.Parallel()
			var log bytes.Buffer
			cfg := localJob(t.TempDir(), t.TempDir(), &log)
			cfg.MinSteps = tc.minSteps
			j, err := newJob(&cfg)
			if err != nil {
				t.Fatal(err)
			}
			var scored []*scoring.Scored
			for seed := range 3 {
				scored = append(scored, &scoring.Scored{Key: fmt.Sprint(seed),
					Meta: map[string]string{"algorithm_id": "ppo", "seed": fmt.Sprint(seed)}, Rows: 9 + seed,
					Values: map[string]protocol.Value{"reward": protocol.Some(float64(seed))}})
			}
			up := true
			if _, _, err := j.reduce(context.Background(), scored, []family.Metric{{Name: "reward", HigherIsBetter: &up}}); err != nil {
				t.Fatal(err)
			}
			warned := strings.Contains(log.String(), "every run is excluded by --min-steps") &&
				strings.Contains(log.String(), fmt.Sprintf("min_steps=%d runs=3 longest_run_rows=11", tc.minSteps))
			if warned != tc.warn {
				t.Errorf("--min-steps %d: warned %v, want %v:\n%s", tc.minSteps, warned, tc.warn, log.String())
			}
		})
	}
}
