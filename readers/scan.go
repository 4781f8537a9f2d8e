package readers

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/maphash"
	"math"
	"math/bits"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"

	"github.com/crlbatch/crlbatch/protocol/skyfall"
)

// maxDepth is the deepest nesting accepted, as encoding/json accepts it.
const maxDepth = 10000

// Value kinds of a raw JSON value, by its first byte.
const (
	kindNull   = 'n'
	kindBool   = 'b'
	kindNumber = 'd'
	kindString = 's'
	kindObject = 'o'
	kindArray  = 'a'
)

func kindName(k byte) string {
	switch k {
	case kindNull:
		return "null"
	case kindBool:
		return "bool"
	case kindNumber:
		return "number"
	case kindString:
		return "string"
	case kindObject:
		return "object"
	case kindArray:
		return "array"
	}
	return "?"
}

// Schema fields, as bits of rowDecoder.seen and as the IDs of their keys in
// the top-level keyTable (newRowDecoder interns them first, in this order).
const (
	fReward = iota
	fRegimeID
	fRegimeOrigin
	fAliasOf
	fStep
	fComponents
	fInvalidAction
	fEffectiveRank
)

// extra is a top-level field that is not a schema field: a run identity
// field, gamma, run metadata or a per-step value. It holds no pointer (the
// decoder appends one for most fields of every row; a pointer would cost a
// write barrier each while the collector runs): its value is the raw JSON
// text d.data[vs:ve] without surrounding whitespace, its key is the key
// table's name for id, else d.data[ks:ke] or, for a key written with
// escapes (ks < 0), d.keyCopies[ke]. rowDecoder.exKey and exVal resolve
// them.
type extra struct {
	vs, ve int
	ks, ke int
	kind   byte
	id     uint8 // the key's ID in the decoder's top-level keyTable, or noKey
	hit    bool  // the value repeats the key's cached value (keyInfo.gen)
}

// rowDecoder is the hand-written scanner specialised to skyfall rows. It
// validates the whole line as JSON (RFC 8259 grammar, UTF-8, no repeated key
// in any object, no number overflowing float64, nesting up to 10000) and
// extracts the schema fields in one pass. It is reused for every line of an
// object, so the fast path allocates nothing.
type rowDecoder struct {
	comps    []string
	compIdx  map[string]int // when there are many components
	row      skyfall.Row    // Label, Origin and AliasOf are left empty: see label etc.
	label    []byte
	origin   []byte
	alias    []byte
	extras   []extra
	seen     uint32
	data     []byte
	pos      int
	field    []byte // top-level key being decoded, for errors, when fieldRef is 0
	sub      []byte // components key being decoded, for errors, when subRef is 0
	fieldRef uint8  // 1 + the ID of the top-level key being decoded; 0 for none or noKey
	subRef   uint8  // 1 + the ID of the components key being decoded; 0 for none or noKey
	labelBuf []byte
	origBuf  []byte
	aliasBuf []byte
	sets     []*keySet // one per nesting depth, for repeated-key checks
	escaped  bool      // the last scanString met an escape
	inKey    bool      // keyError is scanning a key again: messages say so

	// The fast path for rows shaped like the ones before (keys.go).
	top       *keyTable // top-level keys; the schema fields first, as IDs 0-7
	compKeys  *keyTable // components keys; the requested components first
	gammaID   uint8
	exSeen    uint64         // IDs of the top-level keys among extras
	exHits    uint64         // IDs of those whose value repeated the key's cached value (extra.hit)
	cacheGen  uint64         // counts the changes of any top-level key's cached value (keyInfo.gen)
	exAt      [maxKeys]int16 // where each of them is in extras
	labelRaw  []byte         // raw text of the last valid regime_id
	labelP    pattern        // labelRaw, for a quick comparison
	labelDec  []byte         // and its decoded value
	labelGen  int            // counts the changes of labelRaw
	rows      int            // rows decoded since the key tables last adapted
	keyCopies [][]byte       // decoded keys of extras written with escapes
	intVal    int64          // the last number, when intOK: see number
	intOK     bool

	// The row's prefix (prefix.go): the raw bytes of the last row up to
	// its first key that was not a repeated cached value of a non-schema
	// key, and what decoding them gave.
	pfx      prefix
	noPrefix bool // never replay a prefix (tests: the decoder without it)

	// A row decoded in place (decodeInPlace): its data runs on past its
	// line, whose end ('\n') is no whitespace, and where that end is.
	inPlace bool
	lineEnd int
}

// exKey returns the (decoded) key of e.
func (d *rowDecoder) exKey(e *extra) []byte {
	switch {
	case e.id != noKey:
		return d.top.keys[e.id].name
	case e.ks >= 0:
		return d.data[e.ks:e.ke]
	}
	return d.keyCopies[e.ke]
}

// exVal returns the raw JSON text of e's value.
func (d *rowDecoder) exVal(e *extra) []byte { return d.data[e.vs:e.ve] }

// findExtra returns the index of the extra named name, trying hint first,
// or -1.
func (d *rowDecoder) findExtra(name string, hint int) int {
	ex := d.extras
	if hint < len(ex) && string(d.exKey(&ex[hint])) == name {
		return hint
	}
	for i := range ex {
		if string(d.exKey(&ex[i])) == name {
			return i
		}
	}
	return -1
}

// schemaNames are the schema fields by their f* constant.
var schemaNames = [...]string{fReward: "reward", fRegimeID: "regime_id", fRegimeOrigin: "regime_origin",
	fAliasOf: "alias_of", fStep: "step", fComponents: "components", fInvalidAction: "invalid_action",
	fEffectiveRank: "effective_rank"}

func newRowDecoder(components []string) *rowDecoder {
	d := &rowDecoder{comps: components, top: newKeyTable(), compKeys: newKeyTable()}
	d.row.Comps = make([]float64, len(components))
	if len(components) > 8 {
		d.compIdx = make(map[string]int, len(components))
		for i, c := range components {
			d.compIdx[c] = i
		}
	}
	for f, name := range schemaNames {
		d.top.intern([]byte(name), f)
	}
	d.gammaID = d.top.intern([]byte("gamma"), -1)
	for i, c := range components {
		if d.compKeys.lookup(c) == noKey {
			d.compKeys.intern([]byte(c), i)
		}
	}
	return d
}

// extraAt returns the index in d.extras of the top-level key with ID id
// (name when id is noKey, trying hint first), or -1 when the row lacks it.
func (d *rowDecoder) extraAt(id uint8, name string, hint int) int {
	if id != noKey {
		if d.exSeen&(1<<id) != 0 {
			return int(d.exAt[id])
		}
		return -1
	}
	return d.findExtra(name, hint)
}

