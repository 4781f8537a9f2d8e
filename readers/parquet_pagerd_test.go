package readers

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
)

// pqPageSummary is what a reader of a page reads of it.
func pqPageSummary(p file.Page) string {
	switch p := p.(type) {
	case *file.DictionaryPage:
		return fmt.Sprintf("dict n=%d enc=%v %x", p.NumValues(), p.Encoding(), p.Data())
	case *file.DataPageV1:
		return fmt.Sprintf("v1 n=%d enc=%v def=%v rep=%v u=%d %x", p.NumValues(), p.Encoding(), p.DefinitionLevelEncoding(),
			p.RepetitionLevelEncoding(), p.UncompressedSize(), p.Data())
	case *file.DataPageV2:
		return fmt.Sprintf("v2 n=%d nulls=%d rows=%d enc=%v dl=%d rl=%d c=%v u=%d %x", p.NumValues(), p.NumNulls(), p.NumRows(),
			p.Encoding(), p.DefinitionLevelByteLen(), p.RepetitionLevelByteLen(), p.IsCompressed(), p.UncompressedSize(), p.Data())
	}
	return fmt.Sprintf("%T", p)
}

// pqPagesOf reads every page of leaf col in row group rg with pr: their
// summaries, and the reader's error at the end.
func pqPagesOf(pr file.PageReader) ([]string, error) {
	var out []string
	for pr.Next() {
		out = append(out, pqPageSummary(pr.Page()))
	}
	err := pr.Err()
	pr.Close()
	return out, err
}

// pqPageFiles are files of every layout the page reader meets: pagesCases'
// writer variants (version 1 and 2 pages, dictionaries, plain pages,
// dictionaries overflowing to plain pages, no statistics, RLE booleans),
// the components map, and every codec.
//
// Written once per test binary, like pagesCases' files (pqPageFilesMemo);
// each caller gets its own copies.
func pqPageFiles(t *testing.T) map[string][]byte {
	t.Helper()
	return pqPageFilesMemo.get(t, writePQPageFiles)
}

// pqPageFilesMemo holds pqPageFiles' files once all are written.
var pqPageFilesMemo filesMemo

// writePQPageFiles writes pqPageFiles' files.
func writePQPageFiles(t *testing.T) map[string][]byte {
	t.Helper()
	files := pagesCases(t)
	jsonl := interleavedRows(3000)
	for _, codec := range []compress.Compression{compress.Codecs.Zstd, compress.Codecs.Snappy, compress.Codecs.Lz4Raw,
		compress.Codecs.Uncompressed, compress.Codecs.Gzip, compress.Codecs.Brotli} {
		files["map, "+codec.String()] = convertWith(t, jsonl, []parquet.WriterProperty{parquet.WithCompression(codec)})
		files["map, v2, "+codec.String()] = convertWith(t, jsonl, []parquet.WriterProperty{parquet.WithCompression(codec),
			parquet.WithDataPageVersion(parquet.DataPageV2), parquet.WithDataPageSize(512)})
	}
	return files
}

// TestPQPageReader reads every column chunk of pqPageFiles' files with
// pqPageReader and with arrow-go's page reader: the same pages (type,
// counts, encodings, bytes), in the same order, and the same end.
func TestPQPageReader(t *testing.T) {
	for name, data := range pqPageFiles(t) {
		pf, err := file.NewParquetReader(bytes.NewReader(data), file.WithReadProps(pqMemReaderProps))
		if err != nil {
			t.Fatal(err)
		}
		for rg := 0; rg < pf.NumRowGroups(); rg++ {
			for col := 0; col < pf.MetaData().Schema.NumColumns(); col++ {
				own := newPQPageReader(pf, &pqObject{data: data}, rg, col)
				if own == nil {
					t.Fatalf("%s: row group %d, column %d: not read by pqPageReader", name, rg, col)
				}
				got, gerr := pqPagesOf(own)
				ar, err := pf.RowGroup(rg).GetColumnPageReader(col)
				if err != nil {
					t.Fatal(err)
				}
				want, werr := pqPagesOf(ar)
				if gerr != nil || werr != nil {
					t.Fatalf("%s: row group %d, column %d: errors %v, %v", name, rg, col, gerr, werr)
				}
				if len(got) != len(want) || len(got) == 0 {
					t.Fatalf("%s: row group %d, column %d: %d pages, want %d", name, rg, col, len(got), len(want))
				}
				for i := range got {
					if got[i] != want[i] {
						t.Fatalf("%s: row group %d, column %d, page %d:\n%.300s\nwant\n%.300s", name, rg, col, i, got[i], want[i])
					}
				}
			}
		}
		pf.Close()
	}
}

