package readers

import (
	"bytes"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
)

// TestPQRLE decodes hand-written RLE / bit-packed hybrid runs: a repeated
// run, a bit-packed run of width 3 (0..7 then 7..0), a run of width 0, and
// malformed runs (a value wider than its width, a cut header).
func TestPQRLE(t *testing.T) {
	var r pqRLE
	// 5 x value 6 (header 5<<1), then one group of 8 bit-packed values
	// 0..7 (header 1<<1|1), width 3: bits LSB first.
	packed := func(vals []uint32, width uint) []byte {
		out := make([]byte, (len(vals)*int(width)+7)/8)
		for i, v := range vals {
			for b := uint(0); b < width; b++ {
				if v>>b&1 == 1 {
					bit := uint(i)*width + b
					out[bit/8] |= 1 << (bit % 8)
				}
			}
		}
		return out
	}
	data := append([]byte{5 << 1, 6, 1<<1 | 1}, packed([]uint32{0, 1, 2, 3, 4, 5, 6, 7}, 3)...)
	data = append(data, 1<<1|1)
	data = append(data, packed([]uint32{7, 6, 5, 4, 3, 2, 1, 0}, 3)...)
	r.init(data, 3)
	var got []uint32
	for r.fill() {
		for r.rep > 0 {
			got = append(got, r.val)
			r.rep--
		}
		for r.pk > 0 {
			got = append(got, r.get())
		}
	}
	want := []uint32{6, 6, 6, 6, 6, 0, 1, 2, 3, 4, 5, 6, 7, 7, 6, 5, 4, 3, 2, 1, 0}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("decoded %v, want %v", got, want)
	}
	// Width 0: a bit-packed group takes no bytes and holds zeros (read as
	// a repeated run).
	r.init([]byte{1<<1 | 1, 3 << 1}, 0)
	if !r.fill() || r.rep != 8 || r.val != 0 || !func() bool { r.rep = 0; return r.fill() }() || r.rep != 3 || r.val != 0 {
		t.Fatalf("width 0: %+v", r)
	}
	r.init([]byte{2 << 1, 9}, 3) // 9 does not fit 3 bits
	if r.fill() {
		t.Error("a repeated value wider than the width was read")
	}
	r.init([]byte{0x80}, 3) // a header cut short
	if r.fill() {
		t.Error("a cut header was read")
	}
}

// pagesCases are files whose string columns hold the paged mode's edges: a
// dictionary page that ends inside a run of one label and a value repeated
// across pages (pages of a few rows, runs of 50), a row group boundary
// inside a run (row groups of 7 rows), nulls in columns written without
// statistics, plain pages, dictionaries that overflow to plain pages
// within a chunk, version 2 pages.
//
// The files are written once per test binary (pagesCasesMemo) and each
// caller gets its own map of its own copies of the bytes: three tests read
// them, and pqPageFiles' three, and each wrote them again.
func pagesCases(t *testing.T) map[string][]byte {
	t.Helper()
	return pagesCasesMemo.get(t, writePagesCases)
}

// pagesCasesMemo holds pagesCases' files once written.
var pagesCasesMemo filesMemo

// filesMemo holds a set of test files once written (nil until a test
// wrote them all: a test whose writing failed leaves it to the next).
type filesMemo struct {
	sync.Mutex
	files map[string][]byte
}

// get returns copies of the files (cloneFiles), written by write the
// first time.
func (m *filesMemo) get(t *testing.T, write func(*testing.T) map[string][]byte) map[string][]byte {
	t.Helper()
	m.Lock()
	defer m.Unlock()
	if m.files == nil {
		m.files = write(t)
	}
	return cloneFiles(m.files)
}

// cloneFiles returns a map of copies of files' bytes: no test sees what
// another test's reading could have done to its input.
func cloneFiles(files map[string][]byte) map[string][]byte {
	out := make(map[string][]byte, len(files))
	for name, data := range files {
		out[name] = bytes.Clone(data)
	}
	return out
}

