package readers

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// writeTestParquet writes one record batch built by fill as a Parquet file.
func writeTestParquet(t *testing.T, schema *arrow.Schema, fill func(b *array.RecordBuilder)) []byte {
	t.Helper()
	return writeParquetArrowProps(t, schema, pqarrow.DefaultWriterProps(), fill)
}

// writeParquetArrowProps is writeTestParquet with the Arrow writer
// properties props (storing the Arrow schema in the file, or not).
func writeParquetArrowProps(t *testing.T, schema *arrow.Schema, props pqarrow.ArrowWriterProperties, fill func(b *array.RecordBuilder)) []byte {
	t.Helper()
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	fill(b)
	rec := b.NewRecordBatch()
	defer rec.Release()
	var buf bytes.Buffer
	w, err := pqarrow.NewFileWriter(schema, &buf, nil, props)
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

func parquetText(t *testing.T, data []byte, fields []ParquetField) (string, error) {
	t.Helper()
	r, err := ParquetLines("mem://b/x.parquet", bytes.NewReader(data), fields)
	if err != nil {
		return "", err
	}
	defer r.Close()
	out, err := io.ReadAll(r)
	return string(out), err
}

var skyfallParquetFields = []ParquetField{{Name: "reward", Type: "number", Required: true}, {Name: "regime_id", Type: "string", Required: true}, {Name: "step", Type: "integer"}, {Name: "components", Type: "object"}}

// TestParquetLinesTypes: the Arrow types a hand-made file may use (float32,
// int32, a struct of components with a null member, a list, a map with a
// null value, strings to escape) become the JSON rows written out here.
func TestParquetLinesTypes(t *testing.T) {
	comps := arrow.StructOf(arrow.Field{Name: "progress", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		arrow.Field{Name: "goal", Type: arrow.PrimitiveTypes.Int32, Nullable: true})
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "run_id", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "reward", Type: arrow.PrimitiveTypes.Float32, Nullable: true},
		{Name: "step", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
		{Name: "regime_id", Type: arrow.BinaryTypes.String},
		{Name: "components", Type: comps, Nullable: true},
		{Name: "tags", Type: arrow.ListOf(arrow.BinaryTypes.String), Nullable: true},
		{Name: "cfg", Type: arrow.MapOf(arrow.BinaryTypes.String, arrow.PrimitiveTypes.Float64), Nullable: true},
	}, nil)
	data := writeTestParquet(t, schema, func(b *array.RecordBuilder) {
		b.Field(0).(*array.StringBuilder).AppendValues([]string{"a\"\\\n", "a\"\\\n"}, nil)
		b.Field(1).(*array.Float32Builder).AppendValues([]float32{0.5, 0.1}, nil)
		b.Field(2).(*array.Int32Builder).AppendValues([]int32{0, 0}, []bool{true, false})
		b.Field(3).(*array.StringBuilder).AppendValues([]string{"r", "é"}, nil)
		sb := b.Field(4).(*array.StructBuilder)
		sb.Append(true)
		sb.FieldBuilder(0).(*array.Float64Builder).Append(1.5)
		sb.FieldBuilder(1).(*array.Int32Builder).AppendNull()
		sb.AppendNull()
		lb := b.Field(5).(*array.ListBuilder)
		lb.Append(true)
		lb.ValueBuilder().(*array.StringBuilder).AppendValues([]string{"x", "y"}, nil)
		lb.AppendNull()
		mb := b.Field(6).(*array.MapBuilder)
		mb.Append(true)
		mb.KeyBuilder().(*array.StringBuilder).Append("lr")
		mb.ItemBuilder().(*array.Float64Builder).AppendNull()
		mb.AppendNull()
	})
	got, err := parquetText(t, data, skyfallParquetFields)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"run_id":"a\"\\\u000a","reward":0.5,"step":0,"regime_id":"r","components":{"progress":1.5},"tags":["x","y"],"cfg":{"lr":null}}` + "\n" +
		`{"run_id":"a\"\\\u000a","reward":0.10000000149011612,"regime_id":"é"}` + "\n"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	for _, line := range strings.Split(strings.TrimSpace(got), "\n") {
		if !json.Valid([]byte(line)) {
			t.Errorf("not JSON: %s", line)
		}
	}
}

// TestParquetLinesFloatsExact: every finite float64 is written as digits
// that parse back to the same bits (NaN and the infinities as words the
// decoders reject).
func TestParquetLinesFloatsExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	vals := []float64{0, math.Copysign(0, -1), math.SmallestNonzeroFloat64, math.MaxFloat64, 1e21, 1e-7, 0.1, 1 << 53, 1<<53 + 2}
	for len(vals) < 5000 {
		if v := math.Float64frombits(rng.Uint64()); !math.IsNaN(v) && !math.IsInf(v, 0) {
			vals = append(vals, v)
		}
	}
	schema := arrow.NewSchema([]arrow.Field{{Name: "reward", Type: arrow.PrimitiveTypes.Float64}, {Name: "regime_id", Type: arrow.BinaryTypes.String}}, nil)
	data := writeTestParquet(t, schema, func(b *array.RecordBuilder) {
		b.Field(0).(*array.Float64Builder).AppendValues(vals, nil)
		for range vals {
			b.Field(1).(*array.StringBuilder).Append("r")
		}
	})
	got, err := parquetText(t, data, skyfallParquetFields)
	if err != nil {
		t.Fatal(err)
	}
	obj, err := DecodeObject("mem://b/x.parquet", "x.parquet", strings.NewReader(got), Options{IdentityFields: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	traces, err := Assemble([]*ObjectRuns{obj}, Options{IdentityFields: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	rewards := traces[0].Rewards
	if len(rewards) != len(vals) {
		t.Fatalf("%d rewards, want %d", len(rewards), len(vals))
	}
	for i, v := range vals {
		if math.Float64bits(rewards[i]) != math.Float64bits(v) {
			t.Fatalf("row %d: %v (%x), want %v (%x)", i+1, rewards[i], math.Float64bits(rewards[i]), v, math.Float64bits(v))
		}
	}
}

// TestParquetLinesSchemaErrors: a column of the wrong type, a column of a
// type with no JSON value and a missing required column name the object
// and the column before any row is read; the protocol's fields not fitting
// their columns (a string reward, no regime_id, components of strings) are
// ErrParquetMisfit, which an engine that may skip bad rows reads row by
// row instead, and the column with no JSON value is not (no row of it has
// a JSON Lines twin).
func TestParquetLinesSchemaErrors(t *testing.T) {
	cases := []struct {
		schema *arrow.Schema
		want   string
		misfit bool
	}{
		{arrow.NewSchema([]arrow.Field{{Name: "reward", Type: arrow.BinaryTypes.String, Nullable: true}, {Name: "regime_id", Type: arrow.BinaryTypes.String, Nullable: true}}, nil),
			"mem://b/x.parquet: column reward: of type utf8, want a number column", true},
		{arrow.NewSchema([]arrow.Field{{Name: "reward", Type: arrow.PrimitiveTypes.Float64, Nullable: true}}, nil),
			"mem://b/x.parquet: column regime_id: missing: a required field (want a string column)", true},
		{arrow.NewSchema([]arrow.Field{{Name: "reward", Type: arrow.PrimitiveTypes.Float64, Nullable: true}, {Name: "regime_id", Type: arrow.BinaryTypes.String, Nullable: true},
			{Name: "components", Type: arrow.MapOf(arrow.BinaryTypes.String, arrow.BinaryTypes.String), Nullable: true}}, nil),
			"mem://b/x.parquet: column components: of type map<utf8, utf8", true},
		{arrow.NewSchema([]arrow.Field{{Name: "reward", Type: arrow.PrimitiveTypes.Float64, Nullable: true}, {Name: "regime_id", Type: arrow.BinaryTypes.String, Nullable: true},
			{Name: "blob", Type: arrow.BinaryTypes.Binary, Nullable: true}}, nil),
			"mem://b/x.parquet: column blob: of type binary, which has no JSON value", false},
	}
	for _, c := range cases {
		data := writeTestParquet(t, c.schema, func(b *array.RecordBuilder) {
			for i, f := range c.schema.Fields() { // one row of nulls
				if !f.Nullable {
					t.Fatalf("%s: make the test's columns nullable", f.Name)
				}
				b.Field(i).AppendNull()
			}
		})
		_, err := parquetText(t, data, skyfallParquetFields)
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("error %v, want %q", err, c.want)
		} else if _, ok := err.(*DataError); !ok {
			t.Errorf("%v is not a DataError", err)
		} else if errors.Is(err, ErrParquetMisfit) != c.misfit {
			t.Errorf("%v: errors.Is(ErrParquetMisfit) = %v, want %v", err, !c.misfit, c.misfit)
		}
	}
	if _, err := parquetText(t, []byte("PAR1 not really"), skyfallParquetFields); err == nil || !strings.Contains(err.Error(), "mem://b/x.parquet: not a readable Parquet file") {
		t.Errorf("a broken file: %v", err)
	}
}
