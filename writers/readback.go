package writers

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// ReadBack is a Parquet file read back into plain Go values, for tests and
// checks of written outputs: a null is nil; strings, int64, float64 and bool
// are themselves; a list is []any; a map is []KV in stored order.
type ReadBack struct {
	Columns  []string
	Types    []string // Arrow type names, e.g. "utf8", "int64", "list<element: double>"
	Rows     []map[string]any
	Metadata map[string]string
	// CreatedBy is the file's created_by string.
	CreatedBy string
}

// ReadParquet reads a whole Parquet file.
func ReadParquet(r parquet.ReaderAtSeeker) (*ReadBack, error) {
	pf, err := file.NewParquetReader(r)
	if err != nil {
		return nil, fmt.Errorf("writers: read back: %w", err)
	}
	defer pf.Close()
	out := &ReadBack{Metadata: map[string]string{}, CreatedBy: pf.MetaData().GetCreatedBy()}
	kv := pf.MetaData().KeyValueMetadata()
	for i := 0; i < kv.Len(); i++ {
		out.Metadata[kv.Keys()[i]] = kv.Values()[i]
	}
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	if err != nil {
		return nil, fmt.Errorf("writers: read back: %w", err)
	}
	tbl, err := fr.ReadTable(context.Background())
	if err != nil {
		return nil, fmt.Errorf("writers: read back: %w", err)
	}
	defer tbl.Release()
	n := int(tbl.NumRows())
	out.Rows = make([]map[string]any, n)
	for i := range out.Rows {
		out.Rows[i] = map[string]any{}
	}
	for c := 0; c < int(tbl.NumCols()); c++ {
		col := tbl.Column(c)
		name := col.Name()
		out.Columns = append(out.Columns, name)
		out.Types = append(out.Types, col.DataType().String())
		row := 0
		for _, chunk := range col.Data().Chunks() {
			for i := 0; i < chunk.Len(); i++ {
				out.Rows[row][name] = cell(chunk, i)
				row++
			}
		}
	}
	return out, nil
}

func cell(a arrow.Array, i int) any {
	if a.IsNull(i) {
		return nil
	}
	switch a := a.(type) {
	case *array.String:
		return a.Value(i)
	case *array.Int64:
		return a.Value(i)
	case *array.Float64:
		return a.Value(i)
	case *array.Boolean:
		return a.Value(i)
	case *array.Map:
		s, e := a.ValueOffsets(i)
		keys, items := a.Keys(), a.Items()
		out := make([]KV, 0, e-s)
		for j := int(s); j < int(e); j++ {
			out = append(out, KV{Key: fmt.Sprint(cell(keys, j)), Value: fmt.Sprint(cell(items, j))})
		}
		return out
	case *array.List:
		s, e := a.ValueOffsets(i)
		vals := a.ListValues()
		out := make([]any, 0, e-s)
		for j := int(s); j < int(e); j++ {
			out = append(out, cell(vals, j))
		}
		return out
	}
	return fmt.Sprintf("unsupported %s", a.DataType())
}
