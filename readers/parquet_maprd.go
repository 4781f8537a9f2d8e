package readers

import (
	"math"
	"sync"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
)

// pqMapReader reads skyfall's components map column with arrow-go's
// column chunk readers (its key and value leaves, levels and values
// straight into reused slices), not as Arrow arrays: the rows' entries are
// split by the repetition levels, null maps and null values told by the
// definition levels, and each key is interned as it is read (pqColumn's
// keyID: a number, not a copy of the string). The key leaf is read a page
// at a time (ReadBatchInPage: the keys alias the page, no copy each), the
// value leaf by its own batches; the two must hold the same levels. It is
// used only for the layout it knows exactly (a top-level map of a required
// string key and a float64, int64 or signed int32 value, the map itself
// optional or required); any other layout is read through pqarrow, and
// anything unexpected while reading sends the object the general way.
type pqMapReader struct {
	pf         *file.Reader
	obj        *pqObject // pf's bytes when it is held in memory (pqColumnChunk), else nil
	kcol, vcol int       // leaf columns
	dk         int16     // definition level of a present entry (its key)
	dv         int16     // definition level of a present value
	vkind      parquet.Type
	rg         int
	kr         *file.ByteArrayColumnChunkReader
	vr         file.ColumnChunkReader
	done       bool

	// Buffered levels and values of each leaf, and the cursors into them.
	kdef, krep, vdef, vrep []int16
	keys                   []parquet.ByteArray // alias the key leaf's current page
	f64                    []float64
	i64                    []int64
	i32                    []int32
	kl, kn, ki             int // key levels: next, buffered; next key
	vl, vn, vi             int // value levels: next, buffered; next value
	vv                     int // values buffered
}

// pqMapChunk is the number of levels read at a time.
const pqMapChunk = 8 << 10

// newPQMapReader returns the reader of the top-level map column name of
// pf, whose items are of type item, or nil when its layout is not the one
// it knows.
func newPQMapReader(pf *file.Reader, name string, item arrow.DataType) *pqMapReader {
	sc := pf.MetaData().Schema
	var leaves []int
	for i := 0; i < sc.NumColumns(); i++ {
		if p := sc.Column(i).ColumnPath(); len(p) > 0 && p[0] == name {
			leaves = append(leaves, i)
		}
	}
	if len(leaves) != 2 {
		return nil
	}
	k, v := sc.Column(leaves[0]), sc.Column(leaves[1])
	if len(k.ColumnPath()) != 3 || len(v.ColumnPath()) != 3 || k.MaxRepetitionLevel() != 1 || v.MaxRepetitionLevel() != 1 ||
		k.PhysicalType() != parquet.Types.ByteArray || k.SchemaNode().RepetitionType() != parquet.Repetitions.Required {
		return nil
	}
	dk, dv, vkind := k.MaxDefinitionLevel(), v.MaxDefinitionLevel(), v.PhysicalType()
	if dk != 1 && dk != 2 || dv != dk && dv != dk+1 {
		return nil
	}
	switch {
	case vkind == parquet.Types.Double && item.ID() == arrow.FLOAT64,
		vkind == parquet.Types.Int64 && item.ID() == arrow.INT64,
		vkind == parquet.Types.Int32 && (item.ID() == arrow.INT32 || item.ID() == arrow.INT16 || item.ID() == arrow.INT8):
	default:
		return nil
	}
	m := pqGet[pqMapReader](&pqMapPool)
	m.pf, m.kcol, m.vcol, m.dk, m.dv, m.vkind = pf, leaves[0], leaves[1], dk, dv, vkind
	m.kdef, m.krep = pqGrow(m.kdef, pqMapChunk), pqGrow(m.krep, pqMapChunk)
	m.vdef, m.vrep = pqGrow(m.vdef, pqMapChunk), pqGrow(m.vrep, pqMapChunk)
	m.keys = pqGrow(m.keys, pqMapChunk)
	switch m.vkind {
	case parquet.Types.Double:
		m.f64 = pqGrow(m.f64, pqMapChunk)
	case parquet.Types.Int64:
		m.i64 = pqGrow(m.i64, pqMapChunk)
	default:
		m.i32 = pqGrow(m.i32, pqMapChunk)
	}
	return m
}

