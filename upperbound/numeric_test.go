package upperbound_test

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/crlbatch/crlbatch/upperbound"
)

// progressComponent is stateful: its value is how far the agent moved since
// the previous step of the same trajectory (from 0 at the start).
func progressComponent(steps *[]int) upperbound.ComponentFactory {
	return func() upperbound.Evaluator {
		prev := 0.0
		return func(ctx upperbound.StepContext) (float64, error) {
			*steps = append(*steps, ctx.Step)
			pos := ctx.Values["pos"]
			d := pos - prev
			prev = pos
			return d, nil
		}
	}
}

func experimentRegistry(t *testing.T, steps *[]int) *upperbound.ComponentRegistry {
	t.Helper()
	reg := upperbound.NewComponentRegistry()
	for name, f := range map[string]upperbound.ComponentFactory{
		"progress":  progressComponent(steps),
		"collision": upperbound.ValueComponent("hit"),
		"success":   upperbound.ValueComponent("goal"),
	} {
		if err := reg.Register(name, f); err != nil {
			t.Fatal(err)
		}
	}
	return reg
}

func ctx(pos, hit, goal float64, final bool) upperbound.StepContext {
	return upperbound.StepContext{Final: final, Values: map[string]float64{"pos": pos, "hit": hit, "goal": goal}}
}

// Two trajectories under the experiment spec (w = 0.3333333333333333 on
// progress clipped to [0,1], 1 on collision clipped to [-1,0],
// 0.6666666666666667 on success clipped to [0,1], episode-end):
//
//	traj 0: pos 0    → progress 0, reward 0
//	        pos 0.5  → progress 0.5, reward w·0.5 = 1/6
//	        pos 2    → progress 1.5 → 1, hit −2 → −1, reward w − 1 = −2/3
//	        pos 2.25 final, goal 1 → w·0.25 + 0.6666666666666667
//	traj 1: pos 0.9, goal 1 (not final, so success does not pay) → w·0.9
//	        (fresh state: the progress is 0.9 − 0, not 0.9 − 2.25)
//	        pos 1 final, goal 0 → w·0.1 (1 − 0.9 in float64)
var trajectories = [][]upperbound.StepContext{
	{ctx(0, 0, 0, false), ctx(0.5, 0, 0, false), ctx(2, -2, 0, false), ctx(2.25, 0, 1, true)},
	{ctx(0.9, 0, 1, false), ctx(1, 0, 0, true)},
}

