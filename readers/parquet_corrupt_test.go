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
// first row of the damaged row group) and the Parquet reader's cause once,
// read as JSON lines or the direct way, from memory or through a ReaderAt;
// a store failing under the reader is its own error, not a DataError.
func TestParquetCorruptPages(t *testing.T) {
	t.Parallel()
	const url = "mem://b/x.parquet"
	data := convertWith(t, jsonNumberRows(3*parquetBatchRows), []parquet.WriterProperty{parquet.WithMaxRowGroupLength(parquetBatchRows)})
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
		{"data page", flipped(data, stepEnd-40, stepEnd-8), stepRow + 1, "parquet: could not decompress page: "},
		{"dictionary page", flipped(data, runID.DataPageOffset()-6, runID.DataPageOffset()-1), runRow + 1, "parquet: "},
		{"page header", flipped(data, step.DataPageOffset(), step.DataPageOffset()+8), stepRow + 1, "parquet: "},
		{"row group cut short", append(bytes.Clone(data[:step.DataPageOffset()+20]), data[stepEnd+200:]...), stepRow + 1, "parquet: "},
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
}
