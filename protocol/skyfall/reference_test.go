package skyfall

import (
	"encoding/json"
	"fmt"
	"os"
	"testing"

	"github.com/crlbatch/crlbatch/protocol"
)

// The cases in testdata/reference_cases.json were computed by
// testdata/reference.py, a Python implementation of PROTOCOLS 1.3–1.5 written
// from the specification alone, without reading this package. Every value
// must agree to 1e-9 relative (1e-12 absolute) and every null must be null.

type refCase struct {
	Name  string `json:"name"`
	Input struct {
		Rows   []map[string]json.RawMessage `json:"rows"`
		Params struct {
			Anchor          string          `json:"anchor"`
			Window          string          `json:"window"`
			Alpha           *float64        `json:"alpha"`
			Epsilon         *float64        `json:"epsilon"`
			EpsilonFraction float64         `json:"epsilon_fraction"`
			EpsilonAbsFloor float64         `json:"epsilon_abs_floor"`
			TailFraction    float64         `json:"tail_fraction"`
			ZeroShotWindow  int             `json:"zero_shot_window"`
			Gamma           *float64        `json:"gamma"`
			Ceiling         json.RawMessage `json:"ceiling"`
			EpisodeEnd      []string        `json:"episode_end_components"`
			Solve           *string         `json:"solve_component"`
		} `json:"params"`
		Reference []float64 `json:"reference"`
	} `json:"input"`
	Expected struct {
		Labels    []map[string]json.RawMessage `json:"labels"`
		Intervals []map[string]json.RawMessage `json:"intervals"`
		Run       map[string]json.RawMessage   `json:"run"`
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
	if len(file.Cases) < 50 {
		t.Fatalf("only %d reference cases", len(file.Cases))
	}
	for _, c := range file.Cases {
		t.Run(c.Name, func(t *testing.T) { checkRefCase(t, &c) })
	}
}

func checkRefCase(t *testing.T, c *refCase) {
	ip := c.Input.Params
	comps := append([]string{}, ip.EpisodeEnd...)
	if ip.Solve != nil {
		comps = append(comps, *ip.Solve)
	}
	b := NewBuilder(c.Name, comps)
	for i, raw := range c.Input.Rows {
		var r Row
		r.Invalid = -1
		must := func(key string, dst any) bool {
			v, ok := raw[key]
			if !ok || string(v) == "null" {
				return false
			}
			if err := json.Unmarshal(v, dst); err != nil {
				t.Fatalf("row %d %s: %v", i, key, err)
			}
			return true
		}
		must("reward", &r.Reward)
		must("regime_id", &r.Label)
		r.HasOrigin = must("regime_origin", &r.Origin)
		r.HasAliasOf = must("alias_of", &r.AliasOf)
		var inv bool
		if must("invalid_action", &inv) {
			r.Invalid = 0
			if inv {
				r.Invalid = 1
			}
		}
		r.HasEffRank = must("effective_rank", &r.EffRank)
		r.HasGamma = must("gamma", &r.Gamma)
		var cm map[string]float64
		must("components", &cm)
		r.Comps = make([]float64, len(comps))
		for j, name := range comps {
			r.Comps[j] = cm[name]
		}
		b.Add(&r)
	}
	tr := b.Trace(nil)

	p := DefaultParams()
	p.Anchor, p.Window = Anchor(ip.Anchor), Window(ip.Window)
	p.Alpha, p.Epsilon, p.Gamma = ip.Alpha, ip.Epsilon, ip.Gamma
	p.EpsilonFraction, p.EpsilonAbsFloor = ip.EpsilonFraction, ip.EpsilonAbsFloor
	p.TailFraction, p.ZeroShotWindow = ip.TailFraction, ip.ZeroShotWindow
	p.EpisodeEnd = ip.EpisodeEnd
	if ip.Solve != nil {
		p.SolveComponent = *ip.Solve
	}
	if len(ip.Ceiling) > 0 && string(ip.Ceiling) != "null" {
		var x float64
		if err := json.Unmarshal(ip.Ceiling, &x); err == nil {
			p.Ceiling = ScalarCeiling(x, "explicit")
		} else {
			var m map[string]float64
			if err := json.Unmarshal(ip.Ceiling, &m); err != nil {
				t.Fatal(err)
			}
			p.Ceiling = MapCeiling(m, "explicit")
		}
	}
	var ref *Reference
	if c.Input.Reference != nil {
		ref = &Reference{Rewards: c.Input.Reference}
	}
	res, err := Score(tr, &p, ref)
	if err != nil {
		t.Fatal(err)
	}

	if len(res.Labels) != len(c.Expected.Labels) {
		t.Fatalf("%d labels, want %d", len(res.Labels), len(c.Expected.Labels))
	}
	for i, want := range c.Expected.Labels {
		got := &res.Labels[i]
		cmpString(t, "label", got.Label, want["label"])
		cmpString(t, got.Label+" origin", got.Origin, want["origin"])
		cmpInt(t, got.Label+" n_steps", got.NSteps, want["n_steps"])
		cmpInt(t, got.Label+" n_intervals", got.NIntervals, want["n_intervals"])
		for _, m := range LabelMetrics {
			v, _ := got.Metric(m)
			cmpValue(t, got.Label+" "+m, v, want[m])
		}
		cmpValue(t, got.Label+" upper_bound", got.UpperBound, want["upper_bound"])
		var per []json.RawMessage
		if err := json.Unmarshal(want["stability_variance_per_interval"], &per); err != nil {
			t.Fatal(err)
		}
		if len(per) != len(got.StabilityVariancePerInterval) {
			t.Errorf("%s: %d per-interval variances, want %d", got.Label, len(got.StabilityVariancePerInterval), len(per))
		} else {
			for j := range per {
				cmpValue(t, fmt.Sprintf("%s variance[%d]", got.Label, j), got.StabilityVariancePerInterval[j], per[j])
			}
		}
	}
	if len(res.Intervals) != len(c.Expected.Intervals) {
		t.Fatalf("%d intervals, want %d", len(res.Intervals), len(c.Expected.Intervals))
	}
	for i, want := range c.Expected.Intervals {
		got := &res.Intervals[i]
		w := fmt.Sprintf("interval %d", i)
		cmpString(t, w+" label", got.Label, want["label"])
		cmpInt(t, w+" index", got.Index, want["index"])
		cmpInt(t, w+" encounter", got.Encounter, want["encounter_index"])
		cmpInt(t, w+" start", got.StartRow, want["start_row"])
		cmpInt(t, w+" end", got.EndRow, want["end_row"])
		cmpInt(t, w+" n_steps", got.NSteps, want["n_steps"])
		cmpValue(t, w+" mean", got.Mean, want["mean"])
		cmpValue(t, w+" variance", got.Variance, want["variance"])
		cmpValue(t, w+" adaptation", got.AdaptationSpeed, want["adaptation_speed"])
		cmpValue(t, w+" recovery", got.RecoveryTime, want["recovery_time"])
		cmpValue(t, w+" zero-shot", got.ZeroShotReward, want["zero_shot_reward"])
		cmpValue(t, w+" tail", got.TailMean, want["tail_mean"])
	}
	run := c.Expected.Run
	for _, m := range append(append([]string{}, RunMetrics...), CountMetrics...) {
		v, _ := res.RunMetric(m)
		cmpValue(t, m, v, run[m])
	}
	cmpValue(t, "gamma", protocol.Some(res.Gamma), run["gamma_used"])
	var mismatch bool
	_ = json.Unmarshal(run["reference_length_mismatch"], &mismatch)
	if mismatch != (len(res.Notes) > 0) {
		t.Errorf("reference length mismatch %v, notes %q", mismatch, res.Notes)
	}
}

func cmpValue(t *testing.T, what string, got protocol.Value, want json.RawMessage) {
	t.Helper()
	if want == nil {
		t.Errorf("%s: the reference has no such key", what)
		return
	}
	if string(want) == "null" {
		if got.OK {
			t.Errorf("%s = %.17g, want null", what, got.V)
		} else if got.Reason == "" {
			t.Errorf("%s: null without a reason", what)
		}
		return
	}
	var x float64
	if err := json.Unmarshal(want, &x); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if !got.OK {
		t.Errorf("%s: null (%s), want %.17g", what, got.Reason, x)
		return
	}
	if !near(got.V, x) {
		t.Errorf("%s = %.17g, want %.17g", what, got.V, x)
	}
}

func cmpString(t *testing.T, what, got string, want json.RawMessage) {
	t.Helper()
	var s string
	if err := json.Unmarshal(want, &s); err != nil || s != got {
		t.Errorf("%s = %q, want %s", what, got, want)
	}
}

func cmpInt(t *testing.T, what string, got int, want json.RawMessage) {
	t.Helper()
	var n int
	if err := json.Unmarshal(want, &n); err != nil || n != got {
		t.Errorf("%s = %d, want %s", what, got, want)
	}
}
