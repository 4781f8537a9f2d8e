package cache

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
	"gocloud.dev/blob"
	_ "gocloud.dev/blob/fileblob"
)

func openTemp(t *testing.T) (*Cache, string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "c")
	c, err := Open(context.Background(), dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c, dir
}

// TestPutGet: what Put stores Get returns, under its key only, and Has
// says it is there; Key separates its parts.
func TestPutGet(t *testing.T) {
	c, _ := openTemp(t)
	ctx := context.Background()
	k := Key("a", "bc")
	if k == Key("ab", "c") || k == Key("a", "bc", "") || len(k) != 64 {
		t.Fatalf("keys do not separate their parts: %s", k)
	}
	if _, found, err := c.Get(ctx, k); found || err != nil {
		t.Fatalf("empty cache: found %v, %v", found, err)
	}
	if ok, err := c.Has(ctx, k); ok || err != nil {
		t.Fatalf("empty cache: Has = %v, %v", ok, err)
	}
	payload := bytes.Repeat([]byte("payload "), 1000)
	if err := c.Put(ctx, k, Entry{Payload: payload, Hash: 42}); err != nil {
		t.Fatal(err)
	}
	e, found, err := c.Get(ctx, k)
	if !found || err != nil || !bytes.Equal(e.Payload, payload) || e.Hash != 42 {
		t.Fatalf("found %v, %v, hash %d, %d bytes", found, err, e.Hash, len(e.Payload))
	}
	if _, found, _ := c.Get(ctx, Key("other")); found {
		t.Fatal("another key found")
	}
	kc := c.Kind("runs")
	for _, tc := range []struct {
		c    *Cache
		key  string
		want bool
	}{{c, k, true}, {c, Key("other"), false}, {kc, k, false}} {
		if ok, err := tc.c.Has(ctx, tc.key); ok != tc.want || err != nil {
			t.Errorf("Has(%s) = %v, %v; want %v", tc.c.URL(tc.key), ok, err, tc.want)
		}
	}
	if err := kc.Put(ctx, k, Entry{Payload: payload}); err != nil {
		t.Fatal(err)
	}
	if ok, err := kc.Has(ctx, k); !ok || err != nil {
		t.Errorf("a Kind's entry: Has = %v, %v", ok, err)
	}
}

// TestKindLayout: an object's entry sits in a folder named by its key's
// first two hex digits; a Kind's entries sit side by side in the Kind's
// own folder, with no folder per entry (a new folder is a mkdir, ~0.5 ms
// of CPU on the benchmark machine, and a young cache's nightly rerun wrote
// its ~30 kind entries mostly into new ones: issue 15). Stats and Prune
// count and remove both, and entries of the older sharded layout of a
// Kind too.
func TestKindLayout(t *testing.T) {
	c, dir := openTemp(t)
	ctx := context.Background()
	v := fmt.Sprintf("v%d", FormatVersion)
	obj, run := Key("object"), Key("run")
	cells := c.Kind("cells")
	if err := c.Put(ctx, obj, Entry{Payload: []byte("o")}); err != nil {
		t.Fatal(err)
	}
	if err := cells.Put(ctx, run, Entry{Payload: []byte("r")}); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{filepath.Join(dir, v, obj[:2], obj+EntrySuffix), filepath.Join(dir, v, "cells", run+EntrySuffix)} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("no entry at %s: %v", p, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, v, "cells", run[:2])); err == nil {
		t.Errorf("a Kind's entry in a folder of its own")
	}
	if got := cells.URL(run); got != filepath.Join(dir, v, "cells", run+EntrySuffix) && !strings.HasSuffix(got, "/"+v+"/cells/"+run+EntrySuffix) {
		t.Errorf("URL %s", got)
	}
	if e, found, err := cells.Get(ctx, run); !found || err != nil || string(e.Payload) != "r" {
		t.Errorf("the Kind's entry read back: %v, %v, %q", found, err, e.Payload)
	}
	// An entry where the sharded layout kept it: listed, pruned, not read.
	old := filepath.Join(dir, v, "cells", run[:2], run+EntrySuffix)
	if err := os.MkdirAll(filepath.Dir(old), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(old, []byte("old layout"), 0o644); err != nil {
		t.Fatal(err)
	}
	st, err := c.Stats(ctx)
	if err != nil || st.Entries != 3 {
		t.Fatalf("stats %+v, %v: want 3 entries", st, err)
	}
	if _, err := c.Prune(ctx, 0, time.Time{}); err != nil {
		t.Fatal(err)
	}
	if st, err := c.Stats(ctx); err != nil || st.Entries != 0 {
		t.Errorf("after pruning to 0 bytes: %+v, %v", st, err)
	}
}

