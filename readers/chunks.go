package readers

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/crlbatch/crlbatch/internal/hugemem"
	"github.com/crlbatch/crlbatch/protocol/skyfall"
)

// Decoding one large object on several cores. DecodeObject decodes an
// object on the goroutine that calls it; an object much larger than the
// others would keep one core busy while the rest wait. Chunks splits such an
// object into newline-aligned chunks of lines, DecodeChunk decodes a chunk
// on its own (each chunk with a fresh row decoder, which gives exactly the
// rows and errors of a decoder that has seen the lines before: see
// FuzzDecodeSequence), and Merge puts the chunks back together, in order,
// into exactly what DecodeObject returns: the same runs in the same order,
// the same rows, metadata candidates and label origins, the same counts, and
// the same error, found at the same line, with the bad rows before it handed
// to Options.OnBadRow in line order. This package starts no goroutine: the
// caller runs DecodeChunk wherever it likes.

// DefaultChunkBytes is a chunk size that keeps the per-chunk costs (a fresh
// row decoder, merging the chunk's runs) small beside the decoding.
const DefaultChunkBytes = 2 << 20

// Chunks reads one object as chunks of lines and merges the decoded chunks.
// Next is called from one goroutine at a time, and so are Merge (and then
// Object), each from any goroutine, another from one call to the next (the
// caller orders the calls, with a mutex for instance); DecodeChunk runs on
// any goroutine, beside them.
type Chunks struct {
	url, key string
	opts     Options
	rc       io.Closer // the decompressor
	format   Format

	// mr is the object's reader when its lines are cut from its mapped
	// bytes (MappedReader; lr.mapped), nil when they are read.
	mr MappedReader

	// Next's side.
	lr     *lineReader
	issued int                // chunks handed out
	done   bool               // the stream is at its end, or broke
	bufs   freeList[*lineBuf] // the buffers of decoded chunks, for Next
	slab   []byte             // room for chunk buffers not yet handed out (newBuf)

	// Merge's side.
	obj    *ObjectRuns
	merged int                           // chunks merged
	g      grouper[*part]                // the object's runs so far
	labels map[*part]map[string]struct{} // the labels of each run so far
	// The builders of chunks' runs whose rows were copied into the run's
	// own: DecodeChunk resets and fills them again, so that the rows of a
	// large object are not left behind as garbage chunk by chunk.
	builders freeList[*skyfall.Builder]
	err      error // the error that ended the object
}

// SplitObject opens one object (plain, gzip or zstd, sniffed from its first
// bytes) for chunked decoding; url, key and opts are as for DecodeObject.
// The caller calls Close when done with r.
func SplitObject(url, key string, r io.Reader, opts Options) (*Chunks, error) {
	opts, err := opts.normalize()
	if err != nil {
		return nil, err
	}
	lr, mr, err := mappedLines(url, r, opts.MaxObjectBytes, opts.MaxLineBytes)
	if err != nil {
		return nil, err
	}
	format, rc := Plain, io.Closer(io.NopCloser(nil))
	if lr == nil {
		if lr, format, rc, err = openLines(url, r, opts.MaxObjectBytes, opts.MaxLineBytes); err != nil {
			return nil, err
		}
	}
	c := &Chunks{
		url: url, key: key, opts: opts, rc: rc, format: format, lr: lr, mr: mr,
		obj:    &ObjectRuns{ObjectInfo: ObjectInfo{URL: url, Key: key, Format: format}, comps: opts.Components},
		labels: map[*part]map[string]struct{}{},
	}
	c.g = newGrouper(url, key, opts.IdentityFields, opts.MaxRuns, func(h partHeader) *part {
		gp := &part{partCore: partCore{partHeader: h}}
		c.obj.parts = append(c.obj.parts, gp)
		c.labels[gp] = map[string]struct{}{}
		return gp
	})
	return c, nil
}

