package skyfall

import (
	"fmt"
	"math"
	"slices"

	"github.com/crlbatch/crlbatch/protocol"
)

// Reference is a reference trajectory for regret: one reward per row.
type Reference struct {
	Rewards []float64
}

// Score computes every per-label, per-interval and per-run metric of one
// trace. ref may be nil (regret is then absent). It fails only on inputs that
// make the protocol undefined: a ceiling map without one of the trace's
// labels, a named component the trace does not carry, invalid parameters.
func Score(t *Trace, p *Params, ref *Reference) (*RunResult, error) {
	if err := p.Check(); err != nil {
		return nil, err
	}
	if err := t.Validate(); err != nil {
		return nil, err
	}
	n := t.Len()
	nl := len(t.LabelNames)
	res := &RunResult{Key: t.Key, NSteps: n, NLabels: nl}

	epCols := make([][]float64, 0, len(p.EpisodeEnd))
	for _, c := range p.EpisodeEnd {
		col, ok := t.Components[c]
		if !ok {
			return nil, fmt.Errorf("trace %s: episode-end component %q was not kept by the reader", t.Key, c)
		}
		epCols = append(epCols, col)
	}
	var solveCol []float64
	if p.SolveComponent != "" {
		col, ok := t.Components[p.SolveComponent]
		if !ok {
			return nil, fmt.Errorf("trace %s: solve component %q was not kept by the reader", t.Key, p.SolveComponent)
		}
		solveCol = col
	}
	for _, c := range t.Uncarried {
		if c == p.SolveComponent || slices.Contains(p.EpisodeEnd, c) {
			res.Uncarried = append(res.Uncarried, c)
		}
	}
	ceil := make([]float64, nl)
	if p.Ceiling != nil {
		for i, name := range t.LabelNames {
			v, err := p.Ceiling.For(name)
			if err != nil {
				return nil, fmt.Errorf("trace %s: %w", t.Key, err)
			}
			ceil[i] = v
		}
	}
	isEnd := func(i int) bool {
		for _, col := range epCols {
			if col[i] != 0 {
				return true
			}
		}
		return false
	}
	alpha := p.AlphaValue()
	named := len(epCols) > 0

	gamma := DefaultGamma
	switch {
	case p.Gamma != nil:
		gamma = *p.Gamma
	case t.HasGamma:
		gamma = t.Gamma
	}
	res.Gamma = gamma
	// Σ γ^i r_i and Σ r_i in row order. γ^i is math.Pow(γ, i) every 256 rows
	// and a running product in between, which keeps its relative error below
	// 1e-13 without a Pow per row.
	var disc, und, runRank float64
	g, gi := 1.0, 0

	ivs, err := t.Intervals()
	if err != nil {
		return nil, err
	}
	res.NIntervals = len(ivs)
	if len(ivs) > 0 {
		res.NShifts = len(ivs) - 1
	}
	r := t.Rewards

	// Pooled per-label sums, in row order (intervals are in row order).
	lsum := make([]float64, nl)
	lcnt := make([]int, nl)
	rsum := make([]float64, nl)
	rcnt := make([]int, nl)
	labIvs := make([][]int, nl)
	res.Intervals = make([]IntervalResult, len(ivs))
	policyTail := make([]protocol.Value, len(ivs))
	for k, iv := range ivs {
		l := iv.Label
		labIvs[l] = append(labIvs[l], k)
		rows := r[iv.Start:iv.End]
		// One pass carries several independent sums so that their
		// floating-point latency chains overlap: the label's pooled sum, the
		// interval's sum (whose running means also give the segment peak A),
		// and the run's discounted and undiscounted returns.
		s := lsum[l]
		is := 0.0
		peak := math.Inf(-1)
		for j, x := range rows {
			s += x
			is += x
			if m := is / float64(j+1); m > peak {
				peak = m
			}
			if gi&255 == 0 {
				g = math.Pow(gamma, float64(gi))
			}
			disc += float64(g * x)
			und += x
			g *= gamma
			gi++
		}
		lsum[l] = s
		lcnt[l] += len(rows)
		L := len(rows)
		ir := &res.Intervals[k]
		*ir = IntervalResult{
			Label: t.LabelNames[l], Origin: t.Origins[l], Index: k, Encounter: iv.Encounter,
			StartRow: iv.Start, EndRow: iv.End, NSteps: L,
		}
		if t.Steps != nil {
			for i := iv.Start; i < iv.End; i++ {
				if t.HasStep[i] {
					v := t.Steps[i]
					ir.FirstStep = &v
					break
				}
			}
			for i := iv.End - 1; i >= iv.Start; i-- {
				if t.HasStep[i] {
					v := t.Steps[i]
					ir.LastStep = &v
					break
				}
			}
		}
		ir.Mean = protocol.Finite(is / float64(L))
		nt := TailCount(p.TailFraction, L)
		ir.TailMean = protocol.Finite(seqMean(rows[L-nt:]))
		if named {
			ps, pc := 0.0, 0
			for i := iv.End - nt; i < iv.End; i++ {
				if !isEnd(i) {
					ps += r[i]
					pc++
				}
			}
			if pc > 0 {
				policyTail[k] = protocol.Finite(ps / float64(pc))
			} else {
				policyTail[k] = protocol.None(ReasonTailEmpty)
			}
		}
		if k == 0 {
			ir.AdaptationSpeed = protocol.None(ReasonFirstInterval)
			ir.RecoveryTime = protocol.None(ReasonFirstInterval)
			ir.ZeroShotReward = protocol.None(ReasonFirstInterval)
			continue
		}
		w := rows
		if p.Window == WindowPostShift {
			w = r[iv.Start:]
		}
		var hasR bool
		var R float64
		if p.Ceiling != nil {
			hasR, R = true, ceil[l]
		}
		segPeak := math.NaN()
		if p.Window == WindowSegment {
			segPeak = peak
			if math.IsInf(is, 0) || math.IsNaN(is) {
				// A running mean left float64: A = max r̄_τ is not a number.
				segPeak = math.Inf(1)
			}
		}
		ir.AdaptationSpeed, ir.RecoveryTime = adaptRecover(w, p, alpha, hasR, R, segPeak)
		m := p.ZeroShotWindow
		if m > len(w) {
			m = len(w)
		}
		ir.ZeroShotReward = protocol.Finite(seqMean(w[:m]))
	}

	// Pooled variance, second pass in row order.
	lmean := make([]float64, nl)
	for l := range lmean {
		lmean[l] = lsum[l] / float64(lcnt[l])
	}
	// Second pass: the pooled and the per-interval sums of squares together,
	// and the effective-rank sums, so that their latency chains overlap.
	lss := make([]float64, nl)
	for k, iv := range ivs {
		l := iv.Label
		mu := lmean[l]
		ir := &res.Intervals[k]
		imu := ir.Mean.V
		s, is := lss[l], 0.0
		rows := r[iv.Start:iv.End]
		if t.EffRank == nil {
			for _, x := range rows {
				d, e := x-mu, x-imu
				s += float64(d * d)
				is += float64(e * e)
			}
		} else {
			ls, lc := rsum[l], rcnt[l]
			er, has := t.EffRank[iv.Start:iv.End], t.HasEffRank[iv.Start:iv.End]
			for i, x := range rows {
				d, e := x-mu, x-imu
				s += float64(d * d)
				is += float64(e * e)
				// A select, not a branch: readings come and go irregularly.
				// Adding 0 leaves a sum unchanged.
				v, c := 0.0, 0
				if has[i] {
					v, c = er[i], 1
				}
				ls += v
				runRank += v
				lc += c
			}
			rsum[l], rcnt[l] = ls, lc
		}
		lss[l] = s
		if L := iv.Len(); L < 2 {
			ir.Variance = protocol.None(ReasonOneRowInterval)
		} else {
			ir.Variance = protocol.Finite(is / float64(L-1))
		}
	}

	// Forgetting per origin.
	forget := map[string]protocol.Value{}
	encounters := map[string][]int{}
	for k, iv := range ivs {
		o := t.Origins[iv.Label]
		encounters[o] = append(encounters[o], k)
	}
	for o, enc := range encounters {
		if len(enc) < 2 {
			forget[o] = protocol.None(ReasonNeedsRecurrence)
			continue
		}
		m1, ok1 := encounterMean(r, ivs[enc[0]], named, isEnd)
		m2, ok2 := encounterMean(r, ivs[enc[1]], named, isEnd)
		if !ok1 || !ok2 {
			forget[o] = protocol.None(ReasonEncounterEmpty)
			continue
		}
		forget[o] = protocol.Finite(m1 - m2)
	}

	res.Labels = make([]LabelResult, nl)
	for l := range res.Labels {
		lr := &res.Labels[l]
		lr.Label, lr.Origin = t.LabelNames[l], t.Origins[l]
		lr.NSteps, lr.NIntervals = lcnt[l], len(labIvs[l])
		lr.PerConfigurationReward = protocol.Finite(lmean[l])
		if lcnt[l] < 2 {
			lr.StabilityVariance = protocol.None(ReasonFewerThanTwoRows)
		} else {
			lr.StabilityVariance = protocol.Finite(lss[l] / float64(lcnt[l]-1))
		}
		var adapt, rec, zs, settled, pol []protocol.Value
		for _, k := range labIvs[l] {
			ir := &res.Intervals[k]
			lr.StabilityVariancePerInterval = append(lr.StabilityVariancePerInterval, ir.Variance)
			settled = append(settled, ir.TailMean)
			if named {
				pol = append(pol, policyTail[k])
			}
			if k == 0 {
				continue
			}
			adapt = append(adapt, ir.AdaptationSpeed)
			rec = append(rec, ir.RecoveryTime)
			zs = append(zs, ir.ZeroShotReward)
		}
		if len(adapt) == 0 {
			lr.AdaptationSpeed = protocol.None(ReasonNoShift)
			lr.RecoveryTime = protocol.None(ReasonNoShift)
			lr.ZeroShotReward = protocol.None(ReasonNoShift)
		} else {
			lr.AdaptationSpeed = protocol.MeanOfPresent(adapt, protocol.FirstReason(adapt, ReasonNeverReached))
			lr.RecoveryTime = protocol.MeanOfPresent(rec, protocol.FirstReason(rec, ReasonNeverRecovered))
			lr.ZeroShotReward = protocol.MeanOfPresent(zs, protocol.FirstReason(zs, ReasonNoShift))
		}
		lr.SettledReward = protocol.MeanOfPresent(settled, protocol.FirstReason(settled, "the label never ran"))
		if named {
			lr.SettledRewardPolicy = protocol.MeanOfPresent(pol, ReasonTailEmpty)
		} else {
			lr.SettledRewardPolicy = protocol.None(ReasonNoEpisodeEnd)
		}
		lr.Forgetting = forget[t.Origins[l]]
		if p.Ceiling != nil {
			lr.UpperBound = protocol.Finite(ceil[l])
			first := res.Intervals[labIvs[l][0]]
			if first.TailMean.OK {
				lr.PerformanceGap = protocol.Finite(ceil[l] - first.TailMean.V)
			} else {
				lr.PerformanceGap = protocol.None(first.TailMean.Reason)
			}
		} else {
			lr.UpperBound = protocol.None(ReasonNoCeiling)
			lr.PerformanceGap = protocol.None(ReasonNoCeiling)
		}
		if rcnt[l] > 0 {
			lr.EffectiveRank = protocol.Finite(rsum[l] / float64(rcnt[l]))
		} else {
			lr.EffectiveRank = protocol.None(ReasonNoRankRecorded)
		}
	}

	// Per-run metrics.
	res.ReturnDiscounted = protocol.Finite(disc)
	res.ReturnUndiscounted = protocol.Finite(und)

	if t.Invalid != nil {
		bad, carried := 0, 0
		for _, v := range t.Invalid {
			// v is 1 (true), 0 (false) or -1 (absent): counted without a branch.
			carried += int(v>>7) + 1
			bad += int(v) & 1 &^ int(v>>7&1)
		}
		if carried > 0 {
			res.InvalidActionRate = protocol.Finite(float64(bad) / float64(carried))
		} else {
			res.InvalidActionRate = protocol.None(ReasonNoInvalidField)
		}
	} else {
		res.InvalidActionRate = protocol.None(ReasonNoInvalidField)
	}
	if solveCol != nil && n > 0 {
		solved := 0
		for _, v := range solveCol {
			c := 0
			if v > 0 {
				c = 1
			}
			solved += c
		}
		res.SolveRate = protocol.Finite(float64(solved) / float64(n))
	} else {
		res.SolveRate = protocol.None(ReasonNoSolveComponent)
	}
	if ref != nil {
		m := min(len(ref.Rewards), n)
		s := 0.0
		for i := 0; i < m; i++ {
			s += ref.Rewards[i] - r[i]
		}
		res.Regret = protocol.Finite(s)
		if len(ref.Rewards) != n {
			res.Notes = append(res.Notes, fmt.Sprintf("run %s: the reference has %d rewards and the run %d rows; regret covers the first %d", t.Key, len(ref.Rewards), n, m))
		}
	} else {
		res.Regret = protocol.None(ReasonNoReference)
	}
	runRankN := 0
	for _, c := range rcnt {
		runRankN += c
	}
	if runRankN > 0 {
		res.EffectiveRankRun = protocol.Finite(runRank / float64(runRankN))
	} else {
		res.EffectiveRankRun = protocol.None(ReasonNoRankRecorded)
	}
	return res, nil
}

