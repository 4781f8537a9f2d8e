package skyfall

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/crlbatch/crlbatch/protocol"
)

// randomTrace makes a trace with recurring labels, aliases, negative rewards,
// episode-end and solve components, invalid actions and effective ranks.
func randomTrace(rng *rand.Rand) *Trace {
	comps := []string{"bonus", "solved"}
	b := NewBuilder(fmt.Sprintf("r%d", rng.Uint64()), comps)
	labels := []string{"a", "b", "c", "d"}[:1+rng.IntN(4)]
	n := 1 + rng.IntN(200)
	cur := labels[rng.IntN(len(labels))]
	for i := 0; i < n; i++ {
		if rng.IntN(8) == 0 {
			cur = labels[rng.IntN(len(labels))]
		}
		row := Row{Reward: rng.NormFloat64(), Label: cur, Invalid: -1, Comps: []float64{0, 0}}
		if rng.IntN(10) == 0 {
			row.Comps[0] = 1
		}
		if rng.IntN(3) == 0 {
			row.Comps[1] = rng.Float64()
		}
		if cur == "d" {
			row.Origin, row.HasOrigin = "a", true
		}
		if rng.IntN(2) == 0 {
			row.Invalid = int8(rng.IntN(2))
		}
		if rng.IntN(2) == 0 {
			row.EffRank, row.HasEffRank = rng.Float64()*10, true
		}
		b.Add(&row)
	}
	return b.Trace(map[string]string{})
}

func randomParams(rng *rand.Rand, tr *Trace) Params {
	p := DefaultParams()
	if rng.IntN(2) == 0 {
		p.Window = WindowPostShift
	}
	if rng.IntN(2) == 0 {
		p.Anchor = AnchorCeiling
	}
	switch rng.IntN(3) {
	case 1:
		p.Ceiling = ScalarCeiling(rng.NormFloat64(), "explicit")
	case 2:
		m := map[string]float64{}
		for _, l := range tr.LabelNames {
			m[l] = rng.NormFloat64()
		}
		p.Ceiling = MapCeiling(m, "explicit")
	}
	if rng.IntN(2) == 0 {
		p.EpisodeEnd = []string{"bonus"}
	}
	if rng.IntN(2) == 0 {
		p.SolveComponent = "solved"
	}
	p.TailFraction = []float64{0.2, 0.28, 0.1, 1}[rng.IntN(4)]
	p.ZeroShotWindow = 1 + rng.IntN(12)
	return p
}

// checkInvariants verifies what must hold for every trace: adaptation speed
// in [1, window length]; variances ≥ 0; every absent value has a reason and
// every present one is finite.
func checkInvariants(t *testing.T, tr *Trace, p Params, res *RunResult) {
	t.Helper()
	check := func(what string, v protocol.Value) {
		if err := v.Validate(); err != nil {
			t.Errorf("%s: %v", what, err)
		}
	}
	for _, iv := range res.Intervals {
		wlen := iv.NSteps
		if p.Window == WindowPostShift {
			wlen = tr.Len() - iv.StartRow
		}
		for _, v := range []protocol.Value{iv.AdaptationSpeed, iv.RecoveryTime} {
			check("interval", v)
			if v.OK && (v.V < 1 || v.V > float64(wlen)) {
				t.Errorf("interval %d: τ = %v outside [1, %d]", iv.Index, v.V, wlen)
			}
		}
		check("interval variance", iv.Variance)
		if iv.Variance.OK && iv.Variance.V < 0 {
			t.Errorf("interval %d: negative variance", iv.Index)
		}
		check("zero-shot", iv.ZeroShotReward)
		check("tail", iv.TailMean)
	}
	for _, l := range res.Labels {
		for _, m := range LabelMetrics {
			v, _ := l.Metric(m)
			check(l.Label+" "+m, v)
		}
		if v := l.StabilityVariance; v.OK && v.V < 0 {
			t.Errorf("%s: negative variance %v", l.Label, v.V)
		}
		if v := l.AdaptationSpeed; v.OK && v.V < 1 {
			t.Errorf("%s: adaptation %v < 1", l.Label, v.V)
		}
		for _, v := range l.StabilityVariancePerInterval {
			check("per-interval variance", v)
		}
	}
	for _, m := range append(append([]string{}, RunMetrics...), CountMetrics...) {
		v, ok := res.RunMetric(m)
		if !ok {
			t.Fatalf("run metric %s unknown", m)
		}
		check(m, v)
	}
}

func TestInvariantsRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 2000; i++ {
		tr := randomTrace(rng)
		p := randomParams(rng, tr)
		res, err := Score(tr, &p, nil)
		if err != nil {
			t.Fatal(err)
		}
		checkInvariants(t, tr, p, res)
	}
}

// FuzzScore drives Score with traces decoded from fuzz bytes: no panic, and
// the invariants hold.
func FuzzScore(f *testing.F) {
	f.Add([]byte{1, 2, 3, 4, 5}, uint8(0))
	f.Add([]byte{0, 0, 0, 9, 9, 1, 1}, uint8(3))
	f.Fuzz(func(t *testing.T, data []byte, mode uint8) {
		if len(data) == 0 {
			return
		}
		b := NewBuilder("fuzz", []string{"bonus"})
		for i, x := range data {
			row := Row{
				Reward:  float64(int8(x)) / 7,
				Label:   string(rune('a' + int(x>>5)%4)),
				Invalid: int8(int(x)%3) - 1,
				Comps:   []float64{float64(x & 1)},
			}
			if i%5 == 0 {
				row.EffRank, row.HasEffRank = float64(x), true
			}
			b.Add(&row)
		}
		tr := b.Trace(nil)
		p := DefaultParams()
		if mode&1 != 0 {
			p.Window = WindowPostShift
		}
		if mode&2 != 0 {
			p.Anchor = AnchorCeiling
			p.Ceiling = ScalarCeiling(float64(mode)/64, "explicit")
		}
		if mode&4 != 0 {
			p.EpisodeEnd = []string{"bonus"}
		}
		res, err := Score(tr, &p, nil)
		if err != nil {
			t.Fatal(err)
		}
		checkInvariants(t, tr, p, res)
	})
}
