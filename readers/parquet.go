package readers

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/extensions"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/arrow-go/v18/parquet/schema"
)

// Parquet traces (PROTOCOLS 1.1 rows as columns). A Parquet object is read
// as the JSON Lines object holding the same rows, one row a line, so that
// run assembly, validation, errors, limits and results are exactly those of
// the JSON Lines form: ParquetLines turns its row groups, one at a time,
// into JSON lines that the protocol's decoder reads as it reads any object.
// Row N of the file is line N of that text, and errors name it as a row
// (DataError.Row).
//
// A column holds one row field. Its cells become JSON values: numbers
// (integers as their digits, floating point as the shortest digits that
// parse back to the same float64), strings (escaped for JSON; invalid
// UTF-8 is kept, so that it fails as it does in JSON Lines), UUIDs (their
// canonical text, as strings), booleans,
// lists (arrays), structs and maps with string keys (objects). A null cell
// leaves the field out of the row (a required field is then missing, and
// the row fails naming it); a null member of a struct is left out of the
// object, a null in a list or a map's value is a JSON null. The columns
// named in the file's key/value metadata ParquetJSONColumns hold raw JSON
// text per row (what `crlbatch convert` writes for a field whose values are
// of several types, nested, or an explicit null), and so does every column,
// list element, struct member or map value of Parquet's JSON logical type
// (what DuckDB writes for a field that is null on every row or of several
// types): a null cell leaves the field out (a null member or element is a
// JSON null, as for any other type), any other must be exactly one JSON
// value, copied as it is (a line break around or between its tokens becomes
// a space: the row stays one line). A cell that is not one JSON value
// (`1,"reward":2`, `[1,`) fails the object as damaged data naming the row
// and the column: copied, it could add fields or rows the file does not
// hold.
//
// The columns of the protocol's row fields are checked against the fields'
// types before any row is read: a column of another type, or a required
// field with no column, is a DataError naming the object and the column
// (its cause ErrParquetMisfit).

// ErrParquetMisfit is the cause of the DataError of a Parquet object with
// a column of another type than its protocol field's (reward as strings)
// or no column for a required field: every row of it, as JSON Lines, would
// be a bad row. An engine that may skip bad rows (--max-bad-rows) reads
// such an object with ParquetLines and no field to check, so that each row
// is judged, and skipped or not, as its JSON Lines twin is.
var ErrParquetMisfit = errors.New("a column does not fit its field")

// ParquetMagic is the first (and last) four bytes of a Parquet file.
var ParquetMagic = []byte("PAR1")

// ParquetJSONColumns is the key of a Parquet file's key/value metadata
// listing (a JSON array of names) the columns holding raw JSON text.
const ParquetJSONColumns = "crlbatch.json_columns"

// ParquetField is a row field as the Parquet reader checks it: its name,
// its type (number, integer, string, boolean, object, as in
// scoring.Field) and whether it is required. Or, with Folder set, a field
// that a Hive-style folder of the object's path gives every row
// (HiveFolders): Folder is the folder's name as in the path
// ("algorithm_id=ppo"), Value the JSON text of its value (nil for null).
type ParquetField struct {
	Name     string
	Type     string
	Required bool

	Folder string
	Value  []byte
}

// parquetBatchRows is the number of rows converted at a time.
const parquetBatchRows = 4096

// ParquetLines reads the Parquet file r (the object at url) and returns a
// reader of its rows as JSON lines, row group by row group, checking the
// columns of fields first. The returned reader's Close releases the file.
//
// An error of r's own reads (the store's) stops the reader with that error
// as it is (a storage error to the decoder reading the text). Any other error of the Parquet reader while
// reading rows (a page that does not decompress, a bad page header or
// levels, a truncated column chunk) is the data's: a *DataError naming url,
// the first row of the batch it stopped, the column that fails when read
// alone (pqDamagedColumn; none when no column does), and the cause.
func ParquetLines(url string, r parquet.ReaderAtSeeker, fields []ParquetField) (io.ReadCloser, error) {
	r, src := pqWatch(r)
	f, err := openParquet(url, r, fields, fixedBatch(parquetBatchRows), nil)
	if err != nil {
		return nil, src.failed(err)
	}
	if f.pf.NumRows() == 0 {
		return emptyLines{f.pf}, nil
	}
	p := &parquetLines{url: url, pf: f.pf, fr: f.fr, cols: f.cols, src: src}
	for _, c := range f.consts {
		p.consts = append(p.consts, append(append(appendJSONString(nil, c.Name), ':'), c.Value...))
	}
	rr, err := f.fr.GetRecordReader(context.Background(), nil, nil)
	if err != nil {
		// The record reader opens the first row group's column chunks: a
		// failure there is the first batch's, named as readError names a
		// later one's (the column that fails alone).
		err = p.readError(err)
		f.pf.Close()
		return nil, err
	}
	p.rr = rr
	return p, nil
}

