package readers

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math"
	"strconv"
	"sync"
	"unicode/utf8"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"

	"github.com/crlbatch/crlbatch/protocol/skyfall"
)

// The direct path for skyfall's Parquet objects: row groups are read column
// by column, a batch of rows at a time (the components map and every
// top-level column of numbers, strings or booleans by arrow-go's column
// chunk readers, parquet_maprd.go, with no pqarrow at all when that is
// every column; other layouts by pqarrow), straight into the run parts'
// builders (a stretch of rows of one run and one label a column at a time,
// addColumns), with the grouping core and the metadata candidates of
// the JSON decoder, and no JSON text in between. It accepts only what it
// can hold to exactly the outcome of the same rows as JSON Lines: columns
// of numbers, strings and booleans, skyfall's components as a map or a
// struct of numbers, the JSON-text columns of ParquetJSONColumns while
// their cells are null or the text null, and valid rows within the limits.
// Anything else (a list or struct column, a bad row, a limit reached, a
// key that is not valid UTF-8, an object whose JSON text might pass
// MaxLineBytes or MaxObjectBytes) makes DecodeParquet drop what it built
// and read the object again the general way, ParquetLines into
// DecodeObject, so that every error, bad row and limit is that of the JSON
// Lines form, word for word. FuzzParquetDirect holds the two ways to the
// same decoded object.

// parquetDirectBatchRows is the number of rows the direct path reads at a
// time from a row group, of a file of up to pqDirectBatchValues/
// parquetDirectBatchRows (256) leaf columns.
const parquetDirectBatchRows = 4 << 10

// pqDirectBatchValues bounds the values of a batch of the direct path:
// each column's of the batch are held at once (a float64 each), so a file
// of 2,000 columns reads 524 rows at a time, not 4,096 (65 MB), and at
// least 256.
const pqDirectBatchValues = 1 << 20

// pqDirectRows is the batch size of the direct path for a file of leaves
// leaf columns.
func pqDirectRows(leaves int) int64 {
	return int64(min(parquetDirectBatchRows, max(256, pqDirectBatchValues/max(leaves, 1))))
}

// errParquetIndirect stops the direct path: the object is read again
// through its rows as JSON lines.
var errParquetIndirect = errors.New("readers: not for the direct path")

// DecodeParquet decodes the skyfall rows of the Parquet object r (the
// object at url, under key) as DecodeObject decodes the same rows in JSON
// Lines: the same parts, runs, metadata, errors (naming rows by their
// number as lines) and bad rows, after the same checks of the columns of
// fields as ParquetLines. Row groups are read one batch of rows at a
// time; r is read at the offsets the file's footer gives.
func DecodeParquet(url, key string, r parquet.ReaderAtSeeker, fields []ParquetField, opts Options) (*ObjectRuns, error) {
	opts, err := opts.normalize()
	if err != nil {
		return nil, err
	}
	pr, src := pqWatch(r)
	f, err := openParquet(url, pr, fields, pqDirectRows, dictColumns)
	if err != nil {
		return nil, src.failed(err)
	}
	obj, err := decodeParquetDirect(f, key, opts)
	f.pf.Close()
	if err == nil {
		return obj, nil
	}
	if err = src.failed(err); !errors.Is(err, errParquetIndirect) {
		return nil, err
	}
	lines, err := ParquetLines(url, r, fields)
	if err != nil {
		return nil, err
	}
	defer lines.Close()
	return DecodeObject(url, key, lines, opts)
}

// ParquetDirect reports whether DecodeParquet read the object at url the
// direct way; for tests and benchmarks.
var parquetDirectHook func(url string, direct bool)

// parquetArrowHook, when set, is called with the URL of an object whose
// direct read uses pqarrow for some columns; for tests.
var parquetArrowHook func(url string)

// pqKind is how the direct path reads a column.
type pqKind byte

const (
	pqNumber pqKind = iota + 1
	pqString
	pqBool
	pqJSON // a ParquetJSONColumns column: each cell null, or a JSON null, string, number or boolean
	pqCompsMap
	pqCompsStruct
)

// pqColumn is one column of the file as the direct path reads it.
type pqColumn struct {
	name   string
	idx    int // in the file's schema
	bidx   int // in the record batches, or -1 for a column read by mr
	kind   pqKind
	schema int   // the schema field (fReward...), or -1 for an extra (gamma included)
	ident  int   // the identity field it holds, or -1
	comps  []int // pqCompsStruct: the component of each member, or -1

	// The current batch.
	valid     []byte // validity bitmap, nil when no cell is null
	voff      int
	isInt     bool
	i64       []int64
	f64       []float64
	off32     []int32
	off64     []int64
	data      []byte
	dict      []int32 // a dictionary column: each row's index into off32/off64 and data
	textBytes int64   // pqString, pqJSON: the bytes of the batch's non-null cells
	bs        []bool  // pqBool: each row's value (false for a null cell)
	m         *array.Map
	st        *array.Struct
	keys      pqColumnStrings
	items     pqNums
	fields    []pqNums        // pqCompsStruct
	mr        *pqMapReader    // pqCompsMap read by the column chunk readers
	nr        *pqFlatReader   // pqNumber read by the column chunk reader
	sr        *pqStrReader    // pqString, pqJSON read by the column chunk reader
	br        *pqBoolReader   // pqBool read by the column chunk reader
	stR       *pqStructReader // pqCompsStruct read by its members' column chunk readers
	// temporal: a pqString column of dates, times or timestamps, each
	// batch's cells rendered into tText at tOff (appendTemporalText).
	temporal bool
	tOff     []int32
	tText    []byte

	// pqCompsMap: row i's entries are mIDs[mOff[i]:mOff[i+1]] (keys by
	// their number in kNames), their values items at the same positions.
	mOff      []int32
	mIDs      []int32
	mKeyBytes int
	// The distinct keys of the components map, each interned once an
	// object with the component it sets (kComp, -1 for none); kPred, by
	// position in a row's map, the key there last time.
	// kPtr, by position, where that key's bytes were: a key read from the
	// same bytes again (a dictionary page's rows of one entry alias it) is
	// that key without comparing them. Valid only while the bytes keys
	// alias stay put: keysMoved forgets them whenever they may change (a
	// page or a batch read).
	kNames  []string
	kIndex  map[string]int32
	kComp   []int
	kPred   []int32
	kPtr    []*byte // by position, where kPred's key was read (keysMoved clears)
	compIdx map[string]int
	mValid  []byte    // scratch for the validity of the maps
	iValid  []byte    // scratch for the validity of the values
	iNull   []int     // scratch: the entries with a null value
	s64     []int64   // scratch
	sf64    []float64 // scratch

	// pqJSON: the kind of each row's cell in the batch (kindNull for a
	// null cell), and the last cell validated, parsed or decoded.
	kinds    []byte
	lastRaw  []byte
	lastKind byte
	lastNum  []byte // the text of lastV
	lastV    float64
	lastInt  bool
	// pqJSON with dict set (each row's cell an entry of the batch): by
	// entry, its kind plus one (0: not yet seen in the batch) and, for a
	// number, its value; eReady says they are of the current batch (check
	// sets it), so that number reads a cell's value without parsing it
	// again.
	eKind  []byte
	eV     []float64
	eInt   []bool
	eReady bool
}

type pqColumnStrings struct {
	off32 []int32
	off64 []int64
	data  []byte
}

func (s *pqColumnStrings) at(i int) []byte {
	if s.off32 != nil {
		return s.data[s.off32[i]:s.off32[i+1]]
	}
	return s.data[s.off64[i]:s.off64[i+1]]
}

// pqNums is a column of numbers in the current batch.
type pqNums struct {
	valid []byte
	voff  int
	isInt bool
	i64   []int64
	f64   []float64
	s64   []int64
	sf64  []float64
}

