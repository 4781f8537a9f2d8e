package skillshift

import (
	"math"
	"strings"
	"testing"
)

// The hand-computed run: a 2 × 2 grid of gitlab, magento × src, tgt.
//
//	gitlab/src    ✓ 4 steps 2 calls 1 fail;  ✗ 10 steps 1 call 1 fail;  ✗ 7 steps 0 calls 0 fails
//	gitlab/tgt    ✓ 5 steps (no skill_calls); ✓ 6 steps 4 calls 0 fails
//	magento/src   ✗ 12 steps 0 calls 0 fails
//	magento/tgt   ✓ 3 steps 1 call 0 fails;  ✗ 9 steps 1 call 1 fail
func handRun(t *testing.T) *RunResult {
	return score(t,
		task("gitlab", "src", true, 4, 2, 1),
		task("gitlab", "tgt", true, 5, -1, -1),
		task("magento", "src", false, 12, 0, 0),
		task("gitlab", "src", false, 10, 1, 1),
		task("magento", "tgt", true, 3, 1, 0),
		task("gitlab", "tgt", true, 6, 4, 0),
		task("gitlab", "src", false, 7, 0, 0),
		task("magento", "tgt", false, 9, 1, 1),
	)
}

func TestHandCells(t *testing.T) {
	r := handRun(t)
	if strings.Join(r.Sites, ",") != "gitlab,magento" || strings.Join(r.Conditions, ",") != "src,tgt" {
		t.Fatalf("grid %v × %v", r.Sites, r.Conditions)
	}
	if !r.Complete() || r.NTasks != 8 || len(r.Cells) != 4 {
		t.Fatalf("complete %v, %d tasks, %d cells", r.Complete(), r.NTasks, len(r.Cells))
	}
	// gitlab/src: SR = 100·1/3; AS = (4+10+7)/3 = 7; ASC = (2+1+0)/3 = 1;
	// SFR = 100·(1+1+0)/(2+1+0) = 200/3; 3 invocations, unstable.
	c := cell(t, r, "gitlab", "src")
	wantValue(t, "gitlab/src SR", c.SR, 100.0/3)
	wantValue(t, "gitlab/src AS", c.AS, 7)
	wantValue(t, "gitlab/src ASC", c.ASC, 1)
	wantValue(t, "gitlab/src SFR", c.SFR, 200.0/3)
	wantValue(t, "gitlab/src invocations", c.Invocations, 3)
	if !c.SFRUnstable || c.Tasks != 3 || c.Successes != 1 {
		t.Errorf("gitlab/src: unstable %v, %d tasks, %d successes", c.SFRUnstable, c.Tasks, c.Successes)
	}
	// gitlab/tgt: SR = 100·2/2; AS = (5+6)/2 = 5.5 (every task); ASC = 4/1
	// (only the task carrying skill_calls); SFR = 100·0/4 = 0, a real zero.
	c = cell(t, r, "gitlab", "tgt")
	wantValue(t, "gitlab/tgt SR", c.SR, 100)
	wantValue(t, "gitlab/tgt AS", c.AS, 5.5)
	wantValue(t, "gitlab/tgt ASC", c.ASC, 4)
	wantValue(t, "gitlab/tgt SFR", c.SFR, 0)
	// magento/src: SR = 0/1 = 0; AS = 12; ASC = 0/1 = 0 (a real zero); SFR
	// divides by zero invocations: absent, never 0.
	c = cell(t, r, "magento", "src")
	wantValue(t, "magento/src SR", c.SR, 0)
	wantValue(t, "magento/src AS", c.AS, 12)
	wantValue(t, "magento/src ASC", c.ASC, 0)
	wantAbsent(t, "magento/src SFR", c.SFR, ReasonNoInvocation)
	wantValue(t, "magento/src invocations", c.Invocations, 0)
	if c.SFRUnstable {
		t.Error("an absent SFR is flagged unstable")
	}
	// magento/tgt: SR = 100·1/2 = 50; AS = (3+9)/2 = 6; ASC = 2/2 = 1;
	// SFR = 100·1/2 = 50.
	c = cell(t, r, "magento", "tgt")
	wantValue(t, "magento/tgt SR", c.SR, 50)
	wantValue(t, "magento/tgt AS", c.AS, 6)
	wantValue(t, "magento/tgt ASC", c.ASC, 1)
	wantValue(t, "magento/tgt SFR", c.SFR, 50)
	if got := r.Reasons["SFR.cells.magento.src"]; got != ReasonNoInvocation {
		t.Errorf("reason SFR.cells.magento.src = %q", got)
	}
}