// readValues reads the value leaf's next levels in the current row group
// (none at its end).
func (m *pqMapReader) readValues() error {
	var nl int64
	var nv int
	var err error
	switch r := m.vr.(type) {
	case *file.Float64ColumnChunkReader:
		nl, nv, err = r.ReadBatch(pqMapChunk, m.f64, m.vdef, m.vrep)
	case *file.Int64ColumnChunkReader:
		nl, nv, err = r.ReadBatch(pqMapChunk, m.i64, m.vdef, m.vrep)
	case *file.Int32ColumnChunkReader:
		nl, nv, err = r.ReadBatch(pqMapChunk, m.i32, m.vdef, m.vrep)
	default:
		return errParquetIndirect
	}
	if err == nil {
		err = m.vr.Err() // ReadBatch stops at its page reader's error without returning it
	}
	if err != nil {
		return pqPageErr(err)
	}
	m.vl, m.vn, m.vi, m.vv = 0, int(nl), 0, nv
	return nil
}

// fill buffers the next key levels (and value levels when those are used
// up); false at the end of the column.
func (m *pqMapReader) fill() (bool, error) {
	for !m.done {
		if m.kr != nil {
			nk, _, err := m.kr.ReadBatchInPage(pqMapChunk, m.keys, m.kdef, m.krep)
			if err == nil {
				err = m.kr.Err()
			}
			if err != nil {
				return false, pqPageErr(err)
			}
			if nk > 0 {
				m.kl, m.kn, m.ki = 0, int(nk), 0
				return true, nil
			}
			// The key leaf's chunk is read: so must the value leaf's be.
			if m.vl < m.vn {
				return false, errParquetIndirect
			}
			if err := m.readValues(); err != nil {
				return false, err
			}
			if m.vn > 0 {
				return false, errParquetIndirect
			}
		}
		m.close() // the row group's chunks are read
		if m.rg == m.pf.NumRowGroups() {
			m.done = true
			break
		}
		rg := m.rg
		m.rg++
		kc, err := pqColumnChunk(m.pf, m.obj, rg, m.kcol)
		if err != nil {
			return false, errParquetIndirect
		}
		vc, err := pqColumnChunk(m.pf, m.obj, rg, m.vcol)
		if err != nil {
			return false, errParquetIndirect
		}
		kr, ok := kc.(*file.ByteArrayColumnChunkReader)
		if !ok {
			return false, errParquetIndirect
		}
		m.kr, m.vr = kr, vc
		m.vl, m.vn = 0, 0
	}
	return false, nil
}

