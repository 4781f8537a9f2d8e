package safecrl

import (
	"testing"

	"github.com/crlbatch/crlbatch/protocol"
)

// TestWorkedExample computes every metric of a small two-task run by hand,
// W = 2.
//
//	row task return cost success   visit
//	 0   A     1     1     0       A#0
//	 1   A     3     2     1       A#0
//	 2   A     5     3     1       A#0
//	 3   B    10     0     1       B#0
//	 4   B    12     1     -       B#0
//	 5   A     2     4     0       A#1
//	 6   A     4     -     1       A#1
//	 7   B     8     2     0       B#1
//	 8   A     6     5     0       A#2
//	 9   A     7     6     -       A#2
func TestWorkedExample(t *testing.T) {
	res := score(t, 2,
		e("A", 1).cost(1).succ(0),
		e("A", 3).cost(2).succ(1),
		e("A", 5).cost(3).succ(1),
		e("B", 10).cost(0).succ(1),
		e("B", 12).cost(1),
		e("A", 2).cost(4).succ(0),
		e("A", 4).succ(1),
		e("B", 8).cost(2).succ(0),
		e("A", 6).cost(5).succ(0),
		e("A", 7).cost(6),
	)
	if res.NTasks != 2 || res.NEpisodes != 10 || len(res.Visits) != 5 || res.WindowEpisodes != 2 {
		t.Fatalf("n_tasks %d n_episodes %d visits %d W %d", res.NTasks, res.NEpisodes, len(res.Visits), res.WindowEpisodes)
	}
	wantVisits := []Visit{
		{"A", 0, 0, 3}, {"B", 0, 3, 5}, {"A", 1, 5, 7}, {"B", 1, 7, 8}, {"A", 2, 8, 10},
	}
	for i, v := range wantVisits {
		if res.Visits[i] != v {
			t.Errorf("visit %d = %+v, want %+v", i, res.Visits[i], v)
		}
	}
	if res.Tasks[0].Task != "A" || res.Tasks[1].Task != "B" {
		t.Fatalf("task order %q, %q: want first appearance A, B", res.Tasks[0].Task, res.Tasks[1].Task)
	}

	a := task(t, res, "A")
	if a.NVisits != 3 || a.NEpisodes != 7 || a.NCostEpisodes != 6 || a.NCostVisits != 3 || a.NSuccessEpisodes != 6 {
		t.Errorf("A counts %+v", *a)
	}
	// A's returns, visits concatenated: [1 3 5 | 2 4 | 6 7]; the last 2 are
	// 6, 7 → (6+7)/2 = 6.5.
	wantV(t, "A final_task_reward", a.FinalTaskReward, 6.5)
	// Recorded costs 1+2+3 + 4 + 5+6 = 21 (row 6 has none). Every visit
	// records one, so total_cost = 21/3 = 7; per episode 21/6 = 3.5.
	wantV(t, "A total_cost", a.TotalCost, 7)
	wantV(t, "A mean_episode_cost", a.MeanEpisodeCost, 3.5)
	// Revisit 1: mean(last 2 of [1 3 5]) − mean(first 2 of [2 4]) = 4 − 3 = 1.
	// Revisit 2: mean(last 2 of [2 4]) − mean(first 2 of [6 7]) = 3 − 6.5 = −3.5.
	// forgetting = (1 + −3.5)/2 = −1.25.
	wantV(t, "A forgetting", a.Forgetting, -1.25)
	// initial = mean(first 2 of the first visit [1 3 5]) = 2; range
	// |6.5 − 2| = 4.5; normalized = −1.25/4.5.
	wantV(t, "A initial", a.InitialReward, 2)
	wantV(t, "A normalized_forgetting", a.NormalizedForgetting, -1.25/4.5)
	// Recorded successes in row order: [0 1 1 | 0 1 | 0] (row 9 has none). The
	// last 2 recorded are rows 6 and 8: (1+0)/2 = 0.5. (The last 2 episodes,
	// rows 8 and 9, would give 0/1 = 0: the window is taken after dropping
	// rows without success.)
	wantV(t, "A success_rate", a.SuccessRate, 0.5)
	// On success: revisit 1: mean(last 2 of [0 1 1]) − mean(first 2 of [0 1])
	// = 1 − 0.5 = 0.5; revisit 2: mean(last 2 of [0 1]) − mean([0]) = 0.5 − 0
	// = 0.5; forgetting_success = (0.5+0.5)/2 = 0.5.
	wantV(t, "A forgetting_success", a.ForgettingSuccess, 0.5)

	b := task(t, res, "B")
	if b.NVisits != 2 || b.NEpisodes != 3 || b.NCostEpisodes != 3 || b.NCostVisits != 2 || b.NSuccessEpisodes != 2 {
		t.Errorf("B counts %+v", *b)
	}
	// B's returns [10 12 | 8]: last 2 → (12+8)/2 = 10.
	wantV(t, "B final_task_reward", b.FinalTaskReward, 10)
	// Costs 0+1+2 = 3 over 2 visits → 1.5; over 3 episodes → 1.
	wantV(t, "B total_cost", b.TotalCost, 1.5)
	wantV(t, "B mean_episode_cost", b.MeanEpisodeCost, 1)
	// mean(last 2 of [10 12]) − mean(first 2 of [8]) = 11 − 8 = 3.
	wantV(t, "B forgetting", b.Forgetting, 3)
	// initial = (10+12)/2 = 11; |10 − 11| = 1; 3/1 = 3.
	wantV(t, "B normalized_forgetting", b.NormalizedForgetting, 3)
	// Recorded successes [1 | 0]: last 2 → 0.5; forgetting 1 − 0 = 1.
	wantV(t, "B success_rate", b.SuccessRate, 0.5)
	wantV(t, "B forgetting_success", b.ForgettingSuccess, 1)

	// Seed values: mean over the two tasks, A then B.
	wantV(t, "run final_task_reward", res.SeedValue("final_task_reward"), (6.5+10)/2.0)
	wantV(t, "run total_cost", res.SeedValue("total_cost"), (7+1.5)/2.0)
	wantV(t, "run mean_episode_cost", res.SeedValue("mean_episode_cost"), (3.5+1)/2.0)
	wantV(t, "run forgetting", res.SeedValue("forgetting"), (-1.25+3)/2.0)
	wantV(t, "run normalized_forgetting", res.SeedValue("normalized_forgetting"), (-1.25/4.5+3)/2)
	wantV(t, "run success_rate", res.SeedValue("success_rate"), (0.5+0.5)/2.0)
	wantV(t, "run forgetting_success", res.SeedValue("forgetting_success"), (0.5+1)/2.0)
	wantV(t, "run n_tasks", mustRunMetric(t, res, "n_tasks"), 2)
	wantV(t, "run n_episodes", mustRunMetric(t, res, "n_episodes"), 10)
	wantV(t, "A n_visits", mustMetric(t, a, "n_visits"), 3)
	wantV(t, "A n_episodes", mustMetric(t, a, "n_episodes"), 7)
}

