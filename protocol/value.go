package protocol

import (
	"fmt"
	"math"
)

// Value is a metric that is either present (OK) or absent with a Reason.
// The zero Value is absent with an empty reason, which Validate rejects: every
// absence must say why.
type Value struct {
	V      float64
	OK     bool
	Reason string
}

// Some returns a present value. It panics on NaN or ±Inf: a metric that is not
// a finite number is a bug in the caller, never data.
func Some(v float64) Value {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		panic(fmt.Sprintf("protocol.Some(%v): a metric must be finite", v))
	}
	return Value{V: v, OK: true}
}

// Finite returns Some(v) for a finite v, and an absent value with
// ReasonOverflow otherwise: arithmetic on finite data (a sum of huge rewards)
// can leave float64, and that must be a reported absence, never a panic.
func Finite(v float64) Value {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return None(ReasonOverflow)
	}
	return Value{V: v, OK: true}
}

// None returns an absent value carrying reason.
func None(reason string) Value {
	if reason == "" {
		panic("protocol.None: an absent value needs a reason")
	}
	return Value{Reason: reason}
}

// Ptr returns a pointer to the value, or nil when it is absent.
func (v Value) Ptr() *float64 {
	if !v.OK {
		return nil
	}
	x := v.V
	return &x
}

// String renders the value for humans; absent values print as "--".
func (v Value) String() string {
	if !v.OK {
		return "--"
	}
	return fmt.Sprintf("%g", v.V)
}

// Validate reports an absent value without a reason, or a present one that is
// not finite.
func (v Value) Validate() error {
	if v.OK {
		if math.IsNaN(v.V) || math.IsInf(v.V, 0) {
			return fmt.Errorf("present value %v is not finite", v.V)
		}
		return nil
	}
	if v.Reason == "" {
		return fmt.Errorf("absent value without a reason")
	}
	return nil
}

// MeanOfPresent averages the present values in order (a sequential sum divided
// by the count), dropping absent ones. When none is present the result is
// absent with reason.
func MeanOfPresent(vals []Value, reason string) Value {
	sum, n := 0.0, 0
	for _, v := range vals {
		if v.OK {
			sum += v.V
			n++
		}
	}
	if n == 0 {
		return None(reason)
	}
	m := sum / float64(n)
	if math.IsInf(m, 0) || math.IsNaN(m) {
		return None(ReasonOverflow)
	}
	return Some(m)
}

// ReasonOverflow is the reason of a value whose arithmetic left float64.
const ReasonOverflow = "the value overflows float64"

// FirstReason returns the reason of the first absent value, or fallback when
// vals holds none.
func FirstReason(vals []Value, fallback string) string {
	for _, v := range vals {
		if !v.OK && v.Reason != "" {
			return v.Reason
		}
	}
	return fallback
}