// next reads the next n rows' maps into c: c.mOff (the rows' entries),
// c.mIDs, c.items and c.valid (the null maps). The levels buffered in both
// leaves are walked a span at a time (as many as both hold), the values of
// a span appended in bulk: one per entry, in order, a null value's a zero.
func (m *pqMapReader) next(c *pqColumn, n int) error {
	c.mOff = append(c.mOff[:0], 0)
	c.mIDs = c.mIDs[:0]
	c.mKeyBytes = 0
	c.iNull = c.iNull[:0]
	it := &c.items
	it.isInt = m.vkind != parquet.Types.Double
	it.i64, it.f64 = it.s64[:0], it.sf64[:0]
	it.valid, it.voff = nil, 0
	c.valid, c.voff = nil, 0
	rows, lo := 0, 0
	dk, dv := m.dk, m.dv
	for {
		if m.kl == m.kn {
			c.keysMoved() // the next keys may be of another page
			ok, err := m.fill()
			if err != nil {
				return err
			}
			if !ok {
				break
			}
		}
		if m.vl == m.vn {
			if err := m.readValues(); err != nil {
				return err
			}
			if m.vn == 0 {
				return errParquetIndirect // fewer value levels than key levels
			}
		}
		span := min(m.kn-m.kl, m.vn-m.vl)
		kdef, krep := m.kdef[m.kl:m.kl+span], m.krep[m.kl:m.kl+span]
		vdef, vrep := m.vdef[m.vl:m.vl+span], m.vrep[m.vl:m.vl+span]
		keys := m.keys[m.ki:]
		e0, n0 := len(c.mIDs), len(c.iNull) // this span's first entry and null value
		i, ki, full := 0, 0, false
		for ; i < len(kdef); i++ {
			def, rep := kdef[i], krep[i]
			// The two leaves share their entries.
			if rep != vrep[i] || (def >= dk) != (vdef[i] >= dk) {
				return errParquetIndirect
			}
			if rep == 0 {
				if rows == n {
					full = true
					break
				}
				if rows > 0 {
					c.mOff = append(c.mOff, int32(len(c.mIDs)))
				}
				lo = len(c.mIDs)
				rows++
				if def < dk-1 { // a null map
					if c.valid == nil {
						c.mValid = c.mValid[:0]
						for int64(len(c.mValid)) < bitutil.BytesForBits(int64(n)) {
							c.mValid = append(c.mValid, 0xff)
						}
						c.valid = c.mValid
					}
					bitutil.ClearBit(c.valid, rows-1)
				}
			} else if rows == 0 {
				return errParquetIndirect
			}
			if def >= dk {
				if ki == len(keys) {
					return errParquetIndirect
				}
				key := keys[ki]
				ki++
				pos := len(c.mIDs) - lo
				var id int32
				// keyID's first case, inline: the key at this position
				// before, read from the same bytes.
				if pos < len(c.kPred) && c.kPred[pos] >= 0 && len(key) > 0 && c.kPtr[pos] == unsafe.SliceData(key) && len(c.kNames[c.kPred[pos]]) == len(key) {
					id = c.kPred[pos]
				} else {
					var ok bool
					if id, ok = c.keyID(pos, key); !ok {
						return errParquetIndirect // not valid UTF-8
					}
				}
				c.mIDs = append(c.mIDs, id)
				c.mKeyBytes += len(key)
				if vdef[i] != dv {
					c.iNull = append(c.iNull, len(c.mIDs)-1) // a null value
				}
			}
		}
		m.kl += i
		m.vl += i
		m.ki += ki
		// The span's values: one per entry, nulls as zeros.
		ne, nulls := len(c.mIDs)-e0, c.iNull[n0:]
		nv := ne - len(nulls)
		if m.vi+nv > m.vv {
			return errParquetIndirect
		}
		if len(nulls) == 0 {
			switch m.vkind {
			case parquet.Types.Double:
				it.f64 = append(it.f64, m.f64[m.vi:m.vi+nv]...)
			case parquet.Types.Int64:
				it.i64 = append(it.i64, m.i64[m.vi:m.vi+nv]...)
			default:
				for _, v := range m.i32[m.vi : m.vi+nv] {
					it.i64 = append(it.i64, int64(v))
				}
			}
		} else {
			vi := m.vi
			for e := e0; e < e0+ne; e++ {
				var f float64
				var x int64
				if len(nulls) > 0 && nulls[0] == e {
					nulls = nulls[1:]
				} else {
					switch m.vkind {
					case parquet.Types.Double:
						f = m.f64[vi]
					case parquet.Types.Int64:
						x = m.i64[vi]
					default:
						x = int64(m.i32[vi])
					}
					vi++
				}
				if it.isInt {
					it.i64 = append(it.i64, x)
				} else {
					it.f64 = append(it.f64, f)
				}
			}
		}
		m.vi += nv
		if full {
			break
		}
	}
	if rows != n {
		return errParquetIndirect // not the batch's rows
	}
	c.mOff = append(c.mOff, int32(len(c.mIDs)))
	it.s64, it.sf64 = it.i64, it.f64
	if len(c.iNull) > 0 {
		v := c.iValid[:0]
		for int64(len(v)) < bitutil.BytesForBits(int64(len(c.mIDs))) {
			v = append(v, 0xff)
		}
		for _, e := range c.iNull {
			bitutil.ClearBit(v, e)
		}
		c.iValid, it.valid = v, v
	}
	return nil
}

