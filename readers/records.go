package readers

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"unsafe"
)

// Generic records: the rows of the protocols other than skyfall (safecrl,
// contilab, skillshift). Their volumes are small, so instead of a decoder
// specialised to one row shape, DecodeRecords validates each line exactly
// as DecodeObject does (same Open, line reader, limits, JSON scanner, error
// messages), keeps the line, and indexes its top-level fields; the protocol
// reads the fields it needs through the typed accessors of Record, whose
// errors are DataErrors naming the object, the line and the field. Runs are
// assembled as skyfall runs are (PROTOCOLS 1.2), over the identity and row
// fields of RecordOptions.

// RecordOptions configure DecodeRecords and AssembleRecords. Unlike Options
// there is no default identity: IdentityFields must be set (each record
// protocol's adapter on the scoring seam declares its own).
type RecordOptions struct {
	// Protocol names the protocol in messages ("safecrl"); optional.
	Protocol string
	// IdentityFields are the run identity fields, in run-key order. nil is
	// an error (there is no default); a non-nil empty slice means none, so
	// that every object's rows form one anonymous run. A schema field
	// cannot be an identity field.
	IdentityFields []string
	// SchemaFields are the protocol's row fields: never run metadata. Every
	// other field whose value is the same on every row of a run (identity
	// fields included) is run metadata.
	SchemaFields []string
	// MaxLineBytes caps one line (without its line end). 0 means
	// DefaultMaxLineBytes; negative means no limit other than 4 GiB, the
	// longest line a Record can index.
	MaxLineBytes int
	// MaxObjectBytes caps the decompressed bytes of one object. 0 means
	// DefaultMaxObjectBytes; negative means no limit.
	MaxObjectBytes int64
	// MaxRuns caps the runs of one object (in DecodeRecords) and of the
	// whole job (in AssembleRecords). 0 means DefaultMaxRuns; negative
	// means no limit.
	MaxRuns int
	// Check, when set, checks each row beyond the JSON grammar (the
	// protocol's field types and required fields), so that a bad field is
	// found while the object is read, as a bad row, rather than when its run
	// is scored. DecodeRecords calls it once per valid JSON row, before the
	// row joins a run, from the decoding goroutine; the Record is valid only
	// during the call (it views a reused line buffer) and must not be kept.
	// A *DataError it returns (found with errors.As, as the Record's
	// accessors, Errorf and MissingError make them) is a bad row: it fails
	// the object, or goes to OnBadRow. Any other error is returned as it is.
	Check func(row *Record) error
	// OnBadRow, when set, lets DecodeRecords skip bad rows instead of
	// failing on the first one, exactly as Options.OnBadRow does for
	// DecodeObject. nil means nothing is skipped. AssembleRecords ignores
	// it.
	OnBadRow BadRowFunc
}

// normalize validates o and fills in the limits, as Options.normalize does.
func (o RecordOptions) normalize() (RecordOptions, error) {
	if o.IdentityFields == nil {
		return o, fmt.Errorf("readers: RecordOptions.IdentityFields is not set (an empty slice means no identity)")
	}
	if err := checkNames(o.SchemaFields, "row field", "row field", nil); err != nil {
		return o, err
	}
	if err := checkIdentityFields(o.IdentityFields, o.SchemaFields, protocolName(o.Protocol)); err != nil {
		return o, err
	}
	o.MaxLineBytes = normalizeLimit(o.MaxLineBytes, DefaultMaxLineBytes, maxInt-8)
	o.MaxLineBytes = int(min(uint64(o.MaxLineBytes), maxRecordLine))
	o.MaxObjectBytes = normalizeLimit(o.MaxObjectBytes, DefaultMaxObjectBytes, 1<<63-1)
	o.MaxRuns = normalizeLimit(o.MaxRuns, DefaultMaxRuns, maxInt)
	return o, nil
}

// Record is one row of a record protocol (or a JSON object nested in one,
// see Object): a validated JSON object whose fields are read through typed
// accessors. A field set to null counts as absent for every accessor. Each
// accessor fails with a *DataError naming the object URL, the line and the
// field ("cfg.lr" within a nested object) when the value has another type.
//
// A Record is immutable and safe for concurrent use.
type Record struct {
	url    string
	line   int
	prefix string // "" for a row; "a.b." for the object at a.b
	data   []byte // the line (shared with nested records); fields point into it
	fields []recordField
	keys   *recordKeys       // the field names, shared by the rows of an object
	index  map[uint32]uint32 // key → index in fields, for records with many fields
}

