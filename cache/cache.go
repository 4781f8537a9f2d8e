package cache

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/klauspost/compress/zstd"
	"github.com/zeebo/xxh3"
	"gocloud.dev/blob"
	"gocloud.dev/gcerrors"

	"github.com/crlbatch/crlbatch/internal/testhook"
	"github.com/crlbatch/crlbatch/storage"
)

// FormatVersion is the version of the entry format (the envelope around a
// decoder's encoding): raise it when the envelope changes. It is part of
// every entry's name and header. Version 3: the object hash in the header
// (and in the engine's index and tails entries) is XXH3-64, twice as fast
// as version 2's xxHash64 (version 1 held a CRC-64, about 8× slower than
// that), and the entry's checksum XXH3-128 instead of a SHA-256 (sumLen);
// hashes of one kind cannot be compared with another's, so entries of an
// earlier version are not read (Prune removes them like any other).
const FormatVersion = 3

// Auto is the --cache value naming a folder under the user's cache
// directory (os.UserCacheDir).
const Auto = "auto"

// EntrySuffix ends the name of every entry.
const EntrySuffix = ".crlc"

var magic = []byte("CRLBATCH-CACHE\n")

// ErrCorrupt is the error of an entry that is not to be trusted: damaged,
// truncated, of another format version or stored under another key.
var ErrCorrupt = errors.New("cache entry is corrupt")

// Cache is an open cache.
type Cache struct {
	loc   storage.Location
	b     *blob.Bucket
	close func() error

	enc *zstd.Encoder
	dec *zstd.Decoder
	str *streams // Seal's encoders, shared with the Kinds

	kind string // "" or a Kind's folder, with its slash
	sub  bool   // a Kind of another Cache, which owns the bucket

	h *health // shared with the Kinds
}

// Resolve turns the --cache value into a location: Auto is
// <os.UserCacheDir()>/crlbatch.
func Resolve(raw string) (string, error) {
	if raw != Auto {
		return raw, nil
	}
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("--cache auto: %w", err)
	}
	return filepath.Join(dir, "crlbatch"), nil
}

// Open opens the cache at raw (a folder, a blob URL or Auto) through op
// (nil: gocloud.dev's URL mux). Nothing is created until an entry is
// written.
func Open(ctx context.Context, raw string, op storage.Opener) (*Cache, error) {
	where, err := Resolve(raw)
	if err != nil {
		return nil, err
	}
	loc, err := storage.ParseLocation(where, true)
	if err != nil {
		return nil, err
	}
	if loc.Local {
		if loc.Path != "" && loc.Prefix == "" {
			return nil, storage.Usagef("--cache %s is a file: want a folder or prefix", loc)
		}
		// Entries are written to a temporary file next to their final
		// name, then renamed (storage.OpenBucket).
	}
	b, closeFn, err := storage.OpenBucket(ctx, op, loc)
	if err != nil {
		return nil, err
	}
	// No zstd checksum in a payload: the entry's checksum covers it.
	enc, _ := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1), zstd.WithEncoderCRC(false))
	dec, _ := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(1<<36))
	c := &Cache{loc: loc, b: b, close: closeFn, enc: enc, dec: dec, str: &streams{}, h: &health{}}
	c.StallAfter(storage.DefaultRetry().IdleTimeout)
	return c, nil
}

// Remote says whether the cache is on a store reached over the network
// (S3, GCS, Azure Blob): there an entry's read or write costs a round trip,
// not the CPU a local file's does.
func (c *Cache) Remote() bool { return c.loc.Remote() }

// Close closes the cache's bucket.
func (c *Cache) Close() error {
	if c.sub {
		return nil
	}
	c.dec.Close()
	return c.close()
}

// String is the cache's location, redacted.
func (c *Cache) String() string { return c.loc.String() }

