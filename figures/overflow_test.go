package figures

import (
	"math"
	"strings"
	"testing"

	"github.com/crlbatch/crlbatch/protocol"
)

// TestRewardNearMaxFloat64 draws the reward figure of runs whose rewards
// lie near ±MaxFloat64, where a bucket's mean across runs or its band
// leaves float64 and the reward axis' span would too: every figure is
// drawn (no panic, no endless tick search), a mean that overflows is a gap
// and a band that overflows is absent, each counted in the caption with its
// reason (decisions.md, skyfall: such data never fails the job or panics).
func TestRewardNearMaxFloat64(t *testing.T) {
	const steps = 20
	alternate := func(v float64) func(int) float64 {
		return func(i int) float64 {
			if i%2 == 1 {
				return -v
			}
			return v
		}
	}
	constant := func(v float64) func(int) float64 { return func(int) float64 { return v } }
	cases := []struct {
		name   string
		reward func(step int) float64
		// wantCaption are parts the caption must hold.
		wantCaption []string
	}{
		{"all 1.7e308: every mean overflows", constant(1.7e308), []string{"mean is absent", protocol.ReasonOverflow}},
		{"all -1.7e308", constant(-1.7e308), []string{"mean is absent", protocol.ReasonOverflow}},
		{"all MaxFloat64", constant(math.MaxFloat64), []string{"mean is absent", protocol.ReasonOverflow}},
		{"1e308 constant: mean fine, axis of one value", constant(1e307), nil},
		{"±1.5e308: the axis' span overflows", alternate(1.5e308), []string{"reward axis is cut"}},
		{"±MaxFloat64", alternate(math.MaxFloat64), []string{"reward axis is cut"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var curves []Curve
			for range 3 {
				rw, lb := make([]float64, steps), make([]int32, steps)
				for i := range rw {
					rw[i] = c.reward(i)
					if i >= steps/2 {
						lb[i] = 1
					}
				}
				curves = append(curves, Downsample(rw, lb, []string{"A", "B"}))
			}
			fig := Reward("reward-x", "x", 3, Merge(curves))
			if _, err := fig.SVG(); err != nil {
				t.Fatalf("SVG: %v", err)
			}
			if _, err := fig.PNG(); err != nil {
				t.Fatalf("PNG: %v", err)
			}
			for _, w := range c.wantCaption {
				if !strings.Contains(fig.Caption, w) {
					t.Errorf("caption %q lacks %q", fig.Caption, w)
				}
			}
			if strings.Contains(fig.Caption, "band is absent") && strings.Contains(fig.Caption, ReasonOneRun) {
				t.Errorf("caption blames one run for an overflowing band: %q", fig.Caption)
			}
		})
	}
}
