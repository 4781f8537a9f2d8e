package family

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/crlbatch/crlbatch/protocol"
	"github.com/crlbatch/crlbatch/protocol/stats"
)

func bptr(b bool) *bool { return &b }

var metrics = []Metric{
	{Name: "adaptation_speed", HigherIsBetter: bptr(false)},
	{Name: "per_configuration_reward", HigherIsBetter: bptr(true)},
	{Name: "n_steps"},
}

func run(key, fam, seed string, vals ...float64) Run {
	r := Run{Key: key, Family: fam, Seed: seed, HasSeed: seed != "", NSteps: 100}
	for _, v := range vals {
		if math.IsNaN(v) {
			r.Values = append(r.Values, protocol.None("test: absent"))
		} else {
			r.Values = append(r.Values, protocol.Some(v))
		}
	}
	return r
}

func opts() Options {
	o := DefaultOptions()
	o.Resamples = 2000
	return o
}

func find(t *testing.T, res *Result, fam, metric string) Row {
	t.Helper()
	for _, f := range res.Families {
		if f.Name != fam {
			continue
		}
		for _, r := range f.Rows {
			if r.Metric == metric {
				return r
			}
		}
	}
	t.Fatalf("no row %s/%s", fam, metric)
	return Row{}
}

func near(a, b float64) bool {
	return math.Abs(a-b) <= 1e-12 || math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b))
}

func want(t *testing.T, what string, v protocol.Value, x float64) {
	t.Helper()
	if !v.OK || !near(v.V, x) {
		t.Errorf("%s = %+v, want %v", what, v, x)
	}
}

func wantNull(t *testing.T, what string, v protocol.Value) {
	t.Helper()
	if v.OK || v.Reason == "" {
		t.Errorf("%s = %+v, want null with a reason", what, v)
	}
}

func TestOneSeedFamilyHasNoSpread(t *testing.T) {
	res, err := Aggregate(metrics, []Run{run("r1", "sac", "0", 3, 0.5, 100)}, opts())
	if err != nil {
		t.Fatal(err)
	}
	row := find(t, res, "sac", "per_configuration_reward")
	if row.N != 1 {
		t.Errorf("n = %d", row.N)
	}
	want(t, "mean", row.Mean, 0.5)
	wantNull(t, "std", row.Std)
	if row.Std.Reason != ReasonOneSeed {
		t.Errorf("std reason %q", row.Std.Reason)
	}
	wantNull(t, "ci low", row.CILow)
	wantNull(t, "iqm ci", row.IQMCIHigh)
	want(t, "median", row.Median, 0.5)
	want(t, "iqm", row.IQM, 0.5)
	var one bool
	for _, n := range res.Notes {
		one = one || n.Kind == NoteOneSeed
	}
	if !one {
		t.Errorf("notes %v lack the one-seed note", res.Notes)
	}
}

func TestDescriptiveStatistics(t *testing.T) {
	// Seed values 1, 2, 3, 10 (and one absent, which is dropped).
	runs := []Run{
		run("a", "f", "0", 1, 1, 100), run("b", "f", "1", 2, 2, 100), run("c", "f", "2", math.NaN(), math.NaN(), 100),
		run("d", "f", "3", 3, 3, 100), run("e", "f", "4", 10, 10, 100),
	}
	res, err := Aggregate(metrics, runs, opts())
	if err != nil {
		t.Fatal(err)
	}
	row := find(t, res, "f", "per_configuration_reward")
	// n = 4; mean 16/4 = 4; variance ((−3)² + (−2)² + (−1)² + 6²)/3 = 50/3.
	if row.N != 4 {
		t.Errorf("n = %d, want 4", row.N)
	}
	want(t, "mean", row.Mean, 4)
	want(t, "std", row.Std, math.Sqrt(50.0/3))
	want(t, "min", row.Min, 1)
	want(t, "max", row.Max, 10)
	want(t, "median", row.Median, 2.5)
	// IQM: drop floor(0.25·4) = 1 from each end: mean(2, 3) = 2.5.
	want(t, "iqm", row.IQM, 2.5)
	if !(row.CILow.V <= row.Mean.V && row.Mean.V <= row.CIHigh.V) {
		t.Errorf("CI [%v, %v] does not hold the mean", row.CILow.V, row.CIHigh.V)
	}
	lo, hi := stats.BootstrapCI([]float64{1, 2, 3, 10}, stats.StatMean, 2000, stats.SeedFor(0, "f", "per_configuration_reward"), 0.95)
	want(t, "ci low", row.CILow, lo)
	want(t, "ci high", row.CIHigh, hi)
	// The baseline is the first family (no ppo): itself.
	if res.Baseline != "f" {
		t.Errorf("baseline %q", res.Baseline)
	}
	ad := find(t, res, "f", "adaptation_speed")
	want(t, "own advantage", ad.RelativeAdaptationAdvantage, 0)
	wantNull(t, "advantage on another row", row.RelativeAdaptationAdvantage)
	// Compared with itself: every difference is zero, so the Wilcoxon test
	// (4 pairs < 6: sign flip) gives p = 1; prob. of improvement is ½.
	want(t, "self prob improvement", row.ProbImprovement, 0.5)
	want(t, "self diff", row.DiffMean, 0)
}

