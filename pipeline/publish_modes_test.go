package pipeline

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"gocloud.dev/blob"

	"github.com/crlbatch/crlbatch/internal/synth"
	"github.com/crlbatch/crlbatch/writers"
)

// The publishing modes of issue 12 (docs/decisions.md, "Publishing:
// one-off and nightly"), through a local folder and an in-memory bucket.

// outStore reads what an OUTPUT holds: a local folder or a bucket prefix.
type outStore interface {
	files(t *testing.T) map[string][]byte // key relative to OUTPUT → bytes
}

type dirStore string

func (d dirStore) files(t *testing.T) map[string][]byte {
	m := map[string][]byte{}
	for k, v := range snapshot(t, string(d)) {
		m[k] = []byte(v)
	}
	return m
}

type bucketStore struct {
	b      *blob.Bucket
	prefix string
}

func (s bucketStore) files(t *testing.T) map[string][]byte {
	ctx := context.Background()
	m := map[string][]byte{}
	it := s.b.List(&blob.ListOptions{Prefix: s.prefix})
	for {
		o, err := it.Next(ctx)
		if err != nil {
			return m
		}
		data, err := s.b.ReadAll(ctx, o.Key)
		if err != nil {
			t.Fatal(err)
		}
		m[strings.TrimPrefix(o.Key, s.prefix)] = data
	}
}

// modeCase is one store: a job config for an OUTPUT in it, and the store.
type modeCase struct {
	name string
	job  func(t *testing.T) (Config, outStore)
}

func modeCases() []modeCase {
	return []modeCase{
		{"local", func(t *testing.T) (Config, outStore) {
			out := filepath.Join(t.TempDir(), "out")
			return localJob(localSweep(t), out, nil), dirStore(out)
		}},
		{"mem", func(t *testing.T) (Config, outStore) {
			op := &memOpener{}
			b, _, _ := op.open(context.Background(), "mem://lab")
			if _, err := synth.Write(context.Background(), b, "in/", synth.Config{Seeds: 1, Steps: 80, Seed: 3}); err != nil {
				t.Fatal(err)
			}
			cfg := memJob(t, op, "mem://lab/in", "mem://lab/out")
			cfg.Resamples = 200
			return cfg, bucketStore{b, "out/"}
		}},
	}
}

// checkResult verifies that the manifest under prefix names exactly the
// files there with their sizes and sha256s, and returns the manifest.
func checkResult(t *testing.T, files map[string][]byte, prefix string) writers.Manifest {
	t.Helper()
	var m writers.Manifest
	if err := json.Unmarshal(files[prefix+ManifestName], &m); err != nil {
		t.Fatalf("%s%s: %v", prefix, ManifestName, err)
	}
	if len(m.Outputs) == 0 {
		t.Fatalf("%s%s lists no output", prefix, ManifestName)
	}
	for _, o := range m.Outputs {
		data, ok := files[prefix+o.Name]
		sum := sha256.Sum256(data)
		if !ok || int64(len(data)) != o.Bytes || hex.EncodeToString(sum[:]) != o.SHA256 {
			t.Errorf("%s%s: %d bytes, sha256 %x (there: %v); the manifest says %d, %s", prefix, o.Name, len(data), sum, ok, o.Bytes, o.SHA256)
		}
	}
	return m
}

// TestOverwriteReplacesInPlace: --overwrite on a one-off OUTPUT removes the
// manifest first, writes the new files, removes the earlier result's files
// that the new one does not write, and writes the manifest last; files
// crlbatch does not write stay, and no claim is left.
//
// Not parallel (see TestMain): it sets testHookBeforeManifest, which every
// job in the process calls.
func TestOverwriteReplacesInPlace(t *testing.T) {
	for _, c := range modeCases() {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			cfg, st := c.job(t)
			if _, err := Run(ctx, cfg); err != nil {
				t.Fatal(err)
			}
			b, closeB, _ := openBucket(ctx, cfg.Opener, mustOut(t, cfg))
			defer closeB()
			prefix := mustOut(t, cfg).Prefix
			// The earlier result also wrote old.parquet (say, another
			// protocol's table), which the new one does not.
			var m map[string]any
			json.Unmarshal(st.files(t)[ManifestName], &m)
			m["outputs"] = append(m["outputs"].([]any), map[string]any{"name": "old.parquet", "rows": 1, "bytes": 3, "sha256": "x"})
			data, _ := json.Marshal(m)
			put(t, b, prefix+ManifestName, data)
			put(t, b, prefix+"old.parquet", []byte("old"))
			put(t, b, prefix+"notes.txt", []byte("mine"))
			firstID := m["attempt_id"]

			var seen map[string][]byte
			testHookBeforeManifest = func(string) { seen = st.files(t) }
			defer func() { testHookBeforeManifest = nil }()
			cfg.Overwrite = true
			if _, err := Run(ctx, cfg); err != nil {
				t.Fatal(err)
			}
			if _, ok := seen[ManifestName]; ok {
				t.Error("the earlier manifest was still there while the new files were written")
			}
			if _, ok := seen["old.parquet"]; ok {
				t.Error("the earlier result's old.parquet was still there when the manifest was written")
			}
			files := st.files(t)
			got := checkResult(t, files, "")
			if got.AttemptID == firstID {
				t.Error("the manifest was not replaced")
			}
			var names []string
			for k := range files {
				names = append(names, k)
			}
			slices.Sort(names)
			// The new result's files (its manifest lists them) and the
			// file crlbatch does not write; not old.parquet.
			want := []string{ManifestName, "notes.txt"}
			for _, o := range got.Outputs {
				want = append(want, o.Name)
			}
			slices.Sort(want)
			if !slices.Equal(names, want) || slices.Contains(names, "old.parquet") {
				t.Errorf("OUTPUT holds %q, want %q", names, want)
			}
			if c.name == "local" {
				if _, err := os.Stat(filepath.Join(cfg.Output, ".crlbatch")); err == nil {
					t.Error("the claim folder is left")
				}
			}
		})
	}
}

