package readers

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/extensions"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

func jsonType(t *testing.T) arrow.DataType {
	t.Helper()
	jt, err := extensions.NewJSONType(arrow.BinaryTypes.String)
	if err != nil {
		t.Fatal(err)
	}
	return jt
}

// readsAsLines fails the test unless the Parquet file data (its columns
// run_id and skyfall's fields) reads as the JSON lines want and decodes,
// the direct way and the general way, to the object those lines decode to.
func readsAsLines(t *testing.T, url string, data []byte, want string) {
	t.Helper()
	fields := append([]ParquetField{{Name: "run_id", Type: "string"}}, skyfallParquetFields...)
	got, err := parquetText(t, data, fields)
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Fatalf("rows:\n%s\nwant:\n%s", got, want)
	}
	opts := Options{}
	sameDecoded(t, url, data, opts)
	pq, err := DecodeParquet(url, "x.parquet", bytes.NewReader(data), skyfallParquetFields, opts)
	if err != nil {
		t.Fatal(err)
	}
	lines, err := DecodeObject(url, "x.parquet", strings.NewReader(want), opts)
	if err != nil {
		t.Fatal(err)
	}
	sameEncoding(t, "the Parquet object's", pq, lines)
}

// appendJSONCells appends cells to b, the builder of a JSON column (its
// storage's): "\x00" is a null cell.
func appendJSONCells(b array.Builder, cells ...string) {
	sb := b.(*array.ExtensionBuilder).StorageBuilder().(*array.StringBuilder)
	for _, c := range cells {
		if c == "\x00" {
			sb.AppendNull()
		} else {
			sb.Append(c)
		}
	}
}

// TestParquetJSONLogicalType: columns of Parquet's JSON logical type (what
// DuckDB writes for a field that is null on every row, or of several
// types) are JSON text wherever they are: a top-level column, a list's
// element, a struct's member, a map's value; read with the file's Arrow
// schema (arrow.json, an extension over strings) or without it (binary).
// The rows are the JSON lines that hold the same values, a line break
// inside a cell's white space a space; decoded directly (skyfall's way) or
// the general way, they are the object those lines decode to.
func TestParquetJSONLogicalType(t *testing.T) {
	jt := jsonType(t)
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "run_id", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "reward", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		{Name: "regime_id", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "step", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "regime_origin", Type: jt, Nullable: true},
		{Name: "note", Type: jt, Nullable: true},
		{Name: "tags", Type: arrow.ListOf(jt), Nullable: true},
		{Name: "o", Type: arrow.StructOf(arrow.Field{Name: "x", Type: jt, Nullable: true}, arrow.Field{Name: "y", Type: arrow.PrimitiveTypes.Float64, Nullable: true}), Nullable: true},
		{Name: "cfg", Type: arrow.MapOf(arrow.BinaryTypes.String, jt), Nullable: true},
	}, nil)
	fill := func(b *array.RecordBuilder) {
		b.Field(0).(*array.StringBuilder).AppendValues([]string{"a", "a", "a"}, nil)
		b.Field(1).(*array.Float64Builder).AppendValues([]float64{0.5, 0.25, 1}, nil)
		b.Field(2).(*array.StringBuilder).AppendValues([]string{"calm", "storm", "storm"}, nil)
		b.Field(3).(*array.Int64Builder).AppendValues([]int64{0, 1, 2}, nil)
		appendJSONCells(b.Field(4), "\x00", `"calm"`, "null")
		appendJSONCells(b.Field(5), " {\n  \"a\": [1,\r\n 2.50],\t\"b\": \"x\\ny\"\n}\n", `{"k":[]}`, `-0.0`)
		lb := b.Field(6).(*array.ListBuilder)
		lb.Append(true)
		appendJSONCells(lb.ValueBuilder(), `1`, `"x"`, "\x00", `{"z":true}`)
		lb.AppendNull()
		lb.Append(true)
		sb := b.Field(7).(*array.StructBuilder)
		sb.Append(true)
		appendJSONCells(sb.FieldBuilder(0), `[1,"two"]`)
		sb.FieldBuilder(1).(*array.Float64Builder).Append(1.5)
		sb.Append(true)
		appendJSONCells(sb.FieldBuilder(0), "\x00")
		sb.FieldBuilder(1).(*array.Float64Builder).Append(2)
		sb.AppendNull()
		appendJSONCells(sb.FieldBuilder(0), "\x00")
		sb.FieldBuilder(1).(*array.Float64Builder).AppendNull()
		mb := b.Field(8).(*array.MapBuilder)
		mb.Append(true)
		mb.KeyBuilder().(*array.StringBuilder).AppendValues([]string{"lr", "sched"}, nil)
		appendJSONCells(mb.ItemBuilder(), `0.001`, `{"kind":"cos"}`)
		mb.AppendNull()
		mb.Append(true)
		mb.KeyBuilder().(*array.StringBuilder).Append("lr")
		appendJSONCells(mb.ItemBuilder(), "\x00")
	}
	want := `{"run_id":"a","reward":0.5,"regime_id":"calm","step":0,"note": {   "a": [1,   2.50],	"b": "x\ny" } ,"tags":[1,"x",null,{"z":true}],"o":{"x":[1,"two"],"y":1.5},"cfg":{"lr":0.001,"sched":{"kind":"cos"}}}
{"run_id":"a","reward":0.25,"regime_id":"storm","step":1,"regime_origin":"calm","note":{"k":[]},"o":{"y":2}}
{"run_id":"a","reward":1,"regime_id":"storm","step":2,"regime_origin":null,"note":-0.0,"tags":[],"cfg":{"lr":null}}
`
	for name, props := range map[string]pqarrow.ArrowWriterProperties{
		"binary":     pqarrow.DefaultWriterProps(),
		"arrow.json": pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()),
	} {
		t.Run(name, func(t *testing.T) {
			data := writeParquetArrowProps(t, schema, props, fill)
			readsAsLines(t, "mem://b/jsontype-"+name+".parquet", data, want)
		})
	}
}

