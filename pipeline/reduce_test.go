package pipeline

import (
	"context"
	"errors"
	"fmt"
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
