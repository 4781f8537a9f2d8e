package skyfall

import (
	"fmt"
	"math"
	"sort"
)

// Anchor chooses what adaptation and recovery are measured against.
type Anchor string

// Window chooses which rows follow a shift.
type Window string

const (
	// AnchorSegment measures against the window's own peak running mean and
	// tail mean (the default).
	AnchorSegment Anchor = "segment"
	// AnchorCeiling measures against the label's ceiling R_ub,k.
	AnchorCeiling Anchor = "ceiling"

	// WindowSegment is the shift-preceded interval's own rows (the default).
	WindowSegment Window = "segment"
	// WindowPostShift is every row from the shift to the end of the trace.
	WindowPostShift Window = "post_shift"
)

// Defaults of PROTOCOLS 1.4 and 1.5.
const (
	DefaultAlphaSegment    = 0.9
	DefaultAlphaCeiling    = 0.5
	DefaultEpsilonFraction = 0.30
	DefaultEpsilonAbsFloor = 0.005
	DefaultTailFraction    = 0.2
	DefaultZeroShotWindow  = 10
	DefaultGamma           = 0.99
)

// Reasons an absent value carries. They are part of the output contract
// (Parquet reasons column, Markdown notes): change them only deliberately.
const (
	ReasonNoShift           = "no shift precedes the first interval"
	ReasonNeedsRecurrence   = "needs a recurrence"
	ReasonNoCeiling         = "no ceiling supplied"
	ReasonNeverReached      = "the running mean never reached alpha times the ceiling"
	ReasonNeverRecovered    = "the running mean never entered the recovery band"
	ReasonFewerThanTwoRows  = "fewer than two rows"
	ReasonOneRowInterval    = "a one-row interval has no variance"
	ReasonEncounterEmpty    = "an encounter is empty after dropping episode-end rows"
	ReasonTailEmpty         = "the tail is empty after dropping episode-end rows"
	ReasonNoEpisodeEnd      = "no episode-end components named"
	ReasonNoRankRecorded    = "no effective_rank recorded"
	ReasonNoInvalidField    = "no row carries invalid_action"
	ReasonNoSolveComponent  = "no solve component named"
	ReasonNoReference       = "no reference supplied"
	ReasonFirstInterval     = "the first interval has no shift"
	ReasonNoLabelValue      = "no label has a value"
	ReasonNoTraceValue      = "no trace has a value"
	ReasonNotInThisInterval = "not computed for this interval"
)

// Params are the scoring parameters of PROTOCOLS 1.4–1.5. Start from
// DefaultParams and change what differs.
type Params struct {
	Anchor Anchor
	Window Window
	// Alpha overrides the adapted fraction; nil means 0.9 under the segment
	// anchor and 0.5 under the ceiling anchor.
	Alpha *float64
	// Epsilon is the ceiling anchor's absolute recovery tolerance; nil means
	// 0.5·R_ub,k.
	Epsilon *float64
	// EpsilonFraction and EpsilonAbsFloor make the segment anchor's band
	// max(EpsilonFraction·|A|, EpsilonAbsFloor).
	EpsilonFraction float64
	EpsilonAbsFloor float64
	// TailFraction sizes every "final x %" tail.
	TailFraction float64
	// ZeroShotWindow is δ, the rows averaged by zero_shot_reward.
	ZeroShotWindow int
	// Gamma overrides the discount; nil means the run's recorded gamma, else
	// 0.99.
	Gamma *float64
	// Ceiling is R_ub; nil means none was supplied.
	Ceiling *Ceiling
	// EpisodeEnd names the components whose nonzero contribution marks a row
	// as an episode end.
	EpisodeEnd []string
	// SolveComponent names the component whose positive value marks a solved
	// step; empty means none.
	SolveComponent string
}

// DefaultParams returns the defaults of PROTOCOLS.
func DefaultParams() Params {
	return Params{
		Anchor:          AnchorSegment,
		Window:          WindowSegment,
		EpsilonFraction: DefaultEpsilonFraction,
		EpsilonAbsFloor: DefaultEpsilonAbsFloor,
		TailFraction:    DefaultTailFraction,
		ZeroShotWindow:  DefaultZeroShotWindow,
	}
}

// AlphaValue is the adapted fraction in force.
func (p *Params) AlphaValue() float64 {
	if p.Alpha != nil {
		return *p.Alpha
	}
	if p.Anchor == AnchorCeiling {
		return DefaultAlphaCeiling
	}
	return DefaultAlphaSegment
}

