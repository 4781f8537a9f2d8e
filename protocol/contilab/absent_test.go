package contilab

import (
	"math"
	"strings"
	"testing"

	"github.com/crlbatch/crlbatch/protocol"
)

var nan = math.NaN()

// beyondMaxIndex is the first index past MaxIndex. Converted to int it is
// 1<<31 on 64-bit platforms; where int has 32 bits it wraps to -1<<31,
// which is outside the range as well (and keeps the test compiling there).
var beyondMaxIndex int64 = MaxIndex + 1

func TestOneTask(t *testing.T) {
	r := &Run{
		Key:     "one",
		Matrix:  []MatrixEntry{{0, 0, 0.5}},
		Initial: []InitialEntry{{0, 0.1}},
		Stream:  []StreamPoint{{0, 0, 0, 0.25}, {10, 0, 0, 0.75}},
		Curve:   []CurvePoint{{0, 0, 0.5}},
	}
	res := score(t, r, DefaultParams())
	wantValue(t, "n_tasks", res.NTasks, 1)
	wantValue(t, "acc", res.Acc, 0.5)
	wantValue(t, "aia", res.AIA, 0.5)
	wantValue(t, "learning_acc", res.LearningAcc, 0.5)
	wantAbsent(t, "intransigence", res.Intransigence, ReasonNoJoint)
	for _, m := range []string{"bwt", "fwt", "forgetting", "relative_forgetting",
		"min_acc", "wc_acc", "stability_gap", "windowed_forgetting"} {
		v, _ := res.Metric(m)
		wantAbsent(t, m, v, ReasonFewerThanTwoTasks)
	}
	// aaa and lca do not need two tasks.
	wantValue(t, "aaa", res.AAA, (0.25+0.75)/2)
	wantValue(t, "lca", res.LCA, 0.5)
}

func TestClassILHasNoFWT(t *testing.T) {
	for _, c := range []struct {
		scenario Scenario
		meta     string
	}{{ScenarioClassIL, ""}, {"", "Class-IL"}, {"", "class_il"}, {ScenarioClassIL, "class-il"}} {
		r := workedExample()
		r.Scenario = c.scenario
		r.Meta = map[string]string{"scenario": c.meta}
		res := score(t, r, DefaultParams())
		if res.Scenario != ScenarioClassIL {
			t.Errorf("%+v: scenario %q", c, res.Scenario)
		}
		wantAbsent(t, "fwt", res.FWT, ReasonClassIL)
		wantValue(t, "bwt", res.BWT, -0.25)
	}
	for _, s := range []Scenario{ScenarioTaskIL, ScenarioDomainIL} {
		r := workedExample()
		r.Scenario = s
		wantValue(t, string(s)+" fwt", score(t, r, DefaultParams()).FWT, 0.1875)
	}
	// Unknown: computed, with a note.
	r := workedExample()
	r.Scenario = ""
	res := score(t, r, DefaultParams())
	wantValue(t, "unknown fwt", res.FWT, 0.1875)
	if len(res.Notes) != 1 || !strings.Contains(res.Notes[0], "scenario is unknown") {
		t.Errorf("notes %v", res.Notes)
	}
}

func TestNoAuxiliaryRows(t *testing.T) {
	r := workedExample()
	r.Joint, r.Initial = nil, nil
	res := score(t, r, DefaultParams())
	wantAbsent(t, "intransigence", res.Intransigence, ReasonNoJoint)
	wantAbsent(t, "fwt", res.FWT, ReasonNoInitial)

	r = workedExample()
	r.Joint = r.Joint[:2]
	r.Initial = r.Initial[:2] // b_0 and b_1 only
	res = score(t, r, DefaultParams())
	wantAbsent(t, "intransigence", res.Intransigence, ReasonMissingJoint+": task 2")
	wantAbsent(t, "fwt", res.FWT, ReasonMissingInitial+": task 2")

	// b_0 is never used.
	r = workedExample()
	r.Initial = r.Initial[1:]
	wantValue(t, "fwt without b_0", score(t, r, DefaultParams()).FWT, 0.1875)
}

