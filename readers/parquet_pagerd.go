package readers

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"sync"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
)

// pqPageReader reads the pages of one column chunk of a Parquet object
// held whole in memory (the engine's small objects) straight from the
// object's bytes: each page header is decoded here (Thrift's compact
// protocol, the few fields a page has) and each page decompressed by
// arrow-go's own codec (compress.Decode: the same decoder, the same
// result) from the object's bytes into a buffer the reader keeps, or, in
// an uncompressed column chunk, taken as it lies in the object's bytes.
// arrow-go's page reader (serializedPageReader) copied every page twice
// first: its header's 16 KiB into a buffered stream (bytes.Reader.ReadAt
// under io.SectionReader), then the compressed page into a buffer of its
// own, and decoded the header with a generic Thrift decoder allocating a
// struct a field.
//
// Before its first page, the chunk's pages' crcs are checked, all of them
// (pqChecked.chunk, parquet_crc.go: the check every way of reading shares):
// a mismatch ends the column with a *pqChecksumError (Err), which the
// direct path makes a DataError naming the row and the column
// (pqDirect.batch), not errParquetIndirect.
//
// It yields the same pages as arrow-go's, in the same order, and stops
// where it stops (once the chunk's values are read, or at the end of the
// chunk's bytes), as file.Page values the paged readers and arrow-go's
// column chunk readers read as before. It accepts only what arrow-go's
// reader accepts, with the same meaning: a header that does not decode, a
// required field missing, a page size negative, above arrow-go's limits or
// past the chunk, a page that does not decompress to its stated size, a
// page type other than a dictionary or data page (arrow-go skips those),
// or a chunk arrow-go reads another way (encrypted, with a page index,
// written by an old parquet-mr, whose bytes lie outside the object) is
// never read by it: the first four end the column with errParquetIndirect
// (the object is read the general way, by arrow-go's reader, which names
// the error), the last takes arrow-go's page reader from the start.
type pqPageReader struct {
	rest        []byte         // the column chunk's bytes not yet read
	nrows, seen int64          // the chunk's values; those of the pages read
	codec       compress.Codec // nil: uncompressed, pages alias rest
	maxC, maxU  int64          // arrow-go's page size limits
	dictBuf     []byte         // the dictionary page, decompressed
	dataBuf     []byte         // the current data page, decompressed
	page        file.Page
	err         error
	closed      bool // given back to the pool
}

var pqPageReaderPool = sync.Pool{New: func() any { return new(pqPageReader) }}

// pqObjectBytes returns the bytes of r when it is a *bytes.Reader (an
// object the engine read whole), without copying them, or nil: the
// reader's WriteTo hands its whole remaining slice to one Write. r's
// position is kept.
func pqObjectBytes(r parquet.ReaderAtSeeker) []byte {
	br, ok := r.(*bytes.Reader)
	if !ok {
		return nil
	}
	pos, err := br.Seek(0, io.SeekCurrent)
	if err != nil {
		return nil
	}
	if _, err := br.Seek(0, io.SeekStart); err != nil {
		return nil
	}
	var w pqCapture
	_, err = br.WriteTo(&w)
	br.Seek(pos, io.SeekStart)
	if err != nil || int64(len(w.b)) != br.Size() {
		return nil
	}
	return w.b
}

// pqCapture keeps the slice written to it (the bytes.Reader's own bytes,
// which never change: they are read, never written, while the object is
// decoded).
type pqCapture struct{ b []byte }

func (w *pqCapture) Write(p []byte) (int, error) {
	if w.b != nil {
		return 0, errors.New("readers: more than one write")
	}
	w.b = p[:len(p):len(p)]
	return len(p), nil
}

// pqObject is a Parquet object held in memory, as its page readers read it.
type pqObject struct {
	data    []byte
	rgIndex []int8     // by row group: 0 not looked at yet, 1 without a page index, -1 with one
	check   *pqChecked // the pages' checksums (openParquet), or nil
}

// newPQObject returns the pqObject of r's bytes (pqObjectBytes), or nil.
func newPQObject(r parquet.ReaderAtSeeker) *pqObject {
	if b := pqObjectBytes(r); b != nil {
		return &pqObject{data: b}
	}
	return nil
}

