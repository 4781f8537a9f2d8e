package contilab

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/crlbatch/crlbatch/protocol"
)

type cell struct{ a, b int }

// index is a validated, indexed Run.
type index struct {
	t         int // T; 0 when unknown
	tasksFrom string

	matrix  map[cell]float64
	initial map[int]float64
	joint   map[int]float64

	// stream sorted by (step, eval_task); steps are the distinct steps in
	// ascending order; byTask holds each eval task's points in step order.
	stream    []StreamPoint
	steps     []int64
	stepCount map[int]int // distinct steps per train task
	byTask    map[int][]StreamPoint

	curve                   map[cell]float64
	curveMaxTask, curveMaxB int

	diags []Diagnostic
}

// Score computes every metric of PROTOCOLS 4 for one run. p nil means
// DefaultParams. The error reports input that no metric can be computed
// from honestly: a repeated record, a negative or non-finite accuracy, a
// non-finite diagnostic, a negative or oversized index, a stream step with two
// training tasks, a record naming a task beyond the run's T, an unknown
// scenario, or invalid parameters. Everything else that makes a metric
// undefined yields an absent value with a reason.
func Score(run *Run, p *Params) (*RunResult, error) {
	params := DefaultParams()
	if p != nil {
		params = *p
	}
	if err := params.Check(); err != nil {
		return nil, err
	}
	scen, err := resolveScenario(run)
	if err != nil {
		return nil, fmt.Errorf("run %s: %w", run.Key, err)
	}
	ix, err := newIndex(run)
	if err != nil {
		return nil, fmt.Errorf("run %s: %w", run.Key, err)
	}
	res := &RunResult{Key: run.Key, Scenario: scen, TasksFrom: ix.tasksFrom, Diagnostics: ix.diags}
	if ix.t > 0 {
		res.NTasks = protocol.Some(float64(ix.t))
	} else {
		res.NTasks = protocol.None(ReasonNoTasks)
	}
	res.Matrix = make([]MatrixEntry, len(run.Matrix))
	copy(res.Matrix, run.Matrix)
	slices.SortFunc(res.Matrix, func(x, y MatrixEntry) int {
		return cmp.Or(cmp.Compare(x.AfterTask, y.AfterTask), cmp.Compare(x.EvalTask, y.EvalTask))
	})
	if len(ix.steps) >= 2 {
		res.Rho = ix.rho()
	}

	ix.matrixMetrics(scen, res)
	ix.streamMetrics(params, res)
	res.LCA = ix.lca()

	if scen == ScenarioUnknown && res.FWT.OK {
		res.Notes = append(res.Notes, "the scenario is unknown: fwt assumes that every task can be evaluated before it is learned (not Class-IL)")
	}
	return res, nil
}

// Validate reports the input errors Score would report (see Score), without
// computing any metric.
func (r *Run) Validate() error {
	if _, err := resolveScenario(r); err != nil {
		return fmt.Errorf("run %s: %w", r.Key, err)
	}
	if _, err := newIndex(r); err != nil {
		return fmt.Errorf("run %s: %w", r.Key, err)
	}
	return nil
}

func resolveScenario(run *Run) (Scenario, error) {
	s, err := ParseScenario(string(run.Scenario))
	if err != nil {
		return "", err
	}
	m, err := ParseScenario(run.Meta["scenario"])
	if err != nil {
		return "", fmt.Errorf("metadata: %w", err)
	}
	switch {
	case s == ScenarioUnknown:
		return m, nil
	case m != ScenarioUnknown && m != s:
		return "", fmt.Errorf("scenario %q disagrees with the metadata's %q", s, m)
	}
	return s, nil
}

func checkAcc(what string, x float64) error {
	if math.IsNaN(x) || math.IsInf(x, 0) || x < 0 {
		return fmt.Errorf("%s: accuracy %v is not a finite number ≥ 0", what, x)
	}
	return nil
}

func checkIndex(what, name string, i int) error {
	if i < 0 || i > MaxIndex {
		return fmt.Errorf("%s: %s %d is outside 0…%d", what, name, i, MaxIndex)
	}
	return nil
}