// TestPQPageReaderDamaged reads column chunks with bytes changed at random
// (in the page headers and bodies): pqPageReader reads a page only when
// arrow-go's page reader reads the same page, and ends the column without
// an error only where arrow-go's does; anything else is errParquetIndirect
// (the object read the general way, by arrow-go's reader).
func TestPQPageReaderDamaged(t *testing.T) {
	files := pqPageFiles(t)
	rng := rand.New(rand.NewPCG(1, 2))
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	slices.Sort(names) // the same tries every run (a map's order is not)
	tries := 3000
	if testing.Short() {
		tries = 300
	}
	// Each file's footer is read once: a try changes only bytes of its
	// column chunk's pages, so the damaged copy's footer is the same bytes
	// and its reader is given the metadata read from the original (the
	// footer was read twice a try, 6,000 times in all).
	meta := make(map[string]*metadata.FileMetaData, len(files))
	for name, data := range files {
		pf, err := file.NewParquetReader(bytes.NewReader(data), file.WithReadProps(pqMemReaderProps))
		if err != nil {
			t.Fatal(err)
		}
		meta[name] = pf.MetaData()
		pf.Close()
	}
	same, fewer := 0, 0
	for try := range tries {
		name := names[try%len(names)]
		md := meta[name]
		rg := rng.IntN(md.NumRowGroups())
		col := rng.IntN(md.Schema.NumColumns())
		cc, err := md.RowGroup(rg).ColumnChunk(col)
		if err != nil {
			t.Fatal(err)
		}
		start := pqChunkStart(cc)
		n := cc.TotalCompressedSize()
		// The bytes are changed in place (files holds this test's own
		// copies) and put back at the end of the try.
		data := files[name]
		var changed [3]struct {
			off int64
			b   byte
		}
		nchanged := 0
		for range 1 + rng.IntN(3) {
			// Mostly the first bytes of the chunk's pages: their headers.
			off := start + int64(rng.IntN(int(min(n, 64))))
			if rng.IntN(3) == 0 {
				off = start + rng.Int64N(n)
			}
			changed[nchanged].off, changed[nchanged].b = off, data[off]
			nchanged++
			switch rng.IntN(3) {
			case 0:
				data[off] ^= byte(1 << rng.IntN(8))
			case 1:
				data[off] = byte(rng.IntN(256))
			default:
				data[off] ^= 0x80
			}
		}
		// The footer is not changed: both readers see the same chunks.
		pf, err := file.NewParquetReader(bytes.NewReader(data), file.WithReadProps(pqMemReaderProps), file.WithMetadata(md))
		if err != nil {
			t.Fatal(err)
		}
		own := newPQPageReader(pf, &pqObject{data: data}, rg, col)
		if own == nil {
			t.Fatalf("%s: not read by pqPageReader", name)
		}
		var got []string
		for own.Next() {
			got = append(got, pqPageSummary(own.Page()))
		}
		gerr := own.Err()
		own.Close()
		ar, err := pf.RowGroup(rg).GetColumnPageReader(col)
		if err != nil {
			t.Fatal(err)
		}
		// arrow-go's reader reads as many pages as pqPageReader, and one
		// more when pqPageReader ended the column without an error (it must
		// find the end there too). After pqPageReader's error its next page
		// is not read: nothing below looks at it, and a damaged header made
		// arrow-go's reader try buffers of up to 16 MiB to read it (8.5 GB
		// allocated in all).
		limit := len(got)
		if gerr == nil {
			limit++
		}
		var want []string
		werr := func() (err error) {
			defer func() {
				if r := recover(); r != nil {
					err = fmt.Errorf("panic: %v", r)
				}
			}()
			for len(want) < limit && ar.Next() {
				want = append(want, pqPageSummary(ar.Page()))
			}
			if len(want) > len(got) {
				return nil
			}
			return ar.Err()
		}()
		if len(want) < len(got) {
			t.Fatalf("%s, try %d: %d pages read, arrow-go's reader %d (%v)", name, try, len(got), len(want), werr)
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("%s, try %d, page %d:\n%.300s\nwant\n%.300s", name, try, i, got[i], want[i])
			}
		}
		switch {
		case gerr == nil && (len(want) != len(got) || werr != nil):
			t.Fatalf("%s, try %d: the end after %d pages, arrow-go's reader: %d pages, %v", name, try, len(got), len(want), werr)
		case gerr != nil && !errors.Is(gerr, errParquetIndirect) && !errors.As(gerr, new(*pqChecksumError)):
			// (A damaged header may come to hold a crc, which its page's
			// bytes do not match.)
			t.Fatalf("%s, try %d: %v", name, try, gerr)
		case gerr == nil:
			same++
		default:
			fewer++
		}
		pf.Close()
		for i := nchanged - 1; i >= 0; i-- {
			data[changed[i].off] = changed[i].b
		}
	}
	if same == 0 || fewer == 0 {
		t.Errorf("%d tries read whole, %d ended early: want some of each", same, fewer)
	}
}

// TestDecodeParquetOwnPages decodes pqPageFiles' files with and without
// pqPageReader: the same encoding of the same runs.
func TestDecodeParquetOwnPages(t *testing.T) {
	defer func() { pqPagesOwn = true }()
	opts := Options{Components: []string{"success", "progress", "absent"}}
	for name, data := range pqPageFiles(t) {
		var enc [2][]byte
		for i, own := range []bool{false, true} {
			pqPagesOwn = own
			obj, err := DecodeParquet("mem://b/x.parquet", "x.parquet", bytes.NewReader(data), skyfallParquetFields, opts)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if enc[i], err = obj.AppendEncoding(nil); err != nil {
				t.Fatal(err)
			}
			obj.Release()
		}
		if !bytes.Equal(enc[0], enc[1]) {
			t.Errorf("%s: decoded differently with pqPageReader", name)
		}
	}
}

// TestPQObjectBytes: a *bytes.Reader's own bytes, its position kept.
func TestPQObjectBytes(t *testing.T) {
	data := []byte("PAR1 some bytes PAR1")
	r := bytes.NewReader(data)
	r.Seek(5, 0)
	b := pqObjectBytes(r)
	if len(b) != len(data) || &b[0] != &data[0] {
		t.Fatalf("got %q", b)
	}
	if pos, _ := r.Seek(0, 1); pos != 5 {
		t.Errorf("position %d, want 5", pos)
	}
	if pqObjectBytes(bytes.NewReader(nil)) != nil {
		t.Errorf("bytes of an empty reader")
	}
}
