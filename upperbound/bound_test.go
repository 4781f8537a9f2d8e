package upperbound_test

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/crlbatch/crlbatch/upperbound"
)

// TestAnalyticSeed reproduces the bounds the protocol prints for the bundled
// specs (PROTOCOLS 2.1).
func TestAnalyticSeed(t *testing.T) {
	for _, c := range []struct{ name, want string }{
		{"paper", "paper per step 0.0000 final step 0.5000"},
		{"experiment", "experiment per step 0.3333 final step 1.0000"},
	} {
		b, err := upperbound.Analytic(loadBundled(t, c.name))
		if err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprintf("%s per step %.4f final step %.4f", c.name, b.PerStep, b.FinalStep); got != c.want {
			t.Errorf("got %q, want %q", got, c.want)
		}
		if b.Derivation != upperbound.DerivationAnalytic || b.Spec != c.name {
			t.Errorf("%s: provenance %q/%q", c.name, b.Derivation, b.Spec)
		}
	}

	b, err := upperbound.Analytic(loadBundled(t, "experiment"))
	if err != nil {
		t.Fatal(err)
	}
	// progress 0.3333333333333333·1 + collision 1·0 = 0.3333333333333333;
	// plus success 0.6666666666666667·1 gives exactly 1 in float64.
	if b.PerStep != 0.3333333333333333 || b.FinalStep != 1.0 {
		t.Errorf("experiment: per step %v, final step %v", b.PerStep, b.FinalStep)
	}
	got := b.ForInterval(60, true)
	if s := fmt.Sprintf("%.4f", got); s != "0.3444" {
		t.Errorf("interval of 60 holding the final step: %s, want 0.3444", s)
	}
	p := 0.3333333333333333
	if want := (float64(59*p) + 1.0) / 60; got != want {
		t.Errorf("interval of 60: %v, want exactly %v", got, want)
	}
	if got := b.ForInterval(60, false); got != b.PerStep {
		t.Errorf("interval without the final step: %v, want per step %v", got, b.PerStep)
	}
}

func TestForInterval(t *testing.T) {
	b := upperbound.Bound{PerStep: 0.5, FinalStep: 2, Derivation: "test"}
	cases := []struct {
		L     int
		final bool
		want  float64
	}{
		{1, true, 2},     // the interval is the final step alone
		{1, false, 0.5},  // one ordinary step
		{4, true, 0.875}, // (3·0.5 + 2)/4 = 3.5/4
		{4, false, 0.5},
	}
	for _, c := range cases {
		if got := b.ForInterval(c.L, c.final); got != c.want {
			t.Errorf("ForInterval(%d, %v) = %v, want %v", c.L, c.final, got, c.want)
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("ForInterval(0, …) did not panic")
		}
	}()
	b.ForInterval(0, true)
}

func TestAnalyticUnbounded(t *testing.T) {
	cases := []struct {
		name, src, component, side string
	}{
		{"positive weight, no high end", `
name: open_top
components:
  - {name: penalty, weight: 1.0, clip: [-1.0, 0.0], cadence: step}
  - {name: speed, weight: 0.5, clip: [0.0, null], cadence: step}
`, "speed", "high"},
		{"negative weight, no low end", `
name: open_bottom
components:
  - {name: cost, weight: -2.0, clip: [null, 5.0], cadence: episode_end}
`, "cost", "low"},
		// The rule is literal: weight ≥ 0 reads the high end, so a zero
		// weight over an unbounded high end is unbounded too.
		{"zero weight, no high end", `
name: zero
components:
  - {name: off, weight: 0, clip: [0.0, null], cadence: step}
`, "off", "high"},
	}
	for _, c := range cases {
		s, err := upperbound.ParseSpec(c.name, []byte(c.src))
		if err != nil {
			t.Fatal(err)
		}
		_, err = upperbound.Analytic(s)
		var ue *upperbound.UnboundedRewardError
		if !errors.As(err, &ue) {
			t.Fatalf("%s: %v is not an UnboundedRewardError", c.name, err)
		}
		if ue.Component != c.component || ue.Side != c.side || ue.Spec != s.Name {
			t.Errorf("%s: got %+v", c.name, ue)
		}
		if !strings.Contains(err.Error(), fmt.Sprintf("component %q", c.component)) {
			t.Errorf("%s: message %q does not name the component", c.name, err)
		}
	}
}

