package contilab

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/crlbatch/crlbatch/protocol"
)

// The cases in testdata/reference_cases.json were computed by
// testdata/reference.py, a Python implementation of PROTOCOLS 4 and the
// resolutions in doc.go, written without this package's code (brute force
// where this package is clever). Every value must agree to 1e-9 relative
// (1e-12 absolute), and every null, reason, count and note must be equal.

const referencePath = "testdata/reference_cases.json"

type refRunCase struct {
	Name  string `json:"name"`
	Input struct {
		Rows           []map[string]json.RawMessage `json:"rows"`
		Scenario       *string                      `json:"scenario"`
		Meta           map[string]string            `json:"meta"`
		WindowFraction float64                      `json:"window_fraction"`
	} `json:"input"`
	Expected struct {
		Error    bool                `json:"error"`
		NTasks   *int                `json:"n_tasks"`
		Scenario string              `json:"scenario"`
		Rho      int64               `json:"rho"`
		Metrics  map[string]*float64 `json:"metrics"`
		Reasons  map[string]string   `json:"reasons"`
		Diags    []struct {
			Column string  `json:"column"`
			Value  float64 `json:"value"`
			N      int     `json:"n"`
		} `json:"diags"`
		Matrix [][3]float64 `json:"matrix"`
	} `json:"expected"`
}

type refBenchCase struct {
	Name  string `json:"name"`
	Input struct {
		Runs []struct {
			Family    string   `json:"family"`
			Benchmark string   `json:"benchmark"`
			Value     *float64 `json:"value"`
		} `json:"runs"`
		HigherIsBetter bool `json:"higher_is_better"`
	} `json:"input"`
	Expected struct {
		Families           []string            `json:"families"`
		Benchmarks         []string            `json:"benchmarks"`
		Ranked             []string            `json:"ranked"`
		Notes              []string            `json:"notes"`
		AverageRank        map[string]*float64 `json:"average_rank"`
		NBenchmarks        map[string]int      `json:"n_benchmarks"`
		Reasons            map[string]string   `json:"reasons"`
		FriedmanStatistic  *float64            `json:"friedman_statistic"`
		FriedmanPValue     *float64            `json:"friedman_p_value"`
		CriticalDifference *float64            `json:"critical_difference"`
	} `json:"expected"`
}

type refFile struct {
	Runs       []refRunCase   `json:"runs"`
	Benchmarks []refBenchCase `json:"benchmarks"`
}

func loadReference(t *testing.T) *refFile {
	t.Helper()
	data, err := os.ReadFile(referencePath)
	if err != nil {
		t.Fatal(err)
	}
	var f refFile
	if err := json.Unmarshal(data, &f); err != nil {
		t.Fatal(err)
	}
	return &f
}

func agree(got, want float64) bool {
	d := math.Abs(got - want)
	return d <= 1e-12 || d <= 1e-9*math.Abs(want)
}

// cmpRef compares a value with the reference's number or null (and reason).
func cmpRef(t *testing.T, what string, got protocol.Value, want *float64, reason string) {
	t.Helper()
	switch {
	case want == nil && got.OK:
		t.Errorf("%s = %v, reference: null (%s)", what, got.V, reason)
	case want == nil && got.Reason != reason:
		t.Errorf("%s: reason %q, reference %q", what, got.Reason, reason)
	case want != nil && !got.OK:
		t.Errorf("%s: absent (%s), reference %v", what, got.Reason, *want)
	case want != nil && !agree(got.V, *want):
		t.Errorf("%s = %.17g, reference %.17g", what, got.V, *want)
	}
}

func runFromRows(t *testing.T, c *refRunCase) *Run {
	t.Helper()
	r := &Run{Key: c.Name, Meta: c.Input.Meta}
	if c.Input.Scenario != nil {
		r.Scenario = Scenario(*c.Input.Scenario)
	}
	for i, raw := range c.Input.Rows {
		get := func(key string, dst any) {
			if err := json.Unmarshal(raw[key], dst); err != nil {
				t.Fatalf("row %d %s: %v", i, key, err)
			}
		}
		var kind string
		get("kind", &kind)
		switch kind {
		case "matrix":
			var e MatrixEntry
			get("after_task", &e.AfterTask)
			get("eval_task", &e.EvalTask)
			get("acc", &e.Acc)
			r.Matrix = append(r.Matrix, e)
		case "initial":
			var e InitialEntry
			get("eval_task", &e.EvalTask)
			get("acc", &e.Acc)
			r.Initial = append(r.Initial, e)
		case "joint":
			var e JointEntry
			get("eval_task", &e.EvalTask)
			get("acc", &e.Acc)
			r.Joint = append(r.Joint, e)
		case "stream":
			var e StreamPoint
			get("step", &e.Step)
			get("train_task", &e.TrainTask)
			get("eval_task", &e.EvalTask)
			get("acc", &e.Acc)
			r.Stream = append(r.Stream, e)
		case "curve":
			var e CurvePoint
			get("task", &e.Task)
			get("batch", &e.Batch)
			get("acc", &e.Acc)
			r.Curve = append(r.Curve, e)
		case "diag":
			var e Diag
			get("name", &e.Name)
			get("task", &e.Task)
			get("value", &e.Value)
			r.Diags = append(r.Diags, e)
		default:
			t.Fatalf("row %d: kind %q", i, kind)
		}
	}
	return r
}

