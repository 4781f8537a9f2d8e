package skyfall

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"maps"
	"math"
	"math/bits"
	"slices"
)

// Binary encoding of a Trace (for spilling runs to local disk and reading
// them back). It is lossless: every float64 is kept as its 64 bits (NaN
// payloads and -0 included), and nil and empty columns and maps stay
// distinct, so that UnmarshalBinary(MarshalBinary(t)) is reflect.DeepEqual
// to t for every valid t (NaN aside, which DeepEqual never finds equal).
//
// Layout, version 2. uvarint is encoding/binary's unsigned varint; a
// length written "n+1" is 0 for a nil slice or map and len+1 otherwise; a
// string is uvarint(len) then its bytes; fixed-width numbers are little
// endian.
//
//	magic       "SKYT"
//	version     1 byte (BinaryVersion)
//	flags       1 byte: bit 0 HasGamma; the other bits are 0
//	gamma       8 bytes, the bits of Gamma
//	Key         string
//	Meta        uvarint n+1, then n × (key string, value string), keys in
//	            strictly increasing bytewise order
//	LabelNames  uvarint n+1, then n strings
//	Origins     uvarint n+1, then n strings
//	Rewards     uvarint n+1, then n × 8 bytes (float64 bits)
//	Labels      uvarint n+1, then n × uvarint (each < len(LabelNames))
//	Steps       uvarint n+1, then n × uvarint zigzag(Steps[i] − Steps[i−1])
//	            (Steps[−1] = 0; wrapping int64 arithmetic)
//	HasStep     uvarint n+1, then ⌈n/8⌉ bytes, row i in bit i%8 of byte
//	            i/8, unused high bits 0
//	Invalid     uvarint n+1, then n bytes (int8)
//	EffRank     uvarint n+1, then n × 8 bytes (float64 bits)
//	HasEffRank  uvarint n+1, then a bitmap as HasStep
//	Components  uvarint n+1, then n × (name string, uvarint m+1, m × 8
//	            bytes), names in strictly increasing bytewise order
//	Uncarried   uvarint n+1, then n strings, in strictly increasing
//	            bytewise order (version 2)
//	checksum    4 bytes: CRC-32C (Castagnoli) of every byte before it
//
// A row takes 8 bytes per float column (reward, each component,
// effective_rank), 1 for its label (fewer than 128 labels), 1 for its step
// (steps moving by less than 64), 1 for invalid_action and a bit per flag:
// the rows of the readers decode benchmark take 35 bytes a row encoded,
// against 51 in a Trace's dense columns, 34 in a Builder's compact ones and
// 490 as JSON. A Builder writes the encoding of the trace it builds
// without building it (Builder.WriteBinaryTo, binary_builder.go), and
// measures it first (Builder.BinarySize).
//
// Only well-formed traces are encoded: MarshalBinary, AppendBinary and
// WriteTo return an error for a trace that fails Validate, whose columns
// disagree in length, whose label indices are out of range, or whose Steps
// and HasStep (EffRank and HasEffRank) are not both nil or both non-nil, as
// Builder makes them. Every trace that UnmarshalBinary accepts is
// well-formed in the same sense; anything else (a wrong magic, an unknown version, a
// checksum mismatch, a truncation, trailing bytes, a length that does not
// fit, a label index out of range, unsorted keys) is an error wrapping
// ErrBinaryFormat, never a panic, and the memory allocated while decoding
// is bounded by a constant multiple of the input's length (a corrupt length
// fails before anything is allocated for it).

// BinaryVersion is the version of the binary trace encoding written by
// MarshalBinary, AppendBinary and WriteTo.
const BinaryVersion = 2

const binaryMagic = "SKYT"

// binaryHeader is magic, version, flags and gamma; binaryTrailer the
// checksum.
const (
	binaryHeader  = 4 + 1 + 1 + 8
	binaryTrailer = 4
	flagGamma     = 1
)

// ErrBinaryFormat is wrapped by every error of UnmarshalBinary about its
// input.
var ErrBinaryFormat = errors.New("skyfall: malformed binary trace")

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// flushAt is the buffer size at which WriteTo hands bytes to its writer;
// chunk is the number of rows encoded between two such checks.
const (
	flushAt = 64 << 10
	chunk   = 4096
)

