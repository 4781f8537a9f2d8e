package pipeline

import (
	"errors"
	"io"
	"strings"
	"sync"

	"github.com/crlbatch/crlbatch/internal/testhook"
	"github.com/crlbatch/crlbatch/readers"
	"github.com/crlbatch/crlbatch/scoring"
)

// One large object on several cores. Objects are decoded one per
// goroutine; an object holding more than a core's share of the sweep (one
// big file, or one much bigger than the rest) would leave the other cores
// idle, and so would the last object of a sweep, which ends alone after
// the others. Such an object is split into newline-aligned chunks decoded
// on --concurrency goroutines and merged in order (readers.SplitObject).
// The result is exactly DecodeObject's, errors and bad rows included, so
// the outputs do not depend on which objects were split.

// splitObjects says, for each object of objs, whether it is decoded in
// chunks: with more than one core, when it is at least two chunks long and
// either its listed size is more than 1/--concurrency of the sweep's, or it
// is the last of several objects and not named as compressed.
func (j *job) splitObjects(objs []object) []bool {
	split := make([]bool, len(objs))
	c := int64(j.cfg.Concurrency)
	if _, ok := j.proto.dec.(scoring.Splitter); !ok || c < 2 {
		return split
	}
	total := sumSizes(objs)
	for i, o := range objs {
		split[i] = o.Size >= 2*int64(j.chunkBytes()) && o.Size*c > total
	}
	// The last object is read last and would end alone on one core: in
	// chunks, the cores share it as they come free. Measured, the reading
	// ended no sooner, but the scoring pass ran ~20 ms shorter: the
	// chunks' buffers, garbage once merged, are resident memory its runs
	// reuse rather than first-touch. Not a compressed object, whose chunks
	// are decompressed on one goroutine: that cost CPU and raised the peak
	// (docs/decisions.md).
	if n := len(objs); n > 1 && !compressedName(objs[n-1].Key) {
		split[n-1] = split[n-1] || objs[n-1].Size >= 2*int64(j.chunkBytes())
	}
	return split
}

// compressedName says whether key names a gzip or zstd object. The
// decoder goes by an object's bytes, not its name: a misnamed object is
// decoded the same way, only split or not by the wrong rule.
func compressedName(key string) bool {
	for _, ext := range []string{".gz", ".zst", ".zstd"} {
		if strings.HasSuffix(key, ext) {
			return true
		}
	}
	return false
}

// decode decodes object o: in chunks on several cores when split
// (splitObjects), else in one piece.
func (j *job) decode(split bool, o object, url, rel string, r io.Reader, onBad readers.BadRowFunc) (scoring.Object, error) {
	testhook.At("decode")
	if split {
		j.log.Info("decoding in chunks", "object", Redact(url), "bytes", o.Size,
			"chunk_bytes", j.chunkBytes(), "workers", j.cfg.Concurrency)
		c, err := j.proto.dec.(scoring.Splitter).Split(url, rel, r, onBad)
		if err != nil {
			return nil, err
		}
		return decodeChunked(c, j.cfg.Concurrency, j.chunkBytes())
	}
	return j.proto.dec.Decode(url, rel, r, onBad)
}

func (j *job) chunkBytes() int {
	if j.cfg.chunkBytes > 0 {
		return j.cfg.chunkBytes
	}
	return readers.DefaultChunkBytes
}

// decodeChunked decodes one object as Decode does, its chunks on
// workers goroutines, and closes c.
func decodeChunked(c scoring.Chunks, workers, size int) (scoring.Object, error) {
	defer c.Close()
	if c.Compressed() {
		return decodeCompressed(c, workers, size)
	}
	return decodePlain(c, workers, size)
}

// decodeCompressed is decodeChunked for an object whose chunks are
// decompressed as they are read, which costs about as much as decoding
// them. The calling goroutine reads every chunk (the decompressor stays on
// one goroutine) and hands it to workers-1 others through a queue of
// workers-1 chunks; when the queue is full it decodes the chunk itself
// rather than wait. Whichever goroutine decoded a chunk merges it and the
// decoded chunks after it, in order, one goroutine at a time. The reader
// never waits for a worker and nothing waits for a merge goroutine: a
// reader that waited, woken by the worker that took its chunk, sat behind
// that worker on its core (the runtime runs a goroutine readied by another
// on the same core, after it) while the other worker ran out of chunks,
// and a merge goroutine was woken for every chunk. At most 2×workers
// chunks are read and not yet merged.
func decodeCompressed(c scoring.Chunks, workers, size int) (scoring.Object, error) {
	workers = max(workers, 1)
	o := newInOrder(c, workers)
	type read struct {
		seq int
		ch  any
	}
	queue := make(chan read, workers-1)
	// decode decodes a chunk and merges what it completes; false once the
	// object failed.
	decode := func(r read) (ok bool) {
		defer o.catch()
		select {
		case <-o.stop:
			return false
		default:
		}
		return o.merge(r.seq, c.Decode(r.ch))
	}
	var wg sync.WaitGroup
	for range workers - 1 {
		wg.Go(func() {
			for r := range queue {
				if !decode(r) {
					return
				}
			}
		})
	}
reading:
	for seq := 0; o.take(); seq++ {
		ch, err := c.Next(size)
		if err != nil { // io.EOF: a broken stream is the last chunk's error
			break
		}
		select {
		case queue <- read{seq, ch}:
		case <-o.stop:
			break reading
		default:
			if !decode(read{seq, ch}) {
				break reading
			}
		}
	}
	close(queue)
	for r := range queue {
		if !decode(r) {
			break
		}
	}
	wg.Wait()
	return o.object()
}

