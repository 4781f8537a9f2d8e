package skyfallscore

import (
	"io"
	"strings"

	"github.com/apache/arrow-go/v18/parquet"

	"github.com/crlbatch/crlbatch/protocol/skyfall"
	"github.com/crlbatch/crlbatch/readers"
	"github.com/crlbatch/crlbatch/scoring"
)

// decoder reads skyfall traces with readers' fast row decoder: objects
// keep their rows in compact columns (and can spill), a large object can be
// decoded in chunks, and runs are assembled one at a time, lending their
// dense columns to the next ones through a skyfall.TracePool.
type decoder struct {
	opts readers.Options
	max  int // traces the pool keeps: one per run the engine scores at once, and a spare
	pool *skyfall.TracePool
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

func (d *decoder) Assemble(objs []scoring.Object, fn func(*scoring.Run) error) error {
	if d.pool == nil {
		d.pool = &skyfall.TracePool{Max: d.max}
	}
	opts := d.opts
	opts.Traces = d.pool
	return readers.AssembleEachKeep(unwrap(objs), opts, func(_ int, t *skyfall.Trace) error {
		return fn(&scoring.Run{Key: t.Key, Meta: t.Meta, Rows: t.Len(), Labels: len(t.LabelNames), Data: t})
	})
}

func (d *decoder) Done(r *scoring.Run) {
	if t, ok := r.Data.(*skyfall.Trace); ok && d.pool != nil {
		d.pool.Put(t)
	}
	r.Data = nil
}

func (d *decoder) Close() { d.pool = nil }