// pqSource is the ReaderAtSeeker a Parquet object is read through: it
// keeps the first error of the object's own reads (io.EOF aside), so that
// a store failing under the Parquet reader is not taken for bad data.
type pqSource struct {
	parquet.ReaderAtSeeker
	err error
}

// pqWatch returns r read through a pqSource, and that pqSource; r as it is
// and nil when r is a *bytes.Reader (held in memory: it fails only past its
// end, and the readers of a file in memory know it by its type).
func pqWatch(r parquet.ReaderAtSeeker) (parquet.ReaderAtSeeker, *pqSource) {
	if _, ok := r.(*bytes.Reader); ok {
		return r, nil
	}
	s := &pqSource{ReaderAtSeeker: r}
	return s, s
}

// failed is the store's error when one of s's reads failed, else err.
func (s *pqSource) failed(err error) error {
	if s != nil && s.err != nil {
		return s.err
	}
	return err
}

// ReadAt reads from the object, keeping its first error but io.EOF.
func (s *pqSource) ReadAt(p []byte, off int64) (int, error) {
	n, err := s.ReaderAtSeeker.ReadAt(p, off)
	if err != nil && err != io.EOF && s.err == nil {
		s.err = err
	}
	return n, err
}

// pqReadError is the error that stopped the Parquet reader at row (1-based)
// of the object at url: the store's error of src when its reads failed,
// else a *DataError naming the row and the cause once ("parquet: could not
// decompress page: …", the reader's own "parquet: " prefixes folded).
func pqReadError(url string, row int, src *pqSource, err error) error {
	if src != nil && src.err != nil {
		return src.err
	}
	msg := err.Error()
	var ce *pqChecksumError
	if errors.As(err, &ce) {
		// As the direct way says it, whatever arrow-go wrapped it in.
		msg, err = ce.Error(), ce
	}
	for strings.HasPrefix(msg, "parquet: ") {
		msg = msg[len("parquet: "):]
	}
	return &DataError{URL: url, Line: row, Row: true, Msg: "parquet: " + msg, Err: err}
}

// pqDamagedColumn finds which column made fr's record reader fail on the
// batch of rows first..first+n-1 (0-based; first a multiple of batch, the
// record reader's batch size): each top-level column in schema order is
// read alone, from the start of the row group holding row first through
// row first+n-1, in pieces ending where the record reader's batches end,
// and the first that fails is returned with its error. It returns -1 when
// none fails alone (the failure is not one column's). It reads only after
// a failure, one column's batch of rows at a time.
func pqDamagedColumn(fr *pqarrow.FileReader, first, n, batch int64) (int, error) {
	pf := fr.ParquetReader()
	end := min(first+n, pf.NumRows())
	var groups []int
	start, at := int64(-1), int64(0)
	for g := range pf.NumRowGroups() {
		rows := pf.MetaData().RowGroup(g).NumRows()
		if at < end && at+rows > first {
			if start < 0 {
				start = at
			}
			groups = append(groups, g)
		}
		at += rows
	}
	if len(groups) == 0 || first >= end {
		return -1, nil
	}
	leaves := map[int]bool{}
	for c := range pf.MetaData().Schema.NumColumns() {
		leaves[c] = true
	}
	for i := range fr.Manifest.Fields {
		if err := pqReadAlone(fr, i, leaves, groups, first-start, end-first, batch); err != nil {
			return i, err
		}
	}
	return -1, nil
}

// pqReadAlone reads top-level column i of row groups groups alone: skip
// rows (the record reader's batches before the failing one: a first piece
// up to a batch's end, then whole batches), then n rows; the first error.
func pqReadAlone(fr *pqarrow.FileReader, i int, leaves map[int]bool, groups []int, skip, n, batch int64) error {
	cr, err := fr.GetFieldReader(context.Background(), i, leaves, groups)
	if err != nil {
		return err
	}
	if cr == nil {
		return nil
	}
	defer cr.Release()
	for skip > 0 {
		k := (skip-1)%batch + 1
		data, err := cr.NextBatch(k)
		if err != nil {
			return err
		}
		data.Release()
		skip -= k
	}
	data, err := cr.NextBatch(n)
	if err != nil {
		return err
	}
	data.Release()
	return nil
}

