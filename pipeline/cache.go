package pipeline

import (
	"context"
	"errors"
	"fmt"
	"hash"
	"io"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zeebo/xxh3"
	"gocloud.dev/blob"
	"golang.org/x/sync/errgroup"

	"github.com/crlbatch/crlbatch/cache"
	"github.com/crlbatch/crlbatch/readers"
	"github.com/crlbatch/crlbatch/scoring"
)

// The decoded-object cache (--cache). Before any object is read, each is
// looked up by a key made of what identifies its bytes (its URL, its key
// relative to the input, size, ETag, MD5 and modification time as the store
// reports them: a local file's ETag is its modification time and size) and
// what its decoding depends on (the decoder's scoring.Codec.CodecKey: the
// protocol, the codec version, every decoding option). A hit is the
// decoder's encoding read back (DecodeEncoding) instead of the object; a
// miss is decoded as usual, then encoded (compressed as it is encoded,
// cache.Seal, when the codec streams: streamCodec) and stored, unless rows were
// skipped as bad (those are reported on every run) or the object changed
// while it was read. The cache only ever costs speed: a damaged entry is
// rebuilt, and a cache that cannot be read or written is reported in a
// warning and the job goes on without it.
//
// An object's entry is encoded and written beside the job (at most
// Concurrency entries at once), once the object has been read whole: on a
// warm rerun the changed object's entry is no longer on the path from its
// decoding to the scoring, the reduction and the figures, while the other
// core is idle. The object is kept whole until then: the scoring pass's
// release of the objects (releaseObjects) leaves it to the entry's writer,
// and an object about to spill is encoded before it spills (budget.admit).
// The job's other entries (runs, families, cells, figures, object
// indexes) are written beside it too, one at a time on a local cache
// (putLater), remoteWrites at a time on a remote one, where each is a
// round trip. They are looked up before the work they would save,
// Concurrency at a time on a local cache and remoteReads at a time on a
// remote one (eachEntry), where whether each object's entry is there is
// asked so too before the entries there are read (lookupCache). The job
// waits for its entries (waitEntries) before it publishes anything, and
// before it lets go of the objects and the cache.

// jobCache is the cache of one job.
type jobCache struct {
	c     *cache.Cache
	codec scoring.Codec

	keys    []string // per object: its entry's key ("" when not cacheable)
	attrs   []*blob.Attributes
	hits    []scoring.Object // per object: the object read back from its entry
	pending [][]byte         // per object missed: its encoding, until stored
	sealed  []*cache.Sealed  // per object missed: its entry compressed (streamCodec), until stored
	skip    []bool           // per object: not to look up or read now (runcache.go)
	looked  []bool           // per object: its entry looked up
	objs    []scoring.Object // per object decoded: to encode once read whole (keepForCache)
	// Objects that grew (appended.go), per object: its tails entry, when
	// its own entry was not found; its earlier version, once openAppended
	// has checked it, until decode takes it; whether it may have a tails
	// entry (markTailable), and what its read saw for it (noteHead).
	tails    []*tailIndex
	resuming []*resumeFrom
	tailable []bool
	heads    []*readHead

	bg      sync.WaitGroup // the entries' writers (storeLater, putLater) and what waits for them
	bug     bugs           // a panic of one of them, panicked again by waitEntries
	writers chan struct{}  // a slot per putLater write under way (one locally, remoteWrites remotely)
	queued  chan struct{}  // a slot per putLater write not done yet (laterQueue of them)
	lookups int            // entries looked up at once (eachEntry)
	// tailsBeside: the objects looked up now seldom have entries (no
	// index named them): their tails entries are read beside.
	tailsBeside bool
	slots       chan struct{} // at most Concurrency entries written at once
	mu          sync.Mutex    // guards writing
	writing     []*entryWrite // per object: its entry's write by this job, or nil

	warnOnce sync.Once
	// Entries that could not be read (entryUnreadable): how many, and the
	// one warning that the cache's reads stopped (cache.ErrOff).
	unreadable atomic.Int64
	offOnce    sync.Once
}

// entryWrite is the write of one object's entry beside the job.
type entryWrite struct {
	done    chan struct{}  // closed once the write is over
	obj     scoring.Object // the object it encodes; nil when encoded before it spilled
	stored  bool           // the entry was written (read once done is closed)
	release bool           // the job is done with the object: release it then (guarded by jobCache.mu)
}

