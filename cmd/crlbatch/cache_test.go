package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/crlbatch/crlbatch/cache"
	"github.com/crlbatch/crlbatch/pipeline"
)

// scoreCached scores in into out with --cache c (none when c is "") and
// the flags of args, failing the test on a non-zero exit; it returns the
// manifest's read field of every object and stderr.
func scoreCached(t *testing.T, in, out, c string, args ...string) ([]string, string) {
	t.Helper()
	all := []string{"score", in, "--out", out, "--quiet", "--concurrency", "2"}
	if c != "" {
		all = append(all, "--cache", c)
	}
	code, _, stderr := crl(t, append(all, args...)...)
	if code != 0 {
		t.Fatalf("score %v: exit %d: %s", args, code, stderr)
	}
	var reads []string
	for _, o := range readManifest(t, out).Objects {
		reads = append(reads, o.Read)
	}
	return reads, stderr
}

func countReads(reads []string, how string) int {
	n := 0
	for _, r := range reads {
		if r == how {
			n++
		}
	}
	return n
}

// TestCacheWarmSameAsCold: for every protocol's bundled example and a
// synthetic sweep, a warm rerun serves every object from the cache and
// writes Parquet files and a report byte-identical to the cold run's, which
// are those of a run without a cache.
func TestCacheWarmSameAsCold(t *testing.T) {
	t.Parallel()
	for _, c := range parquetCases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			in := c.input
			if in == "" {
				in = synthSweep(t)
			}
			tmp := t.TempDir()
			cdir := filepath.Join(tmp, "cache")
			scoreCached(t, in, filepath.Join(tmp, "none"), "", c.args...)
			cold, _ := scoreCached(t, in, filepath.Join(tmp, "cold"), cdir, c.args...)
			warm, stderr := scoreCached(t, in, filepath.Join(tmp, "warm"), cdir, c.args...)
			if countReads(cold, pipeline.ReadDecoded) != len(cold) || countReads(warm, pipeline.ReadCache) != len(warm) {
				t.Fatalf("cold %v, warm %v", cold, warm)
			}
			if strings.Contains(stderr, "WARN") {
				t.Errorf("warm run warned: %s", stderr)
			}
			sameOutputs(t, filepath.Join(tmp, "none"), filepath.Join(tmp, "cold"))
			sameOutputs(t, filepath.Join(tmp, "cold"), filepath.Join(tmp, "warm"))
		})
	}
}

// copyDir copies the files under src to dst.
func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dst, rel)), 0o755); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestCacheAfterChanges: after one object is changed (a row appended),
// one added (a copy of another, whose duplicate note must still be found)
// and one deleted, only the changed and added ones are decoded (the
// changed one from its earlier bytes on: "appended"), and the outputs are
// those of a run without a cache.
func TestCacheAfterChanges(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	in := filepath.Join(tmp, "in")
	copyDir(t, "../../configs/example-sweep", in)
	cdir := filepath.Join(tmp, "cache")
	scoreCached(t, in, filepath.Join(tmp, "cold"), cdir)

	var plain []string
	filepath.WalkDir(in, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".jsonl") {
			plain = append(plain, p)
		}
		return err
	})
	if len(plain) < 3 {
		t.Fatalf("want 3 plain objects, have %v", plain)
	}
	data, err := os.ReadFile(plain[0])
	if err != nil {
		t.Fatal(err)
	}
	// Change: the object's last row is written once more (one more row).
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	changed := string(data) + lines[len(lines)-1] + "\n"
	writeFile(t, plain[0], changed)
	if err := os.Remove(plain[1]); err != nil {
		t.Fatal(err)
	}
	copyData, err := os.ReadFile(plain[2])
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(in, "zz-copy.jsonl"), string(copyData))

	warm, _ := scoreCached(t, in, filepath.Join(tmp, "warm"), cdir)
	scoreCached(t, in, filepath.Join(tmp, "none"), "")
	sameOutputs(t, filepath.Join(tmp, "none"), filepath.Join(tmp, "warm"))
	m := readManifest(t, filepath.Join(tmp, "warm"))
	for _, o := range m.Objects {
		want := pipeline.ReadCache
		switch {
		case o.Key == "zz-copy.jsonl":
			want = pipeline.ReadDecoded
		case filepath.Join(in, o.Key) == plain[0]:
			want = pipeline.ReadAppended
		}
		if o.Read != want {
			t.Errorf("%s: read %q, want %q", o.Key, o.Read, want)
		}
	}
	if len(m.Objects) != len(warm) || countReads(warm, pipeline.ReadDecoded) != 1 || countReads(warm, pipeline.ReadAppended) != 1 {
		t.Errorf("reads %v", warm)
	}
	report, _ := os.ReadFile(filepath.Join(tmp, "warm", "report.md"))
	if !strings.Contains(string(report), "zz-copy.jsonl hold the same bytes") {
		t.Errorf("the duplicate object is not noted in the report")
	}
}

