package pipeline

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"testing"

	"gocloud.dev/blob"

	"github.com/crlbatch/crlbatch/cache"
	"github.com/crlbatch/crlbatch/internal/synth"
)

// cacheDir is where the tests' caches (mem://cache/c) keep their entries.
var cacheDir = fmt.Sprintf("c/v%d/", cache.FormatVersion)

// nightLines splits each object of the sweep into its lines (each with its
// '\n').
func nightLines(t *testing.T, b *blob.Bucket, keys []string) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for _, k := range keys {
		data, err := b.ReadAll(context.Background(), k)
		if err != nil {
			t.Fatal(err)
		}
		out[k] = strings.SplitAfter(string(data), "\n")
		if last := out[k][len(out[k])-1]; last == "" {
			out[k] = out[k][:len(out[k])-1]
		}
	}
	return out
}

// manifestReads returns how the manifest under out says each object was
// read, by key.
func manifestReads(t *testing.T, b *blob.Bucket, out string) map[string]string {
	t.Helper()
	data, err := b.ReadAll(context.Background(), out+"/manifest.json")
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Objects []struct {
			Key  string `json:"key"`
			Read string `json:"read"`
		} `json:"objects"`
	}
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	reads := map[string]string{}
	for _, o := range m.Objects {
		reads[o.Key] = o.Read
	}
	return reads
}

// sameNight checks a night scored with the cache (under warm) and without
// (under cold): files the same bytes, and the objects of keys read as the
// manifest under warm says, as want says by key, the others served from
// the cache (log: the job's with the cache, shown when they were not).
func sameNight(t *testing.T, b *blob.Bucket, keys, files []string, what, warm, cold string, want map[string]string, log string) {
	t.Helper()
	ctx := context.Background()
	for _, f := range files {
		w, err := b.ReadAll(ctx, warm+"/"+f)
		if err != nil {
			t.Fatal(err)
		}
		c, err := b.ReadAll(ctx, cold+"/"+f)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(w, c) {
			t.Errorf("%s: %s differs from a job without a cache", what, f)
		}
	}
	wantReads := map[string]string{}
	for _, k := range keys {
		wantReads[strings.TrimPrefix(k, "sweep/")] = ReadCache
	}
	for k, r := range want {
		wantReads[strings.TrimPrefix(k, "sweep/")] = r
	}
	if reads := manifestReads(t, b, warm); !maps.Equal(reads, wantReads) {
		t.Errorf("%s: objects read %v, want %v\n%s", what, reads, wantReads, log)
	}
}