// recordField is one field of a Record: its name (an index in the record's
// recordKeys) and the raw JSON text of its value, data[start:end], without
// surrounding whitespace. 16 bytes: offsets fit in 32 bits because
// DecodeRecords caps lines at 4 GiB.
type recordField struct {
	key        uint32
	start, end uint32
	kind       byte
}

// recordKeys interns field names: the rows of one object share one table.
// It only grows while the object is decoded, and is read-only afterwards.
type recordKeys struct {
	names []string
	index map[string]uint32
}

func newRecordKeys() *recordKeys { return &recordKeys{index: map[string]uint32{}} }

// intern returns the index of name, adding it if new, and the bytes added.
func (k *recordKeys) intern(name []byte) (uint32, int) {
	if i, ok := k.index[string(name)]; ok {
		return i, 0
	}
	i := uint32(len(k.names))
	s := string(name)
	k.names = append(k.names, s)
	k.index[s] = i
	return i, 2*len(s) + 48
}

// recordIndexMin is the number of fields from which a record looks its
// fields up in a map rather than linearly.
const recordIndexMin = 32

// maxRecordLine is the longest line DecodeRecords reads, whatever
// MaxLineBytes says: offsets within a line are 32-bit.
const maxRecordLine uint64 = math.MaxUint32 - 8

// Line returns the 1-based line number of the row in its object.
func (r *Record) Line() int { return r.line }

// URL returns the URL of the object holding the row.
func (r *Record) URL() string { return r.url }

// Keys returns the record's field names in the order of the line.
func (r *Record) Keys() []string {
	keys := make([]string, len(r.fields))
	for i, f := range r.fields {
		keys[i] = r.keys.names[f.key]
	}
	return keys
}

func (r *Record) find(field string) int {
	k, ok := r.keys.index[field]
	if !ok {
		return -1
	}
	return r.findKey(k)
}

// findKey returns the index in r.fields of the key k, or -1.
func (r *Record) findKey(k uint32) int {
	if r.index != nil {
		if i, ok := r.index[k]; ok {
			return int(i)
		}
		return -1
	}
	for i := range r.fields {
		if r.fields[i].key == k {
			return i
		}
	}
	return -1
}

// value returns the field, ok false when it is missing or null.
func (r *Record) value(field string) (recordField, bool) {
	i := r.find(field)
	if i < 0 || r.fields[i].kind == kindNull {
		return recordField{}, false
	}
	return r.fields[i], true
}

func (r *Record) raw(f recordField) []byte { return r.data[f.start:f.end:f.end] }

// Has reports whether the record carries field with a value other than
// null.
func (r *Record) Has(field string) bool {
	_, ok := r.value(field)
	return ok
}

// Raw returns the raw JSON text of field's value as it is in the line (null
// included, as "null"), without surrounding whitespace, and whether the
// field is there at all. The bytes must not be modified.
func (r *Record) Raw(field string) ([]byte, bool) {
	i := r.find(field)
	if i < 0 {
		return nil, false
	}
	return r.raw(r.fields[i]), true
}

// Errorf returns a *DataError about field of this record (the object URL,
// the line, the field within its enclosing objects), for the checks a
// protocol makes beyond the accessors' types.
func (r *Record) Errorf(field, format string, args ...any) *DataError {
	return &DataError{URL: r.url, Line: r.line, Field: r.fieldName(field), Msg: fmt.Sprintf(format, args...)}
}

// MissingError returns the *DataError for a required field that an
// accessor reported absent: "got null, want <want>" when the record holds
// null, else "missing (a <want> is required)", as the skyfall reader words
// it for reward and regime_id. want names the type ("number", "string",
// "integer").
func (r *Record) MissingError(field, want string) *DataError {
	if i := r.find(field); i >= 0 {
		return r.Errorf(field, "got %s, want %s", kindName(r.fields[i].kind), want)
	}
	return r.Errorf(field, "%s", missing(want))
}

func (r *Record) fieldName(field string) string { return r.prefix + field }

func (r *Record) typeError(field string, kind byte, want string) error {
	return r.Errorf(field, "got %s, want %s", kindName(kind), want)
}