// pqFlatReader reads a top-level column of numbers (float64, int64, or a
// signed int32 or narrower) with arrow-go's column chunk reader: values
// and definition levels into reused slices, spread to the rows with a
// validity bitmap when some are null, not as Arrow arrays.
type pqFlatReader struct {
	pqLeaf
	paged bool    // read a page at a time by parquet_pages.go
	pg    pqPaged // its state
	ptype parquet.Type
	f64   []float64
	i64   []int64
	i32   []int32
}

// newPQFlatReader returns the reader of the top-level column of numbers
// name, of Arrow type t, or nil when it does not read that column.
func newPQFlatReader(pf *file.Reader, name string, t arrow.DataType) *pqFlatReader {
	pt, ok := pqFlatType(t)
	if !ok {
		return nil
	}
	l, ok := pqLeafColumn(pf, name, pt)
	if !ok {
		return nil
	}
	f := pqGet[pqFlatReader](&pqFlatPool)
	f.pqLeaf = pqLeaf{pf: l.pf, col: l.col, maxDef: l.maxDef, defs: f.defs, valid: f.valid}
	f.ptype = pt
	f.paged = pqPagedNumbers && pqPagedEncodings(pf, l.col)
	return f
}

// pqFlatType is the physical type of the leaf of a number column of
// Arrow type t that a pqFlatReader reads; false for any other t.
func pqFlatType(t arrow.DataType) (parquet.Type, bool) {
	switch t.ID() {
	case arrow.FLOAT64:
		return parquet.Types.Double, true
	case arrow.INT64:
		return parquet.Types.Int64, true
	case arrow.INT32, arrow.INT16, arrow.INT8:
		return parquet.Types.Int32, true
	}
	return 0, false
}

// next reads the next n rows of the column into c (c.isInt, c.i64 or
// c.f64, c.valid).
func (f *pqFlatReader) next(c *pqColumn, n int) error {
	if f.paged {
		return f.nextPaged(c, n)
	}
	f.defs = pqGrow(f.defs, n)
	switch f.ptype {
	case parquet.Types.Double:
		f.f64 = pqGrow(f.f64, n)
	case parquet.Types.Int64:
		f.i64 = pqGrow(f.i64, n)
	default:
		f.i32, f.i64 = pqGrow(f.i32, n), pqGrow(f.i64, n)
	}
	nv, err := f.readRows(n, func(cr file.ColumnChunkReader, total, nv int) (int64, int, error) {
		switch r := cr.(type) {
		case *file.Float64ColumnChunkReader:
			return r.ReadBatch(int64(n-total), f.f64[nv:n], f.defs[total:n], nil)
		case *file.Int64ColumnChunkReader:
			return r.ReadBatch(int64(n-total), f.i64[nv:n], f.defs[total:n], nil)
		case *file.Int32ColumnChunkReader:
			return r.ReadBatch(int64(n-total), f.i32[nv:n], f.defs[total:n], nil)
		}
		return 0, 0, errParquetIndirect
	})
	if err != nil {
		return err
	}
	if f.ptype == parquet.Types.Int32 {
		for i, x := range f.i32[:nv] {
			f.i64[i] = int64(x)
		}
	}
	c.valid, c.voff = f.nulls(n), 0
	if f.ptype == parquet.Types.Double {
		spread(f.f64, f.defs, f.maxDef, n, nv)
	} else {
		spread(f.i64, f.defs, f.maxDef, n, nv)
	}
	c.isInt = f.ptype != parquet.Types.Double
	if c.isInt {
		c.i64, c.f64 = f.i64[:n], nil
	} else {
		c.f64, c.i64 = f.f64[:n], nil
	}
	return nil
}

// close closes the column chunk readers (their page readers) in use.
func (m *pqMapReader) close() {
	if m.kr != nil {
		m.kr.Close()
	}
	if m.vr != nil {
		m.vr.Close()
	}
	m.kr, m.vr = nil, nil
}

// pqLeaf is a top-level column without repetition (at most one definition
// level) read by its column chunk reader, row group after row group.
type pqLeaf struct {
	pf     *file.Reader
	obj    *pqObject // pf's bytes when it is held in memory (pqColumnPages), else nil
	col    int
	maxDef int16
	rg     int
	r      file.ColumnChunkReader
	defs   []int16
	valid  []byte
}

