package readers

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"strings"
)

// The grouping and assembly core of every protocol (PROTOCOLS 1.2). A
// protocol's decoder (DecodeObject, DecodeRecords) reads the rows of one
// object and keeps them in parts, one per run identity, each embedding a
// partCore; a grouper finds a row's part. Its assembly (Assemble,
// AssembleRecords) groups the parts of every object into runs with
// groupRuns and renders each run's metadata with runOf.meta. What a part
// holds of its rows (a skyfall builder, records) is the protocol's own.

// SourceField is the metadata field Assemble and AssembleRecords add to
// every run: the key of the object holding the run's first row.
const SourceField = "source"

// ObjectInfo is what DecodeObject and DecodeRecords say of an object as a
// whole; ObjectRuns and ObjectRecords embed it.
type ObjectInfo struct {
	URL     string // the object URL, for errors
	Key     string // the key relative to the input prefix: the runs' source
	Format  Format // the format found from the object's magic bytes
	Lines   int    // lines read, blank ones included
	Rows    int    // rows decoded (non-blank lines, less the skipped ones)
	Skipped int    // bad rows skipped (OnBadRow returned nil)
}

func (o *ObjectInfo) info() *ObjectInfo { return o }

// identValue is one carried identity field and its canonical value.
type identValue struct {
	field string
	canon string
}

// partHeader is what run grouping needs of a part of one object.
type partHeader struct {
	anon      bool
	identKey  string       // canonical identity tuple, to match across objects
	runKey    string       // rendered run key
	ident     []identValue // carried identity fields, in identity-field order
	firstLine int
}

// partCore is the rows of one run within one object as the core sees them:
// the part's header and its run metadata candidates. Each protocol's part
// embeds it, beside the rows.
type partCore struct {
	partHeader
	cands []candidate
}

func (c *partCore) core() *partCore { return c }

func (c *partCore) header() partHeader { return c.partHeader }

// runPart is a protocol's part: a pointer to a struct embedding partCore.
type runPart interface {
	comparable
	core() *partCore
}

// runObject is a protocol's decoded object: a pointer to a struct
// embedding ObjectInfo, with its parts in order of first row.
type runObject[P runPart] interface {
	info() *ObjectInfo
	runParts() []P
}

// candidate is a field that, so far, is present with one value on every row
// of the part.
type candidate struct {
	name  string
	key   uint32 // the field's key in its object's decoder: a keyTable ID (or noKey), a recordKeys index
	raw   []byte // the value on the part's first row
	kind  byte
	canon string
	alive bool
	pos   int    // where the field was in the last row
	gen   uint64 // the JSON decoder's version of its key's cached value that was this value (keys.go), or 0
}

// addCandidate makes a field of the part's first row (present, not null) a
// metadata candidate; raw must stay valid as long as the part is decoded.
func (c *partCore) addCandidate(name string, key uint32, raw []byte, kind byte, pos int) {
	c.cands = append(c.cands, candidate{
		name: name, key: key, raw: raw, kind: kind,
		canon: string(appendCanonical(nil, raw, kind)), alive: true, pos: pos,
	})
}

// differs keeps c alive only if raw, the value of c's field on a later row
// (present, not null, with other bytes than c.raw), is the same JSON value.
// It returns the scratch buffer tmp.
func (c *candidate) differs(raw []byte, kind byte, tmp []byte) []byte {
	if kind != c.kind {
		c.alive = false
		return tmp
	}
	tmp = appendCanonical(tmp[:0], raw, kind)
	if string(tmp) != c.canon {
		c.alive = false
	}
	return tmp
}

// meta returns the metadata constant over the part, as canonical values.
func (c *partCore) meta() map[string]string {
	m := make(map[string]string, len(c.cands))
	for _, c := range c.cands {
		if c.alive {
			m[c.name] = c.canon
		}
	}
	return m
}

// runKeys lists the run keys of parts.
func runKeys[P runPart](parts []P) []string {
	keys := make([]string, len(parts))
	for i, p := range parts {
		keys[i] = p.core().runKey
	}
	return keys
}

// rawValue is the raw JSON text of a field's value and its kind; kind is
// kindNull when the field is absent or null.
type rawValue struct {
	raw  []byte
	kind byte
}

