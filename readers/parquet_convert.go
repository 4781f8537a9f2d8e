package readers

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/extensions"
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
// booleans a boolean column; all objects of numbers (skyfall's
// components) a struct of float64 columns, one per member name in order of
// first appearance, when every object lists its members in that order
// (asStruct), else a map of string to float64; a row without the field has
// a null cell.
// Any other field (values of several types, nested values, an explicit
// null) is a string column of each row's raw JSON text, listed in the
// key/value metadata ParquetJSONColumns. Every line must be valid JSON
// (PROTOCOLS 1.1's grammar; blank lines are dropped, so a row's number in
// the Parquet file counts rows, not lines): the first that is not is a
// *DataError naming its line. maxLine and maxObject are the limits of
// Options (0: the default). It holds r's bytes to read them twice
// (ConvertObject reads an object twice from its store instead).
func ConvertToParquet(url string, r io.Reader, w io.Writer, maxLine int, maxObject int64) error {
	return convertToParquet(url, r, w, maxLine, maxObject, nil, false)
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
	return convertToParquet(url, r, w, maxLine, maxObject, []parquet.WriterProperty{parquet.WithCompression(codec)}, false)
}

// ConvertSource opens the object ConvertObject converts, from its first
// byte: it is called twice.
type ConvertSource func() (io.ReadCloser, error)

// ConvertObject converts the object open opens as ConvertToParquetCompressed
// does, reading it twice instead of holding it: a first read learns every
// column's type (and validates every line), a second builds the row groups
// as their rows arrive, so that memory holds one row group's columns and
// the Parquet file built, whatever the object's size. The second read
// takes as many bytes as the first did (an object appended to meanwhile,
// a log still written, converts as the first read saw it); one whose
// bytes differ (rewritten meanwhile, or cut shorter) is an error that says
// so (ErrChangedWhileConverting), not a DataError: reading it again may
// succeed.
func ConvertObject(url string, open ConvertSource, maxLine int, maxObject int64, compression string) (*Converted, error) {
	return ConvertObjectSpilled(url, open, maxLine, maxObject, compression, false, nil, 0)
}

// ConvertObjectSpilled is ConvertObject keeping the Parquet file it builds
// in a spill file that spill makes once the file has grown past hold bytes
// (0: ConvertHoldBytes; spill nil: in memory, whatever its size), so that what it
// holds in memory stays one row group's columns. A spill file that cannot
// be made, written or read back fails the conversion or WriteTo with a
// *SpillError (never a DataError); the caller calls Release on the
// Converted when done with it. With maps set, every column of objects of
// numbers is a map, never a struct (`crlbatch convert --maps`).
func ConvertObjectSpilled(url string, open ConvertSource, maxLine int, maxObject int64, compression string, maps bool, spill ConvertSpill, hold int64) (*Converted, error) {
	if compression == "" {
		compression = ConvertCompression
	}
	codec, ok := convertCodecs[compression]
	if !ok {
		return nil, fmt.Errorf("readers: convert: compression %q: want one of %v", compression, ConvertCompressions)
	}
	return convertObject(url, open, maxLine, maxObject, []parquet.WriterProperty{parquet.WithCompression(codec)}, maps, spill, hold)
}

// Converted is the Parquet file ConvertObject made of an object, held as
// arrow-go wrote it, without page checksums, in memory or in a spill file.
type Converted struct {
	url  string
	data pqFile
}

// Spilled says whether the file is held in a spill file rather than in
// memory.
func (c *Converted) Spilled() bool {
	_, ok := c.data.(*pqSpilled)
	return ok
}

// Release closes and removes the spill file holding the file, if any; the
// Converted is not used after it.
func (c *Converted) Release() error {
	if p, ok := c.data.(*pqSpilled); ok {
		c.data = pqChunks(nil)
		return p.release()
	}
	return nil
}

// WriteTo writes the file to w with the CRC-32 of every page in its
// header, a piece at a time (the file is never held twice); it may be
// called again, and writes the same bytes.
func (c *Converted) WriteTo(w io.Writer) (int64, error) {
	cw := &convWriter{w: w}
	if err := pqWriteCRCs(cw, c.data, pqAllCRCs); err != nil {
		if cw.err == nil {
			err = fmt.Errorf("readers: convert %s: %w", c.url, err)
		}
		return cw.n, err
	}
	return cw.n, nil
}