func (n *pqNums) ok(i int) bool { return n.valid == nil || bitutil.BitIsSet(n.valid, n.voff+i) }

func (n *pqNums) float(i int) float64 {
	if n.isInt {
		return float64(n.i64[i])
	}
	return n.f64[i]
}

func (c *pqColumn) ok(i int) bool { return c.valid == nil || bitutil.BitIsSet(c.valid, c.voff+i) }

func (c *pqColumn) str(i int) []byte {
	if c.dict != nil {
		i = int(c.dict[i])
	}
	if c.off32 != nil {
		return c.data[c.off32[i]:c.off32[i+1]]
	}
	return c.data[c.off64[i]:c.off64[i+1]]
}

// keyID returns the number of key, at position pos of its row's
// components map, interned; false for a key that is not valid UTF-8.
// Rows nearly always list their components in one order: the key at this
// position last time is tried first, a string compare, not a lookup.
func (c *pqColumn) keyID(pos int, key []byte) (int32, bool) {
	if pos < len(c.kPred) {
		if id := c.kPred[pos]; id >= 0 && len(key) > 0 && c.kPtr[pos] == unsafe.SliceData(key) && len(c.kNames[id]) == len(key) {
			return id, true
		}
		if id := c.kPred[pos]; id >= 0 && c.kNames[id] == string(key) {
			if len(key) > 0 {
				c.kPtr[pos] = unsafe.SliceData(key)
			}
			return id, true
		}
	}
	id, ok := c.kIndex[string(key)]
	if !ok {
		if !utf8.Valid(key) {
			return 0, false
		}
		name := string(key)
		id = int32(len(c.kNames))
		if c.kIndex == nil {
			c.kIndex = map[string]int32{}
		}
		c.kIndex[name] = id
		c.kNames = append(c.kNames, name)
		comp, ok := c.compIdx[name]
		if !ok {
			comp = -1
		}
		c.kComp = append(c.kComp, comp)
	}
	if pos < 64 {
		for len(c.kPred) <= pos {
			c.kPred, c.kPtr = append(c.kPred, -1), append(c.kPtr, nil)
		}
		c.kPred[pos] = id
		c.kPtr[pos] = nil
		if len(key) > 0 {
			c.kPtr[pos] = unsafe.SliceData(key)
		}
	}
	return id, true
}

// keysMoved forgets where keys were read (kPtr): the bytes they alias
// may now hold others.
func (c *pqColumn) keysMoved() { clear(c.kPtr) }

// text returns row i's string: a string cell, or the decoded text of a
// JSON string.
func (c *pqColumn) text(i int) []byte {
	if c.kind == pqJSON {
		return decodeString(c.str(i))
	}
	return c.str(i)
}

// value returns row i's number, of a number column or a JSON-text one.
func (c *pqColumn) value(i int) float64 {
	if c.kind == pqJSON {
		v, _ := c.number(i)
		return v
	}
	return c.float(i)
}

func (c *pqColumn) float(i int) float64 {
	if c.isInt {
		return float64(c.i64[i])
	}
	return c.f64[i]
}

// pqDirectKind says how the direct path reads a column of type t holding
// the schema field f (-1 for an extra), or 0 when it cannot.
func pqDirectKind(t arrow.DataType, f int, jsonText bool) pqKind {
	if jsonText {
		return pqJSON
	}
	switch f {
	case fReward, fStep, fEffectiveRank:
		if pqNumberType(t) {
			return pqNumber
		}
		return 0
	case fRegimeID, fRegimeOrigin, fAliasOf:
		if pqStringType(t) {
			return pqString
		}
		return 0
	case fInvalidAction:
		if t.ID() == arrow.BOOL {
			return pqBool
		}
		return 0
	case fComponents:
		switch t.ID() {
		case arrow.MAP:
			m := t.(*arrow.MapType)
			if pqStringType(m.KeyType()) && pqNumberType(m.ItemType()) {
				return pqCompsMap
			}
		case arrow.STRUCT:
			seen := map[string]bool{}
			for _, sf := range t.(*arrow.StructType).Fields() {
				if !pqNumberType(sf.Type) || seen[sf.Name] || !utf8.ValidString(sf.Name) {
					return 0
				}
				seen[sf.Name] = true
			}
			return pqCompsStruct
		}
		return 0
	}
	switch {
	case pqNumberType(t):
		return pqNumber
	case pqStringType(t), isTemporalType(t): // (temporal: rendered as text a batch at a time)
		return pqString
	case t.ID() == arrow.BOOL:
		return pqBool
	}
	return 0
}

func pqNumberType(t arrow.DataType) bool {
	switch t.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64, arrow.UINT8, arrow.UINT16, arrow.UINT32,
		arrow.FLOAT32, arrow.FLOAT64:
		return true
	}
	return false // UINT64 may hold integers beyond int64
}

func pqStringType(t arrow.DataType) bool {
	if d, ok := t.(*arrow.DictionaryType); ok {
		return d.IndexType.ID() == arrow.INT32 && pqStringType(d.ValueType)
	}
	return t.ID() == arrow.STRING || t.ID() == arrow.LARGE_STRING
}

// bind points the column at its array in the current batch; false when a
// cell cannot be read directly.
func (c *pqColumn) bind(a arrow.Array) bool {
	c.valid, c.voff = nil, 0
	if a.NullN() > 0 {
		c.valid, c.voff = a.NullBitmapBytes(), a.Data().Offset()
	}
	switch c.kind {
	case pqNumber:
		var n pqNums
		if !bindNums(&n, a, c.s64, c.sf64) {
			return false
		}
		c.isInt, c.i64, c.f64, c.s64, c.sf64 = n.isInt, n.i64, n.f64, n.s64, n.sf64
	case pqString, pqJSON:
		c.dict = nil
		if c.temporal {
			c.tOff, c.tText = append(c.tOff[:0], 0), c.tText[:0]
			for i := 0; i < a.Len(); i++ {
				if a.IsValid(i) {
					c.tText = appendTemporalText(c.tText, a, i)
				}
				c.tOff = append(c.tOff, int32(len(c.tText)))
			}
			c.off32, c.off64, c.data = c.tOff, nil, c.tText
			c.textBytes = int64(len(c.data))
			break
		}
		if da, ok := a.(*array.Dictionary); ok {
			idx, ok := da.Indices().(*array.Int32)
			if !ok {
				return false
			}
			c.dict = idx.Int32Values()
			a = da.Dictionary()
		}
		var s pqColumnStrings
		if !bindStrings(&s, a) {
			return false
		}
		c.off32, c.off64, c.data = s.off32, s.off64, s.data
		c.textBytes = int64(len(c.data))
		if c.dict != nil {
			c.textBytes = 0
			for i := range c.dict {
				if c.ok(i) {
					c.textBytes += int64(len(c.str(i)))
				}
			}
		}
	case pqBool:
		b, ok := a.(*array.Boolean)
		if !ok {
			return false
		}
		c.bs = c.bs[:0]
		for i := 0; i < b.Len(); i++ {
			c.bs = append(c.bs, b.Value(i))
		}
	case pqCompsMap:
		m, ok := a.(*array.Map)
		if !ok {
			return false
		}
		c.m = m
		c.keysMoved() // a new batch's arrays
		if !bindStrings(&c.keys, m.Keys()) || !bindNums(&c.items, m.Items(), c.items.s64, c.items.sf64) {
			return false
		}
		if m.Keys().NullN() > 0 {
			return false
		}
		c.mOff = c.mOff[:0]
		for i := 0; i < m.Len(); i++ {
			lo, _ := m.ValueOffsets(i)
			c.mOff = append(c.mOff, int32(lo))
		}
		if m.Len() > 0 {
			_, hi := m.ValueOffsets(m.Len() - 1)
			c.mOff = append(c.mOff, int32(hi))
		}
		// mIDs[k] is the key of entry k of the keys array (mOff's offsets).
		c.mIDs, c.mKeyBytes = append(c.mIDs[:0], make([]int32, m.Keys().Len())...), 0
		for i := 0; i+1 < len(c.mOff); i++ {
			for k := c.mOff[i]; k < c.mOff[i+1]; k++ {
				key := c.keys.at(int(k))
				id, ok := c.keyID(int(k-c.mOff[i]), key)
				if !ok {
					return false
				}
				c.mIDs[k] = id
				c.mKeyBytes += len(key)
			}
		}
	case pqCompsStruct:
		st, ok := a.(*array.Struct)
		if !ok {
			return false
		}
		c.st = st
		if c.fields == nil {
			c.fields = make([]pqNums, st.NumField())
		}
		for k := range c.fields {
			if !bindNums(&c.fields[k], st.Field(k), c.fields[k].s64, c.fields[k].sf64) {
				return false
			}
		}
	}
	return true
}

