package integration

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"gocloud.dev/blob"
	_ "gocloud.dev/blob/azureblob"
	_ "gocloud.dev/blob/gcsblob"
	_ "gocloud.dev/blob/s3blob"
	"golang.org/x/sync/errgroup"

	"github.com/crlbatch/crlbatch/writers"
)

// Buckets on every server: the sweep is uploaded once to inBucket; each
// test writes under its own prefix of outBucket.
const (
	inBucket  = "sweeps"
	outBucket = "results"
)

// outputNames are the files of a skyfall result, in bytewise order, its
// figures (figure-*.svg and .png, one pair per figure) aside.
var outputNames = []string{"curves.parquet", "families.parquet", "intervals.parquet", "manifest.json", "report.html", "report.md", "run_summary.parquet", "runs.parquet"}

// withoutFigures drops the figure files from a sorted list of names.
func withoutFigures(names []string) []string {
	return slices.DeleteFunc(slices.Clone(names), func(n string) bool { return strings.HasPrefix(n, "figure-") })
}

// cloud is one running server with a FaultProxy in front. Every client, the
// tests' own and crlbatch, goes through the proxy, which passes everything
// unless a test sets a policy, and counts the requests.
type cloud struct {
	name  string // s3, gcs, azure
	srv   *Server
	proxy *FaultProxy
	// url is the blob URL of bucket/key (key may be "" or a prefix) through
	// the proxy.
	url func(bucket, key string) string
	// classify names the requests of this protocol for the proxy.
	classify func(method string, u *url.URL) (bucket, key, kind string)
}

func (c *cloud) stop() {
	if c == nil {
		return
	}
	if c.proxy != nil {
		c.proxy.Close()
	}
	c.srv.Stop()
}

var clouds struct {
	mu    sync.Mutex
	byKey map[string]*cloudOnce
}

type cloudOnce struct {
	once sync.Once
	c    *cloud
	err  error // a start failure
	miss error // a missing binary
}

// getCloud starts the named server once per test run, creates the buckets
// and uploads the sweep. A missing binary skips (or, in CI, fails) the test.
func getCloud(t testing.TB, name string) *cloud {
	t.Helper()
	f := getFixture(t)
	clouds.mu.Lock()
	if clouds.byKey == nil {
		clouds.byKey = map[string]*cloudOnce{}
	}
	co := clouds.byKey[name]
	if co == nil {
		co = &cloudOnce{}
		clouds.byKey[name] = co
	}
	clouds.mu.Unlock()
	co.once.Do(func() {
		co.c, co.miss, co.err = startCloud(context.Background(), f, name, filepath.Join(root, name))
		if co.err == nil && co.miss == nil {
			co.err = upload(context.Background(), co.c, f.sweep, "")
		}
	})
	need(t, co.miss)
	if co.err != nil {
		t.Fatalf("%s: %v", name, co.err)
	}
	co.c.proxy.SetPolicy(nil)
	t.Cleanup(func() { co.c.proxy.SetPolicy(nil) })
	return co.c
}

func stopAll() {
	clouds.mu.Lock()
	defer clouds.mu.Unlock()
	for _, co := range clouds.byKey {
		co.c.stop()
	}
}