// Close releases the decompressor, and drops the buffers and builders kept
// for chunks to come.
func (c *Chunks) Close() error {
	c.bufs.drop()
	c.slab = nil
	c.builders.drop()
	return c.rc.Close()
}

// Format is the object's format, sniffed when it was opened.
func (c *Chunks) Format() Format { return c.format }

// Chunk is a run of consecutive lines of one object. Its lines are
// numbered from 1, the chunk's first: the rows, runs and errors decoded
// from them carry these numbers, and Merge numbers them on from the lines
// of the chunks before (so that Next need not count a mapped chunk's lines
// in a pass of its own: DecodeChunk counts them as it decodes).
type Chunk struct {
	c     *Chunks
	seq   int
	lines int // how many lines it holds; a mapped chunk's are counted by DecodeChunk
	// data holds first rawLines whole lines as the stream had them, each
	// with its line end ('\r' and '\n' kept: DecodeChunk splits them),
	// in its first raw bytes, then lines copied one by one, one after the
	// other, each ending at ends[i].
	data     []byte
	raw      int
	rawLines int
	ends     []int
	long     []byte // a line after them that was too long for the line buffer, taken over, not copied
	err      error  // the stream broke after the last line: the object's error (unlocated)
	// mapped: data is the object's mapped bytes, not a buffer (Chunks.mr);
	// end is where the chunk's lines end in them.
	mapped bool
	end    int
}

// Next reads the next chunk: whole lines, about size bytes of them
// (counting each line end, so that blank lines fill chunks too): as many
// as the stream's next size bytes hold, cut from them as they were read
// (lineReader.block), else at least size bytes of lines read one by one,
// unless the object ends first. After the last chunk it returns io.EOF. A
// chunk after which the stream broke (a corrupt compressed stream, a line
// over MaxLineBytes, an object over MaxObjectBytes, a read error) is the
// last one: the error comes out of Merge, after the lines before it.
func (c *Chunks) Next(size int) (*Chunk, error) {
	if c.done {
		return nil, io.EOF
	}
	if c.mr == nil {
		return c.next(size)
	}
	var ch *Chunk
	var err error
	start := c.lr.line
	if ferr := c.mr.Guard(func() { ch, err = c.next(size) }); ferr != nil {
		// A page of the mapped bytes could not be read: the chunk holds
		// the error, the object's last, after the lines read so far.
		c.done = true
		ch = &Chunk{c: c, seq: c.issued, err: &unlocated{&storageError{ferr}, c.lr.line - start + 1}}
		c.issued++
		return ch, nil
	}
	return ch, err
}

func (c *Chunks) next(size int) (*Chunk, error) {
	ch := &Chunk{c: c, seq: c.issued}
	if c.lr.mapped {
		// Whole lines of the mapped bytes make the chunk, uncopied and
		// uncounted: DecodeChunk counts them, and the pages are first
		// touched there, in parallel, not under Next's lock. (Nor are they
		// brought in ahead, as readLines' are: asked for here it measured
		// no quicker.)
		if ch.data = c.lr.cut(max(size, 1)); ch.data != nil {
			ch.raw, ch.mapped, ch.end = len(ch.data), true, c.lr.start
			c.issued++
			return ch, nil
		}
	}
	// lr counts the lines it reads on from start (its count leaves out
	// the mapped chunks cut before: numbers within a chunk are relative).
	start := c.lr.line
	if b, ok := c.bufs.get(); ok {
		ch.data, ch.ends = b.data[:0], b.ends[:0]
	} else {
		ch.data = c.newBuf(size + size/8)
	}
	size = max(size, 1)
	ch.data, ch.rawLines = c.lr.block(ch.data, size)
	ch.raw = len(ch.data)
	// Lines cut from the stream make a chunk, unless the stream ended or
	// broke after them: its last line, or its error, is the chunk's too.
	for ch.rawLines == 0 && len(ch.data)+len(ch.ends) < size || ch.rawLines > 0 && (c.lr.eof || c.lr.err != nil) {
		line, n, err := c.lr.next()
		if err == io.EOF {
			c.done = true
			break
		}
		if err != nil {
			ch.err = &unlocated{err, n - start}
			c.done = true
			break
		}
		if c.lr.owned {
			// A long line has a buffer of its own: the chunk ends with it.
			ch.long = line
			break
		}
		ch.data = append(ch.data, line...)
		ch.ends = append(ch.ends, len(ch.data))
	}
	ch.lines = c.lr.line - start
	if ch.rawLines == 0 && len(ch.ends) == 0 && ch.long == nil && ch.err == nil {
		return nil, io.EOF
	}
	if c.lr.mapped {
		ch.end = c.lr.start
	}
	c.issued++
	return ch, nil
}

