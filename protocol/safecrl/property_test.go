package safecrl

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// randomRun makes a run with up to four tasks, revisits, short and long
// visits, and costs and successes recorded on some rows only. Returns are
// small integers when ints is set, so that shifting them stays exact.
func randomRun(rng *rand.Rand, ints bool) *Run {
	tasks := []string{"a", "b", "c", "d"}[:1+rng.IntN(4)]
	var rows []eb
	pCost, pSucc := rng.Float64(), rng.Float64()
	for range 1 + rng.IntN(10) {
		task := tasks[rng.IntN(len(tasks))]
		for range 1 + rng.IntN(30) {
			r := e(task, rng.NormFloat64()*50)
			if ints {
				r.Return = float64(rng.IntN(201) - 100)
			}
			if rng.Float64() < pCost {
				r = r.cost(float64(rng.IntN(10)))
			}
			if rng.Float64() < pSucc {
				r = r.succ(float64(rng.IntN(2)))
			}
			rows = append(rows, r)
		}
	}
	return mkRun(rows...)
}

func TestRandomInvariants(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 2026))
	for i := range 500 {
		ints := i%2 == 0
		run := randomRun(rng, ints)
		w := 1 + rng.IntN(25)
		res, err := Score(run, &Params{WindowEpisodes: w})
		if err != nil {
			t.Fatal(err)
		}
		checkAllValid(t, res)

		for ti := range res.Tasks {
			tr := &res.Tasks[ti]
			var rets, succ []float64
			costSum, allCost := 0.0, true
			for _, ep := range run.Episodes {
				if ep.Task != tr.Task {
					continue
				}
				rets = append(rets, ep.Return)
				if ep.HasSuccess {
					succ = append(succ, ep.Success)
				}
				if ep.HasCost {
					costSum += ep.Cost
				} else {
					allCost = false
				}
			}
			// final_task_reward and success_rate straight from their
			// definitions.
			wantV(t, fmt.Sprintf("case %d %s final", i, tr.Task), tr.FinalTaskReward, mean(lastN(rets, w)))
			if len(succ) > 0 {
				wantV(t, fmt.Sprintf("case %d %s success", i, tr.Task), tr.SuccessRate, mean(lastN(succ, w)))
			}
			if allCost {
				wantV(t, fmt.Sprintf("case %d %s total_cost", i, tr.Task), tr.TotalCost, costSum/float64(tr.NVisits))
				wantV(t, fmt.Sprintf("case %d %s mean_episode_cost", i, tr.Task), tr.MeanEpisodeCost, costSum/float64(tr.NEpisodes))
			}
			if (tr.NVisits > 1) != tr.Forgetting.OK {
				t.Errorf("case %d %s: %d visits but forgetting %v", i, tr.Task, tr.NVisits, tr.Forgetting)
			}
		}

		if !ints {
			continue
		}
		// Shifting every return by a constant moves final_task_reward by it
		// and leaves forgetting and normalized forgetting unchanged (exact:
		// integer returns).
		shifted := &Run{Key: run.Key, Episodes: append([]Episode{}, run.Episodes...)}
		for j := range shifted.Episodes {
			shifted.Episodes[j].Return += 1000
		}
		res2, err := Score(shifted, &Params{WindowEpisodes: w})
		if err != nil {
			t.Fatal(err)
		}
		for ti := range res.Tasks {
			x, y := &res.Tasks[ti], &res2.Tasks[ti]
			if !agree(x.FinalTaskReward.V+1000, y.FinalTaskReward.V) {
				t.Errorf("case %d %s: final %v shifted to %v", i, x.Task, x.FinalTaskReward.V, y.FinalTaskReward.V)
			}
			for _, pair := range [][2]string{{"forgetting", "forgetting"}, {"normalized_forgetting", "normalized_forgetting"}} {
				a, _ := x.Metric(pair[0])
				b, _ := y.Metric(pair[1])
				if a.OK != b.OK || a.Reason != b.Reason || (a.OK && !agree(a.V, b.V)) {
					t.Errorf("case %d %s %s: %v then %v after the shift", i, x.Task, pair[0], a, b)
				}
			}
		}
	}
}