// keySet finds a repeated key within one object. Small objects compare
// their keys linearly; past 32 keys it switches to a map from the key's hash
// to the position of the key in the line (the key is decoded again to
// confirm a match), so a huge components object costs a few bytes per key.
// The map is kept, emptied, for the next object (rows of hundreds of keys
// made and grew one map per row: a fifth of such a job's CPU), unless it
// held more than keySetKeptKeys keys. Emptying it costs what the object
// used: clear, or, when the map once held more than eight times as many
// keys as this object did, a delete per key (clear's cost is the map's
// size, not its use).
type keySet struct {
	bloom  uint64 // one bit per (length, first byte, last byte) class seen
	keys   [][]byte
	offs   []int
	m      map[uint64]int // in use while hashed
	hashed bool
	hashes []uint64 // the keys put in m by this object
	peak   int      // the most keys m has held
	coll   [][]byte // keys whose hash matched another key's (practically never)
}

// keySetKeptKeys is the most keys of a keySet's map kept for the next
// object (about a megabyte of map).
const keySetKeptKeys = 1 << 16

var hashSeed = maphash.MakeSeed()

func (s *keySet) reset() {
	s.bloom = 0
	s.keys = s.keys[:0]
	s.offs = s.offs[:0]
	if s.hashed { // no map touched on the common path
		s.hashed = false
		switch n := len(s.m); {
		case n > keySetKeptKeys:
			s.m, s.hashes, s.peak = nil, nil, 0
		case 8*n < s.peak:
			for _, h := range s.hashes {
				delete(s.m, h)
			}
		default:
			clear(s.m)
		}
		s.hashes = s.hashes[:0]
	}
	if s.coll != nil {
		s.coll = nil
	}
}

// add records k, decoded from the string starting at off in d.data, and
// reports whether the object already had it.
func (s *keySet) add(d *rowDecoder, k []byte, off int) bool {
	if !s.hashed {
		var bit uint64 = 1
		if len(k) > 0 {
			bit <<= (uint(len(k))*7 + uint(k[0]) + uint(k[len(k)-1])*3) & 63
		}
		if s.bloom&bit != 0 {
			for _, x := range s.keys {
				if bytes.Equal(x, k) {
					return true
				}
			}
		}
		s.bloom |= bit
		s.keys = append(s.keys, k)
		s.offs = append(s.offs, off)
		if len(s.keys) <= 32 {
			return false
		}
		if s.m == nil {
			s.m = make(map[uint64]int, 64)
		}
		s.hashed = true
		for i, x := range s.keys {
			s.put(maphash.Bytes(hashSeed, x), s.offs[i])
		}
		s.keys, s.offs = s.keys[:0], s.offs[:0]
		return false
	}
	h := maphash.Bytes(hashSeed, k)
	prev, ok := s.m[h]
	if !ok {
		s.put(h, off)
		return false
	}
	if bytes.Equal(d.keyAt(prev), k) {
		return true
	}
	for _, x := range s.coll {
		if bytes.Equal(x, k) {
			return true
		}
	}
	s.coll = append(s.coll, bytes.Clone(k))
	return false
}

// put adds the key of hash h at off to the map.
func (s *keySet) put(h uint64, off int) {
	s.m[h] = off
	s.hashes = append(s.hashes, h)
	s.peak = max(s.peak, len(s.m))
}

// keyAt decodes the (valid) key string starting at off.
func (d *rowDecoder) keyAt(off int) []byte {
	k := rowDecoder{data: d.data, pos: off}
	s, _ := k.scanString(true, nil)
	return s
}

func (d *rowDecoder) set(depth int) *keySet {
	for len(d.sets) <= depth {
		d.sets = append(d.sets, new(keySet))
	}
	s := d.sets[depth]
	s.reset()
	return s
}

// clearField and clearSub forget the key being decoded. (The IDs are there
// so that the fast path stores no pointer for each key.)
func (d *rowDecoder) clearField() {
	d.fieldRef = 0
	if d.field != nil {
		d.field = nil
	}
}

func (d *rowDecoder) clearSub() {
	d.subRef = 0
	if d.sub != nil {
		d.sub = nil
	}
}

// fieldName names the field being decoded, for errors.
func (d *rowDecoder) fieldName() string {
	field, sub := d.field, d.sub
	if d.fieldRef != 0 {
		field = d.top.keys[d.fieldRef-1].name
	}
	if d.subRef != 0 {
		sub = d.compKeys.keys[d.subRef-1].name
	}
	if sub != nil {
		return string(field) + "." + string(sub)
	}
	return string(field)
}

func (d *rowDecoder) fail(format string, args ...any) *rowError {
	return &rowError{field: d.fieldName(), msg: fmt.Sprintf(format, args...)}
}

// syntax reports an unexpected byte (or the end of the line) at d.pos.
func (d *rowDecoder) syntax(want string) *rowError {
	if d.pos >= len(d.data) {
		return d.fail("invalid JSON: unexpected end of line, want %s", want)
	}
	c := d.data[d.pos]
	if c >= 0x80 {
		if r, size := utf8.DecodeRune(d.data[d.pos:]); r == utf8.RuneError && size == 1 {
			return d.fail("invalid UTF-8 at column %d", d.pos+1)
		}
		return d.fail("invalid JSON: unexpected %q at column %d, want %s", string(d.data[d.pos:d.pos+utf8RuneLen(d.data[d.pos:])]), d.pos+1, want)
	}
	return d.fail("invalid JSON: unexpected %q at column %d, want %s", string(rune(c)), d.pos+1, want)
}

func utf8RuneLen(b []byte) int {
	_, n := utf8.DecodeRune(b)
	return n
}

func (d *rowDecoder) typeError(kind byte, want string) *rowError {
	return d.fail("got %s, want %s", kindName(kind), want)
}

func (d *rowDecoder) skipWS() {
	// (The position as a uint: no bounds check on data[p].)
	data, p := d.data, uint(d.pos)
	for p < uint(len(data)) {
		// Any byte above ' ' ends the whitespace: one comparison for the
		// byte that nearly always comes next.
		if c := data[p]; c > ' ' || c != ' ' && c != '\t' && c != '\r' && (c != '\n' || d.inPlace) {
			break
		}
		p++
	}
	d.pos = int(p)
}

