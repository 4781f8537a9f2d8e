package skillshift

import (
	"math"
	"testing"

	"github.com/crlbatch/crlbatch/protocol"
)

// task is a compact way to write a task in a test: calls < 0 means the
// record carries no skill_calls, fails < 0 no skill_failures.
func task(site, cond string, success bool, steps, calls, fails float64) Task {
	t := Task{UID: site + "." + cond, Site: site, Condition: cond, Success: success, Steps: steps}
	if calls >= 0 {
		t.SkillCalls, t.HasSkillCalls = calls, true
	}
	if fails >= 0 {
		t.SkillFailures, t.HasSkillFailures = fails, true
	}
	return t
}

func score(t testing.TB, tasks ...Task) *RunResult {
	t.Helper()
	res, err := Score(&Run{Key: "test", Tasks: tasks})
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range res.Reasons {
		if v == "" {
			t.Errorf("reason %s is empty", k)
		}
	}
	return res
}

func near(a, b float64) bool {
	d := math.Abs(a - b)
	return d <= 1e-12 || d <= 1e-9*math.Max(math.Abs(a), math.Abs(b))
}

func wantValue(t testing.TB, what string, got protocol.Value, want float64) {
	t.Helper()
	if !got.OK {
		t.Errorf("%s: absent (%s), want %.17g", what, got.Reason, want)
		return
	}
	if !near(got.V, want) {
		t.Errorf("%s = %.17g, want %.17g", what, got.V, want)
	}
}

func wantAbsent(t testing.TB, what string, got protocol.Value, reason string) {
	t.Helper()
	if got.OK {
		t.Errorf("%s = %.17g, want absent (%s)", what, got.V, reason)
		return
	}
	if got.Reason != reason {
		t.Errorf("%s: reason %q, want %q", what, got.Reason, reason)
	}
}

func marginal(t testing.TB, r *RunResult, metric string, scope Scope, key string) Marginal {
	t.Helper()
	mr := r.Metric(metric)
	if mr == nil {
		t.Fatalf("no metric %s", metric)
	}
	m, ok := mr.Marginal(scope, key)
	if !ok {
		t.Fatalf("%s has no %s marginal %q", metric, scope, key)
	}
	return m
}

func cell(t testing.TB, r *RunResult, site, cond string) *Cell {
	t.Helper()
	c := r.Cell(site, cond)
	if c == nil {
		t.Fatalf("no cell %s/%s", site, cond)
	}
	return c
}

// fullGrid returns one task per expected cell, built by f.
func fullGrid(f func(site, cond string, s, c int) []Task) []Task {
	var out []Task
	for s, site := range ExpectedSites {
		for c, cond := range ExpectedConditions {
			out = append(out, f(site, cond, s, c)...)
		}
	}
	return out
}

func marginalValue(x float64) protocol.Value { return protocol.Some(x) }