// TestCacheOptions: an option that changes decoding (the identity fields,
// a component kept, a limit) keeps the entries from being reused; one that
// does not (the bootstrap, --gamma, the families) reuses them.
func TestCacheOptions(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	in := "../../configs/example-sweep"
	cdir := filepath.Join(tmp, "cache")
	scoreCached(t, in, filepath.Join(tmp, "cold"), cdir)
	for i, c := range []struct {
		args  []string
		reuse bool
	}{
		{[]string{"--identity-fields", "run_id,seed,algorithm_id"}, false},
		{[]string{"--episode-end", "goal"}, false},
		{[]string{"--max-runs", "5000"}, false},
		{[]string{"--max-line-bytes", "1MiB"}, false},
		{[]string{"--bootstrap-resamples", "500"}, true},
		{[]string{"--gamma", "0.9"}, true},
		{[]string{"--group-by", "algorithm_id,seed", "--allow-missing-baseline"}, true},
	} {
		out := filepath.Join(tmp, "out"+string(rune('a'+i)))
		reads, _ := scoreCached(t, in, out, cdir, c.args...)
		want := pipeline.ReadDecoded
		if c.reuse {
			want = pipeline.ReadCache
		}
		if countReads(reads, want) != len(reads) {
			t.Errorf("%v: reads %v, want every object %s", c.args, reads, want)
		}
		none := out + "-none"
		scoreCached(t, in, none, "", c.args...)
		sameOutputs(t, none, out)
	}
}

// dropRunEntries removes the cache's object indexes and run entries, so
// that the next job reads every object's entry back.
func dropRunEntries(t *testing.T, dir string) {
	t.Helper()
	for _, kind := range []string{"index", "runs"} {
		if err := os.RemoveAll(filepath.Join(dir, fmt.Sprintf("v%d", cache.FormatVersion), kind)); err != nil {
			t.Fatal(err)
		}
	}
}

// objectEntries are the entries of objects among entries (not under
// index/, runs/, families/ or figures/).
func objectEntries(ents []string) []string {
	var out []string
	for _, e := range ents {
		s := filepath.ToSlash(e)
		if !strings.Contains(s, "/index/") && !strings.Contains(s, "/runs/") && !strings.Contains(s, "/families/") && !strings.Contains(s, "/cells/") && !strings.Contains(s, "/figures/") {
			out = append(out, e)
		}
	}
	return out
}

// entries lists the cache's entry files.
func entries(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, cache.EntrySuffix) {
			out = append(out, p)
		}
		return err
	})
	return out
}

