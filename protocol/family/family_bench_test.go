package family

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/crlbatch/crlbatch/protocol"
)

// BenchmarkAggregate8x20x10 reduces 8 families × 10 seeds × 20 metrics with
// every statistic at 10,000 bootstrap resamples: CIs of the mean and the
// IQM, the paired test and the paired difference's CI against the baseline.
func BenchmarkAggregate8x20x10(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	metrics := make([]Metric, 20)
	for m := range metrics {
		hib := m%2 == 0
		metrics[m] = Metric{Name: fmt.Sprintf("metric_%02d", m), HigherIsBetter: &hib}
	}
	var runs []Run
	for f := 0; f < 8; f++ {
		for s := 0; s < 10; s++ {
			r := Run{Key: fmt.Sprintf("f%d-s%d", f, s), Family: fmt.Sprintf("family_%d", f), Seed: fmt.Sprint(s), HasSeed: true, NSteps: 1000}
			for range metrics {
				r.Values = append(r.Values, protocol.Some(rng.NormFloat64()+float64(f)/10))
			}
			runs = append(runs, r)
		}
	}
	opt := DefaultOptions()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Aggregate(metrics, runs, opt); err != nil {
			b.Fatal(err)
		}
	}
}
