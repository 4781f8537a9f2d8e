package upperbound

import (
	"errors"
	"fmt"
	"math"
)

// Names of the derivations a Bound can record. A derivation added with
// RegisterDerivation records its own registered name.
const (
	DerivationAnalytic     = "analytic"
	DerivationNumeric      = "numeric"
	DerivationDataRelative = "data_relative"
	DerivationExplicit     = "explicit"
)

// Bound is a reward ceiling with two values: PerStep for an ordinary step and
// FinalStep for a step that ends an episode, which adds the terms paid only
// then. The two are equal when nothing distinguishes the last step.
type Bound struct {
	PerStep   float64
	FinalStep float64
	// Derivation says where the bound came from: analytic, numeric,
	// data_relative, explicit or the name of a registered derivation. Only
	// analytic and explicit bounds are independent of the policy measured
	// against them; a data_relative bound moves with the policy.
	Derivation string
	// Spec is the name of the reward spec the bound was derived from, empty
	// when none was involved.
	Spec string
	// Quantile is the quantile taken over contexts or rows by the numeric
	// and data_relative derivations (1 = the best); 0 for the others.
	Quantile float64
	// Label is the one label a data_relative bound was restricted to, empty
	// when it was taken over all rows.
	Label string
}

// ForInterval bounds the average reward of an L-step interval:
// ((L−1)·PerStep + FinalStep)/L when the interval holds the episode's last
// step, else PerStep. It panics when L < 1; callers validate user input.
func (b Bound) ForInterval(L int, containsFinal bool) float64 {
	if L < 1 {
		panic(fmt.Sprintf("upperbound: ForInterval of an interval of %d steps", L))
	}
	if !containsFinal {
		return b.PerStep
	}
	return weighted(b.PerStep, b.FinalStep, float64(L-1), 1)
}

// weighted is ((n−m)·perStep + m·finalStep)/n with n = nPer + m, the
// ceiling of n steps of which m are final (PROTOCOLS 2.2), computed
// literally. It is a weighted mean of perStep and finalStep, so it is finite
// whenever they are; where the literal products leave float64 (a per step or
// final step near the largest float64), it is computed as the same mean
// without them: perStep + (m/n)·(finalStep − perStep), or, when that
// difference leaves float64 too, (nPer/n)·perStep + (m/n)·finalStep. Every
// ceiling whose literal form stays finite is unchanged.
func weighted(perStep, finalStep, nPer, m float64) float64 {
	n := nPer + m
	// The conversions round each product to float64 and so forbid a fused
	// multiply-add, which some architectures would otherwise use.
	x := (float64(nPer*perStep) + float64(m*finalStep)) / n
	if !math.IsInf(x, 0) && !math.IsNaN(x) || math.IsInf(perStep, 0) || math.IsInf(finalStep, 0) {
		return x
	}
	if d := finalStep - perStep; !math.IsInf(d, 0) {
		return perStep + float64(m/n*d)
	}
	return float64(nPer/n*perStep) + float64(m/n*finalStep)
}

// Validate reports a bound whose values are not finite numbers or that does
// not record its derivation. Bounds this package derives always pass; an
// Explicit bound built from user input may not.
func (b Bound) Validate() error {
	if !finite(b.PerStep) || !finite(b.FinalStep) {
		return fmt.Errorf("bound (per step %v, final step %v) is not finite", b.PerStep, b.FinalStep)
	}
	if b.Derivation == "" {
		return errors.New("bound does not record its derivation")
	}
	return nil
}

// Explicit is a bound the user asserts: x on every step, the last included.
// It does not check x; call Validate on bounds built from user input.
func Explicit(x float64) Bound {
	return Bound{PerStep: x, FinalStep: x, Derivation: DerivationExplicit}
}

// UnboundedRewardError reports a component whose contribution has no
// closed-form maximum: its weight points at a clip end that is unbounded.
// The analytic derivation fails with it rather than guess a number.
type UnboundedRewardError struct {
	Spec      string
	Component string
	Weight    float64
	// Side is the unbounded end the weight points to: "high" for a
	// weight ≥ 0, "low" for a negative one.
	Side string
}

func (e *UnboundedRewardError) Error() string {
	return fmt.Sprintf("reward spec %q: component %q has weight %v and no %s clip end, so its contribution is unbounded; "+
		"give the clip a finite %s end, or use the numeric or data_relative derivation", e.Spec, e.Component, e.Weight, e.Side, e.Side)
}

// Analytic is the closed-form ceiling of spec: each component at its largest
// contribution, weight·hi for weight ≥ 0 and weight·lo for weight < 0.
// PerStep sums the step components in spec order, starting from 0;
// FinalStep is PerStep plus the episode-end components, in spec order.
// Gates play no part: since a gate may switch a term off but never boosts
// it, leaving gates out can only make the bound larger, never wrong. A component whose weight points to an
// unbounded clip end (including a zero weight with an unbounded high end)
// fails with *UnboundedRewardError.
func Analytic(spec *Spec) (Bound, error) {
	if err := spec.Validate(); err != nil {
		return Bound{}, err
	}
	best := make([]float64, len(spec.Components))
	for i, c := range spec.Components {
		var end float64
		var ok bool
		side := "high"
		if c.Weight >= 0 {
			end, ok = c.Clip.Hi, c.Clip.HasHi
		} else {
			end, ok, side = c.Clip.Lo, c.Clip.HasLo, "low"
		}
		if !ok {
			return Bound{}, &UnboundedRewardError{Spec: spec.Name, Component: c.Name, Weight: c.Weight, Side: side}
		}
		best[i] = float64(c.Weight * end)
		if !finite(best[i]) {
			return Bound{}, fmt.Errorf("reward spec %q: component %q: its largest contribution %v × %v overflows float64", spec.Name, c.Name, c.Weight, end)
		}
	}
	perStep := 0.0
	for i, c := range spec.Components {
		if c.Cadence == CadenceStep {
			perStep += best[i]
		}
	}
	if !finite(perStep) {
		return Bound{}, fmt.Errorf("reward spec %q: the per-step ceiling (the sum over step components) overflows float64", spec.Name)
	}
	final := perStep
	for i, c := range spec.Components {
		if c.Cadence == CadenceEpisodeEnd {
			final += best[i]
		}
	}
	if !finite(final) {
		return Bound{}, fmt.Errorf("reward spec %q: the final-step ceiling (the per-step one plus the episode-end components) overflows float64", spec.Name)
	}
	return Bound{PerStep: perStep, FinalStep: final, Derivation: DerivationAnalytic, Spec: spec.Name}, nil
}
