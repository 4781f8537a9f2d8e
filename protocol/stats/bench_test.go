package stats

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/crlbatch/crlbatch/internal/benchcpu"
)

// The skyfall family table at its default size: 8 families × 20 metrics,
// 10 seed values each, the CI of the mean and of the IQM at 10,000
// resamples. Target: one iteration under 1 s on one core.
const (
	benchFamilies  = 8
	benchMetrics   = 20
	benchSeeds     = 10
	benchResamples = 10000
)

func benchWorkload() (families, metrics []string, values [][][]float64) {
	rng := rand.New(rand.NewPCG(1, 2))
	for f := range benchFamilies {
		families = append(families, fmt.Sprintf("family-%d", f))
	}
	for m := range benchMetrics {
		metrics = append(metrics, fmt.Sprintf("metric-%d", m))
	}
	values = make([][][]float64, benchFamilies)
	for f := range values {
		values[f] = make([][]float64, benchMetrics)
		for m := range values[f] {
			xs := make([]float64, benchSeeds)
			for i := range xs {
				xs[i] = rng.NormFloat64()*3 + float64(f)
			}
			values[f][m] = xs
		}
	}
	return families, metrics, values
}

// BenchmarkFamilyTableCIs computes the two CIs with two BootstrapCI calls.
func BenchmarkFamilyTableCIs(b *testing.B) {
	families, metrics, values := benchWorkload()
	b.ReportAllocs()
	before := benchcpu.Now()
	for b.Loop() {
		for f, fam := range families {
			for m, met := range metrics {
				seed := SeedFor(0, fam, met)
				BootstrapCI(values[f][m], StatMean, benchResamples, seed, 0.95)
				BootstrapCI(values[f][m], StatIQM, benchResamples, seed, 0.95)
			}
		}
	}
	benchcpu.Report(b, before)
}

// BenchmarkFamilyTableCIsShared draws the resamples once for both statistics.
func BenchmarkFamilyTableCIsShared(b *testing.B) {
	families, metrics, values := benchWorkload()
	stats := []Statistic{StatMean, StatIQM}
	b.ReportAllocs()
	before := benchcpu.Now()
	for b.Loop() {
		for f, fam := range families {
			for m, met := range metrics {
				BootstrapCIs(values[f][m], stats, benchResamples, SeedFor(0, fam, met), 0.95)
			}
		}
	}
	benchcpu.Report(b, before)
}

// benchLarge is one family × metric cell of a 10,000-run sweep in 4
// families: 2,500 seed values.
func benchLarge() []float64 {
	rng := rand.New(rand.NewPCG(3, 4))
	xs := make([]float64, 2500)
	for i := range xs {
		xs[i] = rng.NormFloat64()*3 + 1
	}
	return xs
}

// BenchmarkBootstrapLargeShared is the CIs of the mean and the IQM of one
// cell of 2,500 seed values at 10,000 resamples (the family table of a
// 10,000-run sweep makes one per family and metric).
func BenchmarkBootstrapLargeShared(b *testing.B) {
	xs := benchLarge()
	stats := []Statistic{StatMean, StatIQM}
	b.ReportAllocs()
	before := benchcpu.Now()
	for b.Loop() {
		BootstrapCIs(xs, stats, benchResamples, 7, 0.95)
	}
	benchcpu.Report(b, before)
}

// BenchmarkBootstrapLargeMean is the CI of the mean alone on the same cell
// (the paired difference's CI).
func BenchmarkBootstrapLargeMean(b *testing.B) {
	xs := benchLarge()
	b.ReportAllocs()
	before := benchcpu.Now()
	for b.Loop() {
		BootstrapCI(xs, StatMean, benchResamples, 7, 0.95)
	}
	benchcpu.Report(b, before)
}

// BenchmarkProbImprovementCILarge is the interval of the probability of
// improvement of one cell of 2,500 seeds against a baseline of 2,500 at
// 10,000 resamples (one per family and metric of a 10,000-run sweep).
func BenchmarkProbImprovementCILarge(b *testing.B) {
	xs, ys := benchLarge(), benchLarge()
	for i := range ys {
		ys[i] += 0.5
	}
	b.ReportAllocs()
	before := benchcpu.Now()
	for b.Loop() {
		ProbImprovementCI(xs, ys, benchResamples, 7, 0.95)
	}
	benchcpu.Report(b, before)
}

