package readers

import (
	"hash/crc32"
	"io"
	"sort"
	"sync"

	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/metadata"
)

// Page checksums. A page header may hold crc (PageHeader's field 4: the
// CRC-32, IEEE, of the page's bytes as they lie after the header, that is
// compressed), for dictionary pages and both kinds of data page, as
// parquet-mr, Spark and pyarrow (write_page_checksum=True) write it;
// arrow-go neither writes nor checks it. crlbatch checks it on every way a
// Parquet object is read: a column chunk's pages are checked, all of them,
// the first time any of the chunk's bytes are read, whoever reads them
// (arrow-go's readers through the object's ReaderAt, pqChecked; the
// direct way's own page reader, pqPageReader, through the same pqChecked),
// before any of its values is used. A mismatch fails the object as bad
// data naming the row (the first of the batch being read), the column and
// the page (a *pqChecksumError under the DataError). A header without a
// crc is read as before; nothing else is read for the check (an object
// held in memory is checked in place; arrow-go reads an object read by
// ranges a column chunk at a time, in one read, which is checked before it
// is handed on).

// pqChecked is the ReaderAtSeeker a Parquet object is read through once
// its footer is read (index): every read that reaches a column chunk has
// the chunk's pages checked first, and fails with the chunk's
// *pqChecksumError when one does not match.
type pqChecked struct {
	parquet.ReaderAtSeeker
	mem []byte // the object's bytes when it is held in memory, else nil

	mu     sync.Mutex
	chunks []pqCRCChunk // by start
	index  map[[2]int]int
}

// pqCRCChunk is one column chunk's bytes [start, end) and what its check
// found.
type pqCRCChunk struct {
	start, end int64
	rg         int
	checked    bool
	err        *pqChecksumError
}

// newPQChecked returns r to be read through a pqChecked; mem is r's bytes
// when r holds them (pqObjectBytes), else nil.
func newPQChecked(r parquet.ReaderAtSeeker, mem []byte) *pqChecked {
	return &pqChecked{ReaderAtSeeker: r, mem: mem}
}

// setFooter learns the column chunks' places from the file's footer:
// reads until then (the footer's own) are not checked. A chunk that is
// encrypted, or whose place the footer gives out of the object, is not
// checked (the reader fails on it, or reads it, as before).
func (c *pqChecked) setFooter(md *metadata.FileMetaData, size int64) {
	type place struct {
		rg, col    int
		start, end int64
	}
	var places []place
	for g := range md.NumRowGroups() {
		rg := md.RowGroup(g)
		for col := range rg.NumColumns() {
			cc, err := rg.ColumnChunk(col)
			if err != nil || cc.CryptoMetadata() != nil {
				continue
			}
			start := pqChunkStart(cc)
			n := cc.TotalCompressedSize()
			if start < 0 || n <= 0 || start > size || n > size-start {
				continue
			}
			places = append(places, place{g, col, start, start + n})
		}
	}
	sort.SliceStable(places, func(a, b int) bool { return places[a].start < places[b].start })
	c.mu.Lock()
	defer c.mu.Unlock()
	c.chunks = make([]pqCRCChunk, len(places))
	c.index = make(map[[2]int]int, len(places))
	for i, p := range places {
		c.chunks[i] = pqCRCChunk{start: p.start, end: p.end, rg: p.rg}
		c.index[[2]int{p.rg, p.col}] = i
	}
}

// ReadAt reads from the object; a read reaching a column chunk not yet
// checked has it checked first (from the bytes read when they cover it,
// else from the object's bytes in memory, else by reading it whole), and
// fails with its *pqChecksumError, reading nothing, when one of its pages
// does not match.
func (c *pqChecked) ReadAt(p []byte, off int64) (int, error) {
	n, err := c.ReaderAtSeeker.ReadAt(p, off)
	if n == 0 {
		return n, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	end := off + int64(n)
	// The first chunk that may reach [off, end): the last starting at or
	// before off.
	i := sort.Search(len(c.chunks), func(i int) bool { return c.chunks[i].start > off })
	if i > 0 {
		i--
	}
	for ; i < len(c.chunks) && c.chunks[i].start < end; i++ {
		ch := &c.chunks[i]
		if ch.end <= off {
			continue
		}
		if !ch.checked {
			var b []byte
			switch {
			case ch.start >= off && ch.end <= end:
				b = p[ch.start-off : ch.end-off]
			case c.mem != nil:
				b = c.mem[ch.start:ch.end]
			default:
				b = make([]byte, ch.end-ch.start)
				if k, rerr := c.ReaderAtSeeker.ReadAt(b, ch.start); k != len(b) {
					if rerr == nil {
						rerr = io.ErrUnexpectedEOF
					}
					return n, rerr // the store's error, as the read's own
				}
			}
			ch.err, ch.checked = pqCheckPages(b, ch.rg), true
		}
		if ch.err != nil {
			// No bytes: a reader may use those it got and drop the error.
			return 0, ch.err
		}
	}
	return n, err
}

// chunk checks the column chunk col of row group rg, from the object's
// bytes in memory, for a reader that reads them in place (pqPageReader):
// its *pqChecksumError, or nil.
func (c *pqChecked) chunk(rg, col int) error {
	if c == nil || c.mem == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	i, ok := c.index[[2]int{rg, col}]
	if !ok {
		return nil
	}
	ch := &c.chunks[i]
	if !ch.checked {
		ch.err, ch.checked = pqCheckPages(c.mem[ch.start:ch.end], ch.rg), true
	}
	if ch.err != nil {
		return ch.err
	}
	return nil
}

// pqChunkStart is where arrow-go reads column chunk cc from (its
// RowGroupReader, and so every reader here): the dictionary page when the
// footer places one before the data pages, else the first data page.
func pqChunkStart(cc *metadata.ColumnChunkMetaData) int64 {
	start := cc.DataPageOffset()
	if cc.HasDictionaryPage() && cc.DictionaryPageOffset() > 0 && start > cc.DictionaryPageOffset() {
		start = cc.DictionaryPageOffset()
	}
	return start
}

// pqCheckPages checks the crc of every page of the column chunk b (of row
// group rg) whose header holds one: the first mismatch, or nil. It stops,
// finding nothing, at a header it cannot read or a page running past b:
// the chunk's reader meets that damage itself.
func pqCheckPages(b []byte, rg int) *pqChecksumError {
	for page := 1; len(b) > 0; page++ {
		var h pqPageHeader
		hl, ok := h.parse(b[:min(len(b), pqPageHeaderMax)])
		if !ok || h.set&pqHdrCSize == 0 || h.csize < 0 || int64(h.csize) > int64(len(b)-hl) {
			return nil
		}
		body := b[hl : hl+int(h.csize)]
		b = b[hl+int(h.csize):]
		if h.set&pqHdrCRC != 0 && (h.typ == pqPageDict || h.typ == pqPageData || h.typ == pqPageDataV2) {
			if sum := crc32.ChecksumIEEE(body); sum != h.crc {
				return &pqChecksumError{rg: rg, page: page, crc: h.crc, sum: sum}
			}
		}
	}
	return nil
}
