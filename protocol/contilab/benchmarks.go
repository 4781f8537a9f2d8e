package contilab

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/crlbatch/crlbatch/protocol"
	"github.com/crlbatch/crlbatch/protocol/stats"
)

// NemenyiAlpha is the significance level of the Nemenyi critical difference.
const NemenyiAlpha = 0.05

// Reasons of absent values across benchmarks.
const (
	ReasonNoRunOnBenchmark   = "the family has no run on this benchmark"
	ReasonNoValueOnBenchmark = "no run of the family on this benchmark has a value"
	ReasonNoScore            = "no score on this benchmark"
	ReasonFamilyUnscored     = "the family has no score on any benchmark"
	ReasonNoScores           = "no family has a score on any benchmark"
	ReasonNoCommonBenchmark  = "no benchmark has a score for every ranked family"
	ReasonTooFewFamilies     = "the Friedman test needs at least 3 families"
	ReasonAllTied            = "every benchmark ties all families"
	ReasonNemenyiRange       = "the Nemenyi table covers 2 to 10 families"
)

// BenchmarkValue is one run's value of the rank metric, with the run's
// family and benchmark.
type BenchmarkValue struct {
	Family    string
	Benchmark string
	Value     protocol.Value
}

// MeanTable holds each family's mean of the rank metric per benchmark.
type MeanTable struct {
	// Families and Benchmarks are in order of first appearance.
	Families   []string
	Benchmarks []string
	// Means[f][b] is the mean over family f's runs on benchmark b that have
	// a value (summed in the order the runs were handed in); N[f][b] counts
	// them.
	Means [][]protocol.Value
	N     [][]int
}

// NewMeanTable averages the runs' values (in canonical run order) per family
// and benchmark; absent values are dropped.
func NewMeanTable(values []BenchmarkValue) *MeanTable {
	t := &MeanTable{}
	fi, bi := map[string]int{}, map[string]int{}
	type acc struct {
		sum  float64
		n    int
		runs int
	}
	cells := map[[2]int]*acc{}
	for _, v := range values {
		f, ok := fi[v.Family]
		if !ok {
			f = len(t.Families)
			fi[v.Family] = f
			t.Families = append(t.Families, v.Family)
		}
		b, ok := bi[v.Benchmark]
		if !ok {
			b = len(t.Benchmarks)
			bi[v.Benchmark] = b
			t.Benchmarks = append(t.Benchmarks, v.Benchmark)
		}
		c := cells[[2]int{f, b}]
		if c == nil {
			c = &acc{}
			cells[[2]int{f, b}] = c
		}
		c.runs++
		if v.Value.OK {
			c.sum += v.Value.V
			c.n++
		}
	}
	t.Means = make([][]protocol.Value, len(t.Families))
	t.N = make([][]int, len(t.Families))
	for f := range t.Families {
		t.Means[f] = make([]protocol.Value, len(t.Benchmarks))
		t.N[f] = make([]int, len(t.Benchmarks))
		for b := range t.Benchmarks {
			c := cells[[2]int{f, b}]
			switch {
			case c == nil:
				t.Means[f][b] = protocol.None(ReasonNoRunOnBenchmark)
			case c.n == 0:
				t.Means[f][b] = protocol.None(ReasonNoValueOnBenchmark)
			default:
				t.Means[f][b] = protocol.Finite(c.sum / float64(c.n))
				t.N[f][b] = c.n
			}
		}
	}
	return t
}

// Score returns family's mean on benchmark, if it has one: the score
// function for Benchmarks.
func (t *MeanTable) Score(family, benchmark string) (float64, bool) {
	for f, name := range t.Families {
		if name != family {
			continue
		}
		for b, bn := range t.Benchmarks {
			if bn == benchmark {
				v := t.Means[f][b]
				return v.V, v.OK
			}
		}
	}
	return 0, false
}

// FamilyRank is one family's line of benchmarks.parquet.
type FamilyRank struct {
	Family string
	// AverageRank is the family's mean rank over the ranked benchmarks (1 =
	// best; ties share the average of their ranks).
	AverageRank protocol.Value
	// NBenchmarks counts the benchmarks the average rank is taken over (the
	// same for every ranked family; 0 for a family left out).
	NBenchmarks int
	// NScored counts the benchmarks where the family has a score.
	NScored int
	// Scores holds the family's score per benchmark, aligned with
	// BenchmarkResult.Benchmarks.
	Scores []protocol.Value
}

// BenchmarkResult is the comparison of families across benchmarks.
type BenchmarkResult struct {
	// Benchmarks are all the benchmarks handed in, in that order; Ranked are
	// those that entered the ranking.
	Benchmarks []string
	Ranked     []string
	Families   []FamilyRank
	// FriedmanStatistic and FriedmanP are scipy.stats.friedmanchisquare over
	// the ranked families and benchmarks.
	FriedmanStatistic protocol.Value
	FriedmanP         protocol.Value
	// CriticalDifference is the Nemenyi critical difference of average
	// ranks at Alpha (Demšar 2006).
	CriticalDifference protocol.Value
	Alpha              float64
	HigherIsBetter     bool
	// Notes name the families and benchmarks left out of the ranking.
	Notes []string
}

