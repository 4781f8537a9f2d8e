package skyfallscore

import (
	"io"
	"strings"
	"sync"

	"github.com/apache/arrow-go/v18/parquet"

	"github.com/crlbatch/crlbatch/protocol/skyfall"
	"github.com/crlbatch/crlbatch/readers"
	"github.com/crlbatch/crlbatch/scoring"
	"github.com/crlbatch/crlbatch/upperbound"
)

// decoder reads skyfall traces with readers' fast row decoder: objects
// keep their rows in compact columns (and can spill), a large object can be
// decoded in chunks, and runs are assembled one at a time, lending their
// dense columns to the next ones through a skyfall.TracePool.
type decoder struct {
	opts   readers.Options
	max    int        // traces the pool keeps: one per run the engine scores at once, and a spare
	poolMu sync.Mutex // guards pool, which Resume asks for on the reading goroutines
	pool   *skyfall.TracePool
	// counting, while Prepare's by_configuration pass asks for the runs,
	// counts each part of a run for AssembleLight; nil otherwise.
	counting *upperbound.LabelBounds
}

// object is a decoded skyfall object.
type object struct{ *readers.ObjectRuns }

func (o object) Rows() int { return o.ObjectRuns.Rows }

func (d *decoder) Check() error {
	if _, err := readers.DecodeObject("", "", strings.NewReader(""), d.opts); err != nil {
		return &scoring.UsageError{Err: err} // invalid options: nothing read yet
	}
	return nil
}

func (d *decoder) withBad(onBad readers.BadRowFunc) readers.Options {
	o := d.opts
	o.OnBadRow = onBad
	return o
}

func (d *decoder) Decode(url, key string, r io.Reader, onBad readers.BadRowFunc) (scoring.Object, error) {
	o, err := readers.DecodeObject(url, key, r, d.withBad(onBad))
	if err != nil {
		return nil, err
	}
	return object{o}, nil
}

// DecodeParquet reads a Parquet object's columns straight into the run
// parts (readers.DecodeParquet).
func (d *decoder) DecodeParquet(url, key string, r parquet.ReaderAtSeeker, fields []readers.ParquetField, onBad readers.BadRowFunc) (scoring.Object, error) {
	o, err := readers.DecodeParquet(url, key, r, fields, d.withBad(onBad))
	if err != nil {
		return nil, err
	}
	return object{o}, nil
}

func (d *decoder) Split(url, key string, r io.Reader, onBad readers.BadRowFunc) (scoring.Chunks, error) {
	c, err := readers.SplitObject(url, key, r, d.withBad(onBad))
	if err != nil {
		return nil, err
	}
	return chunks{c}, nil
}

// Resumable: a plain object without skipped bad rows
// (readers.ObjectRuns.Resumable).
func (d *decoder) Resumable(o scoring.Object) bool {
	ob, ok := o.(object)
	return ok && ob.Resumable()
}

// Resume continues prev with the lines appended after its bytes
// (readers.ResumeObject).
func (d *decoder) Resume(prev scoring.Object, size int64, r io.Reader, onBad readers.BadRowFunc) (scoring.Chunks, error) {
	// The runs read back to be gone on with lend their dense columns to
	// each other, and later to the runs assembled, through the pool.
	opts := d.withBad(onBad)
	opts.Traces = d.tracePool()
	c, err := readers.ResumeObject(prev.(object).ObjectRuns, size, r, opts)
	if err != nil {
		return nil, err
	}
	return chunks{c}, nil
}

type chunks struct{ c *readers.Chunks }

func (c chunks) Next(size int) (any, error) {
	ch, err := c.c.Next(size)
	if err != nil {
		return nil, err
	}
	return ch, nil
}
func (c chunks) Decode(ch any) any       { return readers.DecodeChunk(ch.(*readers.Chunk)) }
func (c chunks) Merge(decoded any) error { return c.c.Merge(decoded.(*readers.ChunkRuns)) }
func (c chunks) Close() error            { return c.c.Close() }
func (c chunks) Compressed() bool        { return c.c.Format() != readers.Plain }
func (c chunks) Object() (scoring.Object, error) {
	o, err := c.c.Object()
	if err != nil {
		return nil, err
	}
	return object{o}, nil
}

