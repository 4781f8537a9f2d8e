package integration

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"gocloud.dev/blob"

	"github.com/crlbatch/crlbatch/pipeline"
	"github.com/crlbatch/crlbatch/scoring/protocoltest"
)

// The incomplete S3 multipart uploads a killed job leaves under OUTPUT
// (an output file over 16 MiB is uploaded in parts): the next job that
// tidies OUTPUT aborts those of provably dead jobs, with the proofs it
// uses for files, and leaves every other.

// attemptClaim writes the claim of a nightly attempt under out (a prefix
// of outBucket, no trailing slash) as crlbatch writes it: held by pid on
// this host, started at started.
func attemptClaim(t *testing.T, b *blob.Bucket, out, id string, pid int, started time.Time) {
	t.Helper()
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	data, _ := json.Marshal(map[string]any{"host": host, "pid": pid, "started_at": started, "attempt": id})
	putObject(t, b, out+"/.crlbatch/attempts/"+id+".json", data)
}

func putObject(t *testing.T, b *blob.Bucket, key string, data []byte) {
	t.Helper()
	if err := b.WriteAll(context.Background(), key, data, nil); err != nil {
		t.Fatalf("writing %s: %v", key, err)
	}
}

// deadPID is the pid of a process of this host that has exited.
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid
}

// historyPart is the history partition key of table of attempt id.
func historyPart(table, id string) string {
	return "history/" + table + "/night=" + id[:4] + "-" + id[4:6] + "-" + id[6:8] + "/attempt=" + id + "/part.parquet"
}

// latestAttempt reads out/LATEST's attempt id.
func latestAttempt(t *testing.T, b *blob.Bucket, out string) string {
	t.Helper()
	data, err := b.ReadAll(context.Background(), out+"/LATEST")
	if err != nil {
		t.Fatalf("reading LATEST: %v", err)
	}
	return strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(string(data)), "results/"), "/")
}

// uploadsUnder lists the incomplete uploads whose keys start with prefix.
func uploadsUnder(t *testing.T, c *cloud, prefix string) []mpu {
	t.Helper()
	var ups []mpu
	for _, u := range listUploads(t, s3Client(t, c.url(outBucket, "")), outBucket) {
		if strings.HasPrefix(u.key, prefix) {
			ups = append(ups, u)
		}
	}
	return ups
}

// checkUploads reports the uploads of gone that are still there and those
// of kept that are not.
func checkUploads(t *testing.T, c *cloud, prefix, when string, gone, kept []mpu) {
	t.Helper()
	left := uploadsUnder(t, c, prefix)
	for _, u := range gone {
		if slices.Contains(left, u) {
			t.Errorf("%s: the upload of %s is still there", when, u.key)
		}
	}
	for _, u := range kept {
		if !slices.Contains(left, u) {
			t.Errorf("%s: the upload of %s was aborted: it is not a provably dead job's", when, u.key)
		}
	}
}

// sameTables checks that the Parquet files of a nightly result (in dir,
// names) are those of the same input scored one-off (ref): its report
// also says what changed since the night before.
func sameTables(t *testing.T, ref, dir string, names []string) {
	t.Helper()
	n := 0
	for _, name := range names {
		if !strings.HasSuffix(name, ".parquet") {
			continue
		}
		n++
		want, err := os.ReadFile(filepath.Join(ref, name))
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from the one-off result's", name)
		}
	}
	if n == 0 {
		t.Errorf("no Parquet file in the result: %v", names)
	}
}

// warnedOf reports whether a line of stderr is a warning holding msg and
// names.
func warnedOf(stderr, msg, names string) bool {
	for _, l := range strings.Split(stderr, "\n") {
		if strings.Contains(l, "level=WARN") && strings.Contains(l, msg) && strings.Contains(l, names) {
			return true
		}
	}
	return false
}

// refusingUploadListings makes the proxy answer every
// ListMultipartUploads with a 500 (a role without the permission gets a
// 403, handled alike).
func refusingUploadListings(req *Request) Fault {
	if req.Method == http.MethodGet && req.Key == "" && req.Query.Has("uploads") {
		return InternalError
	}
	return Pass
}