// MarshalBinary encodes the trace (encoding.BinaryMarshaler).
func (t *Trace) MarshalBinary() ([]byte, error) {
	return t.AppendBinary(nil)
}

// AppendBinary appends the encoding of the trace to b
// (encoding.BinaryAppender). On error b is returned unchanged.
func (t *Trace) AppendBinary(b []byte) ([]byte, error) {
	if err := t.checkBinary(); err != nil {
		return b, err
	}
	start := len(b)
	e := encoder{buf: slices.Grow(b, t.binarySizeHint())}
	e.trace(t)
	sum := crc32.Update(0, castagnoli, e.buf[start:])
	return binary.LittleEndian.AppendUint32(e.buf, sum), nil
}

// WriteTo writes the encoding of the trace to w (io.WriterTo), through a
// buffer of about 64 KiB however long the trace: no copy of the whole
// encoding is ever held. It returns the bytes written.
func (t *Trace) WriteTo(w io.Writer) (int64, error) {
	if err := t.checkBinary(); err != nil {
		return 0, err
	}
	e := encoder{buf: make([]byte, 0, flushAt+16*chunk), w: w}
	e.trace(t)
	e.buf = binary.LittleEndian.AppendUint32(e.buf, crc32.Update(e.crc, castagnoli, e.buf))
	e.flush(false)
	return e.n, e.err
}

// BinarySize is the length of the encoding (MarshalBinary's, WriteTo's) of
// the trace b.TraceFrom(pool, meta) builds, computed without building it:
// from the counts of its rows, labels and components, and one pass over
// the stretches of its labels (when an index takes more than a byte) and
// of its steps (their differences are written as varints). A writer that
// must say an encoding's length before writing it (a cache entry) measures
// it so, then builds each trace once.
func (b *Builder) BinarySize(meta map[string]string) int64 {
	n := int64(b.n)
	size := int64(binaryHeader+binaryTrailer) + strSize(b.key)
	size += uvarintSize(uint64(len(meta)) + 1) // 0 for nil: one byte either way
	for k, v := range meta {
		size += strSize(k) + strSize(v)
	}
	size += 2 * uvarintSize(uint64(len(b.labelNames))+1) // LabelNames, Origins
	for i, name := range b.labelNames {
		size += strSize(name) + strSize(b.labelOrigin(i))
	}
	// A column is its count (n+1; 0 when absent, or 1 when empty: one byte
	// either way), then its values.
	head := uvarintSize(uint64(n) + 1)
	absent := int64(1)
	size += head + 8*n // Rewards
	size += head + b.labelBytes()
	if b.anyStep {
		size += head + b.stepBytes() + head + (n+7)/8 // Steps, HasStep
	} else {
		size += 2 * absent
	}
	if b.anyInv {
		size += head + n
	} else {
		size += absent
	}
	if b.anyRank {
		size += head + 8*n + head + (n+7)/8 // EffRank, HasEffRank
	} else {
		size += 2 * absent
	}
	// Components (a map: one column per distinct name), then Uncarried.
	comps := map[string]bool{}
	for _, name := range b.compNames {
		comps[name] = true
	}
	size += uvarintSize(uint64(len(comps)) + 1)
	for name := range comps {
		size += strSize(name) + head + 8*n
	}
	uncarried := b.uncarried()
	size += uvarintSize(uint64(len(uncarried)) + 1)
	for _, name := range uncarried {
		size += strSize(name)
	}
	return size
}

// labelBytes is the length of the label indices' values as encoder.labels
// writes them: a byte each below 0x80, else a varint (a varint's length
// either way).
func (b *Builder) labelBytes() int64 {
	n := int64(b.n)
	if len(b.labelNames) <= 0x80 { // every index below 0x80
		return n
	}
	size := int64(0)
	if b.labels.isDen {
		b.labels.dense.each(func(s []int32) {
			for _, l := range s {
				size += uvarintSize(uint64(l))
			}
		})
		return size
	}
	eachRun(&b.labels.runs, b.n, func(r labelRun) int { return r.start }, func(r labelRun, end int) {
		size += int64(end-r.start) * uvarintSize(uint64(r.label))
	})
	return size
}