// Key is the key of an entry: the SHA-256, in hex, of parts (each
// length-prefixed, so that no two lists of parts give one key) and
// FormatVersion.
func Key(parts ...string) string {
	h := sha256.New()
	var n [8]byte
	binary.LittleEndian.PutUint64(n[:], FormatVersion)
	h.Write(n[:])
	for _, p := range parts {
		binary.LittleEndian.PutUint64(n[:], uint64(len(p)))
		h.Write(n[:])
		h.Write([]byte(p))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Kind returns the same cache whose entries are kept apart, under
// <prefix>v<FormatVersion>/<kind>/ (the engine's run-level entries and
// object indexes); its Close does nothing.
func (c *Cache) Kind(kind string) *Cache {
	return &Cache{loc: c.loc, b: c.b, close: func() error { return nil }, enc: c.enc, dec: c.dec, str: c.str, kind: kind + "/", sub: true, h: c.h}
}

// name is the blob key of the entry of key: an object's entry in a
// folder of its key's first two hex digits, a Kind's directly in the
// Kind's folder (doc.go).
func (c *Cache) name(key string) string {
	if c.kind != "" {
		return fmt.Sprintf("%sv%d/%s%s%s", c.loc.Prefix, FormatVersion, c.kind, key, EntrySuffix)
	}
	return fmt.Sprintf("%sv%d/%s/%s%s", c.loc.Prefix, FormatVersion, key[:2], key, EntrySuffix)
}

// URL is where the entry of key is stored.
func (c *Cache) URL(key string) string { return c.loc.ObjectURL(c.name(key)) }

// Entry is what an entry holds: a decoder's encoding of one object and a
// hash of the object's bytes.
type Entry struct {
	Payload []byte
	Hash    uint64
}

// Get reads the entry of key. found is false when there is none; an entry
// that is there but not to be trusted is an error matching ErrCorrupt
// (the caller rebuilds it); an error matching ErrOff is a read not made
// (health.go); any other error is the store's.
func (c *Cache) Get(ctx context.Context, key string) (e Entry, found bool, err error) {
	err = c.read(ctx, func(ctx context.Context, touch func()) error {
		data, err := storage.ReadAll(ctx, c.b, c.name(key), touch)
		if err != nil {
			if gcerrors.Code(err) == gcerrors.NotFound {
				return nil
			}
			return storage.RedactErr(err)
		}
		found = true
		e, err = c.open(key, data)
		return err
	})
	return e, found, err
}

// Has says whether there is an entry of key, without reading it (one
// round trip on an object store: a HEAD). It says nothing of whether the
// entry can be trusted: Get does.
func (c *Cache) Has(ctx context.Context, key string) (ok bool, err error) {
	err = c.read(ctx, func(ctx context.Context, _ func()) error {
		var err error
		ok, err = c.b.Exists(ctx, c.name(key))
		return storage.RedactErr(err)
	})
	return ok, err
}

// Entry layout: magic, the format version (uint32), the key (64 hex
// bytes), the object's hash (uint64), the length of the zstd-compressed
// payload (uint64), the payload, then the checksum of everything before it
// (sumLen bytes, sum).
const headerLen = 4 + 64 + 8 + 8

// sumLen is the length of an entry's checksum: XXH3-128, big-endian
// (version 2's was a SHA-256). It finds damage, not tampering: whoever can
// write an entry can write its checksum, whatever the function; a
// non-cryptographic 128-bit hash finds a flipped byte or a cut as surely,
// at ~10× the speed.
const sumLen = 16

// sum is the checksum of an entry's bytes before it.
func sum(parts ...[]byte) [sumLen]byte {
	h := xxh3.New()
	for _, p := range parts {
		h.Write(p)
	}
	return h.Sum128().Bytes()
}

func (c *Cache) open(key string, data []byte) (Entry, error) {
	fail := func(format string, args ...any) (Entry, error) {
		return Entry{}, fmt.Errorf("%w: %s", ErrCorrupt, fmt.Sprintf(format, args...))
	}
	if !bytes.HasPrefix(data, magic) {
		return fail("not a crlbatch cache entry")
	}
	rest := data[len(magic):]
	if len(rest) < headerLen+sumLen {
		return fail("truncated: %d bytes", len(data))
	}
	if v := binary.LittleEndian.Uint32(rest); v != FormatVersion {
		return fail("written by format version %d, not %d", v, FormatVersion)
	}
	body, want := data[:len(data)-sumLen], data[len(data)-sumLen:]
	if got := sum(body); !bytes.Equal(got[:], want) {
		return fail("checksum mismatch (damaged or truncated)")
	}
	if string(rest[4:68]) != key {
		return fail("stored under another key")
	}
	hash := binary.LittleEndian.Uint64(rest[68:])
	n := binary.LittleEndian.Uint64(rest[76:])
	z := rest[headerLen : len(rest)-sumLen]
	if uint64(len(z)) != n {
		return fail("payload of %d bytes, header says %d", len(z), n)
	}
	payload, err := c.dec.DecodeAll(z, nil)
	if err != nil {
		return fail("payload: %v", err)
	}
	return Entry{Payload: payload, Hash: hash}, nil
}

// Put writes the entry of key. The entry's name is its key, and its
// contents depend on the key alone, so that two jobs writing one entry at
// once write the same bytes; each write goes to a temporary name and is
// published whole (a rename on a local disk, a single upload on a blob
// store), so that a reader never sees part of one.
func (c *Cache) Put(ctx context.Context, key string, e Entry) error {
	// The payload compressed straight after the header, into a buffer
	// with room for the most it can take (no copy of it, no growing).
	buf := make([]byte, 0, len(magic)+headerLen+c.enc.MaxEncodedSize(len(e.Payload))+sumLen)
	buf = append(buf, magic...)
	buf = binary.LittleEndian.AppendUint32(buf, FormatVersion)
	buf = append(buf, key...)
	buf = binary.LittleEndian.AppendUint64(buf, e.Hash)
	buf = binary.LittleEndian.AppendUint64(buf, 0) // the payload's length, below
	start := len(buf)
	buf = c.enc.EncodeAll(e.Payload, buf)
	binary.LittleEndian.PutUint64(buf[start-8:start], uint64(len(buf)-start))
	s := sum(buf)
	buf = append(buf, s[:]...)
	return c.publish(ctx, key, buf)
}

// publish writes the entry of key, its bytes in parts, under its name.
// Not bucket.WriteAll: it hashes the entry with MD5 twice (its
// ContentMD5, then the writer's check of it), what the entry's own
// checksum already guards, read back by Get. A failed write is cancelled
// before Close, so that nothing is published.
func (c *Cache) publish(ctx context.Context, key string, parts ...[]byte) error {
	var n int64
	for _, p := range parts {
		n += int64(len(p))
	}
	return c.written(ctx, n, func(ctx context.Context, touch func()) error {
		err := storage.WriteObject(ctx, c.b, c.name(key), &blob.WriterOptions{ContentType: "application/octet-stream"}, func(w *blob.Writer) error {
			for _, p := range parts {
				if _, err := w.Write(p); err != nil {
					return err
				}
				touch()
			}
			// The crash test: the entry's bytes written, not yet under its name.
			return testhook.Wait(ctx, "cache-entry")
		})
		return storage.RedactErr(err)
	})
}

// Sealed is an entry's compressed payload made in memory by Seal, for
// PutSealed to finish and write: the entry's bytes in chunks, so that
// none is ever grown or copied.
type Sealed struct {
	key    string
	chunks [][]byte
}

// Len is the length of the sealed entry, its checksum aside.
func (s *Sealed) Len() int {
	n := 0
	for _, c := range s.chunks {
		n += len(c)
	}
	return n
}

// sealChunk is the size of a Sealed's chunks.
const sealChunk = 256 << 10

// chunkWriter collects what is written into chunks of sealChunk bytes.
type chunkWriter struct{ chunks [][]byte }

func (w *chunkWriter) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		last := len(w.chunks) - 1
		if last < 0 || len(w.chunks[last]) == cap(w.chunks[last]) {
			w.chunks = append(w.chunks, make([]byte, 0, sealChunk))
			last++
		}
		c := w.chunks[last]
		k := copy(c[len(c):cap(c)], p)
		w.chunks[last] = c[:len(c)+k]
		p = p[k:]
	}
	return n, nil
}