func TestBaselineRule(t *testing.T) {
	runs := []Run{run("x", "sac", "0", 5, 1, 1), run("y", "ppo", "0", 8, 1, 1), run("z", "dqn", "0", 2, 1, 1)}
	res, _ := Aggregate(metrics, runs, opts())
	if res.Baseline != "ppo" {
		t.Errorf("baseline %q, want ppo", res.Baseline)
	}
	// Advantage = mean τ(baseline) − mean τ(family): sac 8 − 5 = 3 (faster).
	want(t, "sac advantage", find(t, res, "sac", "adaptation_speed").RelativeAdaptationAdvantage, 3)
	want(t, "dqn advantage", find(t, res, "dqn", "adaptation_speed").RelativeAdaptationAdvantage, 6)
	want(t, "ppo advantage", find(t, res, "ppo", "adaptation_speed").RelativeAdaptationAdvantage, 0)

	o := opts()
	o.Baseline = "dqn"
	res, _ = Aggregate(metrics, runs, o)
	want(t, "sac vs dqn", find(t, res, "sac", "adaptation_speed").RelativeAdaptationAdvantage, -3)

	o.Baseline = "td3"
	res, _ = Aggregate(metrics, runs, o)
	if res.BaselineFound {
		t.Error("td3 is not in the data")
	}
	row := find(t, res, "sac", "adaptation_speed")
	wantNull(t, "advantage without baseline", row.RelativeAdaptationAdvantage)
	wantNull(t, "p without baseline", row.PValue)
	wantNull(t, "prob without baseline", row.ProbImprovement)
	wantNull(t, "prob interval without baseline", row.ProbImprovementCILow)
	wantNull(t, "prob interval without baseline", row.ProbImprovementCIHigh)
	if len(res.Notes) == 0 || !strings.Contains(res.Notes[0].Text, `"td3"`) {
		t.Errorf("notes %v must name the missing baseline", res.Notes)
	}

	runs = []Run{run("x", "sac", "0", 5, 1, 1), run("z", "dqn", "0", 2, 1, 1)}
	res, _ = Aggregate(metrics, runs, opts())
	if res.Baseline != "sac" {
		t.Errorf("baseline %q, want the first family sac", res.Baseline)
	}
}

// The family of runs without a group-by value (key "", shown as (none)) is
// a family like any other: when it comes first it is the baseline by
// PROTOCOLS 1.6's rule, and every other family is compared with it.
func TestNoneFamilyCanBeTheBaseline(t *testing.T) {
	runs := []Run{run("u", "", "0", 4, 1, 1), run("x", "sac", "0", 5, 1, 1), run("z", "dqn", "0", 2, 1, 1)}
	res, err := Aggregate(metrics, runs, opts())
	if err != nil {
		t.Fatal(err)
	}
	if res.Baseline != "" || !res.BaselineFound {
		t.Fatalf("baseline %q (found %v), want the first family, (none)", res.Baseline, res.BaselineFound)
	}
	want(t, "sac vs (none)", find(t, res, "sac", "adaptation_speed").RelativeAdaptationAdvantage, -1)
	want(t, "dqn vs (none)", find(t, res, "dqn", "adaptation_speed").RelativeAdaptationAdvantage, 2)
	want(t, "(none) vs itself", find(t, res, "", "adaptation_speed").RelativeAdaptationAdvantage, 0)
	if p := find(t, res, "sac", "adaptation_speed").ProbImprovement; !p.OK {
		t.Errorf("sac's probability of improvement over (none) is absent: %s", p.Reason)
	}
	if b := find(t, res, "dqn", "per_configuration_reward").Baseline; b != "" {
		t.Errorf("row baseline %q, want (none)'s key", b)
	}
	// With ppo present, ppo is the baseline and (none) is compared with it.
	runs = append(runs, run("y", "ppo", "0", 8, 1, 1))
	res, _ = Aggregate(metrics, runs, opts())
	want(t, "(none) vs ppo", find(t, res, "", "adaptation_speed").RelativeAdaptationAdvantage, 4)
}