func bindNums(n *pqNums, a arrow.Array, s64 []int64, sf64 []float64) bool {
	n.valid, n.voff = nil, 0
	if a.NullN() > 0 {
		n.valid, n.voff = a.NullBitmapBytes(), a.Data().Offset()
	}
	n.s64, n.sf64 = s64, sf64
	n.isInt = true
	switch a := a.(type) {
	case *array.Int64:
		n.i64 = a.Int64Values()
	case *array.Float64:
		n.isInt, n.f64 = false, a.Float64Values()
	case *array.Int32:
		n.i64 = widen(&n.s64, a.Int32Values())
	case *array.Int16:
		n.i64 = widen(&n.s64, a.Int16Values())
	case *array.Int8:
		n.i64 = widen(&n.s64, a.Int8Values())
	case *array.Uint32:
		n.i64 = widen(&n.s64, a.Uint32Values())
	case *array.Uint16:
		n.i64 = widen(&n.s64, a.Uint16Values())
	case *array.Uint8:
		n.i64 = widen(&n.s64, a.Uint8Values())
	case *array.Float32:
		vs := a.Float32Values()
		n.sf64 = n.sf64[:0]
		for _, v := range vs {
			n.sf64 = append(n.sf64, float64(v))
		}
		n.isInt, n.f64 = false, n.sf64
	default:
		return false
	}
	return true
}

func widen[T int8 | int16 | int32 | uint8 | uint16 | uint32](s *[]int64, vs []T) []int64 {
	out := (*s)[:0]
	for _, v := range vs {
		out = append(out, int64(v))
	}
	*s = out
	return out
}

func bindStrings(s *pqColumnStrings, a arrow.Array) bool {
	s.off32, s.off64, s.data = nil, nil, nil
	switch a := a.(type) {
	case *array.String:
		s.off32 = a.ValueOffsets()
		if b := a.Data().Buffers()[2]; b != nil {
			s.data = b.Bytes()
		}
	case *array.LargeString:
		s.off64 = a.ValueOffsets()
		if b := a.Data().Buffers()[2]; b != nil {
			s.data = b.Bytes()
		}
	// Binary arrays reach here only as a JSON-text column's (Parquet's
	// JSON logical type reads as binary): pqStringType admits no other.
	case *array.Binary:
		s.off32 = a.ValueOffsets()
		if b := a.Data().Buffers()[2]; b != nil {
			s.data = b.Bytes()
		}
	case *array.LargeBinary:
		s.off64 = a.ValueOffsets()
		if b := a.Data().Buffers()[2]; b != nil {
			s.data = b.Bytes()
		}
	case array.ExtensionArray: // arrow.json's, over its text
		return bindStrings(s, a.Storage())
	default:
		return false
	}
	return true
}

// pqCand is a metadata candidate of a part read the direct way: the column
// and the value on the part's first row, beside partCore.cands[at].
type pqCand struct {
	col  *pqColumn
	at   int
	cand *candidate // pqJSON: partCore.cands[at], set when it is compared
	i64  int64
	f64  float64
	b    bool
	s    []byte
}

// pqPart is the direct path's state of one part.
type pqPart struct {
	p     *part
	cands []pqCand
}

// pqDirect decodes one Parquet object the direct way.
type pqDirect struct {
	url   string
	opts  Options
	obj   *ObjectRuns
	cols  []*pqColumn
	byF   [fEffectiveRank + 1]*pqColumn
	gamma *pqColumn
	ids   []*pqColumn // by identity field; nil when the file has no column for it
	extra []*pqColumn // the columns that are not schema fields, in file order, then consts
	// consts hold the fields Hive-style folders give every row (an
	// integer or a string, the same on every row of the object).
	consts []*pqColumn
	g      grouper[*part]
	parts  map[*part]*pqPart

	compIdx  map[string]int
	intern   map[string]string
	lastLab  []byte
	label    string
	row      skyfall.Row
	compSeen []bool
	// bulk: every column is of a kind addColumns reads (set once the
	// columns are known).
	bulk   bool
	cols1  skyfall.Columns
	rew    []float64 // scratch: rewards of an integer column
	stp    []int64   // scratch: steps of a float or JSON-text column
	rank   []float64 // scratch: effective ranks of an integer or JSON-text column
	inv    []bool    // scratch: invalid_action of a JSON-text column
	vStep  []byte    // scratch: which rows of a JSON-text column carry a value
	vInv   []byte
	vRank  []byte
	comp   [][]float64 // scratch: by component, its values (0 for none)
	seenAt []int       // by component: 1 + the row of the batch that last set it
	tmp    []byte
	line   int64 // the JSON text's bound so far, for MaxObjectBytes
	static int64 // a row's JSON text's bound, strings and maps aside
}

