package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gocloud.dev/blob"

	"github.com/crlbatch/crlbatch/pipeline"
)

// TestCloudParquetInput: the sweep's Parquet form (`crlbatch convert`) in
// each server, scored with --pattern '*.parquet', gives the outputs of the
// same Parquet objects scored from the local disk, the input's name aside,
// read both ways the engine reads one: whole, in the one GET that also
// checks its size and hashes it (an object of at most 16 MiB, as every
// object here), and by ranges (the footer, then column chunks: several
// GETs of each object, beside the one that streams it for the size check;
// the hidden --parquet-whole-bytes 1 sends every object that way).
func TestCloudParquetInput(t *testing.T) {
	f := getFixture(t)
	ctx := context.Background()
	local := t.TempDir()
	pq := filepath.Join(local, "pq")
	if r := f.crl(ctx, nil, nil, "convert", filepath.Join(f.sweep, inPrefix), "--out", pq); r.code != 0 {
		t.Fatalf("convert: %s", r)
	}
	ref := filepath.Join(local, "ref")
	if r := f.score(ctx, nil, pq, ref, "--pattern", "*.parquet"); r.code != 0 || !strings.Contains(r.stdout, "0 decoded, 0 from the cache, ") {
		t.Fatalf("local: %s", r)
	}
	for _, name := range []string{"s3", "gcs", "azure"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c := getCloud(t, name)
			convertInStore(t, f, c, pq)
			const prefix = "parquettest"
			if err := upload(ctx, c, pq, prefix+"/"); err != nil {
				t.Fatal(err)
			}
			in := c.url(inBucket, prefix)
			for _, way := range []struct {
				name   string
				flags  []string
				ranges bool
			}{
				{"whole", nil, false},
				{"ranges", []string{"--parquet-whole-bytes", "1"}, true},
			} {
				c.proxy.Reset()
				out := "pq-" + way.name
				r := f.score(ctx, nil, in, c.url(outBucket, out), append([]string{"--pattern", "*.parquet"}, way.flags...)...)
				if r.code != 0 || !strings.Contains(r.stdout, "0 decoded, 0 from the cache, ") || !strings.Contains(r.stdout, " Parquet\n") {
					t.Fatalf("%s: %s\nserver log:\n%s", way.name, r, c.srv.LogTail(20))
				}
				rc := countRequests(c.proxy.Log())
				objects := 0
				for k, n := range rc.gets {
					if strings.HasPrefix(k, prefix+"/") && strings.HasSuffix(k, ".parquet") {
						objects++
						if way.ranges && n < 3 {
							t.Errorf("%s: %s: %d GETs, want the stream, the footer and column chunks", way.name, k, n)
						}
						if !way.ranges && n != 1 {
							t.Errorf("%s: %s: %d GETs, want the one stream", way.name, k, n)
						}
					}
				}
				if objects == 0 {
					t.Fatalf("%s: no Parquet object read: %v", way.name, rc)
				}
				dir, names := download(t, c, out)
				compareWithLocal(t, dir, names, ref, pipeline.Redact(in))
			}
		})
	}
}

// convertInStore: `crlbatch convert` from the store's JSONL sweep into
// the store writes every object the local convert wrote (pq), byte for
// byte (read twice from the store, each object sent a piece at a time with
// its MD5), and nothing else: OUTPUT's claim is gone at the end. So does
// a convert that sends every object from a spill file (the hidden
// --hold-bytes 1: its MD5 and its upload both read from the file), which
// leaves its spill directory empty.
func convertInStore(t *testing.T, f *fixture, c *cloud, pq string) {
	t.Helper()
	spill := t.TempDir()
	for _, way := range []struct {
		out   string
		flags []string
	}{
		{"converted", nil},
		{"converted-spilled", []string{"--hold-bytes", "1", "--spill-dir", spill}},
	} {
		t.Run(way.out, func(t *testing.T) {
			convertedInStore(t, f, c, pq, way.out, way.flags...)
			if ents, err := os.ReadDir(spill); err != nil || len(ents) != 0 {
				t.Fatalf("the spill directory after the convert: %d entries, %v", len(ents), err)
			}
		})
	}
}

