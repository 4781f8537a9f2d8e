package family

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/crlbatch/crlbatch/internal/benchcpu"
	"github.com/crlbatch/crlbatch/protocol"
)

// BenchmarkAggregate8x20x10 reduces 8 families × 10 seeds × 20 metrics with
// every statistic at 10,000 bootstrap resamples: CIs of the mean and the
// IQM, the paired test and the paired difference's CI against the baseline.
func BenchmarkAggregate8x20x10(b *testing.B) { benchAggregate(b, 8, 20, 10) }

// BenchmarkAggregate40x20x5 is the shape of bench/scale.sh's families-200
// step (families of 5 seeds; 40 families here, not 200, to keep an
// iteration near a second): the bootstraps are of 5 values, so what each
// resample costs besides its draws counts.
func BenchmarkAggregate40x20x5(b *testing.B) { benchAggregate(b, 40, 20, 5) }

// BenchmarkAggregateNightlyFamily is a family of 5 seeds and its baseline
// of 5 with the 51 metric cells that hold values in the nightly job's
// family table (bench/cache.sh's sweep: 15 metrics, most per label and
// over all labels): the cells issue 15's warm rerun reduces again when one
// of the family's objects changed.
func BenchmarkAggregateNightlyFamily(b *testing.B) { benchAggregate(b, 2, 51, 5) }

func benchAggregate(b *testing.B, families, nMetrics, seeds int) {
	rng := rand.New(rand.NewPCG(1, 2))
	metrics := make([]Metric, nMetrics)
	for m := range metrics {
		hib := m%2 == 0
		metrics[m] = Metric{Name: fmt.Sprintf("metric_%02d", m), HigherIsBetter: &hib}
	}
	var runs []Run
	for f := 0; f < families; f++ {
		for s := 0; s < seeds; s++ {
			r := Run{Key: fmt.Sprintf("f%d-s%d", f, s), Family: fmt.Sprintf("family_%d", f), Seed: fmt.Sprint(s), HasSeed: true, NSteps: 1000}
			for range metrics {
				r.Values = append(r.Values, protocol.Some(rng.NormFloat64()+float64(f)/10))
			}
			runs = append(runs, r)
		}
	}
	opt := DefaultOptions()
	b.ReportAllocs()
	before := benchcpu.Now()
	for b.Loop() {
		if _, err := Aggregate(metrics, runs, opt); err != nil {
			b.Fatal(err)
		}
	}
	benchcpu.Report(b, before)
}

// benchIdentical is a family of 5,000 runs × 20 metrics (bench/scale.sh's
// 20,000 runs in 4 families), every vector distinct.
func benchIdentical() (*Family, []Run) {
	rng := rand.New(rand.NewPCG(5, 6))
	f := &Family{Name: "f"}
	var runs []Run
	for i := range 5000 {
		r := Run{Key: fmt.Sprint(i)}
		for range 20 {
			r.Values = append(r.Values, protocol.Some(rng.NormFloat64()))
		}
		f.Runs = append(f.Runs, i)
		runs = append(runs, r)
	}
	return f, runs
}

// BenchmarkIdenticalRuns is the identical-seed-values finding of that
// family by key; ...Pairwise by comparing every pair, as before (issue 16).
func BenchmarkIdenticalRuns(b *testing.B) {
	f, runs := benchIdentical()
	before := benchcpu.Now()
	for b.Loop() {
		identicalRuns(f, runs)
	}
	benchcpu.Report(b, before)
}

func BenchmarkIdenticalRunsPairwise(b *testing.B) {
	f, runs := benchIdentical()
	before := benchcpu.Now()
	for b.Loop() {
		identicalPairwise(f, runs)
	}
	benchcpu.Report(b, before)
}