func newIndex(run *Run) (*index, error) {
	ix := &index{
		matrix:    make(map[cell]float64, len(run.Matrix)),
		initial:   make(map[int]float64, len(run.Initial)),
		joint:     make(map[int]float64, len(run.Joint)),
		byTask:    map[int][]StreamPoint{},
		stepCount: map[int]int{},
		curve:     make(map[cell]float64, len(run.Curve)),
	}
	maxMatrix := -1
	for n, e := range run.Matrix {
		what := fmt.Sprintf("matrix row %d", n)
		if err := checkIndex(what, "after_task", e.AfterTask); err != nil {
			return nil, err
		}
		if err := checkIndex(what, "eval_task", e.EvalTask); err != nil {
			return nil, err
		}
		if err := checkAcc(what, e.Acc); err != nil {
			return nil, err
		}
		c := cell{e.AfterTask, e.EvalTask}
		if _, dup := ix.matrix[c]; dup {
			return nil, fmt.Errorf("%s: after_task %d, eval_task %d is recorded twice", what, e.AfterTask, e.EvalTask)
		}
		ix.matrix[c] = e.Acc
		maxMatrix = max(maxMatrix, e.AfterTask, e.EvalTask)
	}
	for n, e := range run.Initial {
		if err := addTaskAcc(ix.initial, fmt.Sprintf("initial row %d", n), e.EvalTask, e.Acc); err != nil {
			return nil, err
		}
	}
	for n, e := range run.Joint {
		if err := addTaskAcc(ix.joint, fmt.Sprintf("joint row %d", n), e.EvalTask, e.Acc); err != nil {
			return nil, err
		}
	}

	maxStream := -1
	ix.stream = make([]StreamPoint, len(run.Stream))
	for n, s := range run.Stream {
		what := fmt.Sprintf("stream row %d", n)
		if s.Step < 0 || s.Step > MaxStep {
			return nil, fmt.Errorf("%s: step %d is outside 0…%d", what, s.Step, int64(MaxStep))
		}
		if err := checkIndex(what, "train_task", s.TrainTask); err != nil {
			return nil, err
		}
		if err := checkIndex(what, "eval_task", s.EvalTask); err != nil {
			return nil, err
		}
		if err := checkAcc(what, s.Acc); err != nil {
			return nil, err
		}
		ix.stream[n] = s
		maxStream = max(maxStream, s.TrainTask, s.EvalTask)
	}
	slices.SortFunc(ix.stream, func(x, y StreamPoint) int {
		return cmp.Or(cmp.Compare(x.Step, y.Step), cmp.Compare(x.EvalTask, y.EvalTask))
	})
	for n, s := range ix.stream {
		if n > 0 && ix.stream[n-1].Step == s.Step {
			prev := ix.stream[n-1]
			if prev.EvalTask == s.EvalTask {
				return nil, fmt.Errorf("stream: step %d, eval_task %d is recorded twice", s.Step, s.EvalTask)
			}
			if prev.TrainTask != s.TrainTask {
				return nil, fmt.Errorf("stream: step %d is recorded with train_task %d and %d", s.Step, prev.TrainTask, s.TrainTask)
			}
			continue
		}
		ix.steps = append(ix.steps, s.Step)
		ix.stepCount[s.TrainTask]++
	}
	for _, s := range ix.stream {
		ix.byTask[s.EvalTask] = append(ix.byTask[s.EvalTask], s)
	}

	ix.curveMaxTask, ix.curveMaxB = -1, -1
	for n, c := range run.Curve {
		what := fmt.Sprintf("curve row %d", n)
		if err := checkIndex(what, "task", c.Task); err != nil {
			return nil, err
		}
		if err := checkIndex(what, "batch", c.Batch); err != nil {
			return nil, err
		}
		if err := checkAcc(what, c.Acc); err != nil {
			return nil, err
		}
		k := cell{c.Task, c.Batch}
		if _, dup := ix.curve[k]; dup {
			return nil, fmt.Errorf("%s: task %d, batch %d is recorded twice", what, c.Task, c.Batch)
		}
		ix.curve[k] = c.Acc
		ix.curveMaxTask = max(ix.curveMaxTask, c.Task)
		ix.curveMaxB = max(ix.curveMaxB, c.Batch)
	}

	switch {
	case maxMatrix >= 0:
		ix.t, ix.tasksFrom = maxMatrix+1, "matrix"
	case maxStream >= 0:
		ix.t, ix.tasksFrom = maxStream+1, "stream"
	}
	if ix.t > 0 {
		beyond := func(what string, task int) error {
			if task >= ix.t {
				return fmt.Errorf("%s names task %d, but the %s has %d tasks", what, task, ix.tasksFrom, ix.t)
			}
			return nil
		}
		for _, tbl := range []struct {
			name string
			m    map[int]float64
		}{{"an initial row", ix.initial}, {"a joint row", ix.joint}} {
			for task := range tbl.m {
				if err := beyond(tbl.name, task); err != nil {
					return nil, err
				}
			}
		}
		if err := beyond("a stream row", maxStream); err != nil {
			return nil, err
		}
		if err := beyond("a curve row", ix.curveMaxTask); err != nil {
			return nil, err
		}
	}

	diags, err := averageDiags(run.Diags)
	if err != nil {
		return nil, err
	}
	ix.diags = diags
	return ix, nil
}

