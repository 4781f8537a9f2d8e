package figures

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/crlbatch/crlbatch/protocol"
	"github.com/crlbatch/crlbatch/protocol/family"
	"github.com/crlbatch/crlbatch/protocol/stats"
)

// tTable are 0.975 quantiles of Student's t from a printed table.
var tTable = map[int]float64{1: 12.706204736174705, 2: 4.302652729911275, 3: 3.182446305284263, 4: 2.7764451051977987}

func TestTQuantile975(t *testing.T) {
	for df, want := range tTable {
		if got := TQuantile975(df); math.Abs(got-want) > 1e-9 {
			t.Errorf("t(0.975, %d) = %v, want %v", df, got, want)
		}
	}
	// Kept or not, asked once or twice: the bits of the quantile itself,
	// and within 1e-12 of gonum's (an independent algorithm: Newton on the
	// incomplete beta; protocol/stats checks against mpmath and SciPy).
	for df := 1; df < 200; df++ {
		want := stats.StudentTQuantile(0.975, df)
		for range 2 {
			if got := TQuantile975(df); math.Float64bits(got) != math.Float64bits(want) {
				t.Fatalf("t(0.975, %d) = %v, want %v", df, got, want)
			}
		}
		g := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(df)}.Quantile(0.975)
		if rel := math.Abs(want-g) / g; !(rel <= 1e-12) {
			t.Errorf("t(0.975, %d) = %v, gonum %v (relative %.3g)", df, want, g, rel)
		}
	}
}

func TestWidthFor(t *testing.T) {
	for _, c := range []struct {
		n    int
		want int64
	}{{0, 1}, {1, 1}, {2000, 1}, {2001, 2}, {4000, 2}, {4001, 4}, {1_000_000, 512}} {
		if got := WidthFor(c.n); got != c.want {
			t.Errorf("WidthFor(%d) = %d, want %d", c.n, got, c.want)
		}
	}
}

type rawRun struct {
	rewards []float64
	labels  []int32
	names   []string
}

// TestMergeByBruteForce compares Merge with every bucket recomputed from
// the raw rewards, for families of runs of different lengths (so bucket
// widths differ and coarsen), labels that change inside a bucket and
// recur, and a spike.
func TestMergeByBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	for trial := range 40 {
		nruns := 1 + rng.IntN(4)
		var runs []rawRun
		var curves []Curve
		for range nruns {
			n := 1 + rng.IntN(9000)
			r := rawRun{names: []string{"calm", "storm", "gusty"}[:1+rng.IntN(3)]}
			l := int32(0)
			for i := range n {
				if rng.IntN(700) == 0 {
					l = int32(rng.IntN(len(r.names)))
				}
				v := rng.NormFloat64()
				if rng.IntN(5000) == 0 {
					v = 1e3 // a spike
				}
				r.rewards = append(r.rewards, v)
				r.labels = append(r.labels, l)
				_ = i
			}
			runs = append(runs, r)
			curves = append(curves, Downsample(r.rewards, r.labels, r.names))
		}
		ln := Merge(curves)
		w := int64(1)
		longest := 0
		for _, r := range runs {
			rw := int64(1)
			for (int64(len(r.rewards))+rw-1)/rw > 2000 {
				rw *= 2
			}
			w = max(w, rw)
			longest = max(longest, len(r.rewards))
		}
		if ln.Width != w {
			t.Fatalf("trial %d: width %d, want %d", trial, ln.Width, w)
		}
		// Labels in order of first appearance over the runs in run order,
		// as Downsample meets them (bucket by bucket).
		var order []string
		seen := map[string]bool{}
		for _, c := range curves {
			for _, b := range c.Buckets {
				if n := c.Labels[b.Label]; !seen[n] {
					seen[n] = true
					order = append(order, n)
				}
			}
		}
		var want []Point
		for start := int64(0); start < int64(longest); start += w {
			for _, label := range order {
				var means []float64
				lo, hi := math.Inf(1), math.Inf(-1)
				for _, r := range runs {
					sum, n := 0.0, 0
					for i := start; i < start+w && i < int64(len(r.rewards)); i++ {
						if r.names[r.labels[i]] == label {
							sum += r.rewards[i]
							n++
							lo, hi = math.Min(lo, r.rewards[i]), math.Max(hi, r.rewards[i])
						}
					}
					if n > 0 {
						means = append(means, sum/float64(n))
					}
				}
				if len(means) == 0 {
					continue
				}
				m := 0.0
				for _, x := range means {
					m += x
				}
				m /= float64(len(means))
				// The last bucket ends where the longest run does: no step
				// past it was run (a 2,001-step line ends at 2,001, not 2,002).
				p := Point{Label: label, Start: start, End: min(start+w, int64(longest)), Runs: len(means), Mean: m, Min: lo, Max: hi,
					BandLow: protocol.None(ReasonOneRun), BandHigh: protocol.None(ReasonOneRun)}
				if len(means) > 1 {
					ss := 0.0
					for _, x := range means {
						ss += (x - m) * (x - m)
					}
					h := tTable[len(means)-1] * math.Sqrt(ss/float64(len(means)-1)) / math.Sqrt(float64(len(means)))
					p.BandLow, p.BandHigh = protocol.Some(m-h), protocol.Some(m+h)
				}
				want = append(want, p)
			}
		}
		if len(ln.Points) != len(want) {
			t.Fatalf("trial %d: %d points, want %d", trial, len(ln.Points), len(want))
		}
		buckets := map[int64]bool{}
		for i, g := range ln.Points {
			e := want[i]
			buckets[g.Start] = true
			if g.Label != e.Label || g.Start != e.Start || g.End != e.End || g.Runs != e.Runs ||
				!near(g.Mean, e.Mean) || g.Min != e.Min || g.Max != e.Max ||
				g.BandLow.OK != e.BandLow.OK || g.BandLow.OK && (!near(g.BandLow.V, e.BandLow.V) || !near(g.BandHigh.V, e.BandHigh.V)) ||
				!g.BandLow.OK && g.BandLow.Reason != ReasonOneRun {
				t.Fatalf("trial %d point %d: %+v, want %+v", trial, i, g, e)
			}
		}
		if len(buckets) > MaxPoints {
			t.Errorf("trial %d: %d buckets, more than %d", trial, len(buckets), MaxPoints)
		}
	}
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