// TestS3NightlyOutputIncompleteUploads: uploads (made with the SDK as a
// kill leaves them: created, a part, never completed) of attempts of a
// nightly OUTPUT. The next nightly job aborts those of attempts whose
// claim's holder is dead (process gone on this host), whether the attempt
// has files or none yet (killed during its first upload), under results/
// and of its history partitions, and those initiated over a day ago
// whatever their claim; it leaves those of an attempt whose claim's holder
// is alive, a young one of a complete attempt's partition (a tidying job
// may be writing it), and keys crlbatch does not write. A store that
// refuses to list uploads costs one warning naming OUTPUT, and the job
// publishes as ever; the claim it removed no longer proves the upload
// dead, and the upload is aborted once it is a day old.
func TestS3NightlyOutputIncompleteUploads(t *testing.T) {
	f := getFixture(t)
	c := getCloud(t, "s3")
	ctx := context.Background()
	const out = "s3outup-nightly"
	outURL := c.url(outBucket, out)
	in := filepath.Join(f.sweep, filepath.FromSlash(singleKey))
	b, err := blob.OpenBucket(ctx, c.url(outBucket, ""))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	client := s3Client(t, c.url(outBucket, ""))
	mk := func(key string, n int) mpu { return makeUpload(t, client, outBucket, out+"/"+key, n) }

	if r := f.score(ctx, nil, in, outURL, "--history"); r.code != 0 {
		t.Fatalf("first nightly job: %s", r)
	}
	first := latestAttempt(t, b, out)

	const (
		deadID    = "20261203T020000Z-000001aaaaaa" // killed while uploading, files written
		deadNewID = "20261203T020100Z-000002bbbbbb" // killed during its first upload: no file
		liveID    = "20261203T020200Z-000003cccccc" // in progress
		liveNewID = "20261203T020300Z-000004dddddd" // in progress, no file yet
	)
	now := time.Now()
	attemptClaim(t, b, out, deadID, deadPID(t), now.Add(-time.Hour))
	attemptClaim(t, b, out, deadNewID, deadPID(t), now.Add(-time.Hour))
	attemptClaim(t, b, out, liveID, os.Getpid(), now)
	attemptClaim(t, b, out, liveNewID, os.Getpid(), now)
	putObject(t, b, out+"/results/"+deadID+"/families.parquet", []byte("partial"))
	putObject(t, b, out+"/results/"+liveID+"/families.parquet", []byte("partial"))
	dead := []mpu{
		mk("results/"+deadID+"/runs.parquet", 1000),
		mk("results/"+deadID+"/curves.parquet", 0),
		mk(historyPart("families", deadID), 100),
		mk("results/"+deadNewID+"/runs.parquet", 1000),
	}
	aged := mk(historyPart("run_summary", first), 10) // a tidying job killed a day ago
	kept := []mpu{
		mk("results/"+liveID+"/runs.parquet", 1000),
		mk(historyPart("families", liveID), 100),
		mk("results/"+liveNewID+"/runs.parquet", 1000),
		mk(historyPart("families", first), 100), // young: a tidying job's, maybe under way
		mk("results/notes.txt", 10),
		mk("notes/big.bin", 10),
		mk("history/families/night=2026-12-03/attempt="+deadID+"/other.bin", 10),
		mk("runs.parquet", 10), // a nightly OUTPUT's top: not a nightly job's key
	}
	outside := makeUpload(t, client, outBucket, "s3outup-other/results/"+deadID+"/runs.parquet", 10)
	ageUpload(t, c, outBucket, aged, now.Add(-25*time.Hour))

	r := f.score(ctx, nil, in, outURL, "--history")
	if r.code != 0 {
		t.Fatalf("second nightly job: %s", r)
	}
	if !strings.Contains(r.stderr, "aborted the incomplete multipart uploads killed jobs left") || !strings.Contains(r.stderr, "uploads=5") ||
		strings.Contains(r.stderr, "could not tidy the incomplete") || strings.Contains(r.stderr, S3SecretKey) {
		t.Errorf("second nightly job: want a warning that it aborted 5 uploads:\n%s", r.stderr)
	}
	checkUploads(t, c, out+"/", "after the second nightly job", append(dead, aged), kept)
	checkUploads(t, c, "s3outup-other/", "after the second nightly job", nil, []mpu{outside})
	keys := outputKeys(t, c, out)
	for _, want := range []string{"results/" + liveID + "/families.parquet", ".crlbatch/attempts/" + liveID + ".json"} {
		if !slices.Contains(keys, out+"/"+want) {
			t.Errorf("the live attempt's %s is gone", want)
		}
	}
	for _, gone := range []string{"results/" + deadID + "/families.parquet", ".crlbatch/attempts/" + deadID + ".json", ".crlbatch/attempts/" + deadNewID + ".json"} {
		if slices.Contains(keys, out+"/"+gone) {
			t.Errorf("the dead attempt's %s is still there", gone)
		}
	}

	// Uploads cannot be listed: one warning naming OUTPUT, a published
	// result, the dead attempt's upload left (and its claim removed).
	const deadID3 = "20261203T020400Z-000005eeeeee"
	attemptClaim(t, b, out, deadID3, deadPID(t), now.Add(-time.Hour))
	dead3 := mk("results/"+deadID3+"/runs.parquet", 1000)
	c.proxy.SetPolicy(refusingUploadListings)
	r = f.score(ctx, nil, in, outURL, "--history")
	c.proxy.SetPolicy(nil)
	if r.code != 0 {
		t.Fatalf("nightly job when uploads cannot be listed: %s", r)
	}
	if n := strings.Count(r.stderr, "could not tidy the incomplete multipart uploads"); n != 1 || !warnedOf(r.stderr, "could not tidy the incomplete", "s3://"+outBucket+"/"+out+"?") ||
		strings.Contains(r.stderr, S3SecretKey) || strings.Contains(r.stderr, "aborted the incomplete") {
		t.Errorf("nightly job when uploads cannot be listed: want one warning naming OUTPUT, got %d:\n%s", n, r.stderr)
	}
	third := latestAttempt(t, b, out)
	if third <= first {
		t.Errorf("LATEST names %s after the third job, not a newer result than %s", third, first)
	}
	dir, names := download(t, c, out+"/results/"+third)
	sameTables(t, f.refSingle, dir, names)
	checkUploads(t, c, out+"/", "after the job that could not list uploads", nil, append([]mpu{dead3}, kept...))

	// A day later the upload is aborted on its age alone.
	ageUpload(t, c, outBucket, dead3, now.Add(-25*time.Hour))
	r = f.score(ctx, nil, in, outURL, "--history")
	if r.code != 0 || !strings.Contains(r.stderr, "uploads=1") {
		t.Fatalf("nightly job after a day: want one upload aborted: %s", r)
	}
	checkUploads(t, c, out+"/", "a day later", []mpu{dead3}, kept)

	for _, u := range append(kept, outside) {
		abortUpload(t, client, outBucket, u)
	}
}