// writePagesCases writes pagesCases' files.
func writePagesCases(t *testing.T) map[string][]byte {
	t.Helper()
	var b strings.Builder
	for i := range 400 {
		fmt.Fprintf(&b, `{"run_id":"r%d","reward":%d,"regime_id":"l%d"`, i/130, i%7, (i/50)%3)
		switch {
		case i%11 == 0:
			b.WriteString(`,"regime_origin":null,"tag":null`)
		case i%5 == 0:
			fmt.Fprintf(&b, `,"regime_origin":"l%d","tag":"t"`, (i/50)%3)
		case i%13 == 0:
		default:
			b.WriteString(`,"tag":"t"`)
		}
		fmt.Fprintf(&b, `,"hash":"%08x","empty":"","gamma":0.99,"seed":%d,"x":%g`, int64(i)*2654435761%4294967296, i/130, float64(i)/3)
		if i%17 != 0 {
			fmt.Fprintf(&b, `,"step":%d,"effective_rank":%g`, i, float64(i%9)/2)
		}
		if i%19 != 4 { // else a null: runs of 40 with single values inside
			fmt.Fprintf(&b, `,"invalid_action":%v`, (i/40)%2 == 0 != (i%9 == 0))
		}
		b.WriteString("}\n")
	}
	rows := b.String()
	out := map[string][]byte{}
	for _, v := range writerVariants {
		if v.twin {
			continue // another variant's pages, the components in the other form (no column read here)
		}
		out[v.name] = convertWith(t, rows, v.props)
		out[v.name+", no statistics"] = convertWith(t, rows, append([]parquet.WriterProperty{parquet.WithStats(false)}, v.props...))
		// Booleans RLE-encoded (a 4-byte length, then runs of width 1).
		out[v.name+", RLE booleans"] = convertWith(t, rows, append([]parquet.WriterProperty{parquet.WithEncodingFor("invalid_action", parquet.Encodings.RLE)}, v.props...))
	}
	return out
}

// TestPQReadersPaged reads every string and number column of pagesCases'
// files a batch at a time (batches of 1, 3, 50 and 4096 rows) in paged
// mode and by the column chunk reader: the same strings, numbers, nulls
// and text bytes, row by row; and the paged mode is the one taken for
// every column.
func TestPQReadersPaged(t *testing.T) {
	defer func() { pqPagedStrings, pqPagedNumbers, pqPagedBools = true, true, true }()
	type reader interface {
		next(*pqColumn, int) error
		release()
	}
	open := func(pf *file.Reader, name string, typ arrow.DataType, json, paged bool) (reader, bool) {
		pqPagedStrings, pqPagedNumbers, pqPagedBools = paged, paged, paged
		if typ.ID() == arrow.BOOL {
			r := newPQBoolReader(pf, name)
			return r, r != nil && r.paged == paged
		}
		if typ.ID() == arrow.STRING || json {
			r := newPQStrReader(pf, name, typ, json)
			return r, r != nil && r.paged == paged
		}
		r := newPQFlatReader(pf, name, typ)
		return r, r != nil && r.paged == paged
	}
	for name, data := range pagesCases(t) {
		f, err := openParquet("mem://b/x.parquet", bytes.NewReader(data), skyfallParquetFields, fixedBatch(64), nil)
		if err != nil {
			t.Fatal(err)
		}
		total := int(f.pf.NumRows())
		kinds := map[arrow.Type]int{}
		for i, col := range f.cols {
			typ := f.schema.Field(i).Type
			// JSON-text columns (convert's, of Parquet's JSON type: binary)
			// are read as strings are.
			json := col.json && isTextType(typ) && typ.ID() != arrow.STRING
			kind := typ.ID()
			if json {
				kind = arrow.STRING
			}
			if kind != arrow.STRING && kind != arrow.FLOAT64 && kind != arrow.INT64 && kind != arrow.BOOL {
				continue
			}
			kinds[kind]++
			for _, batch := range []int{1, 3, 50, 4096} {
				paged, ok1 := open(f.pf, col.name, typ, json, true)
				chunked, ok2 := open(f.pf, col.name, typ, json, false)
				if !ok1 || !ok2 {
					t.Fatalf("%s, %s: readers %v %v", name, col.name, paged, chunked)
				}
				var pc, cc pqColumn
				for row := 0; row < total; row += batch {
					n := min(batch, total-row)
					if err := paged.next(&pc, n); err != nil {
						t.Fatalf("%s, %s, row %d: paged: %v", name, col.name, row, err)
					}
					if err := chunked.next(&cc, n); err != nil {
						t.Fatalf("%s, %s, row %d: %v", name, col.name, row, err)
					}
					if pc.textBytes != cc.textBytes || pc.isInt != cc.isInt {
						t.Fatalf("%s, %s, rows %d+%d: %d text bytes, want %d", name, col.name, row, n, pc.textBytes, cc.textBytes)
					}
					for i := range n {
						if pc.ok(i) != cc.ok(i) {
							t.Fatalf("%s, %s, row %d: valid %v, want %v", name, col.name, row+i, pc.ok(i), cc.ok(i))
						}
						var got, want string
						switch kind {
						case arrow.STRING:
							got, want = string(pc.str(i)), string(cc.str(i))
						case arrow.BOOL:
							got, want = fmt.Sprint(pc.bs[i]), fmt.Sprint(cc.bs[i])
						case arrow.FLOAT64:
							got, want = fmt.Sprint(math.Float64bits(pc.f64[i])), fmt.Sprint(math.Float64bits(cc.f64[i]))
						default:
							got, want = fmt.Sprint(pc.i64[i]), fmt.Sprint(cc.i64[i])
						}
						if got != want {
							t.Fatalf("%s, %s, row %d: %q, want %q", name, col.name, row+i, got, want)
						}
					}
				}
				// The column is read to its end.
				if err := paged.next(&pc, 1); err == nil {
					t.Errorf("%s, %s: a row past the end", name, col.name)
				}
				paged.release()
				chunked.release()
			}
		}
		if kinds[arrow.STRING] < 6 || kinds[arrow.FLOAT64] < 3 || kinds[arrow.INT64] < 3 || kinds[arrow.BOOL] < 1 {
			t.Errorf("%s: columns compared: %v", name, kinds)
		}
		f.pf.Close()
	}
	pqPagedStrings, pqPagedNumbers, pqPagedBools = true, true, true
}