// pqLeafColumn returns the leaf of the top-level column name of pf, of
// physical type pt, or false when the column is not such a leaf.
func pqLeafColumn(pf *file.Reader, name string, pt parquet.Type) (pqLeaf, bool) {
	sc := pf.MetaData().Schema
	col := -1
	for i := 0; i < sc.NumColumns(); i++ {
		if p := sc.Column(i).ColumnPath(); len(p) > 0 && p[0] == name {
			if col >= 0 || len(p) != 1 {
				return pqLeaf{}, false
			}
			col = i
		}
	}
	if col < 0 {
		return pqLeaf{}, false
	}
	c := sc.Column(col)
	if c.MaxRepetitionLevel() != 0 || c.MaxDefinitionLevel() > 1 || c.PhysicalType() != pt {
		return pqLeaf{}, false
	}
	return pqLeaf{pf: pf, col: col, maxDef: c.MaxDefinitionLevel()}, true
}

// reader returns the column chunk reader of the row group being read,
// opening the next one when the last is done; nil after the last.
func (l *pqLeaf) reader() (file.ColumnChunkReader, error) {
	if l.r == nil {
		if l.rg == l.pf.NumRowGroups() {
			return nil, nil
		}
		cr, err := pqColumnChunk(l.pf, l.obj, l.rg, l.col)
		if err != nil {
			return nil, errParquetIndirect
		}
		l.rg++
		l.r = cr
	}
	return l.r, nil
}

// read reads the next levels and values of the column with rd, a call of
// the typed column chunk reader's ReadBatch or ReadBatchInPage, opening the
// next row group's when the last is read: the rows (levels) and values
// read, 0 at the end of the column.
func (l *pqLeaf) read(rd func(file.ColumnChunkReader) (int64, int, error)) (int, int, error) {
	for {
		cr, err := l.reader()
		if err != nil || cr == nil {
			return 0, 0, err
		}
		lv, nv, err := rd(cr)
		if err == nil {
			err = cr.Err() // ReadBatch stops at its page reader's error without returning it
		}
		if err != nil {
			return 0, 0, pqPageErr(err)
		}
		if lv == 0 && nv == 0 {
			l.close() // the row group's chunk is read
			continue
		}
		if l.maxDef == 0 {
			lv = int64(nv) // no levels
		}
		return int(lv), nv, nil
	}
}

// readRows reads the next n rows with rd (called with the rows and values
// read so far): the number of values (the rows' non-null cells).
func (l *pqLeaf) readRows(n int, rd func(cr file.ColumnChunkReader, total, nv int) (int64, int, error)) (int, error) {
	total, nv := 0, 0
	for total < n {
		lv, v, err := l.read(func(cr file.ColumnChunkReader) (int64, int, error) { return rd(cr, total, nv) })
		if err != nil {
			return 0, err
		}
		if lv == 0 {
			break
		}
		total += lv
		nv += v
	}
	if total != n {
		return 0, errParquetIndirect // not the batch's rows
	}
	return nv, nil
}

// spread moves the nv values at the start of vals to their rows among n,
// those whose definition level is maxDef, from the end; the other rows get
// the zero value.
func spread[T any](vals []T, defs []int16, maxDef int16, n, nv int) {
	if nv == n {
		return
	}
	var zero T
	j := nv - 1
	for i := n - 1; i >= 0; i-- {
		if defs[i] == maxDef {
			vals[i] = vals[j]
			j--
		} else {
			vals[i] = zero
		}
	}
}

// close closes the column chunk reader (its page reader) in use.
func (l *pqLeaf) close() {
	if l.r != nil {
		l.r.Close()
	}
	l.r = nil
}

// levels makes room for n rows' definition levels.
func (l *pqLeaf) levels(n int) {
	if cap(l.defs) < n {
		l.defs = make([]int16, n)
	}
	l.defs = l.defs[:n]
}

// nulls returns the validity bitmap of the n rows whose definition levels
// are in l.defs, or nil when none is null.
func (l *pqLeaf) nulls(n int) []byte {
	if l.maxDef == 0 {
		return nil
	}
	return levelBits(&l.valid, l.defs[:n], l.maxDef)
}

