package readers

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
)

// The codec of decoded objects: what DecodeObject and DecodeRecords give,
// before assembly, written to bytes and read back exactly, so that the
// runs Assemble and AssembleRecords then build are the same to the bit
// (keys, metadata, row order, float64 bits, absent values, labels, origins,
// the lines errors name). The cache of --cache stores it, and an engine
// that moves decoded objects between workers can ship it.
//
// An encoding starts with a magic and CodecVersion, then the object's
// counts, then its parts in order: each part's identity, run key, first
// line, its metadata candidates still alive (name, JSON kind, canonical
// value) and, for skyfall, the first origin and alias of each label in
// label order, then its rows. A skyfall part's rows are its row count, then
// its columns as the skyfall binary trace encodes them (dense rewards,
// labels, steps, components, flags; with their own CRC-32C): an object read
// back holds each part's trace in that encoding, as a spilled object holds
// it in its file, and the trace is read when Assemble builds the part's run
// (no builder is rebuilt row by row); a record part's rows are each
// row's line, its number and its fields' offsets. The object's URL and key
// are not stored: the reader gives them, as it does to DecodeObject.
// Integrity of the whole (a checksum) is the storing side's business.

// CodecVersion is the version of the codec's encoding: raise it whenever
// the encoding, or what decoding puts into an object, changes. Version 2:
// a skyfall part's row count before its trace. Version 3: the skyfall
// trace encoding's version 2 (the components no row carries). Version 4:
// a Parquet object's JSON-text cells must each be one JSON value (one
// that was not could add fields or rows to what version 3 decoded), and
// columns of Parquet's JSON and UUID logical types are read. Version 5:
// a Parquet object's Hive-style folders give its rows fields (version 4
// decoded such an object without them). Version 6: a folder's timestamp
// (2024-01-05 22:00:00) is the text a timestamp cell reads as
// (2024-01-05T22:00:00).
const CodecVersion = 6

var (
	codecMagicRuns    = []byte("CRLR")
	codecMagicRecords = []byte("CRLK")
)

// errCodec is the error of an encoding that cannot be read back.
var errCodec = errors.New("readers: not a valid encoding of a decoded object")

type encoder struct{ buf []byte }

func (e *encoder) uint(v uint64) { e.buf = binary.AppendUvarint(e.buf, v) }
func (e *encoder) int(v int64)   { e.buf = binary.AppendVarint(e.buf, v) }
func (e *encoder) str(s string)  { e.uint(uint64(len(s))); e.buf = append(e.buf, s...) }
func (e *encoder) bytes(b []byte) {
	e.uint(uint64(len(b)))
	e.buf = append(e.buf, b...)
}
func (e *encoder) bool(b bool) {
	if b {
		e.buf = append(e.buf, 1)
	} else {
		e.buf = append(e.buf, 0)
	}
}

type decoder struct {
	buf []byte
	err error
}

func (d *decoder) fail() {
	if d.err == nil {
		d.err = errCodec
	}
}

func (d *decoder) uint() uint64 {
	v, n := binary.Uvarint(d.buf)
	if n <= 0 {
		d.fail()
		d.buf = nil
		return 0
	}
	d.buf = d.buf[n:]
	return v
}

func (d *decoder) int() int64 {
	v, n := binary.Varint(d.buf)
	if n <= 0 {
		d.fail()
		d.buf = nil
		return 0
	}
	d.buf = d.buf[n:]
	return v
}

// count reads a length no larger than what is left (each element takes at
// least min bytes).
func (d *decoder) count(min int) int {
	v := d.uint()
	if v > uint64(len(d.buf)/max(min, 1)+1) || v > math.MaxInt32 {
		d.fail()
		d.buf = nil
		return 0
	}
	return int(v)
}

func (d *decoder) bytes() []byte {
	n := d.count(1)
	if n > len(d.buf) {
		d.fail()
		d.buf = nil
		return nil
	}
	b := d.buf[:n:n]
	d.buf = d.buf[n:]
	return b
}

func (d *decoder) str() string { return string(d.bytes()) }

func (d *decoder) bool() bool {
	if len(d.buf) == 0 {
		d.fail()
		return false
	}
	b := d.buf[0]
	d.buf = d.buf[1:]
	if b > 1 {
		d.fail()
	}
	return b == 1
}

func (d *decoder) magic(m []byte) {
	if !bytes.HasPrefix(d.buf, m) {
		d.fail()
		d.buf = nil
		return
	}
	d.buf = d.buf[len(m):]
	if v := d.uint(); v != CodecVersion && d.err == nil {
		d.err = fmt.Errorf("readers: an encoding of codec version %d, not %d", v, CodecVersion)
	}
}

