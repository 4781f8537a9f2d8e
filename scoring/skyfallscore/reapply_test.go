package skyfallscore

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/crlbatch/crlbatch/protocol/skyfall"
	"github.com/crlbatch/crlbatch/scoring"
)

// reapplyTrace is a random run: recurring labels, an episode-end
// component, rewards of several scales.
func reapplyTrace(rng *rand.Rand, i int) *skyfall.Trace {
	b := skyfall.NewBuilder(fmt.Sprintf("run%d", i), []string{"done"})
	labels := []string{"calm", "gusty", "storm", "fog"}[:1+rng.IntN(4)]
	cur := labels[rng.IntN(len(labels))]
	scale := math.Pow(10, float64(rng.IntN(5)-2))
	for range 1 + rng.IntN(300) {
		if rng.IntN(10) == 0 {
			cur = labels[rng.IntN(len(labels))]
		}
		row := skyfall.Row{Reward: rng.NormFloat64() * scale, Label: cur, Invalid: -1, Comps: []float64{0}}
		if rng.IntN(12) == 0 {
			row.Comps[0] = 1
		}
		b.Add(&row)
	}
	return b.Trace(map[string]string{"algorithm_id": "ppo"})
}

// boundJob is a job whose ceiling is one value per label, prepared.
func boundJob(t *testing.T, p skyfall.Params, m map[string]float64) *job {
	t.Helper()
	sj, err := NewJob(Config{Params: p, BoundMap: m, BoundMapURL: "test"}, scoring.Env{Concurrency: 1})
	if err != nil {
		t.Fatal(err)
	}
	j := sj.(*job)
	if err := j.Prepare(func(func(*scoring.Run) error) error { return nil }); err != nil {
		t.Fatal(err)
	}
	return j
}

func randomBounds(rng *rand.Rand) map[string]float64 {
	m := map[string]float64{}
	for _, l := range []string{"calm", "gusty", "storm", "fog"} {
		m[l] = rng.NormFloat64() * math.Pow(10, float64(rng.IntN(7)-3))
	}
	return m
}

// TestReapplyBitIdentical: a run scored under one set of ceilings,
// written as --cache writes it and read back, then brought to other
// ceilings by Reapply, encodes to exactly the bytes of the same run scored
// in full under the other ceilings (the independent computation), over
// many random runs, windows and ceilings.
func TestReapplyBitIdentical(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	for i := range 1500 {
		tr := reapplyTrace(rng, i)
		p := skyfall.DefaultParams()
		p.EpisodeEnd = []string{"done"}
		if rng.IntN(2) == 0 {
			p.Window = skyfall.WindowPostShift
		}
		before, after := boundJob(t, p, randomBounds(rng)), boundJob(t, p, randomBounds(rng))
		run := &scoring.Run{Key: tr.Key, Meta: tr.Meta, Rows: tr.Len(), Data: tr}
		old, err := before.Score(run)
		if err != nil {
			t.Fatal(err)
		}
		enc, err := scoring.AppendScored(before, nil, old)
		if err != nil {
			t.Fatal(err)
		}
		kept, err := scoring.DecodeScored(after, enc)
		if err != nil {
			t.Fatal(err)
		}
		ok, err := after.Reapply(kept, nil)
		if err != nil || !ok {
			t.Fatalf("case %d: Reapply %v %v", i, ok, err)
		}
		want, err := after.Score(run)
		if err != nil {
			t.Fatal(err)
		}
		got, err := scoring.AppendScored(after, nil, kept)
		if err != nil {
			t.Fatal(err)
		}
		full, err := scoring.AppendScored(after, nil, want)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, full) {
			t.Fatalf("case %d: the re-applied run differs from the run scored again:\n%+v\n%+v", i, kept.Values, want.Values)
		}
		if bytes.Equal(enc, full) {
			t.Fatalf("case %d: the two ceilings give the same run: the test compares nothing", i)
		}
	}
}

// TestReapplyRefusesCeilingAnchor: with --anchor ceiling the adaptation
// speed and recovery time need the rows; Reapply says it cannot and
// leaves the run as it was.
func TestReapplyRefusesCeilingAnchor(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	p := skyfall.DefaultParams()
	p.Anchor = skyfall.AnchorCeiling
	tr := reapplyTrace(rng, 0)
	before, after := boundJob(t, p, randomBounds(rng)), boundJob(t, p, randomBounds(rng))
	s, err := before.Score(&scoring.Run{Key: tr.Key, Meta: tr.Meta, Rows: tr.Len(), Data: tr})
	if err != nil {
		t.Fatal(err)
	}
	enc, _ := scoring.AppendScored(before, nil, s)
	ok, err := after.Reapply(s, nil)
	if ok || err != nil {
		t.Fatalf("Reapply under the ceiling anchor: %v %v", ok, err)
	}
	if again, _ := scoring.AppendScored(before, nil, s); !bytes.Equal(enc, again) {
		t.Errorf("a refused Reapply changed the run")
	}
}