// stepBytes is the length of the steps' values as encoder.steps writes
// them: each row's difference from the row before (from 0 for the first),
// zigzag-encoded, a byte below 0x80, else a varint.
func (b *Builder) stepBytes() int64 {
	var prev int64
	size := int64(0)
	b.steps.eachFrom(0, b.n, func(start, end int, first, inc int64, _ bool) {
		size += zigzagSize(first - prev)
		if k := int64(end - start - 1); k > 0 {
			size += k * zigzagSize(inc)
		}
		prev = first + inc*int64(end-start-1)
	}, func(_ int, s int64, _ bool) {
		size += zigzagSize(s - prev)
		prev = s
	})
	return size
}

func zigzagSize(d int64) int64 { return uvarintSize(uint64(d<<1) ^ uint64(d>>63)) }

// uvarintSize is the length of binary.AppendUvarint's encoding of v.
func uvarintSize(v uint64) int64 { return int64(bits.Len64(v|1)+6) / 7 }

// strSize is the length of encoder.str's encoding of s.
func strSize(s string) int64 { return uvarintSize(uint64(len(s))) + int64(len(s)) }

// checkBinary is the precondition of the encoders and the postcondition
// of the decoder: it does not rely on Validate alone (which may check less
// than the columns' lengths), so that a decoded trace can be indexed
// safely by every column and label.
func (t *Trace) checkBinary() error {
	if (t.Steps == nil) != (t.HasStep == nil) {
		return fmt.Errorf("skyfall: trace %s: Steps and HasStep must be both nil or both set", t.Key)
	}
	if (t.EffRank == nil) != (t.HasEffRank == nil) {
		return fmt.Errorf("skyfall: trace %s: EffRank and HasEffRank must be both nil or both set", t.Key)
	}
	n := len(t.Rewards)
	if len(t.Labels) != n || len(t.Origins) != len(t.LabelNames) ||
		t.Steps != nil && (len(t.Steps) != n || len(t.HasStep) != n) ||
		t.Invalid != nil && len(t.Invalid) != n ||
		t.EffRank != nil && (len(t.EffRank) != n || len(t.HasEffRank) != n) {
		return fmt.Errorf("skyfall: trace %s: column lengths disagree", t.Key)
	}
	for name, c := range t.Components {
		if len(c) != n {
			return fmt.Errorf("skyfall: trace %s: component %q column length mismatch", t.Key, name)
		}
	}
	nl := int32(len(t.LabelNames))
	for i, l := range t.Labels {
		if l < 0 || l >= nl {
			return fmt.Errorf("skyfall: trace %s: row %d has label index %d of %d", t.Key, i, l, nl)
		}
	}
	return t.Validate()
}

// binarySizeHint is close to the encoded size, so that AppendBinary grows
// its buffer once.
func (t *Trace) binarySizeHint() int {
	n := len(t.Rewards)
	size := binaryHeader + binaryTrailer + 64 + len(t.Key) + 8*n + n + n + n/8 + len(t.Invalid) + 8*len(t.EffRank) + n/8
	for k, v := range t.Meta {
		size += len(k) + len(v) + 4
	}
	for _, s := range t.LabelNames {
		size += len(s) + 2
	}
	for _, s := range t.Origins {
		size += len(s) + 2
	}
	for k, c := range t.Components {
		size += len(k) + 8 + 8*len(c)
	}
	for _, s := range t.Uncarried {
		size += len(s) + 2
	}
	return size
}

// encoder appends to buf; with w set it flushes buf to w whenever it
// grows past flushAt, keeping the checksum of what it flushed in crc.
type encoder struct {
	buf []byte
	w   io.Writer
	crc uint32
	n   int64
	err error
}

// flush writes buf out when a writer is set and, unless onlyIfFull, buf
// has reached flushAt.
func (e *encoder) flush(onlyIfFull bool) {
	if e.w == nil || onlyIfFull && len(e.buf) < flushAt {
		return
	}
	if e.err == nil {
		m, err := e.w.Write(e.buf)
		e.n += int64(m)
		if err == nil && m < len(e.buf) {
			err = io.ErrShortWrite
		}
		e.err = err
	}
	e.crc = crc32.Update(e.crc, castagnoli, e.buf)
	e.buf = e.buf[:0]
}

func (e *encoder) uvarint(v uint64) { e.buf = binary.AppendUvarint(e.buf, v) }