func decodeParquetDirect(f *parquetFile, key string, opts Options) (obj *ObjectRuns, err error) {
	defer func() {
		if parquetDirectHook != nil {
			parquetDirectHook(f.url, err == nil)
		}
	}()
	d := pqGet[pqDirect](&pqDirectPool)
	*d = pqDirect{url: f.url, opts: opts, parts: map[*part]*pqPart{}, intern: map[string]string{}, compIdx: map[string]int{},
		rew: d.rew, stp: d.stp, rank: d.rank, inv: d.inv, vStep: d.vStep, vInv: d.vInv, vRank: d.vRank, comp: d.comp[:0]}
	defer d.release()
	d.obj = &ObjectRuns{ObjectInfo: ObjectInfo{URL: f.url, Key: key, Format: Plain}, comps: opts.Components}
	for i, c := range opts.Components {
		if _, ok := d.compIdx[c]; !ok {
			d.compIdx[c] = i
		}
	}
	d.row.Comps = make([]float64, len(opts.Components))
	d.compSeen = make([]bool, len(opts.Components))
	identOf := map[string]int{}
	for i, name := range opts.IdentityFields {
		identOf[name] = i
	}
	d.ids = make([]*pqColumn, len(opts.IdentityFields))
	schemaOf := map[string]int{}
	for i, name := range schemaFields {
		schemaOf[name] = i
	}
	d.static = 2
	for i, pc := range f.cols {
		if !utf8.ValidString(pc.name) || pc.folder != nil {
			// (A column a folder also gives: the general way checks
			// each cell against the folder.)
			return nil, errParquetIndirect
		}
		sf, ok := schemaOf[pc.name]
		if !ok {
			sf = -1
		}
		c := pqGet[pqColumn](&pqColumnPool)
		*c = pqColumn{name: pc.name, idx: i, bidx: i, schema: sf, ident: -1, compIdx: d.compIdx,
			bs: c.bs, mOff: c.mOff, mIDs: c.mIDs, mValid: c.mValid, iValid: c.iValid, iNull: c.iNull,
			s64: c.s64, sf64: c.sf64, items: pqNums{s64: c.items.s64, sf64: c.items.sf64}, kinds: c.kinds, tOff: c.tOff, tText: c.tText}
		if c.kind = pqDirectKind(f.schema.Field(i).Type, sf, pc.json); c.kind == 0 {
			return nil, errParquetIndirect
		}
		c.temporal = c.kind == pqString && isTemporalType(f.schema.Field(i).Type)
		if c.kind == pqCompsStruct {
			for _, m := range f.schema.Field(i).Type.(*arrow.StructType).Fields() {
				idx, ok := d.compIdx[m.Name]
				if !ok {
					idx = -1
				}
				c.comps = append(c.comps, idx)
				d.static += int64(6*len(m.Name)) + 30
			}
		}
		d.static += int64(6*len(pc.name)) + 30
		if sf >= 0 {
			d.byF[sf] = c
		} else {
			if id, ok := identOf[pc.name]; ok {
				c.ident = id
				d.ids[id] = c
			}
			if pc.name == "gamma" {
				if c.kind != pqNumber && c.kind != pqJSON {
					return nil, errParquetIndirect
				}
				d.gamma = c
			}
			d.extra = append(d.extra, c)
		}
		d.cols = append(d.cols, c)
	}
	for _, k := range f.consts {
		_, schema := schemaOf[k.Name]
		c := pqConstColumn(k)
		if c == nil || schema || k.Name == "gamma" || !utf8.ValidString(k.Name) {
			return nil, errParquetIndirect
		}
		if id, ok := identOf[k.Name]; ok {
			c.ident = id
			d.ids[id] = c
		}
		d.static += int64(6*len(k.Name)+30) + 6*int64(len(k.Value))
		d.extra = append(d.extra, c)
		d.consts = append(d.consts, c)
	}
	if f.pf.NumRows() == 0 {
		return d.obj, nil
	}
	if c := d.byF[fReward]; c == nil || c.kind != pqNumber {
		return nil, errParquetIndirect // a row without reward or regime_id is bad
	}
	if c := d.byF[fRegimeID]; c == nil || c.kind != pqString {
		return nil, errParquetIndirect // a row without reward or regime_id is bad
	}
	d.g = newGrouper(d.obj.URL, d.obj.Key, opts.IdentityFields, opts.MaxRuns, d.newPart)
	d.bulk = pqBulkKinds(d.byF[fStep], d.byF[fComponents], d.byF[fInvalidAction], d.byF[fEffectiveRank], d.gamma) && !pqNoBulk
	if parquetBulkHook != nil {
		parquetBulkHook(f.url, d.bulk)
	}
	// The components map, in the layout the column chunk readers know, is
	// read by them, not in the record batches.
	var leaves []int
	chunked := map[int]bool{} // leaf columns
	if c := d.byF[fComponents]; c != nil && c.kind == pqCompsMap {
		if c.mr = newPQMapReader(f.pf, c.name, f.schema.Field(c.idx).Type.(*arrow.MapType).ItemType()); c.mr != nil {
			c.mr.obj = f.obj
			chunked[c.mr.kcol], chunked[c.mr.vcol] = true, true
		}
	}
	for _, c := range d.cols {
		t := f.schema.Field(c.idx).Type
		switch c.kind {
		case pqNumber:
			if c.nr = newPQFlatReader(f.pf, c.name, t); c.nr != nil {
				c.nr.obj = f.obj
				chunked[c.nr.col] = true
			}
		case pqString, pqJSON:
			if c.temporal {
				break // in the record batches, rendered by bind
			}
			if c.sr = newPQStrReader(f.pf, c.name, t, c.kind == pqJSON); c.sr != nil {
				c.sr.obj = f.obj
				chunked[c.sr.col] = true
			}
		case pqBool:
			if c.br = newPQBoolReader(f.pf, c.name); c.br != nil {
				c.br.obj = f.obj
				chunked[c.br.col] = true
			}
		case pqCompsStruct:
			if c.stR = newPQStructReader(f.pf, c.name, t.(*arrow.StructType)); c.stR != nil {
				c.stR.setObject(f.obj)
				for _, m := range c.stR.members {
					chunked[m.col] = true
				}
			}
		}
	}
	b := 0
	for l := 0; l < f.pf.MetaData().Schema.NumColumns(); l++ {
		if !chunked[l] {
			leaves = append(leaves, l)
		}
	}
	for _, c := range d.cols {
		c.bidx = -1
		if c.mr == nil && c.nr == nil && c.sr == nil && c.br == nil && c.stR == nil {
			c.bidx = b
			b++
		}
	}
	defer func() {
		for _, c := range d.cols {
			switch {
			case c.mr != nil:
				c.mr.release()
			case c.nr != nil:
				c.nr.release()
			case c.sr != nil:
				c.sr.release()
			case c.br != nil:
				c.br.release()
			case c.stR != nil:
				c.stR.release()
			}
		}
	}()
	row := 0
	if len(leaves) == 0 {
		// Every column is read by its column chunk readers: no pqarrow.
		for total := int(f.pf.NumRows()); row < total; {
			n := min(int(f.batch), total-row)
			if err := d.batch(nil, n, row); err != nil {
				return nil, err
			}
			row += n
		}
		d.obj.Lines, d.obj.Rows = row, row
		return d.obj, nil
	}
	if parquetArrowHook != nil {
		parquetArrowHook(f.url)
	}
	rr, err := f.fr.GetRecordReader(context.Background(), leaves, nil)
	if err != nil {
		return nil, errParquetIndirect
	}
	defer rr.Release()
	for rr.Next() {
		batch := rr.RecordBatch()
		n := int(batch.NumRows())
		if err := d.batch(batch, n, row); err != nil {
			return nil, err
		}
		row += n
	}
	if err := rr.Err(); err != nil && !errors.Is(err, io.EOF) {
		return nil, errParquetIndirect // the general way names the row
	}
	d.obj.Lines, d.obj.Rows = row, row
	return d.obj, nil
}

// pqConstColumn is the column of the field a Hive-style folder gives
// every row (k.Value: an integer, or a string of valid UTF-8); nil for
// any other value (read the general way).
func pqConstColumn(k ParquetField) *pqColumn {
	c := &pqColumn{name: k.Name, idx: -1, bidx: -1, schema: -1, ident: -1}
	switch {
	case len(k.Value) > 0 && k.Value[0] == '"':
		s := decodeString(k.Value)
		if !utf8.Valid(s) {
			return nil
		}
		c.kind, c.data, c.off32 = pqString, bytes.Clone(s), []int32{0, int32(len(s))}
	default:
		v, err := strconv.ParseInt(string(k.Value), 10, 64)
		if err != nil {
			return nil
		}
		c.kind, c.isInt, c.i64 = pqNumber, true, []int64{v}
	}
	return c
}

// constRows makes c, a pqConstColumn, hold its value on n rows.
func (c *pqColumn) constRows(n int) {
	if c.kind == pqString {
		for len(c.dict) < n {
			c.dict = append(c.dict, 0)
		}
		c.textBytes = int64(n) * int64(len(c.data))
		return
	}
	for len(c.i64) < n {
		c.i64 = append(c.i64, c.i64[0])
	}
}

func (d *pqDirect) newPart(h partHeader) *part {
	p := &part{partCore: partCore{partHeader: h}, b: skyfall.NewBuilder(h.runKey, d.opts.Components)}
	d.obj.parts = append(d.obj.parts, p)
	d.parts[p] = &pqPart{p: p}
	return p
}

