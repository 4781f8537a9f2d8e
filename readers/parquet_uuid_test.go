package readers

import (
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/extensions"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/google/uuid"
)

// TestParquetUUID: a column of Parquet's UUID logical type (what DuckDB
// writes for a field of UUID strings, such as run ids made by uuid4) is a
// string column whose cells read as their canonical text, an identity
// field's included; with the file's Arrow schema stored or not, the rows
// are the JSON lines of that text, and decode to the object those lines
// decode to.
func TestParquetUUID(t *testing.T) {
	ids := []string{"7f1a3c52-9a4e-4b6f-8d21-0c5e9b7a4f10", "00000000-0000-0000-0000-000000000000", "ffffffff-ffff-4fff-bfff-ffffffffffff"}
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "run_id", Type: extensions.NewUUIDType(), Nullable: true},
		{Name: "reward", Type: arrow.PrimitiveTypes.Float64},
		{Name: "regime_id", Type: arrow.BinaryTypes.String},
		{Name: "obs", Type: extensions.NewUUIDType(), Nullable: true},
		{Name: "seen", Type: arrow.ListOf(extensions.NewUUIDType()), Nullable: true},
	}, nil)
	fill := func(b *array.RecordBuilder) {
		ub := b.Field(0).(*extensions.UUIDBuilder)
		for _, id := range []string{ids[0], ids[0], ids[1]} {
			ub.Append(uuid.MustParse(id))
		}
		b.Field(1).(*array.Float64Builder).AppendValues([]float64{0.5, 0.75, 1}, nil)
		b.Field(2).(*array.StringBuilder).AppendValues([]string{"calm", "storm", "calm"}, nil)
		ob := b.Field(3).(*extensions.UUIDBuilder)
		ob.Append(uuid.MustParse(ids[2]))
		ob.AppendNull()
		ob.Append(uuid.MustParse(ids[1]))
		lb := b.Field(4).(*array.ListBuilder)
		lb.Append(true)
		lb.ValueBuilder().(*extensions.UUIDBuilder).Append(uuid.MustParse(ids[1]))
		lb.ValueBuilder().(*extensions.UUIDBuilder).Append(uuid.MustParse(ids[2]))
		lb.AppendNull()
		lb.Append(true)
	}
	want := `{"run_id":"` + ids[0] + `","reward":0.5,"regime_id":"calm","obs":"` + ids[2] + `","seen":["` + ids[1] + `","` + ids[2] + `"]}
{"run_id":"` + ids[0] + `","reward":0.75,"regime_id":"storm"}
{"run_id":"` + ids[1] + `","reward":1,"regime_id":"calm","obs":"` + ids[1] + `","seen":[]}
`
	fields := append([]ParquetField{{Name: "run_id", Type: "string"}}, skyfallParquetFields...)
	for name, props := range map[string]pqarrow.ArrowWriterProperties{
		"logical type": pqarrow.DefaultWriterProps(),
		"arrow.uuid":   pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()),
	} {
		t.Run(name, func(t *testing.T) {
			data := writeParquetArrowProps(t, schema, props, fill)
			readsAsLines(t, "mem://b/uuid-"+strings.ReplaceAll(name, " ", "-")+".parquet", data, want)
		})
	}
	// A run id of another type than strings is still refused.
	bad := arrow.NewSchema([]arrow.Field{{Name: "run_id", Type: &arrow.FixedSizeBinaryType{ByteWidth: 16}}, {Name: "reward", Type: arrow.PrimitiveTypes.Float64}, {Name: "regime_id", Type: arrow.BinaryTypes.String}}, nil)
	data := writeTestParquet(t, bad, func(b *array.RecordBuilder) {
		b.Field(0).(*array.FixedSizeBinaryBuilder).Append(make([]byte, 16))
		b.Field(1).(*array.Float64Builder).Append(1)
		b.Field(2).(*array.StringBuilder).Append("calm")
	})
	if _, err := parquetText(t, data, fields); err == nil || !strings.Contains(err.Error(), "column run_id: of type fixed_size_binary[16]") {
		t.Errorf("a fixed-size binary run_id: %v, want it refused naming the column", err)
	}
}