// TestGetRefusesDamage: every byte flipped, every truncation, another
// version and an entry copied under another key are ErrCorrupt.
func TestGetRefusesDamage(t *testing.T) {
	c, dir := openTemp(t)
	ctx := context.Background()
	k := Key("x")
	if err := c.Put(ctx, k, Entry{Payload: []byte("some encoded object"), Hash: 7}); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, fmt.Sprintf("v%d", FormatVersion), k[:2], k+EntrySuffix)
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	check := func(what string, data []byte, key string) {
		t.Helper()
		p := filepath.Join(dir, fmt.Sprintf("v%d", FormatVersion), key[:2], key+EntrySuffix)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, found, err := c.Get(ctx, key); !found || !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: found %v, %v", what, found, err)
		}
	}
	for i := range good {
		b := bytes.Clone(good)
		b[i] ^= 1
		check("flipped byte", b, k)
	}
	for n := range len(good) {
		check("truncated", good[:n], k)
	}
	other := bytes.Clone(good)
	other[len(magic)] = FormatVersion + 1
	check("another version", other, k)
	check("another key", good, Key("y"))
	if err := os.WriteFile(path, good, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Get(ctx, k); err != nil {
		t.Fatalf("restored: %v", err)
	}
}

// TestStatsPrune: stats count every entry; prune removes the oldest first.
func TestStatsPrune(t *testing.T) {
	c, dir := openTemp(t)
	ctx := context.Background()
	var keys []string
	base := time.Now().Add(-48 * time.Hour)
	for i := range 4 {
		k := Key(string(rune('a' + i)))
		keys = append(keys, k)
		if err := c.Put(ctx, k, Entry{Payload: bytes.Repeat([]byte{byte(i)}, 100)}); err != nil {
			t.Fatal(err)
		}
		mod := base.Add(time.Duration(i) * 12 * time.Hour)
		if err := os.Chtimes(filepath.Join(dir, fmt.Sprintf("v%d", FormatVersion), k[:2], k+EntrySuffix), mod, mod); err != nil {
			t.Fatal(err)
		}
	}
	s, err := c.Stats(ctx)
	if err != nil || s.Entries != 4 || s.Bytes <= 0 || s.Oldest.Sub(base).Abs() > time.Second || s.Newest.Sub(base.Add(36*time.Hour)).Abs() > time.Second {
		t.Fatalf("stats %+v, %v", s, err)
	}
	per := s.Bytes / 4
	removed, err := c.Prune(ctx, -1, base.Add(13*time.Hour))
	if err != nil || removed.Entries != 2 {
		t.Fatalf("older than 35 h: removed %+v, %v", removed, err)
	}
	for i, k := range keys {
		_, found, _ := c.Get(ctx, k)
		if found != (i >= 2) {
			t.Errorf("entry %d: found %v", i, found)
		}
	}
	removed, err = c.Prune(ctx, per, time.Time{})
	if err != nil || removed.Entries != 1 {
		t.Fatalf("--max-bytes one entry: removed %+v, %v", removed, err)
	}
	if _, found, _ := c.Get(ctx, keys[3]); !found {
		t.Error("the newest entry was removed")
	}
	if s, _ := c.Stats(ctx); s.Entries != 1 || s.Bytes != per {
		t.Errorf("left %+v", s)
	}
}

func TestResolveAuto(t *testing.T) {
	got, err := Resolve(Auto)
	dir, derr := os.UserCacheDir()
	if (err == nil) != (derr == nil) || (err == nil && got != filepath.Join(dir, "crlbatch")) {
		t.Errorf("auto: %q %v", got, err)
	}
	if got, _ := Resolve("s3://b/p"); got != "s3://b/p" {
		t.Errorf("a URL: %q", got)
	}
}

