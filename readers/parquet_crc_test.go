package readers

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
)

// TestPQWithCRCs: a file given page checksums by pqWithCRCs (every layout
// and codec of pqPageFiles, and convert's default form, their own
// checksums taken out first) is read by arrow-go's page reader and by
// DecodeParquet into what the file without them gives, and each of its
// page headers holds the CRC-32 of its page.
func TestPQWithCRCs(t *testing.T) {
	files := pqPageFiles(t)
	files["convert"] = convertWith(t, jsonNumberRows(3*parquetBatchRows), []parquet.WriterProperty{parquet.WithMaxRowGroupLength(parquetBatchRows)})
	files["convert, uncompressed"] = convertWith(t, jsonNumberRows(parquetBatchRows), []parquet.WriterProperty{parquet.WithCompression(compress.Codecs.Uncompressed)})
	opts := Options{Components: []string{"success", "progress", "absent"}}
	for name, data := range files {
		data = pqWithoutCRCs(t, data) // convert's files have them
		withCRC := pqWithCRCs(t, data, pqAllCRCs)
		if len(withCRC) <= len(data) {
			t.Fatalf("%s: %d bytes with checksums, %d without", name, len(withCRC), len(data))
		}
		var enc [2][]byte
		for i, d := range [][]byte{data, withCRC} {
			obj, err := DecodeParquet("mem://b/x.parquet", "x.parquet", bytes.NewReader(d), skyfallParquetFields, opts)
			if err != nil {
				t.Fatalf("%s (%d): %v", name, i, err)
			}
			if enc[i], err = obj.AppendEncoding(nil); err != nil {
				t.Fatal(err)
			}
			obj.Release()
		}
		if !bytes.Equal(enc[0], enc[1]) {
			t.Errorf("%s: decoded differently with page checksums", name)
		}
		pqEachPage(t, withCRC, func(g, c, k int, h []tcField, body []byte) {
			if f := tcGet(h, 4); f == nil || uint32(f.val.(int64)) != crc32.ChecksumIEEE(body) {
				t.Fatalf("%s, row group %d, column %d, page %d: crc field %v, want %08x", name, g, c, k, f, crc32.ChecksumIEEE(body))
			}
		})
		a, b := pqChunkPages(t, data), pqChunkPages(t, withCRC)
		if len(a) != len(b) {
			t.Fatalf("%s: %d column chunks, %d with checksums", name, len(a), len(b))
		}
		for i := range a {
			if len(a[i]) != len(b[i]) {
				t.Fatalf("%s, chunk %d: %d pages, %d with checksums", name, i, len(a[i]), len(b[i]))
			}
			for k := range a[i] {
				if a[i][k] != b[i][k] {
					t.Fatalf("%s, chunk %d, page %d:\n%.200s\nwith checksums\n%.200s", name, i, k, a[i][k], b[i][k])
				}
			}
		}
	}
}

// pqChunkPages reads every column chunk of data with arrow-go's page
// reader: each chunk's page summaries.
func pqChunkPages(t *testing.T, data []byte) [][]string {
	t.Helper()
	pf, err := file.NewParquetReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	defer pf.Close()
	var out [][]string
	for g := range pf.NumRowGroups() {
		for c := range pf.MetaData().Schema.NumColumns() {
			pr, err := pf.RowGroup(g).GetColumnPageReader(c)
			if err != nil {
				t.Fatal(err)
			}
			pages, err := pqPagesOf(pr)
			if err != nil {
				t.Fatalf("row group %d, column %d: %v", g, c, err)
			}
			out = append(out, pages)
		}
	}
	return out
}

// pqEachPage calls fn with every page of data: its row group, column,
// position in the column chunk (from 0), header and bytes.
func pqEachPage(t *testing.T, data []byte, fn func(g, c, k int, h []tcField, body []byte)) {
	t.Helper()
	pf, err := file.NewParquetReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	defer pf.Close()
	for g := range pf.NumRowGroups() {
		for c := range pf.MetaData().Schema.NumColumns() {
			cc, err := pf.MetaData().RowGroup(g).ColumnChunk(c)
			if err != nil {
				t.Fatal(err)
			}
			start := pqChunkStart(cc)
			end := start + cc.TotalCompressedSize()
			for k, off := 0, start; off < end; k++ {
				h, hl, ok := tcDecodeStruct(data[off:end])
				if !ok {
					t.Fatalf("row group %d, column %d: page header at %d", g, c, off)
				}
				cs := tcGet(h, 3).val.(int64)
				fn(g, c, k, h, data[off+int64(hl):off+int64(hl)+cs])
				off += int64(hl) + cs
			}
		}
	}
}

