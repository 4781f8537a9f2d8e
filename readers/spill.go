package readers

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"

	"github.com/crlbatch/crlbatch/protocol/skyfall"
)

// spillFile is the file Spill writes.
type spillFile interface {
	io.Writer
	Name() string
	Close() error
}

// createSpillFile makes a new spill file in dir. Tests replace it to make
// writing fail.
var createSpillFile = func(dir string) (spillFile, error) {
	return os.CreateTemp(dir, "crlbatch-spill-*")
}

// Spill writes the row columns of every run of the object to a new
// temporary file in dir (see Spilling in the package documentation) and
// releases them from memory: MemBytes then counts only the object's small
// header. The file holds one skyfall binary trace per run (written through
// a 64 KiB buffer, never a copy of the whole run). An object without rows
// needs no file. Spill is idempotent: spilling a spilled (or released)
// object does nothing. On error the object is unchanged, still in memory,
// and no file is left.
func (o *ObjectRuns) Spill(dir string) (err error) {
	if o.spilled || o.released {
		return nil
	}
	if len(o.parts) == 0 {
		o.spilled = true
		return nil
	}
	f, err := createSpillFile(dir)
	if err != nil {
		return fmt.Errorf("readers: spilling the rows of %s: %w", o.URL, err)
	}
	name := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(name)
			err = fmt.Errorf("readers: spilling the rows of %s to %s: %w", o.URL, name, err)
		}
	}()
	offs := make([]int64, len(o.parts)+1)
	// Each run encoded from its compact rows, one scratch column at a time
	// (skyfall's Builder.WriteBinaryTo), never as a trace of dense columns:
	// an object of many runs (one large object under a memory limit) made
	// a trace per run, all garbage at once, while the object's compact
	// rows were still held (docs/performance-history.md, branch peak).
	for i, p := range o.parts {
		var n int64
		if p.b != nil {
			n, err = p.b.WriteBinaryTo(f, nil)
		} else {
			var m int
			m, err = f.Write(p.enc)
			n = int64(m)
		}
		if err != nil {
			return err
		}
		offs[i+1] = offs[i] + n
	}
	if err := f.Close(); err != nil {
		return err
	}
	for i, p := range o.parts {
		if p.b != nil {
			p.rows = p.b.Len()
		}
		p.off, p.size = offs[i], offs[i+1]-offs[i]
		p.b, p.enc, p.labels = nil, nil, nil
		p.compactCandidates()
	}
	o.spilled, o.spillPath = true, name
	return nil
}

// Spilled reports whether the object's rows are in a spill file (Spill
// succeeded and the object has not been assembled or released since).
func (o *ObjectRuns) Spilled() bool { return o.spilled && !o.released }

// Release drops the object's rows, in memory or spilled, for good, and
// removes its spill file: the object can then not be assembled, while URL,
// Key, Format, Lines, Rows, NumRuns and RunKeys stay. Traces already made
// from it are not affected. It is idempotent; an error is a failure to
// remove the file (Release may be called again to retry).
func (o *ObjectRuns) Release() error {
	if !o.released {
		o.released = true
		for _, p := range o.parts {
			p.b, p.cands, p.origins, p.enc, p.labels = nil, nil, nil, nil, nil
		}
	}
	if o.spillPath == "" {
		return nil
	}
	if err := os.Remove(o.spillPath); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("readers: removing the spill file of %s: %w", o.URL, err)
	}
	o.spillPath = ""
	return nil
}

// AssembleEach is Assemble handing over one run at a time: the same runs,
// in the same order, with the same keys, metadata and errors, but each run
// is built, passed to fn(i, t) with i its index in Assemble's result, and
// dropped before the next is built. Spilled objects' runs are read back
// from their files when their turn comes, so that besides the objects held
// in memory, only one run's columns (and one run's encoded part) are held
// at a time.
//
// fn may keep t, which shares no memory with the objects (with
// Options.Traces set, fn may instead put it back once done). An error of fn stops AssembleEach, which returns it as it is.
// A run-key collision or the --max-runs limit is reported before fn is
// first called, as Assemble would; the --max-labels limit of a run spanning
// objects, and a failure to read a spill file back, after fn has had the
// runs before it.
//
// Objects held in memory are not modified. Spilled objects are consumed:
// their files are removed once read, and in any case before AssembleEach
// returns (error or not), and they are released (see Release).
func AssembleEach(objects []*ObjectRuns, opts Options, fn func(i int, t *skyfall.Trace) error) error {
	return assembleEach(objects, opts, true, nil, fn)
}

// AssembleEachKeep is AssembleEach without consuming spilled objects: their
// files stay until Release, so that a caller can pass over the runs more
// than once (a first pass deriving per-label ceilings from every run, then
// the scoring pass).
func AssembleEachKeep(objects []*ObjectRuns, opts Options, fn func(i int, t *skyfall.Trace) error) error {
	return assembleEach(objects, opts, false, nil, fn)
}

