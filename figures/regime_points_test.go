package figures

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// regimePoints picks, for every regime, exactly the points a scan of every
// point picks, in the same order: on lines as Merge makes them (buckets in
// step order, several labels in a bucket), and on lines out of step order.
func TestRegimePointsEqualsScan(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 300 {
		var ln Line
		ln.Width = 1 + rng.Int64N(4)
		labels := 1 + rng.IntN(5)
		for b := int64(0); b < 1+rng.Int64N(60); b++ {
			for range 1 + rng.IntN(2) { // a bucket may hold two labels
				ln.Points = append(ln.Points, Point{Label: fmt.Sprint("L", rng.IntN(labels)), Start: b * ln.Width, End: (b+1)*ln.Width - 1})
			}
		}
		if trial%5 == 0 {
			rng.Shuffle(len(ln.Points), func(i, j int) { ln.Points[i], ln.Points[j] = ln.Points[j], ln.Points[i] })
		}
		regimes := Regimes(ln)
		got := regimePoints(ln, regimes)
		for ri, r := range regimes {
			var want []int
			for k, pt := range ln.Points {
				if pt.Label == r.Label && pt.Start >= r.Start && pt.End <= r.End {
					want = append(want, k)
				}
			}
			if !slices.Equal(got[ri], want) {
				t.Fatalf("trial %d, regime %v: points %v, a scan finds %v", trial, r, got[ri], want)
			}
		}
	}
}