func mustMetric(t *testing.T, tr *TaskResult, name string) (v protocol.Value) {
	t.Helper()
	v, ok := tr.Metric(name)
	if !ok {
		t.Fatalf("Metric(%q) unknown", name)
	}
	return v
}

func mustRunMetric(t *testing.T, r *RunResult, name string) (v protocol.Value) {
	t.Helper()
	v, ok := r.RunMetric(name)
	if !ok {
		t.Fatalf("RunMetric(%q) unknown", name)
	}
	return v
}

// TestDefaultWindow uses W = 20 (nil params): the first visit of A has 25
// episodes with returns 1..25, then B, then A again with 30 episodes of 0.
func TestDefaultWindow(t *testing.T) {
	var rows []eb
	for i := 1; i <= 25; i++ {
		rows = append(rows, e("A", float64(i)))
	}
	rows = append(rows, e("B", 7))
	rows = append(rows, rep(e("A", 0), 30)...)
	res, err := Score(mkRun(rows...), nil)
	if err != nil {
		t.Fatal(err)
	}
	checkAllValid(t, res)
	if res.WindowEpisodes != 20 {
		t.Fatalf("W = %d, want the default 20", res.WindowEpisodes)
	}
	a := task(t, res, "A")
	// Last 20 of A are all from the second visit: 0.
	wantV(t, "final", a.FinalTaskReward, 0)
	// mean(last 20 of 1..25) = mean(6..25) = (6+25)/2 = 15.5; minus
	// mean(first 20 zeros) = 0 → 15.5.
	wantV(t, "forgetting", a.Forgetting, 15.5)
	// initial = mean(1..20) = 10.5; |0 − 10.5| = 10.5; 15.5/10.5.
	wantV(t, "initial", a.InitialReward, 10.5)
	wantV(t, "normalized", a.NormalizedForgetting, 15.5/10.5)
}

// TestWindowSpansVisits: the last W episodes of a task are taken over its
// visits concatenated. A = [1 2 | 4], W = 2 → last 2 are 2 and 4 → 3.
func TestWindowSpansVisits(t *testing.T) {
	res := score(t, 2, e("A", 1), e("A", 2), e("B", 0), e("A", 4))
	wantV(t, "final", task(t, res, "A").FinalTaskReward, 3)
	// W = 3 takes all three: 7/3.
	res = score(t, 3, e("A", 1), e("A", 2), e("B", 0), e("A", 4))
	wantV(t, "final W=3", task(t, res, "A").FinalTaskReward, 7.0/3)
}

