package integration

import (
	"context"
	"strings"
	"testing"

	"github.com/crlbatch/crlbatch/pipeline"
)

// TestCloudEndToEnd scores the sweep from each server into a bucket of the
// same server and checks the result against the local one: same files,
// Parquet byte for byte, the report byte for byte but for the line naming
// the input, the manifest but for what must differ, and DuckDB's reading of
// them. It also checks the requests the job made
// (one read per object, one listing page), refusing to replace a complete
// result, --overwrite in place, and a single object as INPUT.
func TestCloudEndToEnd(t *testing.T) {
	for _, name := range []string{"s3", "gcs", "azure"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			f := getFixture(t)
			c := getCloud(t, name)
			ctx := context.Background()
			in := c.url(inBucket, inPrefix)
			out := c.url(outBucket, "e2e")

			c.proxy.Reset()
			r := f.score(ctx, nil, in, out, "--concurrency", "4")
			if r.code != 0 {
				t.Fatalf("%s\nserver log:\n%s", r, c.srv.LogTail(20))
			}
			rc := countRequests(c.proxy.Log())
			t.Logf("%s in %v; %v", name, r.elapsed.Round(1e6), rc)
			report, _, _ := strings.Cut(out, "?")
			if report += "/report.md"; !strings.Contains(r.stdout, "report: "+report+"\n") {
				t.Errorf("stdout does not say the report is %s:\n%s", report, r.stdout)
			}

			dir, names := download(t, c, "e2e")
			compareWithLocal(t, dir, names, f.ref, pipeline.Redact(in))
			checkParquet(t, f, dir, f.runs)

			// Requests: every object read once, nothing else read, the skipped
			// files never fetched, one listing page for a small prefix.
			want := map[string]bool{}
			for _, k := range f.objects {
				want[inPrefix+"/"+k] = true
			}
			for k, n := range rc.gets {
				if k == "e2e/LATEST" && n == 1 {
					continue // the layout check: is OUTPUT nightly?
				}
				if !want[k] {
					t.Errorf("the job read %s, which it must not (%d GETs)", k, n)
				} else if n != 1 {
					t.Errorf("the job read %s %d times, want once", k, n)
				}
			}
			if delete(rc.gets, "e2e/LATEST"); len(rc.gets) != len(want) {
				t.Errorf("the job read %d objects, want %d", len(rc.gets), len(want))
			}
			// One listing page of the input; two of OUTPUT, whose tidying
			// before publishing looks for what killed jobs left (at its top,
			// and of their claims under .crlbatch/).
			if n := rc.lists[inBucket]; n != 1 {
				t.Errorf("%d listing requests of the input, want 1 (one page)", n)
			}
			if n := rc.lists[outBucket]; n != 2 {
				t.Errorf("%d listing requests of the output, want 2 (tidying: OUTPUT's top, its claims folder)", n)
			}
			if n := rc.byKind["put"]; n < len(names) || n > 2*len(names) {
				t.Errorf("%d upload requests for %d files", n, len(names))
			}

			// A complete result is not replaced without --overwrite (exit 2),
			// and is untouched; with it, it is replaced in place: the same
			// files, nothing else (no claim left).
			r = f.score(ctx, nil, in, out)
			if r.code != 2 || !strings.Contains(r.stderr, "--overwrite") {
				t.Errorf("a second run without --overwrite: want exit 2 naming --overwrite, got %s", r)
			}
			r = f.score(ctx, nil, in, out, "--overwrite")
			if r.code != 0 {
				t.Fatalf("--overwrite: %s", r)
			}
			dir, names = download(t, c, "e2e")
			compareWithLocal(t, dir, names, f.ref, pipeline.Redact(in))

			// One object as INPUT.
			r = f.score(ctx, nil, c.url(inBucket, singleKey), c.url(outBucket, "single"))
			if r.code != 0 {
				t.Fatalf("one object: %s", r)
			}
			dir, names = download(t, c, "single")
			compareWithLocal(t, dir, names, f.refSingle, pipeline.Redact(c.url(inBucket, singleKey)))

			// One large object, decoded in chunks on two cores.
			r = f.score(ctx, nil, c.url(inBucket, largePrefix), c.url(outBucket, "large"), "--concurrency", "2", "--log-level", "info")
			if r.code != 0 {
				t.Fatalf("the large object: %s", r)
			}
			if !strings.Contains(r.stderr, "decoding in chunks") {
				t.Errorf("the large object was not decoded in chunks:\n%s", r.stderr)
			}
			dir, names = download(t, c, "large")
			compareWithLocal(t, dir, names, f.refLarge, pipeline.Redact(c.url(inBucket, largePrefix)))
		})
	}
}