func mustOut(t *testing.T, cfg Config) Location {
	t.Helper()
	l, err := ParseLocation(cfg.Output, true)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func put(t *testing.T, b *blob.Bucket, key string, data []byte) {
	t.Helper()
	if err := b.WriteAll(context.Background(), key, data, nil); err != nil {
		t.Fatal(err)
	}
}

// TestConcurrentOneOffJobs: of two one-off jobs on one OUTPUT at once
// (with or without --overwrite), one publishes a complete, consistent
// result and the other fails with a usage error naming the first job
// (host, pid, start) and touches nothing.
//
// Not parallel (see TestMain): it sets testHookBeforeManifest, which every
// job in the process calls.
func TestConcurrentOneOffJobs(t *testing.T) {
	host, _ := os.Hostname()
	for _, c := range modeCases() {
		for _, overwrite := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/overwrite=%v", c.name, overwrite), func(t *testing.T) {
				ctx := context.Background()
				cfg, st := c.job(t)
				cfg.Overwrite = overwrite
				if overwrite {
					if _, err := Run(ctx, cfg); err != nil {
						t.Fatal(err)
					}
				}
				// A publishes and waits before its manifest until B is done.
				bDone := make(chan struct{})
				testHookBeforeManifest = func(string) {
					select {
					case <-bDone:
					case <-time.After(30 * time.Second):
						t.Error("B never finished")
					}
				}
				defer func() { testHookBeforeManifest = nil }()
				var wg sync.WaitGroup
				var errA error
				wg.Add(1)
				go func() { defer wg.Done(); _, errA = Run(ctx, cfg) }()
				// B starts once A holds the claim.
				for deadline := time.Now().Add(30 * time.Second); ; {
					if _, ok := st.files(t)[jobClaim]; ok || time.Now().After(deadline) {
						break
					}
					time.Sleep(5 * time.Millisecond)
				}
				_, errB := Run(ctx, cfg)
				close(bDone)
				wg.Wait()
				if errA != nil {
					t.Fatalf("A: %v", errA)
				}
				var ue *UsageError
				if !errors.As(errB, &ue) || !strings.Contains(errB.Error(), fmt.Sprintf("pid %d on %s", os.Getpid(), host)) ||
					!strings.Contains(errB.Error(), "at once") {
					t.Fatalf("B: %v, want a usage error naming A", errB)
				}
				files := st.files(t)
				checkResult(t, files, "")
				if _, ok := files[jobClaim]; ok {
					t.Error("A's claim is left")
				}
			})
		}
	}
}

