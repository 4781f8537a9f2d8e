package readers

import (
	"encoding/binary"
	"math"
	"math/bits"

	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
)

// The page-level reading of a top-level string, number or boolean column
// (pqStrReader's, pqFlatReader's and pqBoolReader's paged mode): arrow-go's page reader
// still reads, checks and decompresses each page, but the levels, the
// dictionary indices and the plain values are decoded here, run by run,
// instead of by the column chunk reader, which expands every row's
// definition level into an int16 and every row of a dictionary page into a
// []byte of its own (a string) or a value (a number). A run of definition
// levels (an RLE run of a page without nulls: its every row) costs one
// step, and a run of one dictionary index (an identity, a regime label
// held for many rows, a constant) one step and one store a row; each
// string dictionary entry a batch uses is copied into the batch once,
// plain numbers straight from the page to the batch's values, booleans
// from their bits (arrow-go's column chunk reader spread them to a []bool
// at ~6 ns a value) or, on an RLE page, a run at a time. The levels
// and indices are the truth, not the column chunk's statistics: a null is
// found in its level even where statistics are absent or say otherwise. A
// column chunk whose metadata lists an encoding other than PLAIN,
// PLAIN_DICTIONARY, RLE_DICTIONARY and RLE (levels, a boolean's values) is read by the column
// chunk reader as before; anything unexpected in a page (a level above the
// maximum, an index past the dictionary, a truncated value, a second
// dictionary) sends the object the general way, which names the error.

// pqRLE decodes the RLE / bit-packed hybrid encoding of Parquet's levels
// and dictionary indices a run at a time.
type pqRLE struct {
	data  []byte
	width uint     // bits a value (0 to 32)
	rep   int      // values left in the current repeated run
	val   uint32   // the repeated run's value
	pk    int      // values left in the current bit-packed run
	unp   []uint32 // the bit-packed run's values, unpacked
	pkPos int      // the next value's position in it
}

func (r *pqRLE) init(data []byte, width int) {
	*r = pqRLE{data: data, width: uint(width), unp: r.unp}
}

// fill moves to the next run; false at the end of the data or on a run
// that is not well formed.
func (r *pqRLE) fill() bool {
	for len(r.data) > 0 {
		h, n := binary.Uvarint(r.data)
		if n <= 0 || h>>1 > math.MaxInt32 {
			return false
		}
		r.data = r.data[n:]
		cnt := int(h >> 1)
		if h&1 == 0 {
			nb := int(r.width+7) / 8
			if len(r.data) < nb {
				return false
			}
			var v uint32
			for i := 0; i < nb; i++ {
				v |= uint32(r.data[i]) << (8 * i)
			}
			r.data = r.data[nb:]
			if r.width < 32 && v>>r.width != 0 {
				return false
			}
			if cnt == 0 {
				continue
			}
			r.rep, r.val = cnt, v
			return true
		}
		// cnt groups of 8 values: cnt*width bytes, the last run possibly cut
		// short at the end of the data (its padding values are never read).
		nb := cnt * int(r.width)
		if nb > len(r.data) {
			nb = len(r.data)
		}
		vals := cnt * 8
		if r.width > 0 {
			vals = min(vals, nb*8/int(r.width))
		}
		if vals == 0 {
			continue
		}
		if r.width == 0 { // zeros, as a repeated run (nothing to unpack)
			r.rep, r.val = vals, 0
			return true
		}
		r.unpack(r.data[:nb], vals)
		r.data = r.data[nb:]
		r.pk, r.pkPos = vals, 0
		return true
	}
	return false
}

// unpack spreads the n values of width bits packed in b (least significant
// bit first) into r.unp.
func (r *pqRLE) unpack(b []byte, n int) {
	r.unp = pqGrow(r.unp, n)
	mask := uint64(1)<<r.width - 1
	for j := range n {
		bit := uint(j) * r.width
		i, shift := int(bit>>3), bit&7
		var w uint64
		if i+8 <= len(b) {
			w = binary.LittleEndian.Uint64(b[i:])
		} else {
			for k := 0; i+k < len(b); k++ {
				w |= uint64(b[i+k]) << (8 * k)
			}
		}
		r.unp[j] = uint32(w >> shift & mask)
	}
}

