package contilab

import (
	"math"
	"strings"
	"testing"

	"github.com/crlbatch/crlbatch/protocol"
)

// TestBenchmarksByHand ranks three families over four benchmarks (higher is
// better); a fifth benchmark lacks family c and is dropped.
//
//	        b1    b2    b3    b4    b5
//	a       0.9   0.6   0.7   0.55  0.3
//	b       0.8   0.6   0.9   0.5   0.2
//	c       0.7   0.5   0.8   0.45  --
//
// Ranks per benchmark: b1 (1, 2, 3), b2 (1.5, 1.5, 3), b3 (3, 1, 2),
// b4 (1, 2, 3): rank sums a 6.5, b 6.5, c 11; average ranks 1.625, 1.625,
// 2.75. Friedman: k = 3, n = 4, one tie group of 2 (Σ t(t²−1) = 6),
// c = 1 − 6/(3·8·4) = 0.9375; statistic = ((12/(3·4·4))·(6.5² + 6.5² + 11²)
// − 3·4·4)/c = (0.25·205.5 − 48)/0.9375 = 3.375/0.9375 = 3.6; p = e^(−1.8)
// (χ² with 2 degrees of freedom). CD = 2.343·√(3·4/(6·4)) = 2.343·√0.5.
func TestBenchmarksByHand(t *testing.T) {
	var vals []BenchmarkValue
	add := func(f, b string, xs ...float64) {
		for _, x := range xs {
			vals = append(vals, BenchmarkValue{f, b, protocol.Some(x)})
		}
	}
	// Family a's b1 is the mean of two seeds, (0.85 + 0.95)/2 = 0.9; a
	// run without a value is dropped from the mean.
	add("a", "b1", 0.85, 0.95)
	vals = append(vals, BenchmarkValue{"a", "b1", protocol.None("no matrix")})
	add("b", "b1", 0.8)
	add("c", "b1", 0.7)
	add("a", "b2", 0.6)
	add("b", "b2", 0.6)
	add("c", "b2", 0.5)
	add("a", "b3", 0.7)
	add("b", "b3", 0.9)
	add("c", "b3", 0.8)
	add("a", "b4", 0.55)
	add("b", "b4", 0.5)
	add("c", "b4", 0.45)
	add("a", "b5", 0.3)
	add("b", "b5", 0.2)
	vals = append(vals, BenchmarkValue{"c", "b5", protocol.None("no matrix")})

	tbl := NewMeanTable(vals)
	if tbl.N[0][0] != 2 {
		t.Errorf("n(a, b1) = %d", tbl.N[0][0])
	}
	wantValue(t, "mean(a, b1)", tbl.Means[0][0], (0.85+0.95)/2)
	wantAbsent(t, "mean(c, b5)", tbl.Means[2][4], ReasonNoValueOnBenchmark)

	res, err := Benchmarks(tbl.Families, tbl.Benchmarks, true, tbl.Score)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(res.Ranked, ",") != "b1,b2,b3,b4" {
		t.Errorf("ranked %v", res.Ranked)
	}
	if len(res.Notes) != 1 || res.Notes[0] != "benchmark b5 is left out of the ranking: no score for c" {
		t.Errorf("notes %q", res.Notes)
	}
	for i, want := range []float64{1.625, 1.625, 2.75} {
		fr := res.Families[i]
		wantValue(t, "average rank of "+fr.Family, fr.AverageRank, want)
		if fr.NBenchmarks != 4 {
			t.Errorf("%s: n_benchmarks %d", fr.Family, fr.NBenchmarks)
		}
	}
	if res.Families[2].NScored != 4 || res.Families[0].NScored != 5 {
		t.Errorf("scored %d, %d", res.Families[0].NScored, res.Families[2].NScored)
	}
	wantAbsent(t, "c on b5", res.Families[2].Scores[4], ReasonNoScore)
	if s := res.FriedmanStatistic; !s.OK || math.Abs(s.V-3.6) > 1e-12 {
		t.Errorf("friedman statistic %v", s)
	}
	if p := res.FriedmanP; !p.OK || math.Abs(p.V-math.Exp(-1.8)) > 1e-12 {
		t.Errorf("friedman p %v, want %v", p, math.Exp(-1.8))
	}
	wantValue(t, "critical difference", res.CriticalDifference, 2.343*math.Sqrt(12.0/24))

	// Lower is better reverses the ranks: 4 − r for three families.
	low, err := Benchmarks(tbl.Families, tbl.Benchmarks, false, tbl.Score)
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []float64{2.375, 2.375, 1.25} {
		wantValue(t, "lower-better rank", low.Families[i].AverageRank, want)
	}
	wantValue(t, "lower-better friedman", low.FriedmanStatistic, res.FriedmanStatistic.V)
}