// parquetFile is a Parquet object opened, its columns checked.
type parquetFile struct {
	url    string
	pf     *file.Reader
	fr     *pqarrow.FileReader
	schema *arrow.Schema
	cols   []parquetColumn
	consts []ParquetField // the fields folders give every row and no column holds (Value never nil)
	obj    *pqObject      // the file's bytes when r is held in memory (pqObjectBytes), else nil
	batch  int64          // the rows of a batch (fr's)
}

// fixedBatch returns a batchRows function of openParquet that is always n.
func fixedBatch(n int64) func(int) int64 { return func(int) int64 { return n } }

// openParquet opens the Parquet file r (the object at url) for reading
// batches of batchRows(the file's leaf columns) rows and checks the
// columns of fields. dict, when
// not nil, lists the leaf columns to read as Arrow dictionaries. On
// success the caller closes f.pf.
func openParquet(url string, r parquet.ReaderAtSeeker, fields []ParquetField, batchRows func(leaves int) int64, dict func(*file.Reader) []int) (*parquetFile, error) {
	props := pqReaderProps
	if _, ok := r.(*bytes.Reader); ok {
		props = pqMemReaderProps
	}
	// Every read of a column chunk has its pages' checksums checked
	// (pqChecked), once the footer has placed the chunks.
	obj := newPQObject(r)
	var mem []byte
	if obj != nil {
		mem = obj.data
	}
	chk := newPQChecked(r, mem)
	pf, err := file.NewParquetReader(chk, file.WithReadProps(props))
	if err != nil {
		return nil, &DataError{URL: url, Msg: fmt.Sprintf("not a readable Parquet file: %v", err)}
	}
	chk.setFooter(pf.MetaData(), pf.MetaData().GetSourceFileSize())
	if obj != nil {
		obj.check = chk
	}
	jsonCols := map[string]bool{}
	if v := pf.MetaData().KeyValueMetadata().FindValue(ParquetJSONColumns); v != nil {
		var names []string
		if err := json.Unmarshal([]byte(*v), &names); err != nil {
			pf.Close()
			return nil, &DataError{URL: url, Msg: fmt.Sprintf("key/value metadata %s: %v", ParquetJSONColumns, err)}
		}
		for _, n := range names {
			jsonCols[n] = true
		}
	}
	batch := batchRows(pf.MetaData().Schema.NumColumns())
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: batch}, memory.DefaultAllocator)
	if err != nil {
		pf.Close()
		return nil, &DataError{URL: url, Msg: fmt.Sprintf("not a readable Parquet file: %v", err)}
	}
	schema, err := fr.Schema()
	if err != nil {
		pf.Close()
		return nil, &DataError{URL: url, Msg: fmt.Sprintf("not a readable Parquet file: %v", err)}
	}
	// Columns of Parquet's JSON logical type hold JSON text as the listed
	// ones do; one with JSON text below its top (a list of JSON, a struct
	// with a JSON member) keeps the places in its shape.
	shapes := make([]*pqJSONShape, len(fr.Manifest.Fields))
	for i := range fr.Manifest.Fields {
		if sh := pqJSONShapeOf(&fr.Manifest.Fields[i], pf.MetaData().Schema); sh != nil && sh.text {
			jsonCols[fr.Manifest.Fields[i].Field.Name] = true
		} else {
			shapes[i] = sh
		}
	}
	// A file without rows lacks no field: an empty object in either form.
	cols, consts, err := parquetColumns(url, schema, fields, jsonCols, shapes, pf.NumRows() > 0)
	if err != nil {
		pf.Close()
		return nil, err
	}
	// The columns are checked by their own types, then read as asked.
	var dc []int
	if dict != nil {
		dc = dict(pf)
	}
	if len(dc) > 0 {
		props := pqarrow.ArrowReadProperties{BatchSize: batch}
		for _, c := range dc {
			props.SetReadDict(c, true)
		}
		if fr, err = pqarrow.NewFileReader(pf, props, memory.DefaultAllocator); err == nil {
			schema, err = fr.Schema()
		}
		if err != nil {
			pf.Close()
			return nil, &DataError{URL: url, Msg: fmt.Sprintf("not a readable Parquet file: %v", err)}
		}
	}
	return &parquetFile{url: url, pf: pf, fr: fr, schema: schema, cols: cols, consts: consts, obj: obj, batch: batch}, nil
}

