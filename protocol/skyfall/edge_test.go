package skyfall

import (
	"errors"
	"math"
	"testing"

	"github.com/crlbatch/crlbatch/protocol"
)

func TestTailCount(t *testing.T) {
	cases := []struct {
		x    float64
		L    int
		want int
	}{
		{0.2, 10, 2},  // 2.0000000000000004 − 1e-9 rounds up to 2... ceil(2 − 1e-9) = 2
		{0.28, 25, 7}, // 7.000000000000001 in float64: 7, not 8
		{0.2, 1, 1},   // ceil(0.2 − 1e-9) = 1
		{0.2, 3, 1},   // ceil(0.6) = 1
		{0.2, 6, 2},   // ceil(1.2) = 2
		{0.1, 5, 1},   // ceil(0.5) = 1
		{1.0, 7, 7},
		{0.01, 3, 1}, // max(1, ceil(0.03)) = 1
	}
	for _, c := range cases {
		if got := TailCount(c.x, c.L); got != c.want {
			t.Errorf("TailCount(%v, %d) = %d, want %d", c.x, c.L, got, c.want)
		}
	}
}

func TestTailFraction028Of25(t *testing.T) {
	// One 25-row interval of 1..25 under tail fraction 0.28: the final 7
	// rows are 19..25, mean (19+…+25)/7 = 154/7 = 22.
	var rows []row
	for i := 1; i <= 25; i++ {
		rows = append(rows, row{r: float64(i), label: "a"})
	}
	p := DefaultParams()
	p.TailFraction = 0.28
	res := score(t, build(t, nil, rows...), p)
	wantValue(t, "settled", label(t, res, "a").SettledReward, 22)
	wantValue(t, "tail mean", res.Intervals[0].TailMean, 22)
}

func TestSingleRowIntervals(t *testing.T) {
	// a | b | a, one row each; b is negative so its own peak is -1 and the
	// threshold 0.9·(−1) = −0.9 is never met: adaptation is the window length 1.
	tr := build(t, nil, row{r: 0.5, label: "a"}, row{r: -1, label: "b"}, row{r: 0.25, label: "a"})
	res := score(t, tr, DefaultParams())
	b := label(t, res, "b")
	wantValue(t, "b adapt", b.AdaptationSpeed, 1)
	// Asymptote −1, band max(0.3, 0.005): |−1 − (−1)| = 0 ≤ 0.3 at τ=1.
	wantValue(t, "b recover", b.RecoveryTime, 1)
	wantAbsent(t, "b variance", b.StabilityVariance, ReasonFewerThanTwoRows)
	if len(b.StabilityVariancePerInterval) != 1 {
		t.Fatalf("b per-interval variances %v", b.StabilityVariancePerInterval)
	}
	wantAbsent(t, "b interval variance", b.StabilityVariancePerInterval[0], ReasonOneRowInterval)
	a := label(t, res, "a")
	// Pooled a: 0.5 and 0.25, mean 0.375, variance (0.125² + 0.125²)/1.
	wantValue(t, "a variance", a.StabilityVariance, 0.03125)
	wantAbsent(t, "a interval 0 variance", a.StabilityVariancePerInterval[0], ReasonOneRowInterval)
	// a's second interval is preceded by a shift: one row, adapts at once.
	wantValue(t, "a adapt", a.AdaptationSpeed, 1)
	wantValue(t, "a forgetting", a.Forgetting, 0.25)
	wantValue(t, "a zero-shot", a.ZeroShotReward, 0.25)
	wantValue(t, "a settled", a.SettledReward, 0.375)
}

func TestNegativeRewardsNeverCross(t *testing.T) {
	// b: −1, −2, −3: running means −1, −1.5, −2; A = −1, threshold −0.9 is
	// never reached, so the segment anchor reports the window length 3.
	tr := build(t, nil, cat(rep(0, "a", 2), []row{{r: -1, label: "b"}, {r: -2, label: "b"}, {r: -3, label: "b"}})...)
	res := score(t, tr, DefaultParams())
	b := label(t, res, "b")
	wantValue(t, "b adapt", b.AdaptationSpeed, 3)
	// Asymptote: the final ceil(0.6 − 1e-9) = 1 row, −3; band 0.9:
	// |−1+3| = 2, |−1.5+3| = 1.5, |−2+3| = 1: never within 0.9.
	wantAbsent(t, "b recover", b.RecoveryTime, ReasonNeverRecovered)

	// Under the ceiling anchor a ceiling of 1 is never reached (α·R = 0.5).
	p := DefaultParams()
	p.Anchor = AnchorCeiling
	p.Ceiling = ScalarCeiling(1, "explicit")
	res = score(t, tr, p)
	wantAbsent(t, "ceiling adapt", label(t, res, "b").AdaptationSpeed, ReasonNeverReached)
	wantAbsent(t, "ceiling recover", label(t, res, "b").RecoveryTime, ReasonNeverRecovered)
}

