package readers

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/schema"
)

// structMembersFile is a Parquet file of rows run_id, reward, regime_id and
// an optional struct components {a, b} of optional doubles, written leaf by
// leaf with the definition levels given (2: a value; 1: the member null;
// 0: the struct null), so that its two members may disagree on where the
// struct is null, as no writer of whole rows would make them.
func structMembersFile(t *testing.T, defsA, defsB []int16, dict bool) []byte {
	t.Helper()
	str := func(name string) schema.Node {
		return schema.MustPrimitive(schema.NewPrimitiveNodeLogical(name, parquet.Repetitions.Optional, schema.StringLogicalType{}, parquet.Types.ByteArray, -1, -1))
	}
	dbl := func(name string) schema.Node {
		return schema.NewFloat64Node(name, parquet.Repetitions.Optional, -1)
	}
	comps := schema.MustGroup(schema.NewGroupNode("components", parquet.Repetitions.Optional, schema.FieldList{dbl("a"), dbl("b")}, -1))
	root := schema.MustGroup(schema.NewGroupNode("schema", parquet.Repetitions.Required, schema.FieldList{str("run_id"), dbl("reward"), str("regime_id"), comps}, -1))
	var buf bytes.Buffer
	w := file.NewParquetWriter(&buf, root, file.WithWriterProps(parquet.NewWriterProperties(parquet.WithDictionaryDefault(dict))))
	rg := w.AppendRowGroup()
	n := len(defsA)
	ones := make([]int16, n)
	for i := range ones {
		ones[i] = 1
	}
	strs := func(v string) []parquet.ByteArray {
		out := make([]parquet.ByteArray, n)
		for i := range out {
			out[i] = parquet.ByteArray(v)
		}
		return out
	}
	values := func(defs []int16) []float64 {
		var out []float64
		for i, d := range defs {
			if d == 2 {
				out = append(out, float64(i%3))
			}
		}
		return out
	}
	rewards := make([]float64, n)
	for k, write := range []func(file.ColumnChunkWriter) error{
		func(c file.ColumnChunkWriter) error {
			_, err := c.(*file.ByteArrayColumnChunkWriter).WriteBatch(strs("r"), ones, nil)
			return err
		},
		func(c file.ColumnChunkWriter) error {
			_, err := c.(*file.Float64ColumnChunkWriter).WriteBatch(rewards, ones, nil)
			return err
		},
		func(c file.ColumnChunkWriter) error {
			_, err := c.(*file.ByteArrayColumnChunkWriter).WriteBatch(strs("l"), ones, nil)
			return err
		},
		func(c file.ColumnChunkWriter) error {
			_, err := c.(*file.Float64ColumnChunkWriter).WriteBatch(values(defsA), defsA, nil)
			return err
		},
		func(c file.ColumnChunkWriter) error {
			_, err := c.(*file.Float64ColumnChunkWriter).WriteBatch(values(defsB), defsB, nil)
			return err
		},
	} {
		c, err := rg.NextColumn()
		if err != nil {
			t.Fatal(err)
		}
		if err := write(c); err != nil {
			t.Fatalf("column %d: %v", k, err)
		}
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if err := rg.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestStructMembersRead: a components struct (its members' plain or
// dictionary pages) is read the direct way into what the general way
// reads, the rows where the struct is null told apart from those where
// only a member is; members that disagree on where the struct is null (a
// damaged file) send the object the general way.
func TestStructMembersRead(t *testing.T) {
	const n = 300
	agree, a, b := make([]int16, n), make([]int16, n), make([]int16, n)
	for i := range n {
		switch {
		case i%7 == 3:
			a[i], b[i] = 0, 0 // the struct null
		case i%5 == 1:
			a[i], b[i] = 1, 2 // a null member
		case i%11 == 2:
			a[i], b[i] = 1, 1 // {}
		default:
			a[i], b[i] = 2, 2
		}
		agree[i] = a[i]
	}
	disagree := append([]int16(nil), b...)
	disagree[151] = 0 // the struct null in b only (a has 1 there)
	if a[151] != 1 {
		t.Fatal("row 151 must hold the struct")
	}
	opts := Options{Components: []string{"a", "b"}}
	for _, dict := range []bool{false, true} {
		for _, c := range []struct {
			name   string
			b      []int16
			direct bool
		}{
			{"agree", b, true},
			{"disagree", disagree, false},
		} {
			url := fmt.Sprintf("mem://b/struct-%s-dict-%t.parquet", c.name, dict)
			data := structMembersFile(t, agree, c.b, dict)
			sameDecoded(t, url, data, opts)
			if got := tookDirect(t, url); got != c.direct {
				t.Errorf("%s: the direct way %t, want %t", url, got, c.direct)
			}
		}
	}
}
