package protocoltest

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/crlbatch/crlbatch/pipeline"
	"github.com/crlbatch/crlbatch/readers"
	"github.com/crlbatch/crlbatch/scoring"
)

// inputForms checks the other ways a protocol's objects reach its runs,
// through the seam alone: the decoded-object cache (a warm rerun, served
// from --cache when the decoder is a scoring.Codec, writes the cold run's
// bytes; after lines were appended to the objects, a scoring.Resumer's are
// continued from their entries and any other's decoded again, to the
// bytes of a run without a cache) and Parquet traces (the example converted by crlbatch
// convert scores to the bytes of its JSON Lines objects under the same
// keys).
func inputForms(t *testing.T, c Config, p scoring.Protocol, score func(t *testing.T, in string, extra ...string) (string, int, string, string)) {
	t.Run("WarmCacheSameBytes", func(t *testing.T) {
		j, err := p.New(scoring.DefaultValues(p), scoring.Env{Reader: readers.Options{IdentityFields: p.Describe().Identity}})
		if err != nil {
			t.Fatal(err)
		}
		_, codec := j.Decoder().(scoring.Codec)
		cache := filepath.Join(t.TempDir(), "cache")
		cold, code, _, stderr := score(t, c.Example, "--cache", cache)
		if code != 0 {
			t.Fatalf("cold run with --cache: exit %d: %s", code, stderr)
		}
		warm, code, _, stderr := score(t, c.Example, "--cache", cache)
		if code != 0 {
			t.Fatalf("warm run: exit %d: %s", code, stderr)
		}
		want := pipeline.ReadCache
		if !codec {
			want = pipeline.ReadDecoded
			if !strings.Contains(stderr, "--cache is ignored") {
				t.Errorf("a decoder without a codec: no warning that --cache is ignored: %s", stderr)
			}
		}
		for _, o := range reads(t, warm) {
			if o != want {
				t.Errorf("warm run: an object read %q, want %q", o, want)
			}
		}
		SameOutputs(t, cold, warm)
	})

	t.Run("AppendedSameBytes", func(t *testing.T) {
		// Each plain object holds three quarters of its lines the first
		// night and all of them the next: a Resumer's objects are
		// "appended" to (their earlier lines from --cache) when they held
		// pipeline.AppendedMinBytes or more, any other decoder's (or a
		// smaller object) decoded again; the results are those of a run
		// without a cache.
		j, err := p.New(scoring.DefaultValues(p), scoring.Env{Reader: readers.Options{IdentityFields: p.Describe().Identity}})
		if err != nil {
			t.Fatal(err)
		}
		_, codec := j.Decoder().(scoring.Codec)
		_, resumer := j.Decoder().(scoring.Resumer)
		tmp := t.TempDir()
		in := filepath.Join(tmp, "in")
		full := map[string][]byte{} // the objects that grow, whole
		early := map[string]int{}   // and how many of their bytes the first night holds
		err = filepath.WalkDir(c.Example, func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			rel, _ := filepath.Rel(c.Example, path)
			dst := filepath.Join(in, rel)
			if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
				return err
			}
			data := read(t, path)
			lines := bytes.SplitAfter(data, []byte("\n"))
			if _, format, err := readers.Open(bytes.NewReader(data)); err == nil && format == readers.Plain &&
				!readers.IsParquet(data) && len(lines) > 2 && bytes.HasSuffix(data, []byte("\n")) {
				full[rel] = data
				data = bytes.Join(lines[:len(lines)*3/4], nil)
				early[rel] = len(data)
			}
			return os.WriteFile(dst, data, 0o644)
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(full) == 0 {
			t.Skip("the example has no plain JSON Lines object")
		}
		cache := filepath.Join(tmp, "cache")
		if _, code, _, stderr := score(t, in, "--cache", cache); code != 0 {
			t.Fatalf("the first night: exit %d: %s", code, stderr)
		}
		for rel, data := range full {
			f, err := os.OpenFile(filepath.Join(in, rel), os.O_WRONLY|os.O_APPEND, 0)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := f.Write(data[early[rel]:]); err != nil {
				t.Fatal(err)
			}
			if err := f.Close(); err != nil {
				t.Fatal(err)
			}
		}
		warm, code, _, stderr := score(t, in, "--cache", cache)
		if code != 0 {
			t.Fatalf("the next night: exit %d: %s", code, stderr)
		}
		none, code, _, stderr := score(t, in)
		if code != 0 {
			t.Fatalf("without a cache: exit %d: %s", code, stderr)
		}
		grew, resumable := map[string]bool{}, map[string]bool{}
		for rel := range full {
			grew[filepath.ToSlash(rel)] = true
			resumable[filepath.ToSlash(rel)] = early[rel] >= pipeline.AppendedMinBytes
		}
		for key, how := range readsByKey(t, warm) {
			want := pipeline.ReadCache
			switch {
			case !codec:
				want = pipeline.ReadDecoded
			case grew[key] && resumer && resumable[key]:
				want = pipeline.ReadAppended
			case grew[key]:
				want = pipeline.ReadDecoded
			}
			if how != want {
				t.Errorf("the next night: %s read %q, want %q", key, how, want)
			}
		}
		SameOutputs(t, none, warm)
	})

	t.Run("ParquetSameBytes", func(t *testing.T) {
		tmp := t.TempDir()
		in := filepath.Join(tmp, "in")
		err := filepath.WalkDir(c.Example, func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			rel, _ := filepath.Rel(c.Example, path)
			dst := filepath.Join(in, filepath.FromSlash(pipeline.ConvertedKey(filepath.ToSlash(rel))))
			if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
				return err
			}
			return os.WriteFile(dst, read(t, path), 0o644)
		})
		if err != nil {
			t.Fatal(err)
		}
		jsonl, code, _, stderr := score(t, in, "--pattern", "*.parquet")
		if code != 0 {
			t.Fatalf("JSON Lines under Parquet names: exit %d: %s", code, stderr)
		}
		if err := os.RemoveAll(in); err != nil {
			t.Fatal(err)
		}
		if code, _, stderr := c.Command("convert", c.Example, "--out", in); code != 0 {
			t.Fatalf("convert: exit %d: %s", code, stderr)
		}
		pq, code, _, stderr := score(t, in, "--pattern", "*.parquet")
		if code != 0 {
			t.Fatalf("Parquet: exit %d: %s", code, stderr)
		}
		for _, o := range reads(t, pq) {
			if o != pipeline.ReadParquet {
				t.Errorf("an object read %q, want parquet", o)
			}
		}
		SameOutputs(t, jsonl, pq)
	})
}