// levelBits returns the validity bitmap, in *buf, of the rows whose
// definition levels are defs: valid where a level is at least level (a
// leaf's maximum: its value is there; a struct's own: the struct is), nil
// when every row is.
func levelBits(buf *[]byte, defs []int16, level int16) []byte {
	null := false
	for _, d := range defs {
		if d < level {
			null = true
			break
		}
	}
	if !null {
		return nil
	}
	nb := int(bitutil.BytesForBits(int64(len(defs))))
	if cap(*buf) < nb {
		*buf = make([]byte, nb)
	}
	valid := (*buf)[:nb]
	for i, d := range defs {
		bitutil.SetBitTo(valid, i, d >= level)
	}
	return valid
}

// pqStrReader reads a top-level string column (of row fields, extras or
// JSON text) with the column chunk reader, a page at a time
// (ReadBatchInPage: the values alias the page, dictionary-decoded or
// not), into a batch's own dictionary: a row's value is stored only when
// it differs from the row before's, and each row holds the index of its
// value (pqColumn's dict, off32 and data), so that rows of one run compare
// by index, and nothing of the batch points into the Parquet pages. A null
// row has the index of an empty value (entry 0).
type pqStrReader struct {
	pqLeaf
	paged bool    // read a page at a time by parquet_pages.go
	pg    pqPaged // its state
	vals  []parquet.ByteArray
	idx   []int32
	off   []int32
	data  []byte
}

// newPQStrReader returns the reader of the top-level string column name
// of pf, or nil when it does not read that column. A JSON-text column's
// (jsonText) may be of any text type: Parquet's JSON logical type reads
// as binary (or arrow.json over it), its leaf a byte array all the same.
func newPQStrReader(pf *file.Reader, name string, t arrow.DataType, jsonText bool) *pqStrReader {
	str := func(t arrow.DataType) bool { return t.ID() == arrow.STRING || t.ID() == arrow.LARGE_STRING }
	if d, ok := t.(*arrow.DictionaryType); !str(t) && !(ok && str(d.ValueType)) && !(jsonText && isTextType(t)) {
		return nil
	}
	l, ok := pqLeafColumn(pf, name, parquet.Types.ByteArray)
	if !ok {
		return nil
	}
	s := pqGet[pqStrReader](&pqStrPool)
	s.pqLeaf = pqLeaf{pf: l.pf, col: l.col, maxDef: l.maxDef, defs: s.defs, valid: s.valid}
	s.paged = pqPagedStrings && pqPagedEncodings(pf, l.col)
	return s
}

// next reads the next n rows of the column into c (c.dict, c.off32,
// c.data, c.text, c.valid).
func (s *pqStrReader) next(c *pqColumn, n int) error {
	if s.paged {
		return s.nextPaged(c, n)
	}
	s.levels(n)
	s.vals = pqGrow(s.vals, n)
	s.idx, s.off, s.data = s.idx[:0], append(s.off[:0], 0, 0), s.data[:0]
	var text int64
	total := 0
	for total < n {
		lv, nv, err := s.read(func(cr file.ColumnChunkReader) (int64, int, error) {
			if r, ok := cr.(*file.ByteArrayColumnChunkReader); ok {
				return r.ReadBatchInPage(int64(n-total), s.vals[:n-total], s.defs[total:n], nil)
			}
			return 0, 0, errParquetIndirect
		})
		if err != nil {
			return err
		}
		if lv == 0 {
			break
		}
		j := 0
		var prev parquet.ByteArray // the last value read from this page, the batch's last entry
		for i := total; i < total+lv; i++ {
			if s.maxDef > 0 && s.defs[i] != s.maxDef {
				s.idx = append(s.idx, 0)
				continue
			}
			v := s.vals[j]
			j++
			text += int64(len(v))
			last := len(s.off) - 2
			// A dictionary page's rows of one value alias one entry: equal
			// without comparing their bytes.
			if prev == nil || len(v) != len(prev) || unsafe.SliceData(v) != unsafe.SliceData(prev) {
				if string(v) != string(s.data[s.off[last]:s.off[last+1]]) {
					s.data = append(s.data, v...)
					s.off = append(s.off, int32(len(s.data)))
					last++
				}
				prev = v
			}
			s.idx = append(s.idx, int32(last))
		}
		if j != nv {
			return errParquetIndirect
		}
		total += lv
	}
	if total != n || len(s.data) > math.MaxInt32 {
		return errParquetIndirect // not the batch's rows
	}
	c.valid, c.voff = s.nulls(n), 0
	c.dict, c.off32, c.off64, c.data, c.textBytes = s.idx, s.off, nil, s.data, text
	return nil
}

