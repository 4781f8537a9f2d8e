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