// assembleEach is AssembleEach (consume) or AssembleEachKeep; start, when
// set, learns the number of runs before the first call of fn.
func assembleEach(objects []*ObjectRuns, opts Options, consume bool, start func(n int), fn func(i int, t *skyfall.Trace) error) (err error) {
	ld := &loader{keep: !consume, pool: opts.Traces}
	defer func() {
		ld.close()
		for _, o := range objects {
			if o.spilled && consume {
				if rerr := o.Release(); rerr != nil {
					err = errors.Join(err, rerr)
				}
			}
		}
	}()
	opts, err = opts.normalize()
	if err != nil {
		return err
	}
	runs, err := planRuns(objects, opts)
	if err != nil {
		return err
	}
	for _, o := range objects {
		if o.spilled {
			o.pending = len(o.parts)
		}
	}
	if start != nil {
		start(len(runs))
	}
	for i := range runs {
		t, err := build(&runs[i], ld, opts)
		if err != nil {
			return err
		}
		if err := fn(i, t); err != nil {
			return err
		}
	}
	return nil
}

// loader reads spilled parts back. It keeps the last spill file open (an
// object's runs tend to follow one another) and one read buffer.
type loader struct {
	f    *os.File
	fobj *ObjectRuns
	buf  []byte
	keep bool // leave spilled objects unreleased
	pool *skyfall.TracePool
}

// columns returns the rows of pc as a trace without metadata: the part's
// builder's, or read back from the spill file.
func (ld *loader) columns(pc piece) (*skyfall.Trace, error) {
	p, o := pc.p, pc.obj
	if p.b != nil {
		return p.b.TraceFrom(ld.pool, nil), nil
	}
	if p.enc != nil {
		t := new(skyfall.Trace)
		if err := t.UnmarshalBinaryFrom(ld.pool, p.enc); err != nil {
			return nil, fmt.Errorf("readers: reading back the rows of %s from their encoding: %w", o.URL, err)
		}
		if t.Len() != p.rows || t.Key != p.runKey || !slices.Equal(t.LabelNames, p.labels) {
			return nil, fmt.Errorf("readers: reading back the rows of %s from their encoding: run %s of %d rows, want %s of %d",
				o.URL, t.Key, t.Len(), p.runKey, p.rows)
		}
		return t, nil
	}
	if ld.fobj != o {
		ld.close()
		f, err := os.Open(o.spillPath)
		if err != nil {
			return nil, fmt.Errorf("readers: reading back the spilled rows of %s: %w", o.URL, err)
		}
		ld.f, ld.fobj = f, o
	}
	if int64(cap(ld.buf)) < p.size {
		ld.buf = make([]byte, p.size)
	}
	buf := ld.buf[:p.size]
	if _, err := ld.f.ReadAt(buf, p.off); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, fmt.Errorf("readers: reading back the spilled rows of %s from %s: %w", o.URL, o.spillPath, err)
	}
	t := new(skyfall.Trace)
	if err := t.UnmarshalBinaryFrom(ld.pool, buf); err != nil {
		return nil, fmt.Errorf("readers: reading back the spilled rows of %s from %s: %w", o.URL, o.spillPath, err)
	}
	if t.Len() != p.rows || t.Key != p.runKey {
		return nil, fmt.Errorf("readers: reading back the spilled rows of %s from %s: run %s of %d rows, want %s of %d",
			o.URL, o.spillPath, t.Key, t.Len(), p.runKey, p.rows)
	}
	return t, nil
}

// done notes that pc has been used; a spilled object is released once all
// its parts have been read back. A failure to remove its file is not
// reported here: assembleEach releases the object again on return and
// reports it then.
func (ld *loader) done(pc piece) {
	o := pc.obj
	if !o.spilled || o.released || ld.keep {
		return
	}
	o.pending--
	if o.pending > 0 {
		return
	}
	if ld.fobj == o {
		ld.close()
	}
	o.Release()
}

func (ld *loader) close() {
	if ld.f != nil {
		ld.f.Close()
	}
	ld.f, ld.fobj = nil, nil
}

// Rough sizes, for MemBytes, of what stays in memory whatever happens to
// the rows: an ObjectRuns, and a part with its builder's bookkeeping; an
// identity value, a metadata candidate and a label-origin entry besides
// their strings.
const (
	objectOverhead = 160
	partOverhead   = 160
	identOverhead  = 32
	candOverhead   = 96
	originOverhead = 80
)

// compactCandidates keeps, of the metadata candidates of a decoded part,
// only what meta reads: the fields constant over the part, without their
// raw bytes (needed only while rows are being added).
func (p *part) compactCandidates() {
	kept := p.cands[:0]
	for _, c := range p.cands {
		if c.alive {
			c.raw = nil
			kept = append(kept, c)
		}
	}
	clear(p.cands[len(kept):])
	p.cands = slices.Clip(kept)
}

// headerBytes estimates the memory of the part besides its rows.
func (p *part) headerBytes() int64 {
	n := partOverhead + len(p.identKey) + len(p.runKey)
	for _, v := range p.ident {
		n += identOverhead + len(v.field) + len(v.canon)
	}
	for _, c := range p.cands {
		n += candOverhead + len(c.name) + len(c.raw) + len(c.canon)
	}
	for k, lo := range p.origins {
		n += originOverhead + len(k) + len(lo.origin) + len(lo.alias)
	}
	return int64(n)
}