func TestMissingCells(t *testing.T) {
	// The cell above the first superdiagonal (R_02) is read by no formula.
	r := workedExample()
	r.Matrix = matrixRows([][]float64{{0.75, 0.25, nan}, {0.5, 0.875, 0.25}, {0.625, 0.5, 1.0}})
	res := score(t, r, DefaultParams())
	for _, m := range MatrixMetrics {
		if v, _ := res.Metric(m); !v.OK {
			t.Errorf("%s absent without R_02: %s", m, v.Reason)
		}
	}

	// Without R_21, every metric that reads the last row is absent, the
	// others are not.
	r.Matrix = matrixRows([][]float64{{0.75, 0.25, 0.125}, {0.5, 0.875, 0.25}, {0.625, nan, 1.0}})
	res = score(t, r, DefaultParams())
	cell := ReasonMissingCell + ": after_task 2, eval_task 1"
	for _, m := range []string{"acc", "aia", "bwt", "forgetting", "relative_forgetting"} {
		v, _ := res.Metric(m)
		wantAbsent(t, m, v, cell)
		if v.Reason != cell {
			t.Errorf("%s: reason %q, want %q", m, v.Reason, cell)
		}
	}
	wantValue(t, "fwt", res.FWT, 0.1875)
	wantValue(t, "learning_acc", res.LearningAcc, 0.875)
	wantValue(t, "intransigence", res.Intransigence, 0.125)

	// Without the diagonal cell R_11.
	r.Matrix = matrixRows([][]float64{{0.75, 0.25, 0.125}, {0.5, nan, 0.25}, {0.625, 0.5, 1.0}})
	res = score(t, r, DefaultParams())
	for _, m := range []string{"aia", "bwt", "forgetting", "learning_acc", "intransigence"} {
		v, _ := res.Metric(m)
		wantAbsent(t, m, v, ReasonMissingCell+": after_task 1, eval_task 1")
	}
	wantValue(t, "acc", res.Acc, 2.125/3)
	wantValue(t, "fwt", res.FWT, 0.1875)
}

func TestRelativeForgettingDropsZeroMax(t *testing.T) {
	// Task 0 is never learned (max 0): its term leaves relative_forgetting
	// but stays in forgetting (f_0 = 0 − 0.25 = −0.25).
	r := &Run{Key: "z", Matrix: matrixRows([][]float64{
		{0, 0.5, 0.5},
		{0, 0.75, 0.5},
		{0.25, 0.5, 1},
	})}
	res := score(t, r, DefaultParams())
	wantValue(t, "forgetting", res.Forgetting, (-0.25+0.25)/2)
	wantValue(t, "relative_forgetting", res.RelativeForgetting, 0.25/0.75)

	r.Matrix = matrixRows([][]float64{{0, 0.5}, {0.25, 0.5}})
	res = score(t, r, DefaultParams())
	wantValue(t, "forgetting", res.Forgetting, -0.25)
	wantAbsent(t, "relative_forgetting", res.RelativeForgetting, ReasonAllZeroMax)
}

func TestWindowShorterThanSampling(t *testing.T) {
	// Two tasks of three samples each, 100 steps apart: length 300, Δ = 30
	// < ρ = 100.
	r := &Run{Key: "w"}
	for i := int64(0); i < 6; i++ {
		task := int(i / 3)
		r.Stream = append(r.Stream, StreamPoint{Step: 100 * i, TrainTask: task, EvalTask: 0, Acc: 0.5})
	}
	res := score(t, r, DefaultParams())
	wantAbsent(t, "windowed_forgetting", res.WindowedForgetting, ReasonWindowTooShort+": task 0")
	wantValue(t, "min_acc", res.MinAcc, 0.5)
	// With the whole task as the window (f = 1, Δ = 300) it is defined.
	res = score(t, r, Params{WindowFraction: 1})
	wantValue(t, "windowed_forgetting at f=1", res.WindowedForgetting, 0)
}