// chunkSlabBufs is how many chunk buffers of a plain object one slab holds.
const chunkSlabBufs = 4

// newBuf returns a fresh empty chunk buffer of capacity n. A plain object's
// buffers are carved out of slabs of chunkSlabBufs buffers whose 2 MiB-aligned
// interior is advised for transparent huge pages (internal/hugemem), when a
// slab holds two huge pages or more: the reader fills them by read system
// calls, each 4 KiB page's first touch a fault in the kernel's copy (128 KiB
// reads took 0.45-0.8 ms instead of ~0.025 while the first buffers filled,
// and the workers waited for them at the start of the object). A
// compressed object's buffers are made one by one: advised, its one-object
// jobs were no faster and peaked up to 4.6 MiB higher.
func (c *Chunks) newBuf(n int) []byte {
	if c.format != Plain || n*chunkSlabBufs < 2*hugemem.PageSize {
		return make([]byte, 0, n)
	}
	if len(c.slab) < n {
		c.slab = hugemem.Bytes(n * chunkSlabBufs)
	}
	b := c.slab[:0:n]
	c.slab = c.slab[n:]
	return b
}

// lineBuf is what a chunk holds its lines in.
type lineBuf struct {
	data []byte
	ends []int
}

// ChunkRuns is one decoded chunk, for Merge. Its lines are numbered from 1,
// the chunk's first (Chunk), in the parts' first lines, their new labels'
// lines, the bad rows and the error that ends the object: Merge adds the
// lines of the chunks before.
type ChunkRuns struct {
	seq   int
	lines int          // how many lines the chunk holds (unless stop ends the object within it)
	obj   *ObjectRuns  // the chunk's runs, rows and skipped rows
	bad   []*DataError // the bad rows skipped, in line order (with OnBadRow set)
	stop  error        // what ends the object within this chunk, if anything: a *DataError or *unlocated
	end   int          // where the chunk's lines end in the mapped bytes (Chunks.mr)
}

// unlocated is an error, of the stream or of reading it, of the chunk's
// line n, which Merge locates (locate) once it knows the lines before.
type unlocated struct {
	err error
	n   int
}

func (e *unlocated) Error() string { return fmt.Sprintf("line %d of a chunk: %v", e.n, e.err) }

// place gives an error of a chunk, whose lines are numbered from 1, its
// place in the object, whose line base is the one before the chunk's
// first: a *DataError is copied with its line moved on (every error of the
// row decoder is one), an unlocated error located.
func (c *Chunks) place(err error, base int) error {
	switch e := err.(type) {
	case *DataError:
		de := *e
		if de.Line > 0 {
			de.Line += base
		}
		return &de
	case *unlocated:
		return locate(e.err, c.url, base+e.n)
	}
	return err
}