// TestPutCancelledLeavesNothing: a Put whose context is cancelled
// publishes no entry and leaves no temporary file behind.
func TestPutCancelledLeavesNothing(t *testing.T) {
	c, dir := openTemp(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	k := Key("cancelled")
	if err := c.Put(ctx, k, Entry{Payload: []byte("p")}); err == nil {
		t.Fatal("a cancelled Put succeeded")
	}
	if _, found, err := c.Get(context.Background(), k); found || err != nil {
		t.Fatalf("after a cancelled Put: found %v, %v", found, err)
	}
	var files []string
	filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			files = append(files, path)
		}
		return nil
	})
	if len(files) > 0 {
		t.Errorf("a cancelled Put left %v", files)
	}
}

// TestGetReadsChecksummedPayloads: an entry whose zstd frame carries its
// own checksum (as Put wrote them before it left the checksum to the
// entry's own checksum) is read back as it was written.
func TestGetReadsChecksummedPayloads(t *testing.T) {
	c, _ := openTemp(t)
	ctx := context.Background()
	old, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1), zstd.WithEncoderCRC(true))
	if err != nil {
		t.Fatal(err)
	}
	c.enc = old
	payload := bytes.Repeat([]byte("an older entry "), 500)
	k := Key("crc")
	if err := c.Put(ctx, k, Entry{Payload: payload, Hash: 7}); err != nil {
		t.Fatal(err)
	}
	e, found, err := c.Get(ctx, k)
	if err != nil || !found || !bytes.Equal(e.Payload, payload) || e.Hash != 7 {
		t.Fatalf("an entry with a checksummed payload: found %v, %v, %d bytes", found, err, len(e.Payload))
	}
}

// TestSealed: an entry Seal compressed as its payload was written, then
// PutSealed published, is read back by Get as Put's are (payloads within
// one chunk, across chunks and beyond the stream's window); the same
// payload sealed twice gives the same bytes; it is refused when damaged,
// as Put's; a write that fails, or that writes other than the length it
// said, seals nothing and publishes nothing.
func TestSealed(t *testing.T) {
	c, dir := openTemp(t)
	ctx := context.Background()
	pieces := func(p []byte) func(w io.Writer) error {
		return func(w io.Writer) error {
			for i := 0; i < len(p); i += 1000 {
				if _, err := w.Write(p[i:min(i+1000, len(p))]); err != nil {
					return err
				}
			}
			return nil
		}
	}
	for _, n := range []int{0, 1, 5000, sealChunk + 17, 3*streamWindow + 5} {
		payload := make([]byte, n)
		for i := range payload {
			payload[i] = byte(i*i>>7) ^ byte(i/4096)
		}
		k := Key("sealed", fmt.Sprint(n))
		s, err := c.Seal(k, int64(n), pieces(payload))
		if err != nil {
			t.Fatalf("%d bytes: %v", n, err)
		}
		again, err := c.Seal(k, int64(n), pieces(payload))
		if err != nil || !bytes.Equal(bytes.Join(again.chunks, nil), bytes.Join(s.chunks, nil)) {
			t.Fatalf("%d bytes sealed twice: other bytes (%v)", n, err)
		}
		if err := c.PutSealed(ctx, s, uint64(n)+9); err != nil {
			t.Fatal(err)
		}
		e, found, err := c.Get(ctx, k)
		if !found || err != nil || !bytes.Equal(e.Payload, payload) || e.Hash != uint64(n)+9 {
			t.Fatalf("%d bytes: found %v, %v, hash %d, %d bytes", n, found, err, e.Hash, len(e.Payload))
		}
		path := filepath.Join(dir, fmt.Sprintf("v%d", FormatVersion), k[:2], k+EntrySuffix)
		good, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, at := range []int{len(magic) + 2, len(magic) + headerLen + 1, len(good) / 2, len(good) - 1} {
			b := bytes.Clone(good)
			b[at] ^= 0x10
			os.WriteFile(path, b, 0o644)
			if _, found, err := c.Get(ctx, k); !found || !errors.Is(err, ErrCorrupt) {
				t.Errorf("%d bytes, byte %d flipped: found %v, %v", n, at, found, err)
			}
		}
		os.WriteFile(path, good[:len(good)-40], 0o644)
		if _, found, err := c.Get(ctx, k); !found || !errors.Is(err, ErrCorrupt) {
			t.Errorf("%d bytes, truncated: found %v, %v", n, found, err)
		}
	}
	boom := errors.New("boom")
	for _, tc := range []struct {
		name  string
		n     int64
		write func(w io.Writer) error
		want  error
	}{
		{"write fails", 10, func(w io.Writer) error { w.Write([]byte("abc")); return boom }, boom},
		{"fewer bytes than said", 10, pieces([]byte("abc")), nil},
		{"more bytes than said", 2, pieces([]byte("abc")), nil},
	} {
		k := Key("unsealed", tc.name)
		s, err := c.Seal(k, tc.n, tc.write)
		if err == nil || s != nil || tc.want != nil && !errors.Is(err, tc.want) {
			t.Errorf("%s: sealed %v, %v", tc.name, s != nil, err)
		}
		if _, found, err := c.Get(ctx, k); found || err != nil {
			t.Errorf("%s: found %v, %v", tc.name, found, err)
		}
	}
	// The encoders are reused after a failed Seal.
	s, err := c.Seal(Key("after"), 3, pieces([]byte("xyz")))
	if err != nil || c.PutSealed(ctx, s, 1) != nil {
		t.Fatalf("after failed Seals: %v", err)
	}
	if e, _, err := c.Get(ctx, Key("after")); err != nil || string(e.Payload) != "xyz" {
		t.Fatalf("after failed Seals: %q, %v", e.Payload, err)
	}
}

