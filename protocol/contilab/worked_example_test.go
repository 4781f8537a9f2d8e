package contilab

import (
	"testing"
)

// workedExample is a three-task run whose every metric is worked out by hand
// below. Accuracies are multiples of 1/8, so most sums are exact.
//
// Accuracy matrix R (rows: after_task i, columns: eval_task j), initial
// accuracies b and joint accuracies a*:
//
//	        j=0     j=1     j=2
//	i=0   0.75    0.25    0.125
//	i=1   0.5     0.875   0.25
//	i=2   0.625   0.5     1.0
//	b     0.125   0.125   0.0
//	a*    1.0     1.0     1.0
//
// Stream (ρ = 10; task 0 trains at steps 10, 20, task 1 at 30, 40, task 2
// at 50, 60), A(k, n):
//
//	step  train   k=0     k=1     k=2
//	10    0       0.5     0.125   .
//	20    0       0.75    .       .
//	30    1       0.25    0.5     .
//	40    1       0.625   0.875   .
//	50    2       0.5     0.5     0.25
//	60    2       0.375   0.75    0.875
//
// Learning curve Z_{t,b} (β = 2):
//
//	        b=0     b=1     b=2
//	t=0   0.25    0.5     0.75
//	t=1   0.5     0.5     1.0
//	t=2   0.0     0.25    0.5
func workedExample() *Run {
	r := &Run{
		Key:      "worked",
		Scenario: ScenarioTaskIL,
		Matrix: matrixRows([][]float64{
			{0.75, 0.25, 0.125},
			{0.5, 0.875, 0.25},
			{0.625, 0.5, 1.0},
		}),
		Initial: []InitialEntry{{0, 0.125}, {1, 0.125}, {2, 0}},
		Joint:   []JointEntry{{0, 1}, {1, 1}, {2, 1}},
		Stream: []StreamPoint{
			{10, 0, 0, 0.5}, {10, 0, 1, 0.125}, {20, 0, 0, 0.75},
			{30, 1, 0, 0.25}, {30, 1, 1, 0.5}, {40, 1, 0, 0.625}, {40, 1, 1, 0.875},
			{50, 2, 0, 0.5}, {50, 2, 1, 0.5}, {50, 2, 2, 0.25},
			{60, 2, 0, 0.375}, {60, 2, 1, 0.75}, {60, 2, 2, 0.875},
		},
		Diags: []Diag{
			{"effective_rank", 0, 10}, {"effective_rank", 1, 12}, {"effective_rank", 2, 14},
			{"dormantRatio", 0, 0.25}, {"dormant ratio", 1, 0.75},
		},
	}
	z := [][]float64{{0.25, 0.5, 0.75}, {0.5, 0.5, 1.0}, {0.0, 0.25, 0.5}}
	for t, row := range z {
		for b, x := range row {
			r.Curve = append(r.Curve, CurvePoint{t, b, x})
		}
	}
	return r
}

