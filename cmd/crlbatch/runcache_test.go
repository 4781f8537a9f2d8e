package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/crlbatch/crlbatch/cache"
	"github.com/crlbatch/crlbatch/pipeline"
)

// The run-level entries of --cache (pipeline/runcache.go): a run whose
// pieces and scoring are unchanged is served whole, observed through the
// log's "runs from the cache" line.

// runStats are the counts of the log's "runs from the cache" line
// (reapplied: of the runs served, those brought to moved ceilings).
type runStats struct{ served, assembled, scored, runs, reapplied int }

var runStatsRE = regexp.MustCompile(`msg="runs from the cache" served=(\d+) assembled=(\d+) scored=(\d+) runs=(\d+) reapplied=(\d+)`)

// scoreRuns scores as scoreCached does, at --log-level info, and returns
// the run counts of the log (failing the test without them).
func scoreRuns(t *testing.T, in, out, c string, args ...string) ([]string, runStats, string) {
	t.Helper()
	reads, stderr := scoreCached(t, in, out, c, append([]string{"--log-level", "info"}, args...)...)
	m := runStatsRE.FindStringSubmatch(stderr)
	if m == nil {
		t.Fatalf("no run counts in the log: %s", stderr)
	}
	n := func(s string) int { x, _ := strconv.Atoi(s); return x }
	return reads, runStats{n(m[1]), n(m[2]), n(m[3]), n(m[4]), n(m[5])}, stderr
}

// nightly are the nightly job's flags: a ceiling derived from every run.
var nightly = []string{"--spec", "experiment", "--ceiling", "by_configuration", "--episode-end-from-spec",
	"--solve-component", "progress", "--bootstrap-resamples", "300"}

// TestRunCacheServedWhole: for every protocol's example, the synthetic
// sweep and the skyfall ceilings derived from the runs, a warm rerun with
// no object changed reads no object and scores no run (every run served
// whole), and its Parquet files and report are those of a job without a
// cache.
func TestRunCacheServedWhole(t *testing.T) {
	t.Parallel()
	cases := append(parquetCases[:len(parquetCases):len(parquetCases)],
		struct {
			name  string
			input string
			args  []string
		}{"nightly", "", nightly},
		struct {
			name  string
			input string
			args  []string
		}{"data-relative", "../../configs/example-sweep", []string{"--ceiling", "data_relative", "--anchor", "ceiling"}})
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			in := c.input
			if in == "" {
				in = synthSweep(t)
			}
			tmp := t.TempDir()
			cdir := filepath.Join(tmp, "cache")
			scoreCached(t, in, filepath.Join(tmp, "none"), "", c.args...)
			_, cold, _ := scoreRuns(t, in, filepath.Join(tmp, "cold"), cdir, c.args...)
			if cold.served != 0 || cold.scored != cold.runs || cold.runs == 0 {
				t.Errorf("cold: %+v", cold)
			}
			reads, warm, stderr := scoreRuns(t, in, filepath.Join(tmp, "warm"), cdir, c.args...)
			if warm.served != cold.runs || warm.scored != 0 || warm.assembled != 0 || warm.runs != cold.runs {
				t.Errorf("warm: %+v, cold %+v", warm, cold)
			}
			if countReads(reads, pipeline.ReadCache) != len(reads) || strings.Contains(stderr, "WARN") {
				t.Errorf("warm reads %v: %s", reads, stderr)
			}
			sameOutputs(t, filepath.Join(tmp, "none"), filepath.Join(tmp, "cold"))
			sameOutputs(t, filepath.Join(tmp, "none"), filepath.Join(tmp, "warm"))
		})
	}
}

// exampleCopy is a temporary folder for a test and a copy of the example
// sweep in it (its "in" folder), for the test to change.
func exampleCopy(t *testing.T) (tmp, in string) {
	t.Helper()
	tmp = t.TempDir()
	in = filepath.Join(tmp, "in")
	copyDir(t, "../../configs/example-sweep", in)
	return tmp, in
}