func TestStreamGaps(t *testing.T) {
	// A single step: no sampling interval.
	r := &Run{Key: "s", Stream: []StreamPoint{{5, 1, 0, 0.5}, {5, 1, 1, 0.5}}}
	res := score(t, r, DefaultParams())
	wantAbsent(t, "windowed_forgetting", res.WindowedForgetting, ReasonOneStep)
	if res.Rho != 0 {
		t.Errorf("rho %d", res.Rho)
	}
	wantValue(t, "min_acc", res.MinAcc, 0.5)
	wantAbsent(t, "stability_gap", res.StabilityGap, ReasonNoPointDuring+": task 0")

	// Task 0 is never evaluated after it was learned.
	r = &Run{Key: "s", Stream: []StreamPoint{{0, 0, 0, 0.5}, {1, 1, 1, 0.5}}}
	res = score(t, r, DefaultParams())
	wantAbsent(t, "min_acc", res.MinAcc, ReasonNoPointAfter+": task 0")
	wantAbsent(t, "wc_acc", res.WCAcc, ReasonNoPointAfter+": task 0")
	wantAbsent(t, "stability_gap", res.StabilityGap, ReasonNoPointNext+": task 0")

	// The last task is never evaluated: wc_acc has no A(T−1, end).
	r = &Run{Key: "s", Matrix: matrixRows([][]float64{{1, 0}, {1, 1}}),
		Stream: []StreamPoint{{0, 0, 0, 0.5}, {1, 1, 0, 0.25}}}
	res = score(t, r, DefaultParams())
	wantValue(t, "min_acc", res.MinAcc, 0.25)
	wantAbsent(t, "wc_acc", res.WCAcc, ReasonNoLastTaskPoint+": task 1")

	// Points of task 0 after learning, but further apart than the window.
	r = &Run{Key: "s"}
	for i := int64(0); i < 10; i++ {
		r.Stream = append(r.Stream, StreamPoint{Step: i, TrainTask: 0, EvalTask: 1, Acc: 0.5})
	}
	r.Stream = append(r.Stream, StreamPoint{Step: 10, TrainTask: 1, EvalTask: 0, Acc: 0.5},
		StreamPoint{Step: 12, TrainTask: 1, EvalTask: 0, Acc: 0.25}, StreamPoint{Step: 11, TrainTask: 1, EvalTask: 1, Acc: 0.5})
	res = score(t, r, DefaultParams())
	wantAbsent(t, "windowed_forgetting", res.WindowedForgetting, ReasonNoWindowPair+": task 0")
	// aaa: steps 0…9 evaluate only the future task 1 and are skipped.
	wantValue(t, "aaa", res.AAA, sum(0.5, 0.5, 0.25)/3)

	r = &Run{Key: "s", Stream: []StreamPoint{{0, 0, 1, 0.5}}}
	res = score(t, r, DefaultParams())
	wantAbsent(t, "aaa", res.AAA, ReasonNoSeenTask)
}

func TestNothingRecorded(t *testing.T) {
	res := score(t, &Run{Key: "empty"}, DefaultParams())
	wantAbsent(t, "n_tasks", res.NTasks, ReasonNoTasks)
	for _, m := range MatrixMetrics {
		v, _ := res.Metric(m)
		wantAbsent(t, m, v, ReasonNoMatrix)
	}
	for _, m := range StreamMetrics[:5] {
		v, _ := res.Metric(m)
		wantAbsent(t, m, v, ReasonNoStream)
	}
	wantAbsent(t, "lca", res.LCA, ReasonNoCurve)
}

func TestCurve(t *testing.T) {
	// No matrix or stream: the curve's own tasks count.
	r := &Run{Key: "c", Curve: []CurvePoint{{1, 0, 0.5}, {0, 0, 0.25}, {0, 1, 0.75}, {1, 1, 1}}}
	wantValue(t, "lca", score(t, r, DefaultParams()).LCA, sum(0.75/2, 1.75/2)/2)
	// A hole in the grid.
	r.Curve = r.Curve[:3]
	wantAbsent(t, "lca", score(t, r, DefaultParams()).LCA, ReasonMissingCurve+": task 1, batch 1")
	// A task of the run that has no curve at all.
	r = workedExample()
	r.Curve = r.Curve[:6]
	wantAbsent(t, "lca", score(t, r, DefaultParams()).LCA, ReasonMissingCurve+": task 2, batch 0")
}