// TestPutSealedCancelledLeavesNothing: a PutSealed whose context is
// cancelled publishes no entry and leaves no file behind.
func TestPutSealedCancelledLeavesNothing(t *testing.T) {
	c, dir := openTemp(t)
	k := Key("cancelled sealed")
	payload := bytes.Repeat([]byte("p"), 3*sealChunk)
	s, err := c.Seal(k, int64(len(payload)), func(w io.Writer) error { _, err := w.Write(payload); return err })
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := c.PutSealed(ctx, s, 0); err == nil {
		t.Fatal("a cancelled PutSealed succeeded")
	}
	var files []string
	filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			files = append(files, path)
		}
		return nil
	})
	if len(files) > 0 {
		t.Errorf("a cancelled PutSealed left %v", files)
	}
}

// unfinishedWrite starts the write of key's entry through the cache's own
// bucket and leaves it open, as a job killed while writing leaves it: the
// local driver's temporary file beside the entry's name, never renamed.
// It returns that file's path, its modification time set to mod.
func unfinishedWrite(t *testing.T, c *Cache, dir, key string, size int, mod time.Time) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	w, err := c.b.NewWriter(ctx, c.name(key), &blob.WriterOptions{ContentType: "application/octet-stream"}) // as publish writes
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(bytes.Repeat([]byte{7}, size)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); w.Close() }) // aborted: nothing published
	name := filepath.Join(dir, filepath.FromSlash(c.name(key)))
	temps, err := filepath.Glob(name + ".*.tmp")
	if err != nil || len(temps) != 1 {
		t.Fatalf("the unfinished write of %s left %v (%v), want one temporary file", name, temps, err)
	}
	if fi, err := os.Stat(temps[0]); err != nil || fi.Size() != int64(size) {
		t.Fatalf("temporary file %s: %v, %v", temps[0], fi, err)
	}
	if err := os.Chtimes(temps[0], mod, mod); err != nil {
		t.Fatal(err)
	}
	return temps[0]
}

