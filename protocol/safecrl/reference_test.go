package safecrl

import (
	"encoding/json"
	"math"
	"os"
	"testing"

	"github.com/crlbatch/crlbatch/protocol"
)

// The cases in testdata/reference_cases.json were computed by
// testdata/reference.py, a plain-Python implementation of PROTOCOLS 3 written
// from the specification text and the decisions recorded in doc.go, sharing
// no code with this package. Every value must agree to 1e-9 relative (1e-12
// absolute); every count, null and reason must be equal.

type refCase struct {
	Name  string `json:"name"`
	Input struct {
		Params struct {
			WindowEpisodes int `json:"window_episodes"`
		} `json:"params"`
		Rows []map[string]json.RawMessage `json:"rows"`
	} `json:"input"`
	Expected struct {
		Tasks []map[string]json.RawMessage `json:"tasks"`
		Run   map[string]json.RawMessage   `json:"run"`
	} `json:"expected"`
}

func TestIndependentReference(t *testing.T) {
	data, err := os.ReadFile("testdata/reference_cases.json")
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		Cases []refCase `json:"cases"`
	}
	if err := json.Unmarshal(data, &file); err != nil {
		t.Fatal(err)
	}
	if len(file.Cases) < 40 {
		t.Fatalf("only %d reference cases", len(file.Cases))
	}
	for i := range file.Cases {
		c := &file.Cases[i]
		t.Run(c.Name, func(t *testing.T) { checkRefCase(t, c) })
	}
}

// refRun turns the JSON rows into a Run the way a reader would: a key that is
// missing or null is not carried; success true/false becomes 1/0.
func refRun(t *testing.T, c *refCase) *Run {
	t.Helper()
	run := &Run{Key: c.Name}
	for i, raw := range c.Input.Rows {
		var e Episode
		has := func(key string) bool {
			v, ok := raw[key]
			return ok && string(v) != "null"
		}
		get := func(key string, dst any) {
			if err := json.Unmarshal(raw[key], dst); err != nil {
				t.Fatalf("row %d %s: %v", i, key, err)
			}
		}
		get("task", &e.Task)
		get("return", &e.Return)
		if e.HasEpisode = has("episode"); e.HasEpisode {
			get("episode", &e.Episode)
		}
		if e.HasCost = has("cost"); e.HasCost {
			get("cost", &e.Cost)
		}
		if e.HasSuccess = has("success"); e.HasSuccess {
			var b bool
			if err := json.Unmarshal(raw["success"], &b); err == nil {
				if b {
					e.Success = 1
				}
			} else {
				get("success", &e.Success)
			}
		}
		run.Episodes = append(run.Episodes, e)
	}
	return run
}

func checkRefCase(t *testing.T, c *refCase) {
	p := Params{WindowEpisodes: c.Input.Params.WindowEpisodes}
	res, err := Score(refRun(t, c), &p)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Tasks) != len(c.Expected.Tasks) {
		t.Fatalf("%d tasks, want %d", len(res.Tasks), len(c.Expected.Tasks))
	}
	for i, want := range c.Expected.Tasks {
		got := &res.Tasks[i]
		var name string
		if err := json.Unmarshal(want["task"], &name); err != nil || name != got.Task {
			t.Errorf("task %d is %q, want %s", i, got.Task, want["task"])
		}
		reasons := reasonsOf(t, want)
		cmpInt(t, got.Task+" n_visits", got.NVisits, want["n_visits"])
		cmpInt(t, got.Task+" n_episodes", got.NEpisodes, want["n_episodes"])
		for _, m := range TaskMetrics {
			v, _ := got.Metric(m)
			cmpValue(t, got.Task+" "+m, v, want[m], reasons[m])
		}
	}
	run := c.Expected.Run
	reasons := reasonsOf(t, run)
	for _, m := range RunCounts {
		v, _ := res.RunMetric(m)
		cmpInt(t, m, int(v.V), run[m])
	}
	for _, m := range TaskMetrics {
		cmpValue(t, "run "+m, res.SeedValue(m), run[m], reasons[m])
	}
}

func reasonsOf(t *testing.T, obj map[string]json.RawMessage) map[string]string {
	t.Helper()
	var r map[string]string
	if err := json.Unmarshal(obj["reasons"], &r); err != nil {
		t.Fatal(err)
	}
	return r
}

func cmpInt(t *testing.T, what string, got int, want json.RawMessage) {
	t.Helper()
	var w int
	if err := json.Unmarshal(want, &w); err != nil {
		t.Errorf("%s: reference %s: %v", what, want, err)
		return
	}
	if got != w {
		t.Errorf("%s = %d, want %d", what, got, w)
	}
}

func cmpValue(t *testing.T, what string, got protocol.Value, want json.RawMessage, reason string) {
	t.Helper()
	if err := got.Validate(); err != nil {
		t.Errorf("%s: %v", what, err)
	}
	if want == nil {
		t.Errorf("%s: the reference has no such key", what)
		return
	}
	if string(want) == "null" {
		if got.OK {
			t.Errorf("%s = %v, want null (%s)", what, got.V, reason)
		} else if got.Reason != reason {
			t.Errorf("%s: reason %q, want %q", what, got.Reason, reason)
		}
		return
	}
	var w float64
	if err := json.Unmarshal(want, &w); err != nil {
		t.Errorf("%s: reference %s: %v", what, want, err)
		return
	}
	if !got.OK {
		t.Errorf("%s absent (%s), want %v", what, got.Reason, w)
		return
	}
	if !agree(got.V, w) {
		t.Errorf("%s = %v, want %v (diff %g)", what, got.V, w, got.V-w)
	}
}

// agree is PROTOCOLS' agreement rule: within 1e-9 relative or 1e-12
// absolute.
func agree(a, b float64) bool {
	d := math.Abs(a - b)
	return d <= 1e-12 || d <= 1e-9*math.Max(math.Abs(a), math.Abs(b))
}