// pqColumnPages returns the page reader of leaf col in row group rg of pf:
// a pqPageReader over obj (pf's bytes, nil when pf is not held in memory)
// when it reads that column chunk, else arrow-go's.
func pqColumnPages(pf *file.Reader, obj *pqObject, rg, col int) (file.PageReader, error) {
	if pr := newPQPageReader(pf, obj, rg, col); pr != nil {
		return pr, nil
	}
	return pf.RowGroup(rg).GetColumnPageReader(col)
}

// pqColumnChunk returns the column chunk reader of leaf col in row group
// rg of pf, over pqColumnPages's page reader: the reader
// RowGroupReader.Column returns, but for the page reader.
func pqColumnChunk(pf *file.Reader, obj *pqObject, rg, col int) (file.ColumnChunkReader, error) {
	pr := newPQPageReader(pf, obj, rg, col)
	if pr == nil {
		return pf.RowGroup(rg).Column(col)
	}
	//lint:ignore SA1019 the constructor RowGroupReader.Column uses, with its arguments but the page reader
	return file.NewColumnReader(pf.MetaData().Schema.Column(col), pr, pqReaderProps.Allocator(), pf.BufferPool()), nil
}

// newPQPageReader returns a pqPageReader of leaf col in row group rg of
// pf over obj, or nil when obj is nil or arrow-go reads that chunk in a
// way it does not (see pqPageReader).
func newPQPageReader(pf *file.Reader, obj *pqObject, rg, col int) *pqPageReader {
	if obj == nil || !pqPagesOwn {
		return nil
	}
	md := pf.MetaData()
	if rg < 0 || rg >= md.NumRowGroups() || md.WriterVersion().LessThan(metadata.Parquet816FixedVersion) {
		return nil
	}
	rmd := md.RowGroup(rg)
	if col < 0 || col >= rmd.NumColumns() {
		return nil
	}
	// A page index anywhere in the row group: arrow-go's reader checks its
	// location when it opens any of the row group's chunks.
	if len(obj.rgIndex) != md.NumRowGroups() {
		obj.rgIndex = make([]int8, md.NumRowGroups())
	}
	if obj.rgIndex[rg] == 0 {
		obj.rgIndex[rg] = 1
		for i := 0; i < rmd.NumColumns(); i++ {
			c, err := rmd.ColumnChunk(i)
			if err != nil || c.GetColumnIndexLocation() != nil || c.GetOffsetIndexLocation() != nil {
				obj.rgIndex[rg] = -1
				break
			}
		}
	}
	if obj.rgIndex[rg] < 0 {
		return nil
	}
	cc, err := rmd.ColumnChunk(col)
	if err != nil || cc.CryptoMetadata() != nil {
		return nil
	}
	start := pqChunkStart(cc)
	n := cc.TotalCompressedSize()
	if start < 0 || n < 0 || start > int64(len(obj.data)) || n > int64(len(obj.data))-start {
		return nil
	}
	var codec compress.Codec
	if c := cc.Compression(); c != compress.Codecs.Uncompressed {
		if codec, err = compress.GetCodec(c); err != nil {
			return nil
		}
	}
	p := pqPageReaderPool.Get().(*pqPageReader)
	*p = pqPageReader{
		rest: obj.data[start : start+n], nrows: cc.NumValues(), codec: codec,
		maxC: pqMemReaderProps.GetMaxCompressedPageSize(), maxU: pqMemReaderProps.GetMaxUncompressedPageSize(),
		dictBuf: p.dictBuf, dataBuf: p.dataBuf,
	}
	// The chunk's pages' checksums, all of them, before its first page.
	if err := obj.check.chunk(rg, col); err != nil {
		p.rest, p.err = nil, err
	}
	return p
}

// pqPagesOwn turns pqPageReader on; tests turn it off to compare.
var pqPagesOwn = true

// pqPageHeaderMax is the most bytes a page header may take here; a longer
// one (arrow-go peeks 16 KiB, then twice that, up to 16 MiB) ends the
// column with errParquetIndirect.
const pqPageHeaderMax = 16 << 10

func (p *pqPageReader) SetMaxPageHeaderSize(int) {}
func (p *pqPageReader) Page() file.Page          { return p.page }
func (p *pqPageReader) Err() error               { return p.err }

func (p *pqPageReader) Reset(parquet.BufferedReader, int64, compress.Compression, *file.CryptoContext) {
	p.page, p.err, p.rest, p.nrows = nil, errParquetIndirect, nil, 0
}

