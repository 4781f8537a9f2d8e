package pipeline

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	"gocloud.dev/blob"
	"golang.org/x/sync/errgroup"

	"github.com/crlbatch/crlbatch/protocol/skyfall"
	"github.com/crlbatch/crlbatch/readers"
	"github.com/crlbatch/crlbatch/writers"
)

// Summary is what a finished job reports.
type Summary struct {
	Objects  int
	Rows     int64
	Runs     int
	Families int
	Outputs  []writers.ManifestOutput
	// Output is the OUTPUT location; Result names the prefix holding this
	// run's files (OUTPUT itself, or an attempt prefix under --overwrite).
	Output string
	Result string
}

// job carries the state of one run of the pipeline.
type job struct {
	cfg      *Config
	log      *slog.Logger
	in       Location
	out      Location
	prog     *progress
	start    time.Time
	notes    []string
	manObj   []writers.ManifestObject
	families int
	runs     int    // runs scored (after --where)
	target   string // the key prefix the results go to

	hashOnce sync.Once
	hashSeed maphash.Seed
	hashMu   sync.Mutex
	hashes   map[string][2]uint64 // object key → size and hash of its bytes
	params   []byte
	skipped  []writers.SkippedRow // bad rows skipped under --max-bad-rows, in canonical order
}