// testHookEntryWrite, when set, is called by an object entry's writer
// before it encodes the object, with the object's URL.
var testHookEntryWrite func(url string)

// hashFunc is the hash of object bytes: with a cache, one that entries can
// keep from one job to the next (newObjectHash), else maphash, seeded per
// job.
func (j *job) hashFunc() hash.Hash64 {
	if j.cache != nil {
		return newObjectHash()
	}
	return j.newHash()
}

// newObjectHash is the hash of an object's bytes that --cache's entries
// keep from one job to the next, and of their first headBytes (tails
// entries, appended.go): XXH3-64 since cache.FormatVersion 3 (xxHash64
// before it, half as fast: docs/decisions.md).
func newObjectHash() hash.Hash64 { return xxh3.New() }

// openCache opens --cache, if any. A location that cannot be parsed is a
// usage error; a store that cannot be opened, or a protocol whose decoder
// has no codec, a warning.
func (j *job) openCache(ctx context.Context) error {
	if j.cfg.Cache == "" {
		return nil
	}
	codec, ok := j.proto.dec.(scoring.Codec)
	if !ok {
		j.log.Warn("--cache is ignored: the protocol's decoder cannot encode its objects", "protocol", j.proto.name)
		return nil
	}
	where, err := cache.Resolve(j.cfg.Cache)
	if err != nil {
		return &UsageError{Err: err}
	}
	loc, err := ParseLocation(where, true)
	if err != nil {
		return err
	}
	// Entries inside the input could be read as traces (--pattern '*'),
	// inside OUTPUT be tidied away or published.
	if within(loc, j.in) || within(loc, j.out) || within(j.out, loc) {
		return Usagef("--cache %s lies inside the input %s or the output %s (or holds the output): give it a place of its own", loc, j.in, j.out)
	}
	c, err := cache.Open(ctx, j.cfg.Cache, j.cfg.Opener)
	if err != nil {
		var ue *UsageError
		if errors.As(err, &ue) {
			return err
		}
		j.log.Warn("--cache cannot be opened: every object is decoded", "cache", Redact(j.cfg.Cache), "error", redactErr(err))
		return nil
	}
	c.StallAfter(j.cfg.Retry.IdleTimeout)
	j.cache = newJobCache(c, codec, j.cfg.Concurrency)
	return nil
}

// remoteReads and remoteWrites are how many entries a job looks up (reads,
// or asks whether they are there), and how many it writes beside it, at
// once on a remote cache (cache.Cache.Remote), whatever --concurrency; on
// a remote input its objects' attributes are read remoteReads at a time
// too. A read or write of an entry there is mostly a round trip to the
// store (tens of milliseconds on S3), so that one or two at a time left a
// warm rerun waiting on its ~180 requests (docs/decisions.md, "Cache
// entries on a remote store read and written sixteen at a time"), and
// sixteen lookups at a time still left it waiting on the rounds of its
// ~130 lookups ("Cache lookups thirty-two at a time"). Thirty-two reads
// and sixteen writes in flight, at ~20 ms each, are ~1,600 and ~800
// requests a second: below what S3 takes on a prefix (5,500 reads, 3,500
// writes) and a new GCS bucket (5,000 reads, 1,000 writes) before either
// scales up. Locally they are CPU work, and stay within --concurrency
// (reads) and one core (writes).
const (
	remoteReads  = 32
	remoteWrites = 16
)

// newJobCache is the jobCache of c, for a job of the given --concurrency.
func newJobCache(c *cache.Cache, codec scoring.Codec, concurrency int) *jobCache {
	jc := &jobCache{c: c, codec: codec, queued: make(chan struct{}, laterQueue)}
	jc.lookups, jc.writers = max(concurrency, 1), make(chan struct{}, 1)
	if c.Remote() {
		jc.lookups, jc.writers = max(concurrency, remoteReads), make(chan struct{}, remoteWrites)
	}
	return jc
}

func (j *job) closeCache() {
	if j.cache != nil {
		if n := j.cache.unreadable.Load(); n > 1 && j.cache.c.ReadsOff() == nil {
			j.log.Warn("cache entries could not be read: the first is warned about above, the others were logged at debug level (--log-level debug)", "cache", j.cache.c.String(), "entries", n)
		}
		j.cache.c.Close()
	}
}

