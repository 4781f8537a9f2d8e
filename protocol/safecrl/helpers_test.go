package safecrl

import (
	"math"
	"testing"

	"github.com/crlbatch/crlbatch/protocol"
)

// eb builds one row compactly: e("A", 3).cost(1).succ(0).
type eb Episode

func e(task string, ret float64) eb { return eb{Task: task, Return: ret} }

func (x eb) cost(c float64) eb {
	x.Cost, x.HasCost = c, true
	return x
}

func (x eb) succ(s float64) eb {
	x.Success, x.HasSuccess = s, true
	return x
}

// rep repeats a row n times.
func rep(x eb, n int) []eb {
	out := make([]eb, n)
	for i := range out {
		out[i] = x
	}
	return out
}

func cat(parts ...[]eb) []eb {
	var out []eb
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

func mkRun(rows ...eb) *Run {
	r := &Run{Key: "test", Meta: map[string]string{}}
	for i, x := range rows {
		ep := Episode(x)
		ep.Episode, ep.HasEpisode = int64(i), true
		r.Episodes = append(r.Episodes, ep)
	}
	return r
}

func score(t testing.TB, w int, rows ...eb) *RunResult {
	t.Helper()
	p := Params{WindowEpisodes: w}
	res, err := Score(mkRun(rows...), &p)
	if err != nil {
		t.Fatal(err)
	}
	checkAllValid(t, res)
	return res
}

func task(t testing.TB, res *RunResult, name string) *TaskResult {
	t.Helper()
	for i := range res.Tasks {
		if res.Tasks[i].Task == name {
			return &res.Tasks[i]
		}
	}
	t.Fatalf("no task %q", name)
	return nil
}

// near is the agreement rule of PROTOCOLS (1e-9 relative, 1e-12 absolute);
// hand-computed values in these tests are mostly exact in float64 anyway.
func wantV(t testing.TB, what string, got protocol.Value, want float64) {
	t.Helper()
	if !got.OK {
		t.Errorf("%s absent (%q), want %v", what, got.Reason, want)
		return
	}
	if !agree(got.V, want) {
		t.Errorf("%s = %v, want %v", what, got.V, want)
	}
}

func wantNone(t testing.TB, what string, got protocol.Value, reason string) {
	t.Helper()
	if got.OK {
		t.Errorf("%s = %v, want absent (%q)", what, got.V, reason)
		return
	}
	if got.Reason != reason {
		t.Errorf("%s: reason %q, want %q", what, got.Reason, reason)
	}
}

// checkAllValid asserts the package-wide invariants: every absent value has a
// reason, every present one is finite, rates lie in [0, 1], counts add up,
// visits tile the rows.
func checkAllValid(t testing.TB, res *RunResult) {
	t.Helper()
	check := func(what string, v protocol.Value) {
		if err := v.Validate(); err != nil {
			t.Errorf("%s: %v", what, err)
		}
	}
	nEp, nVis := 0, 0
	for i := range res.Tasks {
		tr := &res.Tasks[i]
		for _, m := range TaskMetrics {
			v, ok := tr.Metric(m)
			if !ok {
				t.Fatalf("Metric(%q) unknown", m)
			}
			check(tr.Task+" "+m, v)
		}
		check(tr.Task+" initial", tr.InitialReward)
		if v := tr.SuccessRate; v.OK && (v.V < 0 || v.V > 1) {
			t.Errorf("%s success_rate %v outside [0, 1]", tr.Task, v.V)
		}
		if v := tr.ForgettingSuccess; v.OK && (v.V < -1 || v.V > 1) {
			t.Errorf("%s forgetting_success %v outside [-1, 1]", tr.Task, v.V)
		}
		if tr.NVisits < 1 || tr.NEpisodes < tr.NVisits || tr.NCostVisits > tr.NVisits ||
			tr.NCostEpisodes > tr.NEpisodes || tr.NSuccessEpisodes > tr.NEpisodes {
			t.Errorf("%s: inconsistent counts %+v", tr.Task, *tr)
		}
		nEp += tr.NEpisodes
		nVis += tr.NVisits
	}
	for _, m := range TaskMetrics {
		check("run "+m, res.SeedValue(m))
	}
	if nEp != res.NEpisodes || nVis != len(res.Visits) || res.NTasks != len(res.Tasks) {
		t.Errorf("counts: tasks hold %d episodes and %d visits; run %d episodes, %d visits, %d tasks (%d)",
			nEp, nVis, res.NEpisodes, len(res.Visits), res.NTasks, len(res.Tasks))
	}
	next := 0
	for i, v := range res.Visits {
		if v.StartRow != next || v.EndRow <= v.StartRow {
			t.Errorf("visit %d [%d, %d) does not follow row %d", i, v.StartRow, v.EndRow, next)
		}
		if i > 0 && res.Visits[i-1].Task == v.Task {
			t.Errorf("visits %d and %d share task %q: not maximal", i-1, i, v.Task)
		}
		next = v.EndRow
	}
	if next != res.NEpisodes {
		t.Errorf("visits end at row %d of %d", next, res.NEpisodes)
	}
}

func finiteF(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
