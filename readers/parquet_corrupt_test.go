package readers

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
)

// pqChunk is where column col of row group rg of the Parquet file data
// lies, and the number of rows before that row group.
func pqChunk(t *testing.T, data []byte, rg int, col string) (chunk *metadata.ColumnChunkMetaData, rowsBefore int64) {
	t.Helper()
	pf, err := file.NewParquetReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	defer pf.Close()
	for g := range rg {
		rowsBefore += pf.MetaData().RowGroup(g).NumRows()
	}
	g := pf.MetaData().RowGroup(rg)
	i := g.Schema.ColumnIndexByName(col)
	if i < 0 {
		t.Fatalf("no column %s", col)
	}
	chunk, err = g.ColumnChunk(i)
	if err != nil {
		t.Fatal(err)
	}
	return chunk, rowsBefore
}

// flipped is data with bytes lo..hi XORed with 0x5a.
func flipped(data []byte, lo, hi int64) []byte {
	out := bytes.Clone(data)
	for i := lo; i < hi; i++ {
		out[i] ^= 0x5a
	}
	return out
}

// opaqueReader hides a *bytes.Reader's type, as a store's ReaderAt would.
type opaqueReader struct{ *bytes.Reader }

// failingReader fails every read from offset below, as a store failing
// under the Parquet reader.
type failingReader struct {
	*bytes.Reader
	below int64
}

var errStoreDown = errors.New("store down")

func (f failingReader) ReadAt(p []byte, off int64) (int, error) {
	if off < f.below {
		return 0, errStoreDown
	}
	return f.Reader.ReadAt(p, off)
}