// Benchmarks ranks families across benchmarks. score(family, benchmark)
// gives a family's score on a benchmark (its mean of the rank metric, e.g.
// MeanTable.Score), ok=false when it has none; higherIsBetter says which way
// ranks first (HigherIsBetter of the rank metric).
//
// The ranking needs a score for every family on every benchmark it uses, so
// missing scores are handled in two steps, each named in Notes: first a
// family with no score on any benchmark is left out (its average rank is
// absent); then every benchmark where some remaining family has no score is
// dropped from the ranking. Within each remaining benchmark the families are
// ranked 1 (best) … k with ties averaged, and the ranks averaged over the n
// benchmarks (stats.AverageRanks); the Friedman test (stats.Friedman) needs
// k ≥ 3 and a benchmark without a full tie; the Nemenyi critical difference
// (stats.NemenyiCD at NemenyiAlpha) needs 2 ≤ k ≤ 10.
//
// Errors: a repeated family or benchmark name, or a score that is not finite.
func Benchmarks(families, benchmarks []string, higherIsBetter bool, score func(family, benchmark string) (float64, bool)) (*BenchmarkResult, error) {
	if err := distinct("family", families); err != nil {
		return nil, err
	}
	if err := distinct("benchmark", benchmarks); err != nil {
		return nil, err
	}
	res := &BenchmarkResult{
		Benchmarks:     append([]string(nil), benchmarks...),
		Alpha:          NemenyiAlpha,
		HigherIsBetter: higherIsBetter,
		Families:       make([]FamilyRank, len(families)),
	}
	has := make([][]bool, len(families))
	val := make([][]float64, len(families))
	var ranked []int
	for f, fam := range families {
		fr := &res.Families[f]
		fr.Family = fam
		fr.Scores = make([]protocol.Value, len(benchmarks))
		has[f] = make([]bool, len(benchmarks))
		val[f] = make([]float64, len(benchmarks))
		for b, bench := range benchmarks {
			x, ok := score(fam, bench)
			if !ok {
				fr.Scores[b] = protocol.None(ReasonNoScore)
				continue
			}
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return nil, fmt.Errorf("family %q, benchmark %q: score %v is not finite", fam, bench, x)
			}
			fr.Scores[b] = protocol.Some(x)
			has[f][b], val[f][b] = true, x
			fr.NScored++
		}
		if fr.NScored == 0 {
			fr.AverageRank = protocol.None(ReasonFamilyUnscored)
			if len(benchmarks) > 0 {
				res.Notes = append(res.Notes, fmt.Sprintf("family %s has no score on any benchmark and is left out of the ranking", quoteName(fam)))
			}
			continue
		}
		ranked = append(ranked, f)
	}

	var cols []int
	for b, bench := range benchmarks {
		var missing []string
		for _, f := range ranked {
			if !has[f][b] {
				missing = append(missing, quoteName(families[f]))
			}
		}
		if len(missing) > 0 {
			res.Notes = append(res.Notes, fmt.Sprintf("benchmark %s is left out of the ranking: no score for %s", quoteName(bench), strings.Join(missing, ", ")))
			continue
		}
		cols = append(cols, b)
		res.Ranked = append(res.Ranked, bench)
	}

	none := func(reason string) {
		res.FriedmanStatistic = protocol.None(reason)
		res.FriedmanP = protocol.None(reason)
		res.CriticalDifference = protocol.None(reason)
	}
	switch {
	case len(ranked) == 0:
		none(ReasonNoScores)
		return res, nil
	case len(cols) == 0:
		for _, f := range ranked {
			res.Families[f].AverageRank = protocol.None(ReasonNoCommonBenchmark)
		}
		none(ReasonNoCommonBenchmark)
		return res, nil
	}
	if len(cols) == 1 {
		res.Notes = append(res.Notes, "only one benchmark is ranked")
	}

	// scores is benchmarks × ranked families.
	scores := make([][]float64, len(cols))
	for i, b := range cols {
		scores[i] = make([]float64, len(ranked))
		for j, f := range ranked {
			scores[i][j] = val[f][b]
		}
	}
	avg, err := stats.AverageRanks(scores, higherIsBetter)
	if err != nil {
		return nil, err
	}
	for j, f := range ranked {
		res.Families[f].AverageRank = protocol.Some(avg[j])
		res.Families[f].NBenchmarks = len(cols)
	}

	k, n := len(ranked), len(cols)
	if k < 3 {
		res.FriedmanStatistic = protocol.None(ReasonTooFewFamilies)
		res.FriedmanP = protocol.None(ReasonTooFewFamilies)
	} else {
		st, p, err := stats.Friedman(scores)
		switch {
		case errors.Is(err, stats.ErrAllTied):
			res.FriedmanStatistic = protocol.None(ReasonAllTied)
			res.FriedmanP = protocol.None(ReasonAllTied)
		case err != nil:
			return nil, err
		default:
			res.FriedmanStatistic = protocol.Some(st)
			res.FriedmanP = protocol.Some(p)
		}
	}
	if k < 2 || k > 10 {
		res.CriticalDifference = protocol.None(ReasonNemenyiRange)
	} else {
		cd, err := stats.NemenyiCD(k, n, NemenyiAlpha)
		if err != nil {
			return nil, err
		}
		res.CriticalDifference = protocol.Some(cd)
	}
	return res, nil
}

func distinct(what string, names []string) error {
	seen := make(map[string]bool, len(names))
	for _, n := range names {
		if seen[n] {
			return fmt.Errorf("%s %q is listed twice", what, n)
		}
		seen[n] = true
	}
	return nil
}

// quoteName renders a family or benchmark for a note; the empty family (runs
// lacking the group-by field) is "(none)".
func quoteName(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}