// TestParquetPageChecksums: a page whose header has a crc (PageHeader's
// field 4) that is not the CRC-32 of the page's bytes (a byte of an
// uncompressed data page changed, a byte of a compressed dictionary page,
// of a components map's page or of a components struct's, or the crc
// field itself) fails the object
// as bad data on every way it is read: the direct way from memory
// (pqPageReader) and through a ReaderAt (arrow-go's column chunk readers
// over pqChecked), and as JSON lines (the general way, and the record
// protocols': arrow-go's record reader) from memory and through a
// ReaderAt. Each gives a *DataError naming the object, the first row of
// the batch reading the damaged column chunk, the column and "page
// checksum mismatch" with the row group and the page. The same change
// without page checksums reads as before (an uncompressed page's other
// value unseen).
func TestParquetPageChecksums(t *testing.T) {
	t.Parallel()
	const url = "mem://b/x.parquet"
	opts := Options{Components: []string{"success", "progress"}}
	groups := []parquet.WriterProperty{parquet.WithMaxRowGroupLength(parquetBatchRows)}
	plain := pqWithoutCRCs(t, convertForm(t, interleavedRows(3*parquetBatchRows), groups, true))
	data := pqWithCRCs(t, plain, pqAllCRCs)
	// The components as convert writes them where it can: a struct.
	structs := pqWithCRCs(t, pqWithoutCRCs(t, convertWith(t, interleavedRows(3*parquetBatchRows), groups)), pqAllCRCs)
	success, _ := pqChunk(t, structs, 0, "components.success")
	successEnd := success.DataPageOffset() + success.TotalCompressedSize()
	reward, rewardRows := pqChunk(t, data, 1, "reward")
	runID, runIDRows := pqChunk(t, data, 2, "run_id")
	if reward.Compression() != compress.Codecs.Uncompressed || runID.Compression() == compress.Codecs.Uncompressed || !runID.HasDictionaryPage() {
		t.Fatalf("reward %v, run_id %v (dictionary %v): want reward uncompressed, run_id compressed with a dictionary",
			reward.Compression(), runID.Compression(), runID.HasDictionaryPage())
	}
	pf, err := file.NewParquetReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	sc := pf.MetaData().Schema
	rewardCol, mapValues := sc.ColumnIndexByName("reward"), sc.ColumnIndexByName("components.key_value.value")
	values, err := pf.MetaData().RowGroup(0).ColumnChunk(mapValues)
	pf.Close()
	if err != nil || mapValues < 0 {
		t.Fatalf("components' values: column %d, %v", mapValues, err)
	}
	rewardEnd := reward.DataPageOffset() + reward.TotalCompressedSize()
	valuesEnd := values.DataPageOffset() + values.TotalCompressedSize()
	badCRC := pqWithCRCs(t, plain, func(rg, col, page int, sum uint32) (uint32, bool) {
		if rg == 1 && col == rewardCol && page == 0 {
			return sum ^ 1<<31, true
		}
		return sum, true
	})
	cases := []struct {
		name string
		data []byte
		row  int64
		col  string
		page string // the page named, "" for any
	}{
		{"a byte of an uncompressed data page", flipped(data, rewardEnd-3, rewardEnd-2), rewardRows + 1, "reward", " (row group 2, page 1 of the column chunk: crc "},
		{"the crc field", badCRC, rewardRows + 1, "reward", " (row group 2, page 1 of the column chunk: crc "},
		{"a byte of a compressed dictionary page", flipped(data, runID.DataPageOffset()-2, runID.DataPageOffset()-1), runIDRows + 1, "run_id", " (row group 3, page 1 of the column chunk: crc "},
		{"a byte of a components map's page", flipped(data, valuesEnd-2, valuesEnd-1), 1, "components", ""},
		{"a byte of a components struct's page", flipped(structs, successEnd-2, successEnd-1), 1, "components", ""},
	}
	ways := []struct {
		name string
		read func(data []byte) error
	}{
		{"direct, in memory", func(d []byte) error {
			_, err := DecodeParquet(url, "x.parquet", bytes.NewReader(d), skyfallParquetFields, opts)
			return err
		}},
		{"direct, through a ReaderAt", func(d []byte) error {
			_, err := DecodeParquet(url, "x.parquet", opaqueReader{bytes.NewReader(d)}, skyfallParquetFields, opts)
			return err
		}},
		{"JSON lines, in memory", func(d []byte) error {
			_, err := parquetText(t, d, skyfallParquetFields)
			return err
		}},
		{"JSON lines, through a ReaderAt", func(d []byte) error {
			r, err := ParquetLines(url, opaqueReader{bytes.NewReader(d)}, skyfallParquetFields)
			if err != nil {
				return err
			}
			defer r.Close()
			_, err = io.Copy(io.Discard, r)
			return err
		}},
	}
	for _, c := range cases {
		for _, w := range ways {
			err := w.read(c.data)
			var de *DataError
			if !errors.As(err, &de) {
				t.Errorf("%s, %s: %v, want a *DataError", c.name, w.name, err)
				continue
			}
			want := "column " + c.col + ": parquet: page checksum mismatch" + c.page
			if de.URL != url || int64(de.Line) != c.row || !de.Row || !strings.HasPrefix(de.Msg, want) || strings.Count(de.Msg, "parquet: ") != 1 {
				t.Errorf("%s, %s: %v, want %s: row %d: %s…", c.name, w.name, err, url, c.row, want)
			}
		}
	}
	// Without page checksums, the changed byte of the uncompressed page
	// reads as another reward, as before, on every way.
	plainReward, _ := pqChunk(t, plain, 1, "reward")
	plainEnd := plainReward.DataPageOffset() + plainReward.TotalCompressedSize()
	for _, w := range ways {
		if err := w.read(flipped(plain, plainEnd-3, plainEnd-2)); err != nil {
			t.Errorf("without checksums, %s: %v", w.name, err)
		}
		if err := w.read(data); err != nil {
			t.Errorf("with checksums, undamaged, %s: %v", w.name, err)
		}
	}
}

