package pipeline

import (
	"context"
	"errors"
	"hash"
	"io"
	"time"

	"gocloud.dev/blob"

	"github.com/crlbatch/crlbatch/cache"
	"github.com/crlbatch/crlbatch/readers"
	"github.com/crlbatch/crlbatch/scoring"
)

// Objects that grew by appended lines (--cache). A run that is still
// training appends to its log, and the next night its object is its old
// bytes and the lines written since: its entry's key (size, ETag, mtime)
// no longer matches, and decoding it whole paid again for every old line.
// With a decoder that can resume an object (scoring.Resumer: skyfall's),
// the cache keeps, beside an object's entry, a tails entry (kind "tails",
// keyed by the object's URL and key and the decoder's codec key, so that
// the next version of the object finds it): the size of the bytes the
// entry was decoded from, their xxHash64, the xxHash64 of their first
// headBytes, and the entry's key. Both hashes are taken as the object is
// read (countingReader), so the entry costs no request to the input. It
// is written only for an object of AppendedMinBytes or more decoded from
// plain JSON Lines with no bad rows skipped whose bytes end with a line
// end, once the object's entry is stored.
//
// An object whose own entry is missing, but whose tails entry is there and
// no larger than the object, is checked before it is read: the hash of its
// first headBytes first (one small range read: a rewritten object is
// mostly turned away here), then the xxHash64 of all its earlier bytes
// (read, not decoded) and their last byte, a line end, then the entry read
// back. If all hold, only the bytes after them are decoded
// (scoring.Resumer.Resume, on the cores as a changed object is),
// continuing the object read back from its entry; what comes out is
// exactly what decoding the whole object gives (readers'
// FuzzResumeObject), its entry and tails entry are written as for any
// decoded object, and the manifest says "appended". Anything that does not
// hold (the head or the hash differs, the entry is gone or damaged, the
// object changed between the reads) falls back to decoding the whole
// object, as without a tails entry; a damaged entry is warned about.

const (
	tailsKind = "tails"
	tailsTag  = "crlbatch-tails-1" // raise with the tails entry's layout
	// headBytes is how many of an object's first bytes the first check
	// hashes.
	headBytes = 64 << 10
)

// AppendedMinBytes is the smallest object that keeps a tails entry (the
// head the check reads): a smaller one decodes whole in about the time the
// check takes, and a tails entry for each of 20,000 small objects cost a
// cold --cache job ~10 % more CPU.
const AppendedMinBytes = headBytes

// tailIndex is an object's tails entry.
type tailIndex struct {
	Size  int64  `json:"s"` // the bytes its entry was decoded from
	Hash  uint64 `json:"h"` // their xxHash64 (the entry's Hash)
	Head  uint64 `json:"a"` // the xxHash64 of the first min(Size, headBytes) of them
	Entry string `json:"k"` // the object entry's key
}

// readHead is what the read of an object saw of its bytes for its tails
// entry: the xxHash64 of its first headBytes and its last byte.
type readHead struct {
	head uint64
	last byte
}

// resumeFrom is an object's earlier version that the job continues: the
// object read back from its entry, decoded from the object's first size
// bytes.
type resumeFrom struct {
	prev scoring.Object
	size int64
}

// tailKey is the key of object o's tails entry.
func (j *job) tailKey(o object) string {
	return cache.Key(tailsTag, j.cache.codec.CodecKey(), j.in.ObjectURL(o.Key), o.Rel)
}

// resumer is the job's decoder as a scoring.Resumer, when it is one and
// the job has a cache.
func (j *job) resumer() scoring.Resumer {
	if j.cache == nil {
		return nil
	}
	r, _ := j.cache.codec.(scoring.Resumer)
	return r
}

// tailRead is what reading one object's tails entry gave.
type tailRead struct {
	t     tailIndex
	found bool
	err   error // warned about by useTails, when the object's entry is missed
}

// readTails reads the tails entries of the objects idx (looked up, or
// being looked up, lookupCache), remoteReads at a time on a remote cache,
// warning about none; with slots, each read holds one of them while it is
// under way.
func (j *job) readTails(ctx context.Context, objs []object, idx []int, slots chan struct{}) ([]tailRead, error) {
	tc := j.cache.c.Kind(tailsKind)
	got := make([]tailRead, len(idx))
	err := j.eachEntry(ctx, len(idx), holding(slots, func(ctx context.Context, k int) error {
		r := &got[k]
		r.found, r.err = readEntry(ctx, tc, j.tailKey(objs[idx[k]]), &r.t)
		return nil
	}))
	return got, err
}