// parquetColumn is how one column becomes a field of each row.
type parquetColumn struct {
	name  string
	key   []byte       // `"name":`
	json  bool         // raw JSON text
	shape *pqJSONShape // where JSON text is below the column's top; nil: nowhere
	// folder is the field of the same name a Hive-style folder gives,
	// nil for none: each row's cell must hold its value (hiveAgrees).
	folder *ParquetField
}

// pqJSONShape marks where a column's values are JSON text (Parquet's JSON
// logical type): at this node (text), or below it in kids, the nodes of
// pqarrow's manifest (a struct's members; a list's element; a map's
// key-value pair, whose kids are its key and value), nil where no JSON
// text is at or below.
type pqJSONShape struct {
	text bool
	kids []*pqJSONShape
}

// pqJSONShapeOf is the shape of the manifest's field sf of a file of
// schema sc; nil when no leaf at or below it is of the JSON logical type
// (or its older converted type).
func pqJSONShapeOf(sf *pqarrow.SchemaField, sc *schema.Schema) *pqJSONShape {
	if sf.IsLeaf() {
		col := sc.Column(sf.ColIndex)
		if _, ok := col.LogicalType().(schema.JSONLogicalType); ok || col.ConvertedType() == schema.ConvertedTypes.JSON {
			return &pqJSONShape{text: true}
		}
		return nil
	}
	var sh *pqJSONShape
	for k := range sf.Children {
		if kid := pqJSONShapeOf(&sf.Children[k], sc); kid != nil {
			if sh == nil {
				sh = &pqJSONShape{kids: make([]*pqJSONShape, len(sf.Children))}
			}
			sh.kids[k] = kid
		}
	}
	return sh
}

// kid is child k of sh's node; nil when sh is.
func (sh *pqJSONShape) kid(k int) *pqJSONShape {
	if sh == nil || k >= len(sh.kids) {
		return nil
	}
	return sh.kids[k]
}

// parquetColumns checks the columns of schema against fields and returns
// how each becomes a row's field, and the fields that folders give every
// row and no column holds (parquetFile.consts).
func parquetColumns(url string, schema *arrow.Schema, fields []ParquetField, jsonCols map[string]bool, shapes []*pqJSONShape, rows bool) ([]parquetColumn, []ParquetField, error) {
	byName := map[string]ParquetField{}
	for _, f := range fields {
		if f.Folder == "" {
			byName[f.Name] = f
		}
	}
	for _, f := range fields {
		if _, ok := byName[f.Name]; ok && f.Folder != "" {
			return nil, nil, &DataError{URL: url, Msg: fmt.Sprintf("folder %s: %s is a field of each row, which the file must hold as a column; a Hive-style folder may give only identity fields and run metadata", f.Folder, f.Name)}
		}
	}
	seen := map[string]bool{}
	var cols []parquetColumn
	for i, f := range schema.Fields() {
		if seen[f.Name] {
			return nil, nil, &DataError{URL: url, Msg: fmt.Sprintf("column %s: two columns have this name", f.Name)}
		}
		seen[f.Name] = true
		c := parquetColumn{name: f.Name, key: append(appendJSONString(nil, f.Name), ':'), json: jsonCols[f.Name], folder: hiveFolderOf(fields, f.Name)}
		if i < len(shapes) {
			c.shape = shapes[i]
		}
		if c.json {
			if !isTextType(f.Type) {
				return nil, nil, &DataError{URL: url, Msg: fmt.Sprintf("column %s: listed in %s but of type %s, want a string column of JSON text", f.Name, ParquetJSONColumns, f.Type)}
			}
		} else {
			if err := checkJSONType(f.Type, c.shape); err != nil {
				return nil, nil, &DataError{URL: url, Msg: fmt.Sprintf("column %s: %v", f.Name, err)}
			}
			if pf, ok := byName[f.Name]; ok {
				if want, ok := fitsField(f.Type, pf.Type); !ok {
					return nil, nil, &DataError{URL: url, Msg: fmt.Sprintf("column %s: of type %s, want %s", f.Name, f.Type, want), Err: ErrParquetMisfit}
				}
			}
		}
		cols = append(cols, c)
	}
	var consts []ParquetField
	for _, f := range fields {
		if rows && f.Required && !seen[f.Name] {
			return nil, nil, &DataError{URL: url, Msg: fmt.Sprintf("column %s: missing: a required field (want a %s column)", f.Name, f.Type), Err: ErrParquetMisfit}
		}
		if f.Folder != "" && !seen[f.Name] && f.Value != nil {
			consts = append(consts, f)
		}
	}
	return cols, consts, nil
}

