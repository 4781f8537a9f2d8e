package skillshift

import (
	"fmt"
	"math"

	"github.com/crlbatch/crlbatch/protocol"
)

// Task is one per-task record.
type Task struct {
	UID       string
	Site      string
	Condition string
	Success   bool
	// Steps counts the actions the task took, failed tasks included.
	Steps float64
	// SkillCalls and SkillFailures are the recorded learned-skill
	// invocations and failed invocations; meaningful only when the matching
	// Has field is true (the record carried the field).
	SkillCalls       float64
	HasSkillCalls    bool
	SkillFailures    float64
	HasSkillFailures bool
}

// Run is one method's run: its key, its metadata and its tasks in record
// order.
type Run struct {
	Key   string
	Meta  map[string]string
	Tasks []Task
}

// cellAcc accumulates one cell in task order.
type cellAcc struct {
	tasks, successes int
	steps            float64
	carry            int     // tasks carrying skill_calls
	calls, failures  float64 // over those tasks
	failuresMissing  bool    // a task with calls > 0 lacks skill_failures
}

// Score computes the cells, the marginals and the identity checks of one
// run. It fails on a task that makes the protocol undefined (no site or
// condition; steps, skill_calls or skill_failures negative or not finite;
// skill_failures without skill_calls or above them), on a run without tasks,
// and on an identity check that fails (which the arithmetic rules out for a
// complete grid, so a failure is a bug).
func Score(run *Run) (*RunResult, error) {
	if len(run.Tasks) == 0 {
		return nil, fmt.Errorf("run %s: no task", run.Key)
	}
	res := &RunResult{Key: run.Key, NTasks: len(run.Tasks), Reasons: map[string]string{}}
	if run.Meta != nil {
		res.Meta = make(map[string]string, len(run.Meta))
		for k, v := range run.Meta {
			res.Meta[k] = v
		}
	}
	siteIdx := map[string]int{}
	condIdx := map[string]int{}
	for i := range run.Tasks {
		t := &run.Tasks[i]
		if err := checkTask(t); err != nil {
			return nil, fmt.Errorf("run %s: task %d (uid %q): %w", run.Key, i, t.UID, err)
		}
		if _, ok := siteIdx[t.Site]; !ok {
			siteIdx[t.Site] = len(res.Sites)
			res.Sites = append(res.Sites, t.Site)
		}
		if _, ok := condIdx[t.Condition]; !ok {
			condIdx[t.Condition] = len(res.Conditions)
			res.Conditions = append(res.Conditions, t.Condition)
		}
	}
	ns, nc := len(res.Sites), len(res.Conditions)
	acc := make([]cellAcc, ns*nc)
	anyCalls := false
	type dupKey struct{ uid, site, cond string }
	seen := map[dupKey]int{}
	var dupOrder []dupKey
	for i := range run.Tasks {
		t := &run.Tasks[i]
		a := &acc[siteIdx[t.Site]*nc+condIdx[t.Condition]]
		a.tasks++
		if t.Success {
			a.successes++
		}
		a.steps += t.Steps
		if t.HasSkillCalls {
			anyCalls = true
			a.carry++
			a.calls += t.SkillCalls
			if t.HasSkillFailures {
				a.failures += t.SkillFailures
			} else if t.SkillCalls > 0 {
				a.failuresMissing = true
			}
		}
		if t.UID != "" {
			k := dupKey{t.UID, t.Site, t.Condition}
			if seen[k] == 1 {
				dupOrder = append(dupOrder, k)
			}
			seen[k]++
		}
	}
	for _, k := range dupOrder {
		res.Notes = append(res.Notes, fmt.Sprintf("task %q appears %d times in cell %s/%s; each record is counted", k.uid, seen[k], k.site, k.cond))
	}

	res.Cells = make([]Cell, ns*nc)
	for s, site := range res.Sites {
		for c, cond := range res.Conditions {
			a := &acc[s*nc+c]
			cell := &res.Cells[s*nc+c]
			*cell = Cell{Site: site, Condition: cond, Tasks: a.tasks, Successes: a.successes}
			if a.tasks == 0 {
				res.MissingCells = append(res.MissingCells, CellKey{site, cond})
				none := protocol.None(ReasonNoTask)
				cell.SR, cell.AS, cell.ASC, cell.SFR, cell.Invocations = none, none, none, none, none
				continue
			}
			n := float64(a.tasks)
			cell.SR = protocol.Some(100 * float64(a.successes) / n)
			cell.AS = protocol.Finite(a.steps / n)
			switch {
			case !anyCalls:
				none := protocol.None(ReasonNoSkillCalls)
				cell.ASC, cell.SFR, cell.Invocations = none, none, none
			case a.carry == 0:
				none := protocol.None(ReasonCellNoSkillCalls)
				cell.ASC, cell.SFR, cell.Invocations = none, none, none
			default:
				cell.ASC = protocol.Finite(a.calls / float64(a.carry))
				cell.Invocations = protocol.Finite(a.calls)
				switch {
				case !cell.Invocations.OK:
					// Σ calls left float64: no ratio over it (100·Σf/+Inf
					// would be a false 0).
					cell.SFR = cell.Invocations
				case a.calls == 0:
					cell.SFR = protocol.None(ReasonNoInvocation)
				case a.failuresMissing:
					cell.SFR = protocol.None(ReasonFailuresMissing)
				default:
					cell.SFR = protocol.Finite(100 * a.failures / a.calls)
					cell.SFRUnstable = a.calls < MinStableInvocations
				}
			}
		}
	}
	for _, s := range ExpectedSites {
		for _, c := range ExpectedConditions {
			si, ok1 := siteIdx[s]
			ci, ok2 := condIdx[c]
			if !ok1 || !ok2 || acc[si*nc+ci].tasks == 0 {
				res.MissingExpected = append(res.MissingExpected, CellKey{s, c})
			}
		}
	}
	if len(res.MissingCells) > 0 {
		res.Notes = append(res.Notes, fmt.Sprintf("%d cell(s) of the grid have no task: %s", len(res.MissingCells), listCells(res.MissingCells)))
	}
	if len(res.MissingExpected) > 0 {
		res.Notes = append(res.Notes, fmt.Sprintf("%d cell(s) of the expected %d×%d grid have no task: %s",
			len(res.MissingExpected), len(ExpectedSites), len(ExpectedConditions), listCells(res.MissingExpected)))
	}

	for _, name := range Metrics {
		mr := marginals(res, name, anyCalls)
		if mr.Identity.Status == StatusFail {
			return nil, fmt.Errorf("run %s: %s identity check failed: %s", run.Key, name, mr.Identity.Summary())
		}
		res.Metrics = append(res.Metrics, mr)
	}
	return res, nil
}