func (e *encoder) info(o *ObjectInfo) {
	e.uint(uint64(o.Format))
	e.uint(uint64(o.Lines))
	e.uint(uint64(o.Rows))
	e.uint(uint64(o.Skipped))
}

func (d *decoder) info(o *ObjectInfo) {
	o.Format = Format(d.uint())
	o.Lines = int(d.uint())
	o.Rows = int(d.uint())
	o.Skipped = int(d.uint())
}

// header writes what grouping and metadata need of a part: the alive
// candidates only (what compactCandidates keeps).
func (e *encoder) header(c *partCore) {
	e.bool(c.anon)
	e.str(c.identKey)
	e.str(c.runKey)
	e.uint(uint64(len(c.ident)))
	for _, v := range c.ident {
		e.str(v.field)
		e.str(v.canon)
	}
	e.uint(uint64(c.firstLine))
	n := 0
	for _, c := range c.cands {
		if c.alive {
			n++
		}
	}
	e.uint(uint64(n))
	for _, c := range c.cands {
		if c.alive {
			e.str(c.name)
			e.buf = append(e.buf, c.kind)
			e.str(c.canon)
		}
	}
}

func (d *decoder) header(c *partCore) {
	c.anon = d.bool()
	c.identKey = d.str()
	c.runKey = d.str()
	c.ident = make([]identValue, d.count(2))
	for i := range c.ident {
		c.ident[i] = identValue{field: d.str(), canon: d.str()}
	}
	c.firstLine = int(d.uint())
	c.cands = make([]candidate, d.count(3))
	for i := range c.cands {
		name := d.str()
		var kind byte
		if len(d.buf) > 0 {
			kind, d.buf = d.buf[0], d.buf[1:]
		} else {
			d.fail()
		}
		c.cands[i] = candidate{name: name, key: math.MaxUint32, kind: kind, canon: d.str(), alive: true}
	}
}

// AppendEncoding appends the encoding of the decoded object to buf. The
// object must hold its rows (neither spilled nor released).
func (o *ObjectRuns) AppendEncoding(buf []byte) ([]byte, error) {
	if o.spilled || o.released {
		return buf, fmt.Errorf("readers: encoding %s: its rows were spilled or released", o.URL)
	}
	e := &encoder{buf: buf}
	e.objectHead(o)
	for _, p := range o.parts {
		e.header(&p.partCore)
		var (
			labels []string
			rows   int
			tb     []byte
		)
		if p.b != nil {
			t := p.b.Trace(nil)
			labels, rows = t.LabelNames, t.Len()
			var err error
			if tb, err = t.MarshalBinary(); err != nil {
				return buf, err
			}
		} else { // read back from an encoding: its trace as it was
			labels, rows, tb = p.labels, p.rows, p.enc
		}
		if err := e.labels(o, p, labels); err != nil {
			return buf, err
		}
		e.uint(uint64(rows))
		e.bytes(tb)
	}
	return e.buf, nil
}

// Encoding is a decoded object's encoding ready to be written: the same
// bytes AppendEncoding appends, of a length known before they are written
// (Len), written by WriteTo a part at a time, each part's trace encoded
// from its builder's compact rows by skyfall's Builder.WriteBinaryTo
// (through its buffer of about 64 KiB, one scratch column at a time). No
// copy of the whole encoding, nor of a part's trace encoding, nor a part's
// trace of dense columns is ever held: a cache entry is compressed as it
// is written (a whole encoding was built, grown, copied, then compressed,
// all in memory freshly taken from the system, the most of a warm rerun's
// write; later each part's dense trace, ~55 bytes a row, was).
type Encoding struct {
	o      *ObjectRuns
	labels [][]string // per part built from its builder: its trace's labels
	rows   []int      // and rows
	sizes  []int64    // per part: its trace's encoded length
	n      int64
}

// Encoding returns the object's encoding, measured: each part's trace's
// length from its builder (skyfall's Builder.BinarySize), without building
// the trace, which WriteTo then builds once. The object must hold its rows
// (neither spilled nor released) until the encoding is written.
func (o *ObjectRuns) Encoding() (*Encoding, error) {
	if o.spilled || o.released {
		return nil, fmt.Errorf("readers: encoding %s: its rows were spilled or released", o.URL)
	}
	n := len(o.parts)
	en := &Encoding{o: o, labels: make([][]string, n), rows: make([]int, n), sizes: make([]int64, n)}
	for i, p := range o.parts {
		if p.b == nil {
			en.labels[i], en.rows[i], en.sizes[i] = p.labels, p.rows, int64(len(p.enc))
			continue
		}
		en.labels[i], en.rows[i], en.sizes[i] = p.b.LabelNames(), p.b.Len(), p.b.BinarySize(nil)
	}
	var cw countWriter
	total, err := en.write(&cw)
	if err != nil {
		return nil, err
	}
	en.n = total
	return en, nil
}