// TestParquetPageChecksumsChunkReaders: with the paged mode off, the
// number and string columns read by arrow-go's column chunk readers over
// pqPageReader (whose ReadBatch drops the page reader's error: the
// readers take it from Err) fail a mismatch the same way.
func TestParquetPageChecksumsChunkReaders(t *testing.T) {
	defer func() { pqPagedStrings, pqPagedNumbers, pqPagedBools = true, true, true }()
	pqPagedStrings, pqPagedNumbers, pqPagedBools = false, false, false
	const url = "mem://b/x.parquet"
	data := pqWithCRCs(t, convertWith(t, interleavedRows(3*parquetBatchRows), []parquet.WriterProperty{parquet.WithMaxRowGroupLength(parquetBatchRows)}), pqAllCRCs)
	reward, rewardRows := pqChunk(t, data, 1, "reward")
	runID, runIDRows := pqChunk(t, data, 2, "run_id")
	rewardEnd := reward.DataPageOffset() + reward.TotalCompressedSize()
	for _, c := range []struct {
		data []byte
		row  int64
		col  string
	}{
		{flipped(data, rewardEnd-3, rewardEnd-2), rewardRows + 1, "reward"},
		{flipped(data, runID.DataPageOffset()-2, runID.DataPageOffset()-1), runIDRows + 1, "run_id"},
	} {
		_, err := DecodeParquet(url, "x.parquet", bytes.NewReader(c.data), skyfallParquetFields, Options{Components: []string{"success"}})
		de := asDataError(t, err)
		if want := "column " + c.col + ": parquet: page checksum mismatch ("; int64(de.Line) != c.row || !de.Row || !strings.HasPrefix(de.Msg, want) {
			t.Errorf("%v, want row %d: %s…", err, c.row, want)
		}
	}
}

// pqWithChunkSize returns the Parquet file data with the footer's
// total_compressed_size of column col of row group rg set to size (a
// chunk the footer says runs past the file's end, or short of its pages).
func pqWithChunkSize(t *testing.T, data []byte, rg, col int, size int64) []byte {
	t.Helper()
	flen := int(binary.LittleEndian.Uint32(data[len(data)-8:]))
	fstart := len(data) - 8 - flen
	footer, n, ok := tcDecodeStruct(data[fstart : len(data)-8])
	if !ok || n != flen {
		t.Fatalf("footer of %d bytes: read %d, %v", flen, n, ok)
	}
	cc := tcGet(tcGet(footer, 4).val.(*tcListV).elems[rg].([]tcField), 1).val.(*tcListV).elems[col].([]tcField)
	meta := tcGet(cc, 3)
	meta.val = tcPut(meta.val.([]tcField), 7, tcI64, size)
	out := append([]byte(nil), data[:fstart]...)
	out = tcAppendStruct(out, footer)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(out)-fstart))
	return append(out, "PAR1"...)
}

