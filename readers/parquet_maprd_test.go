package readers

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// writeMapParquet writes n rows of reward, regime_id and a components map
// of items of type item (nullable map when nullMap), in row groups of
// rgRows rows: maps of 0 to 5 entries (more levels than pqMapChunk in all,
// rows spanning the chunks, the batches and the row groups), a null map
// every 7th row when nullable, a null value at row nullAt (-1: none); and
// int64 steps and an int32 extra with nulls (the extra null on all rows
// of the last batch), read by the flat column chunk readers.
func writeMapParquet(t *testing.T, n, rgRows int, item arrow.DataType, nullMap bool, nullAt int) []byte {
	t.Helper()
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "reward", Type: arrow.PrimitiveTypes.Float64}, {Name: "regime_id", Type: arrow.BinaryTypes.String},
		{Name: "components", Type: arrow.MapOf(arrow.BinaryTypes.String, item), Nullable: nullMap},
		{Name: "run_id", Type: arrow.BinaryTypes.String},
		{Name: "step", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "k", Type: arrow.PrimitiveTypes.Int32, Nullable: true}}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	rng := rand.New(rand.NewPCG(uint64(n), uint64(rgRows)))
	names := []string{"progress", "success", "other", "goal", "x"}
	for i := range n {
		b.Field(0).(*array.Float64Builder).Append(rng.NormFloat64())
		b.Field(1).(*array.StringBuilder).Append(fmt.Sprint("l", i/900))
		b.Field(3).(*array.StringBuilder).Append(fmt.Sprint("r", i/2500))
		b.Field(4).(*array.Int64Builder).AppendValues([]int64{int64(i)}, []bool{i%5 != 2})
		b.Field(5).(*array.Int32Builder).AppendValues([]int32{int32(i/3000) - 2}, []bool{i%9 != 4 && i < 11000})
		mb := b.Field(2).(*array.MapBuilder)
		if nullMap && i%7 == 3 {
			mb.AppendNull()
			continue
		}
		mb.Append(true)
		k := rng.IntN(6)
		if i%11 == 0 {
			k = 5
		}
		off := rng.IntN(5)
		for j := range k {
			mb.KeyBuilder().(*array.StringBuilder).Append(names[(off+j)%5])
			v := rng.IntN(7) - 3
			switch ib := mb.ItemBuilder().(type) {
			case *array.Float64Builder:
				if i == nullAt {
					ib.AppendNull()
				} else {
					ib.Append(float64(v) / 4)
				}
			case *array.Int64Builder:
				ib.Append(int64(v) << 40)
			case *array.Int32Builder:
				ib.Append(int32(v) << 20)
			case *array.Uint32Builder:
				ib.Append(uint32(i))
			}
		}
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	var buf bytes.Buffer
	props := parquet.NewWriterProperties(parquet.WithMaxRowGroupLength(int64(rgRows)))
	w, err := pqarrow.NewFileWriter(schema, &buf, props, pqarrow.DefaultWriterProps())
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestDecodeParquetDirectMap: components maps read by the column chunk
// readers (float64, int64 and int32 values; nullable and required maps;
// empty and null maps; rows spanning level chunks, batches and row
// groups) give exactly what the general way gives; a null value inside a
// map sends the object the general way; a layout the chunk readers do not
// know (uint32 values) is read through pqarrow, still the direct way.
// Steps and an extra of numbers with nulls, read by pqFlatReader, too.
func TestDecodeParquetDirectMap(t *testing.T) {
	opts := Options{Components: []string{"success", "progress", "absent", "goal"}}
	const n = 3*parquetDirectBatchRows + 77
	cases := []struct {
		name    string
		item    arrow.DataType
		nullMap bool
		rg      int
		nullAt  int
		direct  bool
		chunked bool // read by the column chunk readers
	}{
		{"float64", arrow.PrimitiveTypes.Float64, true, 5000, -1, true, true},
		{"float64 one row group", arrow.PrimitiveTypes.Float64, true, n, -1, true, true},
		{"float64 required", arrow.PrimitiveTypes.Float64, false, 1000, -1, true, true},
		{"int64", arrow.PrimitiveTypes.Int64, true, 3000, -1, true, true},
		{"int32", arrow.PrimitiveTypes.Int32, false, 4096, -1, true, true},
		{"uint32", arrow.PrimitiveTypes.Uint32, true, 5000, -1, true, false},
		{"null value", arrow.PrimitiveTypes.Float64, true, 5000, 9000, false, true},
	}
	for i, c := range cases {
		data := writeMapParquet(t, n, c.rg, c.item, c.nullMap, c.nullAt)
		pf, err := file.NewParquetReader(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		if got := newPQMapReader(pf, "components", c.item) != nil; got != c.chunked {
			t.Errorf("%s: read by the chunk readers %v, want %v", c.name, got, c.chunked)
		}
		pf.Close()
		url := fmt.Sprintf("mem://b/map-%d.parquet", i)
		if got := sameDecoded(t, url, data, opts); got != c.direct {
			t.Errorf("%s: direct %v, want %v", c.name, got, c.direct)
		}
	}
}

// TestPQMapReaderNullValues reads files with a row of null values (five
// entries, at the first row and inside a batch) with pqMapReader a batch at
// a time (1, 7 and 4096 rows) and compares every row's keys, values and
// nulls with pqarrow's reading of the same file: a span's values are
// appended in bulk, and around null values one by one, each at its entry.
func TestPQMapReaderNullValues(t *testing.T) {
	const n = 9500
	for _, nullAt := range []int{0, 9009} {
		data := writeMapParquet(t, n, 3000, arrow.PrimitiveTypes.Float64, true, nullAt)
		tbl, err := pqarrow.ReadTable(t.Context(), bytes.NewReader(data), nil, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
		if err != nil {
			t.Fatal(err)
		}
		var want []string // by row: its entries, or "null"
		for _, ch := range tbl.Column(2).Data().Chunks() {
			m := ch.(*array.Map)
			keys, items := m.Keys().(*array.String), m.Items().(*array.Float64)
			for i := range m.Len() {
				if m.IsNull(i) {
					want = append(want, "null")
					continue
				}
				lo, hi := m.ValueOffsets(i)
				s := ""
				for k := lo; k < hi; k++ {
					if items.IsNull(int(k)) {
						s += keys.Value(int(k)) + "=null "
					} else {
						s += fmt.Sprintf("%s=%g ", keys.Value(int(k)), items.Value(int(k)))
					}
				}
				want = append(want, s)
			}
		}
		tbl.Release()
		nulls := 0
		for _, batch := range []int{1, 7, 4096} {
			pf, err := file.NewParquetReader(bytes.NewReader(data))
			if err != nil {
				t.Fatal(err)
			}
			m := newPQMapReader(pf, "components", arrow.PrimitiveTypes.Float64)
			if m == nil {
				t.Fatal("not read by the map reader")
			}
			var c pqColumn
			for row := 0; row < n; row += batch {
				k := min(batch, n-row)
				if err := m.next(&c, k); err != nil {
					t.Fatalf("null at %d, batch %d, row %d: %v", nullAt, batch, row, err)
				}
				for i := range k {
					got := "null"
					if c.ok(i) {
						got = ""
						for e := c.mOff[i]; e < c.mOff[i+1]; e++ {
							if !c.items.ok(int(e)) {
								got += c.kNames[c.mIDs[e]] + "=null "
								nulls++
							} else {
								got += fmt.Sprintf("%s=%g ", c.kNames[c.mIDs[e]], c.items.float(int(e)))
							}
						}
					}
					if got != want[row+i] {
						t.Fatalf("null at %d, batch %d, row %d: %q, want %q", nullAt, batch, row+i, got, want[row+i])
					}
				}
			}
			m.release()
			pf.Close()
		}
		if nulls != 3*5 {
			t.Errorf("null at %d: %d null values read, want 15", nullAt, nulls)
		}
	}
}