// TestSameTaskMerges: consecutive rows of the same task are one visit,
// however the writer split them; only an intervening task makes a revisit.
func TestSameTaskMerges(t *testing.T) {
	res := score(t, 1, e("A", 1), e("A", 2), e("A", 3), e("B", 0), e("A", 5))
	a := task(t, res, "A")
	if a.NVisits != 2 || a.NEpisodes != 4 {
		t.Fatalf("A: %d visits, %d episodes; want 2, 4", a.NVisits, a.NEpisodes)
	}
	// W = 1: last of [1 2 3] is 3; first of [5] is 5; 3 − 5 = −2.
	wantV(t, "forgetting", a.Forgetting, -2)
}

// TestVisitShorterThanW: W = 3, A = [1 2 3 4 | 10 | 6 8 7 9].
func TestVisitShorterThanW(t *testing.T) {
	res := score(t, 3,
		e("A", 1), e("A", 2), e("A", 3), e("A", 4),
		e("B", 0),
		e("A", 10),
		e("C", 0),
		e("A", 6), e("A", 8), e("A", 7), e("A", 9),
	)
	a := task(t, res, "A")
	// Revisit 1: mean(2 3 4) − mean(10) = 3 − 10 = −7 (the one-episode visit
	// gives all it has). Revisit 2: mean(10) − mean(6 8 7) = 10 − 7 = 3.
	// forgetting = (−7 + 3)/2 = −2.
	wantV(t, "forgetting", a.Forgetting, -2)
	// final = mean(last 3 of all: 8 7 9) = 8; initial = mean(1 2 3) = 2;
	// normalized = −2/|8 − 2| = −1/3.
	wantV(t, "final", a.FinalTaskReward, 8)
	wantV(t, "normalized", a.NormalizedForgetting, -2.0/6)
}

// TestWLongerThanData: W = 100 takes whatever exists.
// A = [1 2 3 | 5], B = [4].
func TestWLongerThanData(t *testing.T) {
	res := score(t, 100,
		e("A", 1).cost(1).succ(1), e("A", 2).cost(1).succ(0), e("A", 3).cost(1).succ(1),
		e("B", 4).cost(2).succ(1),
		e("A", 5).cost(3).succ(0),
	)
	a := task(t, res, "A")
	// final = (1+2+3+5)/4 = 2.75.
	wantV(t, "final", a.FinalTaskReward, 2.75)
	// forgetting = mean(1 2 3) − mean(5) = 2 − 5 = −3.
	wantV(t, "forgetting", a.Forgetting, -3)
	// initial = mean(1 2 3) = 2; normalized = −3/|2.75 − 2| = −4.
	wantV(t, "normalized", a.NormalizedForgetting, -4)
	// costs 1+1+1+3 = 6 over 2 visits = 3; over 4 episodes = 1.5.
	wantV(t, "total_cost", a.TotalCost, 3)
	wantV(t, "mean_episode_cost", a.MeanEpisodeCost, 1.5)
	// success [1 0 1 | 0]: rate 2/4 = 0.5; forgetting mean(1 0 1) − 0 = 2/3.
	wantV(t, "success_rate", a.SuccessRate, 0.5)
	wantV(t, "forgetting_success", a.ForgettingSuccess, 2.0/3)
	b := task(t, res, "B")
	wantV(t, "B final", b.FinalTaskReward, 4)
	wantNone(t, "B forgetting", b.Forgetting, ReasonNeverRevisited)
}

// TestCostWithVisitMissingCost: the divisor of total_cost counts only the
// visits that record a cost. A = c[1 2] | c[-] | c[3]:
// total_cost = (1+2+3)/2 = 3, not 6/3 = 2 (which would treat the middle
// visit as free); mean_episode_cost = 6/3 = 2.
func TestCostWithVisitMissingCost(t *testing.T) {
	res := score(t, 20,
		e("A", 0).cost(1), e("A", 0).cost(2),
		e("B", 0).cost(9),
		e("A", 0),
		e("B", 0).cost(9),
		e("A", 0).cost(3),
	)
	a := task(t, res, "A")
	if a.NVisits != 3 || a.NCostVisits != 2 || a.NCostEpisodes != 3 {
		t.Fatalf("A counts %+v", *a)
	}
	wantV(t, "total_cost", a.TotalCost, 3)
	wantV(t, "mean_episode_cost", a.MeanEpisodeCost, 2)
	// B: 9+9 over 2 visits = 9; over 2 episodes = 9.
	wantV(t, "B total_cost", task(t, res, "B").TotalCost, 9)
}