// TestStaleClaim: a claim whose holder is provably gone (its process on
// this host, or older than a day anywhere; one that cannot be read, as a
// crash of the machine may leave it, a minute after it was written) is
// taken over, with a warning; one of a live or unknown holder is not, and
// the refusal says when it will be.
func TestStaleClaim(t *testing.T) {
	t.Parallel()
	host, _ := os.Hostname()
	dead := deadProcess(t)
	const liveWait = "a claim is stale once its process is gone on this host, or after 24h0m0s"
	for _, c := range []struct {
		name  string
		claim string
		age   time.Duration // of the claim's file
		ok    bool
		held  []string // what the refusal says of the holder and when its claim is stale
	}{
		{"dead process here", fmt.Sprintf(`{"host":%q,"pid":%d,"started_at":%q,"attempt":"a"}`, host, dead, time.Now().UTC().Format(time.RFC3339)), 0, true, nil},
		{"live process here", fmt.Sprintf(`{"host":%q,"pid":%d,"started_at":%q,"attempt":"a"}`, host, os.Getpid(), time.Now().UTC().Format(time.RFC3339)), 0, false, []string{"the job of pid ", liveWait}},
		{"recent elsewhere", fmt.Sprintf(`{"host":"elsewhere","pid":%d,"started_at":%q,"attempt":"a"}`, dead, time.Now().UTC().Format(time.RFC3339)), 0, false, []string{"the job of pid ", liveWait}},
		{"a day old elsewhere", fmt.Sprintf(`{"host":"elsewhere","pid":%d,"started_at":%q,"attempt":"a"}`, dead, time.Now().Add(-25*time.Hour).UTC().Format(time.RFC3339)), 0, true, nil},
		{"empty, just written", "", 0, false, []string{"another job (its claim is not readable yet)", "a claim that cannot be read is stale 1m0s after it was last written"}},
		{"empty, written two minutes ago", "", 2 * time.Minute, true, nil},
		{"cut short, just written", `{"host":"vm","pid":12`, 0, false, []string{"another job (its claim is not readable yet)", "a claim that cannot be read is stale 1m0s after it was last written"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			in := localSweep(t)
			out := filepath.Join(t.TempDir(), "out")
			claim := filepath.Join(out, filepath.FromSlash(jobClaim))
			write(t, claim, c.claim)
			if c.age > 0 {
				old := time.Now().Add(-c.age)
				if err := os.Chtimes(claim, old, old); err != nil {
					t.Fatal(err)
				}
			}
			var log bytes.Buffer
			_, err := Run(context.Background(), localJob(in, out, &log))
			if c.ok {
				if err != nil || !strings.Contains(log.String(), "took over a claim") {
					t.Errorf("%v; log %s", err, log.String())
				}
				if _, err := os.Stat(filepath.Join(out, ".crlbatch")); err == nil {
					t.Error("the claim folder is left")
				}
			} else {
				var ue *UsageError
				if !errors.As(err, &ue) {
					t.Errorf("%v, want a usage error", err)
				}
				for _, h := range c.held {
					if err == nil || !strings.Contains(err.Error(), h) {
						t.Errorf("%v, want %q in it", err, h)
					}
				}
				if got, _ := os.ReadFile(filepath.Join(out, filepath.FromSlash(jobClaim))); string(got) != c.claim {
					t.Errorf("the live claim changed: %q", got)
				}
			}
		})
	}
}