func (e *encoder) str(s string) {
	e.uvarint(uint64(len(s)))
	e.buf = append(e.buf, s...)
	e.flush(true)
}

// count writes n+1, or 0 for nil.
func (e *encoder) count(isNil bool, n int) {
	if isNil {
		e.uvarint(0)
		return
	}
	e.uvarint(uint64(n) + 1)
}

func (e *encoder) strs(ss []string) {
	e.count(ss == nil, len(ss))
	for _, s := range ss {
		e.str(s)
	}
}

func (e *encoder) f64s(xs []float64) {
	e.count(xs == nil, len(xs))
	e.f64vals(xs)
}

// head writes what an encoding starts with: the magic, the version, the
// flags, gamma, the key and the metadata.
func (e *encoder) head(hasGamma bool, gamma float64, key string, meta map[string]string) {
	e.buf = append(e.buf, binaryMagic...)
	var flags byte
	if hasGamma {
		flags |= flagGamma
	}
	e.buf = append(e.buf, BinaryVersion, flags)
	e.buf = binary.LittleEndian.AppendUint64(e.buf, math.Float64bits(gamma))
	e.str(key)
	e.count(meta == nil, len(meta))
	for _, k := range slices.Sorted(maps.Keys(meta)) {
		e.str(k)
		e.str(meta[k])
	}
}

// f64vals writes the values of a float64 column (after its count).
func (e *encoder) f64vals(xs []float64) {
	for len(xs) > 0 {
		k := min(len(xs), chunk)
		o := len(e.buf)
		e.buf = slices.Grow(e.buf, 8*k)[:o+8*k]
		out := e.buf[o:]
		for i, x := range xs[:k] {
			binary.LittleEndian.PutUint64(out[8*i:], math.Float64bits(x))
		}
		xs = xs[k:]
		e.flush(true)
	}
}

func (e *encoder) bits(bs []bool) {
	e.count(bs == nil, len(bs))
	for len(bs) > 0 {
		k := min(len(bs), 8*chunk)
		for i := 0; i < k; i += 8 {
			var c byte
			for j, b := range bs[i:min(i+8, k)] {
				if b {
					c |= 1 << j
				}
			}
			e.buf = append(e.buf, c)
		}
		bs = bs[k:]
		e.flush(true)
	}
}

func (e *encoder) labels(ls []int32) {
	e.count(ls == nil, len(ls))
	e.labelVals(ls)
}

// labelVals writes the values of a label column (after its count).
func (e *encoder) labelVals(ls []int32) {
	for len(ls) > 0 {
		k := min(len(ls), chunk)
		for _, l := range ls[:k] {
			if l < 0x80 {
				e.buf = append(e.buf, byte(l))
			} else {
				e.uvarint(uint64(l))
			}
		}
		ls = ls[k:]
		e.flush(true)
	}
}

func (e *encoder) steps(ss []int64) {
	e.count(ss == nil, len(ss))
	e.stepVals(ss, 0)
}

// stepVals writes the values of a step column (after its count), the
// first as its difference from prev; it returns the last.
func (e *encoder) stepVals(ss []int64, prev int64) int64 {
	for len(ss) > 0 {
		k := min(len(ss), chunk)
		for _, s := range ss[:k] {
			d := s - prev
			prev = s
			z := uint64(d<<1) ^ uint64(d>>63)
			if z < 0x80 {
				e.buf = append(e.buf, byte(z))
			} else {
				e.uvarint(z)
			}
		}
		ss = ss[k:]
		e.flush(true)
	}
	return prev
}

func (e *encoder) int8s(xs []int8) {
	e.count(xs == nil, len(xs))
	for len(xs) > 0 {
		k := min(len(xs), 8*chunk)
		for _, x := range xs[:k] {
			e.buf = append(e.buf, byte(x))
		}
		xs = xs[k:]
		e.flush(true)
	}
}

func (e *encoder) trace(t *Trace) {
	e.head(t.HasGamma, t.Gamma, t.Key, t.Meta)
	e.strs(t.LabelNames)
	e.strs(t.Origins)
	e.f64s(t.Rewards)
	e.labels(t.Labels)
	e.steps(t.Steps)
	e.bits(t.HasStep)
	e.int8s(t.Invalid)
	e.f64s(t.EffRank)
	e.bits(t.HasEffRank)
	e.count(t.Components == nil, len(t.Components))
	for _, name := range slices.Sorted(maps.Keys(t.Components)) {
		e.str(name)
		e.f64s(t.Components[name])
	}
	e.strs(t.Uncarried)
}