func checkTask(t *Task) error {
	if t.Site == "" {
		return fmt.Errorf("no site")
	}
	if t.Condition == "" {
		return fmt.Errorf("no condition")
	}
	count := func(name string, x float64) error {
		if math.IsNaN(x) || math.IsInf(x, 0) || x < 0 {
			return fmt.Errorf("%s %v: want a finite number ≥ 0", name, x)
		}
		return nil
	}
	if err := count("steps", t.Steps); err != nil {
		return err
	}
	if t.HasSkillCalls {
		if err := count("skill_calls", t.SkillCalls); err != nil {
			return err
		}
	}
	if t.HasSkillFailures {
		if err := count("skill_failures", t.SkillFailures); err != nil {
			return err
		}
		if !t.HasSkillCalls {
			return fmt.Errorf("skill_failures %v without skill_calls", t.SkillFailures)
		}
		if t.SkillFailures > t.SkillCalls {
			return fmt.Errorf("skill_failures %v exceed skill_calls %v", t.SkillFailures, t.SkillCalls)
		}
	}
	return nil
}

func listCells(ks []CellKey) string {
	const show = 6
	s := ""
	for i, k := range ks {
		if i == show {
			return s + fmt.Sprintf(", … (%d more)", len(ks)-show)
		}
		if i > 0 {
			s += ", "
		}
		s += k.String()
	}
	return s
}