// historyIDs are the complete results of a nightly OUTPUT, oldest first,
// each checked against its manifest.
func historyIDs(t *testing.T, files map[string][]byte) []string {
	t.Helper()
	var ids []string
	for k := range files {
		rest, ok := strings.CutPrefix(k, ResultsDir)
		if id, file, _ := strings.Cut(rest, "/"); ok && file == ManifestName {
			m := checkResult(t, files, ResultsDir+id+"/")
			if m.AttemptID != id {
				t.Errorf("results/%s/ holds attempt %s", id, m.AttemptID)
			}
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids
}

// partitions maps each history table to the attempts it holds, checking
// each partition against its result's file.
func partitions(t *testing.T, files map[string][]byte) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for k, data := range files {
		rest, ok := strings.CutPrefix(k, HistoryDir)
		if !ok {
			continue
		}
		parts := strings.Split(rest, "/")
		id := strings.TrimPrefix(parts[2], "attempt=")
		if len(parts) != 4 || parts[3] != "part.parquet" || parts[1] != "night="+night(id) {
			t.Errorf("history object %s", k)
			continue
		}
		if !bytes.Equal(data, files[ResultsDir+id+"/"+parts[0]+".parquet"]) {
			t.Errorf("%s differs from its result's %s.parquet", k, parts[0])
		}
		out[parts[0]] = append(out[parts[0]], id)
	}
	for _, ids := range out {
		slices.Sort(ids)
	}
	return out
}

// TestConcurrentHistoryJobs: three --history jobs publishing into one
// OUTPUT at once each publish their own complete result under a distinct
// attempt id, each with its history partitions, and LATEST names the
// newest.
//
// Not parallel (see TestMain): it sets testHookBeforeManifest, which every
// job in the process calls.
func TestConcurrentHistoryJobs(t *testing.T) {
	for _, c := range modeCases() {
		t.Run(c.name, func(t *testing.T) {
			cfg, st := c.job(t)
			cfg.History = true
			const n = 3
			var arrived sync.WaitGroup
			arrived.Add(n)
			testHookBeforeManifest = func(string) {
				// Every job has written its files before any manifest.
				arrived.Done()
				done := make(chan struct{})
				go func() { arrived.Wait(); close(done) }()
				select {
				case <-done:
				case <-time.After(30 * time.Second):
				}
			}
			defer func() { testHookBeforeManifest = nil }()
			errs := make([]error, n)
			sums := make([]*Summary, n)
			var wg sync.WaitGroup
			for i := range n {
				wg.Add(1)
				go func() { defer wg.Done(); sums[i], errs[i] = Run(context.Background(), cfg) }()
			}
			wg.Wait()
			for i, err := range errs {
				if err != nil {
					t.Fatalf("job %d: %v", i, err)
				}
			}
			files := st.files(t)
			ids := historyIDs(t, files)
			if len(ids) != n {
				t.Fatalf("complete results %q, want %d", ids, n)
			}
			for _, s := range sums {
				if id := path.Base(filepath.ToSlash(s.Result)); !slices.Contains(ids, id) {
					t.Errorf("job result %s is not among %q", s.Result, ids)
				}
			}
			if got := string(files[LatestName]); got != ResultsDir+ids[n-1]+"/\n" {
				t.Errorf("LATEST %q, want the newest, %s", got, ids[n-1])
			}
			p := partitions(t, files)
			for _, table := range HistoryTables {
				if !slices.Equal(p[table], ids) {
					t.Errorf("history/%s holds %q, want %q", table, p[table], ids)
				}
			}
			for k := range files {
				if strings.HasPrefix(k, stateDir) {
					t.Errorf("claim %s left", k)
				}
			}
		})
	}
}

// TestKeep: --keep 3 leaves the three newest complete results and their
// partitions after each night, never removes the result LATEST names nor
// an attempt in progress.
func TestKeep(t *testing.T) {
	t.Parallel()
	for _, c := range modeCases() {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			cfg, st := c.job(t)
			cfg.History, cfg.Keep = true, 3
			b, closeB, _ := openBucket(ctx, cfg.Opener, mustOut(t, cfg))
			defer closeB()
			prefix := mustOut(t, cfg).Prefix
			// An old attempt in progress: its holder lives.
			host, _ := os.Hostname()
			const live = "20200101T000000Z-0000000000aa"
			put(t, b, prefix+attemptClaims+live+".json", fmt.Appendf(nil, `{"host":%q,"pid":%d,"started_at":%q,"attempt":%q}`, host, os.Getpid(), time.Now().UTC().Format(time.RFC3339), live))
			put(t, b, prefix+ResultsDir+live+"/runs.parquet", []byte("in progress"))
			var all []string
			for night := 1; night <= 5; night++ {
				sum, err := Run(ctx, cfg)
				if err != nil {
					t.Fatal(err)
				}
				all = append(all, path.Base(filepath.ToSlash(sum.Result)))
				files := st.files(t)
				ids := historyIDs(t, files)
				want := all[max(0, len(all)-3):]
				if !slices.Equal(ids, want) {
					t.Errorf("night %d: results %q, want %q", night, ids, want)
				}
				for _, table := range HistoryTables {
					if got := partitions(t, files)[table]; !slices.Equal(got, want) {
						t.Errorf("night %d: history/%s %q, want %q", night, table, got, want)
					}
				}
				if string(files[ResultsDir+live+"/runs.parquet"]) != "in progress" {
					t.Fatalf("night %d: the attempt in progress was touched", night)
				}
			}
			// LATEST names an older result (another job's pointer move
			// pending, or a rollback by hand): pruning keeps it.
			put(t, b, prefix+LatestName, []byte(ResultsDir+all[3]+"/\n"))
			cfg.Keep = 1
			j, err := newJob(&cfg)
			if err != nil {
				t.Fatal(err)
			}
			j.out = mustOut(t, cfg)
			if err := j.tidyHistory(ctx, b); err != nil {
				t.Fatal(err)
			}
			if ids := historyIDs(t, st.files(t)); !slices.Equal(ids, []string{all[3], all[4]}) {
				t.Errorf("--keep 1 with LATEST on %s left %q", all[3], ids)
			}
		})
	}
}