// UnmarshalBinary replaces t with the trace encoded in data
// (encoding.BinaryUnmarshaler). data must hold exactly one encoding; the
// trace does not keep a reference to it. On error t is left unchanged.
func (t *Trace) UnmarshalBinary(data []byte) error { return t.UnmarshalBinaryFrom(nil, data) }

// UnmarshalBinaryFrom is UnmarshalBinary taking the row columns from pool
// when it holds some large enough (pool may be nil).
func (t *Trace) UnmarshalBinaryFrom(pool *TracePool, data []byte) error {
	if len(data) < binaryHeader+binaryTrailer || string(data[:4]) != binaryMagic {
		if len(data) >= 4 && string(data[:4]) == binaryMagic {
			return fmt.Errorf("%w: %d bytes, too short", ErrBinaryFormat, len(data))
		}
		return fmt.Errorf("%w: no SKYT magic", ErrBinaryFormat)
	}
	if v := data[4]; v != BinaryVersion {
		return fmt.Errorf("%w: version %d, this build reads version %d", ErrBinaryFormat, v, BinaryVersion)
	}
	body, tail := data[:len(data)-binaryTrailer], data[len(data)-binaryTrailer:]
	if got, want := crc32.Update(0, castagnoli, body), binary.LittleEndian.Uint32(tail); got != want {
		return fmt.Errorf("%w: checksum %08x, want %08x", ErrBinaryFormat, got, want)
	}
	flags := data[5]
	if flags&^flagGamma != 0 {
		return fmt.Errorf("%w: unknown flags %#02x", ErrBinaryFormat, flags)
	}
	var nt Trace
	nt.HasGamma = flags&flagGamma != 0
	nt.Gamma = math.Float64frombits(binary.LittleEndian.Uint64(data[6:]))
	d := decoder{b: body[binaryHeader:], pool: pool}
	d.trace(&nt)
	if d.err != nil {
		return d.err
	}
	if len(d.b) != 0 {
		return fmt.Errorf("%w: %d bytes after the last column", ErrBinaryFormat, len(d.b))
	}
	if err := nt.checkBinary(); err != nil {
		return fmt.Errorf("%w: %w", ErrBinaryFormat, err)
	}
	*t = nt
	return nil
}

// decoder reads from b; the first problem is kept in err and every later
// read returns zero values.
type decoder struct {
	b    []byte
	err  error
	pool *TracePool // where row columns come from (nil: new ones)
}

func (d *decoder) fail(format string, args ...any) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: %s", ErrBinaryFormat, fmt.Sprintf(format, args...))
	}
	d.b = nil
}

func (d *decoder) uvarint(what string) uint64 {
	if d.err != nil {
		return 0
	}
	if len(d.b) > 0 && d.b[0] < 0x80 {
		v := uint64(d.b[0])
		d.b = d.b[1:]
		return v
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail("%s: bad varint", what)
		return 0
	}
	d.b = d.b[n:]
	return v
}

// count reads an n+1 length. Each of the n items needs at least
// minBytes/per bytes of what is left, so that a corrupt length fails here
// rather than allocating. ok is false for nil (and on error).
func (d *decoder) count(what string, minBytes, per uint64) (n int, ok bool) {
	v := d.uvarint(what)
	if v == 0 || d.err != nil {
		return 0, false
	}
	v--
	if v > math.MaxInt32*8 || (v*minBytes+per-1)/per > uint64(len(d.b)) {
		d.fail("%s: %d items in %d bytes", what, v, len(d.b))
		return 0, false
	}
	return int(v), true
}

func (d *decoder) str(what string) string {
	n := d.uvarint(what)
	if d.err != nil {
		return ""
	}
	if n > uint64(len(d.b)) {
		d.fail("%s: string of %d bytes in %d", what, n, len(d.b))
		return ""
	}
	s := string(d.b[:n])
	d.b = d.b[n:]
	return s
}

