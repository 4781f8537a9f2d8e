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
