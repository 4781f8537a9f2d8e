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
	s.Notes = nil // omitted when empty: what the engine reads is its length
	if !reflect.DeepEqual(got, s) {
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