func TestPairedComparison(t *testing.T) {
	// Three seeds in each family; seed 3 only in "new". d = new − base per
	// seed: seed 0: 1−2 = −1, seed 1: 2−4 = −2, seed 2: 0.5−1 = −0.5.
	runs := []Run{
		run("b0", "base", "0", 2, 2, 1), run("b1", "base", "1", 4, 4, 1), run("b2", "base", "2", 1, 1, 1),
		run("n0", "new", "0", 1, 1, 1), run("n1", "new", "1", 2, 2, 1), run("n2", "new", "2", 0.5, 0.5, 1),
		run("n3", "new", "3", 9, 9, 1), run("n0bis", "new", "0", 7, 7, 1),
	}
	res, _ := Aggregate(metrics, runs, opts())
	row := find(t, res, "new", "per_configuration_reward")
	if row.NPairs != 3 || row.Test != stats.TestSignFlip || !row.PowerWarning {
		t.Errorf("pairs %d test %q warning %v, want 3 sign_flip true", row.NPairs, row.Test, row.PowerWarning)
	}
	// Sign flip over 2³ patterns: |Σ±d| ≥ 3.5 only for all-minus and
	// all-plus: p = 2/8.
	want(t, "p", row.PValue, 0.25)
	want(t, "min p", row.MinP, 0.25)
	want(t, "diff mean", row.DiffMean, (-1-2-0.5)/3)
	// Probability of improvement over all 5×3 pairs of raw values:
	// new {1, 2, 0.5, 9, 7} vs base {2, 4, 1}: 1>…: (1>…: 0, tie with 1: ½),
	// 2: >1 (1) and =2 (½), 0.5: 0, 9: 3, 7: 3 → (0.5 + 1.5 + 0 + 3 + 3)/15.
	want(t, "prob improvement", row.ProbImprovement, 8.0/15)
	// Its interval: the stratified bootstrap of the family's five values
	// and the baseline's three, on the cell's own stream.
	lo, hi := stats.ProbImprovementCI([]float64{1, 2, 0.5, 9, 7}, []float64{2, 4, 1}, opts().Resamples,
		stats.SeedFor(0, "new", "per_configuration_reward", "probability of improvement"), 0.95)
	want(t, "prob improvement ci low", row.ProbImprovementCILow, lo)
	want(t, "prob improvement ci high", row.ProbImprovementCIHigh, hi)
	if !(lo <= row.ProbImprovement.V && row.ProbImprovement.V <= hi) {
		t.Errorf("interval [%v, %v] does not hold %v", lo, hi, row.ProbImprovement.V)
	}
	// BH across the family's three metrics: p = 0.25, 0.25 and, for n_steps
	// whose differences are all zero, 1. Sorted: 0.25·3/1, 0.25·3/2, 1·3/3;
	// the running minimum from the top gives 0.375 for both 0.25s.
	want(t, "p adjusted", row.PValueAdjusted, 0.375)
	want(t, "n_steps p", find(t, res, "new", "n_steps").PValue, 1)
}