// TestParquetCorruptPages: a Parquet file whose pages are damaged (bytes
// flipped in a data page, a dictionary page, a page header; a row group
// cut short, the footer kept; a footer length past the start) is a
// *DataError naming the object, the first row of the batch that failed (the
// first row of the damaged row group), the damaged column (the first, in
// schema order, that fails read alone; none for a footer) and the Parquet
// reader's cause once, read as JSON lines (into skyfall's decoder or the
// record protocols') or the direct way, from memory or through a
// ReaderAt; a store failing under the reader, or only when the columns are
// read again one by one, is its own error, not a DataError.
func TestParquetCorruptPages(t *testing.T) {
	t.Parallel()
	const url = "mem://b/x.parquet"
	// Without page checksums (a writer's default but parquet-mr's): the
	// damage is met by the reader itself (TestParquetPageChecksums: with
	// them, by the checksum first).
	data := pqWithoutCRCs(t, convertWith(t, jsonNumberRows(3*parquetBatchRows), []parquet.WriterProperty{parquet.WithMaxRowGroupLength(parquetBatchRows)}))
	step, stepRow := pqChunk(t, data, 1, "step")
	runID, runRow := pqChunk(t, data, 2, "run_id")
	if step.Compression() == 0 || !runID.HasDictionaryPage() {
		t.Fatalf("step %v, run_id dictionary %v: want a compressed step and a dictionary of run_id", step.Compression(), runID.HasDictionaryPage())
	}
	stepEnd := step.DataPageOffset() + step.TotalCompressedSize()
	footerLen := bytes.Clone(data)
	binary.LittleEndian.PutUint32(footerLen[len(data)-8:], uint32(2*len(data)))
	cases := []struct {
		name  string
		data  []byte
		row   int64 // 0: the error names no row
		cause string
	}{
		{"data page", flipped(data, stepEnd-40, stepEnd-8), stepRow + 1, "column step: parquet: could not decompress page: "},
		{"dictionary page", flipped(data, runID.DataPageOffset()-6, runID.DataPageOffset()-1), runRow + 1, "column run_id: parquet: "},
		{"page header", flipped(data, step.DataPageOffset(), step.DataPageOffset()+8), stepRow + 1, "column step: parquet: "},
		{"row group cut short", append(bytes.Clone(data[:step.DataPageOffset()+20]), data[stepEnd+200:]...), stepRow + 1, "column step: parquet: "},
		{"footer length past the start", footerLen, 0, "not a readable Parquet file: parquet: file is smaller than indicated metadata size"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var msgs []string
			for _, r := range []parquet.ReaderAtSeeker{bytes.NewReader(c.data), opaqueReader{bytes.NewReader(c.data)}} {
				_, err := DecodeParquet(url, "x.parquet", r, skyfallParquetFields, Options{})
				de := asDataError(t, err)
				if de.URL != url || int64(de.Line) != c.row || (c.row > 0 && !de.Row) || !strings.HasPrefix(de.Msg, c.cause) ||
					strings.Count(de.Msg, "parquet: ") != 1 || strings.Contains(de.Msg, "read: ") {
					t.Errorf("%T: %v (row %d: %v), want row %d and %q once", r, err, de.Line, de.Row, c.row, c.cause)
				}
				msgs = append(msgs, err.Error())
				if _, err := parquetText(t, c.data, skyfallParquetFields); err == nil || err.Error() != msgs[0] {
					t.Errorf("as JSON lines: %v, want %s", err, msgs[0])
				}
			}
			if msgs[0] != msgs[1] {
				t.Errorf("from memory %s, through a ReaderAt %s", msgs[0], msgs[1])
			}
			// The record protocols' way: their decoder over the JSON lines.
			lines, err := ParquetLines(url, opaqueReader{bytes.NewReader(c.data)}, skyfallParquetFields)
			if err == nil {
				_, err = DecodeRecords(url, "x.parquet", lines, RecordOptions{IdentityFields: []string{"run_id"}})
				lines.Close()
			}
			if err == nil || err.Error() != msgs[0] {
				t.Errorf("as records: %v, want %s", err, msgs[0])
			}
		})
	}
	// A store failing at the first column chunk (the footer read) or at
	// the damaged one: its error, never a DataError, whichever way.
	for _, below := range []int64{int64(len(data)), stepEnd} {
		r := failingReader{bytes.NewReader(data), below}
		_, err := DecodeParquet(url, "x.parquet", r, skyfallParquetFields, Options{})
		lines, lerr := ParquetLines(url, r, skyfallParquetFields)
		if lerr == nil {
			_, lerr = io.ReadAll(lines)
			lines.Close()
		}
		for i, err := range []error{err, lerr} {
			var de *DataError
			if !errors.Is(err, errStoreDown) || errors.As(err, &de) {
				t.Errorf("store failing below %d (%d): %v, want %v and no DataError", below, i, err, errStoreDown)
			}
		}
	}
	// A store failing only when the damaged column chunk is read again,
	// column by column after the failure: its error, not a DataError.
	damaged := flipped(data, stepEnd-40, stepEnd-8)
	for _, whole := range []bool{false, true} {
		r := &secondReadFails{ReaderAt: bytes.NewReader(damaged), size: int64(len(damaged)), lo: step.DataPageOffset(), hi: stepEnd, seen: map[int64]bool{}}
		var err error
		if whole {
			_, err = DecodeParquet(url, "x.parquet", r, skyfallParquetFields, Options{})
		} else {
			var lines io.ReadCloser
			if lines, err = ParquetLines(url, r, skyfallParquetFields); err == nil {
				_, err = io.ReadAll(lines)
				lines.Close()
			}
		}
		var de *DataError
		if !errors.Is(err, errStoreDown) || errors.As(err, &de) {
			t.Errorf("store failing on a read again (DecodeParquet %v): %v, want %v and no DataError", whole, err, errStoreDown)
		}
	}
}

// secondReadFails reads an object, but fails a read at an offset in
// [lo, hi) that was read before (a store failing when a column chunk is
// read again).
type secondReadFails struct {
	io.ReaderAt
	size   int64
	lo, hi int64
	pos    int64
	seen   map[int64]bool
}

func (s *secondReadFails) ReadAt(p []byte, off int64) (int, error) {
	if off >= s.lo && off < s.hi {
		if s.seen[off] {
			return 0, errStoreDown
		}
		s.seen[off] = true
	}
	return s.ReaderAt.ReadAt(p, off)
}

func (s *secondReadFails) Seek(off int64, whence int) (int64, error) {
	switch whence {
	case io.SeekCurrent:
		off += s.pos
	case io.SeekEnd:
		off += s.size
	}
	s.pos = off
	return off, nil
}

