package skyfall

import (
	"fmt"
	"strings"
	"testing"

	"github.com/crlbatch/crlbatch/protocol"
)

// workedExample is the thirty-step trace of PROTOCOLS 1.4: a pays 0.8, the
// shift to b stumbles (0.1), over-corrects (0.9, 0.9) and settles at 0.6, and
// a_again (an alias of a) pays 0.5.
func workedExample(t testing.TB) *Trace {
	rows := cat(rep(0.8, "a", 10),
		[]row{{r: 0.1, label: "b"}, {r: 0.9, label: "b"}, {r: 0.9, label: "b"}},
		rep(0.6, "b", 7))
	for i := 0; i < 10; i++ {
		rows = append(rows, row{r: 0.5, label: "a_again", origin: "a"})
	}
	return build(t, nil, rows...)
}

func TestWorkedExampleTable(t *testing.T) {
	res := score(t, workedExample(t), DefaultParams())
	fmtv := func(v protocol.Value, spec string) string {
		if !v.OK {
			return "--"
		}
		return fmt.Sprintf(spec, v.V)
	}
	var b strings.Builder
	for _, k := range []string{"a", "b", "a_again"} {
		l := label(t, res, k)
		fmt.Fprintf(&b, "%-8s J = %s   adapt = %s   recover = %s   forget = %s   variance = %s\n", k,
			fmtv(l.PerConfigurationReward, "%.4f"),
			fmtv(l.AdaptationSpeed, "%.0f"),
			fmtv(l.RecoveryTime, "%.0f"),
			fmtv(l.Forgetting, "%+.4f"),
			fmtv(l.StabilityVariance, "%.4f"))
	}
	want := `a        J = 0.8000   adapt = --   recover = --   forget = +0.3000   variance = 0.0000
b        J = 0.6100   adapt = 3   recover = 2   forget = --   variance = 0.0477
a_again  J = 0.5000   adapt = 1   recover = 1   forget = +0.3000   variance = 0.0000
`
	if b.String() != want {
		t.Errorf("worked example:\n%s\nwant:\n%s", b.String(), want)
	}
}

// TestWorkedExampleExact checks every column of the three rows against values
// worked out by hand (sequential float64 sums in row order).
func TestWorkedExampleExact(t *testing.T) {
	res := score(t, workedExample(t), DefaultParams())
	sum := func(xs ...float64) float64 {
		s := 0.0
		for _, x := range xs {
			s += x
		}
		return s
	}
	eight := sum(0.8, 0.8, 0.8, 0.8, 0.8, 0.8, 0.8, 0.8, 0.8, 0.8) / 10
	bRows := []float64{0.1, 0.9, 0.9, 0.6, 0.6, 0.6, 0.6, 0.6, 0.6, 0.6}
	bMean := sum(bRows...) / 10
	bVar := 0.0
	for _, x := range bRows {
		bVar += (x - bMean) * (x - bMean)
	}
	bVar /= 9

	a := label(t, res, "a")
	wantValue(t, "a J", a.PerConfigurationReward, eight)
	wantAbsent(t, "a adapt", a.AdaptationSpeed, ReasonNoShift)
	wantAbsent(t, "a recover", a.RecoveryTime, ReasonNoShift)
	wantValue(t, "a forget", a.Forgetting, eight-0.5)
	wantValue(t, "a variance", a.StabilityVariance, 0)
	wantAbsent(t, "a gap", a.PerformanceGap, ReasonNoCeiling)
	wantAbsent(t, "a zero-shot", a.ZeroShotReward, ReasonNoShift)
	// Tail of 10 rows: ceil(0.2·10 − 1e-9) = 2 rows of 0.8.
	wantValue(t, "a settled", a.SettledReward, (0.8+0.8)/2)
	wantAbsent(t, "a settled policy", a.SettledRewardPolicy, ReasonNoEpisodeEnd)
	wantAbsent(t, "a rank", a.EffectiveRank, ReasonNoRankRecorded)

	b := label(t, res, "b")
	wantValue(t, "b J", b.PerConfigurationReward, bMean)
	// Running means 0.1, 0.5, 0.6333…, 0.625, …: peak 0.6333 at τ=3, threshold
	// 0.57 first met at τ=3.
	wantValue(t, "b adapt", b.AdaptationSpeed, 3)
	// Asymptote 0.6 (last two rows), band max(0.3·0.6, 0.005) = 0.18:
	// |0.5 − 0.6| ≤ 0.18 at τ=2.
	wantValue(t, "b recover", b.RecoveryTime, 2)
	wantAbsent(t, "b forget", b.Forgetting, ReasonNeedsRecurrence)
	wantValue(t, "b variance", b.StabilityVariance, bVar)
	// Zero-shot: the first 10 rows of b's window, which is all of b.
	wantValue(t, "b zero-shot", b.ZeroShotReward, bMean)
	wantValue(t, "b settled", b.SettledReward, (0.6+0.6)/2)

	aa := label(t, res, "a_again")
	wantValue(t, "a_again J", aa.PerConfigurationReward, 0.5)
	wantValue(t, "a_again adapt", aa.AdaptationSpeed, 1)
	wantValue(t, "a_again recover", aa.RecoveryTime, 1)
	wantValue(t, "a_again forget", aa.Forgetting, eight-0.5)
	wantValue(t, "a_again variance", aa.StabilityVariance, 0)
	if aa.Origin != "a" {
		t.Errorf("a_again origin %q, want a", aa.Origin)
	}

	if res.NSteps != 30 || res.NIntervals != 3 || res.NShifts != 2 || res.NLabels != 3 {
		t.Errorf("counts %d %d %d %d, want 30 3 2 3", res.NSteps, res.NIntervals, res.NShifts, res.NLabels)
	}
	wantValue(t, "undiscounted", res.ReturnUndiscounted, sum(append(append(append([]float64{}, rep10(0.8)...), bRows...), rep10(0.5)...)...))
	wantAbsent(t, "invalid", res.InvalidActionRate, ReasonNoInvalidField)
	wantAbsent(t, "solve", res.SolveRate, ReasonNoSolveComponent)
	wantAbsent(t, "regret", res.Regret, ReasonNoReference)
}

func rep10(x float64) []float64 {
	out := make([]float64, 10)
	for i := range out {
		out[i] = x
	}
	return out
}
