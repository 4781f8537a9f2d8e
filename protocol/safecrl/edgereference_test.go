package safecrl

import (
	"encoding/json"
	"math"
	"os"
	"testing"
)

// TestEdgeReference scores the cases of testdata/edge_cases.json (written by
// testdata/edge_reference.py from PROTOCOLS 3 alone: one episode, windows of
// 1 and 50, zero, subnormal and overflowing normalisation ranges, returns
// near ±1e308, subnormal returns, -0, cost or success on one side of a
// revisit) run by run and compares every task and run value; a null must be
// null with a reason (the reference does not word reasons).
func TestEdgeReference(t *testing.T) {
	data, err := os.ReadFile("testdata/edge_cases.json")
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		Cases []struct {
			Name     string                       `json:"name"`
			Window   int                          `json:"window"`
			Rows     []map[string]json.RawMessage `json:"rows"`
			Expected struct {
				Tasks []map[string]json.RawMessage `json:"tasks"`
				Runs  []map[string]json.RawMessage `json:"runs"`
			} `json:"expected"`
		} `json:"cases"`
	}
	if err := json.Unmarshal(data, &file); err != nil {
		t.Fatal(err)
	}
	if len(file.Cases) < 15 {
		t.Fatalf("only %d edge cases", len(file.Cases))
	}
	id := func(obj map[string]json.RawMessage) string {
		var s string
		if err := json.Unmarshal(obj["run_id"], &s); err != nil {
			t.Fatal(err)
		}
		return s
	}
	for _, c := range file.Cases {
		c := c
		t.Run(c.Name, func(t *testing.T) {
			for _, wantRun := range c.Expected.Runs {
				rid := id(wantRun)
				rc := &refCase{Name: c.Name + "/" + rid}
				for _, r := range c.Rows {
					if id(r) == rid {
						rc.Input.Rows = append(rc.Input.Rows, r)
					}
				}
				res, err := Score(refRun(t, rc), &Params{WindowEpisodes: c.Window})
				if err != nil {
					t.Fatal(err)
				}
				var tasks []map[string]json.RawMessage
				for _, w := range c.Expected.Tasks {
					if id(w) == rid {
						tasks = append(tasks, w)
					}
				}
				if len(res.Tasks) != len(tasks) {
					t.Fatalf("%s: %d tasks, want %d", rid, len(res.Tasks), len(tasks))
				}
				for i, want := range tasks {
					got := &res.Tasks[i]
					cmpInt(t, rid+" "+got.Task+" n_visits", got.NVisits, want["n_visits"])
					cmpInt(t, rid+" "+got.Task+" n_episodes", got.NEpisodes, want["n_episodes"])
					for _, m := range TaskMetrics {
						v, _ := got.Metric(m)
						cmpEdge(t, rid+" "+got.Task+" "+m, v.OK, v.V, v.Reason, want[m])
					}
				}
				for _, m := range RunCounts {
					v, _ := res.RunMetric(m)
					cmpInt(t, rid+" "+m, int(v.V), wantRun[m])
				}
				for _, m := range TaskMetrics {
					v := res.SeedValue(m)
					cmpEdge(t, rid+" run "+m, v.OK, v.V, v.Reason, wantRun[m])
				}
			}
		})
	}
}

func cmpEdge(t *testing.T, what string, ok bool, v float64, reason string, want json.RawMessage) {
	t.Helper()
	if want == nil {
		t.Errorf("%s: the reference has no such key", what)
		return
	}
	if string(want) == "null" {
		if ok {
			t.Errorf("%s = %v, want null", what, v)
		} else if reason == "" {
			t.Errorf("%s: null without a reason", what)
		}
		return
	}
	var w float64
	if err := json.Unmarshal(want, &w); err != nil {
		t.Fatalf("%s: reference %s: %v", what, want, err)
	}
	if !ok {
		t.Errorf("%s absent (%s), want %v", what, reason, w)
	} else if math.IsInf(v, 0) || math.IsNaN(v) || !agree(v, w) {
		t.Errorf("%s = %v, want %v", what, v, w)
	}
}
