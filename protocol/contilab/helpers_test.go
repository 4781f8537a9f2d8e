package contilab

import (
	"math"
	"strings"
	"testing"

	"github.com/crlbatch/crlbatch/protocol"
)

func score(t testing.TB, r *Run, p Params) *RunResult {
	t.Helper()
	res, err := Score(r, &p)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// wantValue checks a present value to within a few ulps (hand-computed
// expressions are evaluated by the test in the same order as the package).
func wantValue(t testing.TB, what string, got protocol.Value, want float64) {
	t.Helper()
	if !got.OK {
		t.Errorf("%s: absent (%s), want %v", what, got.Reason, want)
		return
	}
	if got.V != want && math.Abs(got.V-want) > 1e-15*math.Max(1, math.Abs(want)) {
		t.Errorf("%s = %v, want %v", what, got.V, want)
	}
}

// wantAbsent checks that a value is absent and that its reason starts with
// reason.
func wantAbsent(t testing.TB, what string, got protocol.Value, reason string) {
	t.Helper()
	if got.OK {
		t.Errorf("%s = %v, want absent (%s)", what, got.V, reason)
		return
	}
	if !strings.HasPrefix(got.Reason, reason) {
		t.Errorf("%s: reason %q, want %q", what, got.Reason, reason)
	}
}

func sum(xs ...float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s
}

// matrixRows turns a dense matrix (rows = after_task) into records; NaN marks
// a cell that is not recorded.
func matrixRows(m [][]float64) []MatrixEntry {
	var out []MatrixEntry
	for i, row := range m {
		for j, x := range row {
			if !math.IsNaN(x) {
				out = append(out, MatrixEntry{AfterTask: i, EvalTask: j, Acc: x})
			}
		}
	}
	return out
}