// TestParquetDamagedColumnExact: the column named is the one whose damage
// the failing batch reached, not an earlier column of the schema damaged
// in a later batch of the same row group (each column is read alone only
// through the failing batch's rows); a failure no column has alone names
// none.
func TestParquetDamagedColumnExact(t *testing.T) {
	t.Parallel()
	const url = "mem://b/x.parquet"
	// One row group of two batches, pages of 512 rows.
	// Without page checksums: with them a chunk's damage is met when the
	// chunk is first reached, whichever of its pages holds it.
	data := pqWithoutCRCs(t, convertWith(t, jsonNumberRows(2*parquetBatchRows), []parquet.WriterProperty{
		parquet.WithMaxRowGroupLength(2 * parquetBatchRows), parquet.WithDataPageSize(1), parquet.WithBatchSize(512)}))
	step, _ := pqChunk(t, data, 0, "step")
	gamma, _ := pqChunk(t, data, 0, "gamma")
	pf, err := file.NewParquetReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	sc := pf.MetaData().Schema
	if pf.NumRowGroups() != 1 || sc.ColumnIndexByName("step") > sc.ColumnIndexByName("gamma") || step.Compression() == 0 {
		t.Fatalf("%d row groups, step column %d, gamma %d, step compression %v: want one row group, step before gamma, step compressed",
			pf.NumRowGroups(), sc.ColumnIndexByName("step"), sc.ColumnIndexByName("gamma"), step.Compression())
	}
	// The last data page of step holds rows of the second batch only.
	pages, err := pf.RowGroup(0).GetColumnPageReader(sc.ColumnIndexByName("step"))
	if err != nil {
		t.Fatal(err)
	}
	var before, last int64
	for pages.Next() {
		if dp, ok := pages.Page().(file.DataPage); ok {
			before += last
			last = int64(dp.NumValues())
		}
	}
	if err := pages.Err(); err != nil || before < parquetBatchRows {
		t.Fatalf("step's last data page starts at row %d (%v), want one past %d", before+1, err, parquetBatchRows)
	}
	pages.Close()
	pf.Close()
	stepEnd := step.DataPageOffset() + step.TotalCompressedSize()
	// step's last page (the second batch) and gamma's first page header
	// (the first batch) damaged: the first batch fails on gamma.
	both := flipped(flipped(data, stepEnd-40, stepEnd-8), gamma.DataPageOffset(), gamma.DataPageOffset()+8)
	for _, r := range []parquet.ReaderAtSeeker{bytes.NewReader(both), opaqueReader{bytes.NewReader(both)}} {
		_, err := DecodeParquet(url, "x.parquet", r, skyfallParquetFields, Options{})
		if de := asDataError(t, err); de.Line != 1 || !de.Row || !strings.HasPrefix(de.Msg, "column gamma: parquet: ") {
			t.Errorf("%T: %v, want row 1: column gamma: parquet: …", r, err)
		}
	}
	// Only step's last page damaged: the second batch fails on step.
	_, err = DecodeParquet(url, "x.parquet", bytes.NewReader(flipped(data, stepEnd-40, stepEnd-8)), skyfallParquetFields, Options{})
	if de := asDataError(t, err); de.Line != parquetBatchRows+1 || !strings.HasPrefix(de.Msg, "column step: parquet: could not decompress page: ") {
		t.Errorf("%v, want row %d: column step: parquet: could not decompress page: …", err, parquetBatchRows+1)
	}

	// An error of the record reader that no column has alone: today's
	// message, no column named.
	lines, err := ParquetLines(url, bytes.NewReader(data), skyfallParquetFields)
	if err != nil {
		t.Fatal(err)
	}
	defer lines.Close()
	p := lines.(*parquetLines)
	p.rows = parquetBatchRows
	cause := errors.New("parquet: parquet: levels out of step")
	err = p.readError(cause)
	if de := asDataError(t, err); de.Line != parquetBatchRows+1 || !de.Row || de.Msg != "parquet: levels out of step" || !errors.Is(err, cause) {
		t.Errorf("%v, want row %d: parquet: levels out of step", err, parquetBatchRows+1)
	}
}