// convWriter counts the bytes written through it and keeps w's error.
type convWriter struct {
	w   io.Writer
	n   int64
	err error
}

func (c *convWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	if err != nil && c.err == nil {
		c.err = err
	}
	return n, err
}

// convertToParquet is ConvertToParquet with the writer properties extra
// after its own (the tests' page and row group sizes, encodings), and with
// maps set objects of numbers as maps only. It holds
// r's bytes, read whole, to read them twice.
func convertToParquet(url string, r io.Reader, w io.Writer, maxLine int, maxObject int64, extra []parquet.WriterProperty, maps bool) error {
	data, err := io.ReadAll(r)
	if err != nil {
		return fmt.Errorf("readers: %s: %w", url, err)
	}
	open := func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil }
	conv, err := convertObject(url, open, maxLine, maxObject, extra, maps, nil, 0)
	if err != nil {
		return err
	}
	_, err = conv.WriteTo(w)
	return err
}

// ErrChangedWhileConverting is the error of an object whose two reads by
// ConvertObject differ.
var ErrChangedWhileConverting = errors.New("the object changed while it was being converted (its two reads differ)")

// convertObject converts the object open reads; extra are writer
// properties after convert's own, and maps writes every column of objects
// of numbers as a map, never as a struct.
func convertObject(url string, open ConvertSource, maxLine int, maxObject int64, extra []parquet.WriterProperty, maps bool, spill ConvertSpill, hold int64) (*Converted, error) {
	opts, err := RecordOptions{IdentityFields: []string{}, MaxRuns: -1, MaxLineBytes: maxLine, MaxObjectBytes: maxObject}.normalize()
	if err != nil {
		return nil, err
	}
	c := &converter{index: map[string]int{}, extra: extra, maps: maps}
	first, err := eachRecord(url, open, opts, c.row)
	if err != nil {
		return nil, err
	}
	// arrow-go writes no page checksum: the file is built whole, then
	// written with every page header given the CRC-32 of its page
	// (Converted.WriteTo, pqWriteCRCs), which every reader of crlbatch
	// checks (pqChecked), as parquet-mr's does.
	if hold <= 0 {
		hold = ConvertHoldBytes
	}
	buf := &spillWriter{hold: hold, spill: spill}
	again := func() (io.ReadCloser, error) {
		rc, err := open()
		if err != nil {
			return nil, err
		}
		return struct {
			io.Reader
			io.Closer
		}{io.LimitReader(rc, first.n), rc}, nil
	}
	second, err := c.write(url, again, opts, buf)
	if err != nil {
		buf.discard()
		if se := (*SpillError)(nil); errors.As(err, &se) {
			// Without what arrow-go's writer wrapped it in.
			return nil, fmt.Errorf("readers: convert %s: %w", url, se)
		}
		return nil, err
	}
	if second != first {
		buf.discard()
		return nil, fmt.Errorf("readers: convert %s: %w: %d bytes (CRC-32C %08x), then %d (%08x)", url, ErrChangedWhileConverting, first.n, first.sum, second.n, second.sum)
	}
	data, err := buf.file()
	if err != nil {
		buf.discard()
		return nil, fmt.Errorf("readers: convert %s: %w", url, err)
	}
	return &Converted{url: url, data: data}, nil
}

// readSum is the length and CRC-32C of the bytes of one read of an object.
type readSum struct {
	n   int64
	sum uint32
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// sumReader is an io.Reader that sums what it reads.
type sumReader struct {
	r io.Reader
	readSum
}

func (s *sumReader) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	s.n += int64(n)
	s.sum = crc32.Update(s.sum, castagnoli, p[:n])
	return n, err
}

