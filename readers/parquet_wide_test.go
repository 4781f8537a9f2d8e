package readers

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// wideRows are n rows of two runs, each with extra numeric columns x_0 …
// x_{cols-1} (x_0 constant: metadata) and a varying string.
func wideRows(n, cols int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, `{"run_id":"r%d","step":%d,"reward":%g,"regime_id":%q,"note":"n%d"`, i%2, i, float64(i%13)/4, []string{"a", "b"}[i*2/n], i%7)
		for k := range cols {
			v := float64((i*31+k*7)%1000) / 8
			if k == 0 {
				v = 0.5
			}
			fmt.Fprintf(&b, `,"x_%d":%g`, k, v)
		}
		b.WriteString("}\n")
	}
	return b.String()
}

// TestParquetDirectWideRows: a file of many columns is read the direct way
// into what its JSON lines decode to, with a --max-line-bytes its rows
// keep within although a batch of them all together would not (the bound
// is a row's, not the batch's: before, such a file was read twice, the
// second time the general way), and in batches of fewer rows the more
// columns it has (pqDirectRows), across several of them.
func TestParquetDirectWideRows(t *testing.T) {
	if got := pqDirectRows(20); got != parquetDirectBatchRows {
		t.Errorf("20 columns: batches of %d rows, want %d", got, parquetDirectBatchRows)
	}
	if got := pqDirectRows(2000); got != 524 {
		t.Errorf("2,000 columns: batches of %d rows, want 524", got)
	}
	if got := pqDirectRows(100000); got != 256 {
		t.Errorf("100,000 columns: batches of %d rows, want 256", got)
	}
	for _, c := range []struct {
		name       string
		rows, cols int
		maxLine    int
	}{
		{"40-columns-short-lines", 5000, 40, 4 << 10},
		{"600-columns", 4000, 600, 0}, // batches of 1,741 rows
	} {
		t.Run(c.name, func(t *testing.T) {
			jsonl := wideRows(c.rows, c.cols)
			data := convertJSONL(t, jsonl)
			opts := Options{MaxLineBytes: c.maxLine}
			url := "mem://b/wide-" + c.name + ".parquet"
			got, err := DecodeParquet(url, "x.parquet", bytes.NewReader(data), skyfallParquetFields, opts)
			if err != nil {
				t.Fatal(err)
			}
			if !tookDirect(t, url) {
				t.Fatal("read the general way")
			}
			want, err := DecodeObject(url, "x.parquet", strings.NewReader(jsonl), opts)
			if err != nil {
				t.Fatal(err)
			}
			sameEncoding(t, "the direct way's", got, want)
		})
	}
}

// TestParquetDirectStructComponents: components as a struct of number
// columns (DuckDB's STRUCT for an object of fixed keys), optional or
// required, with null structs and null members, over several batches, are
// read the direct way by the members' column chunk readers (no pqarrow
// record batches) into what the general way gives.
func TestParquetDirectStructComponents(t *testing.T) {
	const n = 2*parquetDirectBatchRows + 333
	for _, c := range []struct {
		name     string
		nullable bool
	}{{"optional", true}, {"required", false}} {
		t.Run(c.name, func(t *testing.T) {
			comps := arrow.StructOf(arrow.Field{Name: "progress", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
				arrow.Field{Name: "success", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
				arrow.Field{Name: "collision", Type: arrow.PrimitiveTypes.Int32, Nullable: false})
			schema := arrow.NewSchema([]arrow.Field{
				{Name: "run_id", Type: arrow.BinaryTypes.String},
				{Name: "reward", Type: arrow.PrimitiveTypes.Float64},
				{Name: "step", Type: arrow.PrimitiveTypes.Int64},
				{Name: "regime_id", Type: arrow.BinaryTypes.String},
				{Name: "components", Type: comps, Nullable: c.nullable},
			}, nil)
			data := writeTestParquet(t, schema, func(b *array.RecordBuilder) {
				for i := range n {
					b.Field(0).(*array.StringBuilder).Append([]string{"a", "b"}[i%2])
					b.Field(1).(*array.Float64Builder).Append(float64(i%11) / 4)
					b.Field(2).(*array.Int64Builder).Append(int64(i))
					b.Field(3).(*array.StringBuilder).Append([]string{"calm", "storm"}[i*2/n])
					sb := b.Field(4).(*array.StructBuilder)
					if c.nullable && i%13 == 5 {
						sb.AppendNull()
						continue
					}
					sb.Append(true)
					if i%7 == 3 {
						sb.FieldBuilder(0).(*array.Float64Builder).AppendNull()
					} else {
						sb.FieldBuilder(0).(*array.Float64Builder).Append(float64(i%5) / 8)
					}
					if i%3 == 0 {
						sb.FieldBuilder(1).(*array.Int64Builder).AppendNull()
					} else {
						sb.FieldBuilder(1).(*array.Int64Builder).Append(int64(i % 2))
					}
					sb.FieldBuilder(2).(*array.Int32Builder).Append(int32(-(i % 3)))
				}
			})
			url := "mem://b/struct-comps-" + c.name + ".parquet"
			opts := Options{Components: []string{"success", "progress"}}
			if !sameDecoded(t, url, data, opts) {
				t.Fatal("read the general way")
			}
			if _, ok := arrowSeen.Load(url); ok {
				t.Error("some column read through pqarrow's record batches")
			}
		})
	}
}