// DecodeChunk decodes the lines of one chunk. It only reads what the chunk
// and its Chunks share, so chunks of one object may be decoded at once on
// several goroutines.
func DecodeChunk(ch *Chunk) *ChunkRuns {
	c := ch.c
	cr := &ChunkRuns{seq: ch.seq, lines: ch.lines}
	opts := c.opts
	if opts.OnBadRow != nil {
		// Merge hands the bad rows on, in order with the rest.
		opts.OnBadRow = func(de *DataError) error {
			cr.bad = append(cr.bad, de)
			return nil
		}
	}
	od := newObjectDecoder(&ObjectRuns{ObjectInfo: ObjectInfo{URL: c.url, Key: c.key, Format: c.format}, comps: opts.Components}, opts)
	od.chunk = true
	od.builders = &c.builders
	// A chunk holding more runs, or a run with more labels, than the
	// limits allow stops at the line that went over; the object as a whole
	// went over them at this line or before, which Merge finds.
	n := 1
	if ch.mapped {
		// (n is the line being decoded when a page cannot be read.)
		if err := c.mr.Guard(func() { decodeRaw(od, cr, ch.data, &n) }); err != nil {
			cr.stop = &unlocated{&storageError{err}, n}
		}
		// decodeRaw numbered the lines it decoded; none are copied after
		// them (cut).
		cr.lines = n - 1
	} else {
		decodeRaw(od, cr, ch.data[:ch.raw], &n)
	}
	start := ch.raw
	for i, end := range ch.ends {
		if cr.stop != nil {
			break
		}
		cr.stop = od.line(ch.data[start:end], n+i)
		start = end
	}
	if cr.stop == nil && ch.long != nil {
		cr.stop = od.line(ch.long, n+len(ch.ends))
	}
	if cr.stop == nil {
		cr.stop = ch.err
	}
	cr.obj = od.obj
	cr.end = ch.end
	od.release()
	// Nothing decoded points into the lines (labels, metadata and
	// messages are copies): the buffer serves a later chunk. Mapped bytes
	// are not a buffer.
	if !ch.mapped {
		c.bufs.put(&lineBuf{ch.data, ch.ends})
	}
	ch.data, ch.ends, ch.long = nil, nil, nil
	return cr
}

// decodeRaw decodes the lines of raw, the first numbered *n, each with its
// line end, until one stops the chunk (cr.stop), moving *n on past each
// line decoded: it ends as the number of the line after the last one
// decoded, or of the one that stopped the chunk.
func decodeRaw(od *objectDecoder, cr *ChunkRuns, raw []byte, n *int) {
	for len(raw) > 0 {
		// Each line cut from the stream ends with a '\n' (block), and is
		// no longer than MaxLineBytes: a row decoded in place ends at its
		// line's '\n'.
		if k, err := od.inPlace(raw, *n); k > 0 {
			if cr.stop = err; err != nil {
				break
			}
			raw, *n = raw[k:], *n+1
			continue
		}
		// Else the line alone, the '\r' before its '\n' stripped as
		// lineReader.next strips it.
		i := bytes.IndexByte(raw, '\n')
		line := raw[:i]
		if k := len(line); k > 0 && line[k-1] == '\r' {
			line = line[:k-1]
		}
		if cr.stop = od.line(line, *n); cr.stop != nil {
			break
		}
		raw, *n = raw[i+1:], *n+1
	}
}

// A chunk's events, merged in line order: a run first seen, a label new to
// a run, a bad row.
const (
	evPart = iota
	evLabel
	evBad
)

type chunkEvent struct {
	line  int
	kind  int
	p     *part
	label string
	bad   *DataError
}

// Merge adds the next decoded chunk, in the order Next handed the chunks
// out. It fails with the object's first error, at the line DecodeObject
// would have stopped; bad rows before it go to Options.OnBadRow.
func (c *Chunks) Merge(cr *ChunkRuns) error {
	if c.err != nil {
		return c.err
	}
	if cr.seq != c.merged {
		return errors.New("readers: chunks merged out of order")
	}
	c.merged++
	if err := c.merge(cr); err != nil {
		c.err = err
		return err
	}
	if c.mr != nil {
		// The mapped bytes up to the chunk's end are done with.
		var err error
		if ferr := c.mr.Guard(func() { err = c.mr.Consumed(cr.end) }); ferr != nil {
			err = ferr
		}
		if err != nil {
			c.err = locate(&storageError{err}, c.url, c.obj.Lines+1)
			return c.err
		}
	}
	return nil
}