// editObject rewrites a plain object of the example sweep with edit.
func editObject(t *testing.T, path string, edit func(lines []string) []string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := edit(strings.Split(strings.TrimRight(string(data), "\n"), "\n"))
	writeFile(t, path, strings.Join(lines, "\n")+"\n")
}

var rewardRE = regexp.MustCompile(`"reward":[^,]+,`)

// TestRunCacheChangedObject: under the nightly ceiling (by_configuration:
// each label's ceiling pools the rows and final steps of every run), a
// changed reward, which moves no ceiling, rescores its run alone; a new
// run whose rows all carry a label of their own scores that run alone (no
// other run has the label); a row more of a label every run has moves that
// label's ceiling: its run is scored again, and every other run that has
// the label is served with the moved ceiling re-applied (not scored
// again). Under --anchor ceiling, whose adaptation and recovery need the
// rows, the same move scores every run with the label again. Each time
// the outputs are those of a job without a cache.
func TestRunCacheChangedObject(t *testing.T) {
	t.Parallel()
	tmp, in := exampleCopy(t)
	cdir := filepath.Join(tmp, "cache")
	_, cold, _ := scoreRuns(t, in, filepath.Join(tmp, "cold"), cdir, nightly...)
	if cold.runs != 9 {
		t.Fatalf("cold: %+v", cold)
	}
	ppo := filepath.Join(in, "ppo", "ppo-s0.jsonl")
	anchored := append([]string{"--anchor", "ceiling"}, nightly...)
	check := func(name string, want runStats, decoded int, args ...string) {
		t.Helper()
		if args == nil {
			args = nightly
		}
		reads, got, _ := scoreRuns(t, in, filepath.Join(tmp, name), cdir, args...)
		if got != want {
			t.Errorf("%s: runs %+v, want %+v", name, got, want)
		}
		// (An object grown by a row is decoded from its earlier bytes on.)
		if n := countReads(reads, pipeline.ReadDecoded) + countReads(reads, pipeline.ReadAppended); n != decoded {
			t.Errorf("%s: %d objects decoded, want %d: %v", name, n, decoded, reads)
		}
		scoreCached(t, in, filepath.Join(tmp, name+"-none"), "", args...)
		sameOutputs(t, filepath.Join(tmp, name+"-none"), filepath.Join(tmp, name))
	}

	// One reward changed: no ceiling moves (they count rows).
	editObject(t, ppo, func(lines []string) []string {
		lines[5] = rewardRE.ReplaceAllString(lines[5], `"reward":0.123456789,`)
		return lines
	})
	check("reward", runStats{served: 8, assembled: 1, scored: 1, runs: 9}, 1)

	// A new run, every row of it under a label no other run has.
	data, err := os.ReadFile(ppo)
	if err != nil {
		t.Fatal(err)
	}
	fresh := strings.NewReplacer(`"run_id":"ppo-s0","seed":0`, `"run_id":"ppo-s9","seed":9`,
		`"regime_id":"calm_again"`, `"regime_id":"fog"`, `"regime_id":"calm"`, `"regime_id":"fog"`,
		`"regime_id":"gusty"`, `"regime_id":"fog"`, `"regime_id":"storm"`, `"regime_id":"fog"`).Replace(string(data))
	if strings.Count(fresh, `"fog"`) != strings.Count(fresh, "\n") {
		t.Fatalf("the new run's rows are not all under fog")
	}
	writeFile(t, filepath.Join(in, "ppo", "ppo-s9.jsonl"), fresh)
	check("new-label", runStats{served: 9, assembled: 1, scored: 1, runs: 10}, 1)

	// The ceiling anchor's entries, before the ceiling moves.
	check("anchored", runStats{served: 0, assembled: 10, scored: 10, runs: 10}, 0, anchored...)

	// A row more under calm_again, a label of every other run: its
	// ceiling moves. The changed run is scored again, the 8 others with
	// calm_again get its new ceiling re-applied, the new run (fog alone)
	// is served as it was.
	editObject(t, ppo, func(lines []string) []string { return append(lines, lines[len(lines)-1]) })
	check("moved-ceiling", runStats{served: 9, assembled: 1, scored: 1, runs: 10, reapplied: 8}, 1)
	// Under the ceiling anchor, none is re-applied: the 8 are scored
	// again (from their objects' entries; the changed object's, decoded
	// by the job before, too).
	check("moved-anchored", runStats{served: 1, assembled: 1, scored: 9, runs: 10}, 0, anchored...)
}