// run returns the next values, at most max (above 0), that share one: all
// of a repeated run's up to max, or one of a bit-packed run's; false past
// the end or on a bad run.
func (r *pqRLE) run(max int) (int, uint32, bool) {
	if r.rep == 0 && r.pk == 0 && !r.fill() {
		return 0, 0, false
	}
	if r.rep > 0 {
		k := min(r.rep, max)
		r.rep -= k
		return k, r.val, true
	}
	return 1, r.get(), true
}

// get returns the next value of the current bit-packed run (r.pk > 0).
func (r *pqRLE) get() uint32 {
	v := r.unp[r.pkPos]
	r.pkPos++
	r.pk--
	return v
}

// pqPagedEncodings reports whether every column chunk of leaf col of pf
// lists only the encodings the paged mode decodes.
func pqPagedEncodings(pf *file.Reader, col int) bool {
	md := pf.MetaData()
	for g := 0; g < md.NumRowGroups(); g++ {
		cc, err := md.RowGroup(g).ColumnChunk(col)
		if err != nil {
			return false
		}
		for _, e := range cc.Encodings() {
			switch e {
			case parquet.Encodings.Plain, parquet.Encodings.PlainDict, parquet.Encodings.RLEDict, parquet.Encodings.RLE:
			default:
				return false
			}
		}
	}
	return true
}

// pqPaged is the page-level state of a column reader in paged mode.
type pqPaged struct {
	pr     file.PageReader // the row group's column chunk, nil between chunks
	left   int             // levels left in the current data page
	defs   pqRLE           // its definition levels (maxDef > 0)
	dict   bool            // its values are dictionary indices
	idx    pqRLE           // those indices
	plain  []byte          // else its plain values not yet read
	dOff   []int32         // the chunk's dictionary: entry k is dData[dOff[k]:dOff[k+1]]
	dData  []byte          //
	hasDct bool            // the chunk's dictionary page is read
	slot   []int32         // by dictionary entry: its entry in the batch, or -1
	used   []int32         // the dictionary entries with a slot
	nulls  []int32         // the batch's null rows
	dNum   []uint64        // a number column chunk's dictionary: the bits of each value
	bools  bool            // a boolean column: its values may be RLE-encoded
	rle    bool            // its page's values are RLE runs of width 1 (in idx)
	bit    int             // else the next value's bit in plain[0]
}

// nextPage moves to the next data page of the column, opening the next
// row group's column chunk when one is read: false at the end of the
// column.
func (s *pqLeaf) nextPage(g *pqPaged, readDict func(data []byte, n int) error) (bool, error) {
	for {
		if g.pr == nil {
			if s.rg == s.pf.NumRowGroups() {
				return false, nil
			}
			pr, err := pqColumnPages(s.pf, s.obj, s.rg, s.col)
			if err != nil {
				return false, errParquetIndirect
			}
			s.rg++
			g.pr, g.hasDct = pr, false
		}
		if !g.pr.Next() {
			err := g.pr.Err()
			g.close()
			if err != nil {
				return false, pqPageErr(err)
			}
			continue
		}
		var data []byte
		switch p := g.pr.Page().(type) {
		case *file.DictionaryPage:
			if g.hasDct {
				return false, errParquetIndirect // one dictionary a chunk
			}
			if e := parquet.Encoding(p.Encoding()); e != parquet.Encodings.Plain && e != parquet.Encodings.PlainDict {
				return false, errParquetIndirect
			}
			if err := readDict(p.Data(), int(p.NumValues())); err != nil {
				return false, err
			}
			g.hasDct = true
			continue
		case *file.DataPageV1:
			data = p.Data()
			if s.maxDef > 0 {
				if p.DefinitionLevelEncoding() != parquet.Encodings.RLE || len(data) < 4 {
					return false, errParquetIndirect
				}
				l := int(binary.LittleEndian.Uint32(data))
				if l < 0 || l > len(data)-4 {
					return false, errParquetIndirect
				}
				g.defs.init(data[4:4+l], bits.Len(uint(s.maxDef)))
				data = data[4+l:]
			}
		case *file.DataPageV2:
			data = p.Data()
			rl, dl := int(p.RepetitionLevelByteLen()), int(p.DefinitionLevelByteLen())
			if rl != 0 || dl < 0 || dl > len(data) || s.maxDef == 0 && dl != 0 {
				return false, errParquetIndirect
			}
			g.defs.init(data[:dl], bits.Len(uint(s.maxDef)))
			data = data[dl:]
		default:
			continue
		}
		p := g.pr.Page()
		g.rle, g.bit = false, 0
		switch parquet.Encoding(p.Encoding()) {
		case parquet.Encodings.Plain:
			g.dict, g.plain = false, data
		case parquet.Encodings.RLE:
			// Only a boolean column's values: a 4-byte length, then
			// runs of width 1.
			if !g.bools || len(data) < 4 {
				return false, errParquetIndirect
			}
			l := int(binary.LittleEndian.Uint32(data))
			if l < 0 || l > len(data)-4 {
				return false, errParquetIndirect
			}
			g.dict, g.rle = false, true
			g.idx.init(data[4:4+l], 1)
		case parquet.Encodings.PlainDict, parquet.Encodings.RLEDict:
			if !g.hasDct {
				return false, errParquetIndirect
			}
			g.dict = true
			if len(data) == 0 {
				g.idx.init(nil, 0) // no values: every row null
				break
			}
			if data[0] > 32 {
				return false, errParquetIndirect
			}
			g.idx.init(data[1:], int(data[0]))
		default:
			return false, errParquetIndirect
		}
		if g.left = int(p.NumValues()); g.left > 0 {
			return true, nil
		}
	}
}