// TestParquetJSONTextNotOneValue: a cell of JSON text must be exactly one
// JSON value. Copied into the row as it is, `null,"reward":99` would
// replace the row's reward and a line break followed by a row would add a
// row the file does not hold; such a cell (and any text that is not JSON)
// fails the object as damaged data naming the row and the column, after
// the rows before it, whether the column is listed in crlbatch.json_columns
// or of Parquet's JSON logical type, top-level or nested, read directly or
// the general way.
func TestParquetJSONTextNotOneValue(t *testing.T) {
	bad := map[string]string{
		"a field added":  `null,"reward":99`,
		"a row added":    "null}\n{\"reward\":7,\"regime_id\":\"calm\",\"step\":5000",
		"two values":     `1 2`,
		"cut short":      `[1,`,
		"empty":          ``,
		"white space":    " \n ",
		"not JSON":       `NaN`,
		"a raw newline":  "\"a\nb\"",
		"a closed brace": `1}`,
	}
	layouts := map[string]func(t *testing.T, cell string) []byte{
		"json_columns": func(t *testing.T, cell string) []byte {
			md := arrow.NewMetadata([]string{ParquetJSONColumns}, []string{`["x"]`})
			schema := arrow.NewSchema([]arrow.Field{
				{Name: "reward", Type: arrow.PrimitiveTypes.Float64},
				{Name: "regime_id", Type: arrow.BinaryTypes.String},
				{Name: "x", Type: arrow.BinaryTypes.String, Nullable: true},
			}, &md)
			return writeTestParquet(t, schema, func(b *array.RecordBuilder) {
				b.Field(0).(*array.Float64Builder).AppendValues([]float64{1, 2, 3}, nil)
				b.Field(1).(*array.StringBuilder).AppendValues([]string{"calm", "calm", "calm"}, nil)
				b.Field(2).(*array.StringBuilder).AppendValues([]string{"1", cell, "3"}, nil)
			})
		},
		"JSON logical type": func(t *testing.T, cell string) []byte {
			schema := arrow.NewSchema([]arrow.Field{
				{Name: "reward", Type: arrow.PrimitiveTypes.Float64},
				{Name: "regime_id", Type: arrow.BinaryTypes.String},
				{Name: "x", Type: jsonType(t), Nullable: true},
			}, nil)
			return writeTestParquet(t, schema, func(b *array.RecordBuilder) {
				b.Field(0).(*array.Float64Builder).AppendValues([]float64{1, 2, 3}, nil)
				b.Field(1).(*array.StringBuilder).AppendValues([]string{"calm", "calm", "calm"}, nil)
				appendJSONCells(b.Field(2), "1", cell, "3")
			})
		},
		"in a list": func(t *testing.T, cell string) []byte {
			schema := arrow.NewSchema([]arrow.Field{
				{Name: "reward", Type: arrow.PrimitiveTypes.Float64},
				{Name: "regime_id", Type: arrow.BinaryTypes.String},
				{Name: "x", Type: arrow.ListOf(jsonType(t)), Nullable: true},
			}, nil)
			return writeTestParquet(t, schema, func(b *array.RecordBuilder) {
				b.Field(0).(*array.Float64Builder).AppendValues([]float64{1, 2, 3}, nil)
				b.Field(1).(*array.StringBuilder).AppendValues([]string{"calm", "calm", "calm"}, nil)
				lb := b.Field(2).(*array.ListBuilder)
				for _, c := range []string{"1", cell, "3"} {
					lb.Append(true)
					appendJSONCells(lb.ValueBuilder(), "0", c)
				}
			})
		},
	}
	for lname, layout := range layouts {
		for cname, cell := range bad {
			t.Run(lname+"/"+cname, func(t *testing.T) {
				data := layout(t, cell)
				got, err := parquetText(t, data, skyfallParquetFields)
				var de *DataError
				if !errors.As(err, &de) || de.Line != 2 || !de.Row || !strings.HasPrefix(de.Msg, "column x: JSON text that is not one JSON value (") {
					t.Fatalf("error %#v, want a DataError at row 2 naming column x", err)
				}
				if strings.Count(got, "\n") != 1 || !strings.HasPrefix(got, `{"reward":1,"regime_id":"calm","x":`) {
					t.Errorf("rows before the error: %q, want row 1 alone", got)
				}
				// Decoded, the same error, the direct way as the general way.
				url := fmt.Sprintf("mem://b/%s-%s.parquet", strings.ReplaceAll(lname, " ", "-"), strings.ReplaceAll(cname, " ", "-"))
				sameDecoded(t, url, data, Options{})
				_, err = DecodeParquet(url, "x.parquet", bytes.NewReader(data), skyfallParquetFields, Options{})
				if !errors.As(err, &de) || de.Line != 2 || !strings.Contains(err.Error(), url+": row 2: column x: JSON text that is not one JSON value") {
					t.Errorf("decoded: %v, want the object failed at row 2, column x", err)
				}
			})
		}
	}
}