// TestAppendedObjects: night after night a sweep's logs grow by appended
// lines (and sometimes change otherwise). With --cache, an object that
// grew from the bytes of its entry has only its new lines decoded
// ("appended" in the manifest); one whose earlier bytes changed, that
// shrank, whose entry is damaged, or whose earlier bytes did not end with
// a line end is decoded whole; every night's results are byte for byte
// those of a job without a cache, and a failing night fails with the
// same error.
func TestAppendedObjects(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	op := &memOpener{}
	b, keys := synthSweep(t, op)
	full := nightLines(t, b, keys)
	// content holds each object's lines as they stand.
	content := map[string][]string{}
	write := func(k string, ls []string) {
		t.Helper()
		content[k] = ls
		if err := b.WriteAll(ctx, k, []byte(strings.Join(ls, "")), nil); err != nil {
			t.Fatal(err)
		}
	}
	grow := func(k string, more ...string) { write(k, append(slices.Clone(content[k]), more...)) }
	// The first night the logs hold 60 % of their lines; the last one
	// ends mid-line (its writer was flushing).
	for _, k := range keys {
		write(k, full[k][:len(full[k])*6/10])
	}
	last := keys[len(keys)-1]
	ls := slices.Clone(content[last])
	ls[len(ls)-1] = strings.TrimSuffix(ls[len(ls)-1], "\n")
	write(last, ls)
	next := func(k string, n int) []string {
		have := len(content[k])
		return full[k][have:min(have+n, len(full[k]))]
	}

	cacheURL := "mem://cache/c"
	night := 0
	var log bytes.Buffer
	score := func(name string, c string, maxBad int) (string, error) {
		t.Helper()
		out := fmt.Sprintf("mem://lab/%s-%d", name, night)
		cfg := memJob(t, op, "mem://lab/sweep", out)
		cfg.Concurrency, cfg.chunkBytes, cfg.Cache, cfg.MaxBadRows = 2, 700, c, maxBad
		cfg.appendedMinBytes = 1 // the sweep's objects are smaller than AppendedMinBytes
		log.Reset()
		cfg.Logger = slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelInfo}))
		_, err := Run(ctx, cfg)
		return strings.TrimPrefix(out, "mem://lab/"), err
	}
	files := []string{"runs.parquet", "intervals.parquet", "run_summary.parquet", "families.parquet", "curves.parquet", "report.md"}
	// check scores the sweep with the cache and without: the same results
	// (or the same error), and the objects read as want says, the others
	// served from the cache. It returns the log of the job with the cache.
	check := func(what string, want map[string]string, maxBad int) string {
		t.Helper()
		night++
		warm, werr := score("warm", cacheURL, maxBad)
		warmLog := log.String()
		cold, cerr := score("cold", "", maxBad)
		if (werr == nil) != (cerr == nil) || werr != nil && werr.Error() != cerr.Error() {
			t.Fatalf("%s: error %v, without a cache %v", what, werr, cerr)
		}
		if werr != nil {
			return warmLog
		}
		sameNight(t, b, keys, files, what, warm, cold, want, warmLog)
		return warmLog
	}
	if _, err := score("first", cacheURL, 0); err != nil {
		t.Fatal(err)
	}
	// Lines appended to two objects: those decoded from their earlier
	// bytes on. The last object's earlier bytes ended mid-line: it has no
	// tails entry and is decoded whole.
	grow(keys[0], next(keys[0], 40)...)
	grow(keys[2], next(keys[2], 25)...)
	write(last, full[last][:len(content[last])+10])
	l := check("appended", map[string]string{keys[0]: ReadAppended, keys[2]: ReadAppended, last: ReadDecoded}, 0)
	if !strings.Contains(l, "decoding the lines after its cached bytes") || !strings.Contains(l, "decoding in chunks") {
		t.Errorf("appended: the log does not say the new lines were decoded, in chunks:\n%s", l)
	}
	// Again, from the entries the last night wrote: the last object too,
	// its bytes now ending with a line end.
	grow(keys[0], next(keys[0], 1)...)
	grow(last, next(last, 30)...)
	check("appended again", map[string]string{keys[0]: ReadAppended, last: ReadAppended}, 0)
	// A new run, with two labels, in the lines appended: it comes last,
	// as it does when the whole object is decoded.
	grow(keys[1], `{"run_id":"late","seed":9,"algorithm_id":"late","reward":0.5,"regime_id":"calm"}`+"\n",
		`{"run_id":"late","seed":9,"algorithm_id":"late","reward":0.25,"regime_id":"storm"}`+"\n")
	check("a new run appended", map[string]string{keys[1]: ReadAppended}, 0)
	// The same bytes written again (a new modification time): its earlier
	// entry serves it, nothing is decoded.
	write(keys[2], content[keys[2]])
	check("the same bytes written again", map[string]string{keys[2]: ReadAppended}, 0)
	// An earlier line changed, and lines appended: decoded whole.
	changed := slices.Clone(content[keys[0]])
	changed[3] = strings.Replace(changed[3], `"reward":`, `"x":1,"reward":`, 1)
	write(keys[0], append(changed, next(keys[0], 5)...))
	check("an earlier line changed", map[string]string{keys[0]: ReadDecoded}, 0)
	// Shorter than before: decoded whole.
	write(keys[2], content[keys[2]][:len(content[keys[2]])-3])
	check("shrunk", map[string]string{keys[2]: ReadDecoded}, 0)
	// A bad line appended: the same bad row skipped and named under
	// --max-bad-rows (the object, with a bad row, gets no entry)...
	before := slices.Clone(content[keys[1]])
	grow(keys[1], "{not json\n", `{"run_id":"late","seed":9,"algorithm_id":"late","reward":1,"regime_id":"calm"}`+"\n")
	check("a bad row appended", map[string]string{keys[1]: ReadAppended}, 5)
	// ... and without it the same error at the same line, the first
	// object's in key order; an error in another object's new lines too.
	grow(keys[2], `{"reward":"x","regime_id":"calm"}`+"\n")
	check("errors appended", nil, 0)
	// The bad lines gone: the first from the entry the bad row's night
	// left, the other the bytes of its entry again.
	write(keys[1], append(before, `{"run_id":"late","seed":9,"algorithm_id":"late","reward":1,"regime_id":"calm"}`+"\n"))
	write(keys[2], content[keys[2]][:len(content[keys[2]])-1])
	check("the bad lines gone", map[string]string{keys[1]: ReadAppended, keys[2]: ReadAppended}, 0)
	// The entries of objects damaged: the one that grew is decoded whole,
	// with a warning; the others are served by their runs' entries.
	cb, _, _ := op.open(ctx, "mem://cache")
	damaged := 0
	for _, k := range listKeys(t, cb, "") {
		if parts := strings.Split(k, "/"); len(parts) != 4 || len(parts[2]) != 2 || !strings.HasSuffix(k, ".crlc") {
			continue // an object's entry: cacheDir + <two hex digits>/<key>.crlc
		}
		data, err := cb.ReadAll(ctx, k)
		if err != nil {
			t.Fatal(err)
		}
		data[len(data)/2] ^= 0x40
		if err := cb.WriteAll(ctx, k, data, nil); err != nil {
			t.Fatal(err)
		}
		damaged++
	}
	if damaged < len(keys) {
		t.Fatalf("%d object entries damaged", damaged)
	}
	grow(keys[2], next(keys[2], 3)...)
	l = check("entries damaged", map[string]string{keys[2]: ReadDecoded}, 0)
	if !strings.Contains(l, `"cache entry not trusted: the object is decoded whole and the entry rebuilt" object=mem://lab/`+keys[2]) {
		t.Errorf("entries damaged: no warning naming %s:\n%s", keys[2], l)
	}
}