func TestInputErrors(t *testing.T) {
	cases := []struct {
		name string
		edit func(r *Run)
		want string
	}{
		{"repeated cell", func(r *Run) { r.Matrix = append(r.Matrix, r.Matrix[0]) }, "recorded twice"},
		{"repeated initial", func(r *Run) { r.Initial = append(r.Initial, r.Initial[1]) }, "recorded twice"},
		{"repeated joint", func(r *Run) { r.Joint = append(r.Joint, r.Joint[1]) }, "recorded twice"},
		{"repeated stream", func(r *Run) { r.Stream = append(r.Stream, r.Stream[3]) }, "recorded twice"},
		{"repeated curve", func(r *Run) { r.Curve = append(r.Curve, r.Curve[3]) }, "recorded twice"},
		{"repeated diag", func(r *Run) { r.Diags = append(r.Diags, Diag{"Effective Rank", 0, 1}) }, "recorded twice"},
		{"negative acc", func(r *Run) { r.Matrix[2].Acc = -0.5 }, "not a finite number ≥ 0"},
		{"NaN acc", func(r *Run) { r.Stream[2].Acc = nan }, "not a finite number ≥ 0"},
		{"infinite curve", func(r *Run) { r.Curve[0].Acc = math.Inf(1) }, "not a finite number ≥ 0"},
		{"NaN diag", func(r *Run) { r.Diags[0].Value = nan }, "not finite"},
		{"negative task", func(r *Run) { r.Matrix[0].EvalTask = -1 }, "outside"},
		{"huge task", func(r *Run) { r.Matrix[0].EvalTask = int(beyondMaxIndex) }, "outside"},
		{"negative step", func(r *Run) { r.Stream[0].Step = -10 }, "outside"},
		{"two train tasks", func(r *Run) { r.Stream[1].TrainTask = 1 }, "train_task 0 and 1"},
		{"initial beyond T", func(r *Run) { r.Initial = append(r.Initial, InitialEntry{3, 0}) }, "names task 3, but the matrix has 3 tasks"},
		{"stream beyond T", func(r *Run) { r.Stream = append(r.Stream, StreamPoint{70, 3, 3, 0}) }, "names task 3"},
		{"curve beyond T", func(r *Run) { r.Curve = append(r.Curve, CurvePoint{5, 0, 0}) }, "names task 5"},
		{"bad scenario", func(r *Run) { r.Scenario = "online" }, "scenario"},
		{"bad meta scenario", func(r *Run) { r.Scenario = ""; r.Meta = map[string]string{"scenario": "x"} }, "metadata"},
		{"scenario conflict", func(r *Run) { r.Meta = map[string]string{"scenario": "class-il"} }, "disagrees"},
		{"empty diag name", func(r *Run) { r.Diags[0].Name = "  ??" }, "no ASCII letter"},
	}
	for _, c := range cases {
		r := workedExample()
		c.edit(r)
		if verr := r.Validate(); verr == nil || !strings.Contains(verr.Error(), c.want) {
			t.Errorf("%s: Validate: %v, want an error containing %q", c.name, verr, c.want)
		}
		_, err := Score(r, nil)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.want)
		}
		if err != nil && !strings.HasPrefix(err.Error(), "run worked: ") {
			t.Errorf("%s: error %q does not name the run", c.name, err)
		}
	}
	if err := workedExample().Validate(); err != nil {
		t.Errorf("Validate(worked example): %v", err)
	}
	for _, f := range []float64{0, -0.1, 1.5, nan} {
		if _, err := Score(workedExample(), &Params{WindowFraction: f}); err == nil {
			t.Errorf("window fraction %v accepted", f)
		}
	}
}

func TestSanitizeName(t *testing.T) {
	for in, want := range map[string]string{
		"effective_rank":          "effective_rank",
		"effectiveRank":           "effective_rank",
		"Effective Rank":          "effective_rank",
		"dormant-ratio":           "dormant_ratio",
		"ECEPerTask":              "ece_per_task",
		"ECE":                     "ece",
		"layer2Norm":              "layer2_norm",
		"L2norm":                  "l2norm",
		"__weight__norms__":       "weight_norms",
		"Dormant ratio (τ=0.025)": "dormant_ratio_0_025",
		"CKA final":               "cka_final",
		"srank":                   "srank",
		"":                        "",
		"  ??":                    "",
		"é":                       "",
	} {
		if got := SanitizeName(in); got != want {
			t.Errorf("SanitizeName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestMetricNames(t *testing.T) {
	res := score(t, workedExample(), DefaultParams())
	for _, m := range append(append([]string{}, Metrics...), CountMetrics...) {
		if _, ok := res.Metric(m); !ok {
			t.Errorf("Metric(%q) unknown", m)
		}
	}
	for _, m := range Metrics {
		if _, ok := HigherIsBetter(m); !ok {
			t.Errorf("HigherIsBetter(%q) has no direction", m)
		}
	}
	if _, ok := HigherIsBetter("n_tasks"); ok {
		t.Error("n_tasks has a direction")
	}
	if b, ok := HigherIsBetter("acc"); !ok || !b {
		t.Error("acc is not higher-better")
	}
	if b, ok := HigherIsBetter("forgetting"); !ok || b {
		t.Error("forgetting is not lower-better")
	}
	for _, bad := range []string{"val_acc", "diag_", "diag_Effective", "diag_a__b", ""} {
		if _, ok := res.Metric(bad); ok {
			t.Errorf("Metric(%q) known", bad)
		}
	}
	if len(MatrixMetrics)+len(StreamMetrics) != len(Metrics) {
		t.Error("matrix and stream metrics do not cover Metrics")
	}
	var _ protocol.Value = res.Acc
}
