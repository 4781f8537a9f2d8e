package skillshift

import (
	"math/rand/v2"
	"testing"
)

// randomRun draws a run on the expected grid (or part of it) with holes,
// fractional steps and every way of carrying skill counts.
func randomRun(rng *rand.Rand) []Task {
	mode := rng.IntN(4) // 0 none carry, 1 all carry, 2 some carry, 3 heavy calls
	var out []Task
	for _, s := range ExpectedSites {
		for _, c := range ExpectedConditions {
			if rng.IntN(12) == 0 {
				continue
			}
			for k := rng.IntN(6); k >= 0; k-- {
				steps := float64(rng.IntN(40)) / float64(1+rng.IntN(4))
				tk := task(s, c, rng.IntN(3) == 0, steps, -1, -1)
				if mode == 1 || mode == 3 || (mode == 2 && rng.IntN(2) == 0) {
					calls := float64(rng.IntN(3))
					if mode == 3 {
						calls = float64(rng.IntN(15))
					}
					tk.SkillCalls, tk.HasSkillCalls = calls, true
					tk.SkillFailures, tk.HasSkillFailures = float64(rng.IntN(int(calls)+1)), true
				}
				out = append(out, tk)
			}
		}
	}
	rng.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}

// TestInvariants: over random runs, every absent value carries a reason that
// the run's reasons map files under its key; the identity never fails on a
// complete grid; a marginal never lies outside its cells' range; and the
// run's own entry checks as the run did.
func TestInvariants(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	passes := 0
	for i := 0; i < 400; i++ {
		tasks := randomRun(rng)
		if len(tasks) == 0 {
			continue
		}
		r, err := Score(&Run{Key: "p", Tasks: tasks})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range r.Cells {
			for _, m := range Metrics {
				v, _ := c.Metric(m)
				if err := v.Validate(); err != nil {
					t.Fatalf("%s %s: %v", c.Key(), m, err)
				}
				if !v.OK && r.Reasons[m] == "" && r.Reasons[CellReasonKey(m, c.Key())] != v.Reason {
					t.Fatalf("%s %s: reason %q not filed", c.Key(), m, v.Reason)
				}
			}
		}
		for _, mr := range r.Metrics {
			lo, hi := 1e300, -1e300
			for _, c := range r.Cells {
				if v, _ := c.Metric(mr.Metric); v.OK {
					lo, hi = min(lo, v.V), max(hi, v.V)
				}
			}
			for _, m := range mr.Marginals() {
				if err := m.Value.Validate(); err != nil {
					t.Fatal(err)
				}
				if !m.Value.OK {
					if r.Reasons[mr.Metric] == "" && r.Reasons[m.ReasonKey(mr.Metric)] != m.Value.Reason {
						t.Fatalf("%s: reason %q not filed", m.ReasonKey(mr.Metric), m.Value.Reason)
					}
					continue
				}
				if m.Value.V < lo-1e-9 || m.Value.V > hi+1e-9 {
					t.Fatalf("%s = %v outside [%v, %v]", m.ReasonKey(mr.Metric), m.Value.V, lo, hi)
				}
			}
			if mr.Identity.Status == StatusPass {
				passes++
			}
		}
		e, err := r.Entry()
		if err != nil {
			t.Fatal(err)
		}
		res, err := CheckEntry(e.JSON(), "")
		if err != nil {
			t.Fatalf("%v\n%s", err, e.JSON())
		}
		for k, c := range res.Checks {
			if c.Identity.Status != r.Metrics[k].Identity.Status {
				t.Fatalf("%s: entry %s, run %s", c.Metric, c.Line(), r.Metrics[k].Identity.Summary())
			}
		}
	}
	if passes < 100 {
		t.Errorf("only %d identity checks ran", passes)
	}
}