func postShiftTrace(t testing.TB) *Trace {
	return build(t, nil,
		row{r: 0, label: "a"}, row{r: 0, label: "a"},
		row{r: 0.2, label: "b"}, row{r: 0.4, label: "b"},
		row{r: 1, label: "c"}, row{r: 1, label: "c"})
}

func TestPostShiftWindow(t *testing.T) {
	p := DefaultParams()
	p.Window = WindowPostShift
	res := score(t, postShiftTrace(t), p)
	b := label(t, res, "b")
	// b's window runs to the end: 0.2, 0.4, 1, 1; running means 0.2, 0.3,
	// 0.5333…, 0.65; A = 0.65, threshold 0.585 first met at τ = 4.
	wantValue(t, "b adapt", b.AdaptationSpeed, 4)
	// Asymptote: final ceil(0.8 − 1e-9) = 1 row = 1, band 0.3: distances 0.8,
	// 0.7, 0.4667, 0.35: never.
	wantAbsent(t, "b recover", b.RecoveryTime, ReasonNeverRecovered)
	// Zero-shot runs into c: (0.2+0.4+1+1)/4.
	wantValue(t, "b zero-shot", b.ZeroShotReward, (0.2+0.4+1+1)/4)
	// Settled reward uses the interval's own rows whatever the window.
	wantValue(t, "b settled", b.SettledReward, 0.4)

	res = score(t, postShiftTrace(t), DefaultParams())
	b = label(t, res, "b")
	// Segment window: 0.2, 0.4; means 0.2, 0.3; A = 0.3, threshold 0.27 at τ=2.
	wantValue(t, "segment b adapt", b.AdaptationSpeed, 2)
	// Asymptote 0.4, band 0.12: |0.3 − 0.4| = 0.1 at τ=2.
	wantValue(t, "segment b recover", b.RecoveryTime, 2)
	wantValue(t, "segment b zero-shot", b.ZeroShotReward, (0.2+0.4)/2)
}

func TestCeilingAnchorPerLabelMap(t *testing.T) {
	p := DefaultParams()
	p.Anchor = AnchorCeiling
	p.Ceiling = MapCeiling(map[string]float64{"a": 1, "b": 0.8, "c": 2}, "explicit")
	res := score(t, postShiftTrace(t), p)
	b := label(t, res, "b")
	// α·R_b = 0.4; running means 0.2, 0.3: never.
	wantAbsent(t, "b adapt", b.AdaptationSpeed, ReasonNeverReached)
	// ε = 0.5·0.8 = 0.4: |0.2−0.8| = 0.6, |0.3−0.8| = 0.5: never.
	wantAbsent(t, "b recover", b.RecoveryTime, ReasonNeverRecovered)
	wantValue(t, "b gap", b.PerformanceGap, 0.8-0.4)
	wantValue(t, "b bound", b.UpperBound, 0.8)
	c := label(t, res, "c")
	// α·R_c = 1 met at τ=1; ε = 1: |1 − 2| ≤ 1 at τ=1.
	wantValue(t, "c adapt", c.AdaptationSpeed, 1)
	wantValue(t, "c recover", c.RecoveryTime, 1)
	// a: first interval, tail of 2 rows → 1 row (ceil(0.4)) of 0: gap 1.
	wantValue(t, "a gap", label(t, res, "a").PerformanceGap, 1)

	p.Epsilon = ptr(0.55)
	res = score(t, postShiftTrace(t), p)
	// |0.3 − 0.8| = 0.5 ≤ 0.55 at τ=2.
	wantValue(t, "b recover, ε=0.55", label(t, res, "b").RecoveryTime, 2)

	p.Ceiling = MapCeiling(map[string]float64{"a": 1, "b": 0.8}, "explicit")
	_, err := Score(postShiftTrace(t), &p, nil)
	var miss *MissingLabelError
	if !errors.As(err, &miss) || miss.Label != "c" {
		t.Fatalf("map missing c: err %v, want MissingLabelError for c", err)
	}
}