// TestProvenance: the manifest names the attempt, host, input, commit and
// every object with its size and ETag; the Parquet files carry
// crlbatch.input and crlbatch.commit and are byte-identical across two
// attempts over the same input, whose manifests differ in attempt id.
func TestProvenance(t *testing.T) {
	t.Parallel()
	host, _ := os.Hostname()
	in := localSweep(t)
	out := filepath.Join(t.TempDir(), "out")
	cfg := localJob(in, out, nil)
	cfg.History, cfg.Commit = true, "0123abc-dirty"
	var results []string
	for range 2 {
		sum, err := Run(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		results = append(results, sum.Result)
	}
	files := dirStore(out).files(t)
	ids := historyIDs(t, files)
	if len(ids) != 2 {
		t.Fatalf("results %q", ids)
	}
	for _, id := range ids {
		var m writers.Manifest
		json.Unmarshal(files[ResultsDir+id+"/"+ManifestName], &m)
		if m.AttemptID != id || m.Host != host || m.Input != in || m.Commit != "0123abc-dirty" || m.StartedAt.IsZero() || m.FinishedAt.Before(m.StartedAt) {
			t.Errorf("manifest provenance %q %q %q %q %v %v", m.AttemptID, m.Host, m.Input, m.Commit, m.StartedAt, m.FinishedAt)
		}
		if !strings.HasPrefix(id, m.StartedAt.UTC().Format("20060102T150405Z")) {
			t.Errorf("attempt %s does not start with its start time %v", id, m.StartedAt)
		}
		for _, o := range m.Objects {
			fi, err := os.Stat(filepath.Join(in, o.Key))
			if err != nil || o.Size != fi.Size() || o.ETag != fmt.Sprintf(`"%x-%x"`, fi.ModTime().UnixNano(), fi.Size()) {
				t.Errorf("object %+v: the file is %d bytes (%v)", o, fi.Size(), err)
			}
		}
	}
	for name, a := range files {
		rest, ok := strings.CutPrefix(name, ResultsDir+ids[0]+"/")
		if !ok || rest == ManifestName {
			continue
		}
		b := files[ResultsDir+ids[1]+"/"+rest]
		if rest == "report.md" {
			// The second night's report adds what changed since the first:
			// nothing (TestNightlyReportSaysWhatChanged).
			head, changes, ok := bytes.Cut(b, []byte("\n\n## Changes since the previous result\n"))
			_, figures, _ := bytes.Cut(changes, []byte("\n## Figures\n"))
			first, firstFigures, _ := bytes.Cut(a, []byte("\n## Figures\n"))
			if !ok || !bytes.Equal(append(head, '\n'), first) || !bytes.Equal(figures, firstFigures) || !bytes.Contains(changes, []byte("No changes.")) {
				t.Errorf("the second report is not the first with a section saying nothing changed:\n%s", b)
			}
			continue
		}
		if rest == "report.html" {
			// The same page of that report.
			if heading := []byte(">Changes since the previous result</h2>"); bytes.Contains(a, heading) || !bytes.Contains(b, heading) {
				t.Errorf("report.html: only the second should hold the changes section")
			}
			continue
		}
		if !bytes.Equal(a, b) {
			t.Errorf("%s differs between two attempts over the same input", rest)
		}
		if strings.HasSuffix(rest, ".parquet") {
			rb, err := writers.ReadParquet(bytes.NewReader(a))
			if err != nil {
				t.Fatal(err)
			}
			if rb.Metadata[writers.KeyInput] != in || rb.Metadata[writers.KeyCommit] != "0123abc-dirty" {
				t.Errorf("%s: key/value metadata %v", rest, rb.Metadata)
			}
		}
	}
}

// TestLatest: the newest complete result in either layout, as a URL; an
// OUTPUT without one is a data error (exit 1).
func TestLatest(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, c := range modeCases() {
		t.Run(c.name, func(t *testing.T) {
			cfg, _ := c.job(t)
			lc := LatestConfig{Output: cfg.Output, Opener: cfg.Opener}
			var de *DataError
			if _, err := Latest(ctx, lc); !errors.As(err, &de) && c.name == "mem" {
				t.Errorf("empty OUTPUT: %v, want a data error", err)
			}
			if _, err := Run(ctx, cfg); err != nil {
				t.Fatal(err)
			}
			sep := "/"
			if c.name == "local" {
				sep = string(filepath.Separator)
			}
			got, err := Latest(ctx, lc)
			if want := strings.TrimSuffix(mustOut(t, cfg).ObjectURL(mustOut(t, cfg).Prefix), sep) + sep; err != nil || got != want {
				t.Errorf("one-off: %q, %v; want %q", got, err, want)
			}
			cfg.Output += "-nightly"
			cfg.History = true
			lc.Output = cfg.Output
			for range 2 {
				sum, err := Run(ctx, cfg)
				if err != nil {
					t.Fatal(err)
				}
				got, err := Latest(ctx, lc)
				if want := strings.TrimSuffix(sum.Result, sep) + sep; err != nil || got != want {
					t.Errorf("nightly: %q, %v; want %q", got, err, want)
				}
			}
		})
	}
}

// TestLayoutsAreNotMixed: an OUTPUT of issue 13's attempts/ layout is
// refused by both modes, a nightly OUTPUT by a one-off job and a one-off
// OUTPUT by a nightly job (usage errors), and nothing is written.
func TestLayoutsAreNotMixed(t *testing.T) {
	t.Parallel()
	in := localSweep(t)
	ctx := context.Background()
	legacy := filepath.Join(t.TempDir(), "legacy")
	write(t, filepath.Join(legacy, LatestName), "attempts/20261101T020000Z/\n")
	oneOff := filepath.Join(t.TempDir(), "one-off")
	if _, err := Run(ctx, localJob(in, oneOff, nil)); err != nil {
		t.Fatal(err)
	}
	nightly := filepath.Join(t.TempDir(), "nightly")
	cfg := localJob(in, nightly, nil)
	cfg.History = true
	if _, err := Run(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		out     string
		history bool
		want    string
	}{
		{legacy, false, "attempts/ layout"},
		{legacy, true, "attempts/ layout"},
		{nightly, false, "nightly history"},
		{oneOff, true, "one-off result"},
	} {
		before := snapshot(t, c.out)
		cfg := localJob(in, c.out, nil)
		cfg.History, cfg.Overwrite = c.history, !c.history
		_, err := Run(ctx, cfg)
		var ue *UsageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s, --history=%v: %v, want a usage error saying %q", filepath.Base(c.out), c.history, err, c.want)
		}
		if after := snapshot(t, c.out); !maps.Equal(after, before) {
			t.Errorf("%s, --history=%v: OUTPUT changed", filepath.Base(c.out), c.history)
		}
	}
}

