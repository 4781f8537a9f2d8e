package readers

import (
	"encoding/binary"
	"fmt"
	"slices"
)

// A Thrift compact protocol value as a tree, for rewriting the
// page headers and the footer of a Parquet file: arrow-go writes no page
// checksum; pqSetCRCs gives crlbatch convert's files theirs.
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