// TestDecodeParquetPagedEdges: the same files decoded the direct way
// (string columns in paged mode) give exactly what the general way gives.
func TestDecodeParquetPagedEdges(t *testing.T) {
	opts := Options{Components: []string{"progress"}}
	for name, data := range pagesCases(t) {
		url := "mem://b/paged-" + name + ".parquet"
		if !sameDecoded(t, url, data, opts) {
			t.Errorf("%s: read the general way", name)
		}
		if _, ok := arrowSeen.Load(url); ok {
			t.Errorf("%s: some columns read through pqarrow", name)
		}
	}
}

// TestPQPagedEncodings: a column chunk listing an encoding the paged mode
// does not decode (DELTA_BYTE_ARRAY here) is read by the column chunk
// reader, with the same outcome.
func TestPQPagedEncodings(t *testing.T) {
	rows := `{"run_id":"a","reward":1,"regime_id":"x","h":"abc"}` + "\n" + `{"run_id":"a","reward":2,"regime_id":"y","h":"abd"}` + "\n"
	data := convertWith(t, rows, []parquet.WriterProperty{parquet.WithDictionaryDefault(false), parquet.WithEncodingFor("h", parquet.Encodings.DeltaByteArray)})
	pf, err := file.NewParquetReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	defer pf.Close()
	for i := 0; i < pf.MetaData().Schema.NumColumns(); i++ {
		col := pf.MetaData().Schema.Column(i)
		if col.PhysicalType() == parquet.Types.ByteArray && pqPagedEncodings(pf, i) != (col.Name() != "h") {
			t.Errorf("column %s: paged %v", col.Name(), pqPagedEncodings(pf, i))
		}
	}
	if !sameDecoded(t, "mem://b/delta.parquet", data, Options{}) {
		t.Error("read the general way")
	}
}

// TestDecodeParquetPagedRequired: required (non-nullable) string and
// number columns, pages without definition levels, are read in paged mode
// into what the general way gives.
func TestDecodeParquetPagedRequired(t *testing.T) {
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "run_id", Type: arrow.BinaryTypes.String},
		{Name: "reward", Type: arrow.PrimitiveTypes.Float64},
		{Name: "regime_id", Type: arrow.BinaryTypes.String},
		{Name: "step", Type: arrow.PrimitiveTypes.Int64},
		{Name: "k", Type: arrow.PrimitiveTypes.Int32},
	}, nil)
	const n = 300
	data := writeTestParquet(t, schema, func(b *array.RecordBuilder) {
		for i := range n {
			b.Field(0).(*array.StringBuilder).Append(fmt.Sprintf("r%d", i/120))
			b.Field(1).(*array.Float64Builder).Append(float64(i%13) / 4)
			b.Field(2).(*array.StringBuilder).Append(fmt.Sprintf("l%d", i/40%3))
			b.Field(3).(*array.Int64Builder).Append(int64(i))
			b.Field(4).(*array.Int32Builder).Append(int32(i/100 - 1))
		}
	})
	pf, err := file.NewParquetReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		typ  arrow.DataType
	}{{"run_id", arrow.BinaryTypes.String}, {"regime_id", arrow.BinaryTypes.String}, {"reward", arrow.PrimitiveTypes.Float64},
		{"step", arrow.PrimitiveTypes.Int64}, {"k", arrow.PrimitiveTypes.Int32}} {
		var paged bool
		var maxDef int16
		if c.typ.ID() == arrow.STRING {
			r := newPQStrReader(pf, c.name, c.typ, false)
			paged, maxDef = r.paged, r.maxDef
			r.release()
		} else {
			r := newPQFlatReader(pf, c.name, c.typ)
			paged, maxDef = r.paged, r.maxDef
			r.release()
		}
		if !paged || maxDef != 0 {
			t.Errorf("%s: paged %v, maximum definition level %d", c.name, paged, maxDef)
		}
	}
	pf.Close()
	if !sameDecoded(t, "mem://b/required.parquet", data, Options{IdentityFields: []string{"run_id", "k"}}) {
		t.Error("read the general way")
	}
}