// TestAppendedMiddleChanged: an object larger than the head the first
// check hashes, changed past it (a line rewritten in place, the same
// length) and appended to, passes the first check and is turned away by
// the hash of all its earlier bytes: decoded whole, the results those of a
// job without a cache.
func TestAppendedMiddleChanged(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	op := &memOpener{}
	b, _, _ := op.open(ctx, "mem://lab")
	if _, err := synth.Write(ctx, b, "sweep/", synth.Config{Seeds: 1, Steps: 1500, Seed: 4, Extras: true}); err != nil {
		t.Fatal(err)
	}
	keys := listKeys(t, b, "sweep/")
	full := nightLines(t, b, keys)
	k := keys[0]
	for _, key := range keys {
		if len(full[key]) > len(full[k]) {
			k = key
		}
	}
	early := full[k][:len(full[k])-100]
	if n := len(strings.Join(early, "")); n < 4*headBytes {
		t.Fatalf("the object's earlier bytes are %d bytes, want more than the head and some", n)
	}
	if err := b.WriteAll(ctx, k, []byte(strings.Join(early, "")), nil); err != nil {
		t.Fatal(err)
	}
	scoreSweep(t, op, "first", "mem://cache/c")
	// A digit of a reward half-way changed for another: the same length.
	mid := slices.Clone(early)
	i := len(mid) / 2
	j := strings.Index(mid[i], `"reward":`) + len(`"reward":`) + 3
	d := mid[i][j]
	if d < '0' || d > '9' {
		t.Fatalf("line %d: %q at the reward's fourth character", i+1, d)
	}
	mid[i] = mid[i][:j] + string('0'+(d-'0'+1)%10) + mid[i][j+1:]
	if err := b.WriteAll(ctx, k, []byte(strings.Join(append(mid, full[k][len(early):]...), "")), nil); err != nil {
		t.Fatal(err)
	}
	decodedWhole(t, op, b, k, "runs.parquet", "intervals.parquet", "families.parquet", "report.md")
}