// entryUnreadable warns that a cache entry cannot be read (msg, and args
// naming it), as opposed to read and not trusted: each of those is warned
// about. A store that fails one read mostly fails every one for one
// cause, so the job's first such entry is warned about in full, the
// others logged at debug level and, unless the cache stopped being read,
// counted in one warning as the cache closes. A read the cache did not
// make (cache.ErrOff: it stopped reading after failures in a row) is not
// logged; one warning says that the cache is no longer read, and why.
func (j *job) entryUnreadable(ctx context.Context, err error, msg string, args ...any) {
	jc := j.cache
	if ctx.Err() != nil {
		return
	}
	if errors.Is(err, cache.ErrOff) {
		j.cacheOff(err)
		return
	}
	args = append(args, "error", err)
	if jc.unreadable.Add(1) == 1 {
		j.log.Warn(msg, args...)
	} else {
		j.log.Debug(msg, args...)
	}
	if off := jc.c.ReadsOff(); off != nil {
		j.cacheOff(off)
	}
}

// cacheOff warns, once per job, that the cache is no longer read.
func (j *job) cacheOff(err error) {
	j.cache.offOnce.Do(func() {
		j.log.Warn("cache is no longer read nor written: the job decodes every object it has not served", "cache", j.cache.c.String(), "error", err)
	})
}

// keyObjects computes the entry key of every object (once), at most
// Concurrency at once (remoteReads, when larger, on a remote input: each
// object's attributes are a request there), from its attributes.
func (j *job) keyObjects(ctx context.Context, b *blob.Bucket, objs []object) error {
	jc := j.cache
	if jc == nil || jc.keys != nil {
		return nil
	}
	n := len(objs)
	jc.keys, jc.attrs, jc.hits, jc.pending, jc.sealed = make([]string, n), make([]*blob.Attributes, n), make([]scoring.Object, n), make([][]byte, n), make([]*cache.Sealed, n)
	jc.looked, jc.objs, jc.writing = make([]bool, n), make([]scoring.Object, n), make([]*entryWrite, n)
	jc.tails, jc.resuming, jc.tailable, jc.heads = make([]*tailIndex, n), make([]*resumeFrom, n), make([]bool, n), make([]*readHead, n)
	jc.slots = make(chan struct{}, max(j.cfg.Concurrency, 1))
	// The first object in key order whose attributes cannot be read fails
	// the job, at any --concurrency (ordered).
	limit := j.cfg.Concurrency
	if j.in.Remote() {
		limit = max(limit, remoteReads)
	}
	_, err := ordered(ctx, n, limit, func(gctx context.Context, i int) error {
		o := objs[i]
		url := j.in.ObjectURL(o.Key)
		a, err := j.attributes(gctx, b, o.Key)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return &StorageError{Op: "read", URL: url, Err: redactErr(err)}
		}
		if a.ETag == "" && len(a.MD5) == 0 && a.ModTime.IsZero() {
			return nil // nothing tells this object's versions apart
		}
		if a.Size != o.Size {
			jc.attrs[i] = a
			return nil // read below, where the change is reported
		}
		jc.keys[i] = cache.Key(jc.codec.CodecKey(), url, o.Rel, strconv.FormatInt(a.Size, 10), a.ETag,
			fmt.Sprintf("%x", a.MD5), a.ModTime.UTC().Format(time.RFC3339Nano))
		jc.attrs[i] = a
		return nil
	})
	return err
}