func addTaskAcc(m map[int]float64, what string, task int, acc float64) error {
	if err := checkIndex(what, "eval_task", task); err != nil {
		return err
	}
	if err := checkAcc(what, acc); err != nil {
		return err
	}
	if _, dup := m[task]; dup {
		return fmt.Errorf("%s: eval_task %d is recorded twice", what, task)
	}
	m[task] = acc
	return nil
}

// averageDiags groups diagnostics by sanitized name (in order of first
// appearance) and averages each name's values summed in task order.
func averageDiags(rows []Diag) ([]Diagnostic, error) {
	type group struct {
		name  string
		tasks map[int]float64
	}
	var groups []*group
	byName := map[string]*group{}
	for n, d := range rows {
		what := fmt.Sprintf("diag row %d", n)
		name := SanitizeName(d.Name)
		if name == "" {
			return nil, fmt.Errorf("%s: name %q has no ASCII letter or digit", what, d.Name)
		}
		if err := checkIndex(what, "task", d.Task); err != nil {
			return nil, err
		}
		if math.IsNaN(d.Value) || math.IsInf(d.Value, 0) {
			return nil, fmt.Errorf("%s: value %v is not finite", what, d.Value)
		}
		g, ok := byName[name]
		if !ok {
			g = &group{name: name, tasks: map[int]float64{}}
			byName[name] = g
			groups = append(groups, g)
		}
		if _, dup := g.tasks[d.Task]; dup {
			return nil, fmt.Errorf("%s: diagnostic %q of task %d is recorded twice", what, name, d.Task)
		}
		g.tasks[d.Task] = d.Value
	}
	out := make([]Diagnostic, 0, len(groups))
	for _, g := range groups {
		tasks := make([]int, 0, len(g.tasks))
		for t := range g.tasks {
			tasks = append(tasks, t)
		}
		slices.Sort(tasks)
		s := 0.0
		for _, t := range tasks {
			s += g.tasks[t]
		}
		out = append(out, Diagnostic{
			Name:   g.name,
			Column: DiagPrefix + g.name,
			Value:  protocol.Finite(s / float64(len(tasks))),
			N:      len(tasks),
		})
	}
	return out, nil
}

// rho is the smallest positive gap between distinct steps (len(steps) ≥ 2).
func (ix *index) rho() int64 {
	r := int64(math.MaxInt64)
	for i := 1; i < len(ix.steps); i++ {
		r = min(r, ix.steps[i]-ix.steps[i-1])
	}
	return r
}

func missingCell(i, j int) protocol.Value {
	return protocol.None(fmt.Sprintf("%s: after_task %d, eval_task %d", ReasonMissingCell, i, j))
}

func taskReason(reason string, k int) protocol.Value {
	return protocol.None(fmt.Sprintf("%s: task %d", reason, k))
}