// TestS3OneOffOutputIncompleteUploads: a one-off job, which holds OUTPUT's
// claim before it writes, aborts the uploads of OUTPUT's result files at
// its top (a killed one-off job's: only the claim's holder writes there),
// and leaves those of keys crlbatch does not write there, and those under
// OUTPUT's folders. A store that refuses to list uploads costs one warning
// naming OUTPUT; the result is published as ever.
func TestS3OneOffOutputIncompleteUploads(t *testing.T) {
	f := getFixture(t)
	c := getCloud(t, "s3")
	ctx := context.Background()
	const out = "s3outup-oneoff"
	outURL := c.url(outBucket, out)
	in := filepath.Join(f.sweep, filepath.FromSlash(singleKey))
	client := s3Client(t, c.url(outBucket, ""))
	mk := func(key string, n int) mpu { return makeUpload(t, client, outBucket, out+"/"+key, n) }

	killed := []mpu{mk("runs.parquet", 1000), mk("curves.parquet", 0), mk("manifest.json", 10)}
	kept := []mpu{
		mk("notes.bin", 10),
		mk("mine.parquet", 10), // a user's own table, not a name crlbatch writes
		mk("sub/runs.parquet", 10),
		mk("LATEST", 10),
		mk(".crlbatch/job.json", 10),
	}
	r := f.score(ctx, nil, in, outURL)
	if r.code != 0 {
		t.Fatalf("one-off job: %s", r)
	}
	if !strings.Contains(r.stderr, "aborted the incomplete multipart uploads killed jobs left") || !strings.Contains(r.stderr, "uploads=3") || strings.Contains(r.stderr, S3SecretKey) {
		t.Errorf("one-off job: want a warning that it aborted 3 uploads:\n%s", r.stderr)
	}
	checkUploads(t, c, out+"/", "after the one-off job", killed, kept)
	dir, _ := download(t, c, out)
	protocoltest.SameOutputs(t, f.refSingle, dir)

	// Uploads cannot be listed.
	again := mk("runs.parquet", 1000)
	c.proxy.SetPolicy(refusingUploadListings)
	r = f.score(ctx, nil, in, outURL, "--overwrite")
	c.proxy.SetPolicy(nil)
	if r.code != 0 {
		t.Fatalf("one-off job when uploads cannot be listed: %s", r)
	}
	if n := strings.Count(r.stderr, "could not tidy the incomplete multipart uploads"); n != 1 || !warnedOf(r.stderr, "could not tidy the incomplete", "s3://"+outBucket+"/"+out+"?") || strings.Contains(r.stderr, S3SecretKey) {
		t.Errorf("one-off job when uploads cannot be listed: want one warning naming OUTPUT, got %d:\n%s", n, r.stderr)
	}
	dir, _ = download(t, c, out)
	protocoltest.SameOutputs(t, f.refSingle, dir)
	checkUploads(t, c, out+"/", "after the job that could not list uploads", nil, append([]mpu{again}, kept...))

	for _, u := range append(kept, again) {
		abortUpload(t, client, outBucket, u)
	}
}

