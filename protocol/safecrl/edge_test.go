package safecrl

import (
	"math"
	"strings"
	"testing"
)

// TestOneTask: a run of a single task has one visit, so every forgetting
// metric is absent, and so is the run's seed value of each.
func TestOneTask(t *testing.T) {
	res := score(t, 3, rep(e("A", 2).cost(1).succ(1), 5)...)
	a := task(t, res, "A")
	if a.NVisits != 1 {
		t.Fatalf("%d visits", a.NVisits)
	}
	wantV(t, "final", a.FinalTaskReward, 2)
	wantNone(t, "forgetting", a.Forgetting, ReasonNeverRevisited)
	wantNone(t, "normalized", a.NormalizedForgetting, ReasonNeverRevisited)
	wantNone(t, "forgetting_success", a.ForgettingSuccess, ReasonNeverRevisited)
	// 5 costs of 1 over 1 visit = 5; per episode 1.
	wantV(t, "total_cost", a.TotalCost, 5)
	wantV(t, "mean_episode_cost", a.MeanEpisodeCost, 1)
	wantV(t, "success_rate", a.SuccessRate, 1)
	for _, m := range []string{"forgetting", "normalized_forgetting", "forgetting_success"} {
		wantNone(t, "run "+m, res.SeedValue(m), ReasonNoTaskValue+": "+ReasonNeverRevisited)
	}
}

// TestNoRevisit: several tasks, none coming back.
func TestNoRevisit(t *testing.T) {
	res := score(t, 20, e("A", 1), e("A", 2), e("B", 3), e("C", 4), e("C", 5))
	for _, tr := range res.Tasks {
		wantNone(t, tr.Task+" forgetting", tr.Forgetting, ReasonNeverRevisited)
		wantNone(t, tr.Task+" normalized", tr.NormalizedForgetting, ReasonNeverRevisited)
	}
	// final rewards 1.5, 3, 4.5 → run mean 3.
	wantV(t, "run final", res.SeedValue("final_task_reward"), 3)
}

// TestZeroRange: a reward range of exactly zero makes normalized forgetting
// absent, never 0 (the seed's recipe returns 0 there).
func TestZeroRange(t *testing.T) {
	// Constant returns: A = [2 2 | 2 2], W = 2: forgetting 2 − 2 = 0, range
	// |2 − 2| = 0.
	res := score(t, 2, e("A", 2), e("A", 2), e("B", 1), e("A", 2), e("A", 2))
	a := task(t, res, "A")
	wantV(t, "forgetting", a.Forgetting, 0)
	wantNone(t, "normalized", a.NormalizedForgetting, ReasonZeroRange)
	// No task has a value; the seed value names the first task's reason (A's).
	wantNone(t, "run normalized", res.SeedValue("normalized_forgetting"),
		ReasonNoTaskValue+": "+ReasonZeroRange)

	// Nonzero forgetting, zero range: A = [1 3 | 10 2 2], W = 2.
	// forgetting = mean(1 3) − mean(10 2) = 2 − 6 = −4; final = mean(2 2) = 2;
	// initial = mean(1 3) = 2; range 0.
	res = score(t, 2, e("A", 1), e("A", 3), e("B", 0), e("A", 10), e("A", 2), e("A", 2))
	a = task(t, res, "A")
	wantV(t, "forgetting", a.Forgetting, -4)
	wantNone(t, "normalized", a.NormalizedForgetting, ReasonZeroRange)
}

func TestNoCost(t *testing.T) {
	res := score(t, 20, e("A", 1).succ(1), e("B", 2), e("A", 3))
	for _, tr := range res.Tasks {
		wantNone(t, tr.Task+" total_cost", tr.TotalCost, ReasonNoCost)
		wantNone(t, tr.Task+" mean_episode_cost", tr.MeanEpisodeCost, ReasonNoCost)
	}
	wantNone(t, "run total_cost", res.SeedValue("total_cost"), ReasonNoTaskValue+": "+ReasonNoCost)
	// A cost of zero is a recorded zero, not an absence.
	res = score(t, 20, e("A", 1).cost(0))
	wantV(t, "zero cost", res.Tasks[0].TotalCost, 0)
}

