package pipeline

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"log/slog"
	"os"
	"runtime"
	"strings"
	"sync"
	"time"

	"gocloud.dev/blob"

	"github.com/crlbatch/crlbatch/internal/hugemem"
	"github.com/crlbatch/crlbatch/internal/testhook"
	"github.com/crlbatch/crlbatch/readers"
	"github.com/crlbatch/crlbatch/scoring"
	"github.com/crlbatch/crlbatch/storage"
	"github.com/crlbatch/crlbatch/writers"
)

// SchemaVersion is crlbatch.schema_version of every Parquet file: raise it
// when a column is renamed or removed.
const SchemaVersion = "1"

// Summary is what a finished job reports.
type Summary struct {
	Objects  int
	Rows     int64
	Runs     int
	Families int
	// Read counts the objects by how their runs were obtained (ReadDecoded,
	// ReadParquet, ReadCache).
	Read    map[string]int
	Outputs []writers.ManifestOutput
	// Output is the OUTPUT location; Result names the prefix holding this
	// run's files (OUTPUT itself, or OUTPUT/results/<attempt-id>/ under
	// --history).
	Output string
	Result string
}

// job carries what one run of the engine shares between its steps: the
// configuration, the locations and the progress. Results travel between
// the steps as values (read, scored, published).
type job struct {
	cfg   *Config
	log   *slog.Logger
	in    Location
	out   Location
	prog  *progress
	start time.Time
	proto bound
	cache *jobCache   // --cache; nil without
	spill *spillSpace // the job's spill folder (spill.go), from its first read step

	exeReleased bool // the executable's pages were released (releaseStartPages)

	// Publishing (publish.go): this job's attempt id, its host, the
	// claim it holds under OUTPUT ("" once released), and whether it
	// replaces a one-off result (--overwrite).
	attempt   string
	host      string
	claimed   string
	replacing bool

	hashOnce sync.Once
	hashSeed maphash.Seed
	hashMu   sync.Mutex
	hashes   map[string][2]uint64 // object key → size and hash of its bytes
}

// bound is the job's protocol bound to its parameters.
type bound struct {
	name     string
	desc     scoring.Description
	job      scoring.Job
	dec      scoring.Decoder
	identity []string // the run identity fields in force
	groupBy  []string
	flags    scoring.Flags // the protocol's flags as bound (scoreKey)
}

// outFile is one result file: its bytes (data), or, for report.md and
// report.html, what writes them (to), so that a report of 100,000 labels
// (35 MB of Markdown, 137 MB of HTML) is not held as bytes beside what it
// is written from. Everything the file says is decided before anything
// is written: to writes the same bytes each time it is called (a retried
// write) and fails only if its writer does.
type outFile struct {
	name string
	data []byte
	to   io.WriterTo
	rows *int64
	size int64 // the bytes written, once published
}

// writeTo writes the file to w.
func (f *outFile) writeTo(w io.Writer) error {
	if f.to != nil {
		_, err := f.to.WriteTo(w)
		return err
	}
	// In pieces, so that an upload that moves counts as progress.
	for rest := f.data; len(rest) > 0; {
		n := min(len(rest), 1<<20)
		if _, err := w.Write(rest[:n]); err != nil {
			return err
		}
		rest = rest[n:]
	}
	return nil
}

// read is what reading the objects gives: the decoded objects, in the
// listing's order, and what the manifest and the notes say about them.
type read struct {
	objects []scoring.Object
	rows    int64
	manObj  []writers.ManifestObject
	skipped []writers.SkippedRow // bad rows skipped under --max-bad-rows, in canonical order
	notes   []string
	spilled int
	how     []string       // per object: ReadDecoded, ReadParquet or ReadCache
	counts  map[string]int // objects by how they were read
}

// result is what scoring gives: the files to publish and what the manifest
// says about them.
type result struct {
	files    []outFile
	params   []byte
	notes    []string
	runs     int // runs scored (after --where)
	families int
}