// lookupCache finds the entry of every object not skipped and not looked
// up yet, at most Concurrency at once (an object's entry is megabytes,
// held while it is decoded). On a remote cache, where a lookup is a round
// trip and a cold job's every lookup finds nothing, whether each entry
// exists is asked first, remoteReads at a time (eachEntry), and only
// the entries there, or of which the store could not say, are read.
// Entries that cannot be read are warned about and left to be rebuilt.
func (j *job) lookupCache(ctx context.Context, b *blob.Bucket, objs []object) error {
	jc := j.cache
	if jc == nil {
		return nil
	}
	if err := j.keyObjects(ctx, b, objs); err != nil {
		return err
	}
	var todo []int
	for i := range objs {
		if j.skipRead(i) || jc.looked[i] || jc.keys[i] == "" {
			continue // not now, looked up already, or not cacheable
		}
		jc.looked[i] = true
		todo = append(todo, i)
	}
	looked := todo
	// Objects that seldom have an entry (tailsBeside) have their tails
	// entries read while their own are looked up, not after: on a remote
	// cache, a round trip less before they are decoded. Both kinds of
	// lookup together stay within eachEntry's bound.
	var slots chan struct{}
	var tailsDone chan struct{}
	var tails []tailRead
	var tailsErr error
	if jc.tailsBeside && j.resumer() != nil && len(looked) > 0 {
		slots, tailsDone = make(chan struct{}, jc.lookups), make(chan struct{})
		go func() {
			defer close(tailsDone)
			defer jc.bug.catch()
			tails, tailsErr = j.readTails(ctx, objs, looked, slots)
		}()
		defer func() { <-tailsDone }()
	}
	if jc.c.Remote() && len(todo) > 1 {
		todo = slices.Clone(todo)
		there := make([]bool, len(todo))
		err := j.eachEntry(ctx, len(todo), holding(slots, func(ctx context.Context, k int) error {
			ok, err := jc.c.Has(ctx, jc.keys[todo[k]])
			there[k] = ok || err != nil // an error: Get finds out
			return nil
		}))
		if err != nil {
			return err
		}
		k := 0
		for n, i := range todo {
			if there[n] {
				todo[k] = i
				k++
			}
		}
		todo = todo[:k]
	}
	present := make([]bool, len(objs)) // by object: an entry was found, trusted or not
	get := holding(slots, func(gctx context.Context, i int) error {
		o, key := objs[i], jc.keys[i]
		url := j.in.ObjectURL(o.Key)
		e, found, err := jc.c.Get(gctx, key)
		present[i] = found || err != nil && gctx.Err() == nil
		switch {
		case !found && err == nil:
			return nil
		case err != nil:
			if gctx.Err() != nil {
				return gctx.Err()
			}
			if errors.Is(err, cache.ErrCorrupt) {
				j.log.Warn("cache entry not trusted: the object is decoded and the entry rebuilt", "object", Redact(url), "entry", jc.c.URL(key), "reason", err)
			} else {
				j.entryUnreadable(gctx, err, "cache entry cannot be read: the object is decoded", "object", Redact(url), "entry", jc.c.URL(key))
			}
			return nil
		}
		obj, err := jc.codec.DecodeEncoding(url, o.Rel, e.Payload)
		if err != nil {
			j.log.Warn("cache entry not trusted: the object is decoded and the entry rebuilt", "object", Redact(url), "entry", jc.c.URL(key), "reason", err)
			return nil
		}
		jc.hits[i] = obj
		j.noteHash(o.Key, o.Size, e.Hash)
		return nil
	})
	// getAll reads the entries of the objects idx, Concurrency at once.
	getAll := func(idx []int) error {
		g, gctx := errgroup.WithContext(ctx)
		g.SetLimit(j.cfg.Concurrency)
		for _, i := range idx {
			g.Go(guarded(func() error { return get(gctx, i) }))
		}
		return g.Wait()
	}
	if err := getAll(todo); err != nil {
		return err
	}
	if testHookLookedUp != nil {
		testHookLookedUp()
	}
	// The objects without an entry may have grown from one (appended.go).
	idx := looked
	if tailsDone != nil {
		<-tailsDone
		if tailsErr != nil || tails == nil {
			return tailsErr // (nil tails: a panic, which waitEntries raises)
		}
	} else {
		idx = nil
		for _, i := range looked {
			if jc.hits[i] == nil {
				idx = append(idx, i)
			}
		}
		if j.resumer() == nil || len(idx) == 0 {
			return nil
		}
		var err error
		if tails, err = j.readTails(ctx, objs, idx, nil); err != nil {
			return err
		}
	}
	// A tails entry that names the object's own entry, which this job's
	// lookup did not find, was written by another job since (a job stores
	// an entry before its tails entry): the entry is read again.
	var again []int
	for k, i := range idx {
		if jc.hits[i] == nil && !present[i] && tails[k].found && tails[k].t.Entry == jc.keys[i] {
			again = append(again, i)
		}
	}
	if err := getAll(again); err != nil {
		return err
	}
	j.useTails(ctx, objs, idx, tails, jc.hits)
	return nil
}

// testHookLookedUp, when set, is called by lookupCache once the objects'
// entries are looked up, before their tails entries are used (tests).
var testHookLookedUp func()

// skipRead reports whether object i is not to be read now.
func (j *job) skipRead(i int) bool {
	return j.cache != nil && j.cache.skip != nil && j.cache.skip[i]
}

// cached returns object i's entry read back, or nil.
func (j *job) cached(i int) scoring.Object {
	if j.cache == nil || j.cache.hits == nil {
		return nil
	}
	return j.cache.hits[i]
}