func TestBenchmarksEdges(t *testing.T) {
	table := func(m map[[2]string]float64) func(f, b string) (float64, bool) {
		return func(f, b string) (float64, bool) {
			x, ok := m[[2]string{f, b}]
			return x, ok
		}
	}
	// Two families: ranks and CD, no Friedman; a family with no score is
	// left out instead of emptying the ranking.
	res, err := Benchmarks([]string{"x", "", "y"}, []string{"p", "q"}, true, table(map[[2]string]float64{
		{"x", "p"}: 1, {"x", "q"}: 2, {"y", "p"}: 3, {"y", "q"}: 1,
	}))
	if err != nil {
		t.Fatal(err)
	}
	wantAbsent(t, "friedman", res.FriedmanStatistic, ReasonTooFewFamilies)
	wantAbsent(t, "(none)", res.Families[1].AverageRank, ReasonFamilyUnscored)
	wantValue(t, "x", res.Families[0].AverageRank, 1.5)
	wantValue(t, "cd", res.CriticalDifference, 1.960*math.Sqrt(6.0/12))
	if len(res.Notes) != 1 || !strings.Contains(res.Notes[0], "family (none) has no score") {
		t.Errorf("notes %q", res.Notes)
	}

	// Every benchmark ties every family.
	res, err = Benchmarks([]string{"a", "b", "c"}, []string{"p"}, true, func(string, string) (float64, bool) { return 0.5, true })
	if err != nil {
		t.Fatal(err)
	}
	wantAbsent(t, "tied friedman", res.FriedmanP, ReasonAllTied)
	wantValue(t, "tied rank", res.Families[0].AverageRank, 2)

	// No benchmark has every family.
	res, err = Benchmarks([]string{"a", "b"}, []string{"p", "q"}, true, table(map[[2]string]float64{{"a", "p"}: 1, {"b", "q"}: 1}))
	if err != nil {
		t.Fatal(err)
	}
	wantAbsent(t, "rank", res.Families[0].AverageRank, ReasonNoCommonBenchmark)
	wantAbsent(t, "cd", res.CriticalDifference, ReasonNoCommonBenchmark)

	// Eleven families: beyond the Nemenyi table.
	fams := strings.Split("a b c d e f g h i j k", " ")
	res, err = Benchmarks(fams, []string{"p", "q"}, true, func(f, b string) (float64, bool) { return float64(len(f+b) + int(f[0])), true })
	if err != nil {
		t.Fatal(err)
	}
	wantAbsent(t, "cd", res.CriticalDifference, ReasonNemenyiRange)
	if !res.FriedmanStatistic.OK {
		t.Errorf("friedman %v", res.FriedmanStatistic)
	}

	// No families at all.
	res, err = Benchmarks(nil, []string{"p"}, true, table(nil))
	if err != nil {
		t.Fatal(err)
	}
	wantAbsent(t, "empty", res.FriedmanStatistic, ReasonNoScores)

	// Errors.
	if _, err := Benchmarks([]string{"a", "a"}, nil, true, table(nil)); err == nil {
		t.Error("a repeated family accepted")
	}
	if _, err := Benchmarks([]string{"a"}, []string{"p", "p"}, true, table(nil)); err == nil {
		t.Error("a repeated benchmark accepted")
	}
	if _, err := Benchmarks([]string{"a"}, []string{"p"}, true, func(string, string) (float64, bool) { return math.NaN(), true }); err == nil {
		t.Error("a NaN score accepted")
	}
}