// typed returns field when it holds a value of kind. ok is false when the
// field is missing or null, or holds another type (then with an error
// naming want).
func (r *Record) typed(field string, kind byte, want string) (f recordField, ok bool, err error) {
	if f, ok = r.value(field); ok && f.kind != kind {
		return f, false, r.typeError(field, f.kind, want)
	}
	return f, ok, nil
}

// Number returns field as a float64 (the nearest to the literal, as
// strconv.ParseFloat rounds; every number was checked not to overflow when
// the line was read). present is false when the field is missing or null;
// any other type is an error.
func (r *Record) Number(field string) (v float64, present bool, err error) {
	f, ok, err := r.typed(field, kindNumber, "number")
	if !ok {
		return 0, false, err
	}
	v, _ = parseNumber(r.raw(f))
	return v, true, nil
}

// Int returns field as an int64: an integer literal within int64, or a
// number whose value is a whole number of magnitude at most 2^53 (1e2 is
// 100, 2.0 is 2; 1.5 is an error), as the skyfall reader reads step.
// present is false when the field is missing or null.
func (r *Record) Int(field string) (n int64, present bool, err error) {
	f, ok, err := r.typed(field, kindNumber, "integer")
	if !ok {
		return 0, false, err
	}
	lit := r.raw(f)
	v, isInt := parseNumber(lit)
	n, msg := integer(lit, v, isInt)
	if msg != "" {
		return 0, false, r.Errorf(field, msg, truncLit(lit))
	}
	return n, true, nil
}

// String returns field as a string (escapes decoded; a row holding an
// escaped lone surrogate is never decoded). present is false when the field is missing or
// null; any other type is an error.
func (r *Record) String(field string) (s string, present bool, err error) {
	f, ok, err := r.typed(field, kindString, "string")
	if !ok {
		return "", false, err
	}
	return string(decodeString(r.raw(f))), true, nil
}

// Bool returns field as a bool. present is false when the field is missing
// or null; any other type (0 and 1 included) is an error.
func (r *Record) Bool(field string) (b bool, present bool, err error) {
	f, ok, err := r.typed(field, kindBool, "bool")
	if !ok {
		return false, false, err
	}
	return r.data[f.start] == 't', true, nil
}

// BoolOrNumber01 returns field as 0 or 1: false and true give 0 and 1, and
// a number whose value is 0 or 1 (0, 1, 1.0, -0, 1e0) gives itself (-0 as
// 0). Any other number or type is an error. present is false when the
// field is missing or null.
func (r *Record) BoolOrNumber01(field string) (v float64, present bool, err error) {
	f, ok := r.value(field)
	if !ok {
		return 0, false, nil
	}
	switch f.kind {
	case kindBool:
		if r.data[f.start] == 't' {
			return 1, true, nil
		}
		return 0, true, nil
	case kindNumber:
		v, _ := parseNumber(r.raw(f))
		switch v {
		case 0:
			return 0, true, nil
		case 1:
			return 1, true, nil
		}
		return 0, false, r.Errorf(field, "got %s, want true, false, 0 or 1", truncLit(r.raw(f)))
	}
	return 0, false, r.typeError(field, f.kind, "true, false, 0 or 1")
}

// Object returns field as a nested Record: its accessors read the nested
// object's fields, and their errors name them within field ("cfg.lr"). It
// shares the line, the URL and the line number of r. present is false when
// the field is missing or null; any other type is an error.
func (r *Record) Object(field string) (obj *Record, present bool, err error) {
	f, ok, err := r.typed(field, kindObject, "object")
	if !ok {
		return nil, false, err
	}
	sub := &Record{url: r.url, line: r.line, prefix: r.fieldName(field) + ".", data: r.data, keys: newRecordKeys()}
	sub.indexObject(int(f.start))
	sub.buildIndex()
	return sub, true, nil
}

func (r *Record) buildIndex() {
	if len(r.fields) < recordIndexMin {
		return
	}
	r.index = make(map[uint32]uint32, len(r.fields))
	for i, f := range r.fields {
		r.index[f.key] = uint32(i)
	}
}

// indexObject lists the members of the (valid) object at r.data[start] in
// r.fields.
func (r *Record) indexObject(start int) {
	d := rowDecoder{data: r.data, pos: start + 1}
	d.skipWS()
	if d.data[d.pos] == '}' {
		return
	}
	for more := true; more; {
		key, _, _ := d.objectKey(false)
		k, _ := r.keys.intern(key)
		d.colon()
		vs := d.pos
		kind, _ := d.skipValue(1)
		r.fields = append(r.fields, recordField{key: k, start: uint32(vs), end: uint32(d.pos), kind: kind})
		more, _ = d.next('}')
	}
}