// Run executes the job: list, read, assemble, score, reduce, write. On any
// error nothing is left under the output prefix: the result files are
// written only after every number is computed, a failed write deletes what
// was written, and manifest.json comes last.
func Run(ctx context.Context, cfg Config) (*Summary, error) {
	if err := cfg.Check(); err != nil {
		return nil, err
	}
	j := &job{cfg: &cfg, log: cfg.Logger, start: time.Now().UTC()}
	if j.log == nil {
		j.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	var err error
	if j.in, err = ParseLocation(cfg.Input, false); err != nil {
		return nil, err
	}
	// {date} in OUTPUT is the job's start date (UTC), for nightly prefixes
	// such as s3://lab/scores/{date}/.
	output := strings.ReplaceAll(cfg.Output, "{date}", j.start.Format("2006-01-02"))
	if j.out, err = ParseLocation(output, true); err != nil {
		return nil, err
	}
	if j.out.Path != "" && j.out.Local && j.out.Prefix == "" {
		return nil, Usagef("--out %s is a file: want a folder or prefix", j.out)
	}
	if within(j.out, j.in) {
		return nil, Usagef("--out %s lies inside the input %s: the next run would read its own results", j.out, j.in)
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

	if err := j.checkOutput(ctx, outB); err != nil {
		return nil, err
	}

	objs, err := list(ctx, inB, j.in, cfg.Patterns, cfg.Retry)
	if err != nil {
		return nil, err
	}
	if len(objs) == 0 {
		return nil, &DataError{Err: fmt.Errorf("%s: no object matches %q", j.in, cfg.Patterns)}
	}
	j.log.Info("listed", "input", j.in.String(), "objects", len(objs))

	j.prog.setTotal(len(objs), sumSizes(objs))
	var files []outFile
	var rows int64
	if cfg.Protocol == "skyfall" {
		files, rows, err = j.runSkyfall(ctx, inB, objs)
	} else {
		files, rows, err = j.runRecords(ctx, inB, objs)
	}
	if err != nil {
		return nil, err
	}
	outputs, err := j.publish(ctx, outB, files, j.runs)
	if err != nil {
		return nil, err
	}
	j.prog.done()
	return &Summary{Objects: len(objs), Rows: rows, Runs: j.runs, Families: j.families, Outputs: outputs,
		Output: j.out.String(), Result: j.out.ObjectURL(j.target)}, nil
}

// runSkyfall reads, assembles and scores skyfall traces.
func (j *job) runSkyfall(ctx context.Context, b *blob.Bucket, objs []object) ([]outFile, int64, error) {
	ropts := j.cfg.Reader
	ropts.Components = j.cfg.components()
	if _, err := readers.DecodeObject("", "", strings.NewReader(""), ropts); err != nil {
		return nil, 0, &UsageError{Err: err} // invalid options: nothing read yet
	}
	bud := &budget{limit: j.cfg.MemoryLimit, dir: j.cfg.SpillDir}
	if bud.limit == 0 {
		bud.limit = DefaultMemoryLimit()
	}
	if bud.dir == "" {
		bud.dir = os.TempDir()
	}
	var decoded []*readers.ObjectRuns
	defer func() {
		// Spill files go whatever happens; in-memory objects release nothing.
		for _, o := range decoded {
			if o != nil {
				o.Release()
			}
		}
	}()
	bad := newBadRows(len(objs), j.cfg.MaxBadRows)
	split := j.splitObjects(objs)
	decoded, err := readObjects(ctx, j, b, objs, bad, func(i int, url, rel string, r io.Reader) (*readers.ObjectRuns, error) {
		opts := ropts
		opts.OnBadRow = bad.hook(i)
		o, err := j.decodeSkyfall(split[i], objs[i], url, rel, r, opts)
		if err != nil {
			return nil, err
		}
		return o, bud.admit(o)
	})
	if err != nil {
		return nil, 0, err
	}
	if err := j.badRows(bad); err != nil {
		return nil, 0, err
	}
	var rows int64
	for i, o := range decoded {
		rows += int64(o.Rows)
		j.manifestObject(objs[i], o.Rows, o.NumRuns())
	}
	if err := j.checkRows(objs, rows); err != nil {
		return nil, 0, err
	}
	// Runs are assembled one at a time, for each pass over them (see
	// skyfall): only the runs being scored are held as dense traces, besides
	// the decoded objects' compact columns.
	if bud.spilled > 0 {
		j.log.Info("spilled decoded rows to disk", "objects", bud.spilled, "of", len(objs),
			"memory_limit", bud.limit, "spill_dir", bud.dir)
	}
	j.log.Info("scoring one run at a time", "rows", rows)
	aopts := ropts
	// The runs being scored, and the one being assembled, lend their
	// columns to the next ones.
	aopts.Traces = &skyfall.TracePool{Max: j.cfg.Concurrency + 1}
	src := traceSource{pool: aopts.Traces}
	src.release = func() {
		for _, o := range decoded {
			o.Release() // a spill file that will not go is removed again on return
		}
		aopts.Traces = nil
	}
	src.each = func(fn func(*skyfall.Trace) error) error {
		var fnErr error
		err := readers.AssembleEachKeep(decoded, aopts, func(_ int, t *skyfall.Trace) error {
			fnErr = fn(t)
			return fnErr
		})
		var de *readers.DataError
		switch {
		case err == nil || err == fnErr:
			return err
		case errors.As(err, &de) || bud.spilled == 0:
			return dataErr(err)
		default: // reading a spill file back failed: local disk
			return &StorageError{Op: "spill", URL: bud.dir, Err: err}
		}
	}
	files, err := j.skyfall(ctx, src)
	return files, rows, err
}

// runRecords reads, assembles and scores the runs of a record protocol.
func (j *job) runRecords(ctx context.Context, b *blob.Bucket, objs []object) ([]outFile, int64, error) {
	cfg := j.cfg
	ropts, err := j.recordOptions()
	if err != nil {
		return nil, 0, err
	}
	bad := newBadRows(len(objs), j.cfg.MaxBadRows)
	decoded, err := readObjects(ctx, j, b, objs, bad, func(i int, url, rel string, r io.Reader) (*readers.ObjectRecords, error) {
		opts := ropts
		opts.OnBadRow = bad.hook(i)
		return readers.DecodeRecords(url, rel, r, opts)
	})
	if err != nil {
		return nil, 0, err
	}
	if err := j.badRows(bad); err != nil {
		return nil, 0, err
	}
	runs, err := readers.AssembleRecords(decoded, ropts)
	if err != nil {
		return nil, 0, dataErr(err)
	}
	var rows int64
	for i, o := range decoded {
		rows += int64(o.Rows)
		j.manifestObject(objs[i], o.Rows, o.NumRuns())
	}
	if err := j.checkRows(objs, rows); err != nil {
		return nil, 0, err
	}
	total := len(runs)
	kept := runs[:0:0]
	for _, r := range runs {
		if cfg.keep(r.Meta) {
			kept = append(kept, r)
		}
	}
	if len(cfg.Where) > 0 {
		j.notes = append(j.notes, fmt.Sprintf("--where kept %d of %d runs", len(kept), total))
		if len(kept) == 0 {
			return nil, 0, &DataError{Err: fmt.Errorf("--where: no run matches %s", describeWhere(cfg.Where))}
		}
	}
	j.log.Info("assembled", "runs", len(kept), "rows", rows)
	var files []outFile
	switch cfg.Protocol {
	case "safecrl":
		files, err = j.safecrl(kept, ropts.IdentityFields)
	case "contilab":
		files, err = j.contilab(kept, ropts.IdentityFields)
	case "skillshift":
		files, err = j.skillshift(kept, ropts.IdentityFields)
	}
	return files, rows, err
}

// recordOptions are the reader options of a record protocol, checked (a
// usage error when invalid), with the protocol's row check.
func (j *job) recordOptions() (readers.RecordOptions, error) {
	cfg := j.cfg
	ropts, err := readers.ProtocolRecordOptions(cfg.Protocol)
	if err != nil {
		return ropts, &UsageError{Err: err}
	}
	if cfg.Reader.IdentityFields != nil {
		ropts.IdentityFields = cfg.Reader.IdentityFields
	}
	ropts.MaxLineBytes, ropts.MaxObjectBytes, ropts.MaxRuns = cfg.Reader.MaxLineBytes, cfg.Reader.MaxObjectBytes, cfg.Reader.MaxRuns
	if _, err := readers.DecodeRecords("", "", strings.NewReader(""), ropts); err != nil {
		return ropts, &UsageError{Err: err} // invalid options: nothing read yet
	}
	ropts.Check = rowCheck(cfg.Protocol)
	return ropts, nil
}

// badRows ends the reading of a job's objects: the error of the row past
// --max-bad-rows, or the skipped rows into the manifest and the notes.
func (j *job) badRows(bad *badRows) error {
	if err := bad.err(); err != nil {
		return err
	}
	rows := bad.all()
	j.skipped = skippedRows(rows)
	j.notes = append(j.notes, badRowNotes(rows, j.cfg.MaxBadRows)...)
	if len(rows) > 0 {
		j.log.Warn("skipped bad rows", "rows", len(rows), "max_bad_rows", j.cfg.MaxBadRows)
	}
	return nil
}

func (j *job) manifestObject(o object, rows, runs int) {
	j.manObj = append(j.manObj, writers.ManifestObject{
		Key: o.Rel, Size: o.Size, ETag: o.ETag, MD5: o.MD5,
		RowsRead: int64(rows), RunsFound: runs, Status: "ok",
	})
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
// job.
func readObjects[T any](ctx context.Context, j *job, b *blob.Bucket, objs []object, bad *badRows, decode func(i int, url, rel string, r io.Reader) (T, error)) ([]T, error) {
	out := make([]T, len(objs))
	// Only objects whose listed size another object shares can hold the
	// same bytes: the others are not hashed (hashing costs ~4 % of the CPU
	// of a sweep).
	sizes := make(map[int64]int, len(objs))
	for _, o := range objs {
		sizes[o.Size]++
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(j.cfg.Concurrency)
	for i := range objs {
		o := objs[i]
		g.Go(func() error {
			if bad != nil && bad.skip(i) {
				return nil
			}
			url := j.in.ObjectURL(o.Key)
			err := j.cfg.Retry.retry(gctx, func(actx context.Context, touch func()) error {
				r, err := b.NewReader(actx, o.Key, nil)
				if err != nil {
					return err
				}
				defer r.Close()
				cr := &countingReader{r: r, p: j.prog, touch: touch}
				if sizes[o.Size] > 1 || o.Size <= 0 {
					cr.h = j.newHash()
				}
				res, err := decode(i, url, o.Rel, cr)
				if err != nil {
					return err
				}
				out[i] = res
				if cr.h != nil {
					j.noteHash(o.Key, cr.n, cr.h.Sum64())
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
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return out, nil
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

// noteDuplicates names, in the notes, objects whose bytes are identical:
// the same run written twice, or copied under a second key, would otherwise
// be counted twice (or as a second anonymous run) without a word. Objects
// of a listed size no other object has were not hashed and need no check.
func (j *job) noteDuplicates(objs []object) {
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
	for _, f := range order {
		j.notes = append(j.notes, fmt.Sprintf("objects %s hold the same bytes: their rows are read once per object", strings.Join(groups[f], ", ")))
	}
}

// checkRows fails a job whose objects hold no row at all (writers that
// crashed before their first flush): an empty result must not pass for a
// scored night. It also notes objects stored twice.
func (j *job) checkRows(objs []object, rows int64) error {
	if rows == 0 {
		return &DataError{Err: fmt.Errorf("%s: no rows in the %d object(s) read: nothing to score", j.in, len(objs))}
	}
	j.noteDuplicates(objs)
	return nil
}