// TestTidyKeepsAResultCompletedAfterItsListing: a nightly job's tidy lists
// another job's attempt without its manifest, and by the time it reads that
// attempt's claim the other job has written its manifest and let the claim
// go. The result is complete: tidy must not remove its files (it did,
// leaving a manifest that named missing files, under three concurrent
// --history jobs in TestConcurrentHistoryJobs).
//
// Not parallel (see TestMain): it sets testHookAfterScan, which every job in
// the process calls.
func TestTidyKeepsAResultCompletedAfterItsListing(t *testing.T) {
	for _, c := range modeCases() {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			cfg, st := c.job(t)
			cfg.History = true
			if _, err := Run(ctx, cfg); err != nil {
				t.Fatal(err)
			}
			files := st.files(t)
			first := historyIDs(t, files)[0]
			prefix := mustOut(t, cfg).Prefix
			b, closeB, _ := openBucket(ctx, cfg.Opener, mustOut(t, cfg))
			defer closeB()
			// Another job's attempt, in progress: its claim (live) and its
			// files, copies of the first result's, without the manifest.
			host, _ := os.Hostname()
			const other = "20200101T000000Z-0000000000bb"
			claim := prefix + attemptClaims + other + ".json"
			put(t, b, claim, fmt.Appendf(nil, `{"host":%q,"pid":%d,"started_at":%q,"attempt":%q}`, host, os.Getpid(), time.Now().UTC().Format(time.RFC3339), other))
			var manifest []byte
			for name, data := range files {
				rest, ok := strings.CutPrefix(name, ResultsDir+first+"/")
				if !ok {
					continue
				}
				if rest == ManifestName {
					manifest = data
					continue
				}
				put(t, b, prefix+ResultsDir+other+"/"+rest, data)
			}
			// It finishes between the tidy's listing and its reading of the
			// claim: manifest written, claim released.
			testHookAfterScan = func() {
				put(t, b, prefix+ResultsDir+other+"/"+ManifestName, manifest)
				if err := b.Delete(ctx, claim); err != nil {
					t.Error(err)
				}
			}
			defer func() { testHookAfterScan = nil }()
			if _, err := Run(ctx, cfg); err != nil {
				t.Fatal(err)
			}
			checkResult(t, st.files(t), ResultsDir+other+"/")
		})
	}
}

// TestLatestNamingNoResult: a LATEST that names no complete result (text
// written by hand, an attempt id whose result was deleted, a path that
// leaves OUTPUT) is not trusted: `latest` prints the newest complete
// result (never a storage error), and the next nightly job makes LATEST
// name it, so that diff --nights and the next report can read it again.
func TestLatestNamingNoResult(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, bad := range []string{"results/zzz/\n", "results/20991231T000000Z-000000000000/\n", "results/../../etc/\n", "results/\n"} {
		for _, c := range modeCases() {
			t.Run(c.name+"/"+strings.TrimSpace(bad), func(t *testing.T) {
				cfg, st := c.job(t)
				cfg.History = true
				sum, err := Run(ctx, cfg)
				if err != nil {
					t.Fatal(err)
				}
				first := path.Base(filepath.ToSlash(sum.Result))
				b, closeB, _ := openBucket(ctx, cfg.Opener, mustOut(t, cfg))
				defer closeB()
				put(t, b, mustOut(t, cfg).Prefix+LatestName, []byte(bad))
				lc := LatestConfig{Output: cfg.Output, Opener: cfg.Opener}
				got, err := Latest(ctx, lc)
				if err != nil || !strings.Contains(got, first) {
					t.Errorf("latest with LATEST %q: %q, %v; want the result %s", bad, got, err, first)
				}
				sum, err = Run(ctx, cfg)
				if err != nil {
					t.Fatal(err)
				}
				second := path.Base(filepath.ToSlash(sum.Result))
				if got := string(st.files(t)[LatestName]); got != ResultsDir+second+"/\n" {
					t.Errorf("after a night, LATEST %q; want it to name %s", got, second)
				}
			})
		}
	}
}

