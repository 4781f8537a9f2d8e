package stats

import (
	"errors"
	"fmt"
	"math"
)

// Errors of the rank statistics across benchmarks.
var (
	ErrRagged       = errors.New("benchmarks do not all score the same families")
	ErrTooFewGroups = errors.New("the Friedman test needs at least 3 families")
	ErrNoBlocks     = errors.New("no benchmarks")
	ErrAllTied      = errors.New("every benchmark ties all families")
)

// checkScores validates a benchmarks × families matrix and returns the number
// of families.
func checkScores(scores [][]float64) (int, error) {
	if len(scores) == 0 {
		return 0, ErrNoBlocks
	}
	k := len(scores[0])
	for _, row := range scores {
		if len(row) != k {
			return 0, ErrRagged
		}
		for _, v := range row {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return 0, errors.New("a benchmark score is not a finite number")
			}
		}
	}
	if k == 0 {
		return 0, errors.New("no families")
	}
	return k, nil
}

// AverageRanks ranks the families within each benchmark, 1 for the best (the
// highest score when higherIsBetter, else the lowest), tied families sharing
// the average of their ranks as scipy.stats.rankdata does, and returns each
// family's mean rank over the benchmarks (rank sum, exact, divided by the
// number of benchmarks). scores is benchmarks × families.
func AverageRanks(scores [][]float64, higherIsBetter bool) ([]float64, error) {
	k, err := checkScores(scores)
	if err != nil {
		return nil, err
	}
	sums := make([]float64, k)
	row := make([]float64, k)
	for _, s := range scores {
		for j, v := range s {
			if higherIsBetter {
				v = -v
			}
			row[j] = v
		}
		ranks, _ := rankAverage(row)
		for j, r := range ranks {
			sums[j] += r
		}
	}
	for j := range sums {
		sums[j] /= float64(len(scores))
	}
	return sums, nil
}

// Friedman is the Friedman test of k ≥ 3 families over n benchmarks (scores is
// benchmarks × families), equal to scipy.stats.friedmanchisquare(*columns) of
// SciPy 1.10.1. Within each benchmark the families are ranked (ties
// averaged); with R_j the rank sum of family j and T = Σ t(t²−1) over all
// groups of t tied families,
//
//	c = 1 − T/(k(k²−1)n)
//	statistic = ((12/(k·n·(k+1)))·Σ R_j² − 3n(k+1)) / c
//
// evaluated in this order, and p = ChiSquareSF(statistic, k−1). The direction
// of the scores does not matter. ErrAllTied when every benchmark ties every
// family (SciPy returns NaN there).
func Friedman(scores [][]float64) (statistic, p float64, err error) {
	k, err := checkScores(scores)
	if err != nil {
		return 0, 0, err
	}
	if k < 3 {
		return 0, 0, ErrTooFewGroups
	}
	n := len(scores)
	rankSums := make([]float64, k)
	var ties int64
	for _, s := range scores {
		ranks, t := rankAverage(s)
		ties += t
		for j, r := range ranks {
			rankSums[j] += r
		}
	}
	c := 1 - float64(ties)/float64(k*(k*k-1)*n)
	if c == 0 {
		return 0, 0, ErrAllTied
	}
	ssbn := 0.0
	for _, r := range rankSums {
		ssbn += float64(r * r)
	}
	statistic = (float64(12.0/float64(k*n*(k+1))*ssbn) - float64(3*n*(k+1))) / c
	return statistic, ChiSquareSF(statistic, float64(k-1)), nil
}

// nemenyiQ holds q_α of the two-tailed Nemenyi test for k = 2 … 10 families,
// the studentized range quantile divided by √2, as printed in Demšar (2006),
// "Statistical comparisons of classifiers over multiple data sets", JMLR 7,
// Table 5(a).
func nemenyiQ(alpha float64) (q [9]float64, ok bool) {
	switch alpha {
	case 0.05:
		return [9]float64{1.960, 2.343, 2.569, 2.728, 2.850, 2.949, 3.031, 3.102, 3.164}, true
	case 0.10:
		return [9]float64{1.645, 2.052, 2.291, 2.459, 2.589, 2.693, 2.780, 2.855, 2.920}, true
	}
	return q, false
}

// NemenyiCD is the critical difference of average ranks in the Nemenyi test,
// CD = q_α·√(k(k+1)/(6n)) for k families over n benchmarks, with q_α from
// Demšar's table (alpha 0.05 or 0.10, k from 2 to 10); computed as
// q·Sqrt(float64(k(k+1))/(6·float64(n))). Other alphas or k, and n < 1, are
// errors.
func NemenyiCD(k, n int, alpha float64) (float64, error) {
	row, ok := nemenyiQ(alpha)
	if !ok {
		return 0, fmt.Errorf("no Nemenyi table for alpha %v (have 0.05 and 0.10)", alpha)
	}
	if k < 2 || k > 10 {
		return 0, fmt.Errorf("no Nemenyi q for %d families (the table covers 2 to 10)", k)
	}
	if n < 1 {
		return 0, ErrNoBlocks
	}
	return row[k-2] * math.Sqrt(float64(k*(k+1))/(6*float64(n))), nil
}