func TestNoSuccess(t *testing.T) {
	// A is revisited but records no success: both success metrics absent with
	// "no success recorded" (it precedes "never revisited").
	res := score(t, 20, e("A", 1).cost(1), e("B", 2).cost(1), e("A", 3).cost(1))
	for _, tr := range res.Tasks {
		wantNone(t, tr.Task+" success_rate", tr.SuccessRate, ReasonNoSuccess)
		wantNone(t, tr.Task+" forgetting_success", tr.ForgettingSuccess, ReasonNoSuccess)
	}
	wantNone(t, "run success_rate", res.SeedValue("success_rate"), ReasonNoTaskValue+": "+ReasonNoSuccess)
	// A recorded failure is a 0, not an absence.
	res = score(t, 20, e("A", 1).succ(0))
	wantV(t, "all failures", res.Tasks[0].SuccessRate, 0)
	// Success on one visit only: no pair.
	res = score(t, 20, e("A", 1).succ(1), e("B", 2), e("A", 3))
	wantNone(t, "one-sided", task(t, res, "A").ForgettingSuccess, ReasonNoSuccessPair)
}

func TestEmptyRun(t *testing.T) {
	res := score(t, 20)
	if res.NTasks != 0 || res.NEpisodes != 0 || len(res.Tasks) != 0 || len(res.Visits) != 0 {
		t.Fatalf("empty run: %+v", *res)
	}
	for _, m := range TaskMetrics {
		wantNone(t, m, res.SeedValue(m), ReasonNoTaskValue+": "+ReasonNoTask)
	}
}

// TestOverflow: finite returns whose sum leaves float64 give an absent value
// with a reason, never ±Inf or a panic, and values built on it are absent
// too.
func TestOverflow(t *testing.T) {
	big := 1.7e308
	res := score(t, 3,
		e("A", big).cost(big), e("A", big).cost(big),
		e("B", big),
		e("A", -big).cost(0),
		e("C", big),
	)
	a := task(t, res, "A")
	wantNone(t, "final", a.FinalTaskReward, ReasonOverflow)
	wantNone(t, "forgetting", a.Forgetting, ReasonOverflow)
	wantNone(t, "normalized", a.NormalizedForgetting, ReasonOverflow)
	wantNone(t, "total_cost", a.TotalCost, ReasonOverflow)
	wantNone(t, "mean_episode_cost", a.MeanEpisodeCost, ReasonOverflow)
	// B and C are fine alone (1.7e308 each) but their mean overflows.
	wantV(t, "B final", task(t, res, "B").FinalTaskReward, big)
	wantNone(t, "run final", res.SeedValue("final_task_reward"), ReasonOverflow)

	// A ratio that overflows, W = 2: A = [0 0 | −1e300 −1e300 1e-300 1e-300].
	// forgetting = 0 − (−1e300) = 1e300; final = 1e-300; initial = 0;
	// 1e300 / 1e-300 = 1e600 leaves float64.
	res = score(t, 2, e("A", 0), e("A", 0), e("B", 0),
		e("A", -1e300), e("A", -1e300), e("A", 1e-300), e("A", 1e-300))
	wantV(t, "forgetting", task(t, res, "A").Forgetting, 1e300)
	wantNone(t, "huge ratio", task(t, res, "A").NormalizedForgetting, ReasonOverflow)
}

func TestParamsAndInputErrors(t *testing.T) {
	for _, w := range []int{0, -1} {
		p := Params{WindowEpisodes: w}
		if err := p.Check(); err == nil {
			t.Errorf("W = %d accepted", w)
		}
		if _, err := Score(mkRun(e("A", 1)), &p); err == nil {
			t.Errorf("Score with W = %d succeeded", w)
		}
	}
	p := DefaultParams()
	if p.WindowEpisodes != 20 || p.Check() != nil {
		t.Errorf("DefaultParams = %+v", p)
	}
	if _, err := Score(nil, nil); err == nil {
		t.Error("nil run accepted")
	}
	nan, inf := math.NaN(), math.Inf(1)
	for _, c := range []struct {
		name string
		row  eb
		want string
	}{
		{"nan return", e("A", nan), "return"},
		{"inf return", e("A", -inf), "return"},
		{"inf cost", e("A", 1).cost(inf), "cost"},
		{"nan cost", e("A", 1).cost(nan), "cost"},
		{"fractional success", e("A", 1).succ(0.5), "success"},
		{"nan success", e("A", 1).succ(nan), "success"},
		{"two", e("A", 1).succ(2), "success"},
	} {
		_, err := Score(mkRun(e("A", 0), c.row), nil)
		if err == nil {
			t.Errorf("%s: accepted", c.name)
			continue
		}
		if !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "row 1") {
			t.Errorf("%s: error %q should name the field and row 1", c.name, err)
		}
	}
	// A NaN cost on a row that records no cost is not looked at.
	run := mkRun(e("A", 1))
	run.Episodes[0].Cost = nan
	run.Episodes[0].Success = nan
	if _, err := Score(run, nil); err != nil {
		t.Errorf("unrecorded fields were checked: %v", err)
	}
}