func TestExclusionAndNotes(t *testing.T) {
	short := run("short", "f", "1", 1, 1, 1)
	short.NSteps = 50
	ex := run("ex", "f", "2", 100, 100, 1)
	ex.Excluded, ex.ExcludedWhy = true, "fewer than 60 rows"
	same := run("same", "f", "3", 1, 1, 1)
	flat := run("flat", "", "", 1, 2, 1)
	flat.Remarks = []string{"earned nothing (every reward is zero)"}
	runs := []Run{run("long", "f", "0", 3, 3, 1), short, ex, same, flat}
	res, _ := Aggregate(metrics, runs, opts())
	row := find(t, res, "f", "per_configuration_reward")
	if row.N != 3 {
		t.Errorf("n = %d, want 3 (the excluded run is left out)", row.N)
	}
	kinds := map[string]int{}
	for _, n := range res.Notes {
		kinds[n.Kind]++
	}
	for _, k := range []string{NoteTruncated, NoteExcluded, NoteIdentical, NoteNoFamily, NoteRemark, NoteOneSeed} {
		if kinds[k] == 0 {
			t.Errorf("no %s note in %v", k, res.Notes)
		}
	}
	if res.Families[1].Name != "" {
		t.Errorf("family order %q", res.Families[1].Name)
	}
}

// TestOrderIndependence: with a named baseline, a family's rows do not
// depend on which other families come first, and reruns are identical.
func TestOrderIndependence(t *testing.T) {
	a := []Run{run("a0", "a", "0", 1, 2, 3), run("a1", "a", "1", 2, 3, 4), run("a2", "a", "2", 5, 1, 4)}
	b := []Run{run("b0", "b", "0", 2, 2, 3), run("b1", "b", "1", 3, 1, 4), run("b2", "b", "2", 1, 1, 4)}
	o := opts()
	o.Baseline = "b"
	r1, _ := Aggregate(metrics, append(append([]Run{}, a...), b...), o)
	r2, _ := Aggregate(metrics, append(append([]Run{}, b...), a...), o)
	r3, _ := Aggregate(metrics, append(append([]Run{}, a...), b...), o)
	get := func(r *Result, name string) []Row {
		for _, f := range r.Families {
			if f.Name == name {
				return f.Rows
			}
		}
		return nil
	}
	for _, fam := range []string{"a", "b"} {
		if !reflect.DeepEqual(get(r1, fam), get(r2, fam)) {
			t.Errorf("family %s depends on the order of families", fam)
		}
		if !reflect.DeepEqual(get(r1, fam), get(r3, fam)) {
			t.Errorf("family %s differs between reruns", fam)
		}
	}
}

func TestBadInput(t *testing.T) {
	if _, err := Aggregate(metrics, []Run{run("x", "f", "", 1)}, opts()); err == nil {
		t.Error("a run with too few values must fail")
	}
	r := run("x", "f", "", 1, 2, 3)
	r.Values[0] = protocol.Value{}
	if _, err := Aggregate(metrics, []Run{r}, opts()); err == nil {
		t.Error("an absent value without a reason must fail")
	}
}

// TestEach: handing the cells to Options.Each in reverse order, or all at
// once on goroutines, gives the result of the plain loop, every cell once.
func TestEach(t *testing.T) {
	runs := []Run{run("a0", "a", "0", 1, 2, 3), run("a1", "a", "1", 2, 3, 4), run("a2", "a", "2", 5, 1, 4),
		run("b0", "b", "0", 2, 2, 3), run("b1", "b", "1", 3, 1, 4), run("b2", "b", "2", 1, 1, 4),
		run("c0", "c", "0", 7, math.NaN(), 3)}
	o := opts()
	o.Baseline = "b"
	plain, err := Aggregate(metrics, runs, o)
	if err != nil {
		t.Fatal(err)
	}
	calls := 0
	o.Each = func(n int, work func(int)) {
		if n != 3*len(metrics) {
			t.Errorf("%d cells, want %d", n, 3*len(metrics))
		}
		for i := n - 1; i >= 0; i-- {
			calls++
			work(i)
		}
	}
	reversed, err := Aggregate(metrics, runs, o)
	if err != nil {
		t.Fatal(err)
	}
	if calls != 3*len(metrics) || !reflect.DeepEqual(plain, reversed) {
		t.Errorf("%d calls; reversed order gives another result", calls)
	}
	o.Each = func(n int, work func(int)) {
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() { work(i) })
		}
		wg.Wait()
	}
	concurrent, err := Aggregate(metrics, runs, o)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(plain, concurrent) {
		t.Error("cells computed at once give another result")
	}
}

