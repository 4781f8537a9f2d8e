package protocol

import (
	"math"
	"testing"
)

func TestMeanOfPresent(t *testing.T) {
	v := MeanOfPresent([]Value{Some(1), None("x"), Some(2)}, "none")
	if !v.OK || v.V != 1.5 {
		t.Errorf("mean %+v, want 1.5", v)
	}
	if v := MeanOfPresent([]Value{None("x")}, "none"); v.OK || v.Reason != "none" {
		t.Errorf("all absent: %+v", v)
	}
	// Finite values whose sum leaves float64 give an absent value, not a panic.
	if v := MeanOfPresent([]Value{Some(math.MaxFloat64), Some(math.MaxFloat64)}, "none"); v.OK || v.Reason != ReasonOverflow {
		t.Errorf("overflow: %+v", v)
	}
}

func TestValueValidate(t *testing.T) {
	if (Value{}).Validate() == nil {
		t.Error("an absent value without a reason must not validate")
	}
	if Some(0).Validate() != nil || None("r").Validate() != nil {
		t.Error("valid values refused")
	}
	if Some(0).Ptr() == nil || None("r").Ptr() != nil {
		t.Error("Ptr")
	}
}