// readsByKey says how each object of the result in out was read, by key.
func readsByKey(t *testing.T, out string) map[string]string {
	t.Helper()
	var m struct {
		Objects []struct {
			Key  string `json:"key"`
			Read string `json:"read"`
		} `json:"objects"`
	}
	if err := json.Unmarshal(read(t, filepath.Join(out, "manifest.json")), &m); err != nil {
		t.Fatalf("manifest.json: %v", err)
	}
	byKey := map[string]string{}
	for _, o := range m.Objects {
		byKey[o.Key] = o.Read
	}
	return byKey
}

// reads lists how each object of the result in out was read.
func reads(t *testing.T, out string) []string {
	t.Helper()
	var m struct {
		Objects []struct {
			Read string `json:"read"`
		} `json:"objects"`
	}
	if err := json.Unmarshal(read(t, filepath.Join(out, "manifest.json")), &m); err != nil {
		t.Fatalf("manifest.json: %v", err)
	}
	if len(m.Objects) == 0 {
		t.Fatal("manifest.json lists no object")
	}
	var out2 []string
	for _, o := range m.Objects {
		out2 = append(out2, o.Read)
	}
	return out2
}

// SameOutputs fails unless the result folders a and b hold the same files,
// byte-identical but for manifest.json (which says how each object was
// read, and when).
func SameOutputs(t *testing.T, a, b string) {
	t.Helper()
	names := list(t, a)
	if got := list(t, b); strings.Join(got, " ") != strings.Join(names, " ") {
		t.Fatalf("files %v and %v", names, got)
	}
	if len(names) == 0 {
		t.Fatalf("no files in %s", a)
	}
	for _, n := range names {
		if n != "manifest.json" && !bytes.Equal(read(t, filepath.Join(a, n)), read(t, filepath.Join(b, n))) {
			t.Errorf("%s differs", n)
		}
	}
}
