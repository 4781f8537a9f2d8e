package readers

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/crlbatch/crlbatch/protocol/skyfall"
)

// Resuming an object that grew. A training run's log is appended to while
// it trains: the next night its object holds yesterday's bytes and the
// lines written since. ResumeObject decodes only those lines, as chunks
// merged after the runs of the object's earlier bytes (an object read back
// from its encoding, DecodeEncodedObject), into exactly what DecodeObject
// gives for the whole object: the same runs in the same order, rows,
// metadata candidates, label origins and counts, and the same error at
// the same line, with the bad rows before it handed to Options.OnBadRow in
// line order. The caller vouches that the object's first size bytes are
// the bytes prev was decoded from (the engine compares their hash with
// the one the cache kept), and ResumeObject refuses what it cannot
// continue exactly (Resumable).

// errNotResumable is ResumeObject's refusal of an earlier object it cannot
// continue.
var errNotResumable = errors.New("readers: the object cannot be resumed")

// Resumable reports whether ResumeObject can continue o: an object of plain
// JSON Lines (a compressed stream cannot be continued from its decoded
// lines), all of whose rows are held (read back from an encoding, or
// decoded and neither spilled nor released), none of them skipped as bad
// (the bad rows would have to be handed on again), and which holds at
// least one line.
func (o *ObjectRuns) Resumable() bool {
	return o.Format == Plain && o.Skipped == 0 && !o.spilled && !o.released && o.Lines > 0
}

// ResumeObject opens for chunked decoding the lines an object gained after
// its first size bytes, from which prev was decoded (with the same
// options): r holds the bytes after them (none, for an object that did not
// grow), which are plain JSON Lines, never sniffed for a compressed
// format, and whose first line is line prev.Lines+1 (the caller vouches
// that prev's bytes end with a line end, '\n'). Next, DecodeChunk, Merge and Object
// are then as for SplitObject, and Object returns what DecodeObject returns
// for the whole object; the object's limits count prev's bytes, lines,
// runs and labels. prev's parts are the result's (prev must not be used
// afterwards); those that the new lines continue are read back into
// builders, the others keep their encoding. A prev that is not Resumable,
// of other components than opts.Components, or larger than
// opts.MaxObjectBytes is an error.
func ResumeObject(prev *ObjectRuns, size int64, r io.Reader, opts Options) (*Chunks, error) {
	opts, err := opts.normalize()
	if err != nil {
		return nil, err
	}
	if !prev.Resumable() || !slices.Equal(prev.comps, opts.Components) || size <= 0 || size > opts.MaxObjectBytes {
		return nil, errNotResumable
	}
	for _, p := range prev.parts {
		if p.b == nil && p.enc == nil {
			return nil, errNotResumable
		}
	}
	src := &sourceReader{r: r}
	br := readBufs.Get().(*bufio.Reader)
	br.Reset(src)
	rd := &decompressor{src: src, br: br, r: br, close: func() error { return nil }, format: Plain}
	lr := newLineReader(&limitReader{r: rd, n: opts.MaxObjectBytes - size, max: opts.MaxObjectBytes}, opts.MaxLineBytes)
	// The lines go on from prev's last: no byte-order mark to look for.
	lr.line, lr.first = prev.Lines, false
	c := &Chunks{
		url: prev.URL, key: prev.Key, opts: opts, rc: lineCloser{rd, lr}, format: Plain, lr: lr,
		obj:    &ObjectRuns{ObjectInfo: ObjectInfo{URL: prev.URL, Key: prev.Key, Format: Plain, Lines: prev.Lines, Rows: prev.Rows}, comps: opts.Components},
		labels: map[*part]map[string]struct{}{},
	}
	c.g = newGrouper(prev.URL, prev.Key, opts.IdentityFields, opts.MaxRuns, func(h partHeader) *part {
		gp := &part{partCore: partCore{partHeader: h}}
		c.obj.parts = append(c.obj.parts, gp)
		c.labels[gp] = map[string]struct{}{}
		return gp
	})
	// prev's runs are the object's first, in their order, as merged from
	// a first chunk: within the limits, which prev's lines met.
	for _, p := range prev.parts {
		gp, err := c.g.add(p.partHeader)
		if err != nil {
			c.Close()
			return nil, err
		}
		gp.cands, gp.origins = p.cands, p.origins
		gp.b, gp.enc, gp.labels, gp.rows = p.b, p.enc, p.labels, p.rows
		set := c.labels[gp]
		if p.b != nil {
			for _, l := range p.b.LabelNames() {
				set[l] = struct{}{}
			}
		} else {
			for _, l := range p.labels {
				set[l] = struct{}{}
			}
		}
	}
	prev.parts = nil
	return c, nil
}

// unpack reads the rows of p, a part read back from an encoding, into a
// builder, so that a later chunk's rows of its run can be appended.
func (c *Chunks) unpack(p *part) error {
	// The dense trace is garbage once added: its columns come from, and
	// go back to, the pool of Options.Traces (when there is one).
	t := new(skyfall.Trace)
	if err := t.UnmarshalBinaryFrom(c.opts.Traces, p.enc); err != nil {
		return fmt.Errorf("readers: reading back the rows of %s from their encoding: %w", c.url, err)
	}
	if t.Len() != p.rows || t.Key != p.runKey || !slices.Equal(t.LabelNames, p.labels) {
		return fmt.Errorf("readers: reading back the rows of %s from their encoding: run %s of %d rows, want %s of %d",
			c.url, t.Key, t.Len(), p.runKey, p.rows)
	}
	b := skyfall.NewBuilder(p.runKey, c.opts.Components)
	b.AddTrace(t, c.opts.Components, p.origin)
	c.opts.Traces.Put(t)
	p.b, p.enc, p.labels, p.rows = b, nil, nil, 0
	return nil
}