// batch reads the next n rows, the first of them row base+1 of the file:
// the columns read by pqarrow from the record batch b, the others by their
// column chunk readers.
func (d *pqDirect) batch(b arrow.RecordBatch, n, base int) error {
	if n == 0 {
		return nil
	}
	// vary bounds the JSON text of the batch's strings, JSON text and
	// maps, all rows together; rowVary any one row's (a cell of a string
	// column is no longer than the batch's bytes of the column's values,
	// len(c.data), which a column of few values repeated keeps short).
	var vary, rowVary int64
	for _, c := range d.consts {
		c.constRows(n)
	}
	for _, c := range d.cols {
		var err error
		switch {
		case c.mr != nil:
			err = c.mr.next(c, n)
		case c.nr != nil:
			err = c.nr.next(c, n)
		case c.sr != nil:
			err = c.sr.next(c, n)
		case c.br != nil:
			err = c.br.next(c, n)
		case c.stR != nil:
			err = c.stR.next(c, n)
		case !c.bind(b.Column(c.bidx)):
			err = errParquetIndirect
		}
		if err != nil {
			// A page whose checksum does not match (pqChecked): the
			// object's error, named here, not a reason to read it the
			// general way. (ce is declared here: errors.As moves it to
			// the heap.)
			var ce *pqChecksumError
			if errors.As(err, &ce) {
				return &DataError{URL: d.url, Line: base + 1, Row: true, Msg: "column " + c.name + ": parquet: " + ce.Error(), Err: ce}
			}
			return err
		}
		if err := d.check(c, n); err != nil {
			return err
		}
		switch c.kind {
		case pqString:
			vary += 6 * c.textBytes
			rowVary += 6 * min(c.textBytes, int64(len(c.data)))
		case pqJSON:
			vary += c.textBytes
			rowVary += min(c.textBytes, int64(len(c.data)))
		case pqCompsMap:
			m := 6*int64(c.mKeyBytes) + 32*int64(c.mOff[len(c.mOff)-1]-c.mOff[0])
			vary += m
			rowVary += m
		}
	}
	// No row's JSON text is longer than d.static+rowVary, nor all of the
	// batch's together than d.static*n+vary. (Not the batch's for a row:
	// a row of 2,000 columns, or of a few with --max-line-bytes 4KiB,
	// would pass it, and every such object be read twice.)
	if d.line += d.static*int64(n) + vary; d.static+rowVary > int64(d.opts.MaxLineBytes) || d.line > d.opts.MaxObjectBytes {
		return errParquetIndirect
	}
	for s := 0; s < n; {
		e := n
		for _, c := range d.ids {
			if c != nil {
				e = c.runEnd(s, e)
			}
		}
		if err := d.rows(s, e, base); err != nil {
			return err
		}
		s = e
	}
	return nil
}

// check validates column c over the n rows of the batch: what the JSON
// decoder would reject in its cells sends the object the general way.
func (d *pqDirect) check(c *pqColumn, n int) error {
	required := c.schema == fReward || c.schema == fRegimeID
	if required && c.valid != nil {
		return errParquetIndirect
	}
	switch c.kind {
	case pqNumber:
		if !c.isInt && anyNonFinite(c.f64) {
			for i, v := range c.f64 {
				if math.IsNaN(v) || math.IsInf(v, 0) {
					if c.ok(i) {
						return errParquetIndirect
					}
				}
			}
		}
		if c.schema == fStep && !c.isInt {
			for i, v := range c.f64 {
				if c.ok(i) && (v != math.Trunc(v) || math.Abs(v) > 1<<53) {
					return errParquetIndirect
				}
			}
		}
	case pqString:
		if !isASCII(c.data) {
			for i := 0; i < n; i++ {
				if c.ok(i) && !utf8.Valid(c.str(i)) {
					return errParquetIndirect
				}
			}
		}
	case pqJSON:
		c.kinds = c.kinds[:0]
		c.eReady = false
		if c.dict != nil {
			return c.checkEntries(n)
		}
		for i := 0; i < n; i++ {
			k := byte(kindNull)
			if c.ok(i) {
				raw := c.str(i)
				if c.lastRaw != nil && bytes.Equal(raw, c.lastRaw) {
					k = c.lastKind
				} else {
					var ok bool
					if k, ok = jsonScalar(raw); !ok {
						return errParquetIndirect
					}
					c.lastRaw, c.lastKind = append(c.lastRaw[:0], raw...), k
				}
			}
			if !jsonFits(c, k) {
				return errParquetIndirect
			}
			c.kinds = append(c.kinds, k)
		}
	case pqCompsMap:
		// Keys are checked to be valid UTF-8 as they are interned (keyID).
		it := &c.items
		if it.valid != nil {
			// A null value inside a present map is a bad row; inside a
			// null map it is never read.
			for i := 0; i < n; i++ {
				if !c.ok(i) {
					continue
				}
				for k := c.mOff[i]; k < c.mOff[i+1]; k++ {
					if !it.ok(int(k)) {
						return errParquetIndirect
					}
				}
			}
		}
		if !it.isInt && anyNonFinite(it.f64) {
			for _, v := range it.f64 {
				if math.IsNaN(v) || math.IsInf(v, 0) {
					return errParquetIndirect // conservative: the general way decides
				}
			}
		}
	case pqCompsStruct:
		for k := range c.fields {
			fn := &c.fields[k]
			if fn.isInt || !anyNonFinite(fn.f64) {
				continue
			}
			for i, v := range fn.f64 {
				if (math.IsNaN(v) || math.IsInf(v, 0)) && fn.ok(i) && c.ok(i) {
					return errParquetIndirect
				}
			}
		}
	}
	return nil
}

// anyNonFinite reports whether xs holds a NaN or an infinity (an exponent
// of all ones), without a branch a value: check's loops, which also ask
// whether the row holds a value, run only then.
func anyNonFinite(xs []float64) bool {
	var acc uint64
	for _, x := range xs {
		acc |= (math.Float64bits(x)>>52&0x7ff + 1) >> 11
	}
	return acc != 0
}

// jsonScalar validates raw, the text of one cell of a JSON-text column, as
// the JSON decoder validates a value: a null, a string, a number or a
// boolean, with nothing around it, is read directly; anything else
// (objects and arrays included) is not.
func jsonScalar(raw []byte) (byte, bool) {
	k, _, _, ok := jsonScalarValue(raw)
	return k, ok
}

// jsonScalarValue is jsonScalar, and for a number its value and whether
// it is an integer literal (parseNumber's).
func jsonScalarValue(raw []byte) (kind byte, v float64, isInt, ok bool) {
	if len(raw) == 0 {
		return 0, 0, false, false
	}
	d := rowDecoder{data: raw}
	var err *rowError
	switch c := raw[0]; {
	case c == '"':
		kind = kindString
		_, err = d.scanString(false, nil)
	case c == '-' || c-'0' < 10:
		kind = kindNumber
		v, isInt, err = d.number(true)
	case string(raw) == "null":
		return kindNull, 0, false, true
	case string(raw) == "true" || string(raw) == "false":
		return kindBool, 0, false, true
	default:
		return 0, 0, false, false
	}
	return kind, v, isInt, err == nil && d.pos == len(raw)
}