// BenchmarkProbImprovementCILargeTies is the baseline's cell against
// itself (every value of x equal to one of y: the path with ties).
func BenchmarkProbImprovementCILargeTies(b *testing.B) {
	xs := benchLarge()
	b.ReportAllocs()
	before := benchcpu.Now()
	for b.Loop() {
		ProbImprovementCI(xs, xs, benchResamples, 7, 0.95)
	}
	benchcpu.Report(b, before)
}

// BenchmarkProbImprovementCILargeDrawOrder is the same cell the way issue
// 14 counted it (the x indices listed in draw order), to compare.
func BenchmarkProbImprovementCILargeDrawOrder(b *testing.B) {
	xs, ys := benchLarge(), benchLarge()
	for i := range ys {
		ys[i] += 0.5
	}
	b.ReportAllocs()
	before := benchcpu.Now()
	for b.Loop() {
		probImprovementCIDrawOrder(xs, ys, benchResamples, 7, 0.95)
	}
	benchcpu.Report(b, before)
}

// benchStatistics is the 10,000 resample statistics whose 2.5 % and
// 97.5 % quantiles every interval of a family table takes.
func benchStatistics() []float64 {
	rng := rand.New(rand.NewPCG(5, 6))
	v := make([]float64, benchResamples)
	for i := range v {
		v[i] = rng.NormFloat64()
	}
	return v
}

// BenchmarkQuantilePairSelect is the interval's selection as the bootstrap
// does it (windows, then quickselect if they miss); ...Quick the
// quickselect alone, to compare. Each iteration selects from a fresh copy.
func BenchmarkQuantilePairSelect(b *testing.B) {
	v := benchStatistics()
	work := make([]float64, len(v))
	before := benchcpu.Now()
	for b.Loop() {
		copy(work, v)
		quantilePairSelect(work, 0.025000000000000022, 0.975)
	}
	benchcpu.Report(b, before)
}

func BenchmarkQuantilePairSelectQuick(b *testing.B) {
	v := benchStatistics()
	work := make([]float64, len(v))
	n := len(v)
	i, t := quantileIndex(n, 0.025000000000000022)
	j, u := quantileIndex(n, 0.975)
	before := benchcpu.Now()
	for b.Loop() {
		copy(work, v)
		quantilePairQuick(work, i, t, j, u)
	}
	benchcpu.Report(b, before)
}

// benchSmall is one family × metric cell of bench/scale.sh's families-200
// step: 5 seed values, where what a resample costs besides its 5 draws
// (the statistic, the loop) is most of the bootstrap.
func benchSmall(seed uint64) []float64 {
	rng := rand.New(rand.NewPCG(seed, 4))
	xs := make([]float64, 5)
	for i := range xs {
		xs[i] = rng.NormFloat64()*3 + 1
	}
	return xs
}

// BenchmarkBootstrapSmallShared is the CIs of the mean and the IQM of a
// cell of 5 values at 10,000 resamples.
func BenchmarkBootstrapSmallShared(b *testing.B) {
	xs := benchSmall(3)
	stats := []Statistic{StatMean, StatIQM}
	before := benchcpu.Now()
	for b.Loop() {
		BootstrapCIs(xs, stats, benchResamples, 7, 0.95)
	}
	benchcpu.Report(b, before)
}

// BenchmarkBootstrapSmallMean is the CI of the mean alone of 5 values (the
// paired difference's CI).
func BenchmarkBootstrapSmallMean(b *testing.B) {
	xs := benchSmall(3)
	before := benchcpu.Now()
	for b.Loop() {
		BootstrapCI(xs, StatMean, benchResamples, 7, 0.95)
	}
	benchcpu.Report(b, before)
}

// BenchmarkProbImprovementCISmall is the interval of the probability of
// improvement of 5 seed values against a baseline of 5.
func BenchmarkProbImprovementCISmall(b *testing.B) {
	xs, ys := benchSmall(3), benchSmall(4)
	before := benchcpu.Now()
	for b.Loop() {
		ProbImprovementCI(xs, ys, benchResamples, 7, 0.95)
	}
	benchcpu.Report(b, before)
}