func unwrap(objs []scoring.Object) []*readers.ObjectRuns {
	out := make([]*readers.ObjectRuns, len(objs))
	for i, o := range objs {
		out[i] = o.(object).ObjectRuns
	}
	return out
}

func (d *decoder) Conflicts(objs []scoring.Object) []*readers.DataError {
	return readers.RunKeyConflicts(unwrap(objs))
}

// tracePool is the decoder's pool of dense trace columns, made once.
// Columns the pool has none for are carved out of the Parquet reader's
// idle buffers when there are some (a Parquet job's).
func (d *decoder) tracePool() *skyfall.TracePool {
	d.poolMu.Lock()
	defer d.poolMu.Unlock()
	if d.pool == nil {
		d.pool = &skyfall.TracePool{Max: d.max, Mem: readers.IdleParquetMemory}
	}
	return d.pool
}

func (d *decoder) Assemble(objs []scoring.Object, fn func(*scoring.Run) error) error {
	opts := d.opts
	opts.Traces = d.tracePool()
	return readers.AssembleEachKeep(unwrap(objs), opts, func(_ int, t *skyfall.Trace) error {
		return fn(&scoring.Run{Key: t.Key, Meta: t.Meta, Rows: t.Len(), Labels: len(t.LabelNames), Data: t})
	})
}

// countedRun is the Data of a run of AssembleLight: its parts' counts for
// by_configuration, in row order.
type countedRun struct{ parts []upperbound.PartCounts }

// AssembleLight hands Prepare's by_configuration pass runs holding each
// part's counts (upperbound.LabelBounds.CountBuilder), counted straight
// from the part's compact columns, none materialised, on the calling
// goroutine (under a millisecond for the 1 GB benchmark sweep),
// rather than every column of every run assembled
// (scoring.LightAssembler). It cannot for another pass, for objects whose
// rows are not all held in memory (spilled, read back from an encoding)
// or when a part fails to count (then Add fails on the assembled run: the
// engine assembles, and the error is Assemble's and Add's, as ever).
func (d *decoder) AssembleLight(objs []scoring.Object, fn func(*scoring.Run) error) (bool, error) {
	lb := d.counting
	if lb == nil {
		return false, nil
	}
	ors := unwrap(objs)
	runs, ok, err := readers.PlanRuns(ors, d.opts)
	if err != nil {
		return true, err // Assemble's, before its first run
	}
	if !ok {
		return false, nil
	}
	type slot struct {
		obj, part int
		out       *upperbound.PartCounts
		err       error
	}
	counted := make([]countedRun, len(runs))
	var slots []slot
	for i, r := range runs {
		counted[i].parts = make([]upperbound.PartCounts, len(r.Pieces))
		for k, pc := range r.Pieces {
			slots = append(slots, slot{obj: pc.Object, part: pc.Part, out: &counted[i].parts[k]})
		}
	}
	for i := range slots {
		s := &slots[i]
		*s.out, s.err = lb.CountBuilder(ors[s.obj].PartBuilder(s.part))
	}
	for _, s := range slots {
		if s.err != nil {
			return false, nil
		}
	}
	for i := range runs {
		r, c := &runs[i], &counted[i]
		rows, labels := 0, map[string]bool{}
		for _, p := range c.parts {
			for k, l := range p.Labels {
				rows += p.Rows[k]
				labels[l] = true
			}
		}
		if err := r.CheckLabels(len(labels)); err != nil {
			return true, err
		}
		if err := fn(&scoring.Run{Key: r.Key, Meta: r.Meta(), Rows: rows, Labels: len(labels), Data: c}); err != nil {
			return true, err
		}
	}
	return true, nil
}

var _ scoring.LightAssembler = (*decoder)(nil)

func (d *decoder) Done(r *scoring.Run) {
	d.poolMu.Lock()
	pool := d.pool
	d.poolMu.Unlock()
	if t, ok := r.Data.(*skyfall.Trace); ok && pool != nil {
		pool.Put(t)
	}
	r.Data = nil
}

func (d *decoder) Close() {
	d.poolMu.Lock()
	d.pool = nil
	d.poolMu.Unlock()
}
