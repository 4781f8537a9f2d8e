package pipeline

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/crlbatch/crlbatch/cache"
	"github.com/crlbatch/crlbatch/protocol"
	"github.com/crlbatch/crlbatch/protocol/family"
	"github.com/crlbatch/crlbatch/scoring"
)

// reduceJob is a job with a cache at dir whose log goes to buf.
func reduceJob(t *testing.T, dir string, buf *bytes.Buffer) *job {
	t.Helper()
	cfg := DefaultConfig()
	cfg.Input, cfg.Output = dir, filepath.Join(dir, "out")
	cfg.Logger = slog.New(slog.NewTextHandler(buf, &slog.HandlerOptions{Level: slog.LevelInfo}))
	j, err := newJob(&cfg)
	if err != nil {
		t.Fatal(err)
	}
	c, err := cache.Open(context.Background(), filepath.Join(dir, "cache"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	j.cache = newJobCache(c, nil, j.cfg.Concurrency)
	return j
}

// sweepRuns are runs of four families (ppo first but not first in
// order: the default baseline), five seeds each, three metrics, some
// values absent, one run excluded, one family of one seed.
func sweepRuns(seed uint64) []family.Run {
	rng := rand.New(rand.NewPCG(seed, 7))
	var runs []family.Run
	for _, f := range []string{"sac", "ppo", "ewc", "der", "solo"} {
		n := 5
		if f == "solo" {
			n = 1
		}
		for s := range n {
			r := family.Run{Key: fmt.Sprintf("%s-s%d", f, s), Family: f, Seed: fmt.Sprint(s), HasSeed: true, NSteps: 100 + rng.IntN(20)}
			for m := range 3 {
				v := protocol.Finite(rng.NormFloat64())
				if m == 2 && s == 3 {
					v = protocol.None("no value here")
				}
				r.Values = append(r.Values, v)
			}
			if f == "ewc" && s == 4 {
				r.Excluded, r.ExcludedWhy = true, "fewer than --min-steps"
			}
			runs = append(runs, r)
		}
	}
	return runs
}

var familiesRE = regexp.MustCompile(`msg="families from the cache" served=(\d+) reduced=(\d+) cells_served=(\d+) cells_bootstrapped=(\d+)`)

// TestReduceCached: the reduction with family entries is, bit for bit,
// family.Aggregate over every run: cold (every family reduced), warm
// (every family served), after a run of one family changed (that family
// reduced, the others served), after a run of the baseline changed
// (every family reduced: each is compared with it), after one metric of
// every run changed (every family reduced, the rows of the other metrics
// served from their cell entries), with another baseline and other
// bootstrap options (no entry reused), and after an entry is damaged (a
// warning, the family's rows served from its cells, the entry rebuilt).
func TestReduceCached(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var log bytes.Buffer
	j := reduceJob(t, dir, &log)
	ctx := context.Background()
	up := true
	metrics := []family.Metric{{Name: "adaptation_speed", HigherIsBetter: &up}, {Name: "b"}, {Name: "c", HigherIsBetter: new(bool)}}
	// cells: the cells of the families reduced served from their entries,
	// and bootstrapped.
	check := func(name string, runs []family.Run, opt family.Options, served, reduced int, cells ...int) {
		t.Helper()
		log.Reset()
		want, err := family.Aggregate(metrics, runs, opt)
		if err != nil {
			t.Fatal(err)
		}
		got, err := j.reduceCached(ctx, metrics, runs, opt)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		j.waitEntries() // the entries are written beside the job (putLater)
		wb, err := scoring.AppendExact(nil, want)
		if err != nil {
			t.Fatal(err)
		}
		gb, _ := scoring.AppendExact(nil, got)
		if !bytes.Equal(wb, gb) {
			t.Errorf("%s: the result differs from Aggregate's:\n got %+v\nwant %+v", name, got, want)
		}
		m := familiesRE.FindStringSubmatch(log.String())
		if m == nil || m[1] != fmt.Sprint(served) || m[2] != fmt.Sprint(reduced) {
			t.Errorf("%s: want %d served, %d reduced: %s", name, served, reduced, log.String())
		}
		if cells == nil {
			cells = []int{0, reduced * len(metrics)}
		}
		if m != nil && (m[3] != fmt.Sprint(cells[0]) || m[4] != fmt.Sprint(cells[1])) {
			t.Errorf("%s: want cells %v served and bootstrapped: %s", name, cells, log.String())
		}
	}
	opt := family.DefaultOptions()
	opt.Resamples = 300
	runs := sweepRuns(1)
	check("cold", runs, opt, 0, 5)
	check("warm", runs, opt, 5, 0)
	one := sweepRuns(1)
	one[11].Values[1] = protocol.Finite(one[11].Values[1].V + 1e-12) // ewc-s1
	check("one changed", one, opt, 4, 1, 2, 1)
	remark := sweepRuns(1)
	remark[0].Remarks = []string{"earned nothing"} // sac-s0: a note, a new key
	check("a remark", remark, opt, 4, 1, 3, 0)     // ewc back to its cold entry
	moved := sweepRuns(1)
	for i := range moved {
		if v := &moved[i].Values[1]; v.OK {
			v.V += 1e-9 // as a moved ceiling moves performance_gap
		}
	}
	check("one metric moved", moved, opt, 0, 5, 10, 5)
	base := sweepRuns(1)
	base[6].Seed = "9" // ppo-s1: its pairs move
	check("baseline changed", base, opt, 0, 5)
	named := opt
	named.Baseline = "ewc"
	check("another baseline", runs, named, 0, 5)
	other := opt
	other.Seed = 4
	check("another seed", runs, other, 0, 5)
	other = opt
	other.Level = 0.9
	check("another level", runs, other, 0, 5)
	missing := opt
	missing.Baseline = "nope"
	check("missing baseline", runs, missing, 0, 5)
	check("missing baseline warm", runs, missing, 5, 0)

	// A damaged entry: the family is reduced again and its entry rebuilt.
	var ents []string
	filepath.WalkDir(filepath.Join(dir, "cache"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.Contains(filepath.ToSlash(p), "/families/") {
			ents = append(ents, p)
		}
		return err
	})
	if len(ents) < 5 {
		t.Fatalf("%d family entries", len(ents))
	}
	for _, e := range ents {
		data, err := os.ReadFile(e)
		if err != nil {
			t.Fatal(err)
		}
		data[len(data)/2] ^= 0x20
		if err := os.WriteFile(e, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	check("damaged", runs, opt, 0, 5, 15, 0)
	if n := strings.Count(log.String(), "cache entry not trusted"); n != 5 {
		t.Errorf("%d warnings, want 5: %s", n, log.String())
	}
	check("rebuilt", runs, opt, 5, 0)

	// Damaged cell entries: warned about, bootstrapped again.
	ents = nil
	filepath.WalkDir(filepath.Join(dir, "cache"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.Contains(filepath.ToSlash(p), "/cells/") {
			ents = append(ents, p)
		}
		return err
	})
	for _, e := range ents {
		data, err := os.ReadFile(e)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(e, data[:len(data)-3], 0o644); err != nil {
			t.Fatal(err)
		}
	}
	again := sweepRuns(1)
	for i := range again {
		if v := &again[i].Values[1]; v.OK {
			v.V += 2e-9
		}
	}
	check("cells damaged", again, opt, 0, 5, 0, 15)
	if n := strings.Count(log.String(), "cache entry not trusted"); n != 10 {
		t.Errorf("%d warnings, want 10 (the cells of the two unmoved metrics): %s", n, log.String())
	}
	check("cells rebuilt", again, opt, 5, 0)
}

// TestEncodeExact: every bit of a family's rows survives its entry
// (-0, the last bit of a float, absent pointers), and a cut entry is an
// error.
func TestEncodeExact(t *testing.T) {
	t.Parallel()
	up := false
	rows := []family.Row{{Family: "a", Metric: "m", HigherIsBetter: &up, N: 3, Mean: protocol.Finite(0.1 + 0.2),
		Std: protocol.None("fewer than two seeds"), DiffMean: protocol.Value{V: negZero(), OK: true}, NPairs: -1, PowerWarning: true}}
	data, err := encodeRows(rows)
	if err != nil {
		t.Fatal(err)
	}
	got, err := decodeRows(data, "a", []family.Metric{{Name: "m"}})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, rows) || got[0].Mean.V != 0.1+0.2 || !signbit(got[0].DiffMean.V) || *got[0].HigherIsBetter {
		t.Errorf("got %+v, want %+v", got, rows)
	}
	for n := range len(data) {
		if _, err := decodeRows(data[:n], "a", []family.Metric{{Name: "m"}}); err == nil {
			t.Fatalf("cut at %d of %d: no error", n, len(data))
		}
	}
	if _, err := decodeRows(data, "b", []family.Metric{{Name: "m"}}); err == nil {
		t.Error("another family's rows accepted")
	}
}

func negZero() float64 { z := 0.0; return -z }

func signbit(x float64) bool { return fmt.Sprint(x) == "-0" }