// GetDictionaryPage is asked by a column chunk reader only for a data page
// of dictionary indices before any dictionary page: not for this reader.
func (p *pqPageReader) GetDictionaryPage() (*file.DictionaryPage, error) {
	return nil, errParquetIndirect
}

func (p *pqPageReader) SeekToPageWithRow(int64) error { return errParquetIndirect }

// Close gives the reader and its buffers back to the pool; nothing of its
// pages is read past it.
func (p *pqPageReader) Close() error {
	if p.closed {
		return nil
	}
	p.page, p.rest, p.closed = nil, nil, true
	pqPageReaderPool.Put(p)
	return nil
}

// fail ends the column with errParquetIndirect.
func (p *pqPageReader) fail() bool {
	p.page, p.err, p.rest = nil, errParquetIndirect, nil
	return false
}

// decode returns the n bytes of page body src, decompressed into *buf.
func (p *pqPageReader) decode(buf *[]byte, src []byte, n int) ([]byte, bool) {
	if p.codec == nil {
		return src, len(src) == n
	}
	if cap(*buf) < n {
		pqPages.Free(*buf)
		*buf = pqPages.Allocate(n)[:0]
	}
	out, err := compress.Decode(p.codec, (*buf)[:n], src)
	if err != nil || len(out) != n || n > 0 && &out[0] != &(*buf)[:n][0] {
		return nil, false
	}
	return out, true
}

// Next reads the next page: false at the end of the column chunk (Err
// nil) or on a page it does not read (Err errParquetIndirect).
func (p *pqPageReader) Next() bool {
	p.page = nil
	if p.err != nil || p.seen >= p.nrows || len(p.rest) == 0 {
		return false
	}
	var h pqPageHeader
	hl, ok := h.parse(p.rest[:min(len(p.rest), pqPageHeaderMax)])
	if !ok || h.set&pqHdrRequired != pqHdrRequired {
		return p.fail()
	}
	clen, ulen := int64(h.csize), int64(h.usize)
	if clen < 0 || ulen < 0 || clen > p.maxC || ulen > p.maxU || clen > int64(len(p.rest)-hl) {
		return p.fail()
	}
	body := p.rest[hl : hl+int(clen)]
	p.rest = p.rest[hl+int(clen):]
	switch h.typ {
	case pqPageDict:
		d := &h.dict
		if h.set&pqHdrDict == 0 || d.set&3 != 3 || d.nvals < 0 {
			return p.fail()
		}
		data, ok := p.decode(&p.dictBuf, body, int(ulen))
		if !ok {
			return p.fail()
		}
		p.page = file.NewDictionaryPage(memory.NewBufferBytes(data), d.nvals, parquet.Encoding(d.enc))
	case pqPageData:
		d := &h.data
		if h.set&pqHdrData == 0 || d.set&15 != 15 || d.nvals < 0 {
			return p.fail()
		}
		data, ok := p.decode(&p.dataBuf, body, int(ulen))
		if !ok {
			return p.fail()
		}
		p.seen += int64(d.nvals)
		p.page = file.NewDataPageV1(memory.NewBufferBytes(data), d.nvals, parquet.Encoding(d.enc),
			parquet.Encoding(d.defEnc), parquet.Encoding(d.repEnc), int32(ulen))
	case pqPageDataV2:
		d := &h.v2
		if h.set&pqHdrV2 == 0 || d.set&63 != 63 || d.nvals < 0 || d.dlen < 0 || d.rlen < 0 {
			return p.fail()
		}
		lev := int64(d.dlen) + int64(d.rlen)
		if lev > clen || !d.compressed && clen != ulen || lev > ulen {
			return p.fail()
		}
		var data []byte
		if !d.compressed || p.codec == nil {
			if data, ok = body, clen == ulen; !ok {
				return p.fail()
			}
		} else {
			if cap(p.dataBuf) < int(ulen) {
				pqPages.Free(p.dataBuf)
				p.dataBuf = pqPages.Allocate(int(ulen))[:0]
			}
			buf := p.dataBuf[:ulen]
			copy(buf, body[:lev])
			v := buf[lev:]
			out, err := compress.Decode(p.codec, v, body[lev:])
			if err != nil || len(out) != len(v) || len(v) > 0 && &out[0] != &v[0] {
				return p.fail()
			}
			data = buf
		}
		p.seen += int64(d.nrows)
		p.page = file.NewDataPageV2(memory.NewBufferBytes(data), d.nvals, d.nnulls, d.nrows, parquet.Encoding(d.enc),
			d.dlen, d.rlen, int32(ulen), d.compressed)
	default:
		return p.fail()
	}
	return true
}