// marginals computes one metric's marginals, fills the run's reasons for
// that metric and runs its identity check.
func marginals(res *RunResult, name string, anyCalls bool) MetricResult {
	mr := MetricResult{Metric: name}
	isSFR := name == SFR
	invNone := protocol.None(ReasonSFROnly)

	if (name == ASC || name == SFR) && !anyCalls {
		mr.Reason = ReasonNoSkillCalls
		res.Reasons[name] = ReasonNoSkillCalls
		none := protocol.None(ReasonNoSkillCalls)
		inv := invNone
		if isSFR {
			inv = none
		}
		mk := func(scope Scope, key string) Marginal {
			return Marginal{Scope: scope, Key: key, Value: none, Invocations: inv}
		}
		for _, s := range res.Sites {
			mr.Websites = append(mr.Websites, mk(ScopeWebsite, s))
		}
		for _, s := range missingNames(ExpectedSites, res.Sites) {
			mr.Websites = append(mr.Websites, mk(ScopeWebsite, s))
		}
		for _, c := range res.Conditions {
			mr.Conditions = append(mr.Conditions, mk(ScopeCondition, c))
		}
		for _, c := range missingNames(ExpectedConditions, res.Conditions) {
			mr.Conditions = append(mr.Conditions, mk(ScopeCondition, c))
		}
		mr.Overall = mk(ScopeOverall, OverallKey)
		mr.Identity = skipped(ReasonNoSkillCalls)
		return mr
	}

	ns, nc := len(res.Sites), len(res.Conditions)
	var firstNull *Cell
	for i := range res.Cells {
		c := &res.Cells[i]
		v, _ := c.Metric(name)
		if !v.OK {
			res.Reasons[CellReasonKey(name, c.Key())] = v.Reason
			if firstNull == nil {
				firstNull = c
			}
		}
	}
	// average folds the cells idx (in that order) into one marginal.
	average := func(scope Scope, key string, idx func(k int) int, n int) Marginal {
		m := Marginal{Scope: scope, Key: key, Invocations: invNone}
		sum, inv := 0.0, 0.0
		firstReason := ""
		for k := 0; k < n; k++ {
			c := &res.Cells[idx(k)]
			v, _ := c.Metric(name)
			if !v.OK {
				if firstReason == "" {
					firstReason = v.Reason
				}
				continue
			}
			sum += v.V
			m.Cells++
			if isSFR {
				inv += c.Invocations.V
			}
		}
		if m.Cells == 0 {
			m.Value = protocol.None(ReasonNoCellValue + ": " + firstReason)
			if isSFR {
				m.Invocations = m.Value
			}
			res.Reasons[m.ReasonKey(name)] = m.Value.Reason
			return m
		}
		m.Value = protocol.Finite(sum / float64(m.Cells))
		if isSFR {
			m.Invocations = protocol.Finite(inv)
			m.Unstable = inv < MinStableInvocations
		}
		return m
	}
	absent := func(scope Scope, key, reason string) Marginal {
		m := Marginal{Scope: scope, Key: key, Value: protocol.None(reason), Invocations: invNone}
		if isSFR {
			m.Invocations = m.Value
		}
		res.Reasons[m.ReasonKey(name)] = reason
		return m
	}
	for s, site := range res.Sites {
		mr.Websites = append(mr.Websites, average(ScopeWebsite, site, func(k int) int { return s*nc + k }, nc))
	}
	for _, site := range missingNames(ExpectedSites, res.Sites) {
		mr.Websites = append(mr.Websites, absent(ScopeWebsite, site, ReasonNoSiteTask))
	}
	for c, cond := range res.Conditions {
		mr.Conditions = append(mr.Conditions, average(ScopeCondition, cond, func(k int) int { return k*nc + c }, ns))
	}
	for _, cond := range missingNames(ExpectedConditions, res.Conditions) {
		mr.Conditions = append(mr.Conditions, absent(ScopeCondition, cond, ReasonNoConditionTask))
	}
	mr.Overall = average(ScopeOverall, OverallKey, func(k int) int { return k }, ns*nc)

	switch {
	case len(res.MissingCells) > 0:
		mr.Identity = skipped("the grid is incomplete: no task in " + listCells(res.MissingCells))
	case firstNull != nil:
		v, _ := firstNull.Metric(name)
		mr.Identity = skipped(fmt.Sprintf("cell %s is absent (%s), so the marginals average different cells", firstNull.Key(), v.Reason))
	default:
		// Every cell is present, so every data marginal is: the means run
		// over the grid's sites and conditions in order.
		// A marginal can still be absent when its sum left float64.
		meanOf := func(ms []Marginal) protocol.Value {
			var sum float64
			for _, m := range ms {
				if !m.Value.OK {
					return protocol.None(m.Value.Reason)
				}
				sum += m.Value.V
			}
			return protocol.Finite(sum / float64(len(ms)))
		}
		means := [3]protocol.Value{meanOf(mr.Websites[:ns]), meanOf(mr.Conditions[:nc]), mr.Overall.Value}
		mr.Identity = compare(means, [3]string{means[0].Reason, means[1].Reason, means[2].Reason})
	}
	return mr
}

// missingNames returns the names of want that are not in have, in want's
// order.
func missingNames(want, have []string) []string {
	var out []string
	for _, w := range want {
		found := false
		for _, h := range have {
			if h == w {
				found = true
				break
			}
		}
		if !found {
			out = append(out, w)
		}
	}
	return out
}
