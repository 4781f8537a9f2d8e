package readers

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
)

// pqMapReader reads skyfall's components map column with arrow-go's
// column chunk readers (its key and value leaves, levels and values
// straight into reused slices), not as Arrow arrays: the rows' entries are
// split by the repetition levels, null maps and null values told by the
// definition levels. It is used only for the layout it knows exactly (a
// top-level map of a required string key and a float64, int64 or signed
// int32 value, the map itself optional or required); any other layout is
// read through pqarrow, and anything unexpected while reading sends the
// object the general way.
type pqMapReader struct {
	pf         *file.Reader
	kcol, vcol int   // leaf columns
	dk         int16 // definition level of a present entry (its key)
	dv         int16 // definition level of a present value
	vkind      parquet.Type
	rg         int
	kr         *file.ByteArrayColumnChunkReader
	vr         file.ColumnChunkReader
	done       bool

	// Buffered levels and values, and the cursors into them.
	kdef, krep, vdef, vrep []int16
	keys                   []parquet.ByteArray
	f64                    []float64
	i64                    []int64
	i32                    []int32
	lvl, nl, ki, vi        int
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
	m := &pqMapReader{pf: pf, kcol: leaves[0], vcol: leaves[1], dk: k.MaxDefinitionLevel(), dv: v.MaxDefinitionLevel(), vkind: v.PhysicalType()}
	if m.dk != 1 && m.dk != 2 || m.dv != m.dk && m.dv != m.dk+1 {
		return nil
	}
	switch {
	case m.vkind == parquet.Types.Double && item.ID() == arrow.FLOAT64,
		m.vkind == parquet.Types.Int64 && item.ID() == arrow.INT64,
		m.vkind == parquet.Types.Int32 && (item.ID() == arrow.INT32 || item.ID() == arrow.INT16 || item.ID() == arrow.INT8):
	default:
		return nil
	}
	m.kdef, m.krep = make([]int16, pqMapChunk), make([]int16, pqMapChunk)
	m.vdef, m.vrep = make([]int16, pqMapChunk), make([]int16, pqMapChunk)
	m.keys = make([]parquet.ByteArray, pqMapChunk)
	switch m.vkind {
	case parquet.Types.Double:
		m.f64 = make([]float64, pqMapChunk)
	case parquet.Types.Int64:
		m.i64 = make([]int64, pqMapChunk)
	default:
		m.i32 = make([]int32, pqMapChunk)
	}
	return m
}

// fill reads the next levels; false at the end of the column.
func (m *pqMapReader) fill() (bool, error) {
	for !m.done {
		if m.kr != nil {
			nk, _, err := m.kr.ReadBatch(pqMapChunk, m.keys, m.kdef, m.krep)
			if err != nil {
				return false, errParquetIndirect
			}
			var nv int64
			switch r := m.vr.(type) {
			case *file.Float64ColumnChunkReader:
				nv, _, err = r.ReadBatch(pqMapChunk, m.f64, m.vdef, m.vrep)
			case *file.Int64ColumnChunkReader:
				nv, _, err = r.ReadBatch(pqMapChunk, m.i64, m.vdef, m.vrep)
			case *file.Int32ColumnChunkReader:
				nv, _, err = r.ReadBatch(pqMapChunk, m.i32, m.vdef, m.vrep)
			}
			if err != nil || nk != nv {
				return false, errParquetIndirect
			}
			if nk > 0 {
				for i := 0; i < int(nk); i++ {
					// The two leaves share their entries.
					if m.krep[i] != m.vrep[i] || (m.kdef[i] >= m.dk) != (m.vdef[i] >= m.dk) {
						return false, errParquetIndirect
					}
				}
				m.lvl, m.nl, m.ki, m.vi = 0, int(nk), 0, 0
				return true, nil
			}
		}
		m.close() // the row group's chunks are read
		if m.rg == m.pf.NumRowGroups() {
			m.done = true
			break
		}
		rg := m.pf.RowGroup(m.rg)
		m.rg++
		kc, err := rg.Column(m.kcol)
		if err != nil {
			return false, errParquetIndirect
		}
		vc, err := rg.Column(m.vcol)
		if err != nil {
			return false, errParquetIndirect
		}
		kr, ok := kc.(*file.ByteArrayColumnChunkReader)
		if !ok {
			return false, errParquetIndirect
		}
		m.kr, m.vr = kr, vc
	}
	return false, nil
}