// decode decodes one line into d.row, d.label, d.origin, d.alias and
// d.extras. Everything it returns aliases line or d's buffers.
func (d *rowDecoder) decode(line []byte) *rowError {
	d.data, d.pos = line, 0
	if d.rows++; d.rows == 64 {
		d.top.adapt()
		d.compKeys.adapt()
		d.rows = 0
	}
	d.clearField()
	d.clearSub()
	d.seen = 0
	d.exSeen = 0
	d.exHits = 0
	d.extras = d.extras[:0]
	if len(d.keyCopies) > 0 {
		clear(d.keyCopies)
		d.keyCopies = d.keyCopies[:0]
	}
	d.label, d.origin, d.alias = nil, nil, nil
	r := &d.row
	comps := r.Comps
	clear(comps)
	*r = skyfall.Row{Comps: comps, Invalid: -1}

	top, empty, err := d.openRow()
	if err != nil {
		return err
	}
	if !empty {
		prev := startKey
		var ids uint64 // IDs of the keys met so far
		// The members read so far are all repeated cached values of
		// non-schema keys (prefix.go): the last row's, when this row
		// starts with the same bytes, taken over here; while they are,
		// the row's prefix is recorded.
		if d.pfx.matches(d) {
			prev, ids = d.replayPrefix()
		} else {
			d.pfx.reset(d.top)
		}
		inPfx := true
		for {
			koff := d.pos
			// The predicted key, confirmed on its raw bytes, without the
			// calls of key and predict (what key returns for it).
			var key []byte
			var id uint8
			var keyEscaped bool
			if k := d.top.predictedColon(prev, d.data, d.pos); k != nil {
				// The predicted key and its colon in one compare: what
				// predicted and colon give them.
				d.top.nKeys++
				key, id = k.name, k.id
				d.pos += int(k.qcn)
				prev = id
				d.fieldRef = id + 1
				if uint(d.pos) < uint(len(d.data)) && d.data[d.pos] <= ' ' {
					d.skipWS()
				}
			} else {
				// (key tries the prediction again, by its quoted form:
				// whitespace before the colon, another colon form.)
				var err *rowError
				if key, id, keyEscaped, err = d.key(d.top, prev); err != nil {
					return err
				}
				prev = id
				if d.fieldRef = id + 1; id == noKey { // noKey + 1 wraps to 0
					d.field = key
				}
				if !d.colonFast() {
					if err := d.colon(); err != nil {
						return err
					}
				}
			}
			f := -1
			if id != noKey {
				if ids&(1<<id) != 0 {
					return d.fail("repeated key")
				}
				ids |= 1 << id
				f = d.top.keys[id].field
			} else if top.add(d, key, koff) {
				return d.fail("repeated key")
			}
			if f >= 0 {
				d.seen |= 1 << f
				if err := d.schemaValue(f); err != nil {
					return err
				}
			} else if err := d.extraValue(key, id, koff, keyEscaped); err != nil {
				return err
			}
			if inPfx && (f >= 0 || d.exHits&(1<<id) == 0 || id == d.gammaID) {
				// (noKey is never in exHits: 1<<noKey is 0.)
				inPfx = false
				d.pfx.end(d)
			}
			if uint(d.pos) < uint(len(d.data)) && d.data[d.pos] == ',' {
				d.pos++
				d.skipWS()
				if inPfx {
					d.pfx.add(d, id, keyEscaped)
				}
				continue
			}
			d.skipWS()
			if uint(d.pos) < uint(len(d.data)) && d.data[d.pos] == ',' {
				d.pos++
				d.skipWS()
				if inPfx {
					d.pfx.add(d, id, keyEscaped)
				}
				continue
			}
			if inPfx {
				inPfx = false
				d.pfx.end(d)
			}
			if uint(d.pos) < uint(len(d.data)) && d.data[d.pos] == '}' {
				d.pos++
				break
			}
			return d.syntax("',' or '}'")
		}
	}
	d.clearField()
	if err := d.closeRow(); err != nil {
		return err
	}
	if d.seen&(1<<fReward) == 0 {
		return &rowError{field: "reward", msg: missing("number")}
	}
	if d.seen&(1<<fRegimeID) == 0 {
		return &rowError{field: "regime_id", msg: missing("string")}
	}
	return nil
}

// openRow reads the '{' that opens the row at the start of d.data and the
// whitespace around it (a line must hold a JSON object), and returns the
// key set of the row's top level; empty reports the object {}, read whole.
func (d *rowDecoder) openRow() (top *keySet, empty bool, err *rowError) {
	d.skipWS()
	if d.pos >= len(d.data) {
		return nil, false, d.fail("invalid JSON: empty line")
	}
	if d.data[d.pos] != '{' {
		start := d.pos
		kind, err := d.skipValue(0)
		if err != nil {
			return nil, false, err
		}
		d.pos = start
		return nil, false, d.fail("got %s, want a JSON object", kindName(kind))
	}
	d.pos++
	top = d.set(0)
	d.skipWS()
	if d.pos < len(d.data) && d.data[d.pos] == '}' {
		d.pos++
		return top, true, nil
	}
	return top, false, nil
}

// closeRow checks that only whitespace follows the row's object: up to
// the end of the line, which is the end of d.data, or in place its '\n'.
func (d *rowDecoder) closeRow() *rowError {
	d.skipWS()
	if d.pos < len(d.data) {
		if d.inPlace && d.data[d.pos] == '\n' {
			d.lineEnd = d.pos
			return nil
		}
		return d.fail("invalid JSON: unexpected %q at column %d after the object", string(d.data[d.pos:d.pos+utf8RuneLen(d.data[d.pos:])]), d.pos+1)
	}
	if d.inPlace {
		return errNoLineEnd
	}
	return nil
}

// errNoLineEnd ends a row decoded in place whose line goes on past its
// data: not an error of the row (decodeInPlace only reports it failed).
var errNoLineEnd = &rowError{msg: "the line goes on past the bytes read"}