// Check reports parameters outside their domain.
func (p *Params) Check() error {
	switch p.Anchor {
	case AnchorSegment, AnchorCeiling:
	default:
		return fmt.Errorf("anchor %q: want segment or ceiling", p.Anchor)
	}
	switch p.Window {
	case WindowSegment, WindowPostShift:
	default:
		return fmt.Errorf("window %q: want segment or post_shift", p.Window)
	}
	finite := func(name string, v float64) error {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("%s %v: want a finite number", name, v)
		}
		return nil
	}
	if p.Alpha != nil && !(*p.Alpha > 0 && *p.Alpha <= 1) {
		return fmt.Errorf("alpha %v: the adapted fraction wants 0 < alpha ≤ 1", *p.Alpha)
	}
	if p.Epsilon != nil {
		if err := finite("epsilon", *p.Epsilon); err != nil {
			return err
		}
		if *p.Epsilon < 0 {
			return fmt.Errorf("epsilon %v: want ≥ 0", *p.Epsilon)
		}
	}
	if err := finite("epsilon fraction", p.EpsilonFraction); err != nil || p.EpsilonFraction < 0 {
		return fmt.Errorf("epsilon fraction %v: want a finite number ≥ 0", p.EpsilonFraction)
	}
	if err := finite("epsilon floor", p.EpsilonAbsFloor); err != nil || p.EpsilonAbsFloor < 0 {
		return fmt.Errorf("epsilon floor %v: want a finite number ≥ 0", p.EpsilonAbsFloor)
	}
	if !(p.TailFraction > 0 && p.TailFraction <= 1) {
		return fmt.Errorf("tail fraction %v: want 0 < x ≤ 1", p.TailFraction)
	}
	if p.ZeroShotWindow < 1 {
		return fmt.Errorf("zero-shot window %d: want ≥ 1", p.ZeroShotWindow)
	}
	if p.Gamma != nil && !(*p.Gamma >= 0 && *p.Gamma <= 1) {
		return fmt.Errorf("gamma %v: want 0 ≤ γ ≤ 1", *p.Gamma)
	}
	return nil
}

// Ceiling is R_ub: one scalar for every label, or one value per label.
type Ceiling struct {
	scalar   float64
	perLabel map[string]float64
	isScalar bool
	// Derivation records where the ceiling came from (analytic, numeric,
	// data_relative, explicit, …).
	Derivation string
}

// ScalarCeiling gives every label the ceiling x.
func ScalarCeiling(x float64, derivation string) *Ceiling {
	return &Ceiling{scalar: x, isScalar: true, Derivation: derivation}
}

// MapCeiling gives each label its own ceiling. A label missing from m is an
// error when it is scored, never a fallback.
func MapCeiling(m map[string]float64, derivation string) *Ceiling {
	c := &Ceiling{perLabel: make(map[string]float64, len(m)), Derivation: derivation}
	for k, v := range m {
		c.perLabel[k] = v
	}
	return c
}

// IsScalar reports whether one value serves every label.
func (c *Ceiling) IsScalar() bool { return c.isScalar }

// Scalar returns the scalar ceiling (meaningful when IsScalar).
func (c *Ceiling) Scalar() float64 { return c.scalar }

// Labels lists the labels of a per-label ceiling in sorted order.
func (c *Ceiling) Labels() []string {
	out := make([]string, 0, len(c.perLabel))
	for k := range c.perLabel {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// For returns label's ceiling.
func (c *Ceiling) For(label string) (float64, error) {
	if c.isScalar {
		return c.scalar, nil
	}
	v, ok := c.perLabel[label]
	if !ok {
		return 0, &MissingLabelError{Label: label}
	}
	return v, nil
}

// MissingLabelError reports a per-label ceiling map that lacks a label that
// ran.
type MissingLabelError struct{ Label string }

func (e *MissingLabelError) Error() string {
	return fmt.Sprintf("the ceiling map has no entry for label %q", e.Label)
}

// TailCount is the number of rows in "the final x of L rows":
// max(1, ceil(x·L − 1e-9)), so 0.28·25 (7.000000000000001 in float64) gives 7.
func TailCount(x float64, L int) int {
	n := int(math.Ceil(float64(x*float64(L)) - 1e-9))
	if n < 1 {
		n = 1
	}
	if n > L {
		n = L
	}
	return n
}