// pqBoolReader reads a top-level boolean column into c.bs, a page at a
// time (parquet_pages.go) or, for a column chunk listing other encodings,
// with the column chunk reader, spread to the rows by the definition
// levels.
type pqBoolReader struct {
	pqLeaf
	paged bool    // read a page at a time by parquet_pages.go
	pg    pqPaged // its state
	vals  []bool
}

// newPQBoolReader returns the reader of the top-level boolean column name
// of pf, or nil when it does not read that column.
func newPQBoolReader(pf *file.Reader, name string) *pqBoolReader {
	l, ok := pqLeafColumn(pf, name, parquet.Types.Boolean)
	if !ok {
		return nil
	}
	b := pqGet[pqBoolReader](&pqBoolPool)
	b.pqLeaf = pqLeaf{pf: l.pf, col: l.col, maxDef: l.maxDef, defs: b.defs, valid: b.valid}
	b.paged = pqPagedBools && pqPagedEncodings(pf, l.col)
	b.pg.bools = true
	return b
}

// next reads the next n rows of the column into c (c.bs, c.valid).
func (b *pqBoolReader) next(c *pqColumn, n int) error {
	if b.paged {
		return b.nextPaged(c, n)
	}
	b.levels(n)
	b.vals = pqGrow(b.vals, n)
	nv, err := b.readRows(n, func(cr file.ColumnChunkReader, total, nv int) (int64, int, error) {
		if r, ok := cr.(*file.BooleanColumnChunkReader); ok {
			return r.ReadBatch(int64(n-total), b.vals[nv:n], b.defs[total:n], nil)
		}
		return 0, 0, errParquetIndirect
	})
	if err != nil {
		return err
	}
	c.valid, c.voff = b.nulls(n), 0
	spread(b.vals, b.defs, b.maxDef, n, nv)
	c.bs = b.vals
	return nil
}

// The column chunk readers are pooled with their buffers (levels, values,
// a batch's strings), which every object would otherwise allocate anew:
// release puts one back once its object is read (nothing of the object
// keeps them: parts copy what they keep).
var pqFlatPool, pqStrPool, pqBoolPool, pqMapPool sync.Pool

func pqGet[T any](p *sync.Pool) *T {
	if v, ok := p.Get().(*T); ok {
		return v
	}
	return new(T)
}

// pqGrow returns s with length n, its backing array reused when it holds n.
func pqGrow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

func (f *pqFlatReader) release() {
	f.close()
	f.pg.close()
	pg := pqPaged{dNum: f.pg.dNum, nulls: f.pg.nulls}
	*f = pqFlatReader{pqLeaf: pqLeaf{defs: f.defs, valid: f.valid}, pg: pg, f64: f.f64, i64: f.i64, i32: f.i32}
	pqFlatPool.Put(f)
}

func (s *pqStrReader) release() {
	s.close()
	s.pg.close()
	clear(s.vals) // no page stays reachable
	g := &s.pg
	pg := pqPaged{dOff: g.dOff, dData: g.dData, slot: g.slot, used: g.used, nulls: g.nulls}
	*s = pqStrReader{pqLeaf: pqLeaf{defs: s.defs, valid: s.valid}, pg: pg, vals: s.vals, idx: s.idx, off: s.off, data: s.data}
	pqStrPool.Put(s)
}

func (b *pqBoolReader) release() {
	b.close()
	b.pg.close()
	*b = pqBoolReader{pqLeaf: pqLeaf{defs: b.defs, valid: b.valid}, pg: pqPaged{nulls: b.pg.nulls}, vals: b.vals}
	pqBoolPool.Put(b)
}

