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
// cold run's, and after one object is overwritten decodes exactly that one,
// with the results of a run without a cache.
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

			// Overwrite one object with other bytes (its last row once more).
			var changed string
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
			defer b.Close()
			key := copyPrefix + inPrefix + "/" + changed
			data, err := b.ReadAll(ctx, key)
			if err != nil {
				t.Fatal(err)
			}
			lines := bytes.Split(bytes.TrimRight(data, "\n"), []byte("\n"))
			data = append(append(data, lines[len(lines)-1]...), '\n')
			if err := b.WriteAll(ctx, key, data, nil); err != nil {
				t.Fatal(err)
			}
			r = f.score(ctx, nil, in, c.url(outBucket, "cache-changed"), "--cache", cacheURL)
			if r.code != 0 || !strings.Contains(r.stdout, "): 1 decoded, "+itoa(n-1)+" from the cache") {
				t.Fatalf("after a change: %s", r)
			}
			r = f.score(ctx, nil, in, c.url(outBucket, "cache-none"))
			if r.code != 0 {
				t.Fatalf("without a cache: %s", r)
			}
			got, _ := download(t, c, "cache-changed")
			want, _ := download(t, c, "cache-none")
			protocoltest.SameOutputs(t, want, got)
			checkReads(t, filepath.Join(got, "manifest.json"), func(k string) string {
				if k == changed {
					return "decoded"
				}
				return "cache"
			})
		})
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

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