// matrixMetrics fills acc … intransigence. Every sum runs over task indices
// in ascending order; within one term, cells are looked up (and a missing one
// reported) in the order the formula names them.
func (ix *index) matrixMetrics(scen Scenario, res *RunResult) {
	all := []*protocol.Value{&res.Acc, &res.AIA, &res.BWT, &res.FWT, &res.Forgetting,
		&res.RelativeForgetting, &res.LearningAcc, &res.Intransigence}
	if len(ix.matrix) == 0 {
		for _, v := range all {
			*v = protocol.None(ReasonNoMatrix)
		}
		return
	}
	T := ix.t
	R := func(i, j int) (float64, bool) {
		v, ok := ix.matrix[cell{i, j}]
		return v, ok
	}
	fT := float64(T)

	// acc = (1/T) Σ_j R_{T−1,j}
	res.Acc = func() protocol.Value {
		s := 0.0
		for j := 0; j < T; j++ {
			r, ok := R(T-1, j)
			if !ok {
				return missingCell(T-1, j)
			}
			s += r
		}
		return protocol.Finite(s / fT)
	}()

	// aia = (1/T) Σ_i [(Σ_{j≤i} R_ij)/(i+1)]
	res.AIA = func() protocol.Value {
		outer := 0.0
		for i := 0; i < T; i++ {
			inner := 0.0
			for j := 0; j <= i; j++ {
				r, ok := R(i, j)
				if !ok {
					return missingCell(i, j)
				}
				inner += r
			}
			outer += inner / float64(i+1)
		}
		return protocol.Finite(outer / fT)
	}()

	// learning_acc = (1/T) Σ_j R_jj
	res.LearningAcc = func() protocol.Value {
		s := 0.0
		for j := 0; j < T; j++ {
			r, ok := R(j, j)
			if !ok {
				return missingCell(j, j)
			}
			s += r
		}
		return protocol.Finite(s / fT)
	}()

	// intransigence = (1/T) Σ_j (a*_j − R_jj)
	res.Intransigence = func() protocol.Value {
		if len(ix.joint) == 0 {
			return protocol.None(ReasonNoJoint)
		}
		s := 0.0
		for j := 0; j < T; j++ {
			r, ok := R(j, j)
			if !ok {
				return missingCell(j, j)
			}
			a, ok := ix.joint[j]
			if !ok {
				return taskReason(ReasonMissingJoint, j)
			}
			s += a - r
		}
		return protocol.Finite(s / fT)
	}()

	if T < 2 {
		for _, v := range []*protocol.Value{&res.BWT, &res.FWT, &res.Forgetting, &res.RelativeForgetting} {
			*v = protocol.None(ReasonFewerThanTwoTasks)
		}
		return
	}
	fT1 := float64(T - 1)

	// bwt = (1/(T−1)) Σ_{j<T−1} (R_{T−1,j} − R_jj)
	res.BWT = func() protocol.Value {
		s := 0.0
		for j := 0; j < T-1; j++ {
			last, ok := R(T-1, j)
			if !ok {
				return missingCell(T-1, j)
			}
			r, ok := R(j, j)
			if !ok {
				return missingCell(j, j)
			}
			s += last - r
		}
		return protocol.Finite(s / fT1)
	}()

	// fwt = (1/(T−1)) Σ_{j≥1} (R_{j−1,j} − b_j)
	res.FWT = func() protocol.Value {
		if scen == ScenarioClassIL {
			return protocol.None(ReasonClassIL)
		}
		if len(ix.initial) == 0 {
			return protocol.None(ReasonNoInitial)
		}
		s := 0.0
		for j := 1; j < T; j++ {
			r, ok := R(j-1, j)
			if !ok {
				return missingCell(j-1, j)
			}
			b, ok := ix.initial[j]
			if !ok {
				return taskReason(ReasonMissingInitial, j)
			}
			s += r - b
		}
		return protocol.Finite(s / fT1)
	}()

	// forgetting: f_j = max_{l∈[j,T−2]} R_lj − R_{T−1,j}, averaged over
	// j < T−1; relative_forgetting: f_j / max_l R_lj over the j whose max
	// is not 0.
	res.Forgetting, res.RelativeForgetting = func() (protocol.Value, protocol.Value) {
		sum, rel, nRel := 0.0, 0.0, 0
		for j := 0; j < T-1; j++ {
			best := 0.0
			for l := j; l <= T-2; l++ {
				r, ok := R(l, j)
				if !ok {
					v := missingCell(l, j)
					return v, v
				}
				if l == j || r > best {
					best = r
				}
			}
			last, ok := R(T-1, j)
			if !ok {
				v := missingCell(T-1, j)
				return v, v
			}
			f := best - last
			sum += f
			if best != 0 {
				rel += f / best
				nRel++
			}
		}
		forgetting := protocol.Finite(sum / fT1)
		if nRel == 0 {
			return forgetting, protocol.None(ReasonAllZeroMax)
		}
		return forgetting, protocol.Finite(rel / float64(nRel))
	}()
}

