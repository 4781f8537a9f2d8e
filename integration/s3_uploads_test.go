package integration

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"
	"github.com/klauspost/compress/zstd"
	"gocloud.dev/blob"

	"github.com/crlbatch/crlbatch/cache"
	"github.com/crlbatch/crlbatch/scoring/protocoltest"
)

// TestCacheS3IncompleteUploads: on S3, an entry over 16 MiB is uploaded in
// parts, and a job killed during the upload leaves an incomplete multipart
// upload, which S3 keeps and bills. Made here as a kill leaves it
// (CreateMultipartUpload and UploadPart through the AWS SDK, never
// completed) under a cache on the real S3 server, beside uploads that are
// not the cache's: `cache stats` counts the entries' uploads with the bytes
// of their parts, `cache prune` aborts those initiated over the grace ago
// whatever its bounds, and leaves the young one, the uploads under the
// prefix not named as an entry and those outside the prefix. An upload
// another prune aborts first is not an error; a store that refuses to list
// uploads costs a warning, and the rest of stats and prune is done.
func TestCacheS3IncompleteUploads(t *testing.T) {
	f := getFixture(t)
	c := getCloud(t, "s3")
	ctx := context.Background()
	const prefix = "s3uploads-cache/"
	cacheURL := c.url(outBucket, prefix)

	// Entries of a real job.
	r := f.score(ctx, nil, filepath.Join(f.sweep, filepath.FromSlash(singleKey)), filepath.Join(t.TempDir(), "out"), "--cache", cacheURL)
	if r.code != 0 {
		t.Fatalf("scoring with the cache on S3: %s", r)
	}
	stats := func() result {
		t.Helper()
		r := f.crl(ctx, nil, nil, "cache", "stats", cacheURL)
		if r.code != 0 {
			t.Fatalf("cache stats: %s", r)
		}
		if strings.Contains(r.stdout+r.stderr, S3SecretKey) {
			t.Errorf("cache stats printed the secret key: %s", r)
		}
		return r
	}
	before := stats()
	entriesLine := lineStarting(t, before.stdout, "entries: ")
	if entriesLine == "entries: 0" || strings.Contains(before.stdout, "unfinished") || before.stderr != "" {
		t.Fatalf("cache stats of a fresh cache: %s", before)
	}

	client := s3Client(t, c.url(outBucket, ""))
	hex := func(first string) string { return first + strings.Repeat("0", 62) }
	mk := func(key string, part int) mpu {
		return makeUpload(t, client, outBucket, key, part)
	}
	oldEntry := mk(prefix+"v2/ab/"+hex("ab")+cache.EntrySuffix, 1234)
	oldKind := mk(prefix+"v2/runs/"+hex("cd")+cache.EntrySuffix, 0) // no part yet
	young := mk(prefix+"v2/ef/"+hex("ef")+cache.EntrySuffix, 500)
	keep := []mpu{
		young,
		mk(prefix+"notes/big.bin", 700), // under the prefix, not an entry's
		mk(prefix+"v2/ab/short"+cache.EntrySuffix, 700),         // not a key
		mk(prefix+"v2/ab/"+hex("12")+cache.EntrySuffix+".x", 1), // not an entry's name
		mk("s3uploads-other/v2/ab/"+hex("ab")+cache.EntrySuffix, 900),
	}
	old := time.Now().Add(-cache.TempGrace - 10*time.Minute)
	for _, u := range append([]mpu{oldEntry, oldKind}, keep[1:]...) {
		ageUpload(t, c, outBucket, u, old)
	}

	r = stats()
	want := "unfinished writes: 3 incomplete multipart uploads on S3, 1734 bytes (1.7 KiB) in their parts, left by jobs stopped while uploading an entry"
	if !strings.Contains(r.stdout, want) || lineStarting(t, r.stdout, "entries: ") != entriesLine || r.stderr != "" {
		t.Errorf("cache stats with three uploads of entries (two old):\n%s\nwant %q and %q", r, want, entriesLine)
	}

	// Another prune aborts oldKind just before this one does: the abort
	// answers NoSuchUpload, which is not an error, nor counted.
	direct := s3Client(t, s3URL("http://"+c.srv.Addr, outBucket, ""))
	c.proxy.SetPolicy(func(req *Request) Fault {
		if req.Method == http.MethodDelete && req.Query.Get("uploadId") == oldKind.id {
			abortUpload(t, direct, outBucket, oldKind)
		}
		return Pass
	})
	r = f.crl(ctx, nil, nil, "cache", "prune", cacheURL, "--older-than", "100000h")
	c.proxy.SetPolicy(nil)
	want = "removed 0 entries (0 bytes) and aborted 1 incomplete multipart uploads, 1234 bytes (1.2 KiB) in their parts; "
	if r.code != 0 || !strings.HasPrefix(r.stdout, want) || r.stderr != "" {
		t.Errorf("cache prune --older-than 100000h:\n%s\nwant stdout starting %q", r, want)
	}
	left := listUploads(t, client, outBucket)
	for _, u := range []mpu{oldEntry, oldKind} {
		if slices.Contains(left, u) {
			t.Errorf("the old upload of %s is still there", u.key)
		}
	}
	for _, u := range keep {
		if !slices.Contains(left, u) {
			t.Errorf("prune aborted the upload of %s, not an old one of an entry of the cache", u.key)
		}
	}
	r = stats()
	if want := "unfinished writes: 1 incomplete multipart uploads on S3, 500 bytes (500 B) in their parts"; !strings.Contains(r.stdout, want) || lineStarting(t, r.stdout, "entries: ") != entriesLine {
		t.Errorf("cache stats after prune:\n%s\nwant %q and %q", r, want, entriesLine)
	}

	// A store that does not answer ListMultipartUploads (the proxy's 500
	// here; a role without the permission gets a 403, handled alike): a
	// warning naming the cache; the entries are still counted, and pruned.
	c.proxy.SetPolicy(Always(func(req *Request) bool {
		return req.Method == http.MethodGet && req.Key == "" && req.Query.Has("uploads")
	}, InternalError))
	r = stats()
	warned := func(r result) bool {
		return strings.Contains(r.stderr, "level=WARN") && strings.Contains(r.stderr, "incomplete multipart uploads of entries not listed") &&
			strings.Contains(r.stderr, "cache s3://"+outBucket+"/"+prefix) && !strings.Contains(r.stderr, S3SecretKey)
	}
	if lineStarting(t, r.stdout, "entries: ") != entriesLine || strings.Contains(r.stdout, "unfinished") || !warned(r) {
		t.Errorf("cache stats when uploads cannot be listed:\n%s", r)
	}
	r = f.crl(ctx, nil, nil, "cache", "prune", cacheURL, "--max-bytes", "0")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "removed "+strings.TrimPrefix(entriesLine, "entries: ")+" entries") || !strings.Contains(r.stdout, "; 0 entries (0 bytes) left") || !warned(r) {
		t.Errorf("cache prune --max-bytes 0 when uploads cannot be listed:\n%s", r)
	}
	if n := strings.Count(r.stderr, "level=WARN"); n != 1 {
		t.Errorf("prune warned %d times, want once:\n%s", n, r.stderr)
	}
	c.proxy.SetPolicy(nil)
	for _, u := range listUploads(t, client, outBucket) {
		if strings.HasPrefix(u.key, "s3uploads-") && !slices.Contains(keep, u) {
			t.Errorf("left: the upload of %s, not one of those kept", u.key)
		}
	}
	for _, u := range keep {
		abortUpload(t, client, outBucket, u)
	}
}