// TestCacheCorruptEntries: an entry with a flipped byte, a truncated one
// and one written by another format version are not trusted: a warning
// names them, the object is decoded, the outputs are unchanged, and the
// entry is rebuilt (the next run serves it).
func TestCacheCorruptEntries(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	in := "../../configs/example-sweep"
	cdir := filepath.Join(tmp, "cache")
	scoreCached(t, in, filepath.Join(tmp, "cold"), cdir)
	// Without its index and run entries, the next job reads every object's
	// entry back (the run-level entries' damage: TestRunCacheCorrupt).
	dropRunEntries(t, cdir)
	ents := objectEntries(entries(t, cdir))
	if len(ents) < 3 {
		t.Fatalf("entries %v", ents)
	}
	damage := []func([]byte) []byte{
		func(b []byte) []byte { b[len(b)/2] ^= 0x40; return b },
		func(b []byte) []byte { return b[:len(b)*2/3] },
		func(b []byte) []byte { b[len("CRLBATCH-CACHE\n")] = cache.FormatVersion + 1; return b },
	}
	for i, f := range damage {
		data, err := os.ReadFile(ents[i])
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(ents[i], f(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	reads, stderr := scoreCached(t, in, filepath.Join(tmp, "damaged"), cdir)
	if n := countReads(reads, pipeline.ReadDecoded); n != 3 {
		t.Errorf("%d objects decoded, want 3: %v", n, reads)
	}
	for _, want := range []string{"checksum mismatch", fmt.Sprintf("written by format version %d", cache.FormatVersion+1)} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q: %s", want, stderr)
		}
	}
	if strings.Count(stderr, "cache entry not trusted") != 3 {
		t.Errorf("want 3 warnings: %s", stderr)
	}
	sameOutputs(t, filepath.Join(tmp, "cold"), filepath.Join(tmp, "damaged"))
	reads, stderr = scoreCached(t, in, filepath.Join(tmp, "rebuilt"), cdir)
	if countReads(reads, pipeline.ReadCache) != len(reads) || strings.Contains(stderr, "WARN") {
		t.Errorf("after the rebuild: %v %s", reads, stderr)
	}
	sameOutputs(t, filepath.Join(tmp, "cold"), filepath.Join(tmp, "rebuilt"))
}

// TestCacheUnwritable: a cache where nothing can be written nor read (its
// entry folder is a file) costs two warnings (the first entry that cannot
// be read, and that the cache is no longer read nor written), never the
// job.
func TestCacheUnwritable(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	in := "../../configs/examples/safecrl"
	cdir := filepath.Join(tmp, "cache")
	writeFile(t, filepath.Join(cdir, fmt.Sprintf("v%d", cache.FormatVersion)), "not a folder")
	reads, stderr := scoreCached(t, in, filepath.Join(tmp, "a"), cdir, "--protocol", "safecrl")
	if countReads(reads, pipeline.ReadDecoded) != len(reads) {
		t.Errorf("reads %v", reads)
	}
	if strings.Count(stderr, "cache is no longer read nor written") != 1 || strings.Count(stderr, "level=WARN") != 2 {
		t.Errorf("want two warnings, the cache no longer used: %s", stderr)
	}
	scoreCached(t, in, filepath.Join(tmp, "none"), "", "--protocol", "safecrl")
	sameOutputs(t, filepath.Join(tmp, "none"), filepath.Join(tmp, "a"))
}

// TestCacheConcurrentJobs: two jobs sharing one cache at once both give
// the results of a job without it, and the cache then serves a third job
// whole (go test -race covers the engine's side); then, after lines were
// appended to an object, likewise: two jobs at once (each finds the grown
// object's earlier entry, or the new one the other wrote), then a third.
func TestCacheConcurrentJobs(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	in := synthSweep(t)
	cdir := filepath.Join(tmp, "cache")
	var grown string
	filepath.WalkDir(in, func(p string, d os.DirEntry, err error) error {
		if err == nil && grown == "" && strings.HasSuffix(p, ".jsonl") {
			grown = p
		}
		return err
	})
	// Its rows again until it holds AppendedMinBytes (smaller objects keep
	// no tails entry).
	editObject(t, grown, func(lines []string) []string {
		n := len(lines)
		for size := 0; size < pipeline.AppendedMinBytes; size = len(strings.Join(lines, "\n")) {
			lines = append(lines, lines[:n]...)
		}
		return lines
	})
	for night, suffix := range []string{"", "-appended"} {
		if night == 1 {
			editObject(t, grown, func(lines []string) []string { return append(lines, lines[len(lines)-3:]...) })
		}
		none, a, b, c := "none"+suffix, "a"+suffix, "b"+suffix, "c"+suffix
		scoreCached(t, in, filepath.Join(tmp, none), "")
		var wg sync.WaitGroup
		for _, name := range []string{a, b} {
			wg.Go(func() {
				code, _, stderr := crl(t, "score", in, "--out", filepath.Join(tmp, name), "--quiet", "--cache", cdir, "--concurrency", "2")
				if code != 0 || strings.Contains(stderr, "WARN") {
					t.Errorf("job %s: exit %d: %s", name, code, stderr)
				}
			})
		}
		wg.Wait()
		sameOutputs(t, filepath.Join(tmp, none), filepath.Join(tmp, a))
		sameOutputs(t, filepath.Join(tmp, none), filepath.Join(tmp, b))
		if night == 1 {
			for _, name := range []string{a, b} {
				for _, o := range readManifest(t, filepath.Join(tmp, name)).Objects {
					if filepath.Join(in, o.Key) == grown && o.Read != pipeline.ReadAppended && o.Read != pipeline.ReadCache {
						t.Errorf("job %s: the grown object read %q", name, o.Read)
					}
				}
			}
		}
		reads, stderr := scoreCached(t, in, filepath.Join(tmp, c), cdir)
		if countReads(reads, pipeline.ReadCache) != len(reads) || strings.Contains(stderr, "WARN") {
			t.Errorf("third job: %v %s", reads, stderr)
		}
		sameOutputs(t, filepath.Join(tmp, none), filepath.Join(tmp, c))
	}
}

// TestCacheBadRowsNotCached: an object with rows skipped under
// --max-bad-rows is decoded on every run, so that its bad rows are listed
// and counted every time.
func TestCacheBadRowsNotCached(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	in := filepath.Join(tmp, "in")
	writeFile(t, filepath.Join(in, "a.jsonl"), `{"run_id":"a","reward":0.5,"regime_id":"r"}`+"\n"+`{"run_id":"a","reward":"x","regime_id":"r"}`+"\n")
	writeFile(t, filepath.Join(in, "b.jsonl"), `{"run_id":"b","reward":0.5,"regime_id":"r"}`+"\n")
	cdir := filepath.Join(tmp, "cache")
	scoreCached(t, in, filepath.Join(tmp, "cold"), cdir, "--max-bad-rows", "1")
	reads, _ := scoreCached(t, in, filepath.Join(tmp, "warm"), cdir, "--max-bad-rows", "1")
	if reads[0] != pipeline.ReadDecoded || reads[1] != pipeline.ReadCache {
		t.Errorf("reads %v", reads)
	}
	sameOutputs(t, filepath.Join(tmp, "cold"), filepath.Join(tmp, "warm"))
	if s := readManifest(t, filepath.Join(tmp, "warm")).Skipped; len(s) != 1 {
		t.Errorf("skipped %v", s)
	}
	if code, _, stderr := crl(t, "score", in, "--out", filepath.Join(tmp, "strict"), "--quiet", "--cache", cdir); code != 1 || !strings.Contains(stderr, "a.jsonl: line 2: reward") {
		t.Errorf("without --max-bad-rows: exit %d: %s", code, stderr)
	}
}

// TestCacheCommand: cache stats counts the entries a job wrote, and apart
// those of another format version; prune --max-bytes 0 and --older-than
// remove them; prune without a bound is a usage error.
func TestCacheCommand(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	cdir := filepath.Join(tmp, "cache")
	scoreCached(t, "../../configs/examples/skillshift", filepath.Join(tmp, "a"), cdir, "--protocol", "skillshift")
	n := len(entries(t, cdir))
	objs := len(objectEntries(entries(t, cdir)))
	var size int64
	for _, e := range entries(t, cdir) {
		fi, err := os.Stat(e)
		if err != nil {
			t.Fatal(err)
		}
		size += fi.Size()
	}
	code, stdout, stderr := crl(t, "cache", "stats", cdir)
	// Two objects: two entries, two indexes, and a run entry per run.
	if code != 0 || !strings.Contains(stdout, fmt.Sprintf("entries: %d\n", n)) || objs != 2 || n <= 4 || !strings.Contains(stdout, "bytes: "+strconv.FormatInt(size, 10)+" ") || !strings.Contains(stdout, "oldest: ") {
		t.Fatalf("stats: exit %d: %s %s (%d entries, %d bytes)", code, stdout, stderr, n, size)
	}
	if strings.Contains(stdout, "another format version") {
		t.Errorf("stats of a cache of this build's entries only: %s", stdout)
	}
	// An entry an older build left (another format version's folder):
	// counted apart, never read, removed by prune with the rest.
	old := filepath.Join(cdir, fmt.Sprintf("v%d", cache.FormatVersion-1), "ab", strings.Repeat("ab", 32)+cache.EntrySuffix)
	if err := os.MkdirAll(filepath.Dir(old), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(old, []byte("an entry of an older build"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, stdout, _ := crl(t, "cache", "stats", cdir); code != 0 || !strings.Contains(stdout, fmt.Sprintf("entries: %d\n", n+1)) ||
		!strings.Contains(stdout, "of another format version: 1 entries, 26 bytes (26 B)") {
		t.Errorf("stats with an older build's entry: exit %d: %s", code, stdout)
	}
	n, size = n+1, size+26
	if code, stdout, _ := crl(t, "cache", "prune", cdir, "--older-than", "1d"); code != 0 || !strings.HasPrefix(stdout, "removed 0 entries") {
		t.Errorf("prune --older-than 1d: %d %s", code, stdout)
	}
	if code, stdout, _ := crl(t, "cache", "prune", cdir, "--max-bytes", "0"); code != 0 || !strings.HasPrefix(stdout, fmt.Sprintf("removed %d entries (", n)+strconv.FormatInt(size, 10)+" bytes); 0 entries") {
		t.Errorf("prune --max-bytes 0: %d %s", code, stdout)
	}
	if len(entries(t, cdir)) != 0 {
		t.Errorf("entries left: %v", entries(t, cdir))
	}
	if code, _, stderr := crl(t, "cache", "prune", cdir); code != 2 || !strings.Contains(stderr, "--max-bytes") {
		t.Errorf("prune without a bound: %d %s", code, stderr)
	}
}

// TestCacheInsideInputOrOutput: a cache inside the input (its entries
// could be read as traces) or inside, or around, the output is a usage
// error.
func TestCacheInsideInputOrOutput(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	in := filepath.Join(tmp, "in")
	copyDir(t, "../../configs/examples/skillshift", in)
	out := filepath.Join(tmp, "out")
	for _, c := range []string{filepath.Join(in, "cache"), filepath.Join(out, "cache"), tmp} {
		code, _, stderr := crl(t, "score", in, "--out", out, "--quiet", "--protocol", "skillshift", "--cache", c)
		if code != 2 || !strings.Contains(stderr, "--cache") {
			t.Errorf("--cache %s: exit %d: %s", c, code, stderr)
		}
	}
}

// TestCacheWarmSpilledAndTwoPasses: objects served from the cache keep
// their encoded traces; spilled under --memory-limit, and read twice by the
// nightly job's by_configuration ceiling (a pass over every run before the
// scoring pass), they give outputs byte-identical to a run without a cache,
// and no spill file is left.
//
// Not parallel (see TestMain): --memory-limit sets the runtime's soft memory
// limit for the process and restores the previous one at the end; two such
// jobs overlapping could leave the wrong one behind.
func TestCacheWarmSpilledAndTwoPasses(t *testing.T) {
	in := synthSweep(t)
	tmp := t.TempDir()
	spill := filepath.Join(tmp, "spill")
	if err := os.MkdirAll(spill, 0o755); err != nil {
		t.Fatal(err)
	}
	cdir := filepath.Join(tmp, "cache")
	nightly := []string{"--spec", "experiment", "--ceiling", "by_configuration", "--episode-end-from-spec",
		"--solve-component", "progress", "--bootstrap-resamples", "500"}
	scoreCached(t, in, filepath.Join(tmp, "none"), "", nightly...)
	scoreCached(t, in, filepath.Join(tmp, "cold"), cdir, nightly...)
	warm, _ := scoreCached(t, in, filepath.Join(tmp, "warm"), cdir, nightly...)
	dropRunEntries(t, cdir) // so that the objects' entries are read back
	limited := append([]string{"--memory-limit", "1KiB", "--spill-dir", spill, "--log-level", "info"}, nightly...)
	spilled, stderr := scoreCached(t, in, filepath.Join(tmp, "spilled"), cdir, limited...)
	if countReads(warm, pipeline.ReadCache) != len(warm) || countReads(spilled, pipeline.ReadCache) != len(spilled) {
		t.Fatalf("warm %v, spilled %v", warm, spilled)
	}
	if !strings.Contains(stderr, "spilled") {
		t.Errorf("the limited run did not spill: %s", stderr)
	}
	sameOutputs(t, filepath.Join(tmp, "none"), filepath.Join(tmp, "warm"))
	sameOutputs(t, filepath.Join(tmp, "none"), filepath.Join(tmp, "spilled"))
	if left, _ := os.ReadDir(spill); len(left) != 0 {
		t.Errorf("spill files left: %v", left)
	}
}

// TestUploadBytes: what `cache stats` and `cache prune` say of the bytes of
// S3's incomplete multipart uploads, known or not.
func TestUploadBytes(t *testing.T) {
	for _, tc := range []struct {
		s    cache.Stats
		want string
	}{
		{cache.Stats{Uploads: 2, UploadBytes: 1734}, "1734 bytes (1.7 KiB) in their parts"},
		{cache.Stats{Uploads: 1}, "0 bytes (0 B) in their parts"},
		{cache.Stats{Uploads: 2, UploadsUnsized: 2}, "bytes unknown (their parts could not be listed)"},
		{cache.Stats{Uploads: 3, UploadBytes: 8 << 20, UploadsUnsized: 1}, "8388608 bytes (8.0 MiB) in the parts of 2 of them, bytes unknown for the other 1 (their parts could not be listed)"},
	} {
		if got := uploadBytes(tc.s); got != tc.want {
			t.Errorf("uploadBytes(%+v) = %q, want %q", tc.s, got, tc.want)
		}
	}
}

// TestSummaryAppended: the summary line counts the objects that grew by
// appended lines since their entries, after the others; a job without
// such objects says nothing of them.
func TestSummaryAppended(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	in := filepath.Join(tmp, "in")
	copyDir(t, "../../configs/example-sweep", in)
	cdir := filepath.Join(tmp, "cache")
	score := func(out string) string {
		t.Helper()
		code, stdout, stderr := crl(t, "score", in, "--out", filepath.Join(tmp, out), "--cache", cdir, "--concurrency", "2")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		return stdout
	}
	if s := score("cold"); !strings.Contains(s, "9 decoded, 0 from the cache, 0 Parquet\n") {
		t.Errorf("cold: %s", s)
	}
	ppo := filepath.Join(in, "ppo", "ppo-s0.jsonl")
	editObject(t, ppo, func(lines []string) []string { return append(lines, lines[len(lines)-1]) })
	if s := score("warm"); !strings.Contains(s, "(3601 rows): 0 decoded, 8 from the cache, 0 Parquet, 1 appended to\n") {
		t.Errorf("warm: %s", s)
	}
}
