package skyfall

import (
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"
)

// bitsEqual compares two values field by field, floats by their bits (-0
// apart from 0), pointers by what they point to.
func bitsEqual(a, b reflect.Value, path string) error {
	if a.Kind() != b.Kind() {
		return fmt.Errorf("%s: kinds %v and %v", path, a.Kind(), b.Kind())
	}
	switch a.Kind() {
	case reflect.Float64:
		if math.Float64bits(a.Float()) != math.Float64bits(b.Float()) {
			return fmt.Errorf("%s: %v (%x) and %v (%x)", path, a.Float(), math.Float64bits(a.Float()), b.Float(), math.Float64bits(b.Float()))
		}
	case reflect.Pointer:
		if a.IsNil() || b.IsNil() {
			if a.IsNil() != b.IsNil() {
				return fmt.Errorf("%s: nil and not nil", path)
			}
			return nil
		}
		return bitsEqual(a.Elem(), b.Elem(), path)
	case reflect.Struct:
		for i := range a.NumField() {
			if err := bitsEqual(a.Field(i), b.Field(i), path+"."+a.Type().Field(i).Name); err != nil {
				return err
			}
		}
	case reflect.Slice:
		if a.IsNil() != b.IsNil() || a.Len() != b.Len() {
			return fmt.Errorf("%s: lengths %d and %d (nil %v, %v)", path, a.Len(), b.Len(), a.IsNil(), b.IsNil())
		}
		for i := range a.Len() {
			if err := bitsEqual(a.Index(i), b.Index(i), fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	default:
		if !reflect.DeepEqual(a.Interface(), b.Interface()) {
			return fmt.Errorf("%s: %v and %v", path, a.Interface(), b.Interface())
		}
	}
	return nil
}

// randomCeiling is no ceiling, a scalar, or one per label of tr (huge
// values among them, so that a gap overflows now and then).
func randomCeiling(rng *rand.Rand, tr *Trace) *Ceiling {
	x := func() float64 {
		switch rng.IntN(8) {
		case 0:
			return math.MaxFloat64 * (1 - 2*rng.Float64())
		case 1:
			return 0
		}
		return rng.NormFloat64() * math.Pow(10, float64(rng.IntN(6)))
	}
	switch rng.IntN(4) {
	case 0:
		return nil
	case 1:
		return ScalarCeiling(x(), "explicit")
	}
	m := map[string]float64{}
	for _, l := range tr.LabelNames {
		m[l] = x()
	}
	return MapCeiling(m, "analytic")
}

// TestReceilBitIdentical: a result scored under one ceiling and brought
// to another by Receil is, bit for bit, the result Score gives under the
// other (the independent computation: the full scoring path), over many
// random traces, parameters and ceilings.
func TestReceilBitIdentical(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 3))
	moved := 0
	for i := range 3000 {
		tr := randomTrace(rng)
		p := randomParams(rng, tr)
		p.Anchor = AnchorSegment
		p.Ceiling = randomCeiling(rng, tr)
		before, err := Score(tr, &p, nil)
		if err != nil {
			t.Fatal(err)
		}
		q := p
		q.Ceiling = randomCeiling(rng, tr)
		want, err := Score(tr, &q, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !Receil(before, &q) {
			t.Fatalf("case %d: Receil refused a segment-anchored result", i)
		}
		if err := bitsEqual(reflect.ValueOf(before), reflect.ValueOf(want), "result"); err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		for _, m := range LabelMetrics {
			a, b := before.SeedValue(m), want.SeedValue(m)
			if math.Float64bits(a.V) != math.Float64bits(b.V) || a.OK != b.OK || a.Reason != b.Reason {
				t.Fatalf("case %d: seed value of %s %+v, want %+v", i, m, a, b)
			}
		}
		if p.Ceiling != nil && q.Ceiling != nil {
			moved++
		}
	}
	if moved < 1000 {
		t.Errorf("only %d cases moved one ceiling to another", moved)
	}
}

// TestReceilRefuses: with the ceiling anchor, or a ceiling map without
// one of the run's labels, Receil leaves the result as it was and says
// so; Score under the same parameters differs (the anchor) or fails (the
// label).
func TestReceilRefuses(t *testing.T) {
	tr := build(t, nil, cat(rep(1, "a", 10), rep(2, "b", 10), rep(0.5, "a", 10))...)
	p := DefaultParams()
	p.Anchor = AnchorCeiling
	p.Ceiling = ScalarCeiling(4, "explicit")
	res := score(t, tr, p)
	kept := score(t, tr, p)
	q := p
	q.Ceiling = ScalarCeiling(1, "explicit")
	if Receil(res, &q) {
		t.Errorf("Receil re-applied a ceiling the anchor depends on")
	}
	if err := bitsEqual(reflect.ValueOf(res), reflect.ValueOf(kept), "result"); err != nil {
		t.Errorf("a refused Receil changed the result: %v", err)
	}
	if want := score(t, tr, q); reflect.DeepEqual(want.Intervals[1].AdaptationSpeed, res.Intervals[1].AdaptationSpeed) &&
		reflect.DeepEqual(want.Intervals[1].RecoveryTime, res.Intervals[1].RecoveryTime) {
		t.Errorf("the test's ceilings do not move the anchored values")
	}

	p = DefaultParams()
	p.Ceiling = MapCeiling(map[string]float64{"a": 1, "b": 2}, "explicit")
	res = score(t, tr, p)
	kept = score(t, tr, p)
	q = p
	q.Ceiling = MapCeiling(map[string]float64{"a": 3}, "explicit")
	if Receil(res, &q) {
		t.Errorf("Receil re-applied a map without label b")
	}
	if err := bitsEqual(reflect.ValueOf(res), reflect.ValueOf(kept), "result"); err != nil {
		t.Errorf("a refused Receil changed the result: %v", err)
	}
	if _, err := Score(tr, &q, nil); err == nil {
		t.Errorf("Score accepted a map without label b")
	}
}