// TestParquetJSONTextShapes: JSON text is read only where the shape marks
// it and only from text (strings, binary, their dictionaries); binary
// anywhere else has no JSON value, and a place of JSON logical type that
// is not text (a file whose stored Arrow schema says otherwise) is refused.
func TestParquetJSONTextShapes(t *testing.T) {
	for _, tc := range []struct {
		t    arrow.DataType
		sh   *pqJSONShape
		fail bool
	}{
		{arrow.BinaryTypes.Binary, &pqJSONShape{text: true}, false},
		{arrow.BinaryTypes.LargeBinary, &pqJSONShape{text: true}, false},
		{&arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.Binary}, &pqJSONShape{text: true}, false},
		{arrow.PrimitiveTypes.Int64, &pqJSONShape{text: true}, true},
		{arrow.BinaryTypes.Binary, nil, true},
		{arrow.ListOf(arrow.BinaryTypes.Binary), &pqJSONShape{kids: []*pqJSONShape{{text: true}}}, false},
		{arrow.ListOf(arrow.BinaryTypes.Binary), nil, true},
		{arrow.MapOf(arrow.BinaryTypes.String, arrow.BinaryTypes.Binary), &pqJSONShape{kids: []*pqJSONShape{{kids: []*pqJSONShape{nil, {text: true}}}}}, false},
		{arrow.StructOf(arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int8}, arrow.Field{Name: "b", Type: arrow.BinaryTypes.Binary}), &pqJSONShape{kids: []*pqJSONShape{nil, {text: true}}}, false},
		{arrow.StructOf(arrow.Field{Name: "a", Type: arrow.BinaryTypes.Binary}, arrow.Field{Name: "b", Type: arrow.BinaryTypes.Binary}), &pqJSONShape{kids: []*pqJSONShape{nil, {text: true}}}, true},
	} {
		if err := checkJSONType(tc.t, tc.sh); (err != nil) != tc.fail {
			t.Errorf("checkJSONType(%s, %+v) = %v, want failure %v", tc.t, tc.sh, err, tc.fail)
		}
	}
}

// TestParquetJSONLogicalTypeDirect: skyfall's direct way reads a top-level
// column of Parquet's JSON logical type (binary, or arrow.json with the
// Arrow schema stored) as it reads a listed JSON-text column, into the
// object the general way gives: by its column chunk reader, as every
// column of the file, with no pqarrow record batches (what DuckDB's
// JSON columns cost: fresh Arrow buffers every batch).
func TestParquetJSONLogicalTypeDirect(t *testing.T) {
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "reward", Type: arrow.PrimitiveTypes.Float64},
		{Name: "regime_id", Type: arrow.BinaryTypes.String},
		{Name: "step", Type: arrow.PrimitiveTypes.Int64},
		{Name: "regime_origin", Type: jsonType(t), Nullable: true},
		{Name: "effective_rank", Type: jsonType(t), Nullable: true},
	}, nil)
	const n = 3 * parquetDirectBatchRows / 2
	fill := func(b *array.RecordBuilder) {
		for i := range n {
			b.Field(0).(*array.Float64Builder).Append(float64(i%7) / 8)
			regime, origin := "calm", "\x00"
			if i >= n/2 {
				regime, origin = "storm", `"calm"`
			}
			b.Field(1).(*array.StringBuilder).Append(regime)
			b.Field(2).(*array.Int64Builder).Append(int64(i))
			appendJSONCells(b.Field(3), origin)
			rank := []string{"\x00", "null", "3", "2.5"}[i%4]
			appendJSONCells(b.Field(4), rank)
		}
	}
	for name, props := range map[string]pqarrow.ArrowWriterProperties{
		"binary":     pqarrow.DefaultWriterProps(),
		"arrow.json": pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()),
	} {
		t.Run(name, func(t *testing.T) {
			data := writeParquetArrowProps(t, schema, props, fill)
			url := "mem://b/jsontype-direct-" + name + ".parquet"
			if !sameDecoded(t, url, data, Options{}) {
				t.Errorf("read the general way")
			}
			if _, ok := arrowSeen.Load(url); ok {
				t.Errorf("some column read through pqarrow's record batches")
			}
		})
	}
}