func TestWorkedExampleMatrix(t *testing.T) {
	res := score(t, workedExample(), DefaultParams())
	wantValue(t, "n_tasks", res.NTasks, 3)
	if res.TasksFrom != "matrix" {
		t.Errorf("tasks from %q", res.TasksFrom)
	}

	// acc = (R20 + R21 + R22)/3 = (0.625 + 0.5 + 1.0)/3 = 2.125/3.
	wantValue(t, "acc", res.Acc, 2.125/3)
	// aia = [R00/1 + (R10+R11)/2 + (R20+R21+R22)/3]/3
	//     = [0.75 + 1.375/2 + 2.125/3]/3 = [0.75 + 0.6875 + 0.7083…]/3.
	wantValue(t, "aia", res.AIA, sum(0.75, 1.375/2, 2.125/3)/3)
	// bwt = [(R20 − R00) + (R21 − R11)]/2 = [−0.125 − 0.375]/2 = −0.25.
	wantValue(t, "bwt", res.BWT, -0.25)
	// fwt = [(R01 − b1) + (R12 − b2)]/2 = [0.125 + 0.25]/2 = 0.1875.
	wantValue(t, "fwt", res.FWT, 0.1875)
	// f0 = max(R00, R10) − R20 = 0.75 − 0.625 = 0.125;
	// f1 = max(R11) − R21 = 0.875 − 0.5 = 0.375; forgetting = 0.5/2 = 0.25.
	wantValue(t, "forgetting", res.Forgetting, 0.25)
	// relative = [0.125/0.75 + 0.375/0.875]/2 = [1/6 + 3/7]/2 = 25/84.
	wantValue(t, "relative_forgetting", res.RelativeForgetting, (0.125/0.75+0.375/0.875)/2)
	// learning_acc = (0.75 + 0.875 + 1.0)/3 = 0.875.
	wantValue(t, "learning_acc", res.LearningAcc, 0.875)
	// intransigence = [(1 − 0.75) + (1 − 0.875) + (1 − 1)]/3 = 0.375/3 = 0.125.
	wantValue(t, "intransigence", res.Intransigence, 0.125)

	if len(res.Matrix) != 9 || res.Matrix[5] != (MatrixEntry{1, 2, 0.25}) {
		t.Errorf("matrix %v", res.Matrix)
	}
	if len(res.Notes) != 0 {
		t.Errorf("notes %v", res.Notes)
	}
}

func TestWorkedExampleStream(t *testing.T) {
	// A window fraction of 0.5 makes Δ = 0.5·(2 steps·10) = 10 = ρ: allowed,
	// since only Δ < ρ is undefined.
	p := Params{WindowFraction: 0.5}
	res := score(t, workedExample(), p)
	if res.Rho != 10 {
		t.Errorf("rho = %d", res.Rho)
	}

	// min_acc: task 0 after it was learned (steps 30…60): min(0.25, 0.625,
	// 0.5, 0.375) = 0.25; task 1 (steps 50, 60): min(0.5, 0.75) = 0.5;
	// (0.25 + 0.5)/2 = 0.375.
	wantValue(t, "min_acc", res.MinAcc, 0.375)
	// wc_acc = (1/3)·A(2, 60) + (2/3)·min_acc = 0.875/3 + 0.75/3.
	wantValue(t, "wc_acc", res.WCAcc, (1.0/3)*0.875+(1-1.0/3)*0.375)
	// stability gap: task 0: last while training it (step 20) 0.75 minus
	// its minimum while task 1 trains, min(0.25, 0.625) = 0.25: 0.5; task 1:
	// 0.875 (step 40) − min(0.5, 0.75) = 0.375; mean 0.4375.
	wantValue(t, "stability_gap", res.StabilityGap, 0.4375)
	// windowed forgetting, Δ = 10, so only neighbouring samples pair up:
	// task 0 after learning: 0.25 (30), 0.625 (40), 0.5 (50), 0.375 (60);
	// drops 0.25−0.625 = −0.375, 0.625−0.5 = 0.125, 0.5−0.375 = 0.125:
	// WF0 = 0.125 (the larger drop 0.625 − 0.375 = 0.25 spans 20 > Δ).
	// Task 1: 0.5 (50), 0.75 (60): drop −0.25, WF1 = max(0, −0.25) = 0.
	// Mean (0.125 + 0)/2 = 0.0625.
	wantValue(t, "windowed_forgetting", res.WindowedForgetting, 0.0625)
	// aaa: per step, the mean over eval_task ≤ train_task (step 10 leaves
	// out the future task 1): 0.5, 0.75, (0.25+0.5)/2, (0.625+0.875)/2,
	// (0.5+0.5+0.25)/3, (0.375+0.75+0.875)/3; their mean.
	wantValue(t, "aaa", res.AAA, sum(0.5, 0.75, 0.75/2, 1.5/2, 1.25/3, 2.0/3)/6)
	// lca: Z0 = (0.25+0.5+0)/3, Z1 = (0.5+0.5+0.25)/3, Z2 = (0.75+1+0.5)/3;
	// (Z0 + Z1 + Z2)/3.
	wantValue(t, "lca", res.LCA, sum(0.75/3, 1.25/3, 2.25/3)/3)

	// The default fraction makes Δ = 0.1·20 = 2 < ρ = 10.
	def := score(t, workedExample(), DefaultParams())
	wantAbsent(t, "windowed_forgetting at 0.1", def.WindowedForgetting, ReasonWindowTooShort+": task 0")
	wantValue(t, "stability_gap at 0.1", def.StabilityGap, 0.4375)
}

