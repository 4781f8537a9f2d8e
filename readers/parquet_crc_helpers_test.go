package readers

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"slices"
	"testing"
)

// A Thrift compact protocol value as a tree, for tests that rewrite the
// page headers and the footer of a Parquet file (arrow-go writes no page
// checksum, so the files with one are made here).
type tcField struct {
	id  int16
	typ byte // a bool's field type is tcTrue or tcFalse, its value nil
	val any  // int64 (byte, i16, i32, i64), []byte (binary, a double's 8 bytes), *tcListV, *tcMapV, []tcField (struct)
}

type tcListV struct {
	typ   byte // tcList or tcSet
	et    byte
	elems []any // a bool element: its byte as int64
}

type tcMapV struct {
	kt, vt     byte
	keys, vals []any
}

// tcDecodeStruct reads a struct from the start of b: its fields and its
// length in bytes; false when it is not well formed.
func tcDecodeStruct(b []byte) ([]tcField, int, bool) {
	r := tcReader{b: b}
	fs := tcReadStruct(&r, pqHeaderDepth)
	return fs, r.off, !r.bad
}

func tcReadStruct(r *tcReader, depth int) []tcField {
	var fs []tcField
	var id int16
	for !r.bad {
		var t byte
		if t, id = r.field(id); r.bad || t == tcStop {
			break
		}
		f := tcField{id: id, typ: t}
		if t != tcTrue && t != tcFalse {
			f.val = tcReadValue(r, t, depth-1)
		}
		fs = append(fs, f)
	}
	return fs
}

func tcReadValue(r *tcReader, t byte, depth int) any {
	if depth == 0 {
		r.bad = true
		return nil
	}
	switch t {
	case tcByte:
		return int64(r.byte())
	case tcI16, tcI32, tcI64:
		u := r.uvarint(10)
		return int64(u>>1) ^ -int64(u&1)
	case tcDouble:
		s := r.off
		r.bytes(8)
		return r.b[s:r.off]
	case tcBinary:
		n := int(r.uvarint(5))
		s := r.off
		r.bytes(n)
		return r.b[s:r.off]
	case tcList, tcSet:
		c := r.byte()
		l := &tcListV{typ: t, et: c & 0x0f}
		n := int(c >> 4)
		if n == 15 {
			n = int(r.uvarint(5))
		}
		for i := 0; i < n && !r.bad; i++ {
			if l.et == tcTrue || l.et == tcFalse {
				l.elems = append(l.elems, int64(r.byte()))
				continue
			}
			l.elems = append(l.elems, tcReadValue(r, l.et, depth-1))
		}
		return l
	case tcMap:
		m := &tcMapV{}
		n := int(r.uvarint(5))
		if n == 0 {
			return m
		}
		c := r.byte()
		m.kt, m.vt = c>>4, c&0x0f
		for i := 0; i < n && !r.bad; i++ {
			m.keys = append(m.keys, tcReadValue(r, m.kt, depth-1))
			m.vals = append(m.vals, tcReadValue(r, m.vt, depth-1))
		}
		return m
	case tcStruct:
		return tcReadStruct(r, depth)
	}
	r.bad = true
	return nil
}

// tcAppendStruct appends the fields of a struct, in their order, and its
// stop byte.
func tcAppendStruct(b []byte, fs []tcField) []byte {
	var last int16
	for _, f := range fs {
		if d := f.id - last; d > 0 && d <= 15 {
			b = append(b, byte(d)<<4|f.typ)
		} else {
			b = append(b, f.typ)
			b = binary.AppendUvarint(b, uint64(uint16(f.id<<1^f.id>>15)))
		}
		last = f.id
		if f.typ != tcTrue && f.typ != tcFalse {
			b = tcAppendValue(b, f.typ, f.val)
		}
	}
	return append(b, tcStop)
}

func tcAppendValue(b []byte, t byte, v any) []byte {
	switch t {
	case tcByte:
		return append(b, byte(v.(int64)))
	case tcI16, tcI32, tcI64:
		x := v.(int64)
		return binary.AppendUvarint(b, uint64(x<<1^x>>63))
	case tcDouble:
		return append(b, v.([]byte)...)
	case tcBinary:
		s := v.([]byte)
		b = binary.AppendUvarint(b, uint64(len(s)))
		return append(b, s...)
	case tcList, tcSet:
		l := v.(*tcListV)
		if n := len(l.elems); n < 15 {
			b = append(b, byte(n)<<4|l.et)
		} else {
			b = append(b, 0xf0|l.et)
			b = binary.AppendUvarint(b, uint64(n))
		}
		for _, e := range l.elems {
			if l.et == tcTrue || l.et == tcFalse {
				b = append(b, byte(e.(int64)))
				continue
			}
			b = tcAppendValue(b, l.et, e)
		}
		return b
	case tcMap:
		m := v.(*tcMapV)
		b = binary.AppendUvarint(b, uint64(len(m.keys)))
		if len(m.keys) == 0 {
			return b
		}
		b = append(b, m.kt<<4|m.vt)
		for i := range m.keys {
			b = tcAppendValue(b, m.kt, m.keys[i])
			b = tcAppendValue(b, m.vt, m.vals[i])
		}
		return b
	case tcStruct:
		return tcAppendStruct(b, v.([]tcField))
	}
	panic(fmt.Sprintf("tcAppendValue: type %d", t))
}

// tcGet returns the field id of fs, or nil.
func tcGet(fs []tcField, id int16) *tcField {
	for i := range fs {
		if fs[i].id == id {
			return &fs[i]
		}
	}
	return nil
}

