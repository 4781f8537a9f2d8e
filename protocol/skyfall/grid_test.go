package skyfall

import (
	"fmt"
	"math/rand/v2"
)

// gridCase is one case of the grid the Builder property tests walk (rows
// count × labels × components), with its seeded rows.
type gridCase struct {
	n, labels int
	comps     []string
	seed      uint64
	rng       *rand.Rand // rand.NewPCG(seed, the test's stream)
	what      string     // the case, for messages
	gen       *rowGen    // rows of the case's labels and components, from rng
}

// eachGridCase calls f for every rows count in sizes × labels {1, 5, 3000}
// × components {none, "a", three, a name twice}, in that order; the k-th
// case (from 1) is seeded first+k on PCG stream stream. It returns how many
// cases it ran.
func eachGridCase(sizes []int, first, stream uint64, f func(c *gridCase)) int {
	seed := first
	for _, n := range sizes {
		for _, labels := range []int{1, 5, 3000} {
			for _, comps := range [][]string{nil, {"a"}, {"progress", "collision", "success"}, {"x", "x"}} {
				seed++
				rng := rand.New(rand.NewPCG(seed, stream))
				f(&gridCase{
					n: n, labels: labels, comps: comps, seed: seed, rng: rng,
					what: fmt.Sprintf("%d rows, %d labels, components %q (seed %d)", n, labels, comps, seed),
					gen:  &rowGen{rng: rng, nComps: len(comps), labels: labels},
				})
			}
		}
	}
	return int(seed - first)
}
