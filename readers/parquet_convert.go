package readers

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	// arrow-go's zstd codec for Parquet pages, its encoders kept (same bytes).
	_ "github.com/crlbatch/crlbatch/internal/pqzstd"
)

// ConvertRowGroupRows is the number of rows in a row group of the Parquet
// objects ConvertToParquet writes.
const ConvertRowGroupRows = 64 << 10

// convertPageBytes is the size of a data page of the Parquet objects
// ConvertToParquet writes, before compression: a reader holds the current
// page of every column it reads at once.
const convertPageBytes = 64 << 10

// ConvertToParquet writes the rows of the JSON Lines object r (plain, gzip
// or zstd; url names it in errors) to w as one Parquet file (zstd pages;
// those of a column zstd would not shrink by an eighth uncompressed; every
// page header holding its page's CRC-32, written whole once done) that
// ParquetLines reads back into the same rows: one column per top-level
// field, in order of first appearance. A field whose values are all
// integers within int64 is an int64 column; all numbers (integers of at
// most 2^53 among them) a float64 column; all strings a string column; all
// booleans a boolean column; all objects of numbers a map of string to
// float64 (skyfall's components); a row without the field has a null cell.
// Any other field (values of several types, nested values, an explicit
// null) is a string column of each row's raw JSON text, listed in the
// key/value metadata ParquetJSONColumns. Every line must be valid JSON
// (PROTOCOLS 1.1's grammar; blank lines are dropped, so a row's number in
// the Parquet file counts rows, not lines): the first that is not is a
// *DataError naming its line. maxLine and maxObject are the limits of
// Options (0: the default).
func ConvertToParquet(url string, r io.Reader, w io.Writer, maxLine int, maxObject int64) error {
	return convertToParquet(url, r, w, maxLine, maxObject, nil)
}

// ConvertCompressions are the names of the page compressions
// ConvertToParquetCompressed writes (`crlbatch convert --compression`),
// Parquet's own codec names in lower case; ConvertCompression is the
// default. Reading accepts every codec arrow-go reads, whatever wrote it.
var ConvertCompressions = []string{"zstd", "snappy", "lz4_raw", "uncompressed"}

// ConvertCompression is the page compression ConvertToParquet writes.
const ConvertCompression = "zstd"

var convertCodecs = map[string]compress.Compression{
	"zstd":         compress.Codecs.Zstd,
	"snappy":       compress.Codecs.Snappy,
	"lz4_raw":      compress.Codecs.Lz4Raw,
	"uncompressed": compress.Codecs.Uncompressed,
}

// ConvertToParquetCompressed is ConvertToParquet with the data and
// dictionary pages compressed by the codec named (one of
// ConvertCompressions; "" for ConvertCompression), but those of a column
// it would not shrink by an eighth, written uncompressed. Another name is
// an error, before anything is read.
func ConvertToParquetCompressed(url string, r io.Reader, w io.Writer, maxLine int, maxObject int64, compression string) error {
	if compression == "" {
		compression = ConvertCompression
	}
	codec, ok := convertCodecs[compression]
	if !ok {
		return fmt.Errorf("readers: convert: compression %q: want one of %v", compression, ConvertCompressions)
	}
	return convertToParquet(url, r, w, maxLine, maxObject, []parquet.WriterProperty{parquet.WithCompression(codec)})
}

// convertToParquet is ConvertToParquet with the writer properties extra
// after its own (the tests' page and row group sizes, encodings).
func convertToParquet(url string, r io.Reader, w io.Writer, maxLine int, maxObject int64, extra []parquet.WriterProperty) error {
	c := &converter{index: map[string]int{}, extra: extra}
	opts := RecordOptions{IdentityFields: []string{}, MaxRuns: -1, MaxLineBytes: maxLine, MaxObjectBytes: maxObject, Check: c.row}
	if _, err := DecodeRecords(url, "", r, opts); err != nil {
		return err
	}
	// arrow-go writes no page checksum: the file is written whole, then
	// every page header given the CRC-32 of its page (pqSetCRCs), which
	// every reader of crlbatch checks (pqChecked), as parquet-mr's does.
	var buf bytes.Buffer
	if err := c.write(&buf); err != nil {
		return err
	}
	data, err := pqSetCRCs(buf.Bytes(), pqAllCRCs)
	if err != nil {
		return fmt.Errorf("readers: convert %s: %w", url, err)
	}
	_, err = w.Write(data)
	return err
}