// decodeInPlace decodes the row at the start of data, whose bytes may run
// on past the row's line (the rest of the line reader's buffer, a chunk's
// lines), as decode decodes the line: it succeeds exactly when the line
// ends ('\n') within data and decode succeeds on it, '\r' before the '\n'
// dropped as the line reader drops it, and returns where the '\n' is. It
// saves finding the line's end before decoding it.
//
// A row cannot read on past its line: JSON holds a raw '\n' only as
// whitespace between tokens, which in place ends the row instead (skipWS;
// a string refuses control characters, a number or literal ends before
// it), and the row must end at it (closeRow). A row that fails, because it
// is bad or its line is not all in data, is not reported: the caller
// decodes the line again with decode, which gives the error, or succeeds
// once the line is whole. The failed try leaves the decoder's state as a
// bad row does, which the next row decoded (this one again) starts from.
func (d *rowDecoder) decodeInPlace(data []byte) (int, bool) {
	d.inPlace = true
	err := d.decode(data)
	d.inPlace = false
	if err != nil {
		return 0, false
	}
	end := d.lineEnd
	if end > 0 && data[end-1] == '\r' {
		// What decode would have been given (lineReader.finish).
		d.data = data[:end-1]
	} else {
		d.data = data[:end]
	}
	return end, true
}

// missing is the message for a required field that a row lacks, want
// naming its type: "missing (a number is required)".
func missing(want string) string {
	article := "a"
	if want != "" && strings.IndexByte("aeiou", want[0]) >= 0 {
		article = "an"
	}
	return "missing (" + article + " " + want + " is required)"
}

// objectKey reads the key string at d.pos of an object (whose '{' or ','
// has been read) and returns it decoded and where it starts. An error
// inside the key names the field being decoded, or none with top (a key of
// the row itself).
func (d *rowDecoder) objectKey(top bool) (key []byte, off int, err *rowError) {
	if d.pos >= len(d.data) || d.data[d.pos] != '"' {
		return nil, d.pos, d.syntax("a key")
	}
	off = d.pos
	if key, err = d.scanString(true, nil); err != nil {
		field := ""
		if !top {
			field = d.fieldName()
		}
		return nil, off, d.keyError(off, field)
	}
	return key, off, nil
}

// keyError is the error in the key string starting at off, said of a key
// (the message says "in a key") of the object that field names ("" for the
// row itself), never of the field before it. It scans the key again: errors
// cost nothing on the way of valid rows.
func (d *rowDecoder) keyError(off int, field string) *rowError {
	d.pos = off
	d.inKey = true
	_, err := d.scanString(false, nil)
	d.inKey = false
	err.field = field
	return err
}

// inKeyText is what messages about a string add inside a key.
func (d *rowDecoder) inKeyText() string {
	if d.inKey {
		return " in a key"
	}
	return ""
}

// stringNoun is what messages call the string being scanned.
func (d *rowDecoder) stringNoun() string {
	if d.inKey {
		return "a key"
	}
	return "a string"
}

// next reads what follows a member of an object (end '}') or an element
// of an array (end ']'), whitespace around it included: true after a ',',
// false after the end.
func (d *rowDecoder) next(end byte) (bool, *rowError) {
	d.skipWS()
	if d.pos < len(d.data) && d.data[d.pos] == ',' {
		d.pos++
		d.skipWS()
		return true, nil
	}
	if d.pos < len(d.data) && d.data[d.pos] == end {
		d.pos++
		return false, nil
	}
	if end == '}' {
		return false, d.syntax("',' or '}'")
	}
	return false, d.syntax("',' or ']'")
}

// key reads the key string at d.pos of an object whose keys t numbers,
// prev being the ID of the key before it (startKey for the first): the
// predicted key when its raw bytes are there, else a key of t whose raw
// bytes are there (t.find; tried first while predictions keep missing:
// keyTable.findFirst), else the scanned string,
// interned when t has room. It returns the decoded key (t's copy when the
// key has an ID), its ID or noKey, and whether it was written with
// escapes, and records in t that it followed prev.
func (d *rowDecoder) key(t *keyTable, prev uint8) (key []byte, id uint8, escaped bool, err *rowError) {
	// A key's quoted form starts with '"': a prediction or find that
	// matches needs no other check.
	if t.findFirst {
		// The head of the key's bucket first, here (find is not inlined):
		// with the keys of nearly every row at the heads, find is called
		// for the few others.
		t.nKeys++
		id = noKey
		if data, p := d.data, d.pos; p >= 0 && p <= len(data)-16 {
			if h := t.buckets[bucketOf(data[p+1], data[p+2])]; h != noKey {
				if k := &t.keys[h]; (binary.LittleEndian.Uint64(data[p:])&k.q.m[0]^k.q.w[0])|(binary.LittleEndian.Uint64(data[p+8:])&k.q.m[1]^k.q.w[1]) == 0 {
					id = h
				}
			}
		}
		if id == noKey {
			id = t.find(d.data, d.pos)
		}
	} else {
		t.nKeys++
		if id = t.predict(prev, d.data, d.pos); id == noKey {
			t.nMisses++
			id = t.find(d.data, d.pos)
		}
	}
	if id != noKey {
		k := &t.keys[id]
		d.pos += len(k.quoted)
		if k.qcn == 0 {
			k.colonForm(d.data, d.pos)
		}
		t.follow(prev, id)
		return k.name, id, false, nil
	}
	if d.pos >= len(d.data) || d.data[d.pos] != '"' {
		return nil, noKey, false, d.syntax("a key")
	}
	start := d.pos
	if key, err = d.scanString(true, nil); err != nil {
		field := ""
		if t != d.top {
			d.clearSub()
			field = d.fieldName()
		}
		return nil, noKey, false, d.keyError(start, field)
	}
	escaped = d.escaped
	if id = t.intern(key, -1); id != noKey {
		k := &t.keys[id]
		key = k.name
		if k.qcn == 0 {
			k.colonForm(d.data, d.pos)
		}
	}
	t.follow(prev, id)
	return key, id, escaped, nil
}

// colonFast reads the ':' after a key in its two common forms, right
// before the value or followed by one space (json.dumps), and reports
// whether it did; colon does the rest. It is small enough to be inlined.
func (d *rowDecoder) colonFast() bool {
	data, p := d.data, d.pos
	if p >= 0 && p < len(data)-2 && data[p] == ':' {
		if data[p+1] > ' ' {
			d.pos = p + 1
			return true
		}
		if data[p+1] == ' ' && data[p+2] > ' ' {
			d.pos = p + 2
			return true
		}
	}
	return false
}

// colon reads the ':' after a key and the whitespace around it.
func (d *rowDecoder) colon() *rowError {
	if d.pos >= len(d.data) || d.data[d.pos] != ':' {
		d.skipWS()
		if d.pos >= len(d.data) || d.data[d.pos] != ':' {
			return d.syntax("':'")
		}
	}
	d.pos++
	d.skipWS()
	return nil
}