// TestIntervalEstimates: the figure draws the reduction's IQM and its
// interval, and the probability of improvement; the IQM is checked against
// a trimmed mean computed here (drop ⌊n/4⌋ from each end of the sorted
// seeds), P(X>Y)+½P(X=Y) against a count over the pairs.
func TestIntervalEstimates(t *testing.T) {
	hib := true
	vals := map[string][]float64{"ppo": {0.1, 0.4, 0.2, 0.9, 0.3}, "sac": {0.5, 0.2, 0.7, 0.6}}
	var runs []family.Run
	for _, f := range []string{"ppo", "sac"} {
		for i, v := range vals[f] {
			runs = append(runs, family.Run{Key: f + string(rune('0'+i)), Family: f, Seed: string(rune('0' + i)), HasSeed: true, Values: []protocol.Value{protocol.Some(v)}})
		}
	}
	opt := family.DefaultOptions()
	opt.Resamples = 200
	fres, err := family.Aggregate([]family.Metric{{Name: "m", HigherIsBetter: &hib}}, runs, opt)
	if err != nil {
		t.Fatal(err)
	}
	est := IntervalEstimates(fres, "m")
	if len(est) != 2 {
		t.Fatalf("%d estimates", len(est))
	}
	iqm := map[string]float64{"ppo": (0.2 + 0.3 + 0.4) / 3, "sac": (0.5 + 0.6) / 2}
	for _, e := range est {
		if !e.IQM.OK || !near(e.IQM.V, iqm[e.Family]) {
			t.Errorf("%s: IQM %+v, want %v", e.Family, e.IQM, iqm[e.Family])
		}
		if !e.Low.OK || !e.High.OK || e.Low.V > e.IQM.V || e.High.V < e.IQM.V {
			t.Errorf("%s: interval %+v..%+v does not hold the IQM %v", e.Family, e.Low, e.High, e.IQM.V)
		}
	}
	imp := Improvements(fres, "m")
	if len(imp) != 1 || imp[0].Family != "sac" {
		t.Fatalf("improvements %+v", imp)
	}
	wins := 0.0
	for _, x := range vals["sac"] {
		for _, y := range vals["ppo"] {
			switch {
			case x > y:
				wins++
			case x == y:
				wins += 0.5
			}
		}
	}
	if want := wins / 20; !imp[0].P.OK || !near(imp[0].P.V, want) {
		t.Errorf("P(sac > ppo) = %+v, want %v", imp[0].P, want)
	}
	fig := ProbImprovement("p", fres, []Headline{{Metric: "m", Label: "M"}})
	if _, err := fig.SVG(); err != nil {
		t.Fatal(err)
	}
}

func TestSlugAndNames(t *testing.T) {
	for in, want := range map[string]string{"PPO": "ppo", "ppo/lag 2": "ppo-lag-2", "": "none", "--": "none", "a__b": "a-b"} {
		if got := Slug(in); got != want {
			t.Errorf("Slug(%q) = %q, want %q", in, got, want)
		}
	}
	// A name from the data of any length makes a file name part of at most
	// maxSlug bytes (a family of 300 characters failed the job on a local
	// OUTPUT: "file name too long"); long names that share their start
	// still differ.
	long := strings.Repeat("ewc-lr-0.0003-", 30)
	for _, in := range []string{long, long + "a", long + "b", strings.Repeat("x", 10000), strings.Repeat("é", 300) + "ppo"} {
		got := Slug(in)
		if len(got) > maxSlug || len(got) == 0 {
			t.Errorf("Slug(%d bytes) = %q: %d bytes, want 1 to %d", len(in), got, len(got), maxSlug)
		}
		if strings.HasSuffix(got, "-") || strings.HasPrefix(got, "-") {
			t.Errorf("Slug(%d bytes) = %q: a dash at an end", len(in), got)
		}
	}
	if Slug(long+"a") == Slug(long+"b") || Slug(long) == Slug(long+"a") {
		t.Errorf("long names that share their start share a slug: %q", Slug(long+"a"))
	}
	if s := strings.Repeat("a", maxSlug); Slug(s) != s {
		t.Errorf("a slug of %d bytes was changed: %q", maxSlug, Slug(s))
	}
	n := Names{}
	if a, b, c := n.Unique("x"), n.Unique("x"), n.Unique("x"); a != "x" || b != "x-2" || c != "x-3" {
		t.Errorf("Unique: %s %s %s", a, b, c)
	}
}