func (d *decoder) strs(what string) []string {
	n, ok := d.count(what, 1, 1)
	if !ok {
		return nil
	}
	ss := make([]string, n)
	for i := range ss {
		ss[i] = d.str(what)
	}
	return ss
}

func (d *decoder) f64s(what string) []float64 {
	n, ok := d.count(what, 8, 1)
	if !ok {
		return nil
	}
	xs := column(d.pool, poolF64, n, false)
	b := d.b[:8*n]
	for i := range xs {
		xs[i] = math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:]))
	}
	d.b = d.b[8*n:]
	return xs
}

func (d *decoder) bits(what string) []bool {
	n, ok := d.count(what, 1, 8)
	if !ok {
		return nil
	}
	bs := column(d.pool, poolB, n, false)
	nb := (n + 7) / 8
	b := d.b[:nb]
	for i := range bs {
		bs[i] = b[i/8]&(1<<(i%8)) != 0
	}
	if n%8 != 0 && b[nb-1]>>(n%8) != 0 {
		d.fail("%s: stray bits after the last row", what)
		return nil
	}
	d.b = d.b[nb:]
	return bs
}

func (d *decoder) labels(what string, numLabels int) []int32 {
	n, ok := d.count(what, 1, 1)
	if !ok {
		return nil
	}
	ls := column(d.pool, poolI32, n, false)
	for i := range ls {
		var v uint64
		if len(d.b) > 0 && d.b[0] < 0x80 {
			v = uint64(d.b[0])
			d.b = d.b[1:]
		} else {
			v = d.uvarint(what)
			if d.err != nil {
				return nil
			}
		}
		if v >= uint64(numLabels) {
			d.fail("%s: row %d has label %d of %d", what, i, v, numLabels)
			return nil
		}
		ls[i] = int32(v)
	}
	return ls
}

func (d *decoder) steps(what string) []int64 {
	n, ok := d.count(what, 1, 1)
	if !ok {
		return nil
	}
	ss := column(d.pool, poolI64, n, false)
	var prev int64
	for i := range ss {
		var z uint64
		if len(d.b) > 0 && d.b[0] < 0x80 {
			z = uint64(d.b[0])
			d.b = d.b[1:]
		} else {
			z = d.uvarint(what)
			if d.err != nil {
				return nil
			}
		}
		prev += int64(z>>1) ^ -int64(z&1)
		ss[i] = prev
	}
	return ss
}

func (d *decoder) int8s(what string) []int8 {
	n, ok := d.count(what, 1, 1)
	if !ok {
		return nil
	}
	xs := column(d.pool, poolI8, n, false)
	for i, c := range d.b[:n] {
		xs[i] = int8(c)
	}
	d.b = d.b[n:]
	return xs
}

func (d *decoder) trace(t *Trace) {
	t.Key = d.str("key")
	if n, ok := d.count("meta", 2, 1); ok {
		t.Meta = make(map[string]string, min(n, 1024))
		prev := ""
		for i := range n {
			k := d.str("meta key")
			if i > 0 && k <= prev && d.err == nil {
				d.fail("meta keys out of order: %q after %q", k, prev)
			}
			t.Meta[k] = d.str("meta value")
			prev = k
		}
	}
	t.LabelNames = d.strs("label names")
	t.Origins = d.strs("origins")
	t.Rewards = d.f64s("rewards")
	t.Labels = d.labels("labels", len(t.LabelNames))
	t.Steps = d.steps("steps")
	t.HasStep = d.bits("step flags")
	t.Invalid = d.int8s("invalid_action")
	t.EffRank = d.f64s("effective_rank")
	t.HasEffRank = d.bits("effective_rank flags")
	if n, ok := d.count("components", 2, 1); ok {
		t.Components = make(map[string][]float64, min(n, 1024))
		prev := ""
		for i := range n {
			name := d.str("component name")
			if i > 0 && name <= prev && d.err == nil {
				d.fail("component names out of order: %q after %q", name, prev)
			}
			t.Components[name] = d.f64s("component " + name)
			prev = name
		}
	}
	t.Uncarried = d.strs("uncarried components")
	for i := 1; i < len(t.Uncarried) && d.err == nil; i++ {
		if t.Uncarried[i] <= t.Uncarried[i-1] {
			d.fail("uncarried components out of order: %q after %q", t.Uncarried[i], t.Uncarried[i-1])
		}
	}
}
