package readers

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"slices"
)

// pqCRCPage says what crc a page header gets: sum, the CRC-32 of the
// page's bytes, or another value (the tests' damaged files); ok false: no
// crc field.
type pqCRCPage func(rg, col, page int, sum uint32) (crc uint32, ok bool)

// pqAllCRCs gives every page its right crc.
func pqAllCRCs(_, _, _ int, sum uint32) (uint32, bool) { return sum, true }

// pqSetCRCs returns the Parquet file data with the crc field of each page
// header (PageHeader's field 4: the CRC-32, IEEE, of the page's bytes as
// stored after the header) set as crc says, pages counted from 0 in each
// column chunk (the dictionary page first), and the footer's offsets and
// sizes moved to where the longer headers put the pages: the file
// arrow-go's writer would have written had it written checksums (it
// cannot: docs/decisions.md, "Parquet page checksums"). A file it cannot
// rewrite so (a page index or a bloom filter, whose offsets it does not
// move; a footer or page header that does not decode; an offset that is no
// page's) is an error.
func pqSetCRCs(data []byte, crc pqCRCPage) ([]byte, error) {
	var buf bytes.Buffer
	buf.Grow(len(data) + len(data)/64)
	if err := pqWriteCRCs(&buf, pqChunks{data}, crc); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// pqFile is a Parquet file pqWriteCRCs reads: held in memory (pqChunks)
// or in a spill file (pqSpilled).
type pqFile interface {
	// size is the file's length.
	size() int64
	// at returns the file's bytes [off, off+n). A file whose bytes cannot
	// be read returns zeros and says why in err.
	at(off, n int64) []byte
	// err is the first read that failed, or nil.
	err() error
}

// pqChunks is a file held in pieces (chunkWriter's): every piece but the
// last full.
type pqChunks [][]byte

func (c pqChunks) err() error { return nil }

// size is the file's length.
func (c pqChunks) size() int64 {
	if len(c) == 0 {
		return 0
	}
	return int64(len(c[0]))*int64(len(c)-1) + int64(len(c[len(c)-1]))
}

// at returns the file's bytes [off, off+n): a view of a piece, or a copy
// of the stretch that crosses pieces.
func (c pqChunks) at(off, n int64) []byte {
	if n == 0 {
		return nil
	}
	w := int64(len(c[0]))
	i, o := off/w, off%w
	if o+n <= int64(len(c[i])) {
		return c[i][o : o+n]
	}
	b := make([]byte, 0, n)
	for n > 0 {
		k := min(n, int64(len(c[i]))-o)
		b = append(b, c[i][o:o+k]...)
		n -= k
		i, o = i+1, 0
	}
	return b
}

// chunkWriter keeps what is written to it in pieces of piece bytes (0:
// chunkBytes): no copy of the whole as it grows.
type chunkWriter struct {
	chunks pqChunks
	piece  int
}

const chunkBytes = 4 << 20

func (c *chunkWriter) Write(p []byte) (int, error) {
	if c.piece == 0 {
		c.piece = chunkBytes
	}
	n := len(p)
	for len(p) > 0 {
		if len(c.chunks) == 0 || len(c.chunks[len(c.chunks)-1]) == c.piece {
			c.chunks = append(c.chunks, make([]byte, 0, c.piece))
		}
		last := &c.chunks[len(c.chunks)-1]
		k := min(len(p), c.piece-len(*last))
		*last = append(*last, p[:k]...)
		p = p[k:]
	}
	return n, nil
}

// pqOut is where pqWriteCRCs writes: bytes kept until there are
// pqOutFlush of them, then written to w.
type pqOut struct {
	w   io.Writer
	b   []byte
	off int64 // the bytes written to w
	err error
}

const pqOutFlush = 1 << 20

// pqHeaderWindow is the first window a page header is decoded from; a
// header that does not fit (long statistics) is decoded again from one
// four times as large.
const pqHeaderWindow = 4 << 10

// pos is the offset in the file of the next byte.
func (o *pqOut) pos() int64 { return o.off + int64(len(o.b)) }

// flush writes the bytes kept once there are enough of them (all: final).
func (o *pqOut) flush(final bool) {
	if o.err != nil || (len(o.b) < pqOutFlush && !final) {
		return
	}
	_, o.err = o.w.Write(o.b)
	o.off += int64(len(o.b))
	o.b = o.b[:0]
}

// pqWriteCRCs is pqSetCRCs writing the file to w, a piece at a time; on
// an error, w may have received part of it.
func pqWriteCRCs(w io.Writer, data pqFile, crc pqCRCPage) error {
	err := pqWriteCRCsOf(w, data, crc)
	if rerr := data.err(); rerr != nil {
		return rerr // what made the bytes wrong, before what they then made fail
	}
	return err
}

func pqWriteCRCsOf(w io.Writer, data pqFile, crc pqCRCPage) error {
	size := data.size()
	if size < 12 {
		return errors.New("parquet checksums: not a Parquet file")
	}
	flen := int64(binary.LittleEndian.Uint32(data.at(size-8, 4)))
	fstart := size - 8 - flen
	if flen <= 0 || fstart < 4 {
		return errors.New("parquet checksums: no footer")
	}
	footer, n, ok := tcDecodeStruct(data.at(fstart, flen))
	if !ok || int64(n) != flen {
		return fmt.Errorf("parquet checksums: footer of %d bytes does not decode", flen)
	}
	type chunk struct {
		rg, col    int
		start, end int64
	}
	i64 := func(fs []tcField, id int16) (int64, bool) {
		f := tcGet(fs, id)
		if f == nil {
			return 0, false
		}
		v, ok := f.val.(int64)
		return v, ok
	}
	rgsF := tcGet(footer, 4)
	if rgsF == nil { // no row groups: no pages
		_, err := w.Write(data.at(0, size))
		return err
	}
	rgs, ok := rgsF.val.(*tcListV)
	if !ok {
		return errors.New("parquet checksums: row groups do not decode")
	}
	var chunks []chunk
	for g, rgv := range rgs.elems {
		rg, ok := rgv.([]tcField)
		colsF := tcGet(rg, 1)
		if !ok || colsF == nil {
			return fmt.Errorf("parquet checksums: row group %d does not decode", g)
		}
		cols, ok := colsF.val.(*tcListV)
		if !ok {
			return fmt.Errorf("parquet checksums: row group %d's columns do not decode", g)
		}
		for c, ccv := range cols.elems {
			cc, ok := ccv.([]tcField)
			metaF := tcGet(cc, 3)
			if !ok || metaF == nil {
				return fmt.Errorf("parquet checksums: row group %d, column %d: no metadata", g, c)
			}
			if tcGet(cc, 4) != nil || tcGet(cc, 6) != nil {
				return fmt.Errorf("parquet checksums: row group %d, column %d: a page index", g, c)
			}
			meta, ok := metaF.val.([]tcField)
			if !ok || tcGet(meta, 14) != nil {
				return fmt.Errorf("parquet checksums: row group %d, column %d: a bloom filter or metadata that does not decode", g, c)
			}
			start, ok1 := i64(meta, 9)
			size, ok2 := i64(meta, 7)
			if _, ok3 := i64(meta, 6); !ok1 || !ok2 || !ok3 {
				return fmt.Errorf("parquet checksums: row group %d, column %d: no offset or sizes", g, c)
			}
			if d, ok := i64(meta, 11); ok && d > 0 && d < start {
				start = d
			}
			if start < 4 || size < 0 || start+size > int64(fstart) {
				return fmt.Errorf("parquet checksums: row group %d, column %d: a chunk outside the file", g, c)
			}
			chunks = append(chunks, chunk{rg: g, col: c, start: start, end: start + size})
		}
	}
	sorted := slices.Clone(chunks)
	slices.SortFunc(sorted, func(a, b chunk) int { return int(a.start - b.start) })
	moved := map[int64]int64{} // an old page or chunk start (or chunk end): the new one
	grown := map[[2]int]int64{}
	out := &pqOut{w: w, b: make([]byte, 0, 2*pqOutFlush)}
	pos := int64(0)
	for _, ch := range sorted {
		if ch.start < pos {
			return fmt.Errorf("parquet checksums: row group %d, column %d: chunks overlap", ch.rg, ch.col)
		}
		out.b = append(out.b, data.at(pos, ch.start-pos)...)
		page := 0
		for off := ch.start; off < ch.end; page++ {
			// The header from a window of the chunk that grows until it
			// holds the whole header (or the rest of the chunk).
			var (
				h      []tcField
				hl     int
				ok     bool
				window = min(ch.end-off, pqHeaderWindow)
			)
			for {
				h, hl, ok = tcDecodeStruct(data.at(off, window))
				if ok || window == ch.end-off {
					break
				}
				window = min(ch.end-off, 4*window)
			}
			cs, ok2 := i64(h, 3)
			if !ok || !ok2 || cs < 0 || cs > ch.end-off-int64(hl) {
				return fmt.Errorf("parquet checksums: row group %d, column %d: the page header at %d does not decode", ch.rg, ch.col, off)
			}
			body := data.at(off+int64(hl), cs)
			if v, ok := crc(ch.rg, ch.col, page, crc32.ChecksumIEEE(body)); ok {
				h = tcPut(h, 4, tcI32, int64(int32(v)))
			} else {
				h = tcDel(h, 4)
			}
			moved[off] = out.pos()
			before := len(out.b)
			out.b = tcAppendStruct(out.b, h)
			grown[[2]int{ch.rg, ch.col}] += int64(len(out.b) - before - hl)
			out.b = append(out.b, body...)
			if out.flush(false); out.err != nil {
				return out.err
			}
			off += int64(hl) + cs
		}
		moved[ch.end] = out.pos()
		pos = ch.end
	}
	out.b = append(out.b, data.at(pos, fstart-pos)...)
	var bad error
	move := func(fs []tcField, id int16) {
		if f := tcGet(fs, id); f != nil {
			if v, ok := f.val.(int64); ok && v > 0 {
				nv, ok := moved[v]
				if !ok && bad == nil {
					bad = fmt.Errorf("parquet checksums: field %d: offset %d is no page's", id, v)
				}
				f.val = nv
			}
		}
	}
	add := func(fs []tcField, id int16, d int64) {
		if f := tcGet(fs, id); f != nil {
			if v, ok := f.val.(int64); ok {
				f.val = v + d
			}
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
			add(meta, 7, d)
			add(meta, 6, d)
			move(cc, 2)
		}
		move(rg, 5)
		add(rg, 6, rgGrown)
		add(rg, 2, rgGrown)
	}
	if bad != nil {
		return bad
	}
	fs := out.pos()
	out.b = tcAppendStruct(out.b, footer)
	out.b = binary.LittleEndian.AppendUint32(out.b, uint32(out.pos()-fs))
	out.b = append(out.b, ParquetMagic...)
	out.flush(true)
	return out.err
}