// isTextType says whether t holds text: a string column's, or a binary
// one's (Parquet's JSON logical type reads as binary), an extension's
// storage (arrow.json's) or a dictionary's values included.
func isTextType(t arrow.DataType) bool {
	switch t.ID() {
	case arrow.BINARY, arrow.LARGE_BINARY:
		return true
	case arrow.EXTENSION:
		return isTextType(t.(arrow.ExtensionType).StorageType())
	case arrow.DICTIONARY:
		return isTextType(t.(*arrow.DictionaryType).ValueType)
	}
	return isStringType(t)
}

// isStringType says whether t is a string column's: strings, their
// dictionaries, and UUIDs (Parquet's UUID logical type, arrow.uuid: what
// DuckDB writes for a field of UUID strings), whose cells read as their
// canonical text (8-4-4-4-12 lowercase hexadecimal digits).
func isStringType(t arrow.DataType) bool {
	switch t.ID() {
	case arrow.STRING, arrow.LARGE_STRING, arrow.STRING_VIEW:
		return true
	case arrow.DICTIONARY:
		return isStringType(t.(*arrow.DictionaryType).ValueType)
	case arrow.EXTENSION:
		_, ok := t.(*extensions.UUIDType)
		return ok
	}
	return false
}

// isNumberType says whether t is a number column's: integers, floating
// point, and decimals of a scale from 0 to their precision, as Parquet
// allows (read as their exact decimal text, as JSON Lines holds such a
// number; a damaged file's scale of 2^31 would be that many digits a cell).
func isNumberType(t arrow.DataType) bool {
	switch t.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64, arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64,
		arrow.FLOAT32, arrow.FLOAT64:
		return true
	case arrow.DECIMAL128, arrow.DECIMAL256:
		d := t.(arrow.DecimalType)
		return d.GetScale() >= 0 && d.GetScale() <= d.GetPrecision()
	}
	return false
}

// fitsField says whether a column of type t can hold the field type ft,
// and if not what it wants.
func fitsField(t arrow.DataType, ft string) (string, bool) {
	switch ft {
	case "number", "integer":
		return "a number column (integer or floating point)", isNumberType(t)
	case "string":
		return "a string column", isStringType(t)
	case "boolean":
		return "a boolean column (or an integer column of 0 and 1)", t.ID() == arrow.BOOL || isNumberType(t)
	case "object":
		switch t.ID() {
		case arrow.STRUCT:
			for _, f := range t.(*arrow.StructType).Fields() {
				if !isNumberType(f.Type) {
					return "a struct of number columns or a map of string to number", false
				}
			}
			return "", true
		case arrow.MAP:
			m := t.(*arrow.MapType)
			return "a struct of number columns or a map of string to number", isStringType(m.KeyType()) && isNumberType(m.ItemType())
		}
		return "a struct of number columns or a map of string to number", false
	}
	return "", true
}

// checkJSONType says whether cells of type t have a JSON form; sh marks
// where below t they are JSON text (nil: nowhere).
func checkJSONType(t arrow.DataType, sh *pqJSONShape) error {
	if sh != nil && sh.text {
		if !isTextType(t) {
			return fmt.Errorf("of type %s, which is not text, in a place of JSON logical type", t)
		}
		return nil
	}
	switch t.ID() {
	case arrow.NULL, arrow.BOOL:
		return nil
	case arrow.DICTIONARY:
		return checkJSONType(t.(*arrow.DictionaryType).ValueType, sh)
	case arrow.LIST, arrow.LARGE_LIST:
		return checkJSONType(t.(arrow.ListLikeType).Elem(), sh.kid(0))
	case arrow.STRUCT:
		for k, f := range t.(*arrow.StructType).Fields() {
			if err := checkJSONType(f.Type, sh.kid(k)); err != nil {
				return err
			}
		}
		return nil
	case arrow.MAP:
		m := t.(*arrow.MapType)
		if !isStringType(m.KeyType()) {
			return fmt.Errorf("of type %s: a map's keys must be strings", t)
		}
		return checkJSONType(m.ItemType(), sh.kid(0).kid(1))
	}
	if isNumberType(t) || isStringType(t) || isTemporalType(t) {
		return nil
	}
	return fmt.Errorf("of type %s, which has no JSON value (want numbers, strings, booleans, dates, times, timestamps, lists, structs or maps)", t)
}