// grouper finds the part of each row of one object (PROTOCOLS 1.2): rows
// with equal identities share a part, the anonymous rows have one of their
// own, and at most maxRuns parts are made.
type grouper[P runPart] struct {
	url, key string   // the object's URL (errors) and key (anonymous run key)
	fields   []string // the identity fields
	maxRuns  int
	n        int // parts made
	byIdent  map[string]P
	anon     P
	last     P      // the part of the last row found
	lastCK   []byte // and its identity key
	vals     []rawValue
	ck, tmp  []byte
	mk       func(partHeader) P // makes a new part and adds it to the object
}

func newGrouper[P runPart](url, key string, fields []string, maxRuns int, mk func(partHeader) P) grouper[P] {
	return grouper[P]{url: url, key: key, fields: fields, maxRuns: maxRuns, mk: mk,
		byIdent: map[string]P{}, vals: make([]rawValue, len(fields))}
}

// identify computes the canonical identity key of the row whose identity
// field values are g.vals (by identity field) and returns how many fields
// the row carries. An identity value that is an object or an array is an
// error.
func (g *grouper[P]) identify(line int) (carried int, err error) {
	ck := g.ck[:0]
	for i, v := range g.vals {
		switch v.kind {
		case kindNull:
			continue
		case kindObject, kindArray:
			return 0, &DataError{URL: g.url, Line: line, Field: g.fields[i],
				Msg: fmt.Sprintf("an identity field must be a string, number or boolean, got %s", kindName(v.kind))}
		}
		carried++
		g.tmp = appendCanonical(g.tmp[:0], v.raw, v.kind)
		ck = binary.AppendUvarint(ck, uint64(i))
		ck = binary.AppendUvarint(ck, uint64(len(g.tmp)))
		ck = append(ck, g.tmp...)
	}
	g.ck = ck
	return carried, nil
}

// find returns the part of the row identify has just read, carrying
// carried identity fields, making it on the identity's first row.
func (g *grouper[P]) find(line, carried int) (P, error) {
	var zero P
	if carried > 0 && g.last != zero && bytes.Equal(g.ck, g.lastCK) {
		return g.last, nil
	}
	var p P
	var err error
	if carried == 0 {
		if p = g.anon; p == zero {
			p, err = g.add(partHeader{anon: true, runKey: "anonymous:" + g.key, firstLine: line})
		}
	} else if p = g.byIdent[string(g.ck)]; p == zero {
		ident := make([]identValue, 0, carried)
		for i, v := range g.vals {
			if v.kind != kindNull {
				ident = append(ident, identValue{field: g.fields[i], canon: string(appendCanonical(nil, v.raw, v.kind))})
			}
		}
		p, err = g.add(partHeader{identKey: string(g.ck), runKey: runKey(ident), ident: ident, firstLine: line})
	}
	if err != nil {
		return zero, err
	}
	g.last = p
	g.lastCK = append(g.lastCK[:0], g.ck...)
	return p, nil
}

// lookup returns the part of h's identity (the anonymous part for an
// anonymous h), if there is one.
func (g *grouper[P]) lookup(h *partHeader) (P, bool) {
	if h.anon {
		var zero P
		return g.anon, g.anon != zero
	}
	p, ok := g.byIdent[h.identKey]
	return p, ok
}

// add makes the part of h, unless maxRuns parts have been made.
func (g *grouper[P]) add(h partHeader) (P, error) {
	if g.n >= g.maxRuns {
		var zero P
		return zero, tooManyRuns(g.url, h.firstLine, g.maxRuns)
	}
	g.n++
	p := g.mk(h)
	if h.anon {
		g.anon = p
	} else {
		g.byIdent[h.identKey] = p
	}
	return p, nil
}

func tooManyRuns(url string, line, max int) error {
	return &DataError{URL: url, Line: line,
		Msg: fmt.Sprintf("more than %d runs (the limit set by --max-runs)", max), Err: ErrLimit}
}

// runKey renders field=value|field=value in identity-field order.
func runKey(ident []identValue) string {
	var b strings.Builder
	for i, v := range ident {
		if i > 0 {
			b.WriteByte('|')
		}
		b.WriteString(v.field)
		b.WriteByte('=')
		b.WriteString(render(v.canon))
	}
	return b.String()
}