// streams are Seal's zstd encoders not in use, kept for the next Seal (an
// encoder's history is allocated once, not per entry).
type streams struct {
	mu   sync.Mutex
	free []*zstd.Encoder
}

// streamWindow is the window of Seal's encoders: a payload of compact
// columns finds its matches near, and a smaller window is less history to
// allocate.
const streamWindow = 1 << 20

func (s *streams) get() *zstd.Encoder {
	s.mu.Lock()
	defer s.mu.Unlock()
	if n := len(s.free); n > 0 {
		e := s.free[n-1]
		s.free = s.free[:n-1]
		return e
	}
	e, _ := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1),
		zstd.WithEncoderCRC(false), zstd.WithWindowSize(streamWindow))
	return e
}

func (s *streams) put(e *zstd.Encoder) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.free = append(s.free, e)
}

// Seal compresses the payload of an entry of key in memory, for PutSealed
// to finish and write in the format Put writes: the payload of n bytes
// that write writes is compressed as it is written (a zstd stream that
// says its length, so that Get decodes it into one buffer of that size),
// so that no copy of it is ever held. Two Seals of one key and payload
// give the same bytes. It fails when write does, or writes other than n
// bytes.
func (c *Cache) Seal(key string, n int64, write func(io.Writer) error) (*Sealed, error) {
	cw := &chunkWriter{}
	hdr := make([]byte, 0, len(magic)+headerLen)
	hdr = append(hdr, magic...)
	hdr = binary.LittleEndian.AppendUint32(hdr, FormatVersion)
	hdr = append(hdr, key...)
	hdr = binary.LittleEndian.AppendUint64(hdr, 0) // the object's hash, by PutSealed
	hdr = binary.LittleEndian.AppendUint64(hdr, 0) // the payload's length, below
	cw.Write(hdr)
	enc := c.str.get()
	defer c.str.put(enc)
	defer enc.Reset(nil) // no hold on cw's chunks
	enc.ResetContentSize(cw, n)
	counted := &countingWriter{w: enc}
	if err := write(counted); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	if counted.n != n {
		return nil, fmt.Errorf("cache: entry %s: a payload of %d bytes, said %d", key, counted.n, n)
	}
	total := 0
	for _, ch := range cw.chunks {
		total += len(ch)
	}
	binary.LittleEndian.PutUint64(cw.chunks[0][len(hdr)-8:len(hdr)], uint64(total-len(hdr)))
	return &Sealed{key: key, chunks: cw.chunks}, nil
}

