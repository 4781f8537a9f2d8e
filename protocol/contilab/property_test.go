package contilab

import (
	"math"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/crlbatch/crlbatch/protocol"
)

// randomRun makes a run with up to six tasks, holes in the matrix, partial
// initial and joint rows, a stream with irregular steps and sparse
// evaluations, a curve with holes and a few diagnostics.
func randomRun(rng *rand.Rand) *Run {
	T := 1 + rng.IntN(6)
	acc := func() float64 {
		switch rng.IntN(8) {
		case 0:
			return 0
		case 1:
			return 1
		}
		return rng.Float64()
	}
	r := &Run{Key: "random"}
	for i := 0; i < T; i++ {
		for j := 0; j < T; j++ {
			// The last diagonal cell is always there, so T is never
			// smaller than the other records' tasks.
			if rng.IntN(10) > 0 || i == T-1 && j == T-1 {
				r.Matrix = append(r.Matrix, MatrixEntry{i, j, acc()})
			}
		}
		if rng.IntN(3) > 0 {
			r.Initial = append(r.Initial, InitialEntry{i, acc() / 4})
		}
		if rng.IntN(3) > 0 {
			r.Joint = append(r.Joint, JointEntry{i, acc()})
		}
	}
	step := int64(rng.IntN(3))
	for task := 0; task < T && rng.IntN(6) > 0; task++ {
		for n := rng.IntN(15); n >= 0; n-- {
			for k := 0; k < T; k++ {
				if rng.IntN(3) > 0 {
					r.Stream = append(r.Stream, StreamPoint{step, task, k, acc()})
				}
			}
			step += 1 + int64(rng.IntN(3))*int64(rng.IntN(2))
		}
	}
	beta := rng.IntN(5)
	for task := 0; task < T && rng.IntN(4) > 0; task++ {
		for b := 0; b <= beta; b++ {
			if rng.IntN(12) > 0 {
				r.Curve = append(r.Curve, CurvePoint{task, b, acc()})
			}
		}
	}
	for _, name := range []string{"effective_rank", "dormantRatio"}[:rng.IntN(3)] {
		for task := 0; task < T; task++ {
			r.Diags = append(r.Diags, Diag{name, task, rng.NormFloat64()})
		}
	}
	r.Scenario = []Scenario{"", ScenarioTaskIL, ScenarioClassIL, ScenarioDomainIL}[rng.IntN(4)]
	return r
}

// checkInvariants verifies what must hold for every scored run.
func checkInvariants(t *testing.T, r *Run, res *RunResult) {
	t.Helper()
	check := func(what string, v protocol.Value) {
		if err := v.Validate(); err != nil {
			t.Errorf("%s: %v", what, err)
		}
	}
	for _, m := range append(append([]string{}, Metrics...), CountMetrics...) {
		v, ok := res.Metric(m)
		if !ok {
			t.Fatalf("metric %s unknown", m)
		}
		check(m, v)
	}
	for _, d := range res.Diagnostics {
		check(d.Column, d.Value)
	}
	// Means of accuracies lie within the accuracies recorded.
	hi := 0.0
	for _, e := range r.Matrix {
		hi = max(hi, e.Acc)
	}
	for _, s := range r.Stream {
		hi = max(hi, s.Acc)
	}
	for _, c := range r.Curve {
		hi = max(hi, c.Acc)
	}
	for _, m := range []string{"acc", "aia", "learning_acc", "min_acc", "wc_acc", "aaa", "lca"} {
		if v, _ := res.Metric(m); v.OK && (v.V < 0 || v.V > hi*(1+1e-12)) {
			t.Errorf("%s = %v outside [0, %v]", m, v.V, hi)
		}
	}
	if v := res.WindowedForgetting; v.OK && v.V < 0 {
		t.Errorf("windowed_forgetting = %v < 0", v.V)
	}
	// Absence follows the data.
	if len(r.Stream) == 0 && res.AAA.OK {
		t.Error("aaa without a stream")
	}
	if res.NTasks.OK && res.NTasks.V < 2 {
		for _, v := range []protocol.Value{res.BWT, res.FWT, res.Forgetting, res.RelativeForgetting,
			res.MinAcc, res.WCAcc, res.StabilityGap, res.WindowedForgetting} {
			if v.OK {
				t.Error("a two-task metric with one task")
			}
		}
	}
	if res.Scenario == ScenarioClassIL && res.FWT.OK {
		t.Error("fwt in Class-IL")
	}
}