func convertedInStore(t *testing.T, f *fixture, c *cloud, pq, out string, flags ...string) {
	t.Helper()
	ctx := context.Background()
	args := append([]string{"convert", c.url(inBucket, inPrefix), "--out", c.url(outBucket, out), "--concurrency", "2"}, flags...)
	if r := f.crl(ctx, nil, nil, args...); r.code != 0 {
		t.Fatalf("convert in the store: %s\nserver log:\n%s", r, c.srv.LogTail(20))
	}
	want := map[string][]byte{}
	err := filepath.WalkDir(pq, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(pq, p)
		data, err := os.ReadFile(p)
		want[filepath.ToSlash(rel)] = data
		return err
	})
	if err != nil || len(want) == 0 {
		t.Fatalf("the local convert: %d objects, %v", len(want), err)
	}
	b, err := blob.OpenBucket(ctx, c.url(outBucket, ""))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	got := 0
	for it := b.List(&blob.ListOptions{Prefix: out + "/"}); ; {
		o, err := it.Next(ctx)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		key := strings.TrimPrefix(o.Key, out+"/")
		data, err := b.ReadAll(ctx, o.Key)
		if err != nil {
			t.Fatal(err)
		}
		w, ok := want[key]
		switch {
		case !ok:
			t.Errorf("%s: written by the convert in the store, not by the local one", key)
		case !bytes.Equal(data, w):
			t.Errorf("%s: %d bytes, the local convert's %d differ", key, len(data), len(w))
		}
		got++
	}
	if got != len(want) {
		t.Errorf("%d objects in the store, the local convert wrote %d", got, len(want))
	}
}

// TestCloudHiveParquet: Parquet objects in Hive-style folders
// (algorithm_id=ppo/seed=0/part.parquet, the files holding neither field)
// in each server give the outputs of the same objects scored from the
// local disk, the input's name aside: the folders are read from the
// object's key, the whole of it, so that an INPUT inside a partition
// (…/algorithm_id=ppo) keeps its family there as on the local disk.
func TestCloudHiveParquet(t *testing.T) {
	f := getFixture(t)
	ctx := context.Background()
	local := t.TempDir()
	hive := filepath.Join(local, "hive")
	hiveSweep(t, f, filepath.Join(local, "flat"), hive)
	subs := []struct{ sub, scored string }{
		{"", "scored 6 runs in 3 families"},
		{"algorithm_id=ppo", "scored 2 runs in 1 families"},
	}
	refs := make([]string, len(subs))
	for i, s := range subs {
		refs[i] = filepath.Join(local, "ref", strings.ReplaceAll(s.sub, "=", "-"), "out")
		if r := f.score(ctx, nil, filepath.Join(hive, s.sub), refs[i], "--pattern", "*.parquet"); r.code != 0 || !strings.Contains(r.stdout, s.scored) {
			t.Fatalf("local %q: want %q: %s", s.sub, s.scored, r)
		}
	}
	for _, name := range []string{"s3", "gcs", "azure"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c := getCloud(t, name)
			const prefix = "hivetest"
			if err := upload(ctx, c, hive, prefix+"/"); err != nil {
				t.Fatal(err)
			}
			for i, s := range subs {
				in := c.url(inBucket, strings.TrimSuffix(prefix+"/"+s.sub, "/"))
				out := "hive-" + strings.ReplaceAll(s.sub, "=", "-")
				r := f.score(ctx, nil, in, c.url(outBucket, out), "--pattern", "*.parquet")
				if r.code != 0 || !strings.Contains(r.stdout, s.scored) {
					t.Fatalf("%q: want %q: %s\nserver log:\n%s", s.sub, s.scored, r, c.srv.LogTail(20))
				}
				dir, names := download(t, c, out)
				compareWithLocal(t, dir, names, refs[i], pipeline.Redact(in))
			}
		})
	}
}

// hiveSweep writes into dst a synthetic sweep (3 families × 2 seeds) as
// Parquet objects in Hive-style folders, algorithm_id=X/seed=N/part.parquet,
// whose rows hold neither field: their JSON Lines, so stripped, in flat,
// converted by `crlbatch convert`.
func hiveSweep(t *testing.T, f *fixture, flat, dst string) {
	t.Helper()
	ctx := context.Background()
	src := flat + "-src"
	if r := f.crl(ctx, nil, nil, "synth", "--out", src, "--seeds", "2", "--steps", "300", "--seed", "7"); r.code != 0 {
		t.Fatalf("synth: %s", r)
	}
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		var out bytes.Buffer
		var algo string
		var seed json.RawMessage
		objectLines(t, p, func(_ string, row map[string]json.RawMessage) {
			if err := json.Unmarshal(row["algorithm_id"], &algo); err != nil {
				t.Fatal(err)
			}
			seed = row["seed"]
			delete(row, "algorithm_id")
			delete(row, "seed")
			b, err := json.Marshal(row)
			if err != nil {
				t.Fatal(err)
			}
			out.Write(append(b, '\n'))
		})
		to := filepath.Join(flat, "algorithm_id="+algo, "seed="+string(seed), "part.jsonl")
		if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			return err
		}
		return os.WriteFile(to, out.Bytes(), 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	if r := f.crl(ctx, nil, nil, "convert", flat, "--out", dst); r.code != 0 {
		t.Fatalf("convert: %s", r)
	}
}