type convCell struct {
	col  int
	kind byte
	raw  []byte
	sub  []convMember // the members of an object of numbers
	ok   bool         // sub holds the object's members, all numbers
}

type convMember struct {
	name string
	v    float64
}

type convColumn struct {
	name                                string
	null, num, str, boolean, obj, other bool // kinds seen
	ints, floats                        bool // integer literals within int64; other numbers
	notExact                            bool // an integer literal a float64 column cannot hold
	objNotNumbers                       bool // an object with a member that is not a number

	// The distinct values (raw JSON text) of the cells, and of the keys of
	// the objects, up to convDictMax each; many when there are more.
	vals, keys         map[string]struct{}
	cells, entries     int
	manyVals, manyKeys bool
}

// convDictMax is the most distinct values a column (or the components
// map's keys) may hold to be dictionary-encoded.
const convDictMax = 4096

// distinct counts v among the distinct values of set (cells so far n).
func distinct(set *map[string]struct{}, many *bool, v []byte) {
	if *many {
		return
	}
	if *set == nil {
		*set = map[string]struct{}{}
	}
	if _, ok := (*set)[string(v)]; ok {
		return
	}
	if len(*set) == convDictMax {
		*many, *set = true, nil
		return
	}
	(*set)[string(v)] = struct{}{}
}

// dictionary says whether a column of n cells with these distinct values
// is dictionary-encoded: at most convDictMax of them, and at most one in
// 8 cells (a dictionary of values that rarely repeat only costs reading).
//
// Nor when its dictionary could reach arrow-go's dictionary page size limit:
// the chunk would fall back to plain pages mid-way, and arrow-go writes the
// counts of such a chunk's two page encodings in a Go map's order, so the
// same object would not convert to the same bytes twice. A value stored
// takes at most three bytes per byte of its raw JSON text (an invalid
// UTF-8 byte stored as U+FFFD; numbers are 8 bytes, and 4096 of them stay
// far below the limit), and every row group holds at most the object's
// distinct values.
func dictionary(set map[string]struct{}, many bool, n int) bool {
	if many || n == 0 || len(set)*8 > n {
		return false
	}
	var size int64
	for v := range set {
		size += 3*int64(len(v)) + 4
	}
	return size < parquet.DefaultDictionaryPageSizeLimit
}

type converter struct {
	extra []parquet.WriterProperty
	cols  []*convColumn
	index map[string]int
	rows  [][]convCell
}

func (c *converter) row(r *Record) error {
	cells := make([]convCell, 0, len(r.fields))
	for _, f := range r.fields {
		name := r.keys.names[f.key]
		i, ok := c.index[name]
		if !ok {
			i = len(c.cols)
			c.index[name] = i
			c.cols = append(c.cols, &convColumn{name: name})
		}
		col := c.cols[i]
		raw := r.raw(f)
		cell := convCell{col: i, kind: f.kind, raw: append([]byte(nil), raw...)}
		if f.kind != kindObject {
			col.cells++
			distinct(&col.vals, &col.manyVals, raw)
		}
		switch f.kind {
		case kindNull:
			col.null = true
		case kindNumber:
			col.num = true
			if n, err := strconv.ParseInt(string(raw), 10, 64); err == nil {
				col.ints = true
				if n > 1<<53 || n < -(1<<53) {
					col.notExact = true
				}
			} else {
				col.floats = true
				if _, isInt := parseNumber(raw); isInt {
					col.notExact = true // an integer literal beyond int64
				}
			}
		case kindString:
			col.str = true
		case kindBool:
			col.boolean = true
		case kindObject:
			col.obj = true
			sub, _, err := r.Object(name)
			if err != nil {
				return err
			}
			cell.ok = true
			for _, m := range sub.fields {
				lit := sub.raw(m)
				if m.kind != kindNumber {
					col.objNotNumbers = true
					cell.ok = false
					break
				}
				v, isInt := parseNumber(lit)
				if isInt {
					if n, err := strconv.ParseInt(string(lit), 10, 64); err != nil || n > 1<<53 || n < -(1<<53) {
						col.objNotNumbers = true
					}
				}
				cell.sub = append(cell.sub, convMember{name: sub.keys.names[m.key], v: v})
				col.entries++
				distinct(&col.keys, &col.manyKeys, []byte(sub.keys.names[m.key]))
			}
		default:
			col.other = true
		}
		cells = append(cells, cell)
	}
	c.rows = append(c.rows, cells)
	return nil
}