// TestS3ConvertIncompleteUploads: `crlbatch convert --out s3://…` holds
// OUTPUT's claim, and before it writes aborts the incomplete multipart
// uploads of the keys it is about to write (a killed convert's), with a
// warning; uploads of other keys (a user's own table, a name this convert
// does not write, the claim's) are left. Its objects are the local
// convert's.
func TestS3ConvertIncompleteUploads(t *testing.T) {
	f := getFixture(t)
	c := getCloud(t, "s3")
	ctx := context.Background()
	const out = "s3outup-convert"
	client := s3Client(t, c.url(outBucket, ""))
	mk := func(key string, n int) mpu { return makeUpload(t, client, outBucket, out+"/"+key, n) }
	in := filepath.Join(f.sweep, inPrefix)
	var killed []mpu
	for _, k := range f.objects[:2] {
		killed = append(killed, mk(pipeline.ConvertedKey(k), 1000))
	}
	kept := []mpu{mk("mine.parquet", 10), mk("sub/other.parquet", 10), mk(".crlbatch/job.json", 10)}
	r := f.crl(ctx, nil, nil, "convert", in, "--out", c.url(outBucket, out))
	if r.code != 0 {
		t.Fatalf("convert: %s", r)
	}
	if !strings.Contains(r.stderr, "aborted the incomplete multipart uploads killed jobs left") || !strings.Contains(r.stderr, "uploads=2") || strings.Contains(r.stderr, S3SecretKey) {
		t.Errorf("convert: want a warning that it aborted 2 uploads:\n%s", r.stderr)
	}
	checkUploads(t, c, out+"/", "after the convert", killed, kept)
	local := filepath.Join(t.TempDir(), "pq")
	if r := f.crl(ctx, nil, nil, "convert", in, "--out", local); r.code != 0 {
		t.Fatalf("local convert: %s", r)
	}
	b, err := blob.OpenBucket(ctx, c.url(outBucket, ""))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	for _, k := range f.objects {
		key := pipeline.ConvertedKey(k)
		want, err := os.ReadFile(filepath.Join(local, filepath.FromSlash(key)))
		if err != nil {
			t.Fatal(err)
		}
		if got, err := b.ReadAll(ctx, out+"/"+key); err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s: %v, or not the local convert's bytes", key, err)
		}
	}
	for _, u := range kept {
		abortUpload(t, client, outBucket, u)
	}
}