func TestHandMarginals(t *testing.T) {
	r := handRun(t)
	type want struct {
		scope Scope
		key   string
		v     float64
	}
	cases := map[string][]want{
		// SR cells 100/3, 100 | 0, 50.
		SR: {
			{ScopeWebsite, "gitlab", (100.0/3 + 100) / 2}, // 66.67
			{ScopeWebsite, "magento", (0 + 50) / 2.0},     // 25
			{ScopeCondition, "src", (100.0/3 + 0) / 2},    // 16.67
			{ScopeCondition, "tgt", (100 + 50) / 2.0},     // 75
			{ScopeOverall, OverallKey, (100.0/3 + 100 + 0 + 50) / 4},
		},
		// AS cells 7, 5.5 | 12, 6. Macro O/A (7+5.5+12+6)/4 = 7.625; the
		// task-weighted mean would be 56/8 = 7.
		AS: {
			{ScopeWebsite, "gitlab", 6.25},
			{ScopeWebsite, "magento", 9},
			{ScopeCondition, "src", 9.5},
			{ScopeCondition, "tgt", 5.75},
			{ScopeOverall, OverallKey, 7.625},
		},
		// ASC cells 1, 4 | 0, 1.
		ASC: {
			{ScopeWebsite, "gitlab", 2.5},
			{ScopeWebsite, "magento", 0.5},
			{ScopeCondition, "src", 0.5},
			{ScopeCondition, "tgt", 2.5},
			{ScopeOverall, OverallKey, 1.5},
		},
		// SFR cells 200/3, 0 | --, 50: the absent cell is dropped.
		SFR: {
			{ScopeWebsite, "gitlab", (200.0/3 + 0) / 2},
			{ScopeWebsite, "magento", 50},
			{ScopeCondition, "src", 200.0 / 3},
			{ScopeCondition, "tgt", (0 + 50) / 2.0},
			{ScopeOverall, OverallKey, (200.0/3 + 0 + 50) / 3},
		},
	}
	for metric, ws := range cases {
		for _, w := range ws {
			wantValue(t, metric+" "+w.key, marginal(t, r, metric, w.scope, w.key).Value, w.v)
		}
	}
	// SFR invocation counts are the sums of the averaged cells': gitlab
	// 3+4 = 7, magento 2 (its src cell is absent), src 3, tgt 4+2 = 6,
	// overall 3+4+2 = 9; all under 30, so all unstable.
	for key, inv := range map[string]float64{"gitlab": 7, "magento": 2} {
		m := marginal(t, r, SFR, ScopeWebsite, key)
		wantValue(t, "SFR invocations "+key, m.Invocations, inv)
		if !m.Unstable {
			t.Errorf("SFR %s is not flagged unstable", key)
		}
	}
	for key, inv := range map[string]float64{"src": 3, "tgt": 6} {
		wantValue(t, "SFR invocations "+key, marginal(t, r, SFR, ScopeCondition, key).Invocations, inv)
	}
	wantValue(t, "SFR invocations overall", marginal(t, r, SFR, ScopeOverall, OverallKey).Invocations, 9)
	if m := marginal(t, r, SFR, ScopeCondition, "src"); m.Cells != 1 {
		t.Errorf("SFR src averages %d cells, want 1", m.Cells)
	}
	wantAbsent(t, "SR invocations", marginal(t, r, SR, ScopeOverall, OverallKey).Invocations, ReasonSFROnly)

	// The grid is complete, so SR, AS and ASC are checked; SFR has an absent
	// cell and is skipped.
	for _, m := range []string{SR, AS, ASC} {
		if id := r.Metric(m).Identity; id.Status != StatusPass {
			t.Errorf("%s identity %s", m, id.Summary())
		}
	}
	// SR: mean(websites) = (66.67+25)/2 = 45.83, mean(conditions) =
	// (16.67+75)/2 = 45.83, O/A 183.33/4 = 45.83.
	id := r.Metric(SR).Identity
	if id.WebsitesRounded != "45.83" || id.ConditionsRounded != "45.83" || id.OverallRounded != "45.83" {
		t.Errorf("SR identity %s", id.Summary())
	}
	if id := r.Metric(SFR).Identity; id.Status != StatusSkipped || !strings.Contains(id.Reason, "magento/src") {
		t.Errorf("SFR identity %s", id.Summary())
	}
	// Expected sites and conditions the run lacks are absent, not filled.
	wantAbsent(t, "SR wordpress", marginal(t, r, SR, ScopeWebsite, "wordpress").Value, ReasonNoSiteTask)
	wantAbsent(t, "SR src-exec", marginal(t, r, SR, ScopeCondition, "src-exec").Value, ReasonNoConditionTask)
	if r.Reasons["SR.websites.wordpress"] != ReasonNoSiteTask || r.Reasons["AS.conditions.tgt-exec"] != ReasonNoConditionTask {
		t.Errorf("reasons %v", r.Reasons)
	}
	if len(r.MissingExpected) != 18-4 || len(r.MissingCells) != 0 {
		t.Errorf("missing expected %v, missing %v", r.MissingExpected, r.MissingCells)
	}
	if mr := r.Metric(SR); len(mr.Websites) != 3 || len(mr.Conditions) != 6 {
		t.Errorf("SR has %d website and %d condition marginals, want 3 and 6", len(mr.Websites), len(mr.Conditions))
	}
}