func (m *pqMapReader) release() {
	m.close()
	clear(m.keys) // no page stays reachable
	*m = pqMapReader{kdef: m.kdef, krep: m.krep, vdef: m.vdef, vrep: m.vrep, keys: m.keys, f64: m.f64, i64: m.i64, i32: m.i32}
	pqMapPool.Put(m)
}

// pqStructReader reads skyfall's components as a struct of number columns
// (what DuckDB writes for a components object of fixed keys) by its
// members' column chunk readers, one flat reader a member (their leaves'
// two definition levels: the struct's, then the member's), instead of
// pqArrow's record batches.
type pqStructReader struct {
	members []*pqFlatReader // in the struct's member order
	sdef    int16           // the definition level at which the struct is present (0: required)
	valid   []byte
}

// newPQStructReader returns the reader of the top-level struct column
// name of pf, of Arrow type st, or nil when it does not read that column:
// a leaf of each member of st's and of no other, each a number leaf of
// at most two definition levels and no repetition, read a value at a
// time (not parquet_pages.go's way, made for one definition level).
func newPQStructReader(pf *file.Reader, name string, st *arrow.StructType) *pqStructReader {
	sc := pf.MetaData().Schema
	leaves := 0
	for i := 0; i < sc.NumColumns(); i++ {
		if p := sc.Column(i).ColumnPath(); len(p) > 0 && p[0] == name {
			leaves++
		}
	}
	root := sc.Root()
	idx := root.FieldIndexByName(name)
	if leaves != st.NumFields() || idx < 0 {
		return nil
	}
	s := &pqStructReader{}
	if root.Field(idx).RepetitionType() == parquet.Repetitions.Optional {
		s.sdef = 1
	}
	for _, m := range st.Fields() {
		pt, ok := pqFlatType(m.Type)
		if !ok {
			s.release()
			return nil
		}
		col := -1
		for i := 0; i < sc.NumColumns(); i++ {
			if p := sc.Column(i).ColumnPath(); len(p) == 2 && p[0] == name && p[1] == m.Name {
				col = i
			}
		}
		if col < 0 {
			s.release()
			return nil
		}
		c := sc.Column(col)
		if c.MaxRepetitionLevel() != 0 || c.MaxDefinitionLevel() > s.sdef+1 || c.MaxDefinitionLevel() < s.sdef || c.PhysicalType() != pt {
			s.release()
			return nil
		}
		f := pqGet[pqFlatReader](&pqFlatPool)
		f.pqLeaf = pqLeaf{pf: pf, col: col, maxDef: c.MaxDefinitionLevel(), defs: f.defs, valid: f.valid}
		f.ptype = pt
		s.members = append(s.members, f)
	}
	return s
}

// next reads the next n rows of the column into c (c.fields, one a
// member, and c.valid, the struct's). Members that disagree on where the
// struct is null (a damaged file) send the object the general way.
func (s *pqStructReader) next(c *pqColumn, n int) error {
	if len(c.fields) != len(s.members) {
		c.fields = make([]pqNums, len(s.members))
	}
	var m pqColumn
	for k, f := range s.members {
		if err := f.next(&m, n); err != nil {
			return err
		}
		fn := &c.fields[k]
		fn.valid, fn.voff, fn.isInt, fn.i64, fn.f64 = m.valid, 0, m.isInt, m.i64, m.f64
		if k > 0 {
			first := s.members[0].defs
			for i, d := range f.defs[:n] {
				if (d >= s.sdef) != (first[i] >= s.sdef) {
					return errParquetIndirect
				}
			}
		}
	}
	c.valid, c.voff = nil, 0
	if s.sdef > 0 {
		c.valid = levelBits(&s.valid, s.members[0].defs[:n], s.sdef)
	}
	return nil
}

// setObject gives every member the file's bytes (pqColumnPages).
func (s *pqStructReader) setObject(obj *pqObject) {
	for _, f := range s.members {
		f.obj = obj
	}
}

func (s *pqStructReader) release() {
	for _, f := range s.members {
		f.release()
	}
	s.members = nil
}