// ObjectRecords is one decoded object of a record protocol: its rows
// grouped by run identity, ready for AssembleRecords. As with DecodeObject,
// objects may be decoded concurrently; AssembleRecords merges them in key
// order.
type ObjectRecords struct {
	ObjectInfo // Skipped counts the rows RecordOptions.OnBadRow skipped

	idents []string
	schema []string
	parts  []*recordPart // in order of first row
	mem    int64
}

// NumRuns is the number of runs (identities, plus the anonymous run) that
// have rows in the object.
func (o *ObjectRecords) NumRuns() int { return len(o.parts) }

// RunKeys lists the run keys of the object's runs, in order of first row.
func (o *ObjectRecords) RunKeys() []string { return runKeys(o.parts) }

func (o *ObjectRecords) runParts() []*recordPart { return o.parts }

// MemBytes estimates the memory held by the object's records, for the
// pipeline's --memory-limit accounting: the lines, 16 bytes a field, about
// 110 bytes a row, and the field names; memory is taken in chunks (64 KiB
// of lines at a time), which MemBytes counts whole.
func (o *ObjectRecords) MemBytes() int64 { return o.mem }

// recordPart is the rows of one run within one object.
type recordPart struct {
	partCore
	rows []*Record
}

// DecodeRecords reads one object of a record protocol (plain, gzip or zstd,
// sniffed from its first bytes), validates every line as DecodeObject does
// (PROTOCOLS 1.1: UTF-8, the JSON grammar, one object per line, no NaN or
// Infinity, no number overflowing float64, no key repeated within any
// object; BOM, CRLF and blank lines accepted) and groups the rows by run
// identity (PROTOCOLS 1.2, over opts.IdentityFields). Field types are not
// checked here: the protocol reads them through Record's accessors.
//
// url names the object in errors; key is its key relative to the input
// prefix and becomes the runs' source (and the anonymous run key). A
// *DataError reports bad data (with url, 1-based line and field); an error
// of r is returned wrapped, never as a DataError; invalid opts give a plain
// error. With opts.OnBadRow set, bad rows (invalid JSON, and what
// opts.Check rejects) go to it instead. DecodeRecords does not close r.
func DecodeRecords(url, key string, r io.Reader, opts RecordOptions) (*ObjectRecords, error) {
	opts, err := opts.normalize()
	if err != nil {
		return nil, err
	}
	obj := &ObjectRecords{ObjectInfo: ObjectInfo{URL: url, Key: key}, idents: slices.Clone(opts.IdentityFields), schema: slices.Clone(opts.SchemaFields)}
	od := &recordDecoder{obj: obj, opts: opts, keys: newRecordKeys()}
	od.g = newGrouper(url, key, opts.IdentityFields, opts.MaxRuns, od.newPart)
	if err := readLines(&obj.ObjectInfo, r, opts.MaxObjectBytes, opts.MaxLineBytes, nil, od.line); err != nil {
		return nil, err
	}
	return obj, nil
}

// line decodes line n of the object and adds it to its run; a bad row goes
// to opts.OnBadRow. The error ends the object.
func (od *recordDecoder) line(line []byte, n int) error {
	if isBlank(line) {
		return nil
	}
	// A bad row is found before anything of it is kept: scan and Check
	// see the line in place, and only commit copies it.
	var bad *DataError
	if rerr := od.scan(line); rerr != nil {
		bad = rerr.at(od.obj.URL, n)
	} else if od.opts.Check != nil {
		if err := od.opts.Check(od.view(line, n)); err != nil && !errors.As(err, &bad) {
			return err
		}
	}
	if bad != nil {
		return od.obj.skipRow(od.opts.OnBadRow, bad)
	}
	if od.opts.Check == nil {
		od.view(line, n)
	}
	rec := od.commit()
	p, err := od.partFor(rec)
	if err != nil {
		return err
	}
	od.add(p, rec)
	od.obj.Rows++
	return nil
}