type convKind int

const (
	convJSON convKind = iota
	convInt
	convFloat
	convString
	convBool
	convMap
)

func (col *convColumn) kind() convKind {
	kinds := 0
	for _, k := range []bool{col.null, col.num, col.str, col.boolean, col.obj, col.other} {
		if k {
			kinds++
		}
	}
	switch {
	case kinds != 1:
		return convJSON
	case col.num && !col.floats:
		return convInt
	case col.num && !col.notExact:
		return convFloat
	case col.str:
		return convString
	case col.boolean:
		return convBool
	case col.obj && !col.objNotNumbers:
		return convMap
	}
	return convJSON
}

var convMapType = arrow.MapOf(arrow.BinaryTypes.String, arrow.PrimitiveTypes.Float64)

func (c *converter) write(w io.Writer) error {
	kinds := make([]convKind, len(c.cols))
	fields := make([]arrow.Field, len(c.cols))
	jsonCols := []string{}
	for i, col := range c.cols {
		kinds[i] = col.kind()
		var t arrow.DataType
		switch kinds[i] {
		case convInt:
			t = arrow.PrimitiveTypes.Int64
		case convFloat:
			t = arrow.PrimitiveTypes.Float64
		case convBool:
			t = arrow.FixedWidthTypes.Boolean
		case convMap:
			t = convMapType
		default:
			t = arrow.BinaryTypes.String
		}
		if kinds[i] == convJSON {
			jsonCols = append(jsonCols, col.name)
		}
		fields[i] = arrow.Field{Name: col.name, Type: t, Nullable: true}
	}
	// Dictionary pages for the columns (and the components map's keys)
	// whose values repeat (identities, labels, constants), plain pages for
	// the others (rewards, hashes): the dictionary of values that rarely
	// repeat only costs the reader its lookups.
	dict := []parquet.WriterProperty{parquet.WithDictionaryDefault(false)}
	dictCols := make([]bool, len(c.cols))
	for i, col := range c.cols {
		switch kinds[i] {
		case convMap:
			if dictionary(col.keys, col.manyKeys, col.entries) {
				dict = append(dict, parquet.WithDictionaryPath(parquet.ColumnPath{col.name, "key_value", "key"}, true))
			}
		case convBool:
		default:
			if dictionary(col.vals, col.manyVals, col.cells) {
				dict = append(dict, parquet.WithDictionaryPath(parquet.ColumnPath{col.name}, true))
				dictCols[i] = true
			}
		}
	}
	// A column its codec would not shrink by an eighth (rewards,
	// log-probabilities: float64s whose low bytes are noise) is written
	// uncompressed: the reader takes its pages as they lie in the object
	// instead of decompressing (~4 % of the Parquet job's CPU on the 1 GB
	// sweep, for 3 % more bytes).
	base := parquet.NewWriterProperties(append([]parquet.WriterProperty{
		parquet.WithCompression(convertCodecs[ConvertCompression])}, c.extra...)...)
	raw := c.incompressible(kinds, dictCols, base)
	names, _ := json.Marshal(jsonCols)
	md := arrow.NewMetadata([]string{ParquetJSONColumns}, []string{string(names)})
	schema := arrow.NewSchema(fields, &md)
	mem := memory.NewGoAllocator()
	props := parquet.NewWriterProperties(append([]parquet.WriterProperty{
		parquet.WithAllocator(mem),
		parquet.WithCompression(convertCodecs[ConvertCompression]),
		parquet.WithMaxRowGroupLength(ConvertRowGroupRows),
		parquet.WithDataPageSize(convertPageBytes),
	}, append(append(raw, dict...), c.extra...)...)...)
	fw, err := pqarrow.NewFileWriter(schema, struct{ io.Writer }{w}, props, pqarrow.NewArrowWriterProperties(pqarrow.WithAllocator(mem)))
	if err != nil {
		return fmt.Errorf("readers: convert: %w", err)
	}
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	at := make([]int, len(c.cols)) // the row's cell of each column, -1 for none
	for lo := 0; lo < len(c.rows); lo += ConvertRowGroupRows {
		hi := min(lo+ConvertRowGroupRows, len(c.rows))
		for _, cells := range c.rows[lo:hi] {
			for i := range at {
				at[i] = -1
			}
			for k, cell := range cells {
				at[cell.col] = k
			}
			for i, k := range at {
				fb := b.Field(i)
				if k < 0 {
					fb.AppendNull()
					continue
				}
				cell := cells[k]
				switch kinds[i] {
				case convInt:
					n, _ := strconv.ParseInt(string(cell.raw), 10, 64)
					fb.(*array.Int64Builder).Append(n)
				case convFloat:
					v, _ := parseNumber(cell.raw)
					fb.(*array.Float64Builder).Append(v)
				case convString:
					fb.(*array.StringBuilder).Append(string(decodeString(cell.raw)))
				case convBool:
					fb.(*array.BooleanBuilder).Append(cell.raw[0] == 't')
				case convMap:
					mb := fb.(*array.MapBuilder)
					mb.Append(true)
					kb, ib := mb.KeyBuilder().(*array.StringBuilder), mb.ItemBuilder().(*array.Float64Builder)
					for _, m := range cell.sub {
						kb.Append(m.name)
						ib.Append(m.v)
					}
				default:
					fb.(*array.StringBuilder).Append(string(cell.raw))
				}
			}
		}
		rec := b.NewRecordBatch()
		err := fw.Write(rec)
		rec.Release()
		if err != nil {
			return fmt.Errorf("readers: convert: %w", err)
		}
	}
	if err := fw.Close(); err != nil {
		return fmt.Errorf("readers: convert: %w", err)
	}
	return nil
}