// next reads the next n rows' maps into c: c.mOff (the rows' entries),
// c.mKeys, c.items and c.valid (the null maps).
func (m *pqMapReader) next(c *pqColumn, n int) error {
	c.mOff = append(c.mOff[:0], 0)
	c.mKeys = c.mKeys[:0]
	c.mKeyBytes = 0
	c.iNull = c.iNull[:0]
	it := &c.items
	it.isInt = m.vkind != parquet.Types.Double
	it.i64, it.f64 = it.s64[:0], it.sf64[:0]
	it.valid, it.voff = nil, 0
	c.valid, c.voff = nil, 0
	rows := 0
	for {
		if m.lvl == m.nl {
			ok, err := m.fill()
			if err != nil {
				return err
			}
			if !ok {
				break
			}
		}
		def, rep := m.kdef[m.lvl], m.krep[m.lvl]
		if rep != 0 && rows == 0 {
			return errParquetIndirect
		}
		if rep == 0 {
			if rows == n {
				break
			}
			if rows > 0 {
				c.mOff = append(c.mOff, int32(len(c.mKeys)))
			}
			rows++
			if def < m.dk-1 { // a null map
				if c.valid == nil {
					c.mValid = c.mValid[:0]
					for int64(len(c.mValid)) < bitutil.BytesForBits(int64(n)) {
						c.mValid = append(c.mValid, 0xff)
					}
					c.valid = c.mValid
				}
				bitutil.ClearBit(c.valid, rows-1)
			}
		}
		if def >= m.dk {
			key := m.keys[m.ki]
			m.ki++
			c.mKeys = append(c.mKeys, key)
			c.mKeyBytes += len(key)
			e := len(c.mKeys) - 1
			if m.vdef[m.lvl] == m.dv {
				switch m.vkind {
				case parquet.Types.Double:
					it.f64 = append(it.f64, m.f64[m.vi])
				case parquet.Types.Int64:
					it.i64 = append(it.i64, m.i64[m.vi])
				default:
					it.i64 = append(it.i64, int64(m.i32[m.vi]))
				}
				m.vi++
			} else {
				// A null value.
				if it.isInt {
					it.i64 = append(it.i64, 0)
				} else {
					it.f64 = append(it.f64, 0)
				}
				c.iNull = append(c.iNull, e)
			}
		}
		m.lvl++
	}
	if rows != n {
		return errParquetIndirect // not the record reader's rows
	}
	c.mOff = append(c.mOff, int32(len(c.mKeys)))
	it.s64, it.sf64 = it.i64, it.f64
	if len(c.iNull) > 0 {
		v := c.iValid[:0]
		for int64(len(v)) < bitutil.BytesForBits(int64(len(c.mKeys))) {
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
	pf     *file.Reader
	col    int
	maxDef int16
	ptype  parquet.Type
	rg     int
	r      file.ColumnChunkReader
	defs   []int16
	f64    []float64
	i64    []int64
	i32    []int32
	valid  []byte
}

// newPQFlatReader returns the reader of the top-level column of numbers
// name, of Arrow type t, or nil when it does not read that column.
func newPQFlatReader(pf *file.Reader, name string, t arrow.DataType) *pqFlatReader {
	sc := pf.MetaData().Schema
	col := -1
	for i := 0; i < sc.NumColumns(); i++ {
		if p := sc.Column(i).ColumnPath(); len(p) > 0 && p[0] == name {
			if col >= 0 || len(p) != 1 {
				return nil
			}
			col = i
		}
	}
	if col < 0 {
		return nil
	}
	c := sc.Column(col)
	if c.MaxRepetitionLevel() != 0 || c.MaxDefinitionLevel() > 1 {
		return nil
	}
	switch {
	case c.PhysicalType() == parquet.Types.Double && t.ID() == arrow.FLOAT64,
		c.PhysicalType() == parquet.Types.Int64 && t.ID() == arrow.INT64,
		c.PhysicalType() == parquet.Types.Int32 && (t.ID() == arrow.INT32 || t.ID() == arrow.INT16 || t.ID() == arrow.INT8):
	default:
		return nil
	}
	return &pqFlatReader{pf: pf, col: col, maxDef: c.MaxDefinitionLevel(), ptype: c.PhysicalType()}
}

// next reads the next n rows of the column into c (c.isInt, c.i64 or
// c.f64, c.valid).
func (f *pqFlatReader) next(c *pqColumn, n int) error {
	if cap(f.defs) < n {
		f.defs = make([]int16, n)
		switch f.ptype {
		case parquet.Types.Double:
			f.f64 = make([]float64, n)
		case parquet.Types.Int64:
			f.i64 = make([]int64, n)
		default:
			f.i32, f.i64 = make([]int32, n), make([]int64, n)
		}
	}
	total, nv := 0, 0
	for total < n {
		if f.r == nil {
			if f.rg == f.pf.NumRowGroups() {
				break
			}
			cr, err := f.pf.RowGroup(f.rg).Column(f.col)
			if err != nil {
				return errParquetIndirect
			}
			f.rg++
			f.r = cr
		}
		var lv int64
		var v int
		var err error
		switch r := f.r.(type) {
		case *file.Float64ColumnChunkReader:
			lv, v, err = r.ReadBatch(int64(n-total), f.f64[nv:n], f.defs[total:n], nil)
		case *file.Int64ColumnChunkReader:
			lv, v, err = r.ReadBatch(int64(n-total), f.i64[nv:n], f.defs[total:n], nil)
		case *file.Int32ColumnChunkReader:
			lv, v, err = r.ReadBatch(int64(n-total), f.i32[nv:n], f.defs[total:n], nil)
		default:
			return errParquetIndirect
		}
		if err != nil {
			return errParquetIndirect
		}
		if lv == 0 {
			f.close() // the row group's chunk is read
			continue
		}
		if f.maxDef == 0 {
			lv = int64(v) // no levels
		}
		total += int(lv)
		nv += v
	}
	if total != n {
		return errParquetIndirect // not the record reader's rows
	}
	if f.ptype == parquet.Types.Int32 {
		for i, x := range f.i32[:nv] {
			f.i64[i] = int64(x)
		}
	}
	c.valid, c.voff = nil, 0
	if nv < n {
		// Spread the values to their rows, from the end.
		if int64(len(f.valid)) < bitutil.BytesForBits(int64(n)) {
			f.valid = make([]byte, bitutil.BytesForBits(int64(n)))
		}
		valid := f.valid[:bitutil.BytesForBits(int64(n))]
		j := nv - 1
		for i := n - 1; i >= 0; i-- {
			if f.defs[i] == f.maxDef {
				if f.ptype == parquet.Types.Double {
					f.f64[i] = f.f64[j]
				} else {
					f.i64[i] = f.i64[j]
				}
				j--
				bitutil.SetBit(valid, i)
			} else {
				if f.ptype == parquet.Types.Double {
					f.f64[i] = 0
				} else {
					f.i64[i] = 0
				}
				bitutil.ClearBit(valid, i)
			}
		}
		c.valid = valid
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

// close closes the column chunk reader (its page reader) in use.
func (f *pqFlatReader) close() {
	if f.r != nil {
		f.r.Close()
	}
	f.r = nil
}