// recordDecoder decodes the lines of one object.
type recordDecoder struct {
	obj     *ObjectRecords
	opts    RecordOptions
	d       rowDecoder
	fields  []rawField // the fields of the line being decoded
	g       grouper[*recordPart]
	keys    *recordKeys
	tmp     []byte
	arena   []byte        // lines are carved from here
	fArena  []recordField // and their fields from here
	rArena  []Record      // and the records from here
	vFields []recordField // the fields of the line being decoded, for view
	vRec    Record        // the line being decoded, before commit
}

// rawField is a top-level field as scan finds it: key aliases the line (or
// is a fresh copy when written with escapes), the value is line[start:end].
type rawField struct {
	key        []byte
	start, end int
	kind       byte
}

// scan validates line as one JSON object and lists its top-level fields in
// od.fields. It is the skyfall scanner's top-level loop with every field
// treated as an extra: the same checks in the same order, the same
// messages, nested values validated by the same skipValue.
func (od *recordDecoder) scan(line []byte) *rowError {
	d := &od.d
	d.data, d.pos = line, 0
	d.field, d.sub = nil, nil
	od.fields = od.fields[:0]
	top, empty, err := d.openRow()
	if err != nil {
		return err
	}
	if !empty {
		for more := true; more; {
			key, koff, err := d.objectKey(true)
			if err != nil {
				return err
			}
			d.field = key
			if err := d.colon(); err != nil {
				return err
			}
			if top.add(d, key, koff) {
				return d.fail("repeated key")
			}
			start := d.pos
			kind, err := d.skipValue(1)
			if err != nil {
				return err
			}
			od.fields = append(od.fields, rawField{key: key, start: start, end: d.pos, kind: kind})
			if more, err = d.next('}'); err != nil {
				return err
			}
		}
	}
	d.field = nil
	return d.closeRow()
}

const (
	recordArenaBytes  = 64 << 10
	recordArenaFields = 1024
	recordArenaRows   = 256
	recordRowBytes    = int64(unsafe.Sizeof(Record{})) + 8 // the header and its pointer in the run
	recordFieldBytes  = int64(unsafe.Sizeof(recordField{}))
)

// view indexes the line just scanned as od.vRec, a Record over the line
// itself: valid until the next line, it is what Check sees and what commit
// copies.
func (od *recordDecoder) view(line []byte, n int) *Record {
	fields := od.vFields[:0]
	for _, f := range od.fields {
		k, added := od.keys.intern(f.key)
		od.obj.mem += int64(added)
		fields = append(fields, recordField{key: k, start: uint32(f.start), end: uint32(f.end), kind: f.kind})
	}
	od.vFields = fields
	od.vRec = Record{url: od.obj.URL, line: n, data: line, fields: fields, keys: od.keys}
	od.vRec.buildIndex()
	return &od.vRec
}

// commit copies od.vRec, the line and its fields, into the object's arenas
// and returns the kept Record.
func (od *recordDecoder) commit() *Record {
	v := &od.vRec
	line := v.data
	var data []byte
	if len(line) > recordArenaBytes/4 {
		data = bytes.Clone(line)
		od.obj.mem += int64(len(line))
	} else {
		if len(line) > cap(od.arena)-len(od.arena) {
			od.arena = make([]byte, 0, recordArenaBytes)
			od.obj.mem += recordArenaBytes
		}
		l := len(od.arena)
		od.arena = append(od.arena, line...)
		data = od.arena[l : l+len(line) : l+len(line)]
	}

	nf := len(v.fields)
	var fields []recordField
	if nf > recordArenaFields/4 {
		fields = make([]recordField, nf)
		od.obj.mem += int64(nf) * recordFieldBytes
	} else {
		if nf > cap(od.fArena)-len(od.fArena) {
			od.fArena = make([]recordField, 0, recordArenaFields)
			od.obj.mem += recordArenaFields * recordFieldBytes
		}
		l := len(od.fArena)
		od.fArena = od.fArena[:l+nf]
		fields = od.fArena[l : l+nf : l+nf]
	}
	copy(fields, v.fields)

	if len(od.rArena) == cap(od.rArena) {
		od.rArena = make([]Record, 0, recordArenaRows)
		od.obj.mem += recordArenaRows * recordRowBytes
	}
	// The index (records with many fields) maps keys to positions, the
	// same in the copy: it moves over with it.
	od.rArena = append(od.rArena, Record{url: v.url, line: v.line, data: data, fields: fields, keys: v.keys, index: v.index})
	*v = Record{}
	return &od.rArena[len(od.rArena)-1]
}