// extraValue validates the value at d.pos of key, a top-level key that is
// not a schema field (id is its ID, or noKey; koff is where its string
// starts, keyEscaped whether it has escapes), and appends it to d.extras.
// A value whose raw bytes repeat the key's last valid value is not
// validated again.
func (d *rowDecoder) extraValue(key []byte, id uint8, koff int, keyEscaped bool) *rowError {
	start := d.pos
	var ki *keyInfo
	if id != noKey {
		ki = &d.top.keys[id]
	}
	var kind byte
	hit := false
	if ki != nil && !ki.off {
		if n := ki.cached(d.data, d.pos); n > 0 {
			d.pos += n
			kind, hit = ki.lastKind, true
			ki.hits++
		}
	}
	if !hit {
		var err *rowError
		var c byte // the line may end here: skipValue reports that
		if uint(d.pos) < uint(len(d.data)) {
			c = d.data[d.pos]
		}
		switch {
		case c == '"':
			kind = kindString
			_, err = d.scanString(false, nil)
		case c == '-' || c-'0' < 10:
			kind = kindNumber
			_, _, err = d.number(false)
		default:
			kind, err = d.skipValue(1)
		}
		if err != nil {
			return err
		}
	}
	if id == d.gammaID {
		switch kind {
		case kindNumber:
			if hit {
				d.row.Gamma = ki.lastNum
			} else {
				d.pos = start
				v, _, err := d.number(true)
				if err != nil {
					return err
				}
				d.row.Gamma = v
			}
			d.row.HasGamma = true
		case kindNull:
		default:
			d.pos = start
			return d.typeError(kind, "number")
		}
	}
	if !hit && ki != nil && !ki.off && ki.remember(d.data[start:d.pos], kind) {
		ki.lastNum = d.row.Gamma
		d.cacheGen++
	}
	if id != noKey {
		d.exSeen |= 1 << id
		d.exAt[id] = int16(len(d.extras))
		if hit {
			d.exHits |= 1 << id
		}
	}
	// Fields are set in place: building the struct and copying it in was
	// a store-forwarding stall that cost a tenth of the decoding time.
	n := len(d.extras)
	if n < cap(d.extras) {
		d.extras = d.extras[:n+1]
	} else {
		d.extras = append(d.extras, extra{})
	}
	e := &d.extras[n]
	e.vs, e.ve, e.kind, e.id, e.hit = start, d.pos, kind, id, hit
	switch {
	case id != noKey:
		e.ks, e.ke = 0, 0
	case keyEscaped:
		e.ks, e.ke = -1, len(d.keyCopies)
		d.keyCopies = append(d.keyCopies, key)
	default:
		e.ks, e.ke = koff+1, koff+1+len(key)
	}
	return nil
}

// peekKind returns the kind of the value at d.pos by its first byte, or 0.
func (d *rowDecoder) peekKind() byte {
	if uint(d.pos) >= uint(len(d.data)) {
		return 0
	}
	switch c := d.data[d.pos]; {
	case c == '"':
		return kindString
	case c == '-' || c >= '0' && c <= '9':
		return kindNumber
	case c == '{':
		return kindObject
	case c == '[':
		return kindArray
	case c == 't' || c == 'f':
		return kindBool
	case c == 'n':
		return kindNull
	}
	return 0
}

// wrongType validates the value at d.pos and reports it has the wrong type.
func (d *rowDecoder) wrongType(want string) *rowError {
	start := d.pos
	kind, err := d.skipValue(1)
	if err != nil {
		return err
	}
	d.pos = start
	return d.typeError(kind, want)
}

func (d *rowDecoder) schemaValue(f int) *rowError {
	r := &d.row
	k := d.peekKind()
	switch f {
	case fReward:
		if k != kindNumber {
			return d.wrongType("number")
		}
		v, _, err := d.number(true)
		if err != nil {
			return err
		}
		r.Reward = v
	case fRegimeID:
		if k != kindString {
			return d.wrongType("string")
		}
		if n := len(d.labelRaw); n > 0 && d.labelP.at(d.data, d.pos, d.labelRaw) {
			d.pos += n // a string ends at its closing quote: the same label
			d.label = d.labelDec
			return nil
		}
		start := d.pos
		s, err := d.scanString(true, d.labelBuf[:0])
		if err != nil {
			return err
		}
		d.label = s
		if d.escaped {
			d.labelBuf = s[:0]
		}
		d.labelRaw = append(d.labelRaw[:0], d.data[start:d.pos]...)
		d.labelP = makePattern(d.labelRaw)
		d.labelDec = append(d.labelDec[:0], s...)
		d.labelGen++
	case fRegimeOrigin, fAliasOf:
		switch k {
		case kindNull:
			return d.literal("null", wordNull)
		case kindString:
		default:
			return d.wrongType("string or null")
		}
		buf := &d.origBuf
		if f == fAliasOf {
			buf = &d.aliasBuf
		}
		s, err := d.scanString(true, (*buf)[:0])
		if err != nil {
			return err
		}
		if d.escaped {
			*buf = s[:0]
		}
		if f == fAliasOf {
			d.alias, r.HasAliasOf = s, true
		} else {
			d.origin, r.HasOrigin = s, true
		}
	case fStep:
		switch k {
		case kindNull:
			return d.literal("null", wordNull)
		case kindNumber:
		default:
			return d.wrongType("integer")
		}
		start := d.pos
		v, isInt, err := d.number(true)
		if err != nil {
			return err
		}
		if isInt && d.intOK {
			r.Step = d.intVal
		} else {
			n, msg := integer(d.data[start:d.pos], v, isInt)
			if msg != "" {
				return d.fail(msg, d.data[start:d.pos])
			}
			r.Step = n
		}
		r.HasStep = true
	case fComponents:
		switch k {
		case kindNull:
			return d.literal("null", wordNull)
		case kindObject:
		default:
			return d.wrongType("object")
		}
		return d.components()
	case fInvalidAction:
		switch k {
		case kindNull:
			return d.literal("null", wordNull)
		case kindBool:
		default:
			return d.wrongType("bool")
		}
		if d.data[d.pos] == 't' {
			r.Invalid = 1
			return d.literal("true", wordTrue)
		}
		r.Invalid = 0
		return d.literal("false", wordFalse)
	case fEffectiveRank:
		switch k {
		case kindNull:
			return d.literal("null", wordNull)
		case kindNumber:
		default:
			return d.wrongType("number or null")
		}
		v, _, err := d.number(true)
		if err != nil {
			return err
		}
		r.EffRank, r.HasEffRank = v, true
	}
	return nil
}