// checkEntries is check's pqJSON case for a column whose rows index the
// batch's entries (dict): each entry is validated, and a number parsed,
// once however many rows hold it (a run of rows of one value, a
// dictionary page's repeated entries), not compared with the last cell
// row by row; number then reads the values parsed here.
func (c *pqColumn) checkEntries(n int) error {
	ne := len(c.off64) - 1
	if c.off32 != nil {
		ne = len(c.off32) - 1
	}
	c.eKind = pqGrow(c.eKind, max(ne, 0))
	clear(c.eKind)
	c.eV, c.eInt = pqGrow(c.eV, max(ne, 0)), pqGrow(c.eInt, max(ne, 0))
	for i := 0; i < n; i++ {
		k := byte(kindNull)
		if c.ok(i) {
			e := c.dict[i]
			if ek := c.eKind[e]; ek != 0 {
				k = ek - 1
			} else {
				var ok bool
				if k, c.eV[e], c.eInt[e], ok = jsonScalarValue(c.str(i)); !ok {
					return errParquetIndirect
				}
				c.eKind[e] = k + 1
			}
		}
		if !jsonFits(c, k) {
			return errParquetIndirect
		}
		c.kinds = append(c.kinds, k)
	}
	c.eReady = true
	return nil
}

// jsonFits says whether a JSON-text column's cell of kind k is of a type
// its field takes (null always is); else the general way names the error.
func jsonFits(c *pqColumn, k byte) bool {
	if k == kindNull {
		return true
	}
	switch c.schema {
	case fRegimeOrigin, fAliasOf:
		return k == kindString
	case fStep, fEffectiveRank:
		return k == kindNumber
	case fInvalidAction:
		return k == kindBool
	case fComponents, fReward, fRegimeID:
		return false
	}
	if c.name == "gamma" {
		return k == kindNumber
	}
	return true
}

// number returns the value of row i's cell of a JSON-text column of
// numbers: the one check parsed for its entry (eReady), or else the last
// one, parsed again only when the text differs.
func (c *pqColumn) number(i int) (float64, bool) {
	if c.eReady {
		if e := c.dict[i]; c.eKind[e] == kindNumber+1 {
			return c.eV[e], c.eInt[e]
		}
	}
	raw := c.str(i)
	if c.lastNum == nil || !bytes.Equal(raw, c.lastNum) {
		c.lastV, c.lastInt = parseNumber(raw)
		c.lastNum = append(c.lastNum[:0], raw...)
	}
	return c.lastV, c.lastInt
}

// isASCII reports whether b holds only ASCII bytes (then every string in it
// is valid UTF-8).
func isASCII(b []byte) bool {
	for len(b) >= 8 {
		w := uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
			uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
		if w&0x8080808080808080 != 0 {
			return false
		}
		b = b[8:]
	}
	for _, c := range b {
		if c >= 0x80 {
			return false
		}
	}
	return true
}

// runEnd returns the first row after s, before e, whose value in c differs
// from the row before it's, or e.
func (c *pqColumn) runEnd(s, e int) int {
	if c.valid == nil {
		switch {
		case c.dict != nil:
			k := c.dict[s]
			for i := s + 1; i < e; i++ {
				if c.dict[i] != k && !bytes.Equal(c.str(i), c.str(i-1)) {
					return i
				}
				k = c.dict[i]
			}
			return e
		case c.kind == pqNumber && c.isInt:
			v := c.i64[s]
			for i := s + 1; i < e; i++ {
				if c.i64[i] != v {
					return i
				}
			}
			return e
		case c.kind == pqNumber:
			v := c.f64[s]
			for i := s + 1; i < e; i++ {
				if c.f64[i] != v {
					return i
				}
			}
			return e
		case c.kind == pqString && c.off32 != nil:
			off := c.off32
			v := c.data[off[s]:off[s+1]]
			for i := s + 1; i < e; i++ {
				if off[i+1]-off[i] != int32(len(v)) || string(c.data[off[i]:off[i+1]]) != string(v) {
					return i
				}
			}
			return e
		}
	}
	for i := s + 1; i < e; i++ {
		if !c.sameAs(i, i-1) {
			return i
		}
	}
	return e
}

// sameAs reports whether rows i and j hold the same value in c (both null
// counting as the same).
func (c *pqColumn) sameAs(i, j int) bool {
	oi, oj := c.ok(i), c.ok(j)
	if oi != oj {
		return false
	}
	if !oi {
		return true
	}
	switch c.kind {
	case pqNumber:
		if c.isInt {
			return c.i64[i] == c.i64[j]
		}
		return c.f64[i] == c.f64[j]
	case pqString:
		return bytes.Equal(c.str(i), c.str(j))
	case pqBool:
		return c.bs[i] == c.bs[j]
	case pqJSON:
		if c.kinds[i] != c.kinds[j] {
			return false
		}
		ri, rj := c.str(i), c.str(j)
		return c.kinds[i] == kindNull || bytes.Equal(ri, rj) ||
			string(appendCanonical(nil, ri, c.kinds[i])) == string(appendCanonical(nil, rj, c.kinds[j]))
	}
	return false
}

// null reports whether row i carries no value in c (a null cell, or a JSON
// null).
func (c *pqColumn) null(i int) bool {
	return !c.ok(i) || c.kind == pqJSON && c.kinds[i] == kindNull
}

// raw appends the JSON text of row i's (non-null) cell of c, as
// ParquetLines writes it, and returns it with its kind.
func (c *pqColumn) raw(dst []byte, i int) ([]byte, byte) {
	switch c.kind {
	case pqNumber:
		if c.isInt {
			return strconv.AppendInt(dst, c.i64[i], 10), kindNumber
		}
		return appendFloat(dst, c.f64[i]), kindNumber
	case pqString:
		return appendJSONString(dst, unsafeString(c.str(i))), kindString
	case pqBool:
		return strconv.AppendBool(dst, c.bs[i]), kindBool
	case pqJSON:
		return append(dst, c.str(i)...), c.kinds[i]
	}
	return append(dst, "null"...), kindNull
}

// rows adds rows [s, e) of the batch, which share an identity, to their
// part.
func (d *pqDirect) rows(s, e, base int) error {
	line := base + s + 1
	for k, c := range d.ids {
		v := rawValue{kind: kindNull}
		if c != nil && !c.null(s) {
			var raw []byte
			raw, v.kind = c.raw(nil, s)
			v.raw = raw
		}
		d.g.vals[k] = v
	}
	carried, err := d.g.identify(line)
	if err != nil {
		return errParquetIndirect
	}
	p, err := d.g.find(line, carried)
	if err != nil {
		return errParquetIndirect
	}
	pp := d.parts[p]
	first := p.b.Len() == 0
	if d.bulk {
		if err := d.addColumns(p, s, e); err != nil {
			return err
		}
	} else {
		for i := s; i < e; i++ {
			if err := d.add(p, i); err != nil {
				return err
			}
		}
	}
	if first {
		for _, c := range d.extra {
			if c.null(s) {
				continue
			}
			raw, kind := c.raw(nil, s)
			p.addCandidate(c.name, uint32(noKey), raw, kind, c.idx)
			pc := pqCand{col: c, at: len(p.cands) - 1}
			switch c.kind {
			case pqNumber:
				if c.isInt {
					pc.i64 = c.i64[s]
				} else {
					pc.f64 = c.f64[s]
				}
			case pqString:
				pc.s = bytes.Clone(c.str(s))
			case pqBool:
				pc.b = c.bs[s]
			}
			pp.cands = append(pp.cands, pc)
		}
	}
	for k := range pp.cands {
		pc := &pp.cands[k]
		cand := &p.cands[pc.at]
		if !cand.alive {
			continue
		}
		c := pc.col
		pc.cand = cand
		if !first && !pc.equal(s) {
			cand.alive = false
			continue
		}
		// An identity field's value is the same on all of [s, e).
		if c.ident < 0 && c.runEnd(s, e) < e {
			cand.alive = false
		}
	}
	return nil
}