// readDict copies the chunk's dictionary page (n plain values) and clears
// the batch's slots of the last one.
func (s *pqStrReader) readDict(data []byte, n int) error {
	g := &s.pg
	g.dOff, g.dData = append(g.dOff[:0], 0), g.dData[:0]
	for range n {
		if len(data) < 4 {
			return errParquetIndirect
		}
		l := int(binary.LittleEndian.Uint32(data))
		if l < 0 || l > len(data)-4 || len(g.dData)+l > math.MaxInt32 {
			return errParquetIndirect
		}
		g.dData = append(g.dData, data[4:4+l]...)
		g.dOff = append(g.dOff, int32(len(g.dData)))
		data = data[4+l:]
	}
	g.slot = pqGrow(g.slot, n)
	for i := range g.slot {
		g.slot[i] = -1
	}
	g.used = g.used[:0]
	return nil
}

// entry returns the batch's entry of dictionary entry k, adding it to the
// batch the first time.
func (s *pqStrReader) entry(k uint32) (int32, bool) {
	g := &s.pg
	if int(k) >= len(g.slot) {
		return 0, false
	}
	if e := g.slot[k]; e >= 0 {
		return e, true
	}
	s.data = append(s.data, g.dData[g.dOff[k]:g.dOff[k+1]]...)
	s.off = append(s.off, int32(len(s.data)))
	e := int32(len(s.off) - 2)
	g.slot[k] = e
	g.used = append(g.used, int32(k))
	return e, true
}

// defRun returns the number of the next rows, at most want, that share a
// definition level, and whether they hold a value.
func (s *pqLeaf) defRun(g *pqPaged, want int) (int, bool, error) {
	if s.maxDef == 0 {
		return want, true, nil
	}
	k, v, ok := g.defs.run(want)
	if !ok || v > uint32(s.maxDef) {
		return 0, false, errParquetIndirect
	}
	return k, v == uint32(s.maxDef), nil
}