func TestCeilingAnchorWithoutCeiling(t *testing.T) {
	p := DefaultParams()
	p.Anchor = AnchorCeiling
	res := score(t, postShiftTrace(t), p)
	for _, l := range res.Labels {
		wantAbsent(t, l.Label+" gap", l.PerformanceGap, ReasonNoCeiling)
		if l.Label == "a" {
			continue
		}
		wantAbsent(t, l.Label+" adapt", l.AdaptationSpeed, ReasonNoCeiling)
		wantAbsent(t, l.Label+" recover", l.RecoveryTime, ReasonNoCeiling)
	}
}

func TestEpisodeEndExclusion(t *testing.T) {
	comps := []string{"bonus"}
	tr := build(t, comps,
		row{r: 1, label: "a", comps: []float64{1}}, row{r: 1, label: "a", comps: []float64{1}},
		row{r: 0.5, label: "b", comps: []float64{0}}, row{r: 0.5, label: "b"},
		row{r: 0.3, label: "a", comps: []float64{0}}, row{r: 0.7, label: "a", comps: []float64{2}})
	p := DefaultParams()
	res := score(t, tr, p)
	a := label(t, res, "a")
	// Nothing named: forgetting (1+1)/2 − (0.3+0.7)/2 = 0.5; settled = mean of
	// each interval's final row: (1 + 0.7)/2.
	wantValue(t, "a forgetting", a.Forgetting, 1-(0.3+0.7)/2)
	wantValue(t, "a settled", a.SettledReward, (1+0.7)/2)
	wantAbsent(t, "a settled policy", a.SettledRewardPolicy, ReasonNoEpisodeEnd)

	p.EpisodeEnd = comps
	res = score(t, tr, p)
	a = label(t, res, "a")
	// Every row of a's first encounter carries the bonus: it is empty.
	wantAbsent(t, "a forgetting", a.Forgetting, ReasonEncounterEmpty)
	// Both a tails (one row each) carry the bonus: both empty.
	wantAbsent(t, "a settled policy", a.SettledRewardPolicy, ReasonTailEmpty)
	// b never pays the bonus: its policy tail is its plain tail.
	wantValue(t, "b settled policy", label(t, res, "b").SettledRewardPolicy, 0.5)
	// The plain settled reward ignores the components.
	wantValue(t, "a settled", a.SettledReward, (1+0.7)/2)

	// First encounter keeps one row: forgetting 0.4 − 0.3.
	tr = build(t, comps,
		row{r: 1, label: "a", comps: []float64{1}}, row{r: 0.4, label: "a"},
		row{r: 0.5, label: "b"},
		row{r: 0.3, label: "a"}, row{r: 0.9, label: "a", comps: []float64{-1}})
	res = score(t, tr, p)
	wantValue(t, "a forgetting", label(t, res, "a").Forgetting, 0.4-0.3)

	p.EpisodeEnd = []string{"missing"}
	if _, err := Score(tr, &p, nil); err == nil {
		t.Error("an episode-end component the reader did not keep must be an error")
	}
}

func TestAliasEncounters(t *testing.T) {
	// alias_of also makes an origin; regime_origin wins over alias_of.
	b := NewBuilder("alias", nil)
	add := func(r float64, l, origin, alias string) {
		row := Row{Reward: r, Label: l, Invalid: -1}
		if origin != "" {
			row.Origin, row.HasOrigin = origin, true
		}
		if alias != "" {
			row.AliasOf, row.HasAliasOf = alias, true
		}
		b.Add(&row)
	}
	add(0.9, "x", "", "")
	add(0.1, "y", "", "")
	add(0.6, "x2", "", "x")
	add(0.2, "y2", "y", "x")
	tr := b.Trace(nil)
	res := score(t, tr, DefaultParams())
	if o := label(t, res, "x2").Origin; o != "x" {
		t.Errorf("x2 origin %q, want x", o)
	}
	if o := label(t, res, "y2").Origin; o != "y" {
		t.Errorf("y2 origin %q, want y (regime_origin beats alias_of)", o)
	}
	wantValue(t, "x forgetting", label(t, res, "x").Forgetting, 0.9-0.6)
	wantValue(t, "x2 forgetting", label(t, res, "x2").Forgetting, 0.9-0.6)
	wantValue(t, "y forgetting", label(t, res, "y").Forgetting, 0.1-0.2)
	wantValue(t, "y2 forgetting", label(t, res, "y2").Forgetting, 0.1-0.2)
}