// equal reports whether row i holds the candidate's value.
func (pc *pqCand) equal(i int) bool {
	c := pc.col
	if !c.ok(i) {
		return false
	}
	switch c.kind {
	case pqNumber:
		if c.isInt {
			return c.i64[i] == pc.i64
		}
		return c.f64[i] == pc.f64
	case pqString:
		return bytes.Equal(c.str(i), pc.s)
	case pqBool:
		return c.bs[i] == pc.b
	case pqJSON:
		return pc.cand.kind == c.kinds[i] && (bytes.Equal(c.str(i), pc.cand.raw) ||
			string(appendCanonical(nil, c.str(i), c.kinds[i])) == pc.cand.canon)
	}
	return false
}

// add appends row i of the batch to p, as objectDecoder.add appends a
// decoded line.
func (d *pqDirect) add(p *part, i int) error {
	r := &d.row
	comps := r.Comps
	clear(comps)
	*r = skyfall.Row{Comps: comps, Invalid: -1}
	r.Reward = d.byF[fReward].float(i)
	if lab := d.byF[fRegimeID].str(i); d.lastLab == nil || !bytes.Equal(lab, d.lastLab) {
		d.label = d.internBytes(lab)
		d.lastLab = append(d.lastLab[:0], lab...)
	}
	r.Label = d.label
	if c := d.byF[fRegimeOrigin]; c != nil && !c.null(i) {
		r.Origin, r.HasOrigin = d.internBytes(c.text(i)), true
	}
	if c := d.byF[fAliasOf]; c != nil && !c.null(i) {
		r.AliasOf, r.HasAliasOf = d.internBytes(c.text(i)), true
	}
	if c := d.byF[fStep]; c != nil && !c.null(i) {
		switch {
		case c.kind == pqJSON:
			v, isInt := c.number(i)
			n, msg := integer(c.str(i), v, isInt)
			if msg != "" {
				return errParquetIndirect
			}
			r.Step = n
		case c.isInt:
			r.Step = c.i64[i]
		default:
			r.Step = int64(c.f64[i])
		}
		r.HasStep = true
	}
	if c := d.byF[fComponents]; c != nil && c.kind != pqJSON && c.ok(i) {
		if err := d.components(c, i); err != nil {
			return err
		}
	}
	if c := d.byF[fInvalidAction]; c != nil && !c.null(i) {
		r.Invalid = 0
		if c.kind == pqJSON && c.str(i)[0] == 't' || c.kind == pqBool && c.bs[i] {
			r.Invalid = 1
		}
	}
	if c := d.byF[fEffectiveRank]; c != nil && !c.null(i) {
		r.EffRank, r.HasEffRank = c.value(i), true
	}
	if c := d.gamma; c != nil && !c.null(i) {
		r.Gamma, r.HasGamma = c.value(i), true
	}
	nl := p.b.NumLabels()
	p.b.Add(r)
	if p.b.NumLabels() > nl && p.b.NumLabels() > d.opts.MaxLabels {
		return errParquetIndirect
	}
	if r.HasOrigin || r.HasAliasOf {
		p.addOrigin(r.Label, labelOrigin{r.Origin, r.AliasOf, r.HasOrigin, r.HasAliasOf})
	}
	return nil
}

// pqColumnPool and pqDirectPool keep the batch scratch of the columns and
// of the decoder of one object for the next (an object's columns are
// about 20 slices grown to a batch's rows); nothing of them stays
// reachable from a decoded object.
var pqColumnPool, pqDirectPool sync.Pool

// release puts the decoder's columns and scratch back in their pools.
func (d *pqDirect) release() {
	for _, c := range d.cols {
		*c = pqColumn{bs: c.bs[:0], mOff: c.mOff[:0], mIDs: c.mIDs[:0], mValid: c.mValid[:0], iValid: c.iValid[:0],
			iNull: c.iNull[:0], s64: c.s64[:0], sf64: c.sf64[:0], items: pqNums{s64: c.items.s64[:0], sf64: c.items.sf64[:0]},
			kinds: c.kinds[:0]}
		pqColumnPool.Put(c)
	}
	comp := d.comp[:cap(d.comp)]
	for k := range comp {
		comp[k] = comp[k][:0]
	}
	*d = pqDirect{rew: d.rew[:0], stp: d.stp[:0], rank: d.rank[:0], inv: d.inv[:0], vStep: d.vStep[:0], vInv: d.vInv[:0],
		vRank: d.vRank[:0], comp: comp[:0]}
	pqDirectPool.Put(d)
}

// pqNoBulk turns addColumns off (every row through add); for tests that
// hold the two ways to the same decoded object.
var pqNoBulk bool

// parquetBulkHook, when set, is called with the URL of every object the
// direct path reads and whether it adds its rows by addColumns; for tests.
var parquetBulkHook func(url string, bulk bool)

// pqBulkKinds says whether addColumns reads the columns of step,
// components, invalid_action, effective_rank and gamma (each nil when the
// file has none): numbers or JSON text, a components map or struct (or a
// JSON-text one, whose cells can only be null), booleans or JSON text,
// numbers or JSON text, numbers or JSON text.
func pqBulkKinds(step, comps, inv, rank, gamma *pqColumn) bool {
	num := func(c *pqColumn) bool { return c == nil || c.kind == pqNumber || c.kind == pqJSON }
	return num(step) && num(rank) && num(gamma) && (inv == nil || inv.kind == pqBool || inv.kind == pqJSON) &&
		(comps == nil || comps.kind == pqCompsMap || comps.kind == pqCompsStruct || comps.kind == pqJSON)
}

// addColumns appends rows [s, e) of the batch to p, as add appends them
// one at a time, but a column at a time (skyfall.Builder.AddColumns): each
// stretch of rows with one regime_id at once, with the first regime_origin
// and alias_of among them.
// Only for d.bulk's kinds of columns.
func (d *pqDirect) addColumns(p *part, s, e int) error {
	lab := d.byF[fRegimeID]
	origin, alias := d.byF[fRegimeOrigin], d.byF[fAliasOf]
	for a := s; a < e; {
		b := lab.runEnd(a, e)
		if l := lab.str(a); d.lastLab == nil || !bytes.Equal(l, d.lastLab) {
			d.label = d.internBytes(l)
			d.lastLab = append(d.lastLab[:0], l...)
		}
		if err := d.columns(a, b); err != nil {
			return err
		}
		// The stretch's first regime_origin and alias_of: a label keeps its
		// first (skyfall.Builder.Add, part.addOrigin), so the later ones
		// change nothing.
		cs := &d.cols1
		if i := firstNotNull(origin, a, b); i >= 0 {
			cs.Origin, cs.HasOrigin = d.internBytes(origin.text(i)), true
		}
		if i := firstNotNull(alias, a, b); i >= 0 {
			cs.AliasOf, cs.HasAliasOf = d.internBytes(alias.text(i)), true
		}
		nl := p.b.NumLabels()
		p.b.AddColumns(cs)
		if p.b.NumLabels() > nl && p.b.NumLabels() > d.opts.MaxLabels {
			return errParquetIndirect
		}
		if cs.HasOrigin || cs.HasAliasOf {
			p.addOrigin(d.label, labelOrigin{cs.Origin, cs.AliasOf, cs.HasOrigin, cs.HasAliasOf})
		}
		a = b
	}
	return nil
}

// firstNotNull returns the first row of [a, b) where c (nil: a column the
// file lacks) is not null, or -1.
func firstNotNull(c *pqColumn, a, b int) int {
	if c == nil {
		return -1
	}
	for i := a; i < b; i++ {
		if !c.null(i) {
			return i
		}
	}
	return -1
}