// Issue 5: task-weighting instead of macro-averaging gives another overall
// value.
func TestTaskWeightingDiffersFromMacro(t *testing.T) {
	// Seed 002: GitLab 162 tasks, Magento 114, WordPress 79; AWM SR site
	// marginals 17.71, 25.49, 62.66; O/A 35.29. Weighting the sites by
	// task count: (17.71·162 + 25.49·114 + 62.66·79)/355
	// = (2869.02 + 2905.86 + 4950.14)/355 = 10725.02/355 = 30.21…, not 35.29.
	sites := []float64{17.71, 25.49, 62.66}
	counts := []float64{162, 114, 79}
	macro := (sites[0] + sites[1] + sites[2]) / 3
	weighted := (sites[0]*counts[0] + sites[1]*counts[1] + sites[2]*counts[2]) / (counts[0] + counts[1] + counts[2])
	if Round2(macro) != "35.29" || Round2(weighted) != "30.21" {
		t.Errorf("macro %s, task-weighted %s; want 35.29 and 30.21", Round2(macro), Round2(weighted))
	}

	// The same on scored tasks with unequal counts per cell: every gitlab
	// cell has 4 tasks and 1 success (SR 25), every magento cell 2 tasks and
	// 1 success (50), every wordpress cell 1 task and 1 success (100).
	// Macro O/A = (6·25 + 6·50 + 6·100)/18 = 58.33; task-weighted =
	// 100·(6+6+6)/(24+12+6) = 1800/42 = 42.86.
	tasks := fullGrid(func(site, cond string, s, _ int) []Task {
		n := []int{4, 2, 1}[s]
		var out []Task
		for k := 0; k < n; k++ {
			out = append(out, task(site, cond, k == 0, 1, -1, -1))
		}
		return out
	})
	r := score(t, tasks...)
	o := marginal(t, r, SR, ScopeOverall, OverallKey).Value
	wantValue(t, "macro O/A", o, 175.0/3)
	succ, n := 0, 0
	for _, c := range r.Cells {
		succ += c.Successes
		n += c.Tasks
	}
	tw := 100 * float64(succ) / float64(n)
	if !near(tw, 1800.0/42) || Round2(tw) == Round2(o.V) {
		t.Errorf("task-weighted %v vs macro %v", tw, o.V)
	}
	wantValue(t, "SR gitlab", marginal(t, r, SR, ScopeWebsite, "gitlab").Value, 25)
	wantValue(t, "SR src", marginal(t, r, SR, ScopeCondition, "src").Value, 175.0/3)
	if id := r.Metric(SR).Identity; id.Status != StatusPass || id.OverallRounded != "58.33" {
		t.Errorf("identity %s", id.Summary())
	}
	if len(r.MissingExpected) != 0 || !r.Complete() {
		t.Errorf("missing %v %v", r.MissingExpected, r.MissingCells)
	}
}