// lineStarting returns the line of text starting with start.
func lineStarting(t *testing.T, text, start string) string {
	t.Helper()
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, start) {
			return l
		}
	}
	t.Fatalf("no line starting %q in:\n%s", start, text)
	return ""
}

// mpu is one multipart upload.
type mpu struct{ key, id string }

// s3Client is the AWS SDK client of the bucket of a blob URL (gocloud.dev's
// s3blob gives it to As).
func s3Client(t *testing.T, bucketURL string) *s3.Client {
	t.Helper()
	b, err := blob.OpenBucket(context.Background(), bucketURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	var client *s3.Client
	if !b.As(&client) {
		t.Fatalf("%s: no *s3.Client", bucketURL)
	}
	return client
}

// makeUpload starts a multipart upload of key and uploads one part of n
// bytes (none when n is 0), never completing it: what a job killed during
// an upload leaves.
func makeUpload(t *testing.T, client *s3.Client, bucket, key string, n int) mpu {
	t.Helper()
	ctx := context.Background()
	out, err := client.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: &bucket, Key: &key})
	if err != nil {
		t.Fatalf("CreateMultipartUpload %s: %v", key, err)
	}
	if n > 0 {
		part := int32(1)
		if _, err := client.UploadPart(ctx, &s3.UploadPartInput{Bucket: &bucket, Key: &key, UploadId: out.UploadId,
			PartNumber: &part, Body: bytes.NewReader(bytes.Repeat([]byte{'x'}, n))}); err != nil {
			t.Fatalf("UploadPart %s: %v", key, err)
		}
	}
	return mpu{key: key, id: *out.UploadId}
}