// newJob starts a job: its locations and its protocol.
func newJob(cfg *Config) (*job, error) {
	j := &job{cfg: cfg, log: cfg.Logger, start: time.Now().UTC()}
	j.host, _ = os.Hostname()
	if j.log == nil {
		j.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	var err error
	if j.in, err = ParseLocation(cfg.Input, false); err != nil {
		return nil, err
	}
	if j.proto, err = cfg.bind(); err != nil {
		return nil, err
	}
	return j, nil
}

// locateOutput parses OUTPUT and checks it against INPUT, and checks the
// decoder's options: usage errors, before anything is read.
func (j *job) locateOutput() error {
	// {date} in OUTPUT is the job's start date (UTC), for nightly prefixes
	// such as s3://lab/scores/{date}/.
	output := strings.ReplaceAll(j.cfg.Output, "{date}", j.start.Format("2006-01-02"))
	var err error
	if j.out, err = ParseLocation(output, true); err != nil {
		return err
	}
	if j.out.Path != "" && j.out.Local && j.out.Prefix == "" {
		return Usagef("--out %s is a file: want a folder or prefix", j.out)
	}
	if within(j.out, j.in) {
		return Usagef("--out %s lies inside the input %s: the next run would read its own results", j.out, j.in)
	}
	return j.proto.dec.Check()
}

// Run executes the job: list, read, assemble, score, reduce, write. On any
// error nothing is left under the output prefix: the result files are
// written only after every number is computed, a failed write deletes what
// was written, and manifest.json comes last. A panic (a bug) fails the job
// the same way, as an *InternalError, once the deferred clean-up has run.
func Run(ctx context.Context, cfg Config) (_ *Summary, err error) {
	defer Recover(&err)
	if err := cfg.Check(); err != nil {
		return nil, err
	}
	j, err := newJob(&cfg)
	if err != nil {
		return nil, err
	}
	if err := j.locateOutput(); err != nil {
		return nil, err
	}
	j.prog = newProgress(cfg.Progress, cfg.Terminal)
	defer j.prog.stop()

	inB, inClose, err := openBucket(ctx, cfg.Opener, j.in)
	if err != nil {
		return nil, err
	}
	defer inClose()
	outB, outClose, err := openBucket(ctx, cfg.Opener, j.out)
	if err != nil {
		return nil, err
	}
	defer outClose()

	target, err := j.checkOutput(ctx, outB)
	if err != nil {
		return nil, err
	}
	defer j.release(ctx, outB)
	defer func() {
		if j.spill != nil {
			j.spill.remove()
		}
	}()

	phase("list")
	objs, err := list(ctx, inB, j.in, cfg.Patterns, cfg.Retry)
	if err != nil {
		return nil, err
	}
	if len(objs) == 0 {
		return nil, noObjectMatches(ctx, inB, j.in, cfg.Patterns, true, cfg.Retry)
	}
	j.log.Info("listed", "input", j.in.String(), "objects", len(objs))
	if err := besideItsConversion(j.in, objs); err != nil {
		return nil, err
	}
	// This job means to publish: first tidy up after jobs that did not
	// finish (after the input is listed, so that a store failing every
	// listing is reported for the input).
	if err := j.tidy(ctx, outB); err != nil {
		return nil, err
	}
	prev, err := j.loadPrevious(ctx, outB, target)
	if err != nil {
		return nil, err
	}
	if err := j.openCache(ctx); err != nil {
		return nil, err
	}
	defer j.closeCache()

	j.prog.setTotal(len(objs), sumSizes(objs))
	rd, res, err := j.readAndScore(ctx, inB, objs, prev)
	defer releaseAll(rd)  // spill files go whatever happens
	defer j.waitEntries() // before the objects and the cache go
	if err != nil {
		return nil, err
	}
	testhook.At("main")
	if err := testhook.Wait(ctx, "main"); err != nil {
		return nil, err
	}
	// The objects' entries written beside the job are in the cache (or
	// were warned about) before anything is published.
	j.waitEntries()
	outputs, err := j.publish(ctx, outB, target, rd, res)
	if err != nil {
		return nil, err
	}
	j.prog.done()
	return &Summary{Objects: len(objs), Rows: rd.rows, Runs: res.runs, Families: res.families, Read: rd.counts, Outputs: outputs,
		Output: j.out.String(), Result: j.out.ObjectURL(target)}, nil
}

func releaseAll(rd *read) {
	if rd == nil {
		return
	}
	for _, o := range rd.objects {
		if o != nil {
			o.Release()
		}
	}
}

// read decodes every object (spilling past --memory-limit), applies
// --max-bad-rows and fails a job whose objects hold no row.
func (j *job) read(ctx context.Context, b *blob.Bucket, objs []object) (*read, error) {
	rs := j.startRead(objs)
	if err := j.readSome(ctx, b, rs, nil); err != nil {
		return rs.rd, err
	}
	return rs.rd, j.finishRead(rs, nil)
}

// reading is the state of read between its steps: the run cache
// (runcache.go) reads some objects, then others, then finishes.
type reading struct {
	objs  []object
	bud   *budget
	bad   *badRows
	split []bool
	rd    *read
}

// slabLimitMin is the smallest memory limit under which the builders take
// their chunks from skyfall's shared slabs (32 slabs of 8 MiB).
const slabLimitMin = 256 << 20

// slabInputMin is the fewest bytes of objects a read step must decode for
// the builders to take their chunks from skyfall's shared slabs.
const slabInputMin = 64 << 20

// decodeBytes is the bytes of the objects a read step decodes: not those
// read already, not wanted now, skipped or served from --cache.
func (j *job) decodeBytes(rs *reading, want []bool) int64 {
	var decode int64
	for i, o := range rs.objs {
		if rs.rd.objects[i] == nil && (want == nil || want[i]) && !j.skipRead(i) && j.cached(i) == nil {
			decode += o.Size
		}
	}
	return decode
}

// useSlabs has the builders take their full-size chunks from skyfall's
// shared slabs when the objects this read step decodes (decode, from
// decodeBytes) hold at least slabInputMin bytes, and the memory limit is
// at least slabLimitMin. Slabs save first touches of
// fresh pages on a job that decodes much, but keep spilled runs' chunks in
// memory beside live ones under a tight limit, and cost a step that
// decodes little: a warm rerun decoding one changed object of 50 MB took
// 10-18 ms longer with them (its chunks otherwise reuse memory the heap
// has touched already). Where it uses them, or the limit is below
// slabLimitMin, it also withdraws the heap's huge-page advice
// (withdrawHeapAdvice): one of the two serves a job, never both.
func (j *job) useSlabs(rs *reading, decode int64) {
	slabs := rs.bud.limit >= slabLimitMin && decode >= slabInputMin
	readers.UseSlabs(slabs)
	if slabs || rs.bud.limit < slabLimitMin {
		withdrawHeapAdvice()
	}
}

// exeReleaseMin is the fewest bytes of objects a read step must decode for
// the job to release the executable's pages first (releaseStartPages): as
// many as slabInputMin, the bytes of a compressed object (the 1 GB sweep's
// zstd form is 163 MB); a variable for the tests.
var exeReleaseMin int64 = 64 << 20

// releaseStartPages releases, once per job, the pages of the executable
// that the process has resident when a read step that decodes at least
// exeReleaseMin bytes (decode) starts: most of them were touched only while
// the process started (package initialisation: ~20 MiB of a job's peak of
// ~110 MiB on the 1 GB sweep), and the ones the job runs next are faulted
// back in (a few milliseconds, which a step that decodes little does not
// pay: a warm --cache rerun). See hugemem.ReleaseExecutable and
// docs/decisions.md.
func (j *job) releaseStartPages(decode int64) {
	if j.exeReleased || decode < exeReleaseMin {
		return
	}
	j.exeReleased = true
	if n := releaseExecutable(); n > 0 {
		j.log.Debug("the executable's pages released before the objects are read", "bytes", n)
	}
}

// releaseExecutable is hugemem.ReleaseExecutable; a variable so that a
// test can see the calls.
var releaseExecutable = hugemem.ReleaseExecutable

// withdrawHeapAdvice takes back the huge-page advice of the heap's address
// space that crlbatch's main package gives while the process starts
// (internal/hugeheap); a variable so that a test can see the calls. useSlabs
// calls it for a read step that decodes much, whose largest buffers (the
// slabs, the Parquet pool's) are advised on their own and whose partly used
// huge pages elsewhere only add to the peak (2-5 MiB on the 1 GB sweeps),
// and under a memory limit below slabLimitMin. A step that decodes little
// (a warm --cache rerun, one changed object) keeps it: its heap is mostly
// fresh pages, touched once each (docs/decisions.md).
var withdrawHeapAdvice = hugemem.WithdrawHeap

func (j *job) startRead(objs []object) *reading {
	bud := &budget{limit: j.cfg.MemoryLimit, dir: j.cfg.SpillDir}
	bud.defaults()
	if j.spill == nil {
		j.spill = &spillSpace{parent: bud.dir, host: j.host, log: j.log}
	}
	bud.space = j.spill
	// The traces' columns carved out of the Parquet reader's idle
	// buffers: likewise not under a tight limit, where objects are still
	// read while runs are scored.
	readers.UseIdleParquetMemory(bud.limit >= slabLimitMin)
	return &reading{objs: objs, bud: bud, bad: newBadRows(len(objs), j.cfg.MaxBadRows), split: j.splitObjects(objs),
		rd: &read{objects: make([]scoring.Object, len(objs)), how: make([]string, len(objs)), counts: map[string]int{}}}
}

// readSome reads (from --cache or the input) the objects want says (all
// for nil) that are not read yet.
func (j *job) readSome(ctx context.Context, b *blob.Bucket, rs *reading, want []bool) error {
	rd, objs, bud := rs.rd, rs.objs, rs.bud
	if j.cache != nil {
		j.cache.skip = make([]bool, len(objs))
		for i := range objs {
			j.cache.skip[i] = rd.objects[i] != nil || want != nil && !want[i]
		}
	}
	if err := j.lookupCache(ctx, b, objs); err != nil {
		return err
	}
	decode := j.decodeBytes(rs, want)
	j.useSlabs(rs, decode)
	j.releaseStartPages(decode)
	if j.cache != nil {
		// The cores are shared by the objects decoded now (a warm rerun's
		// changed ones), not by the whole sweep: one changed object large
		// enough is decoded in chunks on every core.
		var todo []object
		var idx []int
		for i := range objs {
			if rd.objects[i] == nil && !j.skipRead(i) && j.cache.hits[i] == nil {
				todo, idx = append(todo, objs[i]), append(idx, i)
			}
		}
		for k, s := range j.splitObjects(todo) {
			rs.split[idx[k]] = s
		}
	}
	got, err := readObjects(ctx, j, b, objs, rs.bad, func(i int, url, rel string, r io.Reader) (scoring.Object, error) {
		var (
			skipped int
			o       scoring.Object
			how     string
			err     error
		)
		onBad := badCounter(rs.bad.hook(i), &skipped)
		if rf := j.takeResume(i); rf != nil {
			how = ReadAppended
			o, err = j.decodeAppended(rf, rs.split[i], objs[i], url, rel, r, onBad)
		} else {
			o, how, err = j.decodeAny(ctx, b, rs.split[i], objs[i], url, rel, r, onBad)
		}
		if err != nil {
			return nil, err
		}
		rd.how[i] = how
		j.markTailable(i, o, how)
		j.keepForCache(i, o, skipped)
		if err := bud.admit(o, func() { j.encodeForCache(i) }); err != nil {
			o.Release()
			return nil, err
		}
		return o, nil
	})
	var hits []int
	for i := range got {
		if o := j.cached(i); o != nil {
			got[i], rd.how[i] = o, ReadCache
			hits = append(hits, i)
		}
		if got[i] != nil {
			rd.objects[i] = got[i]
		}
	}
	if j.cache != nil {
		clear(j.cache.hits)
	}
	if err != nil {
		return err
	}
	for _, i := range hits {
		if err := bud.admit(rd.objects[i], nil); err != nil {
			return err
		}
	}
	return nil
}

// finishRead applies --max-bad-rows and builds what the manifest and the
// notes say of the objects read; an object not read (nil) is described by
// served (runcache.go), as served from the cache.
func (j *job) finishRead(rs *reading, served func(i int) (rows, runs int)) error {
	rd, objs, bad, bud := rs.rd, rs.objs, rs.bad, rs.bud
	// The objects are read: the zstd decoders they left idle (a window of
	// 8 MiB each at zstd's default levels) and the read buffers are garbage
	// now. One collection here lets the runs assembled and scored next
	// reuse that memory; without it the heap grew past it before the next
	// collection (issue 16: the 1 GB zstd sweeps peaked 12-18 MiB higher).
	readers.ReleaseDecoders()
	runtime.GC()
	// Once more from the start when objects were read since (runcache.go).
	rd.rows, rd.manObj, rd.counts = 0, nil, map[string]int{}
	if err := bad.err(); err != nil {
		return err
	}
	rows := bad.all()
	rd.skipped = skippedRows(rows)
	rd.notes = badRowNotes(rows, j.cfg.MaxBadRows)
	if len(rows) > 0 {
		j.log.Warn("skipped bad rows", "rows", len(rows), "max_bad_rows", j.cfg.MaxBadRows)
	}
	for i, o := range rd.objects {
		var nrows, nruns int
		if o != nil {
			nrows, nruns = o.Rows(), o.NumRuns()
		} else {
			nrows, nruns = served(i)
			rd.how[i] = ReadCache
		}
		rd.rows += int64(nrows)
		rd.manObj = append(rd.manObj, writers.ManifestObject{
			Key: objs[i].Rel, Size: objs[i].Size, ETag: objs[i].ETag, MD5: objs[i].MD5,
			RowsRead: int64(nrows), RunsFound: nruns, Status: "ok", Read: rd.how[i],
		})
		rd.counts[rd.how[i]]++
	}
	// An empty result must not pass for a scored night (writers that
	// crashed before their first flush).
	if rd.rows == 0 {
		return &DataError{Err: fmt.Errorf("%s: no rows in the %d object(s) read: nothing to score", j.in, len(objs))}
	}
	rd.notes = append(rd.notes, j.duplicates(objs)...)
	rd.notes = append(rd.notes, j.hiddenObjects(objs)...)
	rd.spilled = bud.spilled
	if bud.spilled > 0 {
		j.log.Info("spilled decoded rows to disk", "objects", bud.spilled, "of", len(objs),
			"memory_limit", bud.limit, "spill_dir", bud.dir)
	}
	return nil
}

// dataErr keeps a reader's DataError as it is and wraps anything else.
func dataErr(err error) error {
	var de *readers.DataError
	if errors.As(err, &de) {
		return err
	}
	return &DataError{Err: err}
}

// readObjects decodes every object with at most Concurrency at once, each
// into its own slot, retrying transient storage errors (a retried object is
// decoded again from its first byte). decode is given the object's index,
// its URL and its key relative to the input prefix. Objects that bad (the
// bad rows, --max-bad-rows) says no longer matter are not read, or
// abandoned midway: their slots stay empty, and bad.err() then fails the
// job. The error is that of the first object in key order that fails
// (ordered), or the row breaking --max-bad-rows when it comes before it:
// the same at any --concurrency.
func readObjects[T any](ctx context.Context, j *job, b *blob.Bucket, objs []object, bad *badRows, decode func(i int, url, rel string, r io.Reader) (T, error)) ([]T, error) {
	out := make([]T, len(objs))
	// Only objects whose listed size another object shares can hold the
	// same bytes: the others are not hashed (hashing costs ~4 % of the CPU
	// of a sweep).
	sizes := make(map[int64]int, len(objs))
	for _, o := range objs {
		sizes[o.Size]++
	}
	failed, err := ordered(ctx, len(objs), j.cfg.Concurrency, func(gctx context.Context, i int) error {
		o := objs[i]
		if bad != nil && bad.skip(i) {
			return nil
		}
		if j.skipRead(i) { // read already, or not needed
			return nil
		}
		if j.cached(i) != nil { // served from --cache
			j.prog.add(int(o.Size))
			j.prog.objectDone()
			return nil
		}
		url := j.in.ObjectURL(o.Key)
		var first time.Time // the object's modification time at its first opening
		err := j.cfg.Retry.retry(gctx, func(actx context.Context, touch func()) error {
			if testHookListed != nil {
				testHookListed(o.Key)
			}
			// An object that grew from the bytes of an entry is read
			// from the end of those (appended.go), else from its start.
			r, start, from, head := j.openAppended(actx, b, i, o)
			var m *storage.Mapped // the object's bytes in place (a local file)
			if r == nil {
				br, err := b.NewReader(actx, o.Key, nil)
				if err != nil {
					return err
				}
				if !br.As(&m) {
					m = nil
				}
				r = br
			}
			defer r.Close()
			if err := unchanged(o, r.Size(), r.ModTime(), &first); err != nil {
				return storage.Permanent(err)
			}
			if testHookOpen != nil {
				testHookOpen(o.Key)
			}
			cr := &countingReader{ctx: actx, r: r, p: j.prog, touch: touch, m: m}
			if sizes[o.Size] > 1 || o.Size <= 0 || j.cache != nil {
				cr.h = j.hashFunc()
			}
			if j.resumer() != nil {
				cr.head, cr.last = newObjectHash(), 0
			}
			if start > 0 {
				// The earlier bytes were read and hashed, not decoded;
				// they end with a line end.
				cr.n, cr.h, cr.head, cr.last = start, from, head, '\n'
				j.prog.add(int(start))
			}
			res, err := decode(i, url, o.Rel, cr)
			if err != nil {
				// Bad data in an object that changed under the job
				// (cut mid-line) is the change's doing: say so.
				if a, aerr := b.Attributes(actx, o.Key); aerr == nil && (a.Size != r.Size() || !sameModTime(a.ModTime, r.ModTime())) {
					// A cut row is a bad row: past --max-bad-rows the
					// decode stops with errAbandoned, which says why
					// the engine stopped, not what the read met: name
					// the row it stopped at. An object abandoned for
					// the rows of objects before it no longer matters,
					// changed or not.
					if bad != nil && errors.Is(err, errAbandoned) {
						row := bad.stopRow(i)
						if row == nil {
							return err
						}
						err = row
					}
					return storage.Permanent(fmt.Errorf("the object changed while the job read it: %d bytes when opened, %d now (listed with %d); the read failed: %v", r.Size(), a.Size, o.Size, err))
				}
				return err
			}
			// The decoder may stop before the end (a gzip trailer):
			// every byte counts toward the size.
			if _, err := io.Copy(io.Discard, cr); err != nil {
				release(res)
				return err
			}
			if size := r.Size(); size >= 0 && cr.n != size {
				release(res)
				return storage.Permanent(fmt.Errorf("the object changed while the job read it: %d bytes read, %d when opened (listed with %d)", cr.n, size, o.Size))
			}
			out[i] = res
			j.noteHead(i, cr)
			if cr.h != nil {
				j.noteHash(o.Key, cr.n, cr.h.Sum64())
				j.storeLater(ctx, b, i, o, cr.h.Sum64())
			}
			return nil
		})
		if err != nil {
			if errors.Is(err, errAbandoned) {
				return nil
			}
			if ctx.Err() != nil {
				return ctx.Err()
			}
			var de *readers.DataError
			if errors.As(err, &de) || errors.Is(err, readers.ErrLimit) {
				return err
			}
			return &StorageError{Op: "read", URL: url, Err: redactErr(err)}
		}
		j.prog.objectDone()
		return nil
	})
	if err != nil && bad != nil && ctx.Err() == nil && bad.breaksBefore(failed, err) {
		// The row that breaks --max-bad-rows comes first in canonical order.
		return out, bad.err()
	}
	return out, err
}

// release drops a decoded object that is not kept.
func release(v any) {
	if o, ok := v.(interface{ Release() error }); ok {
		o.Release()
	}
}

// Test hooks: called with an object's key before it is opened, and once it
// is open (to change it under the job).
var testHookListed, testHookOpen func(key string)

// testHookPhase, when set, is called as each piece of work of a phase of
// the job starts, once its check of the job's context has passed: "list"
// (once), "read" (an object's first bytes), "score" (a run), "reduce" (a
// family × metric cell), "render" (the protocol's tables and report),
// "figures" (a figure), "parquet" (a table) and "publish" (a file written).
// It may be called from several goroutines at once.
var testHookPhase func(name string)

func phase(name string) {
	if testHookPhase != nil {
		testHookPhase(name)
	}
}

// sameModTime says whether two modification times of one object, one from
// its attributes and one from a reader, can be the same: equal, or, when
// either has no fraction of a second (GCS's reader reports the
// Last-Modified header's whole seconds, its attributes the object's
// microseconds), equal to the second. A store that reports no time (zero)
// is not compared on it.
func sameModTime(a, b time.Time) bool {
	if a.IsZero() || b.IsZero() || a.Equal(b) {
		return true
	}
	if a.Nanosecond() == 0 || b.Nanosecond() == 0 {
		return a.Truncate(time.Second).Equal(b.Truncate(time.Second))
	}
	return false
}

// unchanged checks an object as opened against its listing and, on a
// later attempt, against its first opening: a size other than the listed
// one, or a modification time other than the first attempt's (a new
// generation between two attempts), means the object changed under the
// job. A store that reports no size (-1) or no time is not checked on it.
func unchanged(o object, size int64, mod time.Time, first *time.Time) error {
	if size >= 0 && size != o.Size {
		return fmt.Errorf("the object changed after it was listed: listed with %d bytes, %d when opened", o.Size, size)
	}
	if mod.IsZero() {
		return nil
	}
	if first.IsZero() {
		*first = mod
		return nil
	}
	if !mod.Equal(*first) {
		return fmt.Errorf("the object changed while the job read it: modified at %s, then at %s", first.UTC().Format(time.RFC3339Nano), mod.UTC().Format(time.RFC3339Nano))
	}
	return nil
}

func sumSizes(objs []object) int64 {
	var s int64
	for _, o := range objs {
		s += o.Size
	}
	return s
}

// newHash returns a hash of object bytes, seeded once per job.
func (j *job) newHash() *maphash.Hash {
	j.hashOnce.Do(func() { j.hashSeed = maphash.MakeSeed() })
	h := new(maphash.Hash)
	h.SetSeed(j.hashSeed)
	return h
}

// noteHash records the size and hash of an object's bytes as read.
func (j *job) noteHash(key string, size int64, h uint64) {
	j.hashMu.Lock()
	defer j.hashMu.Unlock()
	if j.hashes == nil {
		j.hashes = map[string][2]uint64{}
	}
	j.hashes[key] = [2]uint64{uint64(size), h}
}

// hiddenObjects notes the objects read whose key below INPUT passes
// through a folder, or has a name, that starts with '.', or with '_' and
// holds no '=' (Spark's rule, which pyarrow and Hive share): dataset
// readers leave such paths out, for they hold copies and attempts
// (Jupyter's .ipynb_checkpoints, Spark's _temporary), whose rows would
// join their runs a second time. They are read, as every object the
// patterns match is; the note (and a warning) says so. An object INPUT
// names itself is not noted.
func (j *job) hiddenObjects(objs []object) []string {
	var hidden []string
	for _, o := range objs {
		if o.Key != j.in.Path && hiddenPath(o.Rel) {
			hidden = append(hidden, o.Rel)
		}
	}
	if len(hidden) == 0 {
		return nil
	}
	list := strings.Join(hidden[:min(3, len(hidden))], ", ")
	if len(hidden) > 3 {
		list += fmt.Sprintf(" and %d more", len(hidden)-3)
	}
	what := "1 object read lies"
	if len(hidden) > 1 {
		what = fmt.Sprintf("%d objects read lie", len(hidden))
	}
	note := fmt.Sprintf("%s under a folder or name starting with '.' or '_' (%s), which Spark, pyarrow and Hive leave out of a dataset (Jupyter's checkpoint copies, Spark's _temporary attempts): rows such an object copies from another count twice", what, list)
	j.log.Warn(note)
	return []string{note}
}

// hiddenPath says whether a key below INPUT has a component that starts
// with '.', or with '_' without holding '=' (a Hive folder _x=1 is data).
func hiddenPath(rel string) bool {
	for c := range strings.SplitSeq(rel, "/") {
		if strings.HasPrefix(c, ".") || strings.HasPrefix(c, "_") && !strings.Contains(c, "=") {
			return true
		}
	}
	return false
}

// duplicates names, in notes, objects whose bytes are identical: the same
// run written twice, or copied under a second key, would otherwise be
// counted twice (or as a second anonymous run) without a word. Objects of a
// listed size no other object has were not hashed and need no check.
func (j *job) duplicates(objs []object) []string {
	first := map[[2]uint64]int{}
	groups := map[int][]string{}
	var order []int
	for i, o := range objs {
		h, ok := j.hashes[o.Key]
		if !ok || h[0] == 0 {
			continue
		}
		if f, seen := first[h]; seen {
			if len(groups[f]) == 0 {
				order = append(order, f)
				groups[f] = []string{objs[f].Rel}
			}
			groups[f] = append(groups[f], o.Rel)
			continue
		}
		first[h] = i
	}
	var notes []string
	for _, f := range order {
		notes = append(notes, fmt.Sprintf("objects %s hold the same bytes: their rows are read once per object", strings.Join(groups[f], ", ")))
	}
	return notes
}