// adaptRecover computes τ_adapt and τ_rec over one window (PROTOCOLS 1.4).
// segPeak, when not NaN, is the window's peak running mean already computed
// by the caller (+Inf when a running mean of the window left float64).
//
// A running mean that leaves float64 (a sum of rewards near ±1e308) is not a
// number to compare: a τ found at or after it, an anchor A or a tail mean
// that is not finite, and a search that ends past it without a τ give an
// absent value with protocol.ReasonOverflow (docs/decisions.md), never a τ.
// A τ found at a finite running mean before the overflow stands.
func adaptRecover(w []float64, p *Params, alpha float64, hasR bool, R float64, segPeak float64) (adapt, rec protocol.Value) {
	L := len(w)
	var thr, target, band float64
	if p.Anchor == AnchorCeiling {
		if !hasR {
			return protocol.None(ReasonNoCeiling), protocol.None(ReasonNoCeiling)
		}
		thr = alpha * R
		target = R
		if p.Epsilon != nil {
			band = *p.Epsilon
		} else {
			band = 0.5 * R
		}
	} else {
		// A = max_τ r̄_τ.
		A := segPeak
		if math.IsNaN(A) {
			s := 0.0
			A = math.Inf(-1)
			for i, x := range w {
				s += x
				if m := s / float64(i+1); m > A {
					A = m
				}
			}
			if math.IsInf(s, 0) || math.IsNaN(s) {
				A = math.Inf(1)
			}
		}
		thr = alpha * A
		target = seqMean(w[L-TailCount(p.TailFraction, L):])
		band = max(p.EpsilonFraction*math.Abs(target), p.EpsilonAbsFloor)
	}
	ta, tr := 0, 0
	s := 0.0
	var ma float64 // the running mean at τ_adapt
	for i, x := range w {
		s += x
		m := s / float64(i+1)
		if ta == 0 && m >= thr {
			ta, ma = i+1, m
		}
		if tr == 0 && math.Abs(m-target) <= band {
			tr = i + 1
		}
		if ta != 0 && tr != 0 {
			break
		}
	}
	// The loop ran to the window's end unless both were found, and a running
	// sum that left float64 never comes back: s tells whether it did.
	overflow := math.IsInf(s, 0) || math.IsNaN(s)
	switch {
	case math.IsInf(thr, 0) || math.IsNaN(thr):
		adapt = protocol.None(protocol.ReasonOverflow)
	case ta != 0 && (math.IsInf(ma, 0) || math.IsNaN(ma)):
		adapt = protocol.None(protocol.ReasonOverflow)
	case ta != 0:
		adapt = protocol.Finite(float64(ta))
	case overflow:
		adapt = protocol.None(protocol.ReasonOverflow)
	case p.Anchor == AnchorSegment:
		adapt = protocol.Finite(float64(L))
	default:
		adapt = protocol.None(ReasonNeverReached)
	}
	switch {
	case math.IsInf(target, 0) || math.IsNaN(target) || math.IsInf(band, 0):
		rec = protocol.None(protocol.ReasonOverflow)
	case tr != 0:
		rec = protocol.Finite(float64(tr))
	case overflow:
		rec = protocol.None(protocol.ReasonOverflow)
	default:
		rec = protocol.None(ReasonNeverRecovered)
	}
	return adapt, rec
}

func encounterMean(r []float64, iv Interval, named bool, isEnd func(int) bool) (float64, bool) {
	s, c := 0.0, 0
	for i := iv.Start; i < iv.End; i++ {
		if named && isEnd(i) {
			continue
		}
		s += r[i]
		c++
	}
	if c == 0 {
		return 0, false
	}
	return s / float64(c), true
}

func seqMean(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}