func TestIndependentReference(t *testing.T) {
	ref := loadReference(t)
	if len(ref.Runs) < 30 {
		t.Fatalf("only %d reference runs", len(ref.Runs))
	}
	for i := range ref.Runs {
		c := &ref.Runs[i]
		t.Run(c.Name, func(t *testing.T) {
			r := runFromRows(t, c)
			res, err := Score(r, &Params{WindowFraction: c.Input.WindowFraction})
			want := &c.Expected
			if want.Error {
				if err == nil {
					t.Fatal("accepted; the reference rejects the run")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if want.NTasks == nil {
				cmpRef(t, "n_tasks", res.NTasks, nil, ReasonNoTasks)
			} else {
				x := float64(*want.NTasks)
				cmpRef(t, "n_tasks", res.NTasks, &x, "")
			}
			if string(res.Scenario) != want.Scenario {
				t.Errorf("scenario %q, reference %q", res.Scenario, want.Scenario)
			}
			if res.Rho != want.Rho {
				t.Errorf("rho %d, reference %d", res.Rho, want.Rho)
			}
			if len(want.Metrics) != len(Metrics) {
				t.Fatalf("reference has %d metrics", len(want.Metrics))
			}
			for _, m := range Metrics {
				w, ok := want.Metrics[m]
				if !ok {
					t.Fatalf("reference lacks %s", m)
				}
				got, _ := res.Metric(m)
				cmpRef(t, m, got, w, want.Reasons[m])
			}
			if len(res.Diagnostics) != len(want.Diags) {
				t.Fatalf("%d diagnostics, reference %d", len(res.Diagnostics), len(want.Diags))
			}
			for i, d := range want.Diags {
				got := res.Diagnostics[i]
				if got.Column != d.Column || got.N != d.N {
					t.Errorf("diagnostic %d: %s (%d), reference %s (%d)", i, got.Column, got.N, d.Column, d.N)
				}
				cmpRef(t, d.Column, got.Value, &d.Value, "")
			}
			if len(res.Matrix) != len(want.Matrix) {
				t.Fatalf("%d matrix cells, reference %d", len(res.Matrix), len(want.Matrix))
			}
			for i, e := range want.Matrix {
				if g := res.Matrix[i]; float64(g.AfterTask) != e[0] || float64(g.EvalTask) != e[1] || g.Acc != e[2] {
					t.Errorf("matrix cell %d: %+v, reference %v", i, g, e)
				}
			}
		})
	}
}

func TestIndependentReferenceBenchmarks(t *testing.T) {
	ref := loadReference(t)
	if len(ref.Benchmarks) < 10 {
		t.Fatalf("only %d benchmark cases", len(ref.Benchmarks))
	}
	for i := range ref.Benchmarks {
		c := &ref.Benchmarks[i]
		t.Run(c.Name, func(t *testing.T) {
			var vals []BenchmarkValue
			for _, r := range c.Input.Runs {
				v := protocol.None("absent")
				if r.Value != nil {
					v = protocol.Some(*r.Value)
				}
				vals = append(vals, BenchmarkValue{Family: r.Family, Benchmark: r.Benchmark, Value: v})
			}
			tbl := NewMeanTable(vals)
			want := &c.Expected
			if !equalStrings(tbl.Families, want.Families) || !equalStrings(tbl.Benchmarks, want.Benchmarks) {
				t.Fatalf("families %q, benchmarks %q; reference %q, %q", tbl.Families, tbl.Benchmarks, want.Families, want.Benchmarks)
			}
			res, err := Benchmarks(tbl.Families, tbl.Benchmarks, c.Input.HigherIsBetter, tbl.Score)
			if err != nil {
				t.Fatal(err)
			}
			if !equalStrings(res.Ranked, want.Ranked) {
				t.Errorf("ranked %q, reference %q", res.Ranked, want.Ranked)
			}
			if !equalStrings(res.Notes, want.Notes) {
				t.Errorf("notes %q, reference %q", res.Notes, want.Notes)
			}
			for _, fr := range res.Families {
				cmpRef(t, "average rank of "+fr.Family, fr.AverageRank, want.AverageRank[fr.Family], want.Reasons["average_rank:"+fr.Family])
				if fr.NBenchmarks != want.NBenchmarks[fr.Family] {
					t.Errorf("n_benchmarks of %s = %d, reference %d", fr.Family, fr.NBenchmarks, want.NBenchmarks[fr.Family])
				}
			}
			cmpRef(t, "friedman statistic", res.FriedmanStatistic, want.FriedmanStatistic, want.Reasons["friedman_statistic"])
			cmpRef(t, "friedman p", res.FriedmanP, want.FriedmanPValue, want.Reasons["friedman_p_value"])
			cmpRef(t, "critical difference", res.CriticalDifference, want.CriticalDifference, want.Reasons["critical_difference"])
		})
	}
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestReferenceRegenerates reruns testdata/reference.py and checks that it
// reproduces the committed file byte for byte. It needs /usr/bin/python3 with
// SciPy and runs only when CRLBATCH_REGEN_CHECK=1.
func TestReferenceRegenerates(t *testing.T) {
	if os.Getenv("CRLBATCH_REGEN_CHECK") != "1" {
		t.Skip("set CRLBATCH_REGEN_CHECK=1 to rerun testdata/reference.py")
	}
	const python = "/usr/bin/python3"
	if err := exec.Command(python, "-c", "import scipy, numpy").Run(); err != nil {
		t.Skipf("%s with scipy is not available: %v", python, err)
	}
	out := filepath.Join(t.TempDir(), "reference_cases.json")
	if msg, err := exec.Command(python, "testdata/reference.py", out).CombinedOutput(); err != nil {
		t.Fatalf("reference.py: %v\n%s", err, msg)
	}
	fresh, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	committed, err := os.ReadFile(referencePath)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(fresh, committed) {
		t.Errorf("testdata/reference.py no longer reproduces %s; regenerate it and review the diff", referencePath)
	}
}
