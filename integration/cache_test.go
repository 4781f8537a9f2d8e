package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"gocloud.dev/blob"

	"github.com/crlbatch/crlbatch/scoring/protocoltest"
	"github.com/crlbatch/crlbatch/writers"
)

// TestCloudCache: --cache on the same store as the input, through each
// server: a warm rerun reads no input object (each entry is keyed by the
// store's ETag), writes Parquet files and a report byte-identical to the
// cold run's; after one object grows by a row it decodes only that row
// (the object's earlier bytes checked by range reads against the hashes
// its tails entry keeps), and after an earlier row of it is rewritten it
// decodes that object whole, each time with the results of a run without
// a cache.
func TestCloudCache(t *testing.T) {
	for _, name := range []string{"s3", "gcs", "azure"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			f := getFixture(t)
			c := getCloud(t, name)
			ctx := context.Background()
			// A copy of the sweep of its own: one object is changed below.
			const copyPrefix = "cachetest/"
			if err := upload(ctx, c, f.sweep, copyPrefix); err != nil {
				t.Fatal(err)
			}
			in := c.url(inBucket, copyPrefix+inPrefix)
			cacheURL := c.url(inBucket, "crlcache")
			n := len(f.objects)

			r := f.score(ctx, nil, in, c.url(outBucket, "cache-cold"), "--cache", cacheURL)
			if r.code != 0 || !strings.Contains(r.stdout, "): "+itoa(n)+" decoded, 0 from the cache") {
				t.Fatalf("cold: %s", r)
			}
			c.proxy.Reset()
			r = f.score(ctx, nil, in, c.url(outBucket, "cache-warm"), "--cache", cacheURL)
			if r.code != 0 || !strings.Contains(r.stdout, "): 0 decoded, "+itoa(n)+" from the cache") || strings.Contains(r.stderr, "WARN") {
				t.Fatalf("warm: %s", r)
			}
			for k := range countRequests(c.proxy.Log()).gets {
				if strings.HasPrefix(k, copyPrefix+inPrefix+"/") {
					t.Errorf("the warm run read the input object %s", k)
				}
			}
			cold, _ := download(t, c, "cache-cold")
			warm, _ := download(t, c, "cache-warm")
			protocoltest.SameOutputs(t, cold, warm)
			checkReads(t, filepath.Join(warm, "manifest.json"), func(string) string { return "cache" })

			// One object grows by a row (its last once more), then has an
			// earlier row rewritten.
			b, changed, key, data, lines := plainObject(t, f, c, copyPrefix)
			rewritten := bytes.Replace(data, lines[2], bytes.Replace(lines[2], []byte(`"reward":`), []byte(`"reward":1.5,"x":`), 1), 1)
			for _, step := range []struct {
				name, summary, read string
				data                []byte
			}{
				{"appended", "): 0 decoded, " + itoa(n-1) + " from the cache, 0 Parquet, 1 appended to", "appended",
					append(append(slices.Clone(data), lines[len(lines)-1]...), '\n')},
				{"rewritten", "): 1 decoded, " + itoa(n-1) + " from the cache, 0 Parquet\n", "decoded",
					append(append(rewritten, lines[len(lines)-1]...), '\n')},
			} {
				if err := b.WriteAll(ctx, key, step.data, nil); err != nil {
					t.Fatal(err)
				}
				r = f.score(ctx, nil, in, c.url(outBucket, "cache-"+step.name), "--cache", cacheURL)
				if r.code != 0 || !strings.Contains(r.stdout, step.summary) || strings.Contains(r.stderr, "WARN") {
					t.Fatalf("%s: %s", step.name, r)
				}
				r = f.score(ctx, nil, in, c.url(outBucket, "cache-none-"+step.name))
				if r.code != 0 {
					t.Fatalf("without a cache: %s", r)
				}
				got, _ := download(t, c, "cache-"+step.name)
				want, _ := download(t, c, "cache-none-"+step.name)
				protocoltest.SameOutputs(t, want, got)
				checkReads(t, filepath.Join(got, "manifest.json"), func(k string) string {
					if k == changed {
						return step.read
					}
					return "cache"
				})
			}
		})
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// plainObject opens c's input bucket (closed when the test ends) and reads
// the first plain JSON Lines object of the fixture's copy under
// copyPrefix: its name in the sweep, its key, its bytes and its lines.
func plainObject(t *testing.T, f *fixture, c *cloud, copyPrefix string) (b *blob.Bucket, changed, key string, data []byte, lines [][]byte) {
	t.Helper()
	ctx := context.Background()
	for _, k := range f.objects {
		if strings.HasSuffix(k, ".jsonl") {
			changed = k
			break
		}
	}
	b, err := blob.OpenBucket(ctx, c.url(inBucket, ""))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	key = copyPrefix + inPrefix + "/" + changed
	data, err = b.ReadAll(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	return b, changed, key, data, bytes.Split(bytes.TrimRight(data, "\n"), []byte("\n"))
}

// checkReads checks each manifest object's read field against want(key).
func checkReads(t *testing.T, manifest string, want func(key string) string) {
	t.Helper()
	data, err := os.ReadFile(manifest)
	if err != nil {
		t.Fatal(err)
	}
	var m writers.Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, o := range m.Objects {
		keys = append(keys, o.Key)
		if o.Read != want(o.Key) {
			t.Errorf("%s: read %q, want %q", o.Key, o.Read, want(o.Key))
		}
	}
	if !slices.IsSorted(keys) || len(keys) == 0 {
		t.Errorf("objects %v", keys)
	}
}