// columns sets d.cols1 to rows [a, b) of the batch, all of label d.label.
func (d *pqDirect) columns(a, b int) error {
	cs := &d.cols1
	comps := cs.Comps
	*cs = skyfall.Columns{Label: d.label, Comps: comps[:0]}
	n := b - a
	// floats returns the numbers of rows [a, b) of c (any value where
	// null).
	floats := func(c *pqColumn, scratch *[]float64) []float64 {
		if c.kind == pqNumber && !c.isInt {
			return c.f64[a:b]
		}
		out := pqGrow(*scratch, n)
		switch {
		case c.kind == pqNumber:
			for i, v := range c.i64[a:b] {
				out[i] = float64(v)
			}
		default: // JSON text
			for i := range out {
				out[i] = 0
				if !c.null(a + i) {
					out[i] = c.value(a + i)
				}
			}
		}
		*scratch = out
		return out
	}
	// valid returns which rows of [a, b) carry a value in c: its validity
	// bitmap, or for JSON text a bitmap of its cells that are not null.
	valid := func(c *pqColumn, scratch *[]byte) skyfall.Valid {
		if c.kind != pqJSON {
			if c.valid == nil {
				return skyfall.Valid{}
			}
			return skyfall.Valid{Bits: c.valid, Off: c.voff + a}
		}
		bits := pqGrow(*scratch, (n+7)/8)
		clear(bits)
		for i := range n {
			if !c.null(a + i) {
				bits[i>>3] |= 1 << (i & 7)
			}
		}
		*scratch = bits
		return skyfall.Valid{Bits: bits}
	}
	cs.Rewards = floats(d.byF[fReward], &d.rew)
	if c := d.byF[fStep]; c != nil {
		switch {
		case c.kind == pqNumber && c.isInt:
			cs.Steps = c.i64[a:b]
		case c.kind == pqNumber:
			d.stp = pqGrow(d.stp, n)
			for i, v := range c.f64[a:b] {
				d.stp[i] = 0
				if c.ok(a + i) {
					d.stp[i] = int64(v)
				}
			}
			cs.Steps = d.stp
		default: // JSON text
			d.stp = pqGrow(d.stp, n)
			for i := range d.stp {
				d.stp[i] = 0
				if c.null(a + i) {
					continue
				}
				v, isInt := c.number(a + i)
				k, msg := integer(c.str(a+i), v, isInt)
				if msg != "" {
					return errParquetIndirect
				}
				d.stp[i] = k
			}
			cs.Steps = d.stp
		}
		cs.StepsValid = valid(c, &d.vStep)
	}
	if c := d.byF[fComponents]; c != nil && c.kind != pqJSON {
		if err := d.compColumns(c, a, b); err != nil {
			return err
		}
		cs.Comps = d.comp
	}
	if c := d.byF[fInvalidAction]; c != nil {
		if c.kind == pqBool {
			cs.Invalid = c.bs[a:b]
		} else { // JSON text: true or false where not null
			d.inv = pqGrow(d.inv, n)
			for i := range d.inv {
				d.inv[i] = !c.null(a+i) && c.str(a + i)[0] == 't'
			}
			cs.Invalid = d.inv
		}
		cs.InvalidValid = valid(c, &d.vInv)
	}
	if c := d.byF[fEffectiveRank]; c != nil {
		cs.EffRank, cs.EffRankValid = floats(c, &d.rank), valid(c, &d.vRank)
	}
	if c := d.gamma; c != nil {
		for i := a; i < b; i++ {
			if !c.null(i) {
				cs.Gamma, cs.HasGamma = c.value(i), true
				break
			}
		}
	}
	return nil
}

// compColumns sets d.comp to the components of rows [a, b) of the batch,
// by component (0 where a row has none), as components reads them row by
// row: a repeated key sends the object the general way.
func (d *pqDirect) compColumns(c *pqColumn, a, b int) error {
	n := b - a
	if len(d.comp) != len(d.opts.Components) {
		d.comp = pqGrow(d.comp, len(d.opts.Components))
		d.seenAt = make([]int, len(d.opts.Components))
	}
	for k := range d.comp {
		d.comp[k] = pqGrow(d.comp[k], n)
		clear(d.comp[k])
	}
	if c.kind == pqCompsStruct {
		for k, idx := range c.comps {
			if idx < 0 {
				continue
			}
			f, col := &c.fields[k], d.comp[idx]
			for i := a; i < b; i++ {
				if c.ok(i) && f.ok(i) {
					col[i-a] = f.float(i)
					d.cols1.Carried |= skyfall.CarriedBit(idx)
				}
			}
		}
		return nil
	}
	clear(d.seenAt)
	for i := a; i < b; i++ {
		if !c.ok(i) {
			continue
		}
		lo, hi := int(c.mOff[i]), int(c.mOff[i+1])
		for k := lo; k < hi; k++ {
			id := c.mIDs[k]
			if idx := c.kComp[id]; idx >= 0 {
				if d.seenAt[idx] == i+1 {
					return errParquetIndirect // a repeated key
				}
				d.seenAt[idx] = i + 1
				d.comp[idx][i-a] = c.items.float(k)
				d.cols1.Carried |= skyfall.CarriedBit(idx)
				continue
			}
			// A component not asked for: still no repeated key.
			for k2 := lo; k2 < k; k2++ {
				if c.mIDs[k2] == id {
					return errParquetIndirect
				}
			}
		}
	}
	return nil
}

// components reads row i's components (present, not null) into d.row.Comps.
func (d *pqDirect) components(c *pqColumn, i int) error {
	comps := d.row.Comps
	if c.kind == pqCompsStruct {
		for k, idx := range c.comps {
			if idx >= 0 && c.fields[k].ok(i) {
				comps[idx] = c.fields[k].float(i)
				d.row.Carried |= skyfall.CarriedBit(idx)
			}
		}
		return nil
	}
	lo, hi := c.mOff[i], c.mOff[i+1]
	clear(d.compSeen)
	for k := int(lo); k < int(hi); k++ {
		id := c.mIDs[k]
		if idx := c.kComp[id]; idx >= 0 {
			if d.compSeen[idx] {
				return errParquetIndirect // a repeated key
			}
			d.compSeen[idx] = true
			comps[idx] = c.items.float(k)
			d.row.Carried |= skyfall.CarriedBit(idx)
			continue
		}
		// A component not asked for: still no repeated key.
		for k2 := int(lo); k2 < k; k2++ {
			if c.mIDs[k2] == id {
				return errParquetIndirect
			}
		}
	}
	return nil
}

func (d *pqDirect) internBytes(b []byte) string {
	if s, ok := d.intern[string(b)]; ok {
		return s
	}
	s := string(b)
	d.intern[s] = s
	return s
}

// dictColumns lists the top-level string columns of pf whose every data
// page, in every row group, is dictionary-encoded: the direct path reads
// them as Arrow dictionaries (each distinct value once per row group, the
// rows as indices) instead of copying every row's string. A column with a
// plain page (a dictionary that overflowed), or without the page encoding
// statistics that tell, is read as strings.
func dictColumns(pf *file.Reader) []int {
	md := pf.MetaData()
	sc := md.Schema
	var out []int
	for i := 0; i < sc.NumColumns(); i++ {
		col := sc.Column(i)
		if col.MaxRepetitionLevel() > 0 || col.PhysicalType() != parquet.Types.ByteArray || len(col.ColumnPath()) != 1 {
			continue
		}
		ok := md.NumRowGroups() > 0
		for g := 0; ok && g < md.NumRowGroups(); g++ {
			cc, err := md.RowGroup(g).ColumnChunk(i)
			if err != nil {
				ok = false
				break
			}
			stats := cc.EncodingStats()
			ok = len(stats) > 0
			for _, st := range stats {
				if st.PageType.String() == "DICTIONARY_PAGE" { // (format.PageType is internal to arrow-go)
					continue
				}
				if st.Encoding != parquet.Encodings.PlainDict && st.Encoding != parquet.Encodings.RLEDict {
					ok = false
				}
			}
		}
		if ok {
			out = append(out, i)
		}
	}
	return out
}