// eachRecord reads the object open opens as DecodeRecords does (the same
// limits, checks and errors) and calls fn with the Record of each valid
// row (valid during the call only), keeping none. It returns the length
// and CRC-32C of the object's bytes, read to their end.
func eachRecord(url string, open ConvertSource, opts RecordOptions, fn func(*Record) error) (readSum, error) {
	rc, err := open()
	if err != nil {
		return readSum{}, err
	}
	defer rc.Close()
	sr := &sumReader{r: rc}
	info := &ObjectInfo{URL: url}
	od := &recordDecoder{obj: &ObjectRecords{ObjectInfo: ObjectInfo{URL: url}}, opts: opts, keys: newRecordKeys()}
	err = readLines(info, sr, opts.MaxObjectBytes, opts.MaxLineBytes, nil, func(line []byte, n int) error {
		if isBlank(line) {
			return nil
		}
		if rerr := od.scan(line); rerr != nil {
			return rerr.at(url, n)
		}
		return fn(od.view(line, n))
	})
	if err != nil {
		return readSum{}, err
	}
	if _, err := io.Copy(io.Discard, sr); err != nil {
		return readSum{}, fmt.Errorf("readers: %s: %w", url, err)
	}
	return sr.readSum, nil
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

	// The objects' member names in order of first appearance while the
	// column can be a struct (notStruct unset): at most convStructMax
	// names, and in every object its members in that order.
	order     []string
	orderPos  map[string]int
	notStruct bool
}

// convStructMax is the most member names an object column may have to be
// written as a struct column, a child column each; more (keys that never
// repeat) and it is a map.
const convStructMax = 64

// structMember notes member name of an object cell, whose member before it
// holds position *prev of the column's order (-1 for the first member):
// the column stays a struct while every member comes after the one before
// it in that order (a name never seen takes the next position). A name
// out of order, repeated within one object, empty, or past convStructMax
// names makes it a map.
func (col *convColumn) structMember(name string, prev *int) {
	if col.notStruct {
		return
	}
	p, ok := col.orderPos[name]
	if !ok {
		if len(col.order) == convStructMax || name == "" {
			col.noStruct()
			return
		}
		if col.orderPos == nil {
			col.orderPos = map[string]int{}
		}
		p = len(col.order)
		col.order = append(col.order, name)
		col.orderPos[name] = p
	}
	if p <= *prev {
		col.noStruct()
		return
	}
	*prev = p
}

func (col *convColumn) noStruct() { col.notStruct, col.order, col.orderPos = true, nil, nil }

// asStruct says whether the column's objects are written as a struct: each
// object's members came in the order of their names' first appearance
// (so each row reads back with its members as they were, the absent ones
// null), at least one name, and none that another tool could take for a
// path or for another name (a '.'; two names equal but for case, which
// DuckDB's struct fields would not tell apart).
func (col *convColumn) asStruct() bool {
	if col.notStruct || len(col.order) == 0 {
		return false
	}
	folded := make(map[string]bool, len(col.order))
	for _, name := range col.order {
		l := strings.ToLower(name)
		if folded[l] || strings.Contains(name, ".") || !utf8.ValidString(name) {
			return false
		}
		folded[l] = true
	}
	return true
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

// converter learns the columns of an object's rows (row, the first read)
// and writes them (write, the second).
type converter struct {
	extra []parquet.WriterProperty
	maps  bool // objects of numbers as maps only (--maps)
	cols  []*convColumn
	index map[string]int
	rows  int

	// The column of each field name of the object being read (its key
	// index in the decoder's table): -1 not looked up yet.
	keys  *recordKeys
	byKey []int

	// The members of the object cell being read, named in a table of the
	// converter's own (reused: no table and no fields per cell).
	sub     Record
	subKeys *recordKeys
}

// members returns the members of the object f of r (valid until the next
// call).
func (c *converter) members(r *Record, f recordField) *Record {
	// The table names the members of every object read; one that has
	// grown past a map column's dictionary (keys that never repeat:
	// episode ids) starts again, so that it never holds the object's.
	if c.subKeys == nil || len(c.subKeys.names) > convDictMax {
		c.subKeys = newRecordKeys()
	}
	c.sub = Record{url: r.url, line: r.line, data: r.data, keys: c.subKeys, fields: c.sub.fields[:0]}
	c.sub.indexObject(int(f.start))
	return &c.sub
}

// col returns the column of the field f of r, adding one when add is set;
// -1 when there is none (add unset).
func (c *converter) col(r *Record, f recordField, add bool) int {
	if c.keys != r.keys {
		c.keys, c.byKey = r.keys, c.byKey[:0]
	}
	for int(f.key) >= len(c.byKey) {
		c.byKey = append(c.byKey, -1)
	}
	if i := c.byKey[f.key]; i >= 0 {
		return i
	}
	name := r.keys.names[f.key]
	i, ok := c.index[name]
	if !ok {
		if !add {
			return -1
		}
		i = len(c.cols)
		c.index[name] = i
		c.cols = append(c.cols, &convColumn{name: name})
	}
	c.byKey[f.key] = i
	return i
}

// row adds the cells of r to what is known of their columns.
func (c *converter) row(r *Record) error {
	c.rows++
	for _, f := range r.fields {
		col := c.cols[c.col(r, f, true)]
		raw := r.raw(f)
		if f.kind != kindObject {
			col.cells++
			distinct(&col.vals, &col.manyVals, raw)
		}
		switch f.kind {
		case kindNull:
			col.null = true
		case kindNumber:
			col.num = true
			_, isInt := parseNumber(raw)
			n, err := int64(0), error(nil)
			if isInt {
				n, err = strconv.ParseInt(unsafeString(raw), 10, 64)
			}
			switch {
			case isInt && err == nil:
				col.ints = true
				if n > 1<<53 || n < -(1<<53) {
					col.notExact = true
				}
			case isInt:
				col.floats = true
				col.notExact = true // an integer literal beyond int64
			default:
				col.floats = true
			}
		case kindString:
			col.str = true
		case kindBool:
			col.boolean = true
		case kindObject:
			col.obj = true
			if col.null || col.num || col.str || col.boolean || col.other || col.objNotNumbers {
				break // not a map column: its members count for nothing
			}
			sub := c.members(r, f)
			prev := -1
			for _, m := range sub.fields {
				lit := sub.raw(m)
				if m.kind != kindNumber {
					col.objNotNumbers = true
					break
				}
				if _, isInt := parseNumber(lit); isInt {
					if n, err := strconv.ParseInt(unsafeString(lit), 10, 64); err != nil || n > 1<<53 || n < -(1<<53) {
						col.objNotNumbers = true
					}
				}
				col.entries++
				name := sub.keys.names[m.key]
				distinct(&col.keys, &col.manyKeys, []byte(name))
				col.structMember(name, &prev)
			}
		default:
			col.other = true
		}
	}
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
	convStruct
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
	case col.obj && !col.objNotNumbers && col.asStruct():
		return convStruct
	case col.obj && !col.objNotNumbers:
		return convMap
	}
	return convJSON
}