func TestThirdEncounterIgnoredByForgetting(t *testing.T) {
	tr := build(t, nil, row{r: 1, label: "a"}, row{r: 0, label: "b"}, row{r: 0.5, label: "a"}, row{r: 0, label: "b"}, row{r: 0.1, label: "a"})
	res := score(t, tr, DefaultParams())
	wantValue(t, "a forgetting", label(t, res, "a").Forgetting, 0.5)
	// a's two shift-preceded intervals each adapt at τ=1: mean 1.
	wantValue(t, "a adapt", label(t, res, "a").AdaptationSpeed, 1)
	// zero-shot averages over the two shift-preceded intervals.
	wantValue(t, "a zero-shot", label(t, res, "a").ZeroShotReward, (0.5+0.1)/2)
}

func TestRunMetrics(t *testing.T) {
	b := NewBuilder("run", []string{"solved"})
	rows := []Row{
		{Reward: 1, Label: "a", Invalid: 1, Comps: []float64{1}, EffRank: 4, HasEffRank: true, Gamma: 0.5, HasGamma: true},
		{Reward: 2, Label: "a", Invalid: -1, Comps: []float64{0}},
		{Reward: 4, Label: "b", Invalid: 0, Comps: []float64{0.5}, EffRank: 2, HasEffRank: true, Gamma: 0.9, HasGamma: true},
		{Reward: 8, Label: "b", Invalid: 0},
	}
	for i := range rows {
		b.Add(&rows[i])
	}
	tr := b.Trace(nil)
	p := DefaultParams()
	p.SolveComponent = "solved"
	res, err := Score(tr, &p, &Reference{Rewards: []float64{2, 2, 2}})
	if err != nil {
		t.Fatal(err)
	}
	// γ = the first recorded gamma, 0.5: 1 + 0.5·2 + 0.25·4 + 0.125·8 = 4.
	wantValue(t, "discounted", res.ReturnDiscounted, 4)
	wantValue(t, "undiscounted", res.ReturnUndiscounted, 15)
	// invalid_action carried by 3 rows, true on 1.
	wantValue(t, "invalid", res.InvalidActionRate, 1.0/3)
	// solved > 0 on rows 0 and 2 of 4 (the row without the component counts unsolved).
	wantValue(t, "solve", res.SolveRate, 0.5)
	// Regret over the common prefix of 3: (2−1) + (2−2) + (2−4) = −1.
	wantValue(t, "regret", res.Regret, -1)
	if len(res.Notes) != 1 {
		t.Errorf("a reference of another length must be noted, notes %q", res.Notes)
	}
	wantValue(t, "rank run", res.EffectiveRankRun, 3)
	wantValue(t, "rank a", label(t, res, "a").EffectiveRank, 4)
	wantValue(t, "rank b", label(t, res, "b").EffectiveRank, 2)

	p.Gamma = ptr(1)
	res, _ = Score(tr, &p, nil)
	wantValue(t, "discounted γ=1", res.ReturnDiscounted, 15)
	wantAbsent(t, "regret", res.Regret, ReasonNoReference)

	// γ = 0 is a discount PROTOCOLS 1.5 defines: Σ 0^i r_i = r_0 (0^0 = 1),
	// the same number a recorded gamma of 0 gives; never a usage error.
	p.Gamma = ptr(0)
	if err := p.Check(); err != nil {
		t.Fatalf("gamma 0: %v", err)
	}
	res, _ = Score(tr, &p, nil)
	wantValue(t, "discounted γ=0", res.ReturnDiscounted, 1)
}

