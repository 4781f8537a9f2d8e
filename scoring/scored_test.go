package scoring

import (
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/crlbatch/crlbatch/protocol"
)

// codecJob is a Job whose Result is a *codecResult: enough of a job for
// AppendScored and DecodeScored.
type codecJob struct{ Job }

type codecResult struct {
	First *int64
	X     float64
	Empty []string
}

func (codecJob) EncodeResult(s *Scored) ([]byte, []byte, error) {
	r, err := EncodeJSON(s.Result)
	return r, nil, err
}

func (codecJob) DecodeResult(result, _ []byte, s *Scored) error {
	r := new(codecResult)
	if err := DecodeJSON(result, r); err != nil {
		return err
	}
	s.Result = r
	return nil
}

// TestScoredRoundTrip: a scored run read back is the run, to the bit:
// -0, the smallest subnormal, a pointer to zero, nil apart from empty.
func TestScoredRoundTrip(t *testing.T) {
	zero := int64(0)
	s := &Scored{
		Key: "k", Meta: map[string]string{"seed": "1"}, Rows: 3,
		Values: map[string]protocol.Value{
			"a": protocol.Some(math.Copysign(0, -1)),
			"b": protocol.Some(math.SmallestNonzeroFloat64),
			"c": protocol.Some(0.1 + 0.2),
			"d": protocol.None("no reason to be"),
		},
		Remarks: []string{"r"},
		Notes:   []string{},
		Result:  &codecResult{First: &zero, X: -1e-300, Empty: []string{}},
	}
	enc, err := AppendScored(codecJob{}, nil, s)
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeScored(codecJob{}, enc)
	if err != nil {
		t.Fatal(err)
	}
	if math.Float64bits(got.Values["a"].V) != math.Float64bits(math.Copysign(0, -1)) {
		t.Errorf("-0 came back as %v", got.Values["a"].V)
	}
	if !reflect.DeepEqual(got, s) || got.Notes == nil || got.DataNotes != nil {
		t.Errorf("got %+v, want %+v", got, s)
	}
	if r := got.Result.(*codecResult); r.First == nil || *r.First != 0 || r.Empty == nil {
		t.Errorf("result %+v: the pointer to zero or the empty slice was lost", r)
	}
	if _, err := DecodeScored(codecJob{}, enc[1:]); err == nil {
		t.Error("a damaged encoding was read")
	}
	bad := &Scored{Key: "nan", Result: &codecResult{X: math.NaN()}}
	if _, err := AppendScored(codecJob{}, nil, bad); err == nil || !strings.Contains(err.Error(), "nan") {
		t.Errorf("a NaN was encoded (%v): it must fail, not change", err)
	}
}

// TestExactRoundTrip: AppendExact and DecodeExact keep every bit (-0,
// NaN's payload, the smallest subnormal), nil apart from empty for slices,
// maps and pointers, a map's entries whatever their order; an encoding cut
// anywhere is an error, and so is a kind it cannot keep exactly.
func TestExactRoundTrip(t *testing.T) {
	type inner struct {
		P *int64
		F float32
		B []byte
	}
	type value struct {
		S    string
		N    int
		U    uint16
		X    []float64
		M    map[string]protocol.Value
		Nil  map[string]int
		E    []string
		In   []inner
		Skip func()
	}
	zero := int64(0)
	nan := math.Float64frombits(0x7ff8000000000abc)
	v := value{S: "é\x00", N: -7, U: 65535, X: []float64{math.Copysign(0, -1), nan, math.SmallestNonzeroFloat64, math.Inf(-1)},
		M: map[string]protocol.Value{"b": protocol.None("why"), "a": protocol.Some(0.1 + 0.2)}, E: []string{},
		In: []inner{{P: &zero, F: -0.5, B: []byte{}}, {}}}
	enc, err := AppendExact(nil, &v)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := AppendExact(nil, v)
	if string(again) != string(enc) {
		t.Error("a value and a pointer to it encode apart")
	}
	var got value
	if err := DecodeExact(enc, &got); err != nil {
		t.Fatal(err)
	}
	for i, x := range v.X {
		if math.Float64bits(got.X[i]) != math.Float64bits(x) {
			t.Errorf("X[%d]: %x, want %x", i, math.Float64bits(got.X[i]), math.Float64bits(x))
		}
	}
	got.X, v.X = nil, nil
	if !reflect.DeepEqual(got, v) || got.E == nil || got.Nil != nil || got.In[0].B == nil || got.In[1].B != nil || got.In[1].P != nil {
		t.Errorf("got %+v, want %+v", got, v)
	}
	for n := range len(enc) {
		var cut value
		if err := DecodeExact(enc[:n], &cut); err == nil {
			t.Fatalf("cut at %d of %d: read", n, len(enc))
		}
	}
	if _, err := AppendExact(nil, struct{ A any }{1}); err == nil {
		t.Error("an interface was encoded")
	}
}