// Len is the length of the encoding.
func (en *Encoding) Len() int64 { return en.n }

// WriteTo writes the encoding to w.
func (en *Encoding) WriteTo(w io.Writer) (int64, error) { return en.write(w) }

// countWriter counts what is written to it.
type countWriter struct{ n int64 }

func (c *countWriter) Write(b []byte) (int, error) { c.n += int64(len(b)); return len(b), nil }

// flushingWriter hands an encoder's buffer to w (before each part's
// trace, and at the end), counting what it wrote.
type flushingWriter struct {
	e   *encoder
	w   io.Writer
	n   int64
	err error
}

func (f *flushingWriter) flush() {
	if f.err != nil || len(f.e.buf) == 0 {
		return
	}
	n, err := f.w.Write(f.e.buf)
	f.n += int64(n)
	f.err = err
	f.e.buf = f.e.buf[:0]
}

// write writes the encoding (AppendEncoding's bytes) to w, with the parts'
// traces as measured, or counts it when w is a countWriter.
func (en *Encoding) write(w io.Writer) (int64, error) {
	o := en.o
	if o.spilled || o.released {
		return 0, fmt.Errorf("readers: encoding %s: its rows were spilled or released", o.URL)
	}
	_, counting := w.(*countWriter)
	e := &encoder{buf: make([]byte, 0, 4<<10)}
	f := &flushingWriter{e: e, w: w}
	e.objectHead(o)
	for i, p := range o.parts {
		e.header(&p.partCore)
		labels, rows := en.labels[i], en.rows[i]
		if err := e.labels(o, p, labels); err != nil {
			return f.n, err
		}
		e.uint(uint64(rows))
		e.uint(uint64(en.sizes[i]))
		if f.flush(); f.err != nil {
			return f.n, f.err
		}
		switch {
		case counting:
			f.n += en.sizes[i]
		case p.b == nil:
			n, err := w.Write(p.enc)
			f.n += int64(n)
			if err != nil {
				return f.n, err
			}
		default:
			n, err := p.b.WriteBinaryTo(w, nil)
			f.n += n
			if err != nil {
				return f.n, err
			}
			if n != en.sizes[i] {
				return f.n, fmt.Errorf("readers: encoding %s: a trace of %d bytes, measured %d", o.URL, n, en.sizes[i])
			}
		}
	}
	f.flush()
	return f.n, f.err
}

// objectHead writes what an object's encoding starts with: the magic, the
// codec version, the object's info, its components and how many parts
// follow.
func (e *encoder) objectHead(o *ObjectRuns) {
	e.buf = append(e.buf, codecMagicRuns...)
	e.uint(CodecVersion)
	e.info(&o.ObjectInfo)
	e.uint(uint64(len(o.comps)))
	for _, c := range o.comps {
		e.str(c)
	}
	e.uint(uint64(len(o.parts)))
}

// labels writes a part's labels (names, first origin and alias, in order
// of first row), which must be those of its origins.
func (e *encoder) labels(o *ObjectRuns, p *part, labels []string) error {
	e.uint(uint64(len(labels)))
	for _, name := range labels {
		lo := p.origins[name]
		e.str(name)
		e.bool(lo.hasOrigin)
		e.str(lo.origin)
		e.bool(lo.hasAlias)
		e.str(lo.alias)
	}
	known := 0
	for _, name := range labels {
		if _, ok := p.origins[name]; ok {
			known++
		}
	}
	if known != len(p.origins) {
		return fmt.Errorf("readers: encoding %s: label origins of labels the part does not hold", o.URL)
	}
	return nil
}