var convMapType = arrow.MapOf(arrow.BinaryTypes.String, arrow.PrimitiveTypes.Float64)

// structType is the struct column of an object column whose members came in
// one order (asStruct): a float64 child per name, in that order.
func (col *convColumn) structType() arrow.DataType {
	fields := make([]arrow.Field, len(col.order))
	for k, name := range col.order {
		fields[k] = arrow.Field{Name: name, Type: arrow.PrimitiveTypes.Float64, Nullable: true}
	}
	return arrow.StructOf(fields...)
}

// appendStruct appends the object sub to the struct column of col: each
// member's number in its name's child, the names it lacks null. False
// when its members are not numbers of the column's names in its order
// (the object changed between the two reads).
func (c *converter) appendStruct(sb *array.StructBuilder, sub *Record, col *convColumn) bool {
	sb.Append(true)
	next := 0
	for _, m := range sub.fields {
		p, ok := col.orderPos[sub.keys.names[m.key]]
		if !ok || p < next || m.kind != kindNumber {
			return false
		}
		for ; next < p; next++ {
			sb.FieldBuilder(next).AppendNull()
		}
		v, _ := parseNumber(sub.raw(m))
		sb.FieldBuilder(p).(*array.Float64Builder).Append(v)
		next = p + 1
	}
	for ; next < len(col.order); next++ {
		sb.FieldBuilder(next).AppendNull()
	}
	return true
}

// convJSONType is the type of a column of JSON text: strings of Parquet's
// JSON logical type, so that a reader that drops the file's key/value
// metadata (DuckDB rewriting the file, its partitions) still knows them
// for JSON text, as crlbatch reads that type.
var convJSONType = func() arrow.DataType {
	t, err := extensions.NewJSONType(arrow.BinaryTypes.String)
	if err != nil {
		panic(err)
	}
	return t
}()