// values reads the next k values of the page into the batch: the rows'
// entries, and the bytes of their text.
func (s *pqStrReader) values(k int) (int64, error) {
	g := &s.pg
	var text int64
	if g.dict {
		for k > 0 {
			m, v, ok := g.idx.run(k)
			if !ok {
				return 0, errParquetIndirect
			}
			e, ok := s.entry(v)
			if !ok {
				return 0, errParquetIndirect
			}
			for range m {
				s.idx = append(s.idx, e)
			}
			text += int64(m) * int64(g.dOff[v+1]-g.dOff[v])
			k -= m
		}
		return text, nil
	}
	for ; k > 0; k-- {
		if len(g.plain) < 4 {
			return 0, errParquetIndirect
		}
		l := int(binary.LittleEndian.Uint32(g.plain))
		if l < 0 || l > len(g.plain)-4 {
			return 0, errParquetIndirect
		}
		v := g.plain[4 : 4+l]
		g.plain = g.plain[4+l:]
		text += int64(l)
		last := len(s.off) - 2
		if string(v) != string(s.data[s.off[last]:s.off[last+1]]) {
			s.data = append(s.data, v...)
			s.off = append(s.off, int32(len(s.data)))
			last++
		}
		s.idx = append(s.idx, int32(last))
	}
	return text, nil
}

// nextPaged reads the next n rows of the column into c as next does, page
// by page.
func (s *pqStrReader) nextPaged(c *pqColumn, n int) error {
	g := &s.pg
	for _, k := range g.used {
		g.slot[k] = -1
	}
	g.used, g.nulls = g.used[:0], g.nulls[:0]
	s.idx, s.off, s.data = s.idx[:0], append(s.off[:0], 0, 0), s.data[:0]
	var text int64
	for len(s.idx) < n {
		if g.left == 0 {
			ok, err := s.nextPage(g, s.readDict)
			if err != nil {
				return err
			}
			if !ok {
				break
			}
		}
		want := min(n-len(s.idx), g.left)
		g.left -= want
		for want > 0 {
			k, valued, err := s.defRun(g, want)
			if err != nil {
				return err
			}
			want -= k
			if valued {
				t, err := s.values(k)
				if err != nil {
					return err
				}
				text += t
				continue
			}
			for range k {
				g.nulls = append(g.nulls, int32(len(s.idx)))
				s.idx = append(s.idx, 0)
			}
		}
	}
	if len(s.idx) != n || len(s.data) > math.MaxInt32 {
		return errParquetIndirect // not the batch's rows
	}
	c.valid, c.voff = g.validity(&s.valid, n), 0
	c.dict, c.off32, c.off64, c.data, c.textBytes = s.idx, s.off, nil, s.data, text
	return nil
}

// validity returns the validity bitmap of the batch's n rows, in buf, or
// nil when none is null.
func (g *pqPaged) validity(buf *[]byte, n int) []byte {
	if len(g.nulls) == 0 {
		return nil
	}
	v := pqGrow(*buf, int(bitutil.BytesForBits(int64(n))))
	for i := range v {
		v[i] = 0xff
	}
	for _, i := range g.nulls {
		bitutil.ClearBit(v, int(i))
	}
	*buf = v
	return v
}

// close closes the page reader in use.
func (g *pqPaged) close() {
	if g.pr != nil {
		g.pr.Close()
	}
	g.pr, g.left = nil, 0
}

// readNumDict reads the chunk's dictionary page of n plain numbers of the
// reader's type, each kept as the bits of its value (a float64's, or an
// int64's).
func (f *pqFlatReader) readNumDict(data []byte, n int) error {
	g := &f.pg
	w := 8
	if f.ptype == parquet.Types.Int32 {
		w = 4
	}
	if n < 0 || len(data) < n*w {
		return errParquetIndirect
	}
	g.dNum = g.dNum[:0]
	for i := range n {
		switch f.ptype {
		case parquet.Types.Int32:
			g.dNum = append(g.dNum, uint64(int64(int32(binary.LittleEndian.Uint32(data[4*i:])))))
		default:
			g.dNum = append(g.dNum, binary.LittleEndian.Uint64(data[8*i:]))
		}
	}
	return nil
}