// TestOutputThroughALink: an OUTPUT that is a symbolic link to a folder is
// that folder: a nightly job lists its results through it, so LATEST is
// written and --keep prunes (the listing did not follow the link, and
// LATEST was never written, with exit 0).
func TestOutputThroughALink(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	in := localSweep(t)
	dir := t.TempDir()
	real, link := filepath.Join(dir, "real"), filepath.Join(dir, "link")
	if err := os.Mkdir(real, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	cfg := localJob(in, link, nil)
	cfg.History, cfg.Keep = true, 1
	var last string
	for range 2 {
		sum, err := Run(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		last = path.Base(filepath.ToSlash(sum.Result))
	}
	files := dirStore(real).files(t)
	if got := string(files[LatestName]); got != ResultsDir+last+"/\n" {
		t.Errorf("LATEST %q, want it to name %s", got, last)
	}
	if ids := historyIDs(t, files); !slices.Equal(ids, []string{last}) {
		t.Errorf("--keep 1 left %q", ids)
	}
}

// TestForeignLatest: a LATEST that is neither this layout's nor issue 13's
// attempts/ one (garbage, an empty file) is refused by both modes as what
// it is, not as the attempts/ layout, and nothing is written.
func TestForeignLatest(t *testing.T) {
	t.Parallel()
	in := localSweep(t)
	for _, text := range []string{"garbage\n", "", "attempts/20261101T020000Z/\n"} {
		for _, history := range []bool{false, true} {
			out := filepath.Join(t.TempDir(), "out")
			write(t, filepath.Join(out, LatestName), text)
			before := snapshot(t, out)
			cfg := localJob(in, out, nil)
			cfg.History = history
			_, err := Run(context.Background(), cfg)
			want := "was not written by crlbatch"
			if strings.HasPrefix(text, "attempts/") {
				want = "attempts/ layout"
			}
			var ue *UsageError
			if !errors.As(err, &ue) || !strings.Contains(err.Error(), want) {
				t.Errorf("LATEST %q, --history=%v: %v, want a usage error saying %q", text, history, err, want)
			}
			if after := snapshot(t, out); !maps.Equal(after, before) {
				t.Errorf("LATEST %q, --history=%v: OUTPUT changed", text, history)
			}
		}
	}
}

// TestOverwriteIgnoresNamesOfNoFile: --overwrite removes the files the
// earlier manifest lists, but never a name that is no file of the result
// (".", "..", the claim folder, LATEST): a damaged manifest listing ".."
// failed the job after the earlier result was gone.
func TestOverwriteIgnoresNamesOfNoFile(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cfg := localJob(localSweep(t), filepath.Join(t.TempDir(), "out"), nil)
	if _, err := Run(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	mpath := filepath.Join(cfg.Output, ManifestName)
	data, _ := os.ReadFile(mpath)
	var m map[string]any
	json.Unmarshal(data, &m)
	for _, name := range []string{"..", ".", ".crlbatch", "", LatestName} {
		m["outputs"] = append(m["outputs"].([]any), map[string]any{"name": name})
	}
	data, _ = json.Marshal(m)
	write(t, mpath, string(data))
	cfg.Overwrite = true
	if _, err := Run(ctx, cfg); err != nil {
		t.Fatalf("--overwrite over a manifest listing names of no file: %v", err)
	}
	checkResult(t, dirStore(cfg.Output).files(t), "")
}

// TestClaimFromTheFuture: a claim whose holder's clock ran ahead (started
// in 2099 on another host) is stale once the claim object itself is older
// than the limit, as the error message promises ("after 24h"); a recent
// one still blocks.
func TestClaimFromTheFuture(t *testing.T) {
	t.Parallel()
	claim := `{"host":"elsewhere","pid":1,"started_at":"2099-01-01T00:00:00Z","attempt":"a"}`
	for _, age := range []time.Duration{25 * time.Hour, time.Minute} {
		in := localSweep(t)
		out := filepath.Join(t.TempDir(), "out")
		p := filepath.Join(out, filepath.FromSlash(jobClaim))
		write(t, p, claim)
		then := time.Now().Add(-age)
		if err := os.Chtimes(p, then, then); err != nil {
			t.Fatal(err)
		}
		_, err := Run(context.Background(), localJob(in, out, nil))
		if stale := age > jobClaimAge; stale && err != nil {
			t.Errorf("a claim written %v ago: %v, want it taken over", age, err)
		} else if !stale && !isUsage(err) {
			t.Errorf("a claim written %v ago: %v, want a usage error", age, err)
		}
	}
}

// TestInterruptedAfterTheManifest: a nightly job interrupted once its
// manifest is written has published: its error says where the complete
// result is (a *PublishedError, still context.Canceled for the exit
// status), not that nothing was published; the next job moves LATEST.
//
// Not parallel (see TestMain): it sets testHookCommitted, which every job in
// the process calls.
func TestInterruptedAfterTheManifest(t *testing.T) {
	cfg := localJob(localSweep(t), filepath.Join(t.TempDir(), "out"), nil)
	cfg.History = true
	ctx, cancel := context.WithCancel(context.Background())
	testHookCommitted = func(string) { cancel() }
	defer func() { testHookCommitted = nil }()
	_, err := Run(ctx, cfg)
	var pe *PublishedError
	if !errors.As(err, &pe) || !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "complete under") {
		t.Fatalf("interrupted after the manifest: %v, want a *PublishedError naming the result", err)
	}
	if _, err := os.Stat(filepath.Join(filepath.FromSlash(pe.Result), ManifestName)); err != nil {
		t.Errorf("the result %s it names is not complete: %v", pe.Result, err)
	}
	testHookCommitted = nil
	if _, err := Run(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	if ids := historyIDs(t, dirStore(cfg.Output).files(t)); len(ids) != 2 || !strings.HasSuffix(strings.TrimSuffix(pe.Result, string(filepath.Separator)), ids[0]) {
		t.Errorf("results %q after the next night; the interrupted one %s", ids, pe.Result)
	}
}

// TestLatestOfAFile: `crlbatch latest FILE` is a usage error saying it is a
// file (as diff says), not "holds no complete result".
func TestLatestOfAFile(t *testing.T) {
	t.Parallel()
	f := filepath.Join(t.TempDir(), "notes.txt")
	write(t, f, "x")
	_, err := Latest(context.Background(), LatestConfig{Output: f})
	if !isUsage(err) || !strings.Contains(err.Error(), "is a file") {
		t.Errorf("latest of a file: %v, want a usage error saying it is a file", err)
	}
}

// publishAhead runs cfg (a nightly job: History set), copies its result under the
// attempt id future (a job of a machine whose clock runs ahead; the
// manifest names the new id when rewriteManifest) and points LATEST at
// the copy. It returns the first result's id and OUTPUT's bucket, open
// until the test ends.
func publishAhead(t *testing.T, cfg Config, st outStore, future string, rewriteManifest bool) (first string, b *blob.Bucket, out Location) {
	t.Helper()
	ctx := context.Background()
	sum, err := Run(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	first = path.Base(filepath.ToSlash(sum.Result))
	out = mustOut(t, cfg)
	b, closeB, err := openBucket(ctx, cfg.Opener, out)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeB() })
	for k, data := range st.files(t) {
		if rest, ok := strings.CutPrefix(k, ResultsDir+first+"/"); ok {
			if rewriteManifest && rest == ManifestName {
				data = bytes.ReplaceAll(data, []byte(first), []byte(future))
			}
			put(t, b, out.Prefix+ResultsDir+future+"/"+rest, data)
		}
	}
	put(t, b, out.Prefix+LatestName, []byte(ResultsDir+future+"/\n"))
	return first, b, out
}

// TestKeepNeverRemovesTheJobsOwnResult: --keep N counts the N newest
// complete results by attempt id; a job whose result is not among them
// (a complete result from a clock ahead of this one's, or a concurrent
// job started later that finished first, each with --keep 1) removed the
// result it had just published, printed its URL and exited 0 (branch
// breakit3). A job's own result is kept as the one LATEST names is.
func TestKeepNeverRemovesTheJobsOwnResult(t *testing.T) {
	t.Parallel()
	const future = "20991231T235959Z-000000abcdef"
	for _, c := range modeCases() {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			cfg, st := c.job(t)
			cfg.History = true
			publishAhead(t, cfg, st, future, true)
			cfg.Keep = 1
			sum, err := Run(ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			own := path.Base(filepath.ToSlash(sum.Result))
			files := st.files(t)
			checkResult(t, files, ResultsDir+own+"/")
			if ids := historyIDs(t, files); !slices.Equal(ids, []string{own, future}) {
				t.Errorf("--keep 1 behind a result from the future left %q, want this job's %s and LATEST's %s", ids, own, future)
			}
		})
	}
}
