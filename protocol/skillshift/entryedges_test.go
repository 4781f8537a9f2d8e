package skillshift

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// TestEntryEdgesAgainstReference checks the transcribed entries of
// testdata/edge_cases.json ("entries", computed by testdata/edge_reference.py
// from PROTOCOLS 5 alone): means one and two hundredths apart, ties of the
// half-up rounding, -0, subnormal numbers, the largest float64, and means
// whose sums leave float64 (not formed: the check runs on the means that
// can be formed, or is skipped). Status and every rounded mean must agree.
func TestEntryEdgesAgainstReference(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "edge_cases.json"))
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		Entries []struct {
			Name     string          `json:"name"`
			Entry    json.RawMessage `json:"entry"`
			Expected struct {
				Status  string    `json:"status"`
				Rounded [3]string `json:"rounded"`
			} `json:"expected"`
		} `json:"entries"`
	}
	if err := json.Unmarshal(data, &file); err != nil {
		t.Fatal(err)
	}
	if len(file.Entries) < 10 {
		t.Fatalf("only %d entries", len(file.Entries))
	}
	for _, c := range file.Entries {
		c := c
		t.Run(c.Name, func(t *testing.T) {
			var res *EntryResult
			func() {
				defer func() {
					if p := recover(); p != nil {
						t.Fatalf("CheckEntry panics: %v\n%s", p, c.Entry)
					}
				}()
				res, err = CheckEntry(c.Entry, "")
			}()
			if err != nil {
				t.Fatalf("%v\n%s", err, c.Entry)
			}
			if len(res.Checks) != 1 {
				t.Fatalf("%d checks", len(res.Checks))
			}
			id := res.Checks[0].Identity
			if string(id.Status) != c.Expected.Status {
				t.Errorf("status %s, want %s (%s)", id.Status, c.Expected.Status, res.Checks[0].Line())
			}
			got := [3]string{id.WebsitesRounded, id.ConditionsRounded, id.OverallRounded}
			if got != c.Expected.Rounded {
				t.Errorf("rounded means %q, want %q", got, c.Expected.Rounded)
			}
			if id.Status == StatusSkipped && id.Reason == "" {
				t.Errorf("skipped without a reason")
			}
			for i, v := range []struct{ ok bool }{{id.Websites.OK}, {id.Conditions.OK}, {id.Overall.OK}} {
				if v.ok != (c.Expected.Rounded[i] != "") {
					t.Errorf("mean %d present = %v, the reference %q", i, v.ok, c.Expected.Rounded[i])
				}
			}
		})
	}
}