// partFor returns the part of rec's identity, creating it on its first row.
func (od *recordDecoder) partFor(rec *Record) (*recordPart, error) {
	for i, f := range od.opts.IdentityFields {
		v := rawValue{kind: kindNull}
		if fv, ok := rec.value(f); ok {
			v = rawValue{rec.raw(fv), fv.kind}
		}
		od.g.vals[i] = v
	}
	carried, err := od.g.identify(rec.line)
	if err != nil {
		return nil, err
	}
	return od.g.find(rec.line, carried)
}

// newPart makes the part of h, a new run of the object.
func (od *recordDecoder) newPart(h partHeader) *recordPart {
	p := &recordPart{partCore: partCore{partHeader: h}}
	od.obj.parts = append(od.obj.parts, p)
	od.obj.mem += int64(len(h.identKey)+len(h.runKey)) + 128
	return p
}

// add appends rec to p and updates p's metadata candidates: the fields
// other than the row fields, present and not null, with one JSON value on
// every row so far.
func (od *recordDecoder) add(p *recordPart, rec *Record) {
	p.rows = append(p.rows, rec)
	if len(p.rows) == 1 {
		for i, f := range rec.fields {
			if name := od.keys.names[f.key]; f.kind != kindNull && !slices.Contains(od.opts.SchemaFields, name) {
				p.addCandidate(name, f.key, rec.raw(f), f.kind, i)
			}
		}
		return
	}
	for i := range p.cands {
		c := &p.cands[i]
		if !c.alive {
			continue
		}
		j := c.pos
		if j >= len(rec.fields) || rec.fields[j].key != c.key {
			j = rec.findKey(c.key)
		}
		if j < 0 || rec.fields[j].kind == kindNull {
			c.alive = false
			continue
		}
		c.pos = j
		if raw := rec.raw(rec.fields[j]); !bytes.Equal(raw, c.raw) {
			od.tmp = c.differs(raw, rec.fields[j].kind, od.tmp)
		}
	}
}

// RecordRun is one run of a record protocol: its key (identity fields as
// "field=value|…", or "anonymous:<object key>"), its metadata and its rows
// in object order, then line order.
type RecordRun struct {
	Key  string
	Meta map[string]string
	Rows []*Record
}

// AssembleRecords merges decoded objects into runs (PROTOCOLS 1.2), exactly
// as Assemble does for skyfall. objects must be in bytewise key order, as
// the pipeline lists them; the result depends on that order only.
//
//   - Rows with equal identity tuples form one run, across objects; all
//     anonymous rows of one object form the run anonymous:<key>.
//   - Runs are listed in order of their first row; a run's rows keep object
//     order, then line order.
//   - Metadata: every field that is not a row field (SchemaFields) and is
//     present (non-null) on every row of the run with one JSON value,
//     rendered as skyfall metadata is; plus source, the key of the object
//     holding the run's first row (replacing a recorded source).
//   - Two distinct identities that render the same run key are a DataError
//     naming both.
//
// opts must be the options the objects were decoded with. The runs share
// their Records with objects; AssembleRecords does not modify objects, so
// it may be called again on them.
func AssembleRecords(objects []*ObjectRecords, opts RecordOptions) ([]*RecordRun, error) {
	opts, err := opts.normalize()
	if err != nil {
		return nil, err
	}
	runs, err := groupRuns("AssembleRecords", objects, func(o *ObjectRecords) error {
		if !slices.Equal(o.idents, opts.IdentityFields) || !slices.Equal(o.schema, opts.SchemaFields) {
			return fmt.Errorf("readers: AssembleRecords: %s was decoded with identity fields %q and row fields %q, not %q and %q",
				o.URL, o.idents, o.schema, opts.IdentityFields, opts.SchemaFields)
		}
		return nil
	}, opts.MaxRuns)
	if err != nil {
		return nil, err
	}
	out := make([]*RecordRun, len(runs))
	for i := range runs {
		r := &runs[i]
		n := 0
		for _, pc := range r.pieces {
			n += len(pc.p.rows)
		}
		rows := make([]*Record, 0, n)
		for _, pc := range r.pieces {
			rows = append(rows, pc.p.rows...)
		}
		out[i] = &RecordRun{Key: r.key, Meta: r.meta(), Rows: rows}
	}
	return out, nil
}
