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
	ahead := 2 * workers
	type read struct {
		seq int
		ch  any
	}
	var (
		queue = make(chan read, workers-1)
		// room holds a token for each chunk read and not yet merged.
		room = make(chan struct{}, ahead)
		stop = make(chan struct{}) // closed when the object failed

		mu      sync.Mutex           // c.Merge and what follows
		decoded = make([]any, ahead) // decoded chunks by sequence number, modulo ahead
		merged  int
		err     error
	)
	// decode decodes a chunk and merges what it completes; false once the
	// object failed. A panic fails the object too (stop), and is panicked
	// again on the calling goroutine once every worker has returned.
	var bug bugs
	decode := func(r read) (ok bool) {
		defer func() {
			if p := recover(); p != nil {
				bug.keep(internalError(p))
				mu.Lock()
				if err == nil {
					err = errPanicked
					close(stop)
				}
				mu.Unlock()
				ok = false
			}
		}()
		select {
		case <-stop:
			return false
		default:
		}
		d := c.Decode(r.ch)
		mu.Lock()
		defer mu.Unlock()
		decoded[r.seq%ahead] = d
		for err == nil && decoded[merged%ahead] != nil {
			next := decoded[merged%ahead]
			decoded[merged%ahead] = nil
			merged++
			if err = c.Merge(next); err != nil {
				close(stop)
				break
			}
			<-room
		}
		return err == nil
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
	for seq := 0; ; seq++ {
		select {
		case room <- struct{}{}:
		case <-stop:
			break reading
		}
		ch, err := c.Next(size)
		if err != nil { // io.EOF: a broken stream is the last chunk's error
			break
		}
		select {
		case queue <- read{seq, ch}:
		case <-stop:
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
	bug.rethrow()
	if err != nil {
		return nil, err
	}
	return c.Object()
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
	ahead := 2 * workers
	var (
		// room holds a token for each chunk read and not yet merged.
		room = make(chan struct{}, ahead)
		stop = make(chan struct{}) // closed when the object failed

		readMu sync.Mutex // c.Next and what follows
		seq    int        // chunks read
		ended  bool       // c.Next has no chunk left

		mu      sync.Mutex           // c.Merge and what follows
		decoded = make([]any, ahead) // decoded chunks by sequence number, modulo ahead
		merged  int
		err     error
		bug     bugs
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
	// merge keeps chunk s decoded and merges it and the decoded chunks
	// after it, in order, if it is the first not merged; false once the
	// object failed.
	merge := func(s int, d any) bool {
		mu.Lock()
		defer mu.Unlock()
		decoded[s%ahead] = d
		for err == nil && decoded[merged%ahead] != nil {
			d := decoded[merged%ahead]
			decoded[merged%ahead] = nil
			merged++
			if err = c.Merge(d); err != nil {
				close(stop)
				break
			}
			<-room
		}
		return err == nil
	}
	// work reads, decodes and merges chunks until there is none left or
	// the object failed. A panic fails the object (stop) and is panicked
	// again on the calling goroutine once every worker has returned.
	work := func() {
		defer func() {
			if p := recover(); p != nil {
				bug.keep(internalError(p))
				mu.Lock()
				if err == nil {
					err = errPanicked
					close(stop)
				}
				mu.Unlock()
			}
		}()
		for {
			select {
			case room <- struct{}{}:
			case <-stop:
				return
			}
			ch, s, ok := next()
			if !ok {
				return
			}
			if !merge(s, c.Decode(ch)) {
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
	bug.rethrow()
	if err != nil {
		return nil, err
	}
	return c.Object()
}

// decodeChunk is c.Decode(ch), or the *InternalError of its panic.
func decodeChunk(c scoring.Chunks, ch any) (d any) {
	defer func() {
		if p := recover(); p != nil {
			d = internalError(p)
		}
	}()
	return c.Decode(ch)
}

// errPanicked stops decodeCompressed's workers after a panic, which is
// what the object's decode then panics with.
var errPanicked = errors.New("a worker panicked")