// useTails keeps, for each object of idx whose own entry was not found
// (hit, by object), the tails entry readTails read for it (got, in idx's
// order), and warns about one that could not be read.
func (j *job) useTails(ctx context.Context, objs []object, idx []int, got []tailRead, hit []scoring.Object) {
	jc := j.cache
	tc := jc.c.Kind(tailsKind)
	for k, i := range idx {
		if hit[i] != nil {
			continue
		}
		r := got[k]
		// (Its own entry, missing or damaged, stands for no earlier bytes.)
		if r.err != nil {
			j.entryFailed(ctx, tc, j.tailKey(objs[i]), "object's earlier bytes", objs[i], r.err)
			continue
		}
		if r.found && r.t.Size > 0 && r.t.Size <= objs[i].Size && r.t.Entry != jc.keys[i] {
			jc.tails[i] = &r.t
		}
	}
}

// holding is fn holding one of slots while it runs (fn itself without
// slots): lookups of two kinds at once stay within one bound.
func holding(slots chan struct{}, fn func(ctx context.Context, k int) error) func(ctx context.Context, k int) error {
	if slots == nil {
		return fn
	}
	return func(ctx context.Context, k int) error {
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
			return ctx.Err()
		}
		defer func() { <-slots }()
		return fn(ctx, k)
	}
}

// objectReader is what readObjects reads an object through: a blob.Reader,
// or an appended object's bytes after its earlier ones.
type objectReader interface {
	io.ReadCloser
	Size() int64
	ModTime() time.Time
}

// noTail is the bytes after an object's earlier ones when there are none
// (the object was touched, not appended to).
type noTail struct {
	size int64
	mod  time.Time
}

func (t noTail) Read([]byte) (int, error) { return 0, io.EOF }
func (t noTail) Close() error             { return nil }
func (t noTail) Size() int64              { return t.size }
func (t noTail) ModTime() time.Time       { return t.mod }

// openAppended checks whether object i is the bytes its tails entry
// describes with lines appended, and if so returns a reader of the bytes
// after them, their length, their hash and the hash of the object's first
// headBytes so far (to go on with), with the object read back from its
// entry set aside for decode (jc.resuming). Any check that fails returns
// nil: the object is read whole.
func (j *job) openAppended(ctx context.Context, b *blob.Bucket, i int, o object) (objectReader, int64, hash.Hash64, hash.Hash64) {
	jc := j.cache
	if jc == nil || jc.tails == nil || jc.tails[i] == nil {
		return nil, 0, nil, nil
	}
	t, res := jc.tails[i], j.resumer()
	if res == nil || t.Size > o.Size {
		return nil, 0, nil, nil
	}
	if head, err := headHash(ctx, b, o.Key, t.Size); err != nil || head != t.Head {
		return nil, 0, nil, nil
	}
	pr, err := b.NewRangeReader(ctx, o.Key, 0, t.Size, nil)
	if err != nil {
		return nil, 0, nil, nil
	}
	h, hd := newObjectHash(), newObjectHash()
	cr := &countingReader{r: pr, p: &progress{}, h: h, head: hd}
	// In reads of a MiB (io.Discard's ReadFrom reads 8 KiB at a time: a
	// system call each, locally).
	n, err := io.CopyBuffer(struct{ io.Writer }{io.Discard}, cr, make([]byte, 1<<20))
	pr.Close()
	if err != nil || n != t.Size || h.Sum64() != t.Hash || cr.last != '\n' || pr.Size() < t.Size {
		return nil, 0, nil, nil
	}
	url := j.in.ObjectURL(o.Key)
	e, found, err := jc.c.Get(ctx, t.Entry)
	if err != nil || !found || e.Hash != t.Hash {
		switch {
		case err == nil || ctx.Err() != nil:
		case errors.Is(err, cache.ErrCorrupt):
			j.log.Warn("cache entry not trusted: the object is decoded whole and the entry rebuilt", "object", Redact(url), "entry", jc.c.URL(t.Entry), "reason", err)
		default:
			j.entryUnreadable(ctx, err, "cache entry of an object's earlier bytes cannot be read: the object is decoded whole", "object", Redact(url), "entry", jc.c.URL(t.Entry))
		}
		return nil, 0, nil, nil
	}
	prev, err := jc.codec.DecodeEncoding(url, o.Rel, e.Payload)
	if err != nil {
		j.log.Warn("cache entry not trusted: the object is decoded whole and the entry rebuilt", "object", Redact(url), "entry", jc.c.URL(t.Entry), "reason", err)
		return nil, 0, nil, nil
	}
	if !res.Resumable(prev) {
		prev.Release()
		return nil, 0, nil, nil
	}
	var tr objectReader = noTail{pr.Size(), pr.ModTime()}
	if pr.Size() > t.Size {
		r, err := b.NewRangeReader(ctx, o.Key, t.Size, -1, nil)
		if err != nil {
			prev.Release()
			return nil, 0, nil, nil
		}
		tr = r
	}
	// The same version of the object throughout, or it is read whole.
	if tr.Size() != pr.Size() || !sameModTime(tr.ModTime(), pr.ModTime()) {
		tr.Close()
		prev.Release()
		return nil, 0, nil, nil
	}
	jc.resuming[i] = &resumeFrom{prev: prev, size: t.Size}
	return tr, t.Size, h, hd
}