// countingWriter counts what it passes on to w.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// PutSealed writes an entry Seal made, with hash as the object's hash, as
// Put writes one. A Sealed is written once.
func (c *Cache) PutSealed(ctx context.Context, s *Sealed, hash uint64) error {
	at := len(magic) + 4 + 64
	binary.LittleEndian.PutUint64(s.chunks[0][at:at+8], hash)
	cs := sum(s.chunks...)
	return c.publish(ctx, s.key, append(s.chunks, cs[:])...)
}

// Stats describe a cache.
type Stats struct {
	Entries        int
	Bytes          int64
	Oldest, Newest time.Time // by when each entry was written; zero when empty

	// OtherVersions and OtherVersionBytes count the entries (among
	// Entries) of another FormatVersion than this build's, which it never
	// reads: those of an older build, after an upgrade that changed the
	// format. Prune removes them as it removes any entry (oldest first).
	OtherVersions     int
	OtherVersionBytes int64

	// Temps and TempBytes count the temporary files of writes that never
	// finished: a local cache's entry is written to a file beside its
	// final name and renamed once whole, and a job killed in between
	// (kill -9, a crash, the machine going down) leaves that file. They
	// are not entries and are never read; Prune removes those last
	// written over TempGrace ago.
	Temps     int
	TempBytes int64

	// Uploads counts the incomplete multipart uploads of entries on S3:
	// an entry over 16 MiB is uploaded in parts, and a job killed during
	// the upload leaves one, which S3 keeps, and bills, until it is
	// aborted. They are not entries and are never read; Prune aborts those
	// initiated over TempGrace ago. UploadBytes is the bytes of the parts
	// of those whose parts could be listed, all but UploadsUnsized of them.
	Uploads        int
	UploadBytes    int64
	UploadsUnsized int

	// Warnings are what could not be done without failing: the uploads
	// not listed (a store that does not let the caller list them) or not
	// aborted. Each names the cache, redacted.
	Warnings []error
}