// TestStop: a Stop that never fires changes nothing; one that fires during
// the bootstraps makes Aggregate return ErrStopped.
func TestStop(t *testing.T) {
	runs := []Run{run("a0", "a", "0", 1, 2, 3), run("a1", "a", "1", 2, 3, 4), run("a2", "a", "2", 5, 1, 4),
		run("b0", "b", "0", 2, 2, 3), run("b1", "b", "1", 3, 1, 4), run("b2", "b", "2", 1, 1, 4)}
	o := opts()
	plain, err := Aggregate(metrics, runs, o)
	if err != nil {
		t.Fatal(err)
	}
	asked := 0
	o.Stop = func() bool { asked++; return false }
	never, err := Aggregate(metrics, runs, o)
	if err != nil || !reflect.DeepEqual(plain, never) || asked == 0 {
		t.Fatalf("with a Stop that never fires (asked %d times): %v, or another result", asked, err)
	}
	asked = 0
	o.Stop = func() bool { asked++; return asked > 5 }
	res, err := Aggregate(metrics, runs, o)
	if !errors.Is(err, ErrStopped) || res != nil {
		t.Errorf("with a Stop that fires: %v, %v; want nil, ErrStopped", res, err)
	}
}

// The interval of the probability of improvement needs two seeds on each
// side; absent says which side lacks them.
func TestProbImprovementIntervalAbsent(t *testing.T) {
	runs := []Run{
		run("b0", "ppo", "0", 2, 2, 1), run("b1", "ppo", "1", 4, 4, 1),
		run("s0", "sac", "0", 3, 3, 1),
		run("d0", "dqn", "0", 1, 1, 1), run("d1", "dqn", "1", 5, 5, 1),
	}
	res, err := Aggregate(metrics, runs, opts())
	if err != nil {
		t.Fatal(err)
	}
	sac := find(t, res, "sac", "per_configuration_reward")
	want(t, "sac prob", sac.ProbImprovement, 0.5)
	if sac.ProbImprovementCILow.OK || sac.ProbImprovementCILow.Reason != ReasonOneSeed || sac.ProbImprovementCIHigh.OK {
		t.Errorf("sac's interval %+v %+v, want absent: %s", sac.ProbImprovementCILow, sac.ProbImprovementCIHigh, ReasonOneSeed)
	}
	dqn := find(t, res, "dqn", "per_configuration_reward")
	if !dqn.ProbImprovementCILow.OK || !dqn.ProbImprovementCIHigh.OK {
		t.Errorf("dqn's interval absent: %s", dqn.ProbImprovementCILow.Reason)
	}
	runs = []Run{run("b0", "ppo", "0", 2, 2, 1), run("d0", "dqn", "0", 1, 1, 1), run("d1", "dqn", "1", 5, 5, 1)}
	res, _ = Aggregate(metrics, runs, opts())
	dqn = find(t, res, "dqn", "per_configuration_reward")
	if dqn.ProbImprovementCILow.OK || dqn.ProbImprovementCILow.Reason != ReasonBaselineOne {
		t.Errorf("dqn's interval against one baseline seed %+v, want absent: %s", dqn.ProbImprovementCILow, ReasonBaselineOne)
	}
}

// identicalPairwise is the identical-seed-values finding by its definition:
// each included run with a present value, not yet reported, against every
// later one with slices.Equal.
func identicalPairwise(f *Family, runs []Run) [][]string {
	var inc []int
	for _, i := range f.Runs {
		if !runs[i].Excluded {
			inc = append(inc, i)
		}
	}
	var out [][]string
	reported := map[int]bool{}
	for a := range inc {
		if reported[a] || !anyPresent(runs[inc[a]].Values) {
			continue
		}
		same := []string{runs[inc[a]].Key}
		for b := a + 1; b < len(inc); b++ {
			if !reported[b] && slices.Equal(runs[inc[a]].Values, runs[inc[b]].Values) {
				same = append(same, runs[inc[b]].Key)
				reported[b] = true
			}
		}
		if len(same) > 1 {
			out = append(out, same)
		}
	}
	return out
}