// takeResume returns, once, object i's earlier version set aside by
// openAppended for this read of it.
func (j *job) takeResume(i int) *resumeFrom {
	jc := j.cache
	if jc == nil || jc.resuming == nil {
		return nil
	}
	rf := jc.resuming[i]
	jc.resuming[i] = nil
	return rf
}

// decodeAppended decodes the lines r holds, appended to object o after
// the bytes rf.prev was decoded from: on every core when the object is
// split (splitObjects), else on one.
func (j *job) decodeAppended(rf *resumeFrom, split bool, o object, url, rel string, r io.Reader, onBad readers.BadRowFunc) (scoring.Object, error) {
	j.log.Info("object grew since its cache entry: decoding the lines after its cached bytes", "object", Redact(url),
		"cached_bytes", rf.size, "new_bytes", o.Size-rf.size)
	c, err := j.resumer().Resume(rf.prev, rf.size, r, onBad)
	if err != nil {
		rf.prev.Release()
		return nil, err
	}
	workers := 1
	if split {
		workers = j.cfg.Concurrency
	}
	return decodeChunked(c, workers, j.chunkBytes())
}

// markTailable notes whether object i, just read (how), may have a tails
// entry once its entry is stored: read as JSON Lines, and resumable.
func (j *job) markTailable(i int, o scoring.Object, how string) {
	jc := j.cache
	if jc == nil || jc.tailable == nil {
		return
	}
	res := j.resumer()
	jc.tailable[i] = res != nil && (how == ReadDecoded || how == ReadAppended) && res.Resumable(o)
}

// noteHead keeps what the read of object i saw for its tails entry.
func (j *job) noteHead(i int, cr *countingReader) {
	if jc := j.cache; jc != nil && jc.heads != nil && cr.head != nil {
		jc.heads[i] = &readHead{head: cr.head.Sum64(), last: cr.last}
	}
}

// storeTail writes object i's tails entry, its entry (of its size bytes,
// hashing to h) just stored, when the object may have one, holds
// AppendedMinBytes or more and its bytes end with a line end. A failure is
// a warning, as for any entry.
func (j *job) storeTail(ctx context.Context, i int, o object, h uint64) {
	jc := j.cache
	rh, least := jc.heads[i], j.cfg.appendedMinBytes
	if least <= 0 {
		least = AppendedMinBytes
	}
	if !jc.tailable[i] || rh == nil || rh.last != '\n' || o.Size <= 0 || o.Size < least {
		return
	}
	j.putEntry(ctx, jc.c.Kind(tailsKind), j.tailKey(o), &tailIndex{Size: o.Size, Hash: h, Head: rh.head, Entry: jc.keys[i]})
}

// headHash reads the first min(size, headBytes) bytes of the object and
// returns their xxHash64.
func headHash(ctx context.Context, b *blob.Bucket, key string, size int64) (uint64, error) {
	w := min(size, headBytes)
	r, err := b.NewRangeReader(ctx, key, 0, w, nil)
	if err != nil {
		return 0, err
	}
	defer r.Close()
	h := newObjectHash()
	if n, err := io.Copy(h, r); err != nil || n != w {
		return 0, errShrunk
	}
	return h.Sum64(), nil
}

// errShrunk: the object is shorter than the bytes looked for.
var errShrunk = errors.New("the object is shorter than its earlier bytes")