// nextPaged reads the next n rows of the column into c as next does, page
// by page.
func (f *pqFlatReader) nextPaged(c *pqColumn, n int) error {
	g := &f.pg
	g.nulls = g.nulls[:0]
	dbl := f.ptype == parquet.Types.Double
	if dbl {
		f.f64 = pqGrow(f.f64, n)
	} else {
		f.i64 = pqGrow(f.i64, n)
	}
	set := func(row int, bits uint64) {
		if dbl {
			f.f64[row] = math.Float64frombits(bits)
		} else {
			f.i64[row] = int64(bits)
		}
	}
	row := 0
	for row < n {
		if g.left == 0 {
			ok, err := f.nextPage(g, f.readNumDict)
			if err != nil {
				return err
			}
			if !ok {
				break
			}
		}
		want := min(n-row, g.left)
		g.left -= want
		for want > 0 {
			k, valued, err := f.defRun(g, want)
			if err != nil {
				return err
			}
			want -= k
			if !valued {
				for range k {
					g.nulls = append(g.nulls, int32(row))
					set(row, 0)
					row++
				}
				continue
			}
			if g.dict {
				for k > 0 {
					m, v, ok := g.idx.run(k)
					if !ok || int(v) >= len(g.dNum) {
						return errParquetIndirect
					}
					for range m {
						set(row, g.dNum[v])
						row++
					}
					k -= m
				}
				continue
			}
			p := g.plain
			switch f.ptype {
			case parquet.Types.Double:
				if len(p) < 8*k {
					return errParquetIndirect
				}
				for j := range k {
					f.f64[row+j] = math.Float64frombits(binary.LittleEndian.Uint64(p[8*j:]))
				}
				g.plain = p[8*k:]
			case parquet.Types.Int64:
				if len(p) < 8*k {
					return errParquetIndirect
				}
				for j := range k {
					f.i64[row+j] = int64(binary.LittleEndian.Uint64(p[8*j:]))
				}
				g.plain = p[8*k:]
			default:
				if len(p) < 4*k {
					return errParquetIndirect
				}
				for j := range k {
					f.i64[row+j] = int64(int32(binary.LittleEndian.Uint32(p[4*j:])))
				}
				g.plain = p[4*k:]
			}
			row += k
		}
	}
	if row != n {
		return errParquetIndirect // not the batch's rows
	}
	c.valid, c.voff = g.validity(&f.valid, n), 0
	c.isInt = !dbl
	if dbl {
		c.f64, c.i64 = f.f64[:n], nil
	} else {
		c.i64, c.f64 = f.i64[:n], nil
	}
	return nil
}

// pqNoDict refuses a dictionary page: a boolean column has none.
func pqNoDict([]byte, int) error { return errParquetIndirect }

// nextPaged reads the next n rows of the boolean column into c as next
// does, page by page: a plain page's values straight from its bits, an
// RLE page's a run at a time, nulls by their definition levels.
func (b *pqBoolReader) nextPaged(c *pqColumn, n int) error {
	g := &b.pg
	g.nulls = g.nulls[:0]
	b.vals = pqGrow(b.vals, n)
	vals := b.vals
	row := 0
	for row < n {
		if g.left == 0 {
			ok, err := b.nextPage(g, pqNoDict)
			if err != nil {
				return err
			}
			if !ok {
				break
			}
		}
		want := min(n-row, g.left)
		g.left -= want
		for want > 0 {
			k, valued, err := b.defRun(g, want)
			if err != nil {
				return err
			}
			want -= k
			if !valued {
				for range k {
					g.nulls = append(g.nulls, int32(row))
					vals[row] = false
					row++
				}
				continue
			}
			if g.rle {
				for k > 0 {
					m, v, ok := g.idx.run(k)
					if !ok {
						return errParquetIndirect
					}
					for j := range m {
						vals[row+j] = v != 0
					}
					row += m
					k -= m
				}
				continue
			}
			p, bit := g.plain, g.bit
			if len(p) < (bit+k+7)/8 {
				return errParquetIndirect
			}
			for j := range k {
				vals[row+j] = p[(bit+j)>>3]>>((bit+j)&7)&1 != 0
			}
			g.plain, g.bit = p[(bit+k)>>3:], (bit+k)&7
			row += k
		}
	}
	if row != n {
		return errParquetIndirect // not the batch's rows
	}
	c.valid, c.voff = g.validity(&b.valid, n), 0
	c.bs = vals[:n]
	return nil
}

// pqPagedStrings, pqPagedNumbers and pqPagedBools turn the paged mode on; tests turn
// them off to compare.
var pqPagedStrings, pqPagedNumbers, pqPagedBools = true, true, true
