package writers

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	// arrow-go's zstd codec for Parquet pages, its encoders kept (same bytes).
	_ "github.com/crlbatch/crlbatch/internal/pqzstd"
)

// The key/value metadata that every Parquet file carries (INTERFACE.md).
const (
	KeyVersion       = "crlbatch.version"
	KeyProtocol      = "crlbatch.protocol"
	KeyParams        = "crlbatch.params"
	KeySchemaVersion = "crlbatch.schema_version"
	// Provenance that is the same for the same inputs (pipeline appends
	// them): INPUT as given, credentials redacted; the VCS revision of the
	// binary, when it carries one.
	KeyInput  = "crlbatch.input"
	KeyCommit = "crlbatch.commit"
)

// RowGroupRows is the number of rows in each Parquet row group but the last.
const RowGroupRows = 1 << 17

// Metadata is the ordered key/value metadata of a Parquet file. It must hold
// KeyVersion, KeyProtocol, KeyParams (a JSON document) and KeySchemaVersion,
// each once and non-empty; other keys may follow.
type Metadata []KV

// NewMetadata returns the four required pairs in a fixed order, with params
// encoded as compact JSON (a json.RawMessage is compacted as it is).
func NewMetadata(version, protocol, schemaVersion string, params any) (Metadata, error) {
	p, err := json.Marshal(params)
	if err != nil {
		return nil, fmt.Errorf("writers: encoding params: %w", err)
	}
	m := Metadata{
		{KeyVersion, version},
		{KeyProtocol, protocol},
		{KeyParams, string(p)},
		{KeySchemaVersion, schemaVersion},
	}
	if _, err := m.check(); err != nil {
		return nil, err
	}
	return m, nil
}

var requiredKeys = []string{KeyVersion, KeyProtocol, KeyParams, KeySchemaVersion}

// check validates m and returns the crlbatch version it names.
func (m Metadata) check() (version string, err error) {
	seen := make(map[string]bool, len(m))
	for _, kv := range m {
		switch {
		case kv.Key == "":
			return "", fmt.Errorf("writers: metadata key is empty")
		case seen[kv.Key]:
			return "", fmt.Errorf("writers: metadata key %q repeated", kv.Key)
		case strings.HasPrefix(kv.Key, "ARROW:"):
			return "", fmt.Errorf("writers: metadata key %q is reserved for Arrow", kv.Key)
		case !utf8.ValidString(kv.Key) || !utf8.ValidString(kv.Value):
			return "", fmt.Errorf("writers: metadata %q is not valid UTF-8", kv.Key)
		case kv.Value == "" && slices.Contains(requiredKeys, kv.Key):
			return "", fmt.Errorf("writers: metadata %q is empty", kv.Key)
		case kv.Key == KeyParams && !json.Valid([]byte(kv.Value)):
			return "", fmt.Errorf("writers: metadata %q is not valid JSON", kv.Key)
		case kv.Key == KeyVersion:
			version = kv.Value
		}
		seen[kv.Key] = true
	}
	for _, k := range requiredKeys {
		if !seen[k] {
			return "", fmt.Errorf("writers: metadata %q missing", k)
		}
	}
	return version, nil
}

// CreatedBy is the Parquet created_by string of files written by the given
// crlbatch version.
func CreatedBy(version string) string { return "crlbatch version " + version }

// WriteParquet writes t to w as one zstd-compressed Parquet file carrying kv
// in the file's key/value metadata, in row groups of RowGroupRows rows. It
// never closes w. Identical tables and metadata give identical bytes: the file
// holds no timestamp, and created_by names only the crlbatch version.
//
// The schema uses only types every reader maps without options: UTF8 strings,
// INT64, DOUBLE, BOOLEAN, LIST<DOUBLE> and MAP<STRING,STRING>; no unsigned,
// large or Arrow dictionary types, and no ARROW:schema blob (pages may be
// dictionary-encoded, which every reader decodes). Non-nullable columns are
// REQUIRED, the others OPTIONAL.
func WriteParquet(w io.Writer, t *Table, kv Metadata) error {
	return WriteParquetContext(context.Background(), w, t, kv)
}

