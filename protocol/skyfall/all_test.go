package skyfall

import (
	"math"
	"testing"
)

var mathSqrt = math.Sqrt

func TestComputeAll(t *testing.T) {
	// Trace 1 is the worked example; trace 2 runs b then c, so b has no
	// shift there and c appears only in trace 2.
	r1 := score(t, workedExample(t), DefaultParams())
	r2 := score(t, build(t, nil, cat(rep(0.2, "b", 4), rep(0.4, "c", 4))...), DefaultParams())
	all := ComputeAll([]*RunResult{r1, r2})
	if got := all.Labels; len(got) != 4 || got[0] != "a" || got[1] != "b" || got[2] != "a_again" || got[3] != "c" {
		t.Fatalf("labels %v, want a b a_again c", got)
	}
	m := func(name string) int {
		for i, n := range LabelMetrics {
			if n == name {
				return i
			}
		}
		t.Fatalf("no metric %s", name)
		return -1
	}
	J, adapt, forget := m("per_configuration_reward"), m("adaptation_speed"), m("forgetting")
	// b: J averaged over both traces: (0.61 + 0.2)/2; adaptation only from
	// trace 1 (trace 2's b is its first interval): 3.
	bJ := r1.Labels[1].PerConfigurationReward.V
	wantValue(t, "b J", all.PerLabel[1][J], (bJ+0.2)/2)
	wantValue(t, "b adapt", all.PerLabel[1][adapt], 3)
	// a has no adaptation anywhere: null, and the aggregate drops it:
	// labels with a value are b (3), a_again (1), c (1): (3+1+1)/3.
	wantAbsent(t, "a adapt", all.PerLabel[0][adapt], ReasonNoTraceValue+": "+ReasonNoShift)
	wantValue(t, "aggregate adapt", all.Aggregate[adapt], (3.0+1+1)/3)
	// Forgetting: a and a_again carry 0.3, b and c none.
	f := r1.Labels[0].Forgetting.V
	wantValue(t, "aggregate forgetting", all.Aggregate[forget], (f+f)/2)
	// Regret is null in every trace and stays null.
	for i, name := range RunMetrics {
		if name == "regret" && all.Run[i].OK {
			t.Error("regret must stay null")
		}
		if name == "return_undiscounted" {
			wantValue(t, "mean undiscounted", all.Run[i], (r1.ReturnUndiscounted.V+r2.ReturnUndiscounted.V)/2)
		}
	}
}

func TestSummarizeLabels(t *testing.T) {
	r1 := score(t, workedExample(t), DefaultParams())
	r2 := score(t, build(t, nil, cat(rep(0.2, "b", 4), rep(0.4, "c", 4))...), DefaultParams())
	s := SummarizeLabels([]*RunResult{r1, r2})
	if len(s.Keys) != 4 || s.Keys[3] != "c" {
		t.Fatalf("labels %v", s.Keys)
	}
	J := 0
	b := s.Cells[1][J]
	// b: 0.61 (as summed) and 0.2; mean and sample std of the two.
	x, y := r1.Labels[1].PerConfigurationReward.V, 0.2
	m := (x + y) / 2
	if b.N != 2 {
		t.Fatalf("n %d", b.N)
	}
	wantValue(t, "b mean", b.Mean, m)
	wantValue(t, "b std", b.Std, mathSqrt(((x-m)*(x-m)+(y-m)*(y-m))/1))
	c := s.Cells[3][J]
	wantValue(t, "c mean", c.Mean, 0.4)
	if c.Std.OK {
		t.Error("one seed: std must be absent")
	}
	if a := s.Cells[0][1]; a.Mean.OK || a.N != 0 {
		t.Errorf("a adaptation: %+v, want absent", a)
	}
}