func TestDiscountedLongTrace(t *testing.T) {
	// Σ 0.99^i over 5000 rows against the closed form (1 − 0.99^5000)/(1 − 0.99).
	res := score(t, build(t, nil, rep(1, "a", 5000)...), DefaultParams())
	want := 0.0
	for i := range 5000 {
		want += math.Pow(0.99, float64(i))
	}
	wantValue(t, "discounted", res.ReturnDiscounted, want)
	// And the closed form, to a looser tolerance.
	if cf := (1 - math.Pow(0.99, 5000)) / (1 - 0.99); math.Abs(res.ReturnDiscounted.V-cf) > 1e-9 {
		t.Errorf("discounted %.17g, closed form %.17g", res.ReturnDiscounted.V, cf)
	}
}

func TestParamsCheck(t *testing.T) {
	bad := []func(*Params){
		func(p *Params) { p.Anchor = "peak" },
		func(p *Params) { p.Window = "all" },
		func(p *Params) { p.TailFraction = 1.5 },
		func(p *Params) { p.TailFraction = 0 },
		func(p *Params) { p.ZeroShotWindow = 0 },
		func(p *Params) { p.Gamma = ptr(1.5) },
		func(p *Params) { p.Gamma = ptr(-0.5) },
		func(p *Params) { p.Gamma = ptr(math.NaN()) },
		func(p *Params) { p.Epsilon = ptr(-1) },
		func(p *Params) { p.EpsilonFraction = -0.1 },
	}
	for i, f := range bad {
		p := DefaultParams()
		f(&p)
		if err := p.Check(); err == nil {
			t.Errorf("case %d: want an error", i)
		}
	}
}

func TestHugeRewardsOverflowToAbsent(t *testing.T) {
	// Valid JSON numbers whose sums leave float64: absent with a reason,
	// never a panic or an infinity.
	tr := build(t, nil, row{r: 1e308, label: "a"}, row{r: 1e308, label: "a"}, row{r: 1e308, label: "b"}, row{r: -1e308, label: "b"})
	res := score(t, tr, DefaultParams())
	a := label(t, res, "a")
	wantAbsent(t, "a J", a.PerConfigurationReward, protocol.ReasonOverflow)
	wantAbsent(t, "undiscounted", res.ReturnUndiscounted, protocol.ReasonOverflow)
	checkInvariants(t, tr, DefaultParams(), res)
}