// components decodes the components object: every value must be a number;
// the named components are kept in d.row.Comps.
func (d *rowDecoder) components() *rowError {
	d.pos++ // '{'
	set := d.set(1)
	d.skipWS()
	if uint(d.pos) < uint(len(d.data)) && d.data[d.pos] == '}' {
		d.pos++
		return nil
	}
	t := d.compKeys
	prev := startKey
	var ids uint64
	for {
		koff := d.pos
		var key []byte
		var id uint8
		colon := false // the colon read with the key
		if k := t.predictedColon(prev, d.data, d.pos); k != nil {
			t.nKeys++
			key, id = k.name, k.id
			d.pos += int(k.qcn)
			colon = true
		} else {
			var err *rowError
			if key, id, _, err = d.key(t, prev); err != nil {
				return err
			}
		}
		prev = id
		if d.subRef = id + 1; id == noKey {
			d.sub = key
		}
		idx := -1
		if id != noKey {
			if ids&(1<<id) != 0 {
				return d.fail("repeated key")
			}
			ids |= 1 << id
			idx = t.keys[id].field
		} else {
			if set.add(d, key, koff) {
				return d.fail("repeated key")
			}
			if d.compIdx != nil {
				if i, ok := d.compIdx[string(key)]; ok {
					idx = i
				}
			} else {
				for i, c := range d.comps {
					if c == string(key) {
						idx = i
						break
					}
				}
			}
		}
		if colon {
			if uint(d.pos) < uint(len(d.data)) && d.data[d.pos] <= ' ' {
				d.skipWS()
			}
		} else if !d.colonFast() {
			if err := d.colon(); err != nil {
				return err
			}
		}
		if d.peekKind() != kindNumber {
			return d.wrongType("number")
		}
		v, _, err := d.number(idx >= 0)
		if err != nil {
			return err
		}
		if idx >= 0 {
			d.row.Comps[idx] = v
			d.row.Carried |= skyfall.CarriedBit(idx)
		}
		d.skipWS()
		if uint(d.pos) < uint(len(d.data)) && d.data[d.pos] == ',' {
			d.pos++
			d.skipWS()
			continue
		}
		if uint(d.pos) < uint(len(d.data)) && d.data[d.pos] == '}' {
			d.pos++
			d.clearSub()
			return nil
		}
		return d.syntax("',' or '}'")
	}
}

// The literals as little-endian words, for literal.
const (
	wordNull  = 'n' | 'u'<<8 | 'l'<<16 | 'l'<<24
	wordTrue  = 't' | 'r'<<8 | 'u'<<16 | 'e'<<24
	wordFalse = 'f' | 'a'<<8 | 'l'<<16 | 's'<<24 | 'e'<<32
)

// literal reads lit at d.pos: null, true or false, w being its word
// (wordNull etc.). With 8 bytes to read there (all but the last few bytes
// of a line), it compares one word instead of calling the runtime's
// comparison.
func (d *rowDecoder) literal(lit string, w uint64) *rowError {
	if p := d.pos; len(d.data)-p >= 8 && binary.LittleEndian.Uint64(d.data[p:])<<(64-8*len(lit)) == w<<(64-8*len(lit)) {
		d.pos += len(lit)
		return nil
	}
	if len(d.data)-d.pos >= len(lit) && string(d.data[d.pos:d.pos+len(lit)]) == lit {
		d.pos += len(lit)
		return nil
	}
	for i := 0; i < len(lit) && d.pos < len(d.data) && d.data[d.pos] == lit[i]; i++ {
		d.pos++
	}
	return d.syntax("a JSON value")
}

// skipValue validates the value at d.pos (at nesting depth depth+1 if it is
// an object or array) and returns its kind.
func (d *rowDecoder) skipValue(depth int) (byte, *rowError) {
	switch d.peekKind() {
	case kindString:
		_, err := d.scanString(false, nil)
		return kindString, err
	case kindNumber:
		_, _, err := d.number(false)
		return kindNumber, err
	case kindNull:
		return kindNull, d.literal("null", wordNull)
	case kindBool:
		if d.data[d.pos] == 't' {
			return kindBool, d.literal("true", wordTrue)
		}
		return kindBool, d.literal("false", wordFalse)
	case kindObject:
		depth++
		if depth > maxDepth {
			return 0, d.fail("invalid JSON: nested deeper than %d levels", maxDepth)
		}
		d.pos++
		set := d.set(depth)
		d.skipWS()
		if d.pos < len(d.data) && d.data[d.pos] == '}' {
			d.pos++
			return kindObject, nil
		}
		for {
			key, koff, err := d.objectKey(false)
			if err != nil {
				return 0, err
			}
			if set.add(d, key, koff) {
				return 0, d.fail("repeated key %q in an object", key)
			}
			if err := d.colon(); err != nil {
				return 0, err
			}
			if _, err := d.skipValue(depth); err != nil {
				return 0, err
			}
			more, err := d.next('}')
			if err != nil {
				return 0, err
			}
			if !more {
				return kindObject, nil
			}
		}
	case kindArray:
		depth++
		if depth > maxDepth {
			return 0, d.fail("invalid JSON: nested deeper than %d levels", maxDepth)
		}
		d.pos++
		d.skipWS()
		if d.pos < len(d.data) && d.data[d.pos] == ']' {
			d.pos++
			return kindArray, nil
		}
		for {
			if _, err := d.skipValue(depth); err != nil {
				return 0, err
			}
			more, err := d.next(']')
			if err != nil {
				return 0, err
			}
			if !more {
				return kindArray, nil
			}
		}
	}
	return 0, d.syntax("a JSON value")
}

const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

// specialMask flags (in bit 7 of each byte) the bytes of w that end the
// fast path of a string: '"', '\\', control characters and non-ASCII bytes.
// Borrows may flag bytes above a flagged one, never below, so the lowest
// flag is exact.
func specialMask(w uint64) uint64 {
	q := w ^ (lsb * '"')
	b := w ^ (lsb * '\\')
	return ((w-lsb*0x20)&^w | (q-lsb)&^q | (b-lsb)&^b | w) & msb
}

// skipDigits returns the position of the first non-digit at or after pos.
func skipDigits(data []byte, pos int) int {
	for pos+8 <= len(data) {
		w := binary.LittleEndian.Uint64(data[pos : pos+8])
		x := (w&0xf0f0f0f0f0f0f0f0 ^ 0x3030303030303030) | ((w+0x0606060606060606)&0xf0f0f0f0f0f0f0f0 ^ 0x3030303030303030)
		if x != 0 {
			return pos + bits.TrailingZeros64(x)>>3
		}
		pos += 8
	}
	for pos < len(data) && data[pos]-'0' < 10 {
		pos++
	}
	return pos
}