// tcPut sets field id of fs to an integer of type t, in id order.
func tcPut(fs []tcField, id int16, t byte, v int64) []tcField {
	if f := tcGet(fs, id); f != nil {
		f.typ, f.val = t, v
		return fs
	}
	fs = append(fs, tcField{id: id, typ: t, val: v})
	slices.SortStableFunc(fs, func(a, b tcField) int { return int(a.id) - int(b.id) })
	return fs
}

// tcDel removes field id of fs.
func tcDel(fs []tcField, id int16) []tcField {
	return slices.DeleteFunc(fs, func(f tcField) bool { return f.id == id })
}

// pqCRCPage says what crc a page header gets: sum, the CRC-32 of the
// page's bytes, unless the test changes it (ok false: no crc field).
type pqCRCPage func(rg, col, page int, sum uint32) (crc uint32, ok bool)

// pqAllCRCs gives every page its right crc.
func pqAllCRCs(_, _, _ int, sum uint32) (uint32, bool) { return sum, true }

// pqWithCRCs returns the Parquet file data with the crc field of each page
// header (PageHeader's field 4: the CRC-32, IEEE, of the page's bytes as
// stored after the header) set as crc says, pages counted from 0 in each
// column chunk (the dictionary page first), and the footer's offsets and
// sizes moved to where the longer headers put the pages. A file with a
// page index or a bloom filter (offsets this does not move) fails the
// test.
func pqWithCRCs(t testing.TB, data []byte, crc pqCRCPage) []byte {
	t.Helper()
	flen := int(binary.LittleEndian.Uint32(data[len(data)-8:]))
	fstart := len(data) - 8 - flen
	footer, n, ok := tcDecodeStruct(data[fstart : len(data)-8])
	if !ok || n != flen {
		t.Fatalf("footer of %d bytes: read %d, %v", flen, n, ok)
	}
	type chunk struct {
		rg, col    int
		meta       []tcField // ColumnMetaData
		start, end int64
	}
	var chunks []chunk
	rgs := tcGet(footer, 4).val.(*tcListV)
	for g, rgv := range rgs.elems {
		cols := tcGet(rgv.([]tcField), 1).val.(*tcListV)
		for c, ccv := range cols.elems {
			cc := ccv.([]tcField)
			if tcGet(cc, 4) != nil || tcGet(cc, 6) != nil {
				t.Fatalf("row group %d, column %d: a page index", g, c)
			}
			meta := tcGet(cc, 3).val.([]tcField)
			if tcGet(meta, 14) != nil {
				t.Fatalf("row group %d, column %d: a bloom filter", g, c)
			}
			start := tcGet(meta, 9).val.(int64)
			if d := tcGet(meta, 11); d != nil && d.val.(int64) > 0 && d.val.(int64) < start {
				start = d.val.(int64)
			}
			chunks = append(chunks, chunk{rg: g, col: c, meta: meta, start: start, end: start + tcGet(meta, 7).val.(int64)})
		}
	}
	sorted := slices.Clone(chunks)
	slices.SortFunc(sorted, func(a, b chunk) int { return int(a.start - b.start) })
	moved := map[int64]int64{} // an old page or chunk start (or chunk end): the new one
	grown := map[[2]int]int64{}
	out := make([]byte, 0, len(data)+len(data)/16)
	pos := int64(0)
	for _, ch := range sorted {
		out = append(out, data[pos:ch.start]...)
		page := 0
		for off := ch.start; off < ch.end; page++ {
			h, hl, ok := tcDecodeStruct(data[off:ch.end])
			if !ok {
				t.Fatalf("row group %d, column %d: page header at %d", ch.rg, ch.col, off)
			}
			cs := tcGet(h, 3).val.(int64)
			body := data[off+int64(hl) : off+int64(hl)+cs]
			if v, ok := crc(ch.rg, ch.col, page, crc32.ChecksumIEEE(body)); ok {
				h = tcPut(h, 4, tcI32, int64(int32(v)))
			} else {
				h = tcDel(h, 4)
			}
			moved[off] = int64(len(out))
			nh := tcAppendStruct(nil, h)
			grown[[2]int{ch.rg, ch.col}] += int64(len(nh) - hl)
			out = append(out, nh...)
			out = append(out, body...)
			off += int64(hl) + cs
		}
		moved[ch.end] = int64(len(out))
		pos = ch.end
	}
	out = append(out, data[pos:fstart]...)
	move := func(fs []tcField, id int16) {
		if f := tcGet(fs, id); f != nil && f.val.(int64) > 0 {
			v, ok := moved[f.val.(int64)]
			if !ok {
				t.Fatalf("field %d: offset %d is no page's", id, f.val.(int64))
			}
			f.val = v
		}
	}
	for g, rgv := range rgs.elems {
		rg := rgv.([]tcField)
		var rgGrown int64
		cols := tcGet(rg, 1).val.(*tcListV)
		for c, ccv := range cols.elems {
			cc := ccv.([]tcField)
			meta := tcGet(cc, 3).val.([]tcField)
			d := grown[[2]int{g, c}]
			rgGrown += d
			move(meta, 9)
			move(meta, 10)
			move(meta, 11)
			tcGet(meta, 7).val = tcGet(meta, 7).val.(int64) + d
			tcGet(meta, 6).val = tcGet(meta, 6).val.(int64) + d
			move(cc, 2)
		}
		move(rg, 5)
		if f := tcGet(rg, 6); f != nil {
			f.val = f.val.(int64) + rgGrown
		}
		tcGet(rg, 2).val = tcGet(rg, 2).val.(int64) + rgGrown
	}
	nf := tcAppendStruct(nil, footer)
	out = append(out, nf...)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(nf)))
	return append(out, ParquetMagic...)
}
