package safecrl

import (
	"errors"
	"fmt"

	"github.com/crlbatch/crlbatch/protocol"
	"github.com/crlbatch/crlbatch/protocol/stats"
)

// Score computes every per-task metric and the counts of one run. A nil p
// means DefaultParams. It fails only on invalid parameters or rows Score
// cannot take (see Run.Validate); everything else that makes a number
// unavailable yields an absent value with a reason.
func Score(run *Run, p *Params) (*RunResult, error) {
	if run == nil {
		return nil, errors.New("safecrl: nil run")
	}
	params := DefaultParams()
	if p != nil {
		params = *p
	}
	if err := params.Check(); err != nil {
		return nil, fmt.Errorf("run %s: %w", run.Key, err)
	}
	if err := run.Validate(); err != nil {
		return nil, err
	}
	eps := run.Episodes
	w := params.WindowEpisodes
	res := &RunResult{Key: run.Key, WindowEpisodes: w, NEpisodes: len(eps)}

	// Visits in row order; visitsOf[t] lists task t's visits (tasks in order
	// of first appearance).
	taskIdx := map[string]int{}
	var visitsOf [][]Visit
	for i := 0; i < len(eps); {
		task := eps[i].Task
		j := i + 1
		for j < len(eps) && eps[j].Task == task {
			j++
		}
		t, ok := taskIdx[task]
		if !ok {
			t = len(visitsOf)
			taskIdx[task] = t
			visitsOf = append(visitsOf, nil)
		}
		v := Visit{Task: task, Ordinal: len(visitsOf[t]), StartRow: i, EndRow: j}
		res.Visits = append(res.Visits, v)
		visitsOf[t] = append(visitsOf[t], v)
		i = j
	}
	res.Tasks = make([]TaskResult, len(visitsOf))
	for t, vs := range visitsOf {
		res.Tasks[t] = scoreTask(eps, vs, w)
	}
	res.NTasks = len(res.Tasks)
	return res, nil
}

// series is one quantity of a task laid out visit after visit: vals in row
// order and, for visit v, vals[start[v]:start[v+1]].
type series struct {
	vals  []float64
	start []int
}

func (s *series) visit(v int) []float64 { return s.vals[s.start[v]:s.start[v+1]] }

// head and tail return the first and last w values of xs, or all of them
// when there are fewer.
func head(xs []float64, w int) []float64 { return xs[:min(w, len(xs))] }
func tail(xs []float64, w int) []float64 { return xs[len(xs)-min(w, len(xs)):] }

// forgetting averages, over consecutive visits v, v+1 that both have values,
// mean(last w of v) − mean(first w of v+1). terms is the number of such
// pairs; the value is meaningful only when terms > 0.
func forgetting(s *series, nVisits, w int) (value float64, terms int) {
	sum := 0.0
	for v := 0; v+1 < nVisits; v++ {
		before, after := s.visit(v), s.visit(v+1)
		if len(before) == 0 || len(after) == 0 {
			continue
		}
		sum += stats.Mean(tail(before, w)) - stats.Mean(head(after, w))
		terms++
	}
	if terms == 0 {
		return 0, 0
	}
	return sum / float64(terms), terms
}

func scoreTask(eps []Episode, vs []Visit, w int) TaskResult {
	tr := TaskResult{Task: vs[0].Task, NVisits: len(vs)}
	n := 0
	for _, v := range vs {
		n += v.EndRow - v.StartRow
	}
	tr.NEpisodes = n

	ret := series{vals: make([]float64, 0, n), start: make([]int, 1, len(vs)+1)}
	succ := series{start: make([]int, 1, len(vs)+1)}
	costSum := 0.0
	for _, v := range vs {
		visitHasCost := false
		for i := v.StartRow; i < v.EndRow; i++ {
			e := &eps[i]
			ret.vals = append(ret.vals, e.Return)
			if e.HasCost {
				costSum += e.Cost
				tr.NCostEpisodes++
				visitHasCost = true
			}
			if e.HasSuccess {
				succ.vals = append(succ.vals, e.Success)
			}
		}
		if visitHasCost {
			tr.NCostVisits++
		}
		ret.start = append(ret.start, len(ret.vals))
		succ.start = append(succ.start, len(succ.vals))
	}
	tr.NSuccessEpisodes = len(succ.vals)

	tr.FinalTaskReward = finite(stats.Mean(tail(ret.vals, w)))
	tr.InitialReward = finite(stats.Mean(head(ret.visit(0), w)))

	if tr.NCostEpisodes == 0 {
		tr.TotalCost = protocol.None(ReasonNoCost)
		tr.MeanEpisodeCost = protocol.None(ReasonNoCost)
	} else {
		tr.TotalCost = finite(costSum / float64(tr.NCostVisits))
		tr.MeanEpisodeCost = finite(costSum / float64(tr.NCostEpisodes))
	}

	if len(vs) < 2 {
		tr.Forgetting = protocol.None(ReasonNeverRevisited)
	} else {
		// Every visit has at least one row, so every revisit has a term.
		f, _ := forgetting(&ret, len(vs), w)
		tr.Forgetting = finite(f)
	}
	tr.NormalizedForgetting = normalized(tr.Forgetting, tr.FinalTaskReward, tr.InitialReward)

	switch {
	case len(succ.vals) == 0:
		tr.SuccessRate = protocol.None(ReasonNoSuccess)
		tr.ForgettingSuccess = protocol.None(ReasonNoSuccess)
	default:
		tr.SuccessRate = finite(stats.Mean(tail(succ.vals, w)))
		if len(vs) < 2 {
			tr.ForgettingSuccess = protocol.None(ReasonNeverRevisited)
		} else if f, terms := forgetting(&succ, len(vs), w); terms == 0 {
			tr.ForgettingSuccess = protocol.None(ReasonNoSuccessPair)
		} else {
			tr.ForgettingSuccess = finite(f)
		}
	}
	return tr
}

// normalized is forgetting / |final − initial|: absent with forgetting's or
// final's reason when they are absent, and with ReasonZeroRange when the
// range is exactly zero.
func normalized(forg, final, initial protocol.Value) protocol.Value {
	switch {
	case !forg.OK:
		return protocol.None(forg.Reason)
	case !final.OK:
		return protocol.None(final.Reason)
	case !initial.OK:
		return protocol.None(initial.Reason)
	}
	rng := final.V - initial.V
	if r := finite(rng); !r.OK {
		return r
	}
	if rng == 0 {
		return protocol.None(ReasonZeroRange)
	}
	if rng < 0 {
		rng = -rng
	}
	return finite(forg.V / rng)
}