func TestNoSkillCalls(t *testing.T) {
	// AWM-like: no task carries skill_calls. ASC and SFR do not apply: absent
	// for the whole method, keyed by the metric, never 0.
	r := score(t,
		task("gitlab", "src", true, 4, -1, -1),
		task("magento", "src", false, 7, -1, -1),
	)
	for _, m := range []string{ASC, SFR} {
		mr := r.Metric(m)
		if mr.Reason != ReasonNoSkillCalls || r.Reasons[m] != ReasonNoSkillCalls {
			t.Errorf("%s reason %q / %q", m, mr.Reason, r.Reasons[m])
		}
		for _, x := range mr.Marginals() {
			wantAbsent(t, m+" "+x.Key, x.Value, ReasonNoSkillCalls)
		}
		if id := mr.Identity; id.Status != StatusSkipped || id.Reason != ReasonNoSkillCalls {
			t.Errorf("%s identity %s", m, id.Summary())
		}
	}
	wantAbsent(t, "SFR invocations", marginal(t, r, SFR, ScopeOverall, OverallKey).Invocations, ReasonNoSkillCalls)
	for _, c := range r.Cells {
		wantAbsent(t, "cell ASC", c.ASC, ReasonNoSkillCalls)
		wantAbsent(t, "cell invocations", c.Invocations, ReasonNoSkillCalls)
	}
	// SR and AS are unaffected: SR (100+0)/2 = 50, AS (4+7)/2 = 5.5.
	wantValue(t, "SR", marginal(t, r, SR, ScopeOverall, OverallKey).Value, 50)
	wantValue(t, "AS", marginal(t, r, AS, ScopeOverall, OverallKey).Value, 5.5)
	for k := range r.Reasons {
		if strings.HasPrefix(k, "ASC.") || strings.HasPrefix(k, "SFR.") {
			t.Errorf("reason %s beside the metric-level one", k)
		}
	}
}

func TestZeroCalls(t *testing.T) {
	// Every task carries skill_calls = 0: ASC is a real 0; SFR has no
	// denominator anywhere, so every SFR number is absent.
	r := score(t,
		task("gitlab", "src", true, 4, 0, 0),
		task("gitlab", "tgt", false, 5, 0, -1), // no failures field: 0 calls imply 0 failures
	)
	wantValue(t, "ASC", marginal(t, r, ASC, ScopeOverall, OverallKey).Value, 0)
	for _, c := range r.Cells {
		wantAbsent(t, "cell SFR", c.SFR, ReasonNoInvocation)
		wantValue(t, "cell invocations", c.Invocations, 0)
	}
	o := marginal(t, r, SFR, ScopeOverall, OverallKey)
	wantAbsent(t, "SFR O/A", o.Value, ReasonNoCellValue+": "+ReasonNoInvocation)
	wantAbsent(t, "SFR O/A invocations", o.Invocations, ReasonNoCellValue+": "+ReasonNoInvocation)
	for _, k := range []string{"SFR.overall", "SFR.websites.gitlab", "SFR.conditions.src", "SFR.cells.gitlab.src", "SFR.cells.gitlab.tgt"} {
		if r.Reasons[k] == "" {
			t.Errorf("no reason %s", k)
		}
	}
	if r.Metric(SFR).Reason != "" {
		t.Error("SFR is absent as a whole although tasks carry skill_calls")
	}
}