// halfSweep is a synthetic sweep (synthSweep) whose objects hold the first
// half of their lines, as on a night the logs are still growing; full
// holds each object's lines, by key.
func halfSweep(t *testing.T) (op *memOpener, b *blob.Bucket, keys []string, full map[string][]string) {
	t.Helper()
	op = &memOpener{}
	b, keys = synthSweep(t, op)
	full = nightLines(t, b, keys)
	for _, k := range keys {
		if err := b.WriteAll(context.Background(), k, []byte(strings.Join(full[k][:len(full[k])/2], "")), nil); err != nil {
			t.Fatal(err)
		}
	}
	return op, b, keys, full
}

// TestAppendedSmallObjects: an object smaller than AppendedMinBytes keeps
// no tails entry, and grown it is decoded whole, with the results of a job
// without a cache.
func TestAppendedSmallObjects(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	op, b, keys, full := halfSweep(t)
	for _, k := range keys {
		if n := len(strings.Join(full[k], "")); n >= AppendedMinBytes {
			t.Fatalf("%s: %d bytes, want fewer than AppendedMinBytes", k, n)
		}
	}
	scoreSweep(t, op, "first", "mem://cache/c")
	cb, _, _ := op.open(ctx, "mem://cache")
	for _, k := range listKeys(t, cb, "") {
		if strings.Contains(k, "/"+tailsKind+"/") {
			t.Errorf("a tails entry for objects under AppendedMinBytes: %s", k)
		}
	}
	if err := b.WriteAll(ctx, keys[0], []byte(strings.Join(full[keys[0]], "")), nil); err != nil {
		t.Fatal(err)
	}
	decodedWhole(t, op, b, keys[0], "runs.parquet", "families.parquet", "report.md")
}

// scoreSweep scores mem://lab/sweep into mem://lab/out at --concurrency 2,
// with the cache c ("" for none).
func scoreSweep(t *testing.T, op *memOpener, out, c string) {
	t.Helper()
	cfg := memJob(t, op, "mem://lab/sweep", "mem://lab/"+out)
	cfg.Concurrency, cfg.Cache = 2, c
	if _, err := Run(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
}

// decodedWhole scores the sweep again with the cache mem://cache/c
// ("warm") and without one ("cold"), and wants the object key read
// decoded by the warm job and its files equal to the cold job's.
func decodedWhole(t *testing.T, op *memOpener, b *blob.Bucket, key string, files ...string) {
	t.Helper()
	scoreSweep(t, op, "warm", "mem://cache/c")
	scoreSweep(t, op, "cold", "")
	if r := manifestReads(t, b, "warm")[strings.TrimPrefix(key, "sweep/")]; r != ReadDecoded {
		t.Errorf("the object that grew read %q, want decoded", r)
	}
	ctx := context.Background()
	for _, f := range files {
		w, _ := b.ReadAll(ctx, "warm/"+f)
		c, _ := b.ReadAll(ctx, "cold/"+f)
		if len(w) == 0 || !bytes.Equal(w, c) {
			t.Errorf("%s differs from a job without a cache", f)
		}
	}
}

// TestTailsReadBeside: the objects no index names have their tails
// entries read while their own entries are looked up (lookupCache,
// tailsBeside). With the indexes gone and every tails entry damaged, the
// objects whose own entries are found are served by them with nothing
// warned about; an object that then grew is decoded whole and its tails
// entry warned about once. Each night's results are those of a job
// without a cache.
func TestTailsReadBeside(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	op, b, keys, full := halfSweep(t)
	night := 0
	score := func(c string) (string, string) {
		t.Helper()
		night++
		out := fmt.Sprintf("mem://lab/out-%d-%t", night, c != "")
		cfg := memJob(t, op, "mem://lab/sweep", out)
		cfg.Concurrency, cfg.Cache = 2, c
		cfg.appendedMinBytes = 1
		var log bytes.Buffer
		cfg.Logger = slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelInfo}))
		if _, err := Run(ctx, cfg); err != nil {
			t.Fatal(err)
		}
		return strings.TrimPrefix(out, "mem://lab/"), log.String()
	}
	check := func(what string, want map[string]string) string {
		t.Helper()
		warm, l := score("mem://cache/c")
		cold, _ := score("")
		sameNight(t, b, keys, []string{"runs.parquet", "run_summary.parquet", "families.parquet", "curves.parquet", "report.md"}, what, warm, cold, want, l)
		return l
	}
	all := map[string]string{}
	for _, k := range keys {
		all[k] = ReadDecoded
	}
	check("cold", all)
	cb, _, _ := op.open(ctx, "mem://cache")
	tails := 0
	for _, k := range listKeys(t, cb, "") {
		switch {
		case strings.HasPrefix(k, cacheDir+"index/"):
			if err := cb.Delete(ctx, k); err != nil {
				t.Fatal(err)
			}
		case strings.HasPrefix(k, cacheDir+"tails/"):
			if err := cb.WriteAll(ctx, k, []byte("not an entry"), nil); err != nil {
				t.Fatal(err)
			}
			tails++
		}
	}
	if tails != len(keys) {
		t.Fatalf("%d tails entries damaged, want %d", tails, len(keys))
	}
	if l := check("no index, tails damaged", nil); strings.Contains(l, "earlier bytes") {
		t.Errorf("a warning about a tails entry not used:\n%s", l)
	}
	grown := keys[0]
	if err := b.WriteAll(ctx, grown, []byte(strings.Join(full[grown][:len(full[grown])/2+5], "")), nil); err != nil {
		t.Fatal(err)
	}
	if l := check("one grew", map[string]string{grown: ReadDecoded}); strings.Count(l, "object's earlier bytes") != 1 {
		t.Errorf("want one warning about the grown object's tails entry:\n%s", l)
	}
}