// The page types of Parquet's PageType.
const (
	pqPageData   = 0
	pqPageDict   = 2
	pqPageDataV2 = 3
)

// pqChecksumError is a page whose header's crc is not the CRC-32 of its
// bytes: page (from 1, the dictionary page first) of the column chunk of
// row group rg (from 0).
type pqChecksumError struct {
	rg, page int
	crc, sum uint32
}

func (e *pqChecksumError) Error() string {
	return fmt.Sprintf("page checksum mismatch (row group %d, page %d of the column chunk: crc %08x in its header, %08x of its bytes)",
		e.rg+1, e.page, e.crc, e.sum)
}

// pqPageErr is what a reader of pages hands on of a page reader's error
// err: a checksum mismatch as it is, anything else errParquetIndirect.
func pqPageErr(err error) error {
	var ce *pqChecksumError
	if errors.As(err, &ce) {
		return ce
	}
	return errParquetIndirect
}

// pqPageHeader holds the fields of a PageHeader the readers use; set has a
// bit for each field read (pqHdr...), each sub-header the bits of its own
// fields in their order.
type pqPageHeader struct {
	typ, usize, csize int32
	crc               uint32
	set               uint8
	data              struct {
		nvals, enc, defEnc, repEnc int32
		set                        uint8
	}
	dict struct {
		nvals, enc int32
		set        uint8
	}
	v2 struct {
		nvals, nnulls, nrows, enc, dlen, rlen int32
		compressed                            bool
		set                                   uint8
	}
}

const (
	pqHdrType = 1 << iota
	pqHdrUSize
	pqHdrCSize
	pqHdrData
	pqHdrDict
	pqHdrV2
	pqHdrCRC
	pqHdrRequired = pqHdrType | pqHdrUSize | pqHdrCSize
)

// Thrift compact protocol's types.
const (
	tcStop   = 0
	tcTrue   = 1
	tcFalse  = 2
	tcByte   = 3
	tcI16    = 4
	tcI32    = 5
	tcI64    = 6
	tcDouble = 7
	tcBinary = 8
	tcList   = 9
	tcSet    = 10
	tcMap    = 11
	tcStruct = 12
)

// tcReader reads Thrift's compact protocol from b.
type tcReader struct {
	b   []byte
	off int
	bad bool
}

func (r *tcReader) byte() byte {
	if r.off >= len(r.b) {
		r.bad = true
		return 0
	}
	c := r.b[r.off]
	r.off++
	return c
}

// uvarint reads an unsigned varint of at most max bytes.
func (r *tcReader) uvarint(max int) uint64 {
	var v uint64
	for i := 0; i < max; i++ {
		c := r.byte()
		if r.bad {
			return 0
		}
		v |= uint64(c&0x7f) << (7 * i)
		if c < 0x80 {
			return v
		}
	}
	r.bad = true
	return 0
}

// i32 reads a zigzag varint that fits an int32.
func (r *tcReader) i32() int32 {
	u := r.uvarint(5)
	if u > math.MaxUint32 {
		r.bad = true
		return 0
	}
	return int32(uint32(u)>>1) ^ -int32(u&1)
}

// field reads a field header: its type and id (0, 0 at the struct's end).
func (r *tcReader) field(last int16) (byte, int16) {
	c := r.byte()
	t := c & 0x0f
	if t == tcStop {
		return tcStop, 0
	}
	if d := c >> 4; d != 0 {
		return t, last + int16(d)
	}
	u := r.uvarint(3)
	if u > math.MaxUint16 {
		r.bad = true
		return 0, 0
	}
	return t, int16(uint16(u)>>1) ^ -int16(u&1)
}