func TestNumericStateful(t *testing.T) {
	spec := loadBundled(t, "experiment")
	var steps []int
	reg := experimentRegistry(t, &steps)
	b, err := upperbound.Numeric(spec, reg, trajectories, upperbound.NumericOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w := 0.3333333333333333
	if want := float64(w * 0.9); b.PerStep != want {
		t.Errorf("per step %v, want %v", b.PerStep, want)
	}
	if want := float64(w*0.25) + 0.6666666666666667; b.FinalStep != want {
		t.Errorf("final step %v, want %v", b.FinalStep, want)
	}
	if b.Derivation != "numeric" || b.Spec != "experiment" || b.Quantile != 1 {
		t.Errorf("provenance %+v", b)
	}
	// Step counts from 0 in each trajectory.
	if got, want := steps, []int{0, 1, 2, 3, 0, 1}; !slices.Equal(got, want) {
		t.Errorf("steps seen %v, want %v", got, want)
	}
}

func TestNumericQuantile(t *testing.T) {
	spec := loadBundled(t, "experiment")
	var steps []int
	reg := experimentRegistry(t, &steps)
	q := 0.5
	b, err := upperbound.Numeric(spec, reg, trajectories, upperbound.NumericOptions{Quantile: &q})
	if err != nil {
		t.Fatal(err)
	}
	// Non-final rewards sorted: −2/3, 0, 1/6, 0.3; the median sits halfway
	// between 0 and 1/6, at 1/12. Final rewards: ≈0.0333 and ≈0.75; the
	// median is their midpoint ≈0.3917.
	if math.Abs(b.PerStep-1.0/12) > 1e-12 {
		t.Errorf("per step %v, want 1/12", b.PerStep)
	}
	w := 0.3333333333333333
	lo, hi := w*(1-0.9), w*0.25+0.6666666666666667
	if want := (lo + hi) / 2; math.Abs(b.FinalStep-want) > 1e-12 {
		t.Errorf("final step %v, want %v", b.FinalStep, want)
	}
	if b.Quantile != 0.5 {
		t.Errorf("quantile %v", b.Quantile)
	}
}

func TestNumericOneKind(t *testing.T) {
	spec := loadBundled(t, "experiment")
	var steps []int
	reg := experimentRegistry(t, &steps)
	// Only final contexts: both numbers come from them.
	b, err := upperbound.Numeric(spec, reg, [][]upperbound.StepContext{{ctx(1, 0, 1, true)}}, upperbound.NumericOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// w·1 + 0 + 0.6666666666666667·1 = 1 (in float64).
	if b.PerStep != b.FinalStep || b.FinalStep != 1 {
		t.Errorf("only final contexts: %+v", b)
	}
	// Only ordinary contexts.
	b, err = upperbound.Numeric(spec, reg, [][]upperbound.StepContext{{ctx(0.5, 0, 1, false)}}, upperbound.NumericOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if want := float64(0.3333333333333333 * 0.5); b.PerStep != want || b.FinalStep != want {
		t.Errorf("only ordinary contexts: %+v, want %v", b, want)
	}
}

func TestNumericErrors(t *testing.T) {
	spec := loadBundled(t, "experiment")
	var steps []int
	reg := experimentRegistry(t, &steps)
	bad := 1.5
	partial := upperbound.NewComponentRegistry()
	if err := partial.Register("progress", upperbound.ValueComponent("pos")); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		reg  *upperbound.ComponentRegistry
		traj [][]upperbound.StepContext
		opts upperbound.NumericOptions
		want string
	}{
		{"no trajectories", reg, nil, upperbound.NumericOptions{}, "no step contexts"},
		{"empty trajectories", reg, [][]upperbound.StepContext{{}, {}}, upperbound.NumericOptions{}, "no step contexts"},
		{"unknown component", partial, trajectories, upperbound.NumericOptions{}, `component "collision" has no registered function`},
		{"nil registry", nil, trajectories, upperbound.NumericOptions{}, `component "progress" has no registered function`},
		{"missing value", reg, [][]upperbound.StepContext{{{Values: map[string]float64{"pos": 1}}}}, upperbound.NumericOptions{},
			`component "collision": trajectory 0, step 0: no value "hit"`},
		{"non-finite", reg, [][]upperbound.StepContext{{ctx(math.NaN(), 0, 0, false)}}, upperbound.NumericOptions{}, "not finite"},
		{"quantile", reg, trajectories, upperbound.NumericOptions{Quantile: &bad}, "quantile 1.5 is outside [0, 1]"},
	}
	for _, c := range cases {
		_, err := upperbound.Numeric(spec, c.reg, c.traj, c.opts)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want %q", c.name, err, c.want)
		}
	}
}

func TestComponentRegistry(t *testing.T) {
	reg := upperbound.NewComponentRegistry()
	if err := reg.Register("a", upperbound.ValueComponent("a")); err != nil {
		t.Fatal(err)
	}
	if err := reg.Register("a", upperbound.ValueComponent("a")); err == nil {
		t.Error("registered a twice")
	}
	if err := reg.Register("", upperbound.ValueComponent("a")); err == nil {
		t.Error("registered an empty name")
	}
	if err := reg.Register("b", nil); err == nil {
		t.Error("registered a nil factory")
	}
	if got := reg.Names(); len(got) != 1 || got[0] != "a" {
		t.Errorf("names %v", got)
	}
}