// TestPruneUnfinishedWrites: the temporary files of writes a killed job
// left are counted by Stats apart from the entries, and Prune removes
// those last written over TempGrace ago, whatever its bounds, and leaves
// younger ones (a write under way in another job) and files that are not
// the cache's.
func TestPruneUnfinishedWrites(t *testing.T) {
	ctx := context.Background()
	now := time.Now()
	for _, tc := range []struct {
		name      string
		maxBytes  int64
		olderThan time.Time
		// removedEntries is how many of the two entries the bounds remove.
		removedEntries int
	}{
		{"no bounds", -1, time.Time{}, 0},
		{"max-bytes above the entries", 1 << 30, time.Time{}, 0},
		{"older-than now", -1, now.Add(time.Minute), 2},
		{"max-bytes 0", 0, time.Time{}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, dir := openTemp(t)
			for _, k := range []string{Key("kept a"), Key("kept b")} {
				if err := c.Put(ctx, k, Entry{Payload: []byte(k)}); err != nil {
					t.Fatal(err)
				}
			}
			stale := unfinishedWrite(t, c, dir, Key("killed at night"), 3000, now.Add(-TempGrace-time.Minute))
			young := unfinishedWrite(t, c, dir, Key("being written"), 500, now.Add(-TempGrace+10*time.Minute))
			// Not the cache's: a temporary-looking file of another name,
			// and one whose stamp is not hex.
			foreign := []string{filepath.Join(dir, "notes.1a2b.tmp"), filepath.Join(dir, "v2", "zz", "x"+EntrySuffix+".1g.tmp")}
			for _, f := range foreign {
				if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(f, []byte("x"), 0o644); err != nil {
					t.Fatal(err)
				}
				old := now.Add(-48 * time.Hour)
				if err := os.Chtimes(f, old, old); err != nil {
					t.Fatal(err)
				}
			}

			s, err := c.Stats(ctx)
			if err != nil || s.Entries != 2 || s.Temps != 2 || s.TempBytes != 3500 {
				t.Fatalf("stats %+v, %v: want 2 entries and 2 temporary files of 3500 bytes", s, err)
			}
			removed, err := c.Prune(ctx, tc.maxBytes, tc.olderThan)
			if err != nil {
				t.Fatal(err)
			}
			if removed.Temps != 1 || removed.TempBytes != 3000 || removed.Entries != tc.removedEntries {
				t.Errorf("removed %+v: want the stale temporary file (3000 bytes) and %d entries", removed, tc.removedEntries)
			}
			if _, err := os.Stat(stale); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the stale temporary file is still there (%v)", err)
			}
			for _, f := range append([]string{young}, foreign...) {
				if _, err := os.Stat(f); err != nil {
					t.Errorf("%s was removed: %v", f, err)
				}
			}
			s, err = c.Stats(ctx)
			if err != nil || s.Entries != 2-tc.removedEntries || s.Temps != 1 || s.TempBytes != 500 {
				t.Errorf("left %+v, %v", s, err)
			}
		})
	}
}

func TestIsTemp(t *testing.T) {
	for key, want := range map[string]bool{
		"v2/fa/fa42" + EntrySuffix + ".18ee0b3927f63a37.tmp":   true,
		"p/v2/runs/ab" + EntrySuffix + ".0.tmp":                true,
		"v2/fa/fa42" + EntrySuffix:                             false,
		"v2/fa/fa42" + EntrySuffix + ".tmp":                    false, // no stamp
		"v2/fa/fa42" + EntrySuffix + "..tmp":                   false,
		"v2/fa/fa42" + EntrySuffix + ".18EE.tmp":               false, // fileblob writes lower-case hex
		"v2/fa/fa42" + EntrySuffix + ".18ee0b3927f63a37.tmp/x": false,
		"v2/fa/fa42.parquet.18ee.tmp":                          false,
		"notes.1a2b.tmp":                                       false,
	} {
		if got := isTemp(key); got != want {
			t.Errorf("isTemp(%q) = %v, want %v", key, got, want)
		}
	}
}

// TestIsEntryName: the names whose incomplete S3 uploads Stats counts and
// Prune aborts (with the cache's prefix cut off).
func TestIsEntryName(t *testing.T) {
	k := Key("an object")
	for rel, want := range map[string]bool{
		"v2/" + k[:2] + "/" + k + EntrySuffix:       true,
		"v2/runs/" + k + EntrySuffix:                true,
		"v1/" + k[:2] + "/" + k + EntrySuffix:       true, // another version: Prune removes its entries too
		"v12/index/" + k + EntrySuffix:              true,
		"v2/" + k + EntrySuffix:                     false, // no folder
		"v2//" + k + EntrySuffix:                    false,
		"v2/ab/cd/" + k + EntrySuffix:               false,
		"x2/ab/" + k + EntrySuffix:                  false,
		"v/ab/" + k + EntrySuffix:                   false,
		"v2/ab/" + k[:63] + EntrySuffix:             false,
		"v2/ab/" + strings.ToUpper(k) + EntrySuffix: false,
		"v2/ab/" + k + EntrySuffix + ".x":           false,
		"v2/ab/" + k + ".parquet":                   false,
		"notes/big.bin":                             false,
	} {
		if got := isEntryName(rel); got != want {
			t.Errorf("isEntryName(%q) = %v, want %v", rel, got, want)
		}
	}
}