func TestMissingCell(t *testing.T) {
	// The full grid minus wordpress/tgt-exec; every other cell has one
	// successful task except gitlab cells, which fail. The hole is reported
	// and the marginals average the cells that exist: wordpress over its 5
	// cells, tgt-exec over its 2.
	tasks := fullGrid(func(site, cond string, _, _ int) []Task {
		if site == "wordpress" && cond == "tgt-exec" {
			return nil
		}
		return []Task{task(site, cond, site != "gitlab", 3, 1, 0)}
	})
	r := score(t, tasks...)
	if r.Complete() || len(r.MissingCells) != 1 || r.MissingCells[0] != (CellKey{"wordpress", "tgt-exec"}) {
		t.Fatalf("missing %v", r.MissingCells)
	}
	if len(r.MissingExpected) != 1 || len(r.Cells) != 18 {
		t.Fatalf("missing expected %v, %d cells", r.MissingExpected, len(r.Cells))
	}
	c := cell(t, r, "wordpress", "tgt-exec")
	if c.Tasks != 0 {
		t.Errorf("hole has %d tasks", c.Tasks)
	}
	for _, m := range Metrics {
		v, _ := c.Metric(m)
		wantAbsent(t, "hole "+m, v, ReasonNoTask)
		if r.Reasons[CellReasonKey(m, c.Key())] != ReasonNoTask {
			t.Errorf("no reason for the hole's %s", m)
		}
		if id := r.Metric(m).Identity; id.Status != StatusSkipped || !strings.Contains(id.Reason, "incomplete") {
			t.Errorf("%s identity %s", m, id.Summary())
		}
	}
	wantAbsent(t, "hole invocations", c.Invocations, ReasonNoTask)
	// SR: wordpress (5 cells of 100)/5 = 100; tgt-exec (0 + 100)/2 = 50;
	// O/A (6·0 + 6·100 + 5·100)/17 = 1100/17.
	wantValue(t, "SR wordpress", marginal(t, r, SR, ScopeWebsite, "wordpress").Value, 100)
	if m := marginal(t, r, SR, ScopeWebsite, "wordpress"); m.Cells != 5 {
		t.Errorf("wordpress averages %d cells", m.Cells)
	}
	wantValue(t, "SR tgt-exec", marginal(t, r, SR, ScopeCondition, "tgt-exec").Value, 50)
	wantValue(t, "SR O/A", marginal(t, r, SR, ScopeOverall, OverallKey).Value, 1100.0/17)
	if len(r.Notes) == 0 {
		t.Error("no note names the hole")
	}
}

func TestOneTask(t *testing.T) {
	// One failed task with one failed skill call: every number is defined
	// (SR 0, AS 10, ASC 1, SFR 100) and SFR rests on 1 invocation: unstable.
	r := score(t, task("gitlab", "tgt-exec", false, 10, 1, 1))
	for m, want := range map[string]float64{SR: 0, AS: 10, ASC: 1, SFR: 100} {
		mr := r.Metric(m)
		for _, x := range []Marginal{mr.Websites[0], mr.Conditions[0], mr.Overall} {
			wantValue(t, m+" "+x.Key, x.Value, want)
		}
		if mr.Identity.Status != StatusPass {
			t.Errorf("%s identity %s", m, mr.Identity.Summary())
		}
	}
	if !r.Cells[0].SFRUnstable || !r.Metric(SFR).Overall.Unstable {
		t.Error("SFR on one invocation is not flagged")
	}
	if len(r.MissingExpected) != 17 || !r.Complete() {
		t.Errorf("missing expected %d, complete %v", len(r.MissingExpected), r.Complete())
	}
}

func TestStableAtThirty(t *testing.T) {
	// 29 invocations are unstable, 30 are not (the threshold is "fewer
	// than 30").
	for _, calls := range []float64{29, 30} {
		r := score(t, task("gitlab", "src", true, 1, calls, 3))
		c := r.Cells[0]
		wantValue(t, "SFR", c.SFR, 100*3/calls)
		if c.SFRUnstable != (calls < 30) || r.Metric(SFR).Overall.Unstable != (calls < 30) {
			t.Errorf("%v invocations: unstable %v", calls, c.SFRUnstable)
		}
	}
}

func TestCellWithoutSkillCalls(t *testing.T) {
	// The run records skill_calls, but not in gitlab/tgt: that cell's ASC
	// and SFR are absent; the method's are not.
	r := score(t,
		task("gitlab", "src", true, 1, 2, 1),
		task("gitlab", "tgt", true, 1, -1, -1),
	)
	c := cell(t, r, "gitlab", "tgt")
	wantAbsent(t, "ASC", c.ASC, ReasonCellNoSkillCalls)
	wantAbsent(t, "SFR", c.SFR, ReasonCellNoSkillCalls)
	wantAbsent(t, "invocations", c.Invocations, ReasonCellNoSkillCalls)
	// ASC O/A = 2 (the one present cell); SFR O/A = 50.
	wantValue(t, "ASC O/A", marginal(t, r, ASC, ScopeOverall, OverallKey).Value, 2)
	wantValue(t, "SFR O/A", marginal(t, r, SFR, ScopeOverall, OverallKey).Value, 50)
	if r.Reasons["ASC.cells.gitlab.tgt"] != ReasonCellNoSkillCalls || r.Reasons["ASC.conditions.tgt"] == "" {
		t.Errorf("reasons %v", r.Reasons)
	}
}