// convRawShare is the share of a column's bytes its codec must save for
// its pages to be compressed: less, and they are written uncompressed.
const convRawShare = 8 // an eighth

// incompressible returns the writer properties that write uncompressed
// each top-level column of numbers or strings without a dictionary whose
// plain values in the first row group its codec (in base) does not shrink
// by 1/convRawShare: the same values, in pages a reader need not
// decompress. Columns of booleans, dictionaries and the components map
// keep their codec.
func (c *converter) incompressible(kinds []convKind, dictCols []bool, base *parquet.WriterProperties) []parquet.WriterProperty {
	plain := make([][]byte, len(c.cols))
	take := false
	for i := range c.cols {
		switch codec := base.CompressionFor(c.cols[i].name); {
		case dictCols[i] || kinds[i] == convBool || kinds[i] == convMap || codec == compress.Codecs.Uncompressed:
		default:
			plain[i], take = []byte{}, true
		}
	}
	if !take {
		return nil
	}
	var b [8]byte
	for _, cells := range c.rows[:min(len(c.rows), ConvertRowGroupRows)] {
		for _, cell := range cells {
			i := cell.col
			if plain[i] == nil {
				continue
			}
			switch kinds[i] {
			case convInt:
				n, _ := strconv.ParseInt(string(cell.raw), 10, 64)
				binary.LittleEndian.PutUint64(b[:], uint64(n))
				plain[i] = append(plain[i], b[:]...)
			case convFloat:
				v, _ := parseNumber(cell.raw)
				binary.LittleEndian.PutUint64(b[:], math.Float64bits(v))
				plain[i] = append(plain[i], b[:]...)
			default:
				v := cell.raw
				if kinds[i] == convString {
					v = decodeString(cell.raw)
				}
				binary.LittleEndian.PutUint32(b[:], uint32(len(v)))
				plain[i] = append(append(plain[i], b[:4]...), v...)
			}
		}
	}
	var out []parquet.WriterProperty
	for i, p := range plain {
		if len(p) == 0 {
			continue
		}
		name := c.cols[i].name
		codec, err := compress.GetCodec(base.CompressionFor(name))
		if err != nil {
			continue
		}
		if n := len(codec.EncodeLevel(nil, p, base.CompressionLevelFor(name))); n > len(p)-len(p)/convRawShare {
			out = append(out, parquet.WithCompressionFor(name, compress.Codecs.Uncompressed))
		}
	}
	return out
}