// TempGrace is how long after its last write a temporary file is taken
// for a killed job's and removed by Prune: a live job writes an entry
// whole, at once, and renames its file within seconds of the last byte,
// so a younger one may be a write under way in a job that shares the
// cache (removed, it would cost that job its entry, never a wrong
// result).
const TempGrace = time.Hour

// isTemp reports whether key names a temporary file of a local cache's
// write: gocloud.dev's fileblob, told no_tmp_dir (Open), writes an entry
// to <entry>.<nanoseconds in hex>.tmp beside it before renaming it.
func isTemp(key string) bool {
	rest, ok := strings.CutSuffix(key, ".tmp")
	if !ok {
		return false
	}
	i := strings.LastIndexByte(rest, '.')
	if i < 0 || i == len(rest)-1 {
		return false
	}
	for _, c := range rest[i+1:] {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return strings.HasSuffix(rest[:i], EntrySuffix)
}

type entryInfo struct {
	key  string
	size int64
	mod  time.Time
}

// list returns the cache's entries, oldest first, and the temporary
// files of its unfinished writes (isTemp).
func (c *Cache) list(ctx context.Context) (ents, temps []entryInfo, err error) {
	err = c.maintain(ctx, func(ctx context.Context, touch func()) error {
		ents, temps = nil, nil
		return storage.ListEach(ctx, c.b, &blob.ListOptions{Prefix: c.loc.Prefix}, func(o *blob.ListObject) error {
			touch()
			switch {
			case o.IsDir:
			case strings.HasSuffix(o.Key, EntrySuffix):
				ents = append(ents, entryInfo{key: o.Key, size: o.Size, mod: o.ModTime})
			case isTemp(o.Key):
				temps = append(temps, entryInfo{key: o.Key, size: o.Size, mod: o.ModTime})
			}
			return nil
		})
	})
	if err != nil {
		return nil, nil, storage.RedactErr(err)
	}
	sort.Slice(ents, func(i, j int) bool {
		if !ents[i].mod.Equal(ents[j].mod) {
			return ents[i].mod.Before(ents[j].mod)
		}
		return ents[i].key < ents[j].key
	})
	return ents, temps, nil
}

// Stats lists the cache's entries (of every format version), the
// temporary files of its unfinished writes and, on S3, the incomplete
// multipart uploads of its entries (a failure to list those is a warning,
// in Stats.Warnings).
func (c *Cache) Stats(ctx context.Context) (Stats, error) {
	ents, temps, err := c.list(ctx)
	if err != nil {
		return Stats{}, err
	}
	var s Stats
	ups, err := c.uploads(ctx, nil)
	if err != nil {
		s.Warnings = append(s.Warnings, c.uploadsNotListed(err))
	}
	for _, u := range ups {
		s.count(u)
	}
	cur := fmt.Sprintf("%sv%d/", c.loc.Prefix, FormatVersion)
	for _, e := range ents {
		s.Entries++
		s.Bytes += e.size
		if !strings.HasPrefix(e.key, cur) {
			s.OtherVersions++
			s.OtherVersionBytes += e.size
		}
	}
	if len(ents) > 0 {
		s.Oldest, s.Newest = ents[0].mod, ents[len(ents)-1].mod
	}
	for _, e := range temps {
		s.Temps++
		s.TempBytes += e.size
	}
	return s, nil
}

// Prune removes, oldest first, the entries written before olderThan (when
// not zero), then more until the rest hold at most maxBytes (when not
// negative); and, whatever the two bounds, the temporary files of
// unfinished writes last written over TempGrace ago and, on S3, the
// incomplete multipart uploads of entries initiated over TempGrace ago
// (aborted). It returns what it removed; uploads it could not list or
// abort are warnings (removed.Warnings), not errors. An entry removed
// while a job reads it costs that job a decode, never a wrong result.
//
// A cancel stops it before its next delete or abort (the stores' deletes
// do not all look at ctx: fileblob's never does), returning what it had
// removed and ctx's error: every entry is one object, removed whole or
// not at all, so the cache left is one that Stats and jobs read as usual.
func (c *Cache) Prune(ctx context.Context, maxBytes int64, olderThan time.Time) (removed Stats, err error) {
	ents, temps, err := c.list(ctx)
	if err != nil {
		return Stats{}, err
	}
	stale := time.Now().Add(-TempGrace)
	isStale := func(u upload) bool { return u.initiated.Before(stale) }
	ups, err := c.uploads(ctx, isStale)
	if err != nil {
		removed.Warnings = append(removed.Warnings, c.uploadsNotListed(err))
	}
	var failed int
	var firstErr error
	for _, u := range ups {
		if !isStale(u) {
			continue
		}
		if err := ctx.Err(); err != nil {
			return removed, err
		}
		gone, err := c.abort(ctx, u)
		switch {
		case err != nil:
			failed++
			if firstErr == nil {
				firstErr = err
			}
		case !gone:
			removed.count(u)
		}
	}
	if failed > 0 {
		removed.Warnings = append(removed.Warnings, fmt.Errorf("cache %s: %d incomplete multipart uploads of entries not aborted: %w", c, failed, firstErr))
	}
	for _, e := range temps {
		if !e.mod.Before(stale) {
			continue
		}
		if err := ctx.Err(); err != nil {
			return removed, err
		}
		if err := c.delete(ctx, e.key); err != nil {
			return removed, err
		}
		removed.Temps++
		removed.TempBytes += e.size
	}
	var total int64
	for _, e := range ents {
		total += e.size
	}
	for _, e := range ents {
		old := !olderThan.IsZero() && e.mod.Before(olderThan)
		over := maxBytes >= 0 && total > maxBytes
		if !old && !over {
			continue
		}
		if err := ctx.Err(); err != nil {
			return removed, err
		}
		if err := c.delete(ctx, e.key); err != nil {
			return removed, err
		}
		total -= e.size
		removed.Entries++
		removed.Bytes += e.size
		if removed.Oldest.IsZero() {
			removed.Oldest = e.mod
		}
		removed.Newest = e.mod
		testhook.Wait(ctx, "prune") // the signal tests: a cancel between two deletes
	}
	return removed, nil
}

// delete removes the blob key (one already gone is no error), retried as
// maintain retries.
func (c *Cache) delete(ctx context.Context, key string) error {
	err := c.maintain(ctx, func(ctx context.Context, _ func()) error {
		if err := c.b.Delete(ctx, key); err != nil && gcerrors.Code(err) != gcerrors.NotFound {
			return err
		}
		return nil
	})
	return storage.RedactErr(err)
}

// count adds u to s's uploads.
func (s *Stats) count(u upload) {
	s.Uploads++
	if u.sized {
		s.UploadBytes += u.size
	} else {
		s.UploadsUnsized++
	}
}

// uploadsNotListed is the warning of a failure to list the cache's
// incomplete multipart uploads.
func (c *Cache) uploadsNotListed(err error) error {
	return fmt.Errorf("cache %s: incomplete multipart uploads of entries not listed (neither counted nor aborted): %w", c, storage.RedactErr(err))
}