func TestFailuresMissing(t *testing.T) {
	// A task with 2 calls but no skill_failures: its cell's failure count is
	// unknown, so SFR is absent there (ASC still counts its calls).
	r := score(t,
		task("gitlab", "src", true, 1, 2, -1),
		task("gitlab", "src", true, 1, 1, 1),
	)
	c := r.Cells[0]
	wantAbsent(t, "SFR", c.SFR, ReasonFailuresMissing)
	wantValue(t, "ASC", c.ASC, 1.5)
	wantValue(t, "invocations", c.Invocations, 3)
}

func TestGridOrderIsFirstAppearance(t *testing.T) {
	r := score(t,
		task("wordpress", "tgt", true, 1, -1, -1),
		task("gitlab", "src", true, 1, -1, -1),
		task("wordpress", "src", true, 1, -1, -1),
		task("gitlab", "tgt", true, 1, -1, -1),
		task("reddit", "mixed", true, 1, -1, -1),
	)
	if got := strings.Join(r.Sites, ","); got != "wordpress,gitlab,reddit" {
		t.Errorf("sites %s", got)
	}
	if got := strings.Join(r.Conditions, ","); got != "tgt,src,mixed" {
		t.Errorf("conditions %s", got)
	}
	var keys []string
	for _, c := range r.Cells {
		keys = append(keys, c.Key().String())
	}
	want := "wordpress/tgt,wordpress/src,wordpress/mixed,gitlab/tgt,gitlab/src,gitlab/mixed,reddit/tgt,reddit/src,reddit/mixed"
	if strings.Join(keys, ",") != want {
		t.Errorf("cells %s", strings.Join(keys, ","))
	}
	// The run's sites first, then the expected site it lacks.
	var ws []string
	for _, m := range r.Metric(SR).Websites {
		ws = append(ws, m.Key)
	}
	if strings.Join(ws, ",") != "wordpress,gitlab,reddit,magento" {
		t.Errorf("website marginals %v", ws)
	}
}

func TestDuplicateTaskIsNoted(t *testing.T) {
	r := score(t, task("gitlab", "src", true, 1, -1, -1), task("gitlab", "src", false, 1, -1, -1))
	found := false
	for _, n := range r.Notes {
		found = found || strings.Contains(n, "appears 2 times")
	}
	if !found || r.Cells[0].Tasks != 2 {
		t.Errorf("notes %q", r.Notes)
	}
}

func TestScoreErrors(t *testing.T) {
	bad := []struct {
		name string
		t    Task
		want string
	}{
		{"no site", task("", "src", true, 1, -1, -1), "no site"},
		{"no condition", task("gitlab", "", true, 1, -1, -1), "no condition"},
		{"negative steps", task("gitlab", "src", true, -1, -1, -1), "steps"},
		{"NaN steps", task("gitlab", "src", true, math.NaN(), -1, -1), "steps"},
		{"infinite calls", task("gitlab", "src", true, 1, math.Inf(1), -1), "skill_calls"},
		{"failures above calls", task("gitlab", "src", true, 1, 1, 2), "exceed"},
		{"failures without calls", Task{Site: "gitlab", Condition: "src", SkillFailures: 1, HasSkillFailures: true}, "without skill_calls"},
	}
	for _, b := range bad {
		_, err := Score(&Run{Key: "k", Tasks: []Task{b.t}})
		if err == nil || !strings.Contains(err.Error(), b.want) || !strings.Contains(err.Error(), "run k: task 0") {
			t.Errorf("%s: error %v", b.name, err)
		}
	}
	if _, err := Score(&Run{Key: "k"}); err == nil {
		t.Error("a run without tasks scored")
	}
}

func TestHigherIsBetter(t *testing.T) {
	for m, want := range map[string][2]bool{SR: {true, true}, AS: {false, true}, ASC: {false, false}, SFR: {false, true}, "x": {false, false}} {
		b, ok := HigherIsBetter(m)
		if b != want[0] || ok != want[1] {
			t.Errorf("HigherIsBetter(%s) = %v, %v", m, b, ok)
		}
	}
}

func TestSeedValueIsOverall(t *testing.T) {
	r := handRun(t)
	wantValue(t, "seed value", r.SeedValue(AS), 7.625)
	if v := r.SeedValue("nope"); v.OK || v.Reason == "" {
		t.Errorf("unknown metric %v", v)
	}
}