// WriteParquetContext is WriteParquet that stops with ctx's error once ctx
// is done: it checks ctx before each column of each row group, so a
// cancelled job stops within one column of RowGroupRows rows. What it wrote
// to w by then is not a Parquet file.
func WriteParquetContext(ctx context.Context, w io.Writer, t *Table, kv Metadata) error {
	if err := t.checkComplete(); err != nil {
		return err
	}
	schema, version, err := t.schema(kv)
	if err != nil {
		return err
	}
	mem := memory.NewGoAllocator()
	props := t.writerProperties(mem, version)
	// pqarrow closes a sink that is an io.Closer: hide Close from it.
	fw, err := pqarrow.NewFileWriter(schema, struct{ io.Writer }{w}, props,
		pqarrow.NewArrowWriterProperties(pqarrow.WithAllocator(mem)))
	if err != nil {
		return fmt.Errorf("writers: parquet: %w", err)
	}
	// Each row group is written a column at a time, the column's Arrow
	// array built, written and released before the next is built: a
	// record of the whole row group was a second copy of the table (for
	// 100,000 labels ~70 MB; issue 16). The bytes are those of
	// fw.Write(record): it writes a record's columns one by one the same
	// way.
	for lo := 0; lo < t.rows; lo += RowGroupRows {
		hi := min(lo+RowGroupRows, t.rows)
		if err := fw.NewRowGroupChecked(); err != nil {
			return fmt.Errorf("writers: parquet: rows %d-%d: %w", lo, hi-1, err)
		}
		for _, c := range t.cols {
			if err := ctx.Err(); err != nil {
				return err
			}
			a, err := c.array(mem, lo, hi)
			if err != nil {
				return err
			}
			err = fw.WriteColumnData(a)
			a.Release()
			if err != nil {
				fw.Close()
				return fmt.Errorf("writers: parquet: rows %d-%d: %w", lo, hi-1, err)
			}
		}
	}
	if err := fw.Close(); err != nil {
		return fmt.Errorf("writers: parquet: %w", err)
	}
	return nil
}

// schema is t's Arrow schema carrying kv, which it checks, and the crlbatch
// version kv names. pqarrow copies the schema's metadata, in order, into
// the Parquet footer's key_value_metadata; no ARROW:schema blob is stored.
func (t *Table) schema(kv Metadata) (*arrow.Schema, string, error) {
	version, err := kv.check()
	if err != nil {
		return nil, "", err
	}
	keys, vals := make([]string, len(kv)), make([]string, len(kv))
	for i, p := range kv {
		keys[i], vals[i] = p.Key, p.Value
	}
	md := arrow.NewMetadata(keys, vals)
	return arrow.NewSchema(t.arrowFields(), &md), version, nil
}

// writerProperties are the Parquet writer's settings for t: zstd at
// level 1 (OutputZstdLevel), row groups of RowGroupRows, created_by naming
// version, and no dictionary on a column whose dictionary would fall back
// to plain pages (dictionary.go).
func (t *Table) writerProperties(mem memory.Allocator, version string) *parquet.WriterProperties {
	return parquet.NewWriterProperties(append([]parquet.WriterProperty{
		parquet.WithAllocator(mem),
		parquet.WithCompression(compress.Codecs.Zstd),
		parquet.WithCompressionLevel(OutputZstdLevel),
		parquet.WithCreatedBy(CreatedBy(version)),
		parquet.WithMaxRowGroupLength(RowGroupRows),
		parquet.WithDictionaryPageSizeLimit(parquet.DefaultDictionaryPageSizeLimit),
	}, t.noDictionary(parquet.DefaultDictionaryPageSizeLimit)...)...)
}

// OutputZstdLevel is the zstd level of the result files' pages: 1,
// klauspost/compress's fastest encoder. Its default (level 3) prepares
// tables several times larger for every page, most of them a few KB, and
// the five result files of the 1 GB benchmark sweep came out within 0.6 %
// of the same size at either level (smaller at 1 for curves.parquet); a
// warm nightly rerun spent ~8 ms less CPU at 1 (docs/decisions.md, "The
// result files' zstd level").
const OutputZstdLevel = 1

var (
	listType    = arrow.ListOfField(arrow.Field{Name: "element", Type: arrow.PrimitiveTypes.Float64, Nullable: true})
	strListType = arrow.ListOfField(arrow.Field{Name: "element", Type: arrow.BinaryTypes.String, Nullable: false})
	mapType     = arrow.MapOf(arrow.BinaryTypes.String, arrow.BinaryTypes.String)
)