// startCloud starts a server of the named kind under dir with a proxy in
// front and creates inBucket and outBucket. miss is set when the server's
// binary is not installed.
func startCloud(ctx context.Context, f *fixture, name, dir string) (c *cloud, miss, err error) {
	c = &cloud{name: name}
	defer func() {
		if err != nil || miss != nil {
			c.stop()
			c = nil
		}
	}()
	if c.proxy, err = NewFaultProxy(""); err != nil {
		return c, nil, err
	}
	data := filepath.Join(dir, "data")
	switch name {
	case "s3":
		c.classify = ClassifyS3
		bin, err := FindTool(f.repo, "versitygw")
		if err != nil {
			return c, err, nil
		}
		if err := os.MkdirAll(filepath.Join(data, inBucket), 0o755); err != nil {
			return c, nil, err
		}
		if err := os.MkdirAll(filepath.Join(data, outBucket), 0o755); err != nil {
			return c, nil, err
		}
		if c.srv, err = StartVersitygw(ctx, bin, data, ServerOptions{}); err != nil {
			return c, nil, err
		}
		c.proxy.SetUpstream(c.srv.Addr)
		c.url = func(bucket, key string) string { return s3URL(c.proxy.URL(), bucket, key) }
	case "gcs":
		bin, err := FindTool(f.repo, "fake-gcs-server")
		if err != nil {
			return c, err, nil
		}
		// Clients reach the server through the proxy, so the proxy's address
		// is the public host, and STORAGE_EMULATOR_HOST.
		c.classify = ClassifyGCS
		c.proxy.SetClassify(c.classify)
		if c.srv, err = StartFakeGCS(ctx, bin, data, ServerOptions{PublicHost: c.proxy.Addr()}); err != nil {
			return c, nil, err
		}
		c.proxy.SetUpstream(c.srv.Addr)
		os.Setenv("STORAGE_EMULATOR_HOST", c.proxy.Addr())
		for _, b := range []string{inBucket, outBucket} {
			resp, err := http.Post("http://"+c.srv.Addr+"/storage/v1/b?project=crlbatch", "application/json", strings.NewReader(`{"name":"`+b+`"}`))
			if err != nil {
				return c, nil, err
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				return c, nil, fmt.Errorf("creating gs://%s: %s: %s", b, resp.Status, body)
			}
		}
		c.url = func(bucket, key string) string { return fmt.Sprintf("gs://%s/%s", bucket, escapeKey(key)) }
	case "azure":
		bin, err := FindTool(f.repo, "azurite-blob")
		if err != nil {
			return c, err, nil
		}
		c.classify = ClassifyAzure
		c.proxy.SetClassify(c.classify)
		if c.srv, err = StartAzurite(ctx, bin, data, ServerOptions{}); err != nil {
			return c, nil, err
		}
		c.proxy.SetUpstream(c.srv.Addr)
		c.url = func(bucket, key string) string { return azURL(c.proxy.Addr(), bucket, key) }
		for _, b := range []string{inBucket, outBucket} {
			bk, err := blob.OpenBucket(ctx, c.url(b, ""))
			if err != nil {
				return c, nil, err
			}
			var cc *container.Client
			if !bk.As(&cc) {
				bk.Close()
				return c, nil, errors.New("azureblob: no *container.Client")
			}
			_, err = cc.Create(ctx, nil)
			bk.Close()
			if err != nil {
				return c, nil, fmt.Errorf("creating container %s: %w", b, err)
			}
		}
	default:
		return c, nil, fmt.Errorf("no cloud %q", name)
	}
	return c, nil, nil
}

// s3URL is the blob URL of bucket/key on the S3 endpoint (http://host:port).
func s3URL(endpoint, bucket, key string) string {
	return fmt.Sprintf("s3://%s/%s?endpoint=%s&use_path_style=true&region=%s"+
		"&request_checksum_calculation=when_required&response_checksum_validation=when_required",
		bucket, escapeKey(key), url.QueryEscape(endpoint), S3Region)
}

// azURL is the blob URL of bucket/key on the Azurite at domain (host:port).
func azURL(domain, bucket, key string) string {
	return fmt.Sprintf("azblob://%s/%s?protocol=http&domain=%s&localemu=true", bucket, escapeKey(key), domain)
}

// escapeKey escapes a key for the path of a blob URL.
func escapeKey(key string) string {
	return (&url.URL{Path: key}).EscapedPath()
}