// keepForCache keeps object i, just decoded with skipped bad rows, to be
// encoded for its entry once its bytes are known to be read whole
// (storeLater), or before it spills (encodeForCache).
func (j *job) keepForCache(i int, o scoring.Object, skipped int) {
	jc := j.cache
	if jc == nil || jc.keys == nil {
		return
	}
	jc.objs[i] = nil
	if jc.keys[i] == "" || skipped > 0 {
		return
	}
	jc.objs[i] = o
}

// encodeForCache encodes object i, kept by keepForCache, for its entry:
// compressed (cache.Seal) or as bytes, until stored.
func (j *job) encodeForCache(i int) {
	jc := j.cache
	if jc == nil || jc.objs == nil || jc.objs[i] == nil {
		return
	}
	o := jc.objs[i]
	jc.objs[i] = nil
	if sc, ok := jc.codec.(streamCodec); ok {
		n, write, err := sc.Encoding(o)
		if err == nil {
			jc.sealed[i], err = jc.c.Seal(jc.keys[i], n, write)
		}
		if err != nil {
			j.log.Warn("cannot encode a decoded object for the cache", "error", err)
		}
		return
	}
	enc, err := jc.codec.AppendEncoding(nil, o)
	if err != nil {
		j.log.Warn("cannot encode a decoded object for the cache", "error", err)
		return
	}
	jc.pending[i] = enc
}

// streamCodec is a scoring.Codec that also writes an object's encoding as
// a stream of a length known first (skyfall's), which the cache
// compresses as it is written (cache.Seal): no copy of the whole encoding
// is held.
type streamCodec interface {
	// Encoding returns the length of o's encoding (AppendEncoding's
	// bytes) and a function that writes it.
	Encoding(o scoring.Object) (n int64, write func(io.Writer) error, err error)
}

// storeLater writes object i's entry, once the object has been read
// whole (its bytes hash to h), on a goroutine of its own: the object is
// encoded there unless it was before it spilled. It waits for a slot
// first, so that at most Concurrency entries are encoded at once. ctx is
// the job's.
func (j *job) storeLater(ctx context.Context, b *blob.Bucket, i int, o object, h uint64) {
	jc := j.cache
	if jc == nil || jc.objs == nil || jc.objs[i] == nil && jc.pending[i] == nil && jc.sealed[i] == nil {
		return
	}
	select {
	case jc.slots <- struct{}{}:
	case <-ctx.Done():
		jc.objs[i], jc.pending[i], jc.sealed[i] = nil, nil, nil
		return
	}
	w := &entryWrite{done: make(chan struct{}), obj: jc.objs[i]}
	jc.mu.Lock()
	jc.writing[i] = w
	jc.mu.Unlock()
	jc.bg.Add(1)
	go func() {
		defer jc.bg.Done()
		if testHookEntryWrite != nil {
			testHookEntryWrite(j.in.ObjectURL(o.Key))
		}
		if ctx.Err() == nil {
			func() {
				defer jc.bug.catch() // and go on: the slot is given back below
				j.encodeForCache(i)
				if w.stored = j.storeCache(ctx, b, i, o, h); w.stored {
					j.storeTail(ctx, i, o, h)
				}
			}()
		}
		jc.objs[i], jc.pending[i], jc.sealed[i] = nil, nil, nil
		<-jc.slots
		jc.mu.Lock()
		release := w.release
		close(w.done)
		jc.mu.Unlock()
		if release {
			w.obj.Release()
		}
	}()
}

// afterEntry calls fn on a goroutine of its own once object i's entry,
// written by this job, is stored; not at all when it was not.
func (j *job) afterEntry(i int, fn func()) {
	jc := j.cache
	if jc == nil || jc.writing == nil {
		return
	}
	jc.mu.Lock()
	w := jc.writing[i]
	jc.mu.Unlock()
	if w == nil {
		return
	}
	jc.bg.Add(1)
	go func() {
		defer jc.bg.Done()
		defer jc.bug.catch()
		<-w.done
		if w.stored {
			fn()
		}
	}()
}

// testHookPutLater, when set, is called by putLater's writer before it
// writes an entry, with the entry's URL.
var testHookPutLater func(url string)

// laterQueue is how many putLater writes may wait for the writer at
// once: past it the job waits for one to be done, so that a job writing
// many entries (a cold --cache job of 20,000 runs) holds at most this many
// payloads and goroutines, not one per entry.
const laterQueue = 64