// write reads the object a second time and writes its rows to w as
// Parquet, a row group at a time, in the columns the first read found. It
// returns the length and CRC-32C of what it read. A row that does not fit
// them (a field, a type or a row the first read did not see) is
// ErrChangedWhileConverting, as is an error of the rows that the first
// read did not find.
func (c *converter) write(url string, open ConvertSource, opts RecordOptions, w io.Writer) (readSum, error) {
	kinds := make([]convKind, len(c.cols))
	fields := make([]arrow.Field, len(c.cols))
	jsonCols := []string{}
	for i, col := range c.cols {
		if kinds[i] = col.kind(); kinds[i] == convStruct && c.maps {
			kinds[i] = convMap
		}
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
		case convStruct:
			t = col.structType()
		case convJSON:
			t = convJSONType
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
	names, _ := json.Marshal(jsonCols)
	md := arrow.NewMetadata([]string{ParquetJSONColumns}, []string{string(names)})
	schema := arrow.NewSchema(fields, &md)
	mem := memory.NewGoAllocator()
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()

	var fw *pqarrow.FileWriter
	defer func() {
		if fw != nil {
			fw.Close()
		}
	}()
	// start opens the file writer once the first row group's rows are
	// built (first: nil when there are none), which say which columns are
	// written uncompressed.
	start := func(first arrow.RecordBatch) error {
		// A column its codec would not shrink by an eighth (rewards,
		// log-probabilities: float64s whose low bytes are noise) is written
		// uncompressed: the reader takes its pages as they lie in the
		// object instead of decompressing (~4 % of the Parquet job's CPU on
		// the 1 GB sweep, for 3 % more bytes).
		base := parquet.NewWriterProperties(append([]parquet.WriterProperty{
			parquet.WithCompression(convertCodecs[ConvertCompression])}, c.extra...)...)
		raw := c.incompressible(first, kinds, dictCols, base)
		props := parquet.NewWriterProperties(append([]parquet.WriterProperty{
			parquet.WithAllocator(mem),
			parquet.WithCompression(convertCodecs[ConvertCompression]),
			parquet.WithMaxRowGroupLength(ConvertRowGroupRows),
			parquet.WithDataPageSize(convertPageBytes),
		}, append(append(raw, dict...), c.extra...)...)...)
		var err error
		fw, err = pqarrow.NewFileWriter(schema, struct{ io.Writer }{w}, props, pqarrow.NewArrowWriterProperties(pqarrow.WithAllocator(mem)))
		return err
	}
	flush := func() error {
		rec := b.NewRecordBatch()
		defer rec.Release()
		if fw == nil {
			if err := start(rec); err != nil {
				return err
			}
		}
		return fw.Write(rec)
	}

	changed := fmt.Errorf("readers: convert %s: %w", url, ErrChangedWhileConverting)
	at := make([]int, len(c.cols)) // the row's field of each column, -1 for none
	rows := 0
	sum, err := eachRecord(url, open, opts, func(r *Record) error {
		if rows++; rows > c.rows {
			return changed
		}
		for i := range at {
			at[i] = -1
		}
		for k, f := range r.fields {
			i := c.col(r, f, false)
			if i < 0 {
				return changed
			}
			at[i] = k
		}
		for i, k := range at {
			fb := b.Field(i)
			if k < 0 {
				fb.AppendNull()
				continue
			}
			f := r.fields[k]
			raw := r.raw(f)
			switch kinds[i] {
			case convInt:
				n, err := strconv.ParseInt(unsafeString(raw), 10, 64)
				if f.kind != kindNumber || err != nil {
					return changed
				}
				fb.(*array.Int64Builder).Append(n)
			case convFloat:
				if f.kind != kindNumber {
					return changed
				}
				v, _ := parseNumber(raw)
				fb.(*array.Float64Builder).Append(v)
			case convString:
				if f.kind != kindString {
					return changed
				}
				fb.(*array.StringBuilder).BinaryBuilder.Append(decodeString(raw))
			case convBool:
				if f.kind != kindBool {
					return changed
				}
				fb.(*array.BooleanBuilder).Append(raw[0] == 't')
			case convStruct:
				if f.kind != kindObject {
					return changed
				}
				if !c.appendStruct(fb.(*array.StructBuilder), c.members(r, f), c.cols[i]) {
					return changed
				}
			case convMap:
				if f.kind != kindObject {
					return changed
				}
				sub := c.members(r, f)
				mb := fb.(*array.MapBuilder)
				mb.Append(true)
				kb, ib := mb.KeyBuilder().(*array.StringBuilder), mb.ItemBuilder().(*array.Float64Builder)
				for _, m := range sub.fields {
					if m.kind != kindNumber {
						return changed
					}
					v, _ := parseNumber(sub.raw(m))
					kb.Append(sub.keys.names[m.key])
					ib.Append(v)
				}
			default:
				fb.(*array.ExtensionBuilder).Builder.(*array.StringBuilder).BinaryBuilder.Append(raw)
			}
		}
		if rows%ConvertRowGroupRows == 0 {
			return flush()
		}
		return nil
	})
	var de *DataError
	switch {
	case errors.As(err, &de):
		// The first read found no bad row here.
		return readSum{}, fmt.Errorf("%w (the second read: %v)", changed, err)
	case err != nil && !errors.Is(err, ErrChangedWhileConverting):
		return readSum{}, fmt.Errorf("readers: convert: %w", err)
	case err != nil:
		return readSum{}, err
	case rows != c.rows:
		return readSum{}, changed
	}
	if rows%ConvertRowGroupRows != 0 {
		err = flush()
	} else if fw == nil {
		err = start(nil)
	}
	if err == nil {
		err = fw.Close()
		fw = nil
	}
	if err != nil {
		return readSum{}, fmt.Errorf("readers: convert: %w", err)
	}
	return sum, nil
}

// convRawShare is the share of a column's bytes its codec must save for
// its pages to be compressed: less, and they are written uncompressed.
const convRawShare = 8 // an eighth

// incompressible returns the writer properties that write uncompressed
// each column of numbers or strings without a dictionary (top-level, or a
// struct column's child) whose plain values in the first row group (first;
// nil for none) its codec (in base) does not shrink by 1/convRawShare: the
// same values, in pages a reader need not decompress. Columns of booleans,
// dictionaries and maps keep their codec.
func (c *converter) incompressible(first arrow.RecordBatch, kinds []convKind, dictCols []bool, base *parquet.WriterProperties) []parquet.WriterProperty {
	if first == nil {
		return nil
	}
	var out []parquet.WriterProperty
	raw := func(a arrow.Array, path parquet.ColumnPath) {
		codecName := base.CompressionPath(path)
		if codecName == compress.Codecs.Uncompressed {
			return
		}
		plain := plainValues(a)
		if len(plain) == 0 {
			return
		}
		codec, err := compress.GetCodec(codecName)
		if err != nil {
			return
		}
		if n := len(codec.EncodeLevel(nil, plain, base.CompressionLevelPath(path))); n > len(plain)-len(plain)/convRawShare {
			out = append(out, parquet.WithCompressionPath(path, compress.Codecs.Uncompressed))
		}
	}
	for i, col := range c.cols {
		switch {
		case kinds[i] == convStruct:
			sa := first.Column(i).(*array.Struct)
			for k, name := range col.order {
				raw(sa.Field(k), parquet.ColumnPath{col.name, name})
			}
		case dictCols[i] || kinds[i] == convBool || kinds[i] == convMap:
		default:
			raw(first.Column(i), parquet.ColumnPath{col.name})
		}
	}
	return out
}

// plainValues returns the valid values of a as Parquet's plain encoding
// lays them out (int64s and float64s little-endian, strings each after its
// length); JSON text as its strings.
func plainValues(a arrow.Array) []byte {
	if ea, ok := a.(array.ExtensionArray); ok {
		a = ea.Storage()
	}
	var plain []byte
	var b [8]byte
	switch a := a.(type) {
	case *array.Int64:
		for k, v := range a.Int64Values() {
			if a.IsValid(k) {
				binary.LittleEndian.PutUint64(b[:], uint64(v))
				plain = append(plain, b[:]...)
			}
		}
	case *array.Float64:
		for k, v := range a.Float64Values() {
			if a.IsValid(k) {
				binary.LittleEndian.PutUint64(b[:], math.Float64bits(v))
				plain = append(plain, b[:]...)
			}
		}
	case *array.String:
		for k := range a.Len() {
			if a.IsValid(k) {
				v := a.Value(k)
				binary.LittleEndian.PutUint32(b[:], uint32(len(v)))
				plain = append(append(plain, b[:4]...), v...)
			}
		}
	}
	return plain
}