// BenchmarkQuantilePairSelectTies selects from the statistics of a 5-value
// cell (means of 5 draws from 5 values: about a hundred distinct values,
// many tied), as the families-200 step's intervals do.
func BenchmarkQuantilePairSelectTies(b *testing.B) {
	rng := rand.New(rand.NewPCG(7, 8))
	xs := benchSmall(3)
	v := make([]float64, benchResamples)
	for i := range v {
		s := 0.0
		for range xs {
			s += xs[rng.IntN(len(xs))]
		}
		v[i] = s / float64(len(xs))
	}
	work := make([]float64, len(v))
	before := benchcpu.Now()
	for b.Loop() {
		copy(work, v)
		quantilePairSelect(work, 0.025000000000000022, 0.975)
	}
	benchcpu.Report(b, before)
}

// BenchmarkPCGRefill is the draw stream's generator alone, drawBlock
// outputs per operation, by each refill this machine runs (ns/output is
// per output of rand.PCG): against BenchmarkPCGScalar, the serial step.
func BenchmarkPCGRefill(b *testing.B) {
	for _, p := range refills() {
		b.Run(p.name, func(b *testing.B) {
			withDrawPath(p, func() {
				var d drawStream
				d.reset(1)
				before := benchcpu.Now()
				for b.Loop() {
					d.refill()
				}
				benchcpu.Report(b, before)
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*drawBlock), "ns/output")
			})
		})
	}
}

// BenchmarkPCGScalar is pcgNext, one output after another, drawBlock
// outputs per operation.
func BenchmarkPCGScalar(b *testing.B) {
	var buf [drawBlock]uint64
	hi, lo := uint64(1), uint64(0)
	before := benchcpu.Now()
	for b.Loop() {
		for i := range buf {
			hi, lo, buf[i] = pcgNext(hi, lo)
		}
	}
	benchcpu.Report(b, before)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*drawBlock), "ns/output")
}

// BenchmarkBootstrapSeeds is the cells of small families at 10,000
// resamples, by the number of seed values (3, 5 and 10: the families of
// real sweeps): the CIs of the mean and the IQM together (shared), the CI
// of the mean alone (mean: the paired difference's), and the interval of
// the probability of improvement against a baseline of as many (pi).
func BenchmarkBootstrapSeeds(b *testing.B) {
	for _, n := range []int{3, 5, 6, 7, 10} {
		rng := rand.New(rand.NewPCG(uint64(n), 9))
		xs, ys := make([]float64, n), make([]float64, n)
		for i := range xs {
			xs[i] = rng.NormFloat64()*3 + 1
			ys[i] = rng.NormFloat64()*3 + 0.5
		}
		b.Run(fmt.Sprintf("%d/shared", n), func(b *testing.B) {
			stats := []Statistic{StatMean, StatIQM}
			before := benchcpu.Now()
			for b.Loop() {
				BootstrapCIs(xs, stats, benchResamples, 7, 0.95)
			}
			benchcpu.Report(b, before)
		})
		b.Run(fmt.Sprintf("%d/mean", n), func(b *testing.B) {
			before := benchcpu.Now()
			for b.Loop() {
				BootstrapCI(xs, StatMean, benchResamples, 7, 0.95)
			}
			benchcpu.Report(b, before)
		})
		b.Run(fmt.Sprintf("%d/pi", n), func(b *testing.B) {
			before := benchcpu.Now()
			for b.Loop() {
				ProbImprovementCI(xs, ys, benchResamples, 7, 0.95)
			}
			benchcpu.Report(b, before)
		})
	}
}

// BenchmarkStudentTQuantile is the curves' band quantile at the df of a
// few seeds, of the 60-seed sweep, and beyond the 64 figures keeps
// (TQuantile975 computes those at every point); gonum's, which it
// replaced, beside it.
func BenchmarkStudentTQuantile(b *testing.B) {
	for _, df := range []int{3, 59, 100, 1000} {
		b.Run(fmt.Sprintf("ours/df=%d", df), func(b *testing.B) {
			for b.Loop() {
				StudentTQuantile(0.975, df)
			}
		})
		b.Run(fmt.Sprintf("gonum/df=%d", df), func(b *testing.B) {
			for b.Loop() {
				distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(df)}.Quantile(0.975)
			}
		})
	}
}