func TestAnalyticOtherEndUnbounded(t *testing.T) {
	// The end a weight does not point to may be open: a penalty with no
	// floor still has a ceiling, and so does a negative weight with no top.
	s, err := upperbound.ParseSpec("open.yaml", []byte(`
name: open
components:
  - {name: penalty, weight: 1.0, clip: [null, 0.0], cadence: step}
  - {name: cost, weight: -0.5, clip: [0.5, null], cadence: step}
  - {name: bonus, weight: 3.0, clip: [null, 0.25], cadence: episode_end}
`))
	if err != nil {
		t.Fatal(err)
	}
	b, err := upperbound.Analytic(s)
	if err != nil {
		t.Fatal(err)
	}
	// per step: 1·0 + (−0.5)·0.5 = −0.25; final: −0.25 + 3·0.25 = 0.5.
	if b.PerStep != -0.25 || b.FinalStep != 0.5 {
		t.Errorf("got %+v", b)
	}
}

func TestExplicit(t *testing.T) {
	b := upperbound.Explicit(0.75)
	if b.PerStep != 0.75 || b.FinalStep != 0.75 || b.Derivation != "explicit" {
		t.Errorf("got %+v", b)
	}
	if err := b.Validate(); err != nil {
		t.Error(err)
	}
	if got := b.ForInterval(10, true); got != 0.75 {
		t.Errorf("ForInterval: %v", got)
	}
	if err := upperbound.Explicit(math.Inf(1)).Validate(); err == nil {
		t.Error("an infinite explicit bound validated")
	}
	if err := (upperbound.Bound{PerStep: 1, FinalStep: 1}).Validate(); err == nil {
		t.Error("a bound without a derivation validated")
	}
}

// TestAnalyticOverflow: a spec whose analytic ceiling leaves float64 (a
// weight times a clip end, or the sum over components, past ±MaxFloat64)
// is an error naming the spec and what overflowed; it was a bound of +Inf,
// which `crlbatch bound` printed (exit 0) and score rejected later as bad
// data (exit 1) rather than as the spec's fault (exit 2). Bounds at the
// edge of float64 still derive.
func TestAnalyticOverflow(t *testing.T) {
	cases := []struct {
		name, src string
		want      string // in the error; "" for a bound
	}{
		{"weight times clip end", `
name: product
components:
  - {name: a, weight: 1e308, clip: [0, 1e308], cadence: step}
`, `reward spec "product": component "a": its largest contribution 1e+308 × 1e+308 overflows float64`},
		{"negative weight times low end", `
name: negproduct
components:
  - {name: a, weight: -1e308, clip: [-1e308, 0], cadence: step}
`, `component "a": its largest contribution -1e+308 × -1e+308 overflows float64`},
		{"sum of step components", `
name: stepsum
components:
  - {name: a, weight: 1, clip: [0, 1.7e308], cadence: step}
  - {name: b, weight: 1, clip: [0, 1.7e308], cadence: step}
`, `reward spec "stepsum": the per-step ceiling (the sum over step components) overflows float64`},
		{"episode-end on top", `
name: finalsum
components:
  - {name: a, weight: 1, clip: [0, 1.7e308], cadence: step}
  - {name: b, weight: 1, clip: [0, 1.7e308], cadence: episode_end}
`, `reward spec "finalsum": the final-step ceiling (the per-step one plus the episode-end components) overflows float64`},
		{"at the edge", `
name: edge
components:
  - {name: a, weight: 1, clip: [0, 1.7976931348623157e308], cadence: step}
  - {name: b, weight: -1, clip: [-1, 0], cadence: episode_end}
`, ""},
	}
	for _, c := range cases {
		s, err := upperbound.ParseSpec(c.name, []byte(c.src))
		if err != nil {
			t.Fatal(err)
		}
		b, err := upperbound.Analytic(s)
		if c.want == "" {
			if err != nil || b.Validate() != nil {
				t.Errorf("%s: %v, %v", c.name, err, b.Validate())
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: bound %+v, error %v; want an error holding %q", c.name, b, err, c.want)
		}
	}
}