// The grouping of identical vectors by key finds the groups the pairwise
// comparison finds, in the same order, with values drawn from a few (so
// that vectors repeat), zeros of both signs, absent values with two
// reasons, excluded runs, all-absent vectors and a NaN behind an absence.
func TestIdenticalRunsEqualPairwise(t *testing.T) {
	rng := rand.New(rand.NewPCG(16, 2))
	pick := []protocol.Value{protocol.Some(1), protocol.Some(0), {V: math.Copysign(0, -1), OK: true}, protocol.Some(2.5),
		protocol.None("a"), protocol.None("b"), {V: math.NaN(), Reason: "a"}}
	for trial := range 300 {
		nm := 1 + rng.IntN(3)
		f := &Family{Name: "f"}
		var runs []Run
		for i := range 2 + rng.IntN(40) {
			r := Run{Key: fmt.Sprintf("r%d", i), Excluded: rng.IntN(8) == 0}
			for range nm {
				k := rng.IntN(3) // mostly the first three: repeats
				if rng.IntN(3) == 0 {
					k = rng.IntN(len(pick))
				}
				if trial%2 == 0 && k == len(pick)-1 {
					k = 0 // half the trials without NaN
				}
				r.Values = append(r.Values, pick[k])
			}
			f.Runs = append(f.Runs, len(runs))
			runs = append(runs, r)
		}
		got, want := identicalRuns(f, runs), identicalPairwise(f, runs)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("trial %d: grouped %v, pairwise %v", trial, got, want)
		}
	}
}

// TestResolveBaseline: PROTOCOLS 1.6's rule — the named family; else ppo
// if present; else the first family in order of first appearance.
func TestResolveBaseline(t *testing.T) {
	for _, c := range []struct {
		named    string
		families []string
		want     string
		found    bool
	}{
		{"sac", []string{"ppo", "sac"}, "sac", true},
		{"dqn", []string{"ppo", "sac"}, "dqn", false},
		{"", []string{"sac", "ppo"}, "ppo", true},
		{"", []string{"sac", "ewc"}, "sac", true},
		{"", nil, "", false},
		{"ppo", nil, "ppo", false},
	} {
		if got, found := ResolveBaseline(c.named, c.families); got != c.want || found != c.found {
			t.Errorf("ResolveBaseline(%q, %q) = %q, %v; want %q, %v", c.named, c.families, got, found, c.want, c.found)
		}
	}
}

// TestHugeSeedValuesNeverPanicOrBecomeNumbers: seed values near ±MaxFloat64
// are finite, but their differences, sums and spreads can leave float64.
// Every such statistic is absent ("the value overflows float64",
// docs/decisions.md), the job never panics (the paired difference's
// bootstrap refused the infinite differences, and the whole job died), and
// what is still a number stays one.
func TestHugeSeedValuesNeverPanicOrBecomeNumbers(t *testing.T) {
	var runs []Run
	for i, s := range []string{"0", "1", "2"} {
		x := 1e308 + float64(i)*1e307
		runs = append(runs, run("p"+s, "ppo", s, 1, x, 10), run("q"+s, "sac", s, 2, -x, 10))
	}
	res, err := Aggregate(metrics, runs, opts())
	if err != nil {
		t.Fatal(err)
	}
	sac := find(t, res, "sac", "per_configuration_reward")
	// sac − ppo = −2e308 − …: past float64, so no paired statistic.
	for what, v := range map[string]protocol.Value{"p": sac.PValue, "min p": sac.MinP,
		"diff mean": sac.DiffMean, "diff CI low": sac.DiffCILow, "diff CI high": sac.DiffCIHigh} {
		if v.OK || v.Reason != protocol.ReasonOverflow {
			t.Errorf("%s = %+v, want absent: %s", what, v, protocol.ReasonOverflow)
		}
	}
	if sac.NPairs != 3 {
		t.Errorf("n_pairs %d, want 3 (the pairs exist; their differences overflow)", sac.NPairs)
	}
	// Still numbers: ordering needs no arithmetic. The mean's sequential sum
	// (−3.3e308) leaves float64 (PROTOCOLS: float64, summed in order).
	want(t, "prob. of improvement", sac.ProbImprovement, 0)
	want(t, "min", sac.Min, -1.2e308)
	want(t, "max", sac.Max, -1e308)
	if sac.Mean.OK || sac.Mean.Reason != protocol.ReasonOverflow {
		t.Errorf("mean = %+v, want absent: %s", sac.Mean, protocol.ReasonOverflow)
	}
	// The baseline compared with itself: differences 0, a number.
	ppo := find(t, res, "ppo", "per_configuration_reward")
	want(t, "ppo diff mean", ppo.DiffMean, 0)
	// The adaptation-speed rows are ordinary.
	want(t, "sac advantage", find(t, res, "sac", "adaptation_speed").RelativeAdaptationAdvantage, -1)
}