// parquetLines is the JSON Lines text of a Parquet file's rows.
type parquetLines struct {
	url  string
	pf   *file.Reader
	fr   *pqarrow.FileReader
	rr   pqarrow.RecordReader
	cols []parquetColumn
	// consts are the fields folders give every row and no column holds,
	// each as `"name":value`.
	consts [][]byte
	src    *pqSource // nil when the file is held in memory
	rows   int       // rows read before batch

	batch arrow.RecordBatch
	row   int // next row of batch
	buf   []byte
	off   int
	err   error
}

func (p *parquetLines) Read(b []byte) (int, error) {
	for p.off >= len(p.buf) {
		if p.err != nil {
			return 0, p.err
		}
		p.buf, p.off = p.buf[:0], 0
		p.fill()
	}
	n := copy(b, p.buf[p.off:])
	p.off += n
	return n, nil
}

// fill converts rows into buf, up to about 64 KiB, or sets err.
func (p *parquetLines) fill() {
	for len(p.buf) < 64<<10 {
		if p.batch == nil || p.row >= int(p.batch.NumRows()) {
			if p.batch != nil {
				p.rows += int(p.batch.NumRows())
				p.batch.Release()
				p.batch = nil
			}
			if !p.rr.Next() {
				if err := p.rr.Err(); err != nil && !errors.Is(err, io.EOF) {
					p.err = p.readError(err)
				} else {
					p.err = io.EOF
				}
				return
			}
			p.batch = p.rr.RecordBatch()
			p.batch.Retain()
			p.row = 0
			continue
		}
		n := len(p.buf)
		var err error
		if p.buf, err = p.appendRow(p.buf, p.row); err != nil {
			p.buf, p.err = p.buf[:n], err
			return
		}
		p.row++
	}
}

// readError is the error err that stopped the record reader on the batch
// after p.rows rows: the store's error when one of src's reads failed
// (before or while the columns are read again); else the *DataError of
// pqReadError at the batch's first row, naming the column that fails when
// read alone, with that column's cause ("column step: parquet: could not
// decompress page: …"), or naming none with err's when no column does.
func (p *parquetLines) readError(err error) error {
	if p.src != nil && p.src.err != nil {
		return p.src.err
	}
	col, cerr := pqDamagedColumn(p.fr, int64(p.rows), parquetBatchRows, parquetBatchRows)
	if col < 0 {
		return pqReadError(p.url, p.rows+1, p.src, err)
	}
	e := pqReadError(p.url, p.rows+1, p.src, cerr)
	if de, ok := e.(*DataError); ok {
		de.Msg = "column " + p.cols[col].name + ": " + de.Msg
	}
	return e
}