// scanString scans the string at d.pos (which holds '"'). With decode, it
// returns the decoded content: a slice of the line when the string has no
// escape, else buf (or a new slice when buf is nil) with the decoded bytes
// appended. Without decode it only validates.
func (d *rowDecoder) scanString(decode bool, buf []byte) ([]byte, *rowError) {
	data := d.data
	d.pos++
	d.escaped = false
	start := d.pos
	pos := d.pos
	for {
		for pos+8 <= len(data) {
			if m := specialMask(binary.LittleEndian.Uint64(data[pos : pos+8])); m != 0 {
				pos += bits.TrailingZeros64(m) >> 3
				break
			}
			pos += 8
		}
		if pos >= len(data) {
			d.pos = pos
			return nil, d.fail("invalid JSON: unterminated string%s", d.inKeyText())
		}
		c := data[pos]
		switch {
		case c == '"':
			d.pos = pos + 1
			return data[start:pos], nil
		case c == '\\':
			d.pos = pos
			return d.scanEscaped(decode, buf, start)
		case c < 0x20:
			d.pos = pos
			return nil, d.fail("invalid JSON: control character %#02x in %s at column %d", c, d.stringNoun(), pos+1)
		case c >= 0x80:
			r, size := utf8.DecodeRune(data[pos:])
			if r == utf8.RuneError && size == 1 {
				d.pos = pos
				return nil, d.fail("invalid UTF-8%s at column %d", d.inKeyText(), pos+1)
			}
			pos += size
		default:
			pos++
		}
	}
}

// scanEscaped continues scanString from the first backslash at d.pos.
func (d *rowDecoder) scanEscaped(decode bool, buf []byte, start int) ([]byte, *rowError) {
	data := d.data
	pos := d.pos
	d.escaped = true
	if decode {
		buf = append(buf[:0], data[start:pos]...)
	}
	for {
		if pos >= len(data) {
			d.pos = pos
			return nil, d.fail("invalid JSON: unterminated string%s", d.inKeyText())
		}
		c := data[pos]
		switch {
		case c == '"':
			d.pos = pos + 1
			if buf == nil {
				buf = []byte{}
			}
			return buf, nil
		case c == '\\':
			if pos+1 >= len(data) {
				d.pos = pos + 1
				return nil, d.fail("invalid JSON: unterminated string%s", d.inKeyText())
			}
			e := data[pos+1]
			var out byte
			switch e {
			case '"', '\\', '/':
				out = e
			case 'b':
				out = '\b'
			case 'f':
				out = '\f'
			case 'n':
				out = '\n'
			case 'r':
				out = '\r'
			case 't':
				out = '\t'
			case 'u':
				r, ok := hex4(data, pos+2)
				if !ok {
					d.pos = pos
					return nil, d.fail("invalid JSON: invalid \\u escape%s at column %d", d.inKeyText(), pos+1)
				}
				if utf16.IsSurrogate(r) {
					// A pair decodes to one rune. A lone surrogate is no
					// character: the string is not text (issue 13; where
					// encoding/json gives U+FFFD, "A\ud800" and "A\udfff"
					// would be one label).
					if r2, ok := hex4(data, pos+8); ok && data[pos+6] == '\\' && data[pos+7] == 'u' {
						if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
							if decode {
								buf = utf8.AppendRune(buf, dec)
							}
							pos += 12
							continue
						}
					}
					d.pos = pos
					return nil, d.fail("invalid text: lone surrogate %s%s at column %d (a string must be Unicode text)", data[pos:pos+6], d.inKeyText(), pos+1)
				}
				pos += 6
				if decode {
					buf = utf8.AppendRune(buf, r)
				}
				continue
			default:
				d.pos = pos
				return nil, d.fail("invalid JSON: invalid escape %q%s at column %d", data[pos:pos+2], d.inKeyText(), pos+1)
			}
			if decode {
				buf = append(buf, out)
			}
			pos += 2
		case c < 0x20:
			d.pos = pos
			return nil, d.fail("invalid JSON: control character %#02x in %s at column %d", c, d.stringNoun(), pos+1)
		case c >= 0x80:
			r, size := utf8.DecodeRune(data[pos:])
			if r == utf8.RuneError && size == 1 {
				d.pos = pos
				return nil, d.fail("invalid UTF-8%s at column %d", d.inKeyText(), pos+1)
			}
			if decode {
				buf = append(buf, data[pos:pos+size]...)
			}
			pos += size
		default:
			if decode {
				buf = append(buf, c)
			}
			pos++
		}
	}
}