// putLater writes payload as the entry of key in c (a Kind of the job's
// cache) on a goroutine beside the job, one such write at a time on a
// local cache (at most one core, and the cache's one EncodeAll encoder,
// taken from the job) and remoteWrites at a time on a remote one (their
// round trips overlapping; the encoder still compresses one at a time),
// so that the family, cell, figure, run and index entries are not written
// on the job's path: waitEntries waits for them, before anything is
// published and before the cache is closed. A failed write is a warning,
// as on the path. payload is the writer's from here on.
func (j *job) putLater(ctx context.Context, c *cache.Cache, key string, payload []byte) {
	jc := j.cache
	jc.queued <- struct{}{}
	jc.bg.Add(1)
	go func() {
		defer func() { <-jc.queued }()
		defer jc.bg.Done()
		jc.writers <- struct{}{}
		defer func() { <-jc.writers }()
		defer jc.bug.catch()
		if testHookPutLater != nil {
			testHookPutLater(c.URL(key))
		}
		if err := c.Put(ctx, key, cache.Entry{Payload: payload}); err != nil {
			j.cacheWriteFailed(ctx, err)
		}
	}()
}

// waitEntries waits for the entries being written beside the job, and for
// what waits for them; a panic of one of them it panics again with, on the
// job's goroutine.
func (j *job) waitEntries() {
	if j.cache != nil {
		j.cache.bg.Wait()
		j.cache.bug.rethrow()
	}
}

// releaseObjects releases the decoded objects of rd, except those being
// encoded for their entry: their writer releases them once it is done.
func (j *job) releaseObjects(rd *read) {
	if rd == nil {
		return
	}
	jc := j.cache
	for i, o := range rd.objects {
		if o == nil {
			continue
		}
		if jc != nil && jc.writing != nil && i < len(jc.writing) {
			jc.mu.Lock()
			w := jc.writing[i]
			later := false
			if w != nil && w.obj != nil {
				select {
				case <-w.done:
				default:
					w.release, later = true, true
				}
			}
			jc.mu.Unlock()
			if later {
				continue
			}
		}
		o.Release()
	}
}

// storeCache writes object i's entry, if it has one pending, once the
// object has been read whole: unless it changed since it was looked up.
// It reports whether it wrote the entry.
func (j *job) storeCache(ctx context.Context, b *blob.Bucket, i int, o object, h uint64) bool {
	jc := j.cache
	if jc == nil || jc.pending == nil || jc.pending[i] == nil && jc.sealed[i] == nil {
		return false
	}
	enc, sealed := jc.pending[i], jc.sealed[i]
	jc.pending[i], jc.sealed[i] = nil, nil
	before := jc.attrs[i]
	after, err := j.attributes(ctx, b, o.Key)
	// Looked up, read, looked up again: the same version throughout, or
	// nothing is stored. (The reader's own modification time is not
	// compared: some stores give it to the second, their listings to the
	// nanosecond.)
	if err != nil || after.ETag != before.ETag || after.Size != before.Size || !after.ModTime.Equal(before.ModTime) {
		return false // changed under the job (or gone): not stored
	}
	if sealed != nil {
		err = jc.c.PutSealed(ctx, sealed, h)
	} else {
		err = jc.c.Put(ctx, jc.keys[i], cache.Entry{Payload: enc, Hash: h})
	}
	if err != nil {
		j.cacheWriteFailed(ctx, err)
		return false
	}
	return true
}

// cacheWriteFailed warns, once per job, that the cache cannot be written.
func (j *job) cacheWriteFailed(ctx context.Context, err error) {
	if ctx.Err() != nil {
		return
	}
	if errors.Is(err, cache.ErrOff) && j.cache.c.ReadsOff() != nil {
		j.cacheOff(err) // its reads stopped, and its writes with them
		return
	}
	j.cache.warnOnce.Do(func() {
		j.log.Warn("cache cannot be written: the job goes on without storing entries", "cache", j.cache.c.String(), "error", err)
	})
}

// badCounter counts the bad rows skipped in one object on their way to
// onBad.
func badCounter(onBad readers.BadRowFunc, n *int) readers.BadRowFunc {
	if onBad == nil {
		return nil
	}
	return func(row *readers.DataError) error {
		err := onBad(row)
		if err == nil {
			*n++
		}
		return err
	}
}