// TestOverflowNeverBecomesANumber: where float64 arithmetic on finite
// rewards leaves float64 (docs/decisions.md: absent, "the value overflows
// float64"), no metric built on the overflowed value may report a number in
// its place — neither a 0 standing in for it nor a τ found only because a
// running mean became +Inf.
func TestOverflowNeverBecomesANumber(t *testing.T) {
	const big = 1.5e308
	cases := []struct {
		name   string
		rows   []row
		p      func(*Params)
		check  string // the label whose metric is checked
		metric func(*LabelResult) protocol.Value
		want   *float64 // nil: absent with ReasonOverflow
	}{
		// The first interval of a: its tail mean (2 rows of 1.5e308) overflows,
		// so R_ub − tail mean is not a number (it was 1 − 0 = 1).
		{"performance gap over an overflowed tail", cat(rep(big, "a", 10), rep(0.5, "b", 3)),
			func(p *Params) { p.Ceiling = ScalarCeiling(1, "explicit") }, "a",
			func(l *LabelResult) protocol.Value { return l.PerformanceGap }, nil},
		// A one-row tail does not overflow: the gap is a number.
		{"performance gap over a one-row tail", cat(rep(0.5, "b", 3), rep(big, "a", 5)),
			func(p *Params) { p.Ceiling = ScalarCeiling(1, "explicit") }, "a",
			func(l *LabelResult) protocol.Value { return l.PerformanceGap }, ptr(1 - big)},
		// Segment anchor: the running means of c reach +Inf at τ = 2, so
		// A = max r̄_τ is not a number and neither is τ_adapt (it was 2).
		{"segment adaptation past +Inf", cat(rep(0.5, "b", 3), rep(big, "c", 5)),
			func(p *Params) {}, "c",
			func(l *LabelResult) protocol.Value { return l.AdaptationSpeed }, nil},
		// Segment anchor, running sum to −Inf: A is taken over a truncated
		// set of running means, so τ_adapt is not a number (it was found, or
		// fell back to the window length).
		{"segment adaptation past -Inf", cat(rep(0.5, "b", 3), rep(-big, "c", 5)),
			func(p *Params) {}, "c",
			func(l *LabelResult) protocol.Value { return l.AdaptationSpeed }, nil},
		// Post-shift window: the same, A computed over the window.
		{"post-shift adaptation past +Inf", cat(rep(0.5, "b", 3), rep(big, "c", 5)),
			func(p *Params) { p.Window = WindowPostShift }, "c",
			func(l *LabelResult) protocol.Value { return l.AdaptationSpeed }, nil},
		// Ceiling anchor: r̄_1 = −1.5e308 < 0.5, then −Inf: never reached in
		// float64, but the reason is the overflow, not "never reached".
		{"ceiling adaptation past -Inf", cat(rep(0.5, "b", 3), rep(-big, "c", 5)),
			func(p *Params) { p.Anchor = AnchorCeiling; p.Ceiling = ScalarCeiling(1, "explicit") }, "c",
			func(l *LabelResult) protocol.Value { return l.AdaptationSpeed }, nil},
		// Ceiling anchor, found before the overflow: a number (r̄_1 ≥ 0.5).
		{"ceiling adaptation before +Inf", cat(rep(0.5, "b", 3), rep(big, "c", 5)),
			func(p *Params) { p.Anchor = AnchorCeiling; p.Ceiling = ScalarCeiling(1, "explicit") }, "c",
			func(l *LabelResult) protocol.Value { return l.AdaptationSpeed }, ptr(1)},
		// Ceiling anchor, a band ε = 1e308 around R = 1: r̄_1 = −1.5e308 is
		// outside, then −Inf. Absent for the overflow.
		{"ceiling recovery past -Inf", cat(rep(0.5, "b", 3), rep(-big, "c", 5)),
			func(p *Params) {
				p.Anchor = AnchorCeiling
				p.Ceiling = ScalarCeiling(1, "explicit")
				p.Epsilon = ptr(1e308)
			}, "c",
			func(l *LabelResult) protocol.Value { return l.RecoveryTime }, nil},
		// Segment recovery: the tail mean of c (2 rows of 1.5e308 in 10)
		// overflows, so the band has no centre.
		{"segment recovery around an overflowed tail", cat(rep(0.5, "b", 3), rep(big, "c", 10)),
			func(p *Params) {}, "c",
			func(l *LabelResult) protocol.Value { return l.RecoveryTime }, nil},
		// A label-level mean over overflowed interval values is absent for the
		// overflow, not for "no shift" or "the label never ran".
		{"zero-shot of an overflowed window", cat(rep(0.5, "b", 3), rep(big, "c", 10)),
			func(p *Params) {}, "c",
			func(l *LabelResult) protocol.Value { return l.ZeroShotReward }, nil},
		{"settled reward over an overflowed tail", cat(rep(big, "a", 10), rep(0.5, "b", 3)),
			func(p *Params) {}, "a",
			func(l *LabelResult) protocol.Value { return l.SettledReward }, nil},
		// Segment recovery found at τ = 1, before the running sum overflows:
		// the tail is one row (5 rows), |r̄_1 − A| = 0.
		{"segment recovery before +Inf", cat(rep(0.5, "b", 3), rep(big, "c", 5)),
			func(p *Params) {}, "c",
			func(l *LabelResult) protocol.Value { return l.RecoveryTime }, ptr(1)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := DefaultParams()
			c.p(&p)
			res := score(t, build(t, nil, c.rows...), p)
			got := c.metric(label(t, res, c.check))
			if c.want == nil {
				wantAbsent(t, c.name, got, protocol.ReasonOverflow)
			} else {
				wantValue(t, c.name, got, *c.want)
			}
		})
	}
}

// TestReceilOverflowedTail: Receil gives what Score gives when the tail mean
// of a label's first interval overflowed: an absent gap, never R_ub − 0.
func TestReceilOverflowedTail(t *testing.T) {
	tr := build(t, nil, cat(rep(1.5e308, "a", 10), rep(0.5, "b", 3))...)
	p := DefaultParams()
	p.Ceiling = ScalarCeiling(2, "explicit")
	res := score(t, tr, p)
	p.Ceiling = ScalarCeiling(1, "explicit")
	if !Receil(res, &p) {
		t.Fatal("Receil refused a scalar ceiling under the segment anchor")
	}
	wantAbsent(t, "a gap", label(t, res, "a").PerformanceGap, protocol.ReasonOverflow)
	wantValue(t, "b gap", label(t, res, "b").PerformanceGap, 0.5)
}
