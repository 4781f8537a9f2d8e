package upperbound

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"
)

// TestCeilingEdgesAgainstReference: the ceiling of an interval
// (ForInterval) and of a label (LabelBounds.Finish) against
// testdata/ceiling_cases.json, computed exactly from PROTOCOLS 2.2 by
// testdata/ceiling_reference.py. Both are weighted means of the per step and
// the final step, so they are finite whenever the two are: a per step or
// final step at the largest float64 must give a number, not +Inf.
func TestCeilingEdgesAgainstReference(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "ceiling_cases.json"))
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		Cases []struct {
			Name          string  `json:"name"`
			Per           float64 `json:"per_step"`
			Final         float64 `json:"final_step"`
			RowsJSON      int     `json:"rows"`
			FinalRowsJSON int     `json:"final_rows"`
			Ceiling       float64 `json:"ceiling"`
		} `json:"cases"`
	}
	if err := json.Unmarshal(data, &file); err != nil {
		t.Fatal(err)
	}
	if len(file.Cases) < 50 {
		t.Fatalf("only %d cases", len(file.Cases))
	}
	close := func(want, got float64) bool {
		if math.IsInf(got, 0) || math.IsNaN(got) {
			return false
		}
		return math.Abs(want-got) <= math.Max(1e-12, 1e-9*math.Max(math.Abs(want), math.Abs(got)))
	}
	for _, c := range file.Cases {
		b := Bound{PerStep: c.Per, FinalStep: c.Final, Derivation: DerivationAnalytic}
		L, m := c.RowsJSON, c.FinalRowsJSON
		if m == 1 {
			if got := b.ForInterval(L, true); !close(c.Ceiling, got) {
				t.Errorf("%s: ForInterval(%d, true) = %v, want %v", c.Name, L, got, c.Ceiling)
			}
		}
		lb, err := NewLabelBounds(b, nil)
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		lb.AddCounts("k", L, m)
		lb.Finish()
		if got, _ := lb.Get("k"); !close(c.Ceiling, got) {
			t.Errorf("%s: bounds by configuration (L %d, m %d) = %v, want %v", c.Name, L, m, got, c.Ceiling)
		}
	}
}