func hex4(data []byte, at int) (rune, bool) {
	if at+4 > len(data) {
		return 0, false
	}
	var r rune
	for _, c := range data[at : at+4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

var pow10 = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10,
	1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}

// number scans the number at d.pos per the JSON grammar. With want it
// returns the nearest float64; without, it only checks that the number does
// not overflow float64 (parsing only when the magnitude is borderline). isInt
// reports a literal with neither fraction nor exponent; with want, such a
// literal of at most 18 digits also sets d.intVal (and d.intOK).
func (d *rowDecoder) number(want bool) (v float64, isInt bool, err *rowError) {
	d.intOK = false
	data := d.data
	start := d.pos
	pos := start
	if pos < len(data) && data[pos] == '-' {
		pos++
	}
	intStart := pos
	// With want, m accumulates the digits of the integer and fraction parts
	// as they are scanned (modulo 2^64: it is used only when they hold at
	// most 19 significant digits).
	var m uint64
	switch {
	case pos >= len(data):
		d.pos = pos
		return 0, false, d.numberError(start)
	case data[pos] == '0':
		pos++
	case data[pos]-'1' < 9:
		if want {
			pos, m = scanDigits(data, pos, 0)
		} else {
			pos = skipDigits(data, pos+1)
		}
	default:
		d.pos = pos
		return 0, false, d.numberError(start)
	}
	intEnd := pos
	fracStart, fracEnd := pos, pos
	isInt = true
	if pos < len(data) && data[pos] == '.' {
		isInt = false
		pos++
		fracStart = pos
		if want {
			pos, m = scanDigits(data, pos, m)
		} else {
			pos = skipDigits(data, pos)
		}
		if pos == fracStart {
			d.pos = pos
			return 0, false, d.numberError(start)
		}
		fracEnd = pos
	}
	exp := 0
	if pos < len(data) && data[pos]|0x20 == 'e' {
		isInt = false
		pos++
		eneg := false
		if pos < len(data) && (data[pos] == '+' || data[pos] == '-') {
			eneg = data[pos] == '-'
			pos++
		}
		es := pos
		for pos < len(data) && data[pos]-'0' < 10 {
			if exp < 1e8 {
				exp = exp*10 + int(data[pos]-'0')
			}
			pos++
		}
		if pos == es {
			d.pos = pos
			return 0, false, d.numberError(start)
		}
		if eneg {
			exp = -exp
		}
	}
	d.pos = pos
	if !want {
		// The value lies in [10^mag, 10^(mag+1)) (or is zero).
		var mag int
		if intEnd-intStart > 1 || data[intStart] != '0' {
			mag = intEnd - intStart - 1 + exp
		} else {
			if exp <= 308 { // |v| < 10^(exp-1)
				return 0, isInt, nil
			}
			i := fracStart
			for i < fracEnd && data[i] == '0' {
				i++
			}
			if i == fracEnd {
				return 0, isInt, nil // zero
			}
			mag = -(i - fracStart + 1) + exp
		}
		if mag <= 307 {
			return 0, isInt, nil
		}
		if mag >= 309 {
			return 0, isInt, d.fail("number %s overflows float64", truncLit(data[start:pos]))
		}
	} else {
		// The significand without leading zeros, m, if it has at most 19
		// digits: exact in a uint64.
		var nd int
		if data[intStart] != '0' {
			nd = intEnd - intStart + fracEnd - fracStart
		} else {
			i := fracStart
			for i < fracEnd && data[i] == '0' {
				i++
			}
			nd = fracEnd - i
		}
		if nd <= 19 {
			neg := data[start] == '-'
			if isInt && nd <= 18 { // below 10^18: exact in an int64
				d.intVal, d.intOK = int64(m), true
				if neg {
					d.intVal = -d.intVal
				}
			}
			e := exp - (fracEnd - fracStart)
			if m <= 1<<53 && e >= -22 && e <= 22 {
				// Clinger's fast path: both factors exact, one rounding.
				f := float64(m)
				if e >= 0 {
					f *= pow10[e]
				} else {
					f /= pow10[-e]
				}
				if neg {
					f = -f
				}
				return f, isInt, nil
			}
			if f, ok := eiselLemire64(m, e, neg); ok {
				return f, isInt, nil
			}
		}
	}
	lit := data[start:pos]
	f, perr := strconv.ParseFloat(unsafeString(lit), 64)
	if perr != nil || math.IsInf(f, 0) {
		return 0, isInt, d.fail("number %s overflows float64", truncLit(lit))
	}
	return f, isInt, nil
}

// parseNumber converts a valid, non-overflowing JSON number literal with
// the scanner's own conversion; isInt reports a literal with neither
// fraction nor exponent.
func parseNumber(lit []byte) (v float64, isInt bool) {
	d := rowDecoder{data: lit}
	v, isInt, _ = d.number(true)
	return v, isInt
}

// integer converts a number literal, v its value and isInt whether it has
// neither fraction nor exponent, as step is read: an integer literal within
// int64, or a number whose value is a whole number of magnitude at most
// 2^53. Otherwise msg is the message's format, its one argument the
// literal.
func integer(lit []byte, v float64, isInt bool) (n int64, msg string) {
	if isInt {
		n, err := strconv.ParseInt(unsafeString(lit), 10, 64)
		if err != nil {
			return 0, "%s is out of the range of a 64-bit integer"
		}
		return n, ""
	}
	if v != math.Trunc(v) || math.Abs(v) > 1<<53 {
		return 0, "got %s, want an integer"
	}
	return int64(v), ""
}

// decodeString returns the content of a valid JSON string literal: a view
// of lit when it has no escape.
func decodeString(lit []byte) []byte {
	if s := lit[1 : len(lit)-1]; bytes.IndexByte(s, '\\') < 0 {
		return s
	}
	d := rowDecoder{data: lit}
	s, _ := d.scanString(true, nil)
	return s
}

// scanDigits returns the position of the first non-digit at or after pos
// and m·10^n + the value of the n digits before it, modulo 2^64, eight
// digits at a time: skipDigits and digitsValue in one pass.
func scanDigits(data []byte, pos int, m uint64) (int, uint64) {
	for pos+8 <= len(data) {
		w := binary.LittleEndian.Uint64(data[pos : pos+8])
		x := (w&0xf0f0f0f0f0f0f0f0 ^ 0x3030303030303030) | ((w+0x0606060606060606)&0xf0f0f0f0f0f0f0f0 ^ 0x3030303030303030)
		if x == 0 {
			m = m*100000000 + eightDigits(w)
			pos += 8
			continue
		}
		// n < 8 digits, then a non-digit: shift them to the top of the word
		// under leading '0's.
		if n := bits.TrailingZeros64(x) >> 3; n > 0 {
			w = w<<(64-8*uint(n)) | 0x3030303030303030>>(8*uint(n))
			m = m*pow10u[n] + eightDigits(w)
			pos += n
		}
		return pos, m
	}
	for pos < len(data) && data[pos]-'0' < 10 {
		m = m*10 + uint64(data[pos]-'0')
		pos++
	}
	return pos, m
}

var pow10u = [8]uint64{1, 10, 100, 1000, 10000, 100000, 1000000, 10000000}

// eightDigits returns the value of the eight ASCII digits of w, the first
// in its lowest byte (the SWAR conversion of simdjson's
// parse_eight_digits_unrolled).
func eightDigits(w uint64) uint64 {
	w -= 0x3030303030303030
	w = w*10 + w>>8
	return ((w&0x000000ff000000ff)*(100+1000000<<32) + (w>>16&0x000000ff000000ff)*(1+10000<<32)) >> 32
}

func (d *rowDecoder) numberError(start int) *rowError {
	if d.pos >= len(d.data) {
		return d.fail("invalid JSON: number %s ends too soon", truncLit(d.data[start:d.pos]))
	}
	return d.fail("invalid JSON: invalid number at column %d", start+1)
}

func truncLit(b []byte) string {
	if len(b) > 40 {
		return string(b[:37]) + "..."
	}
	return string(b)
}

// unsafeString views b as a string without copying; the string must not
// outlive b's contents.
func unsafeString(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

// unsafeBytes views s as bytes without copying; they must not be written.
func unsafeBytes(s string) []byte {
	return unsafe.Slice(unsafe.StringData(s), len(s))
}