func (c *column) arrowType() arrow.DataType {
	switch c.kind {
	case kindString:
		return arrow.BinaryTypes.String
	case kindInt64:
		return arrow.PrimitiveTypes.Int64
	case kindMetric:
		return arrow.PrimitiveTypes.Float64
	case kindBool:
		return arrow.FixedWidthTypes.Boolean
	case kindList:
		return listType
	case kindStringList:
		return strListType
	default: // kindMap, kindReasons
		return mapType
	}
}

func (t *Table) arrowFields() []arrow.Field {
	fields := make([]arrow.Field, len(t.cols))
	for i, c := range t.cols {
		fields[i] = arrow.Field{Name: c.name, Type: c.arrowType(), Nullable: c.nullable}
	}
	return fields
}

func (c *column) validSlice(lo, hi int) []bool {
	if !c.nullable {
		return nil // all valid
	}
	return c.valid[lo:hi]
}

func (c *column) array(mem memory.Allocator, lo, hi int) (arrow.Array, error) {
	b := array.NewBuilder(mem, c.arrowType())
	defer b.Release()
	switch c.kind {
	case kindString:
		b.(*array.StringBuilder).AppendValues(c.strs[lo:hi], c.validSlice(lo, hi))
	case kindInt64:
		b.(*array.Int64Builder).AppendValues(c.ints[lo:hi], c.validSlice(lo, hi))
	case kindMetric:
		b.(*array.Float64Builder).AppendValues(c.f64s[lo:hi], c.validSlice(lo, hi))
	case kindBool:
		b.(*array.BooleanBuilder).AppendValues(c.bools[lo:hi], c.validSlice(lo, hi))
	case kindList:
		if c.offsets[hi]-c.offsets[lo] > math.MaxInt32 {
			return nil, fmt.Errorf("writers: column %q: more than %d list elements in one row group", c.name, math.MaxInt32)
		}
		lb := b.(*array.ListBuilder)
		vb := lb.ValueBuilder().(*array.Float64Builder)
		lb.Reserve(hi - lo)
		vb.Reserve(c.offsets[hi] - c.offsets[lo])
		for r := lo; r < hi; r++ {
			s, e := c.offsets[r], c.offsets[r+1]
			lb.Append(true)
			vb.AppendValues(c.elems[s:e], c.elemValid[s:e])
		}
	case kindStringList:
		if c.offsets[hi]-c.offsets[lo] > math.MaxInt32 {
			return nil, fmt.Errorf("writers: column %q: more than %d list elements in one row group", c.name, math.MaxInt32)
		}
		lb := b.(*array.ListBuilder)
		vb := lb.ValueBuilder().(*array.StringBuilder)
		lb.Reserve(hi - lo)
		reserveStrings(vb, c.keys[c.offsets[lo]:c.offsets[hi]])
		for r := lo; r < hi; r++ {
			s, e := c.offsets[r], c.offsets[r+1]
			lb.Append(true)
			vb.AppendValues(c.keys[s:e], nil)
		}
	default: // kindMap, kindReasons
		if c.offsets[hi]-c.offsets[lo] > math.MaxInt32 {
			return nil, fmt.Errorf("writers: column %q: more than %d map entries in one row group", c.name, math.MaxInt32)
		}
		mb := b.(*array.MapBuilder)
		kb := mb.KeyBuilder().(*array.StringBuilder)
		ib := mb.ItemBuilder().(*array.StringBuilder)
		mb.Reserve(hi - lo)
		s, e := c.offsets[lo], c.offsets[hi]
		mb.ValueBuilder().Reserve(e - s)
		reserveStrings(kb, c.keys[s:e])
		reserveStrings(ib, c.vals[s:e])
		for r := lo; r < hi; r++ {
			s, e := c.offsets[r], c.offsets[r+1]
			mb.Append(true)
			kb.AppendValues(c.keys[s:e], nil)
			ib.AppendValues(c.vals[s:e], nil)
		}
	}
	return b.NewArray(), nil
}

// reserveStrings makes room in b for vals, appended later a few at a time.
// Without it each AppendValues grows b's value buffer to exactly its new
// length, copying it whole, and a batch costs the square of its bytes
// (issue 16).
func reserveStrings(b *array.StringBuilder, vals []string) {
	n := 0
	for _, v := range vals {
		n += len(v)
	}
	b.Reserve(len(vals))
	b.ReserveData(n)
}