// upload copies every file under dir to inBucket, keyed by prefix and its
// path relative to dir; with no prefix, it adds the zero-byte folder marker
// night1/empty/.
func upload(ctx context.Context, c *cloud, dir, prefix string) error {
	b, err := blob.OpenBucket(ctx, c.url(inBucket, ""))
	if err != nil {
		return err
	}
	defer b.Close()
	var keys []string
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		keys = append(keys, filepath.ToSlash(rel))
		return err
	})
	if err != nil {
		return err
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(4)
	for _, k := range keys {
		g.Go(func() error {
			data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(k)))
			if err != nil {
				return err
			}
			if err := b.WriteAll(gctx, prefix+k, data, nil); err != nil {
				return fmt.Errorf("uploading %s: %w", k, err)
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	if prefix == "" && c.name != "s3" { // versitygw's posix backend keeps a folder, not an object
		if err := b.WriteAll(ctx, "night1/empty/", nil, nil); err != nil {
			return fmt.Errorf("uploading night1/empty/: %w", err)
		}
	}
	return nil
}

// download copies the objects directly under outBucket/prefix/ (not those
// under deeper prefixes such as attempts/) into a new local folder and
// returns it with their names, in bytewise order.
func download(t testing.TB, c *cloud, prefix string) (string, []string) {
	t.Helper()
	ctx := context.Background()
	b, err := blob.OpenBucket(ctx, c.url(outBucket, ""))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	dir := t.TempDir()
	var names []string
	it := b.List(&blob.ListOptions{Prefix: prefix + "/", Delimiter: "/"})
	for {
		o, err := it.Next(ctx)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("listing %s/%s/: %v", outBucket, prefix, err)
		}
		if o.IsDir {
			continue
		}
		name := strings.TrimPrefix(o.Key, prefix+"/")
		names = append(names, name)
		data, err := b.ReadAll(ctx, o.Key)
		if err != nil {
			t.Fatalf("reading %s: %v", o.Key, err)
		}
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sort.Strings(names)
	return dir, names
}

// outputKeys lists the keys under outBucket/prefix/.
func outputKeys(t testing.TB, c *cloud, prefix string) []string {
	t.Helper()
	ctx := context.Background()
	b, err := blob.OpenBucket(ctx, c.url(outBucket, ""))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	var keys []string
	it := b.List(&blob.ListOptions{Prefix: prefix + "/"})
	for {
		o, err := it.Next(ctx)
		if err == io.EOF {
			return keys
		}
		if err != nil {
			t.Fatalf("listing %s/%s/: %v", outBucket, prefix, err)
		}
		keys = append(keys, o.Key)
	}
}

// assertNoOutput fails unless nothing is under outBucket/prefix/.
func assertNoOutput(t testing.TB, c *cloud, prefix string) {
	t.Helper()
	if keys := outputKeys(t, c, prefix); len(keys) > 0 {
		t.Errorf("a failed job left files in the output bucket: %v", keys)
	}
}

// compareWithLocal checks the outputs in got (downloaded from a bucket)
// against those of the same sweep scored from a local folder: the Parquet
// files byte for byte, report.md byte for byte but for the line naming the
// input, manifest.json but for timestamps, the input URL, etags and MD5s and
// report.md's digest; and each manifest output's bytes and sha256 against
// the file itself.
func compareWithLocal(t *testing.T, got string, names []string, ref, inputURL string) {
	t.Helper()
	if !reflect.DeepEqual(withoutFigures(names), outputNames) {
		t.Fatalf("output files %q, want %q and the figures", names, outputNames)
	}
	var local []string
	ents, err := os.ReadDir(ref)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		local = append(local, e.Name())
	}
	if !reflect.DeepEqual(names, local) {
		t.Fatalf("output files %q, the local run's %q", names, local)
	}
	read := func(dir, name string) []byte {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	for _, n := range names {
		if strings.HasPrefix(n, "figure-") {
			// The figures name no input: the same bytes.
			if !bytes.Equal(read(got, n), read(ref, n)) {
				t.Errorf("%s differs from the local run's", n)
			}
			continue
		}
		if !strings.HasSuffix(n, ".parquet") {
			continue
		}
		// The same numbers and metadata; crlbatch.input names each run's
		// own INPUT.
		g, w := readBack(t, read(got, n)), readBack(t, read(ref, n))
		if g.Metadata[writers.KeyInput] != inputURL {
			t.Errorf("%s: %s is %q, want %q", n, writers.KeyInput, g.Metadata[writers.KeyInput], inputURL)
		}
		delete(g.Metadata, writers.KeyInput)
		delete(w.Metadata, writers.KeyInput)
		if !reflect.DeepEqual(g, w) {
			t.Errorf("%s differs from the local run's beyond %s", n, writers.KeyInput)
		}
	}

	gr, wr := string(read(got, "report.md")), string(read(ref, "report.md"))
	wantInput := "- input: `" + inputURL + "`"
	if !strings.Contains(gr, "\n"+wantInput+"\n") {
		t.Errorf("report.md does not name the input as %s", wantInput)
	}
	if g, w := dropInputLine(gr), dropInputLine(wr); g != w {
		t.Errorf("report.md differs from the local run's beyond the input line:\n%s", firstDiff(g, w))
	}
	gh, wh := string(read(got, "report.html")), string(read(ref, "report.html"))
	if g, w := dropInputLine(gh), dropInputLine(wh); g != w {
		t.Errorf("report.html differs from the local run's beyond the input line:\n%s", firstDiff(g, w))
	}

	var gm, wm map[string]any
	if err := json.Unmarshal(read(got, "manifest.json"), &gm); err != nil {
		t.Fatalf("manifest.json: %v", err)
	}
	if err := json.Unmarshal(read(ref, "manifest.json"), &wm); err != nil {
		t.Fatalf("local manifest.json: %v", err)
	}
	if gm["input"] != inputURL {
		t.Errorf("manifest input %v, want %s", gm["input"], inputURL)
	}
	outs, _ := gm["outputs"].([]any)
	if len(outs) != len(names)-1 {
		t.Errorf("manifest lists %d outputs, want %d", len(outs), len(names)-1)
	}
	for _, o := range outs {
		o, _ := o.(map[string]any)
		name, _ := o["name"].(string)
		data, err := os.ReadFile(filepath.Join(got, name))
		if err != nil {
			t.Errorf("manifest lists %q, which is not in the bucket", name)
			continue
		}
		sum := sha256.Sum256(data)
		if o["sha256"] != hex.EncodeToString(sum[:]) || o["bytes"] != float64(len(data)) {
			t.Errorf("manifest says %s is %v bytes, sha256 %v; the bucket holds %d bytes, sha256 %x", name, o["bytes"], o["sha256"], len(data), sum)
		}
	}
	normalizeManifest(gm)
	normalizeManifest(wm)
	if !reflect.DeepEqual(gm, wm) {
		g, _ := json.MarshalIndent(gm, "", " ")
		w, _ := json.MarshalIndent(wm, "", " ")
		t.Errorf("manifest.json differs from the local run's beyond timestamps, input, etags and report digest:\n%s", firstDiff(string(g), string(w)))
	}
}

func dropInputLine(report string) string {
	lines := strings.Split(report, "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, "- input: ") || strings.HasPrefix(l, "<li>input: ") {
			lines[i] = "- input: INPUT"
		}
	}
	return strings.Join(lines, "\n")
}

// normalizeManifest drops what differs between a bucket and a local run
// (the digests of the files that name the input are checked against the
// files by compareWithLocal).
func normalizeManifest(m map[string]any) {
	delete(m, "started_at")
	delete(m, "finished_at")
	delete(m, "input")
	delete(m, "attempt_id") // one per job
	delete(m, "host")
	objs, _ := m["objects"].([]any)
	for _, o := range objs {
		if o, ok := o.(map[string]any); ok {
			delete(o, "etag")
			delete(o, "md5")
		}
	}
	outs, _ := m["outputs"].([]any)
	for _, o := range outs {
		if o, ok := o.(map[string]any); ok && (o["name"] == "report.md" || o["name"] == "report.html" || strings.HasSuffix(o["name"].(string), ".parquet")) {
			delete(o, "bytes") // the reports and crlbatch.input name the input
			delete(o, "sha256")
		}
	}
}

// firstDiff shows the first differing line of two texts.
func firstDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := 0; i < max(len(g), len(w)); i++ {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			return fmt.Sprintf("line %d:\n got  %q\n want %q", i+1, gl, wl)
		}
	}
	return "(no line differs)"
}

// requestCounts summarises the proxy's log: requests by kind, and reads of
// each object key.
type requestCounts struct {
	byKind map[string]int
	lists  map[string]int // bucket → listing requests
	gets   map[string]int // key → GETs
	total  int
}

func countRequests(log []Entry) requestCounts {
	rc := requestCounts{byKind: map[string]int{}, lists: map[string]int{}, gets: map[string]int{}}
	for _, e := range log {
		rc.total++
		rc.byKind[e.Kind]++
		if e.Kind == "list" {
			rc.lists[e.Bucket]++
		}
		if e.Kind == "get" {
			rc.gets[e.Key]++
		}
	}
	return rc
}

func (rc requestCounts) String() string {
	kinds := make([]string, 0, len(rc.byKind))
	for k := range rc.byKind {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	var b strings.Builder
	fmt.Fprintf(&b, "%d requests:", rc.total)
	for _, k := range kinds {
		fmt.Fprintf(&b, " %s %d", k, rc.byKind[k])
	}
	return b.String()
}

func readBack(t *testing.T, data []byte) *writers.ReadBack {
	t.Helper()
	rb, err := writers.ReadParquet(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	return rb
}