// TestParquetSetUpFailureNamesColumn: a failure while the record reader
// opens the first row group's column chunks (the footer says the step
// column's chunk runs past the file's end: arrow-go reads a chunk of an
// object read by ranges whole, and fails) is named as a later batch's is:
// a *DataError at row 1 naming the column that fails alone, as JSON lines
// or the direct way (which hands the object to them). Before, it was "not
// a readable Parquet file: …", naming no row or column. (From memory
// arrow-go reads the chunk's pages as far as its values go, and the same
// file reads.)
func TestParquetSetUpFailureNamesColumn(t *testing.T) {
	t.Parallel()
	const url = "mem://b/x.parquet"
	data := convertWith(t, interleavedRows(parquetBatchRows), nil)
	pf, err := file.NewParquetReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	step := pf.MetaData().Schema.ColumnIndexByName("step")
	pf.Close()
	if step < 0 {
		t.Fatal("no step column")
	}
	bad := pqWithChunkSize(t, data, 0, step, int64(len(data)))
	for name, read := range map[string]func() error{
		"JSON lines, through a ReaderAt": func() error {
			_, err := ParquetLines(url, opaqueReader{bytes.NewReader(bad)}, skyfallParquetFields)
			return err
		},
		"direct, through a ReaderAt": func() error {
			_, err := DecodeParquet(url, "x.parquet", opaqueReader{bytes.NewReader(bad)}, skyfallParquetFields, Options{})
			return err
		},
	} {
		err := read()
		var de *DataError
		if !errors.As(err, &de) || de.URL != url || de.Line != 1 || !de.Row || !strings.HasPrefix(de.Msg, "column step: parquet: ") {
			t.Errorf("%s: %v, want %s: row 1: column step: parquet: …", name, err, url)
		}
	}
}

// TestConvertWritesPageChecksums: every page header of a file crlbatch
// convert writes (its default form, every codec, several row groups, the
// components map, dictionary and plain pages) holds the CRC-32 of its
// page, and the file is the one arrow-go wrote with that field added
// (taking the checksums out again gives arrow-go's file back, byte for
// byte: pqSetCRCs moves nothing else).
func TestConvertWritesPageChecksums(t *testing.T) {
	t.Parallel()
	rows := interleavedRows(3 * parquetBatchRows)
	for _, codec := range ConvertCompressions {
		var withCRC, arrowGo bytes.Buffer
		if err := ConvertToParquetCompressed("mem://b/x.jsonl", strings.NewReader(rows), &withCRC, 0, 0, codec); err != nil {
			t.Fatal(err)
		}
		// arrow-go's own file: the converter's writer without pqSetCRCs.
		c := &converter{index: map[string]int{}, extra: []parquet.WriterProperty{parquet.WithCompression(convertCodecs[codec])}}
		open := func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(rows)), nil }
		opts, _ := RecordOptions{IdentityFields: []string{}, MaxRuns: -1}.normalize()
		if _, err := eachRecord("mem://b/x.jsonl", open, opts, c.row); err != nil {
			t.Fatal(err)
		}
		if _, err := c.write("mem://b/x.jsonl", open, opts, &arrowGo); err != nil {
			t.Fatal(err)
		}
		pages := 0
		pqEachPage(t, withCRC.Bytes(), func(g, col, k int, h []tcField, body []byte) {
			pages++
			if f := tcGet(h, 4); f == nil || uint32(f.val.(int64)) != crc32.ChecksumIEEE(body) {
				t.Fatalf("%s: row group %d, column %d, page %d: crc field %v, want %08x", codec, g, col, k, f, crc32.ChecksumIEEE(body))
			}
		})
		if pages < 20 {
			t.Errorf("%s: %d pages", codec, pages)
		}
		if back := pqWithoutCRCs(t, withCRC.Bytes()); !bytes.Equal(back, arrowGo.Bytes()) {
			t.Errorf("%s: the file without its checksums is not arrow-go's (%d bytes, arrow-go's %d)", codec, len(back), arrowGo.Len())
		}
	}
}