// TestS3NightlyKilledWhileUploadingOutput is the real thing: `score
// --history --out s3://…` killed -9 while it uploads an output file over
// 16 MiB in parts (at its second UploadPart, seen by the proxy), which
// leaves an incomplete multipart upload and the attempt's claim; the next
// nightly job publishes as ever and leaves no incomplete upload under
// OUTPUT.
func TestS3NightlyKilledWhileUploadingOutput(t *testing.T) {
	f := getFixture(t)
	c := getCloud(t, "s3")
	ctx := context.Background()
	tmp := t.TempDir()
	in := filepath.Join(tmp, "in")
	writeBigMetaRuns(t, filepath.Join(in, "r.jsonl"), 2000, 20480)
	ref := filepath.Join(tmp, "ref")
	if r := f.score(ctx, nil, in, ref); r.code != 0 {
		t.Fatalf("one-off reference: %s", r)
	} else {
		t.Logf("one-off reference scored in %v", r.elapsed.Round(time.Millisecond))
	}
	ents, err := os.ReadDir(ref)
	if err != nil {
		t.Fatal(err)
	}
	var big, all []string
	for _, e := range ents {
		fi, err := e.Info()
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, fmt.Sprintf("%s (%d bytes)", e.Name(), fi.Size()))
		if fi.Size() > 16<<20 {
			big = append(big, all[len(all)-1])
		}
	}
	if len(big) == 0 {
		t.Fatalf("no output file over 16 MiB: the job would not upload in parts: %v", all)
	}
	t.Logf("uploaded in parts: %v", big)

	var out string
	var killed []mpu
	for attempt := 1; attempt <= 3 && len(killed) == 0; attempt++ {
		out = fmt.Sprintf("s3outup-kill-%d", attempt)
		var proc atomic.Pointer[os.Process]
		parts := 0
		c.proxy.SetPolicy(func(req *Request) Fault {
			if req.Method == http.MethodPut && req.Query.Has("uploadId") && strings.HasPrefix(req.Key, out+"/") {
				if parts++; parts == 2 {
					if p := proc.Load(); p != nil {
						p.Kill()
					}
				}
			}
			return Pass
		})
		args := append([]string{"score", in, "--out", c.url(outBucket, out), "--quiet", "--history"}, scoreFlags...)
		r := f.crl(ctx, nil, func(p *os.Process) { proc.Store(p) }, args...)
		c.proxy.SetPolicy(nil)
		t.Logf("attempt %d: exit %d after %v", attempt, r.code, r.elapsed.Round(time.Millisecond))
		if r.code != -1 {
			t.Logf("attempt %d: the job was not killed (%d parts uploaded): %s", attempt, parts, r)
		}
		killed = uploadsUnder(t, c, out+"/")
	}
	if len(killed) == 0 {
		t.Fatal("in 3 attempts no kill left an incomplete multipart upload under OUTPUT")
	}
	for _, u := range killed {
		if !strings.HasPrefix(u.key, out+"/results/") {
			t.Errorf("the kill left an upload of %s: not a result file's", u.key)
		}
	}

	r := f.score(ctx, nil, in, c.url(outBucket, out), "--history")
	if r.code != 0 || !strings.Contains(r.stderr, "aborted the incomplete multipart uploads killed jobs left") {
		t.Fatalf("the nightly job after the kill: want exit 0 and the uploads aborted: %s", r)
	}
	t.Logf("the nightly job after the kill: %v", r.elapsed.Round(time.Millisecond))
	if left := uploadsUnder(t, c, out+"/"); len(left) != 0 {
		t.Errorf("incomplete uploads left under OUTPUT: %v", left)
	}
	b, err := blob.OpenBucket(ctx, c.url(outBucket, ""))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	id := latestAttempt(t, b, out)
	dir, names := download(t, c, out+"/results/"+id)
	sameTables(t, ref, dir, names)
	for _, k := range outputKeys(t, c, out) {
		if rel := strings.TrimPrefix(k, out+"/"); strings.HasPrefix(rel, "results/") && !strings.HasPrefix(rel, "results/"+id+"/") {
			t.Errorf("the killed attempt's %s is still there", rel)
		}
	}
}

// writeBigMetaRuns writes runs skyfall runs of one row each, whose ids,
// rewards and successes are random and whose rows carry a random hex
// string of metaHex digits (run metadata: runs.parquet's and
// run_summary.parquet's run_meta). 2,000 runs of 20,480 digits make both
// files some 21 MB, over the 16 MiB that S3 uploads in parts, from 41 MB
// of input scored in a few seconds (a runs.parquet that size from small
// runs takes some 99,000 of them, and a minute a job).
func writeBigMetaRuns(t *testing.T, path string, runs, metaHex int) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	file, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(file, 1<<20)
	rng := rand.New(rand.NewPCG(16, 5))
	notes := make([]byte, metaHex)
	const hex = "0123456789abcdef"
	for r := range runs {
		for i := range notes {
			notes[i] = hex[rng.IntN(16)]
		}
		fmt.Fprintf(w, `{"run_id":"%016x%016x","seed":%d,"algorithm_id":"ppo","step":0,"reward":%v,"regime_id":"calm","notes":"%s","components":{"success":%v}}`+"\n",
			rng.Uint64(), rng.Uint64(), r, rng.Float64(), notes, rng.Float64())
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := file.Close(); err != nil {
		t.Fatal(err)
	}
}