func lastN(xs []float64, w int) []float64 {
	if len(xs) > w {
		return xs[len(xs)-w:]
	}
	return xs
}

func mean(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// fuzzValues are the returns and costs a fuzz byte can pick besides small
// numbers: extremes, subnormals and signed zeros.
var fuzzValues = []float64{
	0, math.Copysign(0, -1), 1, -1, 0.5, 1e308, -1e308, 1.7e308, -1.7e308,
	math.MaxFloat64, -math.MaxFloat64, 5e-324, -5e-324, 1e-300, 3, 1e15,
}

// FuzzScore drives Score with runs decoded from fuzz bytes, three bytes a
// row: task and flags, return, cost. It must never panic. A recorded success
// of 0.5 (flags 0xe0 with the success bit 0x08) must be refused, naming the
// first such row; a run without one must be scored, and then every absent
// value has a reason and every present one is finite.
func FuzzScore(f *testing.F) {
	f.Add([]byte{0, 1, 2, 1, 3, 4, 0, 5, 6}, uint8(2))
	f.Add([]byte{0x1c, 7, 7, 0x1d, 7, 7, 0x1c, 8, 8}, uint8(1))
	f.Add([]byte{0xfc, 200, 9, 0x0d, 100, 9, 0xfc, 50, 9, 0x1d, 0, 0}, uint8(20))
	f.Add([]byte{}, uint8(0))
	f.Add([]byte{0xe8, 1, 2}, uint8(5))                         // success 0.5 recorded: refused
	f.Add([]byte{0x18, 1, 2, 0xe0, 1, 2, 0xe8, 3, 4}, uint8(3)) // 0.5 unrecorded, then recorded at row 2
	f.Add([]byte{0xe0, 1, 2, 0xe4, 3, 4}, uint8(3))             // 0.5 never recorded: scored
	f.Fuzz(func(t *testing.T, data []byte, w uint8) {
		run := &Run{Key: "fuzz"}
		half := -1 // the first row that records a success of 0.5
		pick := func(b byte) float64 {
			if int(b) < len(fuzzValues) {
				return fuzzValues[b]
			}
			return float64(int8(b)) / 4
		}
		for i := 0; i+2 < len(data); i += 3 {
			flags := data[i]
			ep := Episode{
				Task:       string(rune('a' + flags&3)),
				Return:     pick(data[i+1]),
				HasCost:    flags&4 != 0,
				Cost:       pick(data[i+2]),
				HasSuccess: flags&8 != 0,
				Success:    float64(flags >> 4 & 1),
			}
			if flags&0xe0 == 0xe0 {
				ep.Success = 0.5 // invalid when recorded: Score must refuse it
				if ep.HasSuccess && half < 0 {
					half = len(run.Episodes)
				}
			}
			run.Episodes = append(run.Episodes, ep)
		}
		p := &Params{WindowEpisodes: int(w % 30)}
		res, err := Score(run, p)
		switch {
		case p.Check() != nil:
			if err == nil {
				t.Fatalf("window %d: Score accepted it", p.WindowEpisodes)
			}
			return
		case half >= 0:
			if err == nil {
				t.Fatalf("row %d records success 0.5: Score accepted it", half)
			}
			if want := fmt.Sprintf("row %d (task %q): success 0.5", half, run.Episodes[half].Task); !strings.Contains(err.Error(), want) {
				t.Fatalf("row %d records success 0.5: error %q does not say %q", half, err, want)
			}
			return
		case err != nil:
			t.Fatalf("a valid run (returns and costs finite, successes 0 or 1) was refused: %v", err)
		}
		checkAllValid(t, res)
	})
}

func BenchmarkScore(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	var rows []eb
	for v := range 200 {
		task := fmt.Sprintf("t%d", v%10)
		for range 50 {
			rows = append(rows, e(task, rng.NormFloat64()).cost(rng.Float64()).succ(float64(rng.IntN(2))))
		}
	}
	run := mkRun(rows...)
	p := DefaultParams()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Score(run, &p); err != nil {
			b.Fatal(err)
		}
	}
}