// streamMetrics fills min_acc, wc_acc, stability_gap, windowed_forgetting
// and aaa. Per-task terms are summed over k = 0 … T−2 in ascending order;
// within a task, points are visited in step order.
func (ix *index) streamMetrics(p Params, res *RunResult) {
	if len(ix.stream) == 0 {
		for _, v := range []*protocol.Value{&res.MinAcc, &res.WCAcc, &res.StabilityGap, &res.WindowedForgetting, &res.AAA} {
			*v = protocol.None(ReasonNoStream)
		}
		return
	}
	res.AAA = ix.aaa()
	T := ix.t
	if T < 2 {
		for _, v := range []*protocol.Value{&res.MinAcc, &res.WCAcc, &res.StabilityGap, &res.WindowedForgetting} {
			*v = protocol.None(ReasonFewerThanTwoTasks)
		}
		return
	}
	fT1 := float64(T - 1)

	// min_acc: mean over k < T−1 of min A(k, n) over points with train_task > k.
	res.MinAcc = func() protocol.Value {
		s := 0.0
		for k := 0; k < T-1; k++ {
			m, found := 0.0, false
			for _, pt := range ix.byTask[k] {
				if pt.TrainTask > k && (!found || pt.Acc < m) {
					m, found = pt.Acc, true
				}
			}
			if !found {
				return taskReason(ReasonNoPointAfter, k)
			}
			s += m
		}
		return protocol.Finite(s / fT1)
	}()

	// wc_acc = (1/T)·A(T−1, end) + (1 − 1/T)·min_acc, with A(T−1, end) the
	// last (largest-step) point of task T−1.
	res.WCAcc = func() protocol.Value {
		if !res.MinAcc.OK {
			return protocol.None(res.MinAcc.Reason)
		}
		pts := ix.byTask[T-1]
		if len(pts) == 0 {
			return taskReason(ReasonNoLastTaskPoint, T-1)
		}
		end := pts[len(pts)-1].Acc
		inv := 1 / float64(T)
		// The conversions keep the compiler from fusing a product and the
		// sum into one FMA.
		return protocol.Finite(float64(inv*end) + float64((1-inv)*res.MinAcc.V))
	}()

	// stability_gap_k = (last A(k, n) with train_task = k) − (min A(k, n)
	// with train_task = k+1), averaged over k < T−1.
	res.StabilityGap = func() protocol.Value {
		s := 0.0
		for k := 0; k < T-1; k++ {
			last, haveLast := 0.0, false
			low, haveLow := 0.0, false
			for _, pt := range ix.byTask[k] {
				switch pt.TrainTask {
				case k:
					last, haveLast = pt.Acc, true
				case k + 1:
					if !haveLow || pt.Acc < low {
						low, haveLow = pt.Acc, true
					}
				}
			}
			if !haveLast {
				return taskReason(ReasonNoPointDuring, k)
			}
			if !haveLow {
				return taskReason(ReasonNoPointNext, k)
			}
			s += last - low
		}
		return protocol.Finite(s / fT1)
	}()

	res.WindowedForgetting = ix.windowedForgetting(p.WindowFraction)
}