// appendRow appends row i of the batch as a JSON line; the error of a
// JSON-text cell that is not one JSON value.
func (p *parquetLines) appendRow(b []byte, i int) ([]byte, error) {
	b = append(b, '{')
	first := true
	for c, col := range p.cols {
		a := p.batch.Column(c)
		if a.IsNull(i) {
			if col.folder != nil && !hiveAgrees(col.folder, nil) {
				return b, p.folderError(col, nil, i)
			}
			continue
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		b = append(b, col.key...)
		n := len(b)
		var err error
		switch {
		case col.json:
			b, err = appendJSONText(b, stringValue(a, i))
		case col.shape != nil:
			b, err = appendShaped(b, a, i, col.shape)
		default:
			b = appendValue(b, a, i)
		}
		if err != nil {
			return b, &DataError{URL: p.url, Line: p.rows + i + 1, Row: true, Msg: "column " + col.name + ": " + err.Error(), Err: err}
		}
		if col.folder != nil && !hiveAgrees(col.folder, b[n:]) {
			return b, p.folderError(col, b[n:], i)
		}
	}
	for _, kv := range p.consts {
		if !first {
			b = append(b, ',')
		}
		first = false
		b = append(b, kv...)
	}
	return append(b, '}', '\n'), nil
}

// folderError is the error of row i, whose cell of col (JSON text raw, nil
// for null) is not the value col's Hive-style folder gives the field.
func (p *parquetLines) folderError(col parquetColumn, raw []byte, i int) error {
	cell, want := "null", "null"
	if raw != nil {
		cell = string(raw)
		if len(cell) > 64 {
			cell = cell[:61] + "..."
		}
	}
	if col.folder.Value != nil {
		want = string(col.folder.Value)
	}
	return &DataError{URL: p.url, Line: p.rows + i + 1, Row: true,
		Msg: fmt.Sprintf("column %s: holds %s, but its folder %s gives %s", col.name, cell, col.folder.Folder, want)}
}

// appendJSONText appends raw, a cell of JSON text, if it is exactly one
// JSON value (with white space around it), its line breaks as spaces: in
// a valid JSON text they are white space between tokens, and a JSON line
// holds none. Anything else is an error: copied, `1,"reward":2` would add
// a field to the row, `1}` and a line break a row.
func appendJSONText(b []byte, raw string) ([]byte, error) {
	if _, ok := jsonScalar(unsafeBytes(raw)); ok {
		return append(b, raw...), nil
	}
	if !json.Valid(unsafeBytes(raw)) {
		var v json.RawMessage
		err := json.Unmarshal(unsafeBytes(raw), &v)
		if err == nil {
			err = errors.New("invalid") // json.Valid and json.Unmarshal disagree: never
		}
		return b, fmt.Errorf("JSON text that is not one JSON value (%v)", err)
	}
	n := len(b)
	b = append(b, raw...)
	for k := n; k < len(b); k++ {
		if b[k] == '\n' || b[k] == '\r' {
			b[k] = ' '
		}
	}
	return b, nil
}

// appendShaped appends the JSON form of cell i of a, whose shape sh marks
// where below it values are JSON text (appendJSONText); the rest as
// appendValue writes it.
func appendShaped(b []byte, a arrow.Array, i int, sh *pqJSONShape) ([]byte, error) {
	if sh == nil {
		return appendValue(b, a, i), nil
	}
	if a.IsNull(i) {
		return append(b, "null"...), nil
	}
	if sh.text {
		return appendJSONText(b, stringValue(a, i))
	}
	var err error
	switch a := a.(type) {
	case *array.Map: // before array.ListLike: a Map is one
		keys, items := a.Keys(), a.Items()
		ish := sh.kid(0).kid(1)
		lo, hi := a.ValueOffsets(i)
		b = append(b, '{')
		for k := lo; k < hi && err == nil; k++ {
			if k > lo {
				b = append(b, ',')
			}
			b = appendJSONString(b, stringValue(keys, int(k)))
			b = append(b, ':')
			b, err = appendShaped(b, items, int(k), ish)
		}
		return append(b, '}'), err
	case array.ListLike:
		lo, hi := a.ValueOffsets(i)
		vals := a.ListValues()
		b = append(b, '[')
		for k := lo; k < hi && err == nil; k++ {
			if k > lo {
				b = append(b, ',')
			}
			b, err = appendShaped(b, vals, int(k), sh.kid(0))
		}
		return append(b, ']'), err
	case *array.Struct:
		st := a.DataType().(*arrow.StructType)
		b = append(b, '{')
		n := 0
		for f := 0; f < a.NumField() && err == nil; f++ {
			if a.Field(f).IsNull(i) {
				continue // a null member is an absent one
			}
			if n > 0 {
				b = append(b, ',')
			}
			n++
			b = appendJSONString(b, st.Field(f).Name)
			b = append(b, ':')
			b, err = appendShaped(b, a.Field(f), i, sh.kid(f))
		}
		return append(b, '}'), err
	}
	return appendValue(b, a, i), nil
}

func stringValue(a arrow.Array, i int) string {
	switch a := a.(type) {
	case *array.String:
		return a.Value(i)
	case *array.LargeString:
		return a.Value(i)
	case *array.StringView:
		return a.Value(i)
	case *array.Binary:
		return a.ValueString(i)
	case *array.LargeBinary:
		return a.ValueString(i)
	case *array.Dictionary:
		return stringValue(a.Dictionary(), a.GetValueIndex(i))
	case *extensions.UUIDArray: // before array.ExtensionArray: it is one
		return a.Value(i).String()
	case array.ExtensionArray:
		return stringValue(a.Storage(), i)
	}
	return ""
}

// appendValue appends the JSON form of cell i of a.
func appendValue(b []byte, a arrow.Array, i int) []byte {
	if a.IsNull(i) {
		return append(b, "null"...)
	}
	switch a := a.(type) {
	case *array.Float64:
		return appendFloat(b, a.Value(i))
	case *array.Float32:
		return appendFloat(b, float64(a.Value(i)))
	case *array.Int64:
		return strconv.AppendInt(b, a.Value(i), 10)
	case *array.Int32:
		return strconv.AppendInt(b, int64(a.Value(i)), 10)
	case *array.Int16:
		return strconv.AppendInt(b, int64(a.Value(i)), 10)
	case *array.Int8:
		return strconv.AppendInt(b, int64(a.Value(i)), 10)
	case *array.Uint64:
		return strconv.AppendUint(b, a.Value(i), 10)
	case *array.Uint32:
		return strconv.AppendUint(b, uint64(a.Value(i)), 10)
	case *array.Uint16:
		return strconv.AppendUint(b, uint64(a.Value(i)), 10)
	case *array.Uint8:
		return strconv.AppendUint(b, uint64(a.Value(i)), 10)
	case *array.Decimal128:
		return appendDecimal(b, a.Value(i).BigInt(), a.DataType().(*arrow.Decimal128Type).Scale)
	case *array.Decimal256:
		return appendDecimal(b, a.Value(i).BigInt(), a.DataType().(*arrow.Decimal256Type).Scale)
	case *array.Boolean:
		return strconv.AppendBool(b, a.Value(i))
	case *array.Date32, *array.Date64, *array.Time32, *array.Time64, *array.Timestamp:
		return appendTemporal(b, a, i)
	case *array.String, *array.LargeString, *array.StringView, *array.Dictionary, *extensions.UUIDArray:
		return appendJSONString(b, stringValue(a, i))
	case *array.Map: // before *array.List: a Map is one
		keys, items := a.Keys(), a.Items()
		lo, hi := a.ValueOffsets(i)
		b = append(b, '{')
		for k := lo; k < hi; k++ {
			if k > lo {
				b = append(b, ',')
			}
			b = appendJSONString(b, stringValue(keys, int(k)))
			b = append(b, ':')
			b = appendValue(b, items, int(k))
		}
		return append(b, '}')
	case array.ListLike:
		lo, hi := a.ValueOffsets(i)
		vals := a.ListValues()
		b = append(b, '[')
		for k := lo; k < hi; k++ {
			if k > lo {
				b = append(b, ',')
			}
			b = appendValue(b, vals, int(k))
		}
		return append(b, ']')
	case *array.Struct:
		st := a.DataType().(*arrow.StructType)
		b = append(b, '{')
		n := 0
		for f := 0; f < a.NumField(); f++ {
			if a.Field(f).IsNull(i) {
				continue // a null member is an absent one
			}
			if n > 0 {
				b = append(b, ',')
			}
			n++
			b = appendJSONString(b, st.Field(f).Name)
			b = append(b, ':')
			b = appendValue(b, a.Field(f), i)
		}
		return append(b, '}')
	}
	return append(b, "null"...) // checkJSONType let no other type through
}

// appendDecimal appends the decimal n × 10^-scale (isNumberType: 0 ≤ scale
// ≤ precision) as the JSON number of its exact digits: the scale's digits
// after the point (0.016979, 2.50, as the JSON Lines text of the same rows
// would hold them).
func appendDecimal(b []byte, n *big.Int, scale int32) []byte {
	if n.Sign() < 0 {
		b = append(b, '-')
		n = new(big.Int).Neg(n)
	}
	digits := n.Text(10)
	if scale <= 0 {
		return append(b, digits...)
	}
	if pad := int(scale) + 1 - len(digits); pad > 0 {
		digits = strings.Repeat("0", pad) + digits
	}
	point := len(digits) - int(scale)
	b = append(b, digits[:point]...)
	b = append(b, '.')
	return append(b, digits[point:]...)
}

// appendFloat appends v as the shortest JSON number that parses back to v;
// NaN and the infinities, which JSON has no number for, as the bare words
// NaN, Infinity and -Infinity, which the decoders reject as they do in
// JSON Lines.
func appendFloat(b []byte, v float64) []byte {
	switch {
	case math.IsNaN(v):
		return append(b, "NaN"...)
	case math.IsInf(v, 1):
		return append(b, "Infinity"...)
	case math.IsInf(v, -1):
		return append(b, "-Infinity"...)
	}
	return strconv.AppendFloat(b, v, 'g', -1, 64)
}

// appendJSONString appends s as a JSON string: '"', '\' and U+0000–U+001F
// escaped, everything else (invalid UTF-8 too) as it is.
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c < 0x20:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&15])
		default:
			b = append(b, c)
		}
	}
	return append(b, '"')
}

// Close releases the file.
func (p *parquetLines) Close() error {
	if p.batch != nil {
		p.batch.Release()
		p.batch = nil
	}
	p.rr.Release()
	return p.pf.Close()
}

// emptyLines is the text of a file without rows.
type emptyLines struct{ pf *file.Reader }

func (e emptyLines) Read([]byte) (int, error) { return 0, io.EOF }
func (e emptyLines) Close() error             { return e.pf.Close() }

// IsParquet says whether head, an object's first bytes, starts a Parquet
// file.
func IsParquet(head []byte) bool { return bytes.HasPrefix(head, ParquetMagic) }
