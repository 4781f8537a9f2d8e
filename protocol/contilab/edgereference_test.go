package contilab

import (
	"encoding/json"
	"math"
	"os"
	"testing"
)

// TestEdgeReference scores the runs of testdata/edge_cases.json (written by
// testdata/edge_reference.py from PROTOCOLS 4 alone: the accuracy-matrix
// metrics with one, two and three tasks, zero accuracies, Class-IL, no joint
// or initial rows, a missing cell, subnormal and near-1e308 accuracies) and
// compares every metric; a null must be null with a reason (the reference
// does not word reasons), and with no stream rows the stream metrics are
// null.
func TestEdgeReference(t *testing.T) {
	data, err := os.ReadFile("testdata/edge_cases.json")
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		Cases []struct {
			Name     string                       `json:"name"`
			Rows     []map[string]json.RawMessage `json:"rows"`
			Expected map[string]any               `json:"expected"`
		} `json:"cases"`
	}
	if err := json.Unmarshal(data, &file); err != nil {
		t.Fatal(err)
	}
	if len(file.Cases) < 10 {
		t.Fatalf("only %d edge cases", len(file.Cases))
	}
	for _, c := range file.Cases {
		c := c
		t.Run(c.Name, func(t *testing.T) {
			rc := &refRunCase{Name: c.Name}
			rc.Input.Rows = c.Rows
			if raw, ok := c.Rows[0]["scenario"]; ok {
				var s string
				if err := json.Unmarshal(raw, &s); err != nil {
					t.Fatal(err)
				}
				rc.Input.Scenario = &s
			}
			res, err := Score(runFromRows(t, rc), &Params{WindowFraction: 0.1})
			if err != nil {
				t.Fatal(err)
			}
			num := func(key string) *float64 {
				if x, ok := c.Expected[key].(float64); ok {
					return &x
				}
				return nil
			}
			if w := num("n_tasks"); w == nil || !res.NTasks.OK || res.NTasks.V != *w {
				t.Errorf("n_tasks %v, reference %v", res.NTasks, w)
			}
			for _, m := range Metrics {
				if _, ok := c.Expected[m]; !ok {
					continue // the reference covers the matrix and stream metrics only
				}
				w := num(m)
				got, _ := res.Metric(m)
				switch {
				case w == nil && got.OK:
					t.Errorf("%s = %v, reference: null", m, got.V)
				case w == nil && got.Reason == "":
					t.Errorf("%s: null without a reason", m)
				case w != nil && !got.OK:
					t.Errorf("%s: absent (%s), reference %v", m, got.Reason, *w)
				case w != nil && (math.IsInf(got.V, 0) || math.IsNaN(got.V) || !agree(got.V, *w)):
					t.Errorf("%s = %.17g, reference %.17g", m, got.V, *w)
				}
			}
		})
	}
}