// DecodeEncodedObject reads back an object AppendEncoding wrote, as the
// object at url with key (relative to the input prefix), decoded with
// opts: the same parts, rows and counts DecodeObject gave. It fails when
// data is not such an encoding, or one of another CodecVersion, or of
// other components than opts.Components.
func DecodeEncodedObject(url, key string, data []byte, opts Options) (*ObjectRuns, error) {
	opts, err := opts.normalize()
	if err != nil {
		return nil, err
	}
	d := &decoder{buf: data}
	d.magic(codecMagicRuns)
	o := &ObjectRuns{ObjectInfo: ObjectInfo{URL: url, Key: key}}
	d.info(&o.ObjectInfo)
	o.comps = make([]string, d.count(1))
	for i := range o.comps {
		o.comps[i] = d.str()
	}
	if d.err == nil && !slices.Equal(o.comps, opts.Components) {
		return nil, fmt.Errorf("readers: the encoding of %s holds components %q, not %q", url, o.comps, opts.Components)
	}
	o.parts = make([]*part, d.count(8))
	for i := range o.parts {
		p := &part{}
		d.header(&p.partCore)
		labels := make([]string, d.count(5))
		los := make([]labelOrigin, len(labels))
		for j := range los {
			labels[j] = d.str()
			los[j] = labelOrigin{hasOrigin: d.bool(), origin: d.str(), hasAlias: d.bool(), alias: d.str()}
		}
		p.rows = int(d.uint())
		p.enc = d.bytes()
		if d.err != nil {
			return nil, d.err
		}
		// The trace is read (its CRC-32C checked, its key, row count and
		// labels compared with these) when the part's run is built.
		if len(p.enc) == 0 {
			return nil, errCodec
		}
		for j, name := range labels {
			if los[j].hasOrigin || los[j].hasAlias {
				p.addOrigin(name, los[j])
			}
		}
		p.labels = labels
		o.parts[i] = p
	}
	if d.err != nil {
		return nil, d.err
	}
	if len(d.buf) != 0 {
		return nil, fmt.Errorf("%w: %d bytes after its end", errCodec, len(d.buf))
	}
	return o, nil
}

// AppendEncoding appends the encoding of the decoded object to buf.
func (o *ObjectRecords) AppendEncoding(buf []byte) ([]byte, error) {
	e := &encoder{buf: append(buf, codecMagicRecords...)}
	e.uint(CodecVersion)
	e.info(&o.ObjectInfo)
	e.int(o.mem)
	for _, list := range [][]string{o.idents, o.schema} {
		e.uint(uint64(len(list)))
		for _, s := range list {
			e.str(s)
		}
	}
	var keys *recordKeys
	for _, p := range o.parts {
		if len(p.rows) > 0 {
			keys = p.rows[0].keys
			break
		}
	}
	if keys == nil {
		keys = newRecordKeys()
	}
	e.uint(uint64(len(keys.names)))
	for _, n := range keys.names {
		e.str(n)
	}
	e.uint(uint64(len(o.parts)))
	for _, p := range o.parts {
		e.header(&p.partCore)
		e.uint(uint64(len(p.rows)))
		for _, r := range p.rows {
			if r.keys != keys {
				return buf, fmt.Errorf("readers: encoding %s: rows with key tables of their own", o.URL)
			}
			e.uint(uint64(r.line))
			e.bytes(r.data)
			e.uint(uint64(len(r.fields)))
			for _, f := range r.fields {
				e.uint(uint64(f.key))
				e.uint(uint64(f.start))
				e.uint(uint64(f.end))
				e.buf = append(e.buf, f.kind)
			}
		}
	}
	return e.buf, nil
}

// DecodeEncodedRecords reads back an object ObjectRecords.AppendEncoding
// wrote, as the object at url with key: the same parts and Records (lines,
// line numbers, fields) DecodeRecords gave.
func DecodeEncodedRecords(url, key string, data []byte) (*ObjectRecords, error) {
	d := &decoder{buf: data}
	d.magic(codecMagicRecords)
	o := &ObjectRecords{ObjectInfo: ObjectInfo{URL: url, Key: key}}
	d.info(&o.ObjectInfo)
	o.mem = d.int()
	for _, list := range []*[]string{&o.idents, &o.schema} {
		*list = make([]string, d.count(1))
		for i := range *list {
			(*list)[i] = d.str()
		}
	}
	keys := newRecordKeys()
	nk := d.count(1)
	for range nk {
		name := d.str()
		if _, ok := keys.index[name]; ok {
			d.fail()
		}
		keys.intern([]byte(name))
	}
	o.parts = make([]*recordPart, d.count(8))
	for i := range o.parts {
		p := &recordPart{}
		d.header(&p.partCore)
		p.rows = make([]*Record, d.count(3))
		for j := range p.rows {
			r := &Record{url: url, line: int(d.uint()), data: d.bytes(), keys: keys}
			r.fields = make([]recordField, d.count(4))
			for k := range r.fields {
				f := recordField{key: uint32(d.uint()), start: uint32(d.uint()), end: uint32(d.uint())}
				if len(d.buf) == 0 {
					d.fail()
					break
				}
				f.kind, d.buf = d.buf[0], d.buf[1:]
				if int(f.key) >= len(keys.names) || f.start > f.end || int(f.end) > len(r.data) {
					d.fail()
				}
				r.fields[k] = f
			}
			if d.err != nil {
				return nil, d.err
			}
			r.buildIndex()
			p.rows[j] = r
		}
		o.parts[i] = p
	}
	if d.err != nil {
		return nil, d.err
	}
	if len(d.buf) != 0 {
		return nil, fmt.Errorf("%w: %d bytes after its end", errCodec, len(d.buf))
	}
	return o, nil
}