func TestWorkedExampleDiagnostics(t *testing.T) {
	res := score(t, workedExample(), DefaultParams())
	if len(res.Diagnostics) != 2 {
		t.Fatalf("diagnostics %+v", res.Diagnostics)
	}
	er, dr := res.Diagnostics[0], res.Diagnostics[1]
	if er.Column != "diag_effective_rank" || er.N != 3 || dr.Column != "diag_dormant_ratio" || dr.N != 2 {
		t.Errorf("diagnostics %+v", res.Diagnostics)
	}
	wantValue(t, "effective_rank", er.Value, 12)
	// "dormantRatio" and "dormant ratio" are one diagnostic: (0.25+0.75)/2.
	wantValue(t, "dormant_ratio", dr.Value, 0.5)
	v, ok := res.Metric("diag_dormant_ratio")
	if !ok {
		t.Fatal("diag_dormant_ratio unknown")
	}
	wantValue(t, "Metric(diag_dormant_ratio)", v, 0.5)
	v, ok = res.Metric("diag_srank")
	if !ok {
		t.Fatal("diag_srank unknown")
	}
	wantAbsent(t, "diag_srank", v, ReasonNoDiag)
	if got := DiagColumns([]*RunResult{res, res}); len(got) != 2 || got[0] != "diag_effective_rank" {
		t.Errorf("DiagColumns = %v", got)
	}
}

// TestDefaultWindowStream runs the default window fraction over a regular
// stream: two tasks, ten samples each, ρ = 5, so length = 50 and Δ = 0.1·50
// = 5 = ρ. Task 0 reads 0.9 while it trains; afterwards it reads 0.4 at the
// first step of task 1 (a stability gap), recovers to 0.8, then drops once
// by 0.3 between neighbouring samples.
func TestDefaultWindowStream(t *testing.T) {
	r := &Run{Key: "regular"}
	after := []float64{0.4, 0.6, 0.8, 0.8, 0.8, 0.5, 0.5, 0.6, 0.7, 0.7}
	for i := 0; i < 10; i++ {
		r.Stream = append(r.Stream, StreamPoint{Step: int64(5 * i), TrainTask: 0, EvalTask: 0, Acc: 0.9})
	}
	for i := 0; i < 10; i++ {
		n := int64(50 + 5*i)
		r.Stream = append(r.Stream,
			StreamPoint{Step: n, TrainTask: 1, EvalTask: 0, Acc: after[i]},
			StreamPoint{Step: n, TrainTask: 1, EvalTask: 1, Acc: 0.5})
	}
	res := score(t, r, DefaultParams())
	wantValue(t, "n_tasks (from the stream)", res.NTasks, 2)
	if res.TasksFrom != "stream" {
		t.Errorf("tasks from %q", res.TasksFrom)
	}
	// T = 2: a single term each, over task 0.
	wantValue(t, "stability_gap", res.StabilityGap, 0.9-0.4)
	wantValue(t, "min_acc", res.MinAcc, 0.4)
	wantValue(t, "wc_acc", res.WCAcc, 0.5*0.5+(1-0.5)*0.4)
	// The largest drop between samples 5 apart: 0.8 → 0.5 = 0.30000000000000004.
	wantValue(t, "windowed_forgetting", res.WindowedForgetting, 0.8-0.5)
	wantAbsent(t, "acc", res.Acc, ReasonNoMatrix)
	wantAbsent(t, "lca", res.LCA, ReasonNoCurve)

	// One sample fewer for task 0 makes its length 45 and Δ = 4.5 < 5.
	r.Stream = r.Stream[1:]
	res = score(t, r, DefaultParams())
	wantAbsent(t, "windowed_forgetting", res.WindowedForgetting, ReasonWindowTooShort+": task 0")
}
