package contilab

import (
	"fmt"
	"math"
)

// DefaultWindowFraction sizes the window of windowed_forgetting: Δ_k is this
// share of task k's length (PROTOCOLS 4).
const DefaultWindowFraction = 0.1

// Params are the scoring parameters of PROTOCOLS 4.
type Params struct {
	// WindowFraction is the share of a task's length that makes the window
	// Δ_k of windowed_forgetting (0 < f ≤ 1; 0.1 by default).
	WindowFraction float64
}

// DefaultParams returns the defaults of PROTOCOLS 4.
func DefaultParams() Params {
	return Params{WindowFraction: DefaultWindowFraction}
}

// Check reports parameters outside their domain.
func (p *Params) Check() error {
	f := p.WindowFraction
	if math.IsNaN(f) || !(f > 0 && f <= 1) {
		return fmt.Errorf("window fraction %v: want 0 < f ≤ 1", f)
	}
	return nil
}