// describeIdent renders an identity for messages.
func describeIdent(ident []identValue) string {
	if len(ident) == 0 {
		return "no identity"
	}
	parts := make([]string, len(ident))
	for i, v := range ident {
		parts[i] = v.field + "=" + describe(v.canon)
	}
	return strings.Join(parts, ", ")
}

// pieceOf is one part of a run and the object holding it.
type pieceOf[O, P any] struct {
	obj O
	p   P
}

// runOf is one run of the sweep: its key and its pieces in object order.
type runOf[O runObject[P], P runPart] struct {
	key    string
	pieces []pieceOf[O, P]
}

// groupRuns checks that objects are in bytewise key order (fn, the
// caller, names itself in the error), checks each object with check, and
// groups the parts of objects into runs (PROTOCOLS 1.2): parts with equal
// identities form one run across objects, each anonymous part a run of its
// own; runs in order of their first part, pieces in object order. Two
// distinct identities with one run key, and more than maxRuns runs, are
// DataErrors. It reads only the parts' headers, never their rows.
func groupRuns[O runObject[P], P runPart](fn string, objects []O, check func(O) error, maxRuns int) ([]runOf[O, P], error) {
	for i, o := range objects {
		if i > 0 && objects[i-1].info().Key >= o.info().Key {
			return nil, fmt.Errorf("readers: %s: objects out of bytewise key order or repeated: %q then %q", fn, objects[i-1].info().Key, o.info().Key)
		}
		if err := check(o); err != nil {
			return nil, err
		}
	}
	var runs []runOf[O, P]
	byIdent := map[string]int{}
	byKey := map[string]int{}
	for _, o := range objects {
		for _, p := range o.runParts() {
			h := p.core()
			i, found := 0, false
			if !h.anon {
				i, found = byIdent[h.identKey]
			}
			if !found {
				if prev, clash := byKey[h.runKey]; clash {
					first := runs[prev].pieces[0]
					return nil, keyClash(runHeader{first.obj.info().URL, first.p.core().header()}, runHeader{o.info().URL, h.header()})
				}
				if len(runs) >= maxRuns {
					return nil, tooManyRuns(o.info().URL, h.firstLine, maxRuns)
				}
				i = len(runs)
				runs = append(runs, runOf[O, P]{key: h.runKey})
				byKey[h.runKey] = i
				if !h.anon {
					byIdent[h.identKey] = i
				}
			}
			runs[i].pieces = append(runs[i].pieces, pieceOf[O, P]{o, p})
		}
	}
	return runs, nil
}

// meta is the run's metadata, rendered: constant within every piece, and
// equal across pieces; plus source.
func (r *runOf[O, P]) meta() map[string]string {
	meta := r.pieces[0].p.core().meta()
	for _, pc := range r.pieces[1:] {
		m := pc.p.core().meta()
		for k, v := range meta {
			if m[k] != v {
				delete(meta, k)
			}
		}
	}
	rendered := make(map[string]string, len(meta)+1)
	for k, v := range meta {
		rendered[k] = render(v)
	}
	rendered[SourceField] = r.pieces[0].obj.info().Key
	return rendered
}

// runHeader is a part's header and the URL of its object.
type runHeader struct {
	url string
	partHeader
}

// keyClash is the error of h, whose run key prev's distinct identity
// rendered first.
func keyClash(prev, h runHeader) *DataError {
	return &DataError{URL: h.url, Line: h.firstLine, Msg: fmt.Sprintf(
		"run key %q stands for two distinct identities: %s (first at %s line %d) and %s (first here)",
		h.runKey, describeIdent(prev.ident), prev.url, prev.firstLine, describeIdent(h.ident)), Err: ErrRunKeyClash}
}

// runKeyConflicts lists every run-key conflict among objects (see
// RunKeyConflicts).
func runKeyConflicts[O runObject[P], P runPart](objects []O) []*DataError {
	var out []*DataError
	seen := map[string]bool{}       // identities met
	byKey := map[string]runHeader{} // the first identity of each run key
	for _, o := range objects {
		for _, p := range o.runParts() {
			h := runHeader{o.info().URL, p.core().header()}
			if !h.anon {
				if seen[h.identKey] {
					continue
				}
				seen[h.identKey] = true
			}
			prev, ok := byKey[h.runKey]
			if !ok {
				byKey[h.runKey] = h
				continue
			}
			out = append(out, keyClash(prev, h))
		}
	}
	return out
}