// TestEntryStoredMeanwhile: an object's entry that this job's lookup did
// not find, whose tails entry names it, was stored meanwhile by another
// job (which writes an entry before its tails entry): it is read again
// and serves the object, which is not decoded. Here the entries are taken
// away before the job and put back once its lookups are done; the tails
// entries are kept for these small objects (appendedMinBytes).
func TestEntryStoredMeanwhile(t *testing.T) {
	ctx := context.Background()
	op, b, keys, _ := halfSweep(t)
	score := func(out, c string) string {
		t.Helper()
		cfg := memJob(t, op, "mem://lab/sweep", "mem://lab/"+out)
		cfg.Concurrency, cfg.Cache, cfg.appendedMinBytes = 2, c, 1
		if _, err := Run(ctx, cfg); err != nil {
			t.Fatal(err)
		}
		return out
	}
	score("first", "mem://cache/c")
	cb, _, _ := op.open(ctx, "mem://cache")
	held := map[string][]byte{}
	tails := 0
	for _, k := range listKeys(t, cb, "") {
		parts := strings.Split(k, "/")
		switch {
		case strings.HasPrefix(k, cacheDir+"index/"):
			if err := cb.Delete(ctx, k); err != nil {
				t.Fatal(err)
			}
		case strings.HasPrefix(k, cacheDir+"tails/"):
			tails++
		case len(parts) == 4 && len(parts[2]) == 2: // an object's entry
			data, err := cb.ReadAll(ctx, k)
			if err != nil {
				t.Fatal(err)
			}
			held[k] = data
			if err := cb.Delete(ctx, k); err != nil {
				t.Fatal(err)
			}
		}
	}
	if len(held) != len(keys) || tails != len(keys) {
		t.Fatalf("%d object entries and %d tails entries, want %d of each", len(held), tails, len(keys))
	}
	testHookLookedUp = func() {
		for k, data := range held {
			if err := cb.WriteAll(ctx, k, data, nil); err != nil {
				t.Error(err)
			}
		}
	}
	out := score("meanwhile", "mem://cache/c")
	testHookLookedUp = nil
	for k, r := range manifestReads(t, b, out) {
		if r != ReadCache {
			t.Errorf("%s read %q, want it served by the entry stored meanwhile", k, r)
		}
	}
	sameNight(t, b, keys, []string{"runs.parquet", "families.parquet", "report.md"}, "meanwhile", out, score("none", ""), nil, "")
}