// TestRunCacheFlags: a scoring flag (--gamma, --alpha) reuses every
// object's decoded runs but scores every run again; a flag that changes no
// score (--concurrency, another --out, --bootstrap-resamples, --group-by)
// serves every run whole; --where serves the runs it keeps.
func TestRunCacheFlags(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	in := "../../configs/example-sweep"
	cdir := filepath.Join(tmp, "cache")
	_, cold, _ := scoreRuns(t, in, filepath.Join(tmp, "cold"), cdir)
	for i, c := range []struct {
		args   []string
		scored int
	}{
		{[]string{"--gamma", "0.9"}, 9},
		{[]string{"--alpha", "0.3"}, 9},
		{[]string{"--concurrency", "1"}, 0},
		{[]string{"--bootstrap-resamples", "200"}, 0},
		{[]string{"--group-by", "algorithm_id,seed", "--allow-missing-baseline"}, 0},
		{[]string{"--where", "algorithm_id=ppo"}, 0},
	} {
		out := filepath.Join(tmp, fmt.Sprint("out", i))
		reads, got, _ := scoreRuns(t, in, out, cdir, c.args...)
		if countReads(reads, pipeline.ReadCache) != len(reads) {
			t.Errorf("%v: reads %v", c.args, reads)
		}
		kept := cold.runs
		if c.args[0] == "--where" {
			kept = 3
		}
		if got.scored != c.scored || got.served != kept-c.scored || got.runs != cold.runs {
			t.Errorf("%v: runs %+v, want %d scored of %d kept", c.args, got, c.scored, kept)
		}
		none := out + "-none"
		scoreCached(t, in, none, "", c.args...)
		sameOutputs(t, none, out)
	}
}

// TestRunCacheCorrupt: a damaged run entry (a flipped byte) and a
// truncated object index are not trusted: a warning names each, that run
// is scored again (its object read back from its own entry), the outputs
// are unchanged, and the next job serves every run whole again.
func TestRunCacheCorrupt(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	in := "../../configs/example-sweep"
	cdir := filepath.Join(tmp, "cache")
	scoreRuns(t, in, filepath.Join(tmp, "cold"), cdir, nightly...)
	var runs, index []string
	for _, e := range entries(t, cdir) {
		switch {
		case strings.Contains(filepath.ToSlash(e), "/runs/"):
			runs = append(runs, e)
		case strings.Contains(filepath.ToSlash(e), "/index/"):
			index = append(index, e)
		}
	}
	if len(runs) != 9 || len(index) != 9 {
		t.Fatalf("%d run entries, %d indexes", len(runs), len(index))
	}
	data, err := os.ReadFile(runs[0])
	if err != nil {
		t.Fatal(err)
	}
	data[len(data)/2] ^= 0x40
	writeFile(t, runs[0], string(data))
	data, err = os.ReadFile(index[0])
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, index[0], string(data[:len(data)/2]))
	reads, got, stderr := scoreRuns(t, in, filepath.Join(tmp, "damaged"), cdir, nightly...)
	if strings.Count(stderr, "cache entry not trusted") != 2 || !strings.Contains(stderr, "of=run") || !strings.Contains(stderr, "of=object") {
		t.Errorf("want two warnings: %s", stderr)
	}
	// The damaged run is scored again; the object whose index is damaged
	// is read back from its entry (its runs still served whole).
	if got.scored != 1 || got.served != 8 || countReads(reads, pipeline.ReadCache) != len(reads) {
		t.Errorf("runs %+v, reads %v", got, reads)
	}
	sameOutputs(t, filepath.Join(tmp, "cold"), filepath.Join(tmp, "damaged"))
	reads, got, stderr = scoreRuns(t, in, filepath.Join(tmp, "rebuilt"), cdir, nightly...)
	if got.served != 9 || strings.Contains(stderr, "WARN") || countReads(reads, pipeline.ReadCache) != len(reads) {
		t.Errorf("after the rebuild: %+v %v %s", got, reads, stderr)
	}
	sameOutputs(t, filepath.Join(tmp, "cold"), filepath.Join(tmp, "rebuilt"))
}