func shuffled(rng *rand.Rand, r *Run) *Run {
	c := *r
	c.Matrix = append([]MatrixEntry(nil), r.Matrix...)
	c.Initial = append([]InitialEntry(nil), r.Initial...)
	c.Joint = append([]JointEntry(nil), r.Joint...)
	c.Stream = append([]StreamPoint(nil), r.Stream...)
	c.Curve = append([]CurvePoint(nil), r.Curve...)
	rng.Shuffle(len(c.Matrix), func(i, j int) { c.Matrix[i], c.Matrix[j] = c.Matrix[j], c.Matrix[i] })
	rng.Shuffle(len(c.Initial), func(i, j int) { c.Initial[i], c.Initial[j] = c.Initial[j], c.Initial[i] })
	rng.Shuffle(len(c.Joint), func(i, j int) { c.Joint[i], c.Joint[j] = c.Joint[j], c.Joint[i] })
	rng.Shuffle(len(c.Stream), func(i, j int) { c.Stream[i], c.Stream[j] = c.Stream[j], c.Stream[i] })
	rng.Shuffle(len(c.Curve), func(i, j int) { c.Curve[i], c.Curve[j] = c.Curve[j], c.Curve[i] })
	return &c
}

// TestProperties scores random runs, checks the invariants, and checks that
// the result does not depend on the order of the records (diagnostics
// excepted, which keep their order of first appearance).
func TestProperties(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	present := map[string]int{}
	for i := 0; i < 2000; i++ {
		r := randomRun(rng)
		res, err := Score(r, nil)
		if err != nil {
			t.Fatalf("run %d: %v", i, err)
		}
		checkInvariants(t, r, res)
		for _, m := range Metrics {
			if v, _ := res.Metric(m); v.OK {
				present[m]++
			}
		}
		again, err := Score(shuffled(rng, r), nil)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(res, again) {
			t.Fatalf("run %d: the result depends on record order:\n%+v\n%+v", i, res, again)
		}
	}
	// The generator must reach every metric.
	for _, m := range Metrics {
		if present[m] == 0 {
			t.Errorf("no random run has %s", m)
		}
	}
}

// FuzzScore decodes bytes into records of every kind: any input may be
// rejected with an error, none may panic, and every value of an accepted run
// is finite or absent with a reason.
func FuzzScore(f *testing.F) {
	f.Add([]byte{0, 0, 0, 0, 200, 0, 1, 1, 100, 0, 1, 0, 50}, uint8(0))
	f.Add([]byte{3, 0, 0, 9, 3, 1, 1, 3, 3, 2, 1, 250, 4, 0, 2, 7, 5, 1, 0, 3}, uint8(1))
	f.Add([]byte{1, 0, 0, 1, 2, 0, 9, 9, 3, 4, 0, 1, 5, 2, 2, 2}, uint8(6))
	f.Fuzz(func(t *testing.T, data []byte, mode uint8) {
		r := &Run{Key: "fuzz"}
		r.Scenario = []Scenario{"", ScenarioTaskIL, ScenarioClassIL, ScenarioDomainIL}[mode%4]
		step := int64(0)
		for i := 0; i+3 < len(data); i += 4 {
			a, b, c := int(data[i+1]%8), int(data[i+2]%8), data[i+3]
			acc := float64(c) / 255
			switch data[i] % 7 {
			case 0:
				r.Matrix = append(r.Matrix, MatrixEntry{a, b, acc})
			case 1:
				r.Initial = append(r.Initial, InitialEntry{a, acc})
			case 2:
				r.Joint = append(r.Joint, JointEntry{a, acc})
			case 3, 4:
				step += int64(data[i] / 7 % 4)
				r.Stream = append(r.Stream, StreamPoint{step, a, b, acc})
			case 5:
				r.Curve = append(r.Curve, CurvePoint{a, b, acc})
			case 6:
				r.Diags = append(r.Diags, Diag{[]string{"rank", "Dormant Ratio", "x"}[a%3], b, float64(int8(c))})
			}
		}
		p := Params{WindowFraction: []float64{0.1, 0.25, 0.5, 1}[mode/4%4]}
		res, err := Score(r, &p)
		if err != nil {
			return
		}
		checkInvariants(t, r, res)
		if math.IsNaN(float64(res.Rho)) || res.Rho < 0 {
			t.Errorf("rho %d", res.Rho)
		}
	})
}