func (c *Chunks) merge(cr *ChunkRuns) error {
	co := cr.obj
	// The chunk's lines follow those merged so far: its numbers move on
	// by them (the events' order within the chunk stays as it is).
	base := c.obj.Lines
	var evs []chunkEvent
	for _, p := range co.parts {
		p.firstLine += base
		evs = append(evs, chunkEvent{line: p.firstLine, kind: evPart, p: p})
		for _, l := range p.newLabels {
			evs = append(evs, chunkEvent{line: base + l.line, kind: evLabel, p: p, label: l.label})
		}
	}
	for _, de := range cr.bad {
		de.Line += base
		evs = append(evs, chunkEvent{line: de.Line, kind: evBad, bad: de})
	}
	// A row that brings a new run brings its first label too: the run
	// comes first, as in DecodeObject.
	slices.SortFunc(evs, func(a, b chunkEvent) int {
		return cmp.Or(cmp.Compare(a.line, b.line), cmp.Compare(a.kind, b.kind))
	})
	global := make(map[*part]*part, len(co.parts))
	for _, e := range evs {
		switch e.kind {
		case evPart:
			gp, ok := c.g.lookup(&e.p.partHeader)
			if !ok {
				var err error
				if gp, err = c.g.add(e.p.partHeader); err != nil {
					return err
				}
			}
			global[e.p] = gp
		case evLabel:
			gp := global[e.p]
			set := c.labels[gp]
			if _, ok := set[e.label]; !ok {
				set[e.label] = struct{}{}
				if len(set) > c.opts.MaxLabels {
					return tooManyLabels(c.url, e.line, gp.runKey, c.opts.MaxLabels)
				}
			}
		case evBad:
			if err := c.opts.OnBadRow(e.bad); err != nil {
				return err
			}
		}
	}
	if cr.stop != nil {
		return c.place(cr.stop, base)
	}
	for _, p := range co.parts {
		gp := global[p]
		if gp.b == nil && gp.enc == nil {
			// The run's first chunk: its rows, candidates and origins
			// are the run's so far.
			gp.b, gp.cands, gp.origins = p.b, p.cands, p.origins
			continue
		}
		if gp.b == nil {
			// A run of the earlier bytes of a resumed object
			// (ResumeObject), read back from its encoding.
			if err := c.unpack(gp); err != nil {
				return err
			}
		}
		gp.b.AppendRows(p.b, c.opts.Components, p.origin)
		c.builders.put(p.b)
		gp.mergeOrigins(p.origins)
		gp.mergeCands(p.cands)
	}
	c.obj.Rows += co.Rows
	c.obj.Skipped += co.Skipped
	c.obj.Lines = base + cr.lines
	return nil
}

// mergeOrigins adds the first origins and aliases of a later chunk's rows
// of the run: a label keeps the first it had.
func (p *part) mergeOrigins(later map[string]labelOrigin) {
	for label, lo := range later {
		p.addOrigin(label, lo)
	}
}

// mergeCands keeps a metadata candidate of the run alive only if a later
// chunk's rows of the run all carry the same value: its candidate of that
// name (taken from its first row of the run) is alive, of the same kind,
// with the same canonical value.
func (p *part) mergeCands(later []candidate) {
	for i := range p.cands {
		c := &p.cands[i]
		if !c.alive {
			continue
		}
		alive := false
		for j := range later {
			if l := &later[j]; l.name == c.name {
				alive = l.alive && l.kind == c.kind && l.canon == c.canon
				break
			}
		}
		c.alive = alive
	}
}

// Object returns the decoded object once every chunk has been merged: what
// DecodeObject returns for the same bytes and options.
func (c *Chunks) Object() (*ObjectRuns, error) {
	if c.err != nil {
		return nil, c.err
	}
	if !c.done || c.merged != c.issued {
		return nil, errors.New("readers: Object before every chunk was read and merged")
	}
	return c.obj, nil
}
