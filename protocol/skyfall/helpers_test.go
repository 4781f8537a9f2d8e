package skyfall

import (
	"math"
	"testing"

	"github.com/crlbatch/crlbatch/protocol"
)

// row is a compact way to write a trace in a test.
type row struct {
	r      float64
	label  string
	origin string
	comps  []float64
}

func build(t testing.TB, comps []string, rows ...row) *Trace {
	t.Helper()
	b := NewBuilder("test", comps)
	for _, x := range rows {
		rr := Row{Reward: x.r, Label: x.label, Invalid: -1, Comps: x.comps}
		if x.origin != "" {
			rr.Origin, rr.HasOrigin = x.origin, true
		}
		b.Add(&rr)
	}
	return b.Trace(map[string]string{})
}

func rep(r float64, label string, n int) []row {
	out := make([]row, n)
	for i := range out {
		out[i] = row{r: r, label: label}
	}
	return out
}

func cat(parts ...[]row) []row {
	var out []row
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

func score(t testing.TB, tr *Trace, p Params) *RunResult {
	t.Helper()
	res, err := Score(tr, &p, nil)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func label(t testing.TB, res *RunResult, name string) *LabelResult {
	t.Helper()
	for i := range res.Labels {
		if res.Labels[i].Label == name {
			return &res.Labels[i]
		}
	}
	t.Fatalf("no label %q", name)
	return nil
}

// near compares with the agreement rule of PROTOCOLS: 1e-9 relative or 1e-12
// absolute.
func near(a, b float64) bool {
	d := math.Abs(a - b)
	return d <= 1e-12 || d <= 1e-9*math.Max(math.Abs(a), math.Abs(b))
}

func wantValue(t testing.TB, what string, got protocol.Value, want float64) {
	t.Helper()
	if !got.OK {
		t.Errorf("%s: absent (%s), want %v", what, got.Reason, want)
		return
	}
	if !near(got.V, want) {
		t.Errorf("%s = %.17g, want %.17g", what, got.V, want)
	}
}

func wantAbsent(t testing.TB, what string, got protocol.Value, reason string) {
	t.Helper()
	if got.OK {
		t.Errorf("%s = %v, want absent (%s)", what, got.V, reason)
		return
	}
	if got.Reason != reason {
		t.Errorf("%s absent with reason %q, want %q", what, got.Reason, reason)
	}
}

func ptr(x float64) *float64 { return &x }
