package readers

import (
	"bytes"
	"hash/crc32"
	"testing"

	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
)

// TestPQWithCRCs: a file given page checksums by pqWithCRCs (every layout
// and codec of pqPageFiles, and convert's default form) is read by
// arrow-go's page reader and by DecodeParquet into what the file without
// them gives, and each of its page headers holds the CRC-32 of its page.
func TestPQWithCRCs(t *testing.T) {
	files := pqPageFiles(t)
	files["convert"] = convertWith(t, jsonNumberRows(3*parquetBatchRows), []parquet.WriterProperty{parquet.WithMaxRowGroupLength(parquetBatchRows)})
	files["convert, uncompressed"] = convertWith(t, jsonNumberRows(parquetBatchRows), []parquet.WriterProperty{parquet.WithCompression(compress.Codecs.Uncompressed)})
	opts := Options{Components: []string{"success", "progress", "absent"}}
	for name, data := range files {
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
			start := cc.DataPageOffset()
			if cc.HasDictionaryPage() && cc.DictionaryPageOffset() > 0 && start > cc.DictionaryPageOffset() {
				start = cc.DictionaryPageOffset()
			}
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