func abortUpload(t *testing.T, client *s3.Client, bucket string, u mpu) {
	t.Helper()
	_, err := client.AbortMultipartUpload(context.Background(), &s3.AbortMultipartUploadInput{Bucket: &bucket, Key: &u.key, UploadId: &u.id})
	var ae smithy.APIError
	if err != nil && !(errors.As(err, &ae) && ae.ErrorCode() == "NoSuchUpload") {
		t.Errorf("aborting %s: %v", u.key, err)
	}
}

// listUploads lists the bucket's incomplete multipart uploads.
func listUploads(t *testing.T, client *s3.Client, bucket string) []mpu {
	t.Helper()
	var ups []mpu
	p := s3.NewListMultipartUploadsPaginator(client, &s3.ListMultipartUploadsInput{Bucket: &bucket})
	for p.HasMorePages() {
		page, err := p.NextPage(context.Background())
		if err != nil {
			t.Fatalf("ListMultipartUploads: %v", err)
		}
		for _, u := range page.Uploads {
			ups = append(ups, mpu{key: *u.Key, id: *u.UploadId})
		}
	}
	return ups
}

// ageUpload sets when u was initiated, as S3 lists it, to at. S3 has no
// call for it; versitygw's posix backend lists the modification time of
// the upload's folder, <bucket>/.sgwtmp/multipart/<hash>/<upload id>, so
// that is set. The listing is checked, so that a versitygw that keeps the
// time elsewhere fails this test rather than passing it untested.
func ageUpload(t *testing.T, c *cloud, bucket string, u mpu, at time.Time) {
	t.Helper()
	var dirs []string
	filepath.WalkDir(filepath.Join(c.srv.Dir, bucket, ".sgwtmp", "multipart"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() && d.Name() == u.id {
			dirs = append(dirs, p)
		}
		return nil
	})
	if len(dirs) != 1 {
		t.Fatalf("versitygw's folder of the upload of %s: found %v", u.key, dirs)
	}
	if err := os.Chtimes(dirs[0], at, at); err != nil {
		t.Fatal(err)
	}
	client := s3Client(t, c.url(bucket, ""))
	p := s3.NewListMultipartUploadsPaginator(client, &s3.ListMultipartUploadsInput{Bucket: &bucket, Prefix: &u.key})
	for p.HasMorePages() {
		page, err := p.NextPage(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range page.Uploads {
			if *l.UploadId == u.id {
				if d := l.Initiated.Sub(at); d < -time.Second || d > time.Second {
					t.Fatalf("the upload of %s is listed as initiated at %v, not %v: versitygw keeps the time elsewhere", u.key, l.Initiated, at)
				}
				return
			}
		}
	}
	t.Fatalf("the upload of %s is not listed", u.key)
}

// TestCacheS3KilledWhileUploading is the real thing: `score --cache s3://…`
// killed -9 while it uploads an entry over 16 MiB in parts (at its second
// UploadPart, seen by the proxy: the parts under way may not be stored),
// then what the nightly user relies on:
// `cache stats` counts the upload the kill left, a rerun on the cache
// scores exactly what a run without one scores, `cache prune` keeps the
// upload while it may be a live job's and aborts it once it was initiated
// over the grace ago, and S3 holds no upload of the cache's after that.
func TestCacheS3KilledWhileUploading(t *testing.T) {
	f := getFixture(t)
	c := getCloud(t, "s3")
	ctx := context.Background()
	in := filepath.Join(t.TempDir(), "in")
	writeIncompressibleRun(t, filepath.Join(in, "r.jsonl.zst"), 1_300_000)
	client := s3Client(t, c.url(outBucket, ""))
	var prefix, cacheURL string
	cacheUploads := func() []mpu {
		var ups []mpu
		for _, u := range listUploads(t, client, outBucket) {
			if strings.HasPrefix(u.key, prefix) {
				ups = append(ups, u)
			}
		}
		return ups
	}

	var killed []mpu
	for attempt := 1; attempt <= 3 && len(killed) == 0; attempt++ {
		prefix = fmt.Sprintf("s3kill-cache-%d/", attempt) // a cold cache each time
		cacheURL = c.url(outBucket, prefix)
		var proc atomic.Pointer[os.Process]
		parts := 0
		c.proxy.SetPolicy(func(req *Request) Fault {
			if req.Method == http.MethodPut && req.Query.Has("uploadId") && strings.HasPrefix(req.Key, prefix) {
				if parts++; parts == 2 {
					if p := proc.Load(); p != nil {
						p.Kill()
					}
				}
			}
			return Pass
		})
		args := append([]string{"score", in, "--out", filepath.Join(t.TempDir(), "killed"), "--quiet", "--cache", cacheURL}, scoreFlags...)
		r := f.crl(ctx, nil, func(p *os.Process) { proc.Store(p) }, args...)
		c.proxy.SetPolicy(nil)
		if r.code != -1 {
			t.Logf("attempt %d: the job was not killed (%d parts uploaded): %s", attempt, parts, r)
		}
		killed = cacheUploads()
	}
	if len(killed) == 0 {
		t.Fatal("in 3 attempts no kill left an incomplete multipart upload of the cache")
	}
	for _, u := range killed {
		if !cacheEntryKey.MatchString(strings.TrimPrefix(u.key, prefix)) {
			t.Errorf("the kill left an upload of %s: not an entry's name", u.key)
		}
	}

	stats := func() string {
		t.Helper()
		r := f.crl(ctx, nil, nil, "cache", "stats", cacheURL)
		if r.code != 0 || r.stderr != "" {
			t.Fatalf("cache stats: %s", r)
		}
		return r.stdout
	}
	want := regexp.MustCompile(fmt.Sprintf(`(?m)^unfinished writes: %d incomplete multipart uploads on S3, [0-9]+ bytes \(`, len(killed)))
	if s := stats(); !want.MatchString(s) {
		t.Errorf("cache stats after the kill:\n%s\nwant a line matching %s", s, want)
	}

	// A rerun on the cache: the result of a run without one.
	tmp := t.TempDir()
	if r := f.score(ctx, nil, in, filepath.Join(tmp, "none")); r.code != 0 {
		t.Fatalf("without a cache: %s", r)
	}
	if r := f.score(ctx, nil, in, filepath.Join(tmp, "rerun"), "--cache", cacheURL); r.code != 0 || strings.Contains(r.stderr, "WARN") {
		t.Fatalf("rerun on the cache the killed job left: %s", r)
	}
	protocoltest.SameOutputs(t, filepath.Join(tmp, "none"), filepath.Join(tmp, "rerun"))

	// Young: may be a live job's upload.
	if r := f.crl(ctx, nil, nil, "cache", "prune", cacheURL, "--older-than", "7d"); r.code != 0 || strings.Contains(r.stdout, "aborted") {
		t.Errorf("prune of an upload younger than the grace: %s", r)
	}
	if left := cacheUploads(); !slices.Equal(left, killed) {
		t.Errorf("uploads after the prune of young ones: %v, want %v", left, killed)
	}
	for _, u := range killed {
		ageUpload(t, c, outBucket, u, time.Now().Add(-2*time.Hour))
	}
	r := f.crl(ctx, nil, nil, "cache", "prune", cacheURL, "--older-than", "7d")
	if wantAborted := fmt.Sprintf(" and aborted %d incomplete multipart uploads, ", len(killed)); r.code != 0 || !strings.Contains(r.stdout, wantAborted) {
		t.Errorf("prune of uploads initiated two hours ago: %s\nwant %q", r, wantAborted)
	}
	if left := cacheUploads(); len(left) != 0 {
		t.Errorf("uploads left after prune: %v", left)
	}
	if s := stats(); strings.Contains(s, "unfinished") {
		t.Errorf("cache stats after prune:\n%s", s)
	}
}

// cacheEntryKey is an entry's name under the cache's prefix.
var cacheEntryKey = regexp.MustCompile(`^v[0-9]+/[^/]+/[0-9a-f]{64}\.crlc$`)

// writeIncompressibleRun writes one skyfall run of n rows, zstd-compressed,
// whose reward and success are uniform random float64s: a cache entry of
// about 16 bytes a row (1,300,000 rows: about 21 MB, over the 16 MiB that
// S3 uploads in parts), where a synthetic sweep's smooth values compress
// some 40 times.
func writeIncompressibleRun(t *testing.T, path string, n int) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	file, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	z, err := zstd.NewWriter(file, zstd.WithEncoderLevel(zstd.SpeedFastest))
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(z, 1<<20)
	rng := rand.New(rand.NewPCG(15, 4))
	labels := []string{"calm", "gusty", "storm"}
	var b []byte
	for i := range n {
		b = fmt.Appendf(b[:0], `{"run_id":"r","seed":0,"algorithm_id":"ppo","step":%d,"reward":%v,"regime_id":%q,"components":{"success":%v}}`+"\n",
			i, rng.Float64(), labels[i*len(labels)/n], rng.Float64())
		w.Write(b)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
	if err := file.Close(); err != nil {
		t.Fatal(err)
	}
}