// skip skips a value of type t (depth levels of nesting left).
func (r *tcReader) skip(t byte, depth int) {
	if depth == 0 {
		r.bad = true
		return
	}
	switch t {
	case tcTrue, tcFalse:
	case tcByte:
		r.byte()
	case tcI16, tcI32, tcI64:
		r.uvarint(10)
	case tcDouble:
		r.bytes(8)
	case tcBinary:
		r.bytes(int(min(r.uvarint(5), math.MaxInt32)))
	case tcList, tcSet:
		c := r.byte()
		n, et := int(c>>4), c&0x0f
		if n == 15 {
			n = int(min(r.uvarint(5), math.MaxInt32))
		}
		for i := 0; i < n && !r.bad; i++ {
			if et == tcTrue || et == tcFalse { // a boolean element is a byte
				r.byte()
				continue
			}
			r.skip(et, depth-1)
		}
	case tcMap:
		n := int(min(r.uvarint(5), math.MaxInt32))
		if n == 0 {
			return
		}
		c := r.byte()
		kt, vt := c>>4, c&0x0f
		for i := 0; i < n && !r.bad; i++ {
			r.skip(kt, depth-1)
			r.skip(vt, depth-1)
		}
	case tcStruct:
		var id int16
		for !r.bad {
			var ft byte
			if ft, id = r.field(id); ft == tcStop {
				return
			}
			r.skip(ft, depth-1)
		}
	default:
		r.bad = true
	}
}

func (r *tcReader) bytes(n int) {
	if n < 0 || n > len(r.b)-r.off {
		r.bad = true
		return
	}
	r.off += n
}

// pqHeaderDepth is the deepest nesting of a header's values read.
const pqHeaderDepth = 32

// parse reads a PageHeader from the start of b: its length in bytes, false
// when it is not well formed. A field of another type than its own is
// skipped, as Thrift's generated readers do.
func (h *pqPageHeader) parse(b []byte) (int, bool) {
	r := tcReader{b: b}
	var id int16
	for !r.bad {
		var t byte
		if t, id = r.field(id); r.bad || t == tcStop {
			break
		}
		switch {
		case id == 1 && t == tcI32:
			h.typ, h.set = r.i32(), h.set|pqHdrType
		case id == 2 && t == tcI32:
			h.usize, h.set = r.i32(), h.set|pqHdrUSize
		case id == 3 && t == tcI32:
			h.csize, h.set = r.i32(), h.set|pqHdrCSize
		case id == 4 && t == tcI32:
			h.crc, h.set = uint32(r.i32()), h.set|pqHdrCRC
		case id == 5 && t == tcStruct:
			h.set |= pqHdrData
			d := &h.data
			d.set = 0
			r.fields(func(id int16, t byte) bool {
				if t != tcI32 || id < 1 || id > 4 {
					return false
				}
				v := r.i32()
				switch id {
				case 1:
					d.nvals = v
				case 2:
					d.enc = v
				case 3:
					d.defEnc = v
				case 4:
					d.repEnc = v
				}
				d.set |= 1 << (id - 1)
				return true
			})
		case id == 7 && t == tcStruct:
			h.set |= pqHdrDict
			d := &h.dict
			d.set = 0
			r.fields(func(id int16, t byte) bool {
				if t != tcI32 || id < 1 || id > 2 {
					return false
				}
				if v := r.i32(); id == 1 {
					d.nvals = v
				} else {
					d.enc = v
				}
				d.set |= 1 << (id - 1)
				return true
			})
		case id == 8 && t == tcStruct:
			h.set |= pqHdrV2
			d := &h.v2
			d.set, d.compressed = 0, true
			r.fields(func(id int16, t byte) bool {
				if id == 7 && (t == tcTrue || t == tcFalse) {
					d.compressed = t == tcTrue
					return true
				}
				if t != tcI32 || id < 1 || id > 6 {
					return false
				}
				v := r.i32()
				switch id {
				case 1:
					d.nvals = v
				case 2:
					d.nnulls = v
				case 3:
					d.nrows = v
				case 4:
					d.enc = v
				case 5:
					d.dlen = v
				case 6:
					d.rlen = v
				}
				d.set |= 1 << (id - 1)
				return true
			})
		default:
			r.skip(t, pqHeaderDepth)
		}
	}
	return r.off, !r.bad
}

// fields reads a struct's fields: each by read when it takes it (the
// value read), else skipped.
func (r *tcReader) fields(read func(id int16, t byte) bool) {
	var id int16
	for !r.bad {
		var t byte
		if t, id = r.field(id); r.bad || t == tcStop {
			return
		}
		if !read(id, t) {
			r.skip(t, pqHeaderDepth-1)
		}
	}
}

var _ file.PageReader = (*pqPageReader)(nil)