// TestSuccessOnSomeEpisodes: success recorded on a few rows only, W = 1.
// A: [s=1, s=0] | [-, -] | [s=1]; B: [s=1] | [s=0].
func TestSuccessOnSomeEpisodes(t *testing.T) {
	res := score(t, 1,
		e("A", 1).succ(1), e("A", 1).succ(0),
		e("B", 0).succ(1),
		e("A", 2), e("A", 2),
		e("B", 0).succ(0),
		e("A", 3).succ(1),
	)
	a := task(t, res, "A")
	// The last recorded success of A is row 6: 1.
	wantV(t, "A success_rate", a.SuccessRate, 1)
	// Both revisits of A have a side without success (the middle visit), so
	// no difference exists: absent, not bridged from visit 0 to visit 2.
	wantNone(t, "A forgetting_success", a.ForgettingSuccess, ReasonNoSuccessPair)
	// forgetting on returns still exists: (1 − 2) + (2 − 3) over 2 = −1.
	wantV(t, "A forgetting", a.Forgetting, -1)
	b := task(t, res, "B")
	// B: 1 − 0 = 1; rate = last recorded = 0.
	wantV(t, "B forgetting_success", b.ForgettingSuccess, 1)
	wantV(t, "B success_rate", b.SuccessRate, 0)
	// The run's seed value drops A's absent value: mean of B's alone = 1.
	wantV(t, "run forgetting_success", res.SeedValue("forgetting_success"), 1)

	// One pair of three with success on both sides: A = [s1] | [-] | [s0] | [s1]:
	// only revisit 3 counts: 0 − 1 = −1.
	res = score(t, 5,
		e("A", 0).succ(1), e("B", 0), e("A", 0), e("B", 0), e("A", 0).succ(0), e("B", 0), e("A", 0).succ(1),
	)
	wantV(t, "A forgetting_success (one pair)", task(t, res, "A").ForgettingSuccess, -1)
	wantNone(t, "B success_rate", task(t, res, "B").SuccessRate, ReasonNoSuccess)
}

// TestEpisodeNumbersIgnored: the writer's episode numbers never reorder
// rows.
func TestEpisodeNumbersIgnored(t *testing.T) {
	run := mkRun(e("A", 1), e("B", 2), e("A", 3))
	base, err := Score(run, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := range run.Episodes {
		run.Episodes[i].Episode = int64(100 - i)
	}
	run.Episodes[1].HasEpisode = false
	again, err := Score(run, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range TaskMetrics {
		for i := range base.Tasks {
			x, _ := base.Tasks[i].Metric(m)
			y, _ := again.Tasks[i].Metric(m)
			if x != y {
				t.Errorf("%s %s: %v then %v", base.Tasks[i].Task, m, x, y)
			}
		}
	}
}

func TestHigherIsBetter(t *testing.T) {
	for _, c := range []struct {
		name       string
		better, ok bool
	}{
		{"final_task_reward", true, true},
		{"success_rate", true, true},
		{"total_cost", false, true},
		{"mean_episode_cost", false, true},
		{"forgetting", false, true},
		{"normalized_forgetting", false, true},
		{"forgetting_success", false, true},
		{"n_visits", false, false},
		{"n_episodes", false, false},
		{"n_tasks", false, false},
		{"nonsense", false, false},
	} {
		better, ok := HigherIsBetter(c.name)
		if better != c.better || ok != c.ok {
			t.Errorf("HigherIsBetter(%q) = %v, %v; want %v, %v", c.name, better, ok, c.better, c.ok)
		}
	}
	for _, m := range TaskMetrics {
		if _, ok := HigherIsBetter(m); !ok {
			t.Errorf("metric %q has no direction", m)
		}
	}
}

func TestNames(t *testing.T) {
	var tr TaskResult
	for _, m := range append(append([]string{}, TaskMetrics...), TaskCounts...) {
		if _, ok := tr.Metric(m); !ok {
			t.Errorf("TaskResult.Metric(%q) unknown", m)
		}
	}
	var r RunResult
	for _, m := range RunCounts {
		if _, ok := r.RunMetric(m); !ok {
			t.Errorf("RunResult.RunMetric(%q) unknown", m)
		}
	}
	if _, ok := tr.Metric("regret"); ok {
		t.Error("Metric accepts an unknown name")
	}
	if _, ok := r.RunMetric("final_task_reward"); ok {
		t.Error("RunMetric accepts a per-task metric")
	}
	wantNone(t, "SeedValue(unknown)", r.SeedValue("regret"), ReasonUnknownMetric+": regret")
}