// windowedForgetting: ρ = the smallest positive gap between distinct steps;
// length_k = (distinct steps with train_task = k)·ρ; Δ_k = f·length_k (null
// when Δ_k < ρ); WF_k = max(0, max over point pairs m < n ≤ m + Δ_k, both
// after task k was learned, of A(k, m) − A(k, n)); the mean over k < T−1.
func (ix *index) windowedForgetting(f float64) protocol.Value {
	if len(ix.steps) < 2 {
		return protocol.None(ReasonOneStep)
	}
	T := ix.t
	rho := ix.rho()
	fRho := float64(rho)
	s := 0.0
	for k := 0; k < T-1; k++ {
		delta := f * (float64(ix.stepCount[k]) * fRho)
		if delta < fRho {
			return taskReason(ReasonWindowTooShort, k)
		}
		var after []StreamPoint
		for _, pt := range ix.byTask[k] {
			if pt.TrainTask > k {
				after = append(after, pt)
			}
		}
		if len(after) == 0 {
			return taskReason(ReasonNoPointAfter, k)
		}
		// A deque of indices into after, steps increasing and accuracies
		// strictly decreasing: its front is the best earlier point still
		// inside the window of the current point. max_m (A_m − A_n) equals
		// (max_m A_m) − A_n exactly, because rounding is monotone.
		deque := make([]int, 0, len(after))
		best, havePair := 0.0, false
		for n, pt := range after {
			for len(deque) > 0 && float64(pt.Step-after[deque[0]].Step) > delta {
				deque = deque[1:]
			}
			if len(deque) > 0 {
				d := after[deque[0]].Acc - pt.Acc
				if !havePair || d > best {
					best, havePair = d, true
				}
			}
			for len(deque) > 0 && after[deque[len(deque)-1]].Acc <= pt.Acc {
				deque = deque[:len(deque)-1]
			}
			deque = append(deque, n)
		}
		if !havePair {
			return taskReason(ReasonNoWindowPair, k)
		}
		s += max(0, best)
	}
	return protocol.Finite(s / float64(T-1))
}

// aaa: at each step (ascending), the mean accuracy over the rows with
// eval_task ≤ train_task (summed in eval_task order); steps without such a
// row are skipped; then the mean over the steps kept.
func (ix *index) aaa() protocol.Value {
	total, nSteps := 0.0, 0
	for i := 0; i < len(ix.stream); {
		j := i
		s, n := 0.0, 0
		for ; j < len(ix.stream) && ix.stream[j].Step == ix.stream[i].Step; j++ {
			pt := ix.stream[j]
			if pt.EvalTask <= pt.TrainTask {
				s += pt.Acc
				n++
			}
		}
		if n > 0 {
			total += s / float64(n)
			nSteps++
		}
		i = j
	}
	if nSteps == 0 {
		return protocol.None(ReasonNoSeenTask)
	}
	return protocol.Finite(total / float64(nSteps))
}

// lca: β = the largest batch index recorded; the curve must hold every task
// 0 … T−1 (T of the run, or 1 + the largest curve task when the run has no
// matrix or stream) at every batch 0 … β. Z_b = (Σ_t Z_{t,b})/T in task
// order; lca = (Σ_b Z_b)/(β+1) in batch order.
func (ix *index) lca() protocol.Value {
	if len(ix.curve) == 0 {
		return protocol.None(ReasonNoCurve)
	}
	nT := ix.t
	if nT == 0 {
		nT = ix.curveMaxTask + 1
	}
	beta := ix.curveMaxB
	if int64(nT)*int64(beta+1) > int64(len(ix.curve)) {
		// Some point is missing; find the first in (batch, task) order.
		// The grid is larger than the map, so this loop stops within
		// len(curve)+1 probes.
		for b := 0; b <= beta; b++ {
			for t := 0; t < nT; t++ {
				if _, ok := ix.curve[cell{t, b}]; !ok {
					return protocol.None(fmt.Sprintf("%s: task %d, batch %d", ReasonMissingCurve, t, b))
				}
			}
		}
	}
	total := 0.0
	for b := 0; b <= beta; b++ {
		s := 0.0
		for t := 0; t < nT; t++ {
			s += ix.curve[cell{t, b}]
		}
		total += s / float64(nT)
	}
	return protocol.Finite(total / float64(beta+1))
}