// decodePlain is decodeChunked for an object read as it is stored. Each of
// workers goroutines reads the next chunk itself (c.Next, one goroutine at
// a time), decodes it and merges what that completes, in order, one
// goroutine at a time, as decodeCompressed's workers do: a chunk's bytes
// are decoded on the core that read them, into a buffer it used before
// (the chunks' buffers are reused last freed, first taken), and its rows
// mostly merged while they are in that core's cache. A goroutine reading
// for the others and the merge on the calling goroutine cost the merging
// about twice as much on the Intel Xeon of docs/decisions.md. At most
// 2×workers chunks are read and not yet merged.
func decodePlain(c scoring.Chunks, workers, size int) (scoring.Object, error) {
	workers = max(workers, 1)
	o := newInOrder(c, workers)
	var (
		readMu sync.Mutex // c.Next and what follows
		seq    int        // chunks read
		ended  bool       // c.Next has no chunk left
	)
	// next reads the next chunk and its sequence number; false when there
	// is none.
	next := func() (any, int, bool) {
		readMu.Lock()
		defer readMu.Unlock()
		if ended {
			return nil, 0, false
		}
		ch, err := c.Next(size)
		if err != nil { // io.EOF: a broken stream is the last chunk's error
			ended = true
			return nil, 0, false
		}
		seq++
		return ch, seq - 1, true
	}
	// work reads, decodes and merges chunks until there is none left or
	// the object failed.
	work := func() {
		defer o.catch()
		for o.take() {
			ch, s, ok := next()
			if !ok || !o.merge(s, c.Decode(ch)) {
				return
			}
		}
	}
	var wg sync.WaitGroup
	for range workers - 1 {
		wg.Go(work)
	}
	work()
	wg.Wait()
	return o.object()
}

// inOrder merges an object's decoded chunks in order, one goroutine at a
// time, whichever goroutine decoded them (decodeCompressed, decodePlain):
// the goroutine that decoded the first chunk not yet merged merges it and
// the decoded chunks after it. At most 2×workers chunks are read and not
// yet merged (take); a failed merge, or a panic on a goroutine that
// decodes or merges (catch), fails the object and closes stop, which every
// wait selects on; a panic is panicked again by object, once every worker
// has returned.
type inOrder struct {
	c     scoring.Chunks
	ahead int
	room  chan struct{} // a token for each chunk read and not yet merged
	stop  chan struct{} // closed when the object failed

	mu      sync.Mutex // c.Merge and what follows
	decoded []any      // decoded chunks by sequence number, modulo ahead
	merged  int
	err     error
	bug     bugs
}

func newInOrder(c scoring.Chunks, workers int) *inOrder {
	ahead := 2 * workers
	return &inOrder{c: c, ahead: ahead, room: make(chan struct{}, ahead), stop: make(chan struct{}), decoded: make([]any, ahead)}
}

// take waits for room to read one more chunk; false once the object
// failed (a goroutine that finds both does not read on).
func (o *inOrder) take() bool {
	select {
	case <-o.stop:
		return false
	default:
	}
	select {
	case o.room <- struct{}{}:
		return true
	case <-o.stop:
		return false
	}
}

// merge keeps chunk seq, decoded as d, and merges it and the decoded
// chunks after it if it is the first not yet merged; false once the
// object failed.
func (o *inOrder) merge(seq int, d any) bool {
	o.mu.Lock()
	merging := false
	defer func() {
		if merging {
			// c.Merge panicked: the object fails before the lock goes,
			// so that no other goroutine merges the chunks after it
			// (catch keeps the panic).
			o.fail(errPanicked)
		}
		o.mu.Unlock()
	}()
	o.decoded[seq%o.ahead] = d
	for o.err == nil && o.decoded[o.merged%o.ahead] != nil {
		next := o.decoded[o.merged%o.ahead]
		o.decoded[o.merged%o.ahead] = nil
		o.merged++
		merging = true
		err := o.c.Merge(next)
		merging = false
		if err != nil {
			o.fail(err)
			break
		}
		<-o.room
	}
	return o.err == nil
}

// fail fails the object with err, unless it failed already, and closes
// stop; under o.mu.
func (o *inOrder) fail(err error) {
	if o.err == nil {
		o.err = err
		close(o.stop)
	}
}

// catch, deferred by a goroutine that decodes or merges chunks, fails the
// object with its panic.
func (o *inOrder) catch() {
	if p := recover(); p != nil {
		o.bug.keep(internalError(p))
		o.mu.Lock()
		o.fail(errPanicked)
		o.mu.Unlock()
	}
}

// object is the object once every goroutine has returned: a panic
// panicked again, else the first error, else c.Object.
func (o *inOrder) object() (scoring.Object, error) {
	o.bug.rethrow()
	if o.err != nil {
		return nil, o.err
	}
	return o.c.Object()
}

// errPanicked stops an object's workers after a panic (inOrder.catch),
// which is what the object's decode then panics with.
var errPanicked = errors.New("a worker panicked")