// runEntries are the files of the run entries of the cache folder dir,
// failing the test unless there are want of them.
func runEntries(t *testing.T, dir string, want int) []string {
	t.Helper()
	var runs []string
	for _, e := range entries(t, dir) {
		if strings.Contains(filepath.ToSlash(e), "/runs/") {
			runs = append(runs, e)
		}
	}
	if len(runs) != want {
		t.Fatalf("%d run entries, want %d", len(runs), want)
	}
	return runs
}

// TestRunCacheScoredUnreadable: a run entry whole and checksummed whose
// scored run does not read back (as if written by a build whose encoding
// differs) is not trusted either: a warning, the run scored again, the
// outputs unchanged.
func TestRunCacheScoredUnreadable(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	in := "../../configs/example-sweep"
	cdir := filepath.Join(tmp, "cache")
	scoreRuns(t, in, filepath.Join(tmp, "cold"), cdir)
	runs := runEntries(t, cdir, 9)
	ctx := context.Background()
	c, err := cache.Open(ctx, cdir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	rc := c.Kind("runs")
	key := strings.TrimSuffix(filepath.Base(runs[0]), cache.EntrySuffix)
	e, found, err := rc.Get(ctx, key)
	if err != nil || !found {
		t.Fatalf("entry %s: %v %v", key, found, err)
	}
	// The header stays; the scored run after it is cut short.
	e.Payload = e.Payload[:len(e.Payload)-100]
	if err := rc.Put(ctx, key, e); err != nil {
		t.Fatal(err)
	}
	_, got, stderr := scoreRuns(t, in, filepath.Join(tmp, "unreadable"), cdir)
	if strings.Count(stderr, "cache entry not trusted") != 1 || !strings.Contains(stderr, "of=run") || got.scored != 1 || got.served != 8 {
		t.Errorf("runs %+v: %s", got, stderr)
	}
	sameOutputs(t, filepath.Join(tmp, "cold"), filepath.Join(tmp, "unreadable"))
}

// TestRunCacheRunGrowsIntoNewObject: a new object that continues a run
// (ppo-s0's last rows again, in an object of their own) gives that run
// other pieces, so another entry key: it is scored, not served from the
// entry of its old pieces in the unchanged object, and the outputs are
// those of a job without a cache. With every run entry damaged, the
// warnings name the 8 runs whose entries the job uses, not ppo-s0's old
// one.
func TestRunCacheRunGrowsIntoNewObject(t *testing.T) {
	t.Parallel()
	tmp, in := exampleCopy(t)
	grown, damaged := filepath.Join(tmp, "cache"), filepath.Join(tmp, "damaged-cache")
	_, cold, _ := scoreRuns(t, in, filepath.Join(tmp, "cold"), grown, nightly...)
	if cold.runs != 9 {
		t.Fatalf("cold: %+v", cold)
	}
	copyDir(t, grown, damaged)
	data, err := os.ReadFile(filepath.Join(in, "ppo", "ppo-s0.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(strings.TrimRight(string(data), "\n"), "\n")
	writeFile(t, filepath.Join(in, "ppo", "ppo-s0.more.jsonl"), strings.Join(lines[len(lines)-10:], "")+"\n")
	scoreCached(t, in, filepath.Join(tmp, "none"), "", nightly...)

	reads, got, stderr := scoreRuns(t, in, filepath.Join(tmp, "grown"), grown, nightly...)
	if got.runs != 9 || got.scored != 1 || got.served != 8 || strings.Contains(stderr, "WARN") {
		t.Errorf("grown: runs %+v: %s", got, stderr)
	}
	if n := countReads(reads, pipeline.ReadDecoded); n != 1 {
		t.Errorf("grown: %d objects decoded, want the new one: %v", n, reads)
	}
	sameOutputs(t, filepath.Join(tmp, "none"), filepath.Join(tmp, "grown"))

	for _, e := range runEntries(t, damaged, 9) {
		data, err := os.ReadFile(e)
		if err != nil {
			t.Fatal(err)
		}
		data[len(data)/2] ^= 0x40
		writeFile(t, e, string(data))
	}
	_, got, stderr = scoreRuns(t, in, filepath.Join(tmp, "damaged"), damaged, nightly...)
	if n := strings.Count(stderr, "cache entry not trusted"); n != 8 || strings.Count(stderr, "of=run") != 8 || got.scored != 9 {
		t.Errorf("damaged: %d warnings, runs %+v, want 8 (the runs whose entries are used) and 9 scored: %s", n, got, stderr)
	}
	sameOutputs(t, filepath.Join(tmp, "none"), filepath.Join(tmp, "damaged"))
}

// TestRunCacheObjectWithBadRows: an object whose rows were skipped
// (--max-bad-rows) has no entry of its own, so no index, and is decoded
// again every night; its run's entry is still looked up and serves the
// run, night after night, as the outputs of a job without a cache.
func TestRunCacheObjectWithBadRows(t *testing.T) {
	t.Parallel()
	tmp, in := exampleCopy(t)
	editObject(t, filepath.Join(in, "ppo", "ppo-s0.jsonl"), func(lines []string) []string {
		lines[7] = lines[7][:len(lines[7])/2]
		return lines
	})
	args := append([]string{"--max-bad-rows", "5"}, nightly...)
	cdir := filepath.Join(tmp, "cache")
	scoreCached(t, in, filepath.Join(tmp, "none"), "", args...)
	_, cold, _ := scoreRuns(t, in, filepath.Join(tmp, "cold"), cdir, args...)
	if cold.runs != 9 || cold.scored != 9 {
		t.Fatalf("cold: %+v", cold)
	}
	for night := range 2 {
		out := filepath.Join(tmp, fmt.Sprintf("night-%d", night))
		reads, got, stderr := scoreRuns(t, in, out, cdir, args...)
		if got.served != 9 || got.scored != 0 {
			t.Errorf("night %d: runs %+v, want every run served: %s", night, got, stderr)
		}
		if n := countReads(reads, pipeline.ReadDecoded); n != 1 {
			t.Errorf("night %d: %d objects decoded, want the one with a bad row: %v", night, n, reads)
		}
		sameOutputs(t, filepath.Join(tmp, "none"), out)
	}
}

// TestRunCacheConcurrentJobs: two jobs on one cache at once, after an
// object changed (each reads run entries while the other writes them),
// both give the results of a job without a cache, and a third job then
// serves every run whole (go test -race covers the engine's side).
func TestRunCacheConcurrentJobs(t *testing.T) {
	t.Parallel()
	tmp, in := exampleCopy(t)
	cdir := filepath.Join(tmp, "cache")
	scoreRuns(t, in, filepath.Join(tmp, "cold"), cdir, nightly...)
	editObject(t, filepath.Join(in, "ewc", "ewc-s0.jsonl"), func(lines []string) []string {
		lines[7] = rewardRE.ReplaceAllString(lines[7], `"reward":0.5,`)
		return lines
	})
	scoreCached(t, in, filepath.Join(tmp, "none"), "", nightly...)
	done := make(chan struct{}, 2)
	for _, name := range []string{"a", "b"} {
		go func() {
			defer func() { done <- struct{}{} }()
			args := append([]string{"score", in, "--out", filepath.Join(tmp, name), "--quiet", "--cache", cdir, "--concurrency", "2"}, nightly...)
			if code, _, stderr := crl(t, args...); code != 0 || strings.Contains(stderr, "WARN") {
				t.Errorf("job %s: exit %d: %s", name, code, stderr)
			}
		}()
	}
	<-done
	<-done
	sameOutputs(t, filepath.Join(tmp, "none"), filepath.Join(tmp, "a"))
	sameOutputs(t, filepath.Join(tmp, "none"), filepath.Join(tmp, "b"))
	_, got, stderr := scoreRuns(t, in, filepath.Join(tmp, "c"), cdir, nightly...)
	if got.served != got.runs || strings.Contains(stderr, "WARN") {
		t.Errorf("third job: %+v %s", got, stderr)
	}
	sameOutputs(t, filepath.Join(tmp, "none"), filepath.Join(tmp, "c"))
}

var (
	familiesRE = regexp.MustCompile(`msg="families from the cache" served=(\d+) reduced=(\d+)`)
	figuresRE  = regexp.MustCompile(`msg="figures from the cache" served=(\d+) drawn=(\d+)`)
)

// counts reads the two numbers of re's match in the log, failing the test
// without one.
func counts(t *testing.T, re *regexp.Regexp, stderr string) [2]int {
	t.Helper()
	m := re.FindStringSubmatch(stderr)
	if m == nil {
		t.Fatalf("no %s in the log: %s", re, stderr)
	}
	a, _ := strconv.Atoi(m[1])
	b, _ := strconv.Atoi(m[2])
	return [2]int{a, b}
}

// TestWarmFamiliesAndFigures: the family and figure entries of --cache.
// A warm rerun with nothing changed reduces no family and draws no
// figure; after one run of a family that is not the baseline changed,
// that family alone is reduced (the baseline's entry serves the others)
// and only the figures whose drawing changed are drawn; a bootstrap
// option (--bootstrap-resamples) reduces every family again and draws
// the figures again only where their drawing changed; damaged family and
// figure entries are warned about and rebuilt. Every time, the Parquet
// files and report are those of a job without a cache.
func TestWarmFamiliesAndFigures(t *testing.T) {
	t.Parallel()
	tmp, in := exampleCopy(t)
	cdir := filepath.Join(tmp, "cache")
	step := func(name string, args ...string) (fams, figs [2]int, stderr string) {
		t.Helper()
		_, _, stderr = scoreRuns(t, in, filepath.Join(tmp, name), cdir, args...)
		scoreCached(t, in, filepath.Join(tmp, name+"-none"), "", args...)
		sameOutputs(t, filepath.Join(tmp, name+"-none"), filepath.Join(tmp, name))
		return counts(t, familiesRE, stderr), counts(t, figuresRE, stderr), stderr
	}
	fams, figs, _ := step("cold", nightly...)
	if fams != [2]int{0, 3} || figs[0] != 0 || figs[1] == 0 {
		t.Fatalf("cold: families %v, figures %v", fams, figs)
	}
	nfig := figs[1]
	fams, figs, stderr := step("warm", nightly...)
	if fams != [2]int{3, 0} || figs != [2]int{nfig, 0} || strings.Contains(stderr, "WARN") {
		t.Errorf("warm: families %v, figures %v: %s", fams, figs, stderr)
	}
	editObject(t, filepath.Join(in, "ewc", "ewc-s0.jsonl"), func(lines []string) []string {
		lines[7] = rewardRE.ReplaceAllString(lines[7], `"reward":0.5,`)
		return lines
	})
	fams, figs, _ = step("changed", nightly...)
	if fams != [2]int{2, 1} || figs[0]+figs[1] != nfig || figs[1] == 0 {
		t.Errorf("changed: families %v, figures %v", fams, figs)
	}
	resamples := append([]string{}, nightly...)
	resamples[len(resamples)-1] = "200"
	fams, _, _ = step("resamples", resamples...)
	if fams != [2]int{0, 3} {
		t.Errorf("--bootstrap-resamples 200: families %v", fams)
	}
	// Every family and figure entry damaged.
	damaged := 0
	for _, e := range entries(t, cdir) {
		s := filepath.ToSlash(e)
		if !strings.Contains(s, "/families/") && !strings.Contains(s, "/figures/") {
			continue
		}
		data, err := os.ReadFile(e)
		if err != nil {
			t.Fatal(err)
		}
		data[len(data)/2] ^= 0x10
		writeFile(t, e, string(data))
		damaged++
	}
	fams, figs, stderr = step("damaged", nightly...)
	if fams != [2]int{0, 3} || figs != [2]int{0, nfig} || strings.Count(stderr, "cache entry not trusted") != 3+nfig {
		t.Errorf("damaged (%d entries): families %v, figures %v: %s", damaged, fams, figs, stderr)
	}
	fams, figs, stderr = step("rebuilt", nightly...)
	if fams != [2]int{3, 0} || figs != [2]int{nfig, 0} || strings.Contains(stderr, "WARN") {
		t.Errorf("rebuilt: families %v, figures %v: %s", fams, figs, stderr)
	}
}

// TestRunCacheNightlySweep: the nightly flags on a synthetic sweep whose
// runs span two objects each. After one object is replaced by another
// seed's (the benchmark's change: every pooled ceiling moves), after a
// family is added, and after an object is deleted, the run that changed
// is scored again and every other run is served, the moved ceilings
// re-applied where they moved; each time the outputs are those of a job
// without a cache.
func TestRunCacheNightlySweep(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	in := filepath.Join(tmp, "in")
	copyDir(t, synthSweep(t), in)
	alt := filepath.Join(tmp, "alt")
	if code, _, stderr := crl(t, "synth", "--out", alt, "--seeds", "2", "--steps", "300", "--split-files", "2",
		"--compression", "mixed", "--extras", "--seed", "8"); code != 0 {
		t.Fatalf("synth: %s", stderr)
	}
	cdir := filepath.Join(tmp, "cache")
	_, cold, _ := scoreRuns(t, in, filepath.Join(tmp, "cold"), cdir, nightly...)
	if cold.runs != 6 || cold.scored != 6 {
		t.Fatalf("cold: %+v", cold)
	}
	step := func(name string) runStats {
		t.Helper()
		_, got, stderr := scoreRuns(t, in, filepath.Join(tmp, name), cdir, nightly...)
		if strings.Contains(stderr, "WARN") {
			t.Errorf("%s: %s", name, stderr)
		}
		scoreCached(t, in, filepath.Join(tmp, name+"-none"), "", nightly...)
		sameOutputs(t, filepath.Join(tmp, name+"-none"), filepath.Join(tmp, name))
		return got
	}
	rel := filepath.Join("ppo", "ppo-s0", "part-001.jsonl")
	data, err := os.ReadFile(filepath.Join(alt, rel))
	if err != nil {
		t.Fatal(err)
	}
	// Another seed's object, one of whose rows more ends an episode (the
	// seeds' final steps per label may otherwise agree at this length).
	changed := strings.Replace(string(data), `"success":0}`, `"success":1}`, 1)
	if changed == string(data) {
		t.Fatal("no row to change")
	}
	writeFile(t, filepath.Join(in, rel), changed)
	if got := step("changed"); got != (runStats{served: 5, assembled: 1, scored: 1, runs: 6, reapplied: 5}) {
		t.Errorf("changed: %+v", got)
	}
	if code, _, stderr := crl(t, "synth", "--out", filepath.Join(in, "new"), "--family", "dqn", "--seeds", "1", "--steps", "250",
		"--extras", "--seed", "9"); code != 0 {
		t.Fatalf("synth: %s", stderr)
	}
	if got := step("added"); got.served != 6 || got.scored != 1 || got.runs != 7 || got.reapplied == 0 {
		t.Errorf("added: %+v", got)
	}
	if err := os.Remove(filepath.Join(in, "ewc", "ewc-s1", "part-000.jsonl.zst")); err != nil {
		t.Fatal(err)
	}
	if got := step("deleted"); got.served != 6 || got.scored != 1 || got.runs != 7 || got.reapplied == 0 {
		t.Errorf("deleted: %+v", got)
	}
}
