package readers

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/crlbatch/crlbatch/protocol/skyfall"
)

// ObjectRuns is one decoded object: its rows grouped by run identity, ready
// for Assemble. Objects are decoded independently of each other, so the
// pipeline may decode several at once; Assemble merges them in key order.
type ObjectRuns struct {
	ObjectInfo // Skipped counts the rows Options.OnBadRow skipped

	comps []string
	parts []*part // in order of first row

	// Spilling (spill.go): spilled once Spill has moved the parts' columns
	// to the file spillPath ("" when there is none, or once it is
	// removed); released once Release has dropped the rows for good.
	spilled   bool
	released  bool
	spillPath string
	pending   int // spilled parts not yet loaded by the running AssembleEach
}

// NumRuns is the number of runs (identities, plus the anonymous run) that
// have rows in the object.
func (o *ObjectRuns) NumRuns() int { return len(o.parts) }

// RunKeys lists the run keys of the object's runs, in order of first row.
func (o *ObjectRuns) RunKeys() []string { return runKeys(o.parts) }

func (o *ObjectRuns) runParts() []*part { return o.parts }

// MemBytes estimates the memory held by the object: the rows in the
// builders' compact columns (every chunk by its capacity, the label names),
// and the small header (run identities, metadata candidates, label origins)
// that stays in memory after Spill or Release. It is for the pipeline's
// --memory-limit accounting.
func (o *ObjectRuns) MemBytes() int64 {
	n := int64(objectOverhead + len(o.URL) + len(o.Key) + len(o.spillPath))
	for _, p := range o.parts {
		n += p.headerBytes()
		if p.b != nil {
			n += p.b.MemBytes()
		}
		n += int64(len(p.enc))
	}
	return n
}

// part is the rows of one run within one object.
type part struct {
	partCore
	b       *skyfall.Builder       // the rows; nil once spilled or released
	origins map[string]labelOrigin // first origin/alias of each label in this part

	// A part read back from an encoding (codec.go) holds no builder: enc
	// is its rows, a skyfall binary trace of rows rows whose labels, in
	// order, are labels, until it is spilled or released.
	enc    []byte
	labels []string

	// Where Spill put the rows: size bytes at off in the object's spill
	// file, a skyfall binary trace of rows rows.
	rows      int
	off, size int64

	// In a chunk's part (chunks.go): each label new to the part, with the
	// line that brought it.
	newLabels []labelLine

	// The metadata candidates that a row need not compare (objectDecoder.add):
	// while the decoder's cacheGen is sameGen-1, a row whose values of the
	// keys sameKeys all repeat their cached values leaves every candidate as
	// it is. sameGen 0: no such state.
	sameKeys uint64
	sameGen  uint64
}

type labelLine struct {
	label string
	line  int
}

type labelOrigin struct {
	origin, alias       string
	hasOrigin, hasAlias bool
}

// origin returns the first origin and alias of label within the part, as
// Builder.AppendRows and Builder.AddTrace take them.
func (p *part) origin(label string) skyfall.LabelOrigin {
	lo := p.origins[label]
	return skyfall.LabelOrigin{Origin: lo.origin, AliasOf: lo.alias, HasOrigin: lo.hasOrigin, HasAliasOf: lo.hasAlias}
}

// addOrigin keeps lo's origin and alias as label's in the part unless the
// label has one already: a label keeps the first of each.
func (p *part) addOrigin(label string, lo labelOrigin) {
	if p.origins == nil {
		p.origins = map[string]labelOrigin{}
	}
	cur := p.origins[label]
	changed := false
	if lo.hasOrigin && !cur.hasOrigin {
		cur.origin, cur.hasOrigin, changed = lo.origin, true, true
	}
	if lo.hasAlias && !cur.hasAlias {
		cur.alias, cur.hasAlias, changed = lo.alias, true, true
	}
	if changed {
		p.origins[label] = cur
	}
}

// DecodeObject reads one object (plain, gzip or zstd, sniffed from its
// first bytes), decodes every row and groups the rows by run identity.
// url names the object in errors; key is its key relative to the input
// prefix and becomes the runs' `source` (and the anonymous run key).
//
// A *DataError reports bad data (with url, 1-based line and field); an
// error of r is returned wrapped (errors.Is sees it), never as a DataError;
// invalid opts give a plain error. With opts.OnBadRow set, bad rows go to
// it instead (skipped, or the error it returns is returned as it is).
func DecodeObject(url, key string, r io.Reader, opts Options) (*ObjectRuns, error) {
	opts, err := opts.normalize()
	if err != nil {
		return nil, err
	}
	od := newObjectDecoder(&ObjectRuns{ObjectInfo: ObjectInfo{URL: url, Key: key}, comps: opts.Components}, opts)
	err = readLines(&od.obj.ObjectInfo, r, opts.MaxObjectBytes, opts.MaxLineBytes, od.inPlace, od.line)
	od.release()
	if err != nil {
		return nil, err
	}
	return od.obj, nil
}

func newObjectDecoder(obj *ObjectRuns, opts Options) *objectDecoder {
	od := &objectDecoder{
		obj:      obj,
		opts:     opts,
		pool:     rowDecoderPoolFor(opts.Components, opts.IdentityFields),
		intern:   map[string]string{},
		idPos:    make([]int, len(opts.IdentityFields)),
		idIDs:    make([]uint8, len(opts.IdentityFields)),
		lastGens: make([]uint64, len(opts.IdentityFields)),
	}
	od.dec = od.pool.get(opts.Components, opts.IdentityFields)
	for i, f := range opts.IdentityFields {
		od.idIDs[i] = od.dec.top.intern([]byte(f), -1)
	}
	od.g = newGrouper(obj.URL, obj.Key, opts.IdentityFields, opts.MaxRuns, od.newPart)
	return od
}

// release hands the row decoder back for another object (decpool.go):
// the object's runs, rows and errors hold copies of what it decoded.
func (od *objectDecoder) release() {
	od.pool.put(od.dec)
	od.dec = nil
}

// line decodes line n of the object and adds it to its run; a bad row goes
// to opts.OnBadRow. The error ends the object.
func (od *objectDecoder) line(line []byte, n int) error {
	if isBlank(line) {
		return nil
	}
	if rerr := od.dec.decode(line); rerr != nil {
		// Nothing of the row has been applied yet: decode validates the
		// whole line before partFor and add touch any state.
		return od.obj.skipRow(od.opts.OnBadRow, rerr.at(od.obj.URL, n))
	}
	return od.addRow(n)
}

// inPlace decodes the row at the start of data, whose bytes may run on
// past its line, as line n, when its line ends within data and holds a
// valid row (rowDecoder.decodeInPlace), and adds it to its run; it returns
// the line's length with its '\n', or 0 when it did not take the line,
// which line then decodes (a blank line, a bad row, a line not all in
// data). The error ends the object.
func (od *objectDecoder) inPlace(data []byte, n int) (int, error) {
	end, ok := od.dec.decodeInPlace(data)
	if !ok {
		return 0, nil
	}
	return end + 1, od.addRow(n)
}

// addRow adds the row just decoded, line n, to its run.
func (od *objectDecoder) addRow(n int) error {
	p, err := od.partFor(n)
	if err != nil {
		return err
	}
	if err := od.add(p, n); err != nil {
		return err
	}
	od.obj.Rows++
	return nil
}

// skipRow hands a bad row to onBad (OnBadRow) and counts it skipped, or
// returns the error that ends the object (the row's own when there is no
// onBad).
func (o *ObjectInfo) skipRow(onBad BadRowFunc, bad *DataError) error {
	if onBad == nil {
		return bad
	}
	if err := onBad(bad); err != nil {
		return err
	}
	o.Skipped++
	return nil
}

// locate adds the URL and line to an error of the line reader or the
// decompressor.
func locate(err error, url string, line int) error {
	var de *DataError
	if errors.As(err, &de) {
		e := *de
		e.URL, e.Line = url, line
		return &e
	}
	var se *storageError
	if errors.As(err, &se) {
		return fmt.Errorf("%s: line %d: read: %w", url, line, se.err)
	}
	return fmt.Errorf("%s: line %d: read: %w", url, line, err)
}

type objectDecoder struct {
	obj      *ObjectRuns
	opts     Options
	dec      *rowDecoder
	pool     *rowDecoderPool // where dec came from and goes back to
	g        grouper[*part]
	intern   map[string]string
	idPos    []int   // where each identity field was in the last row's extras
	idIDs    []uint8 // each identity field's key ID in dec's keyTable
	labelGen int     // dec.labelGen when label was interned
	label    string
	sig      []byte
	lastSig  []byte
	lastPart *part
	lastGens []uint64 // per identity field: 0 absent, else the version of its cached value
	gensOK   bool     // lastGens describe lastPart's row
	// While dec.cacheGen is idGen-1 (no cached value changed since lastGens
	// were found to hold), a row on which the identity keys idHit repeat
	// their cached values and the keys idAbsent are absent repeats
	// lastGens (sameAsLast). idGen 0: not known.
	idGen    uint64
	idHit    uint64
	idAbsent uint64
	tmp      []byte
	chunk    bool                        // decoding one chunk of the object (chunks.go)
	builders *freeList[*skyfall.Builder] // for new runs (chunks.go); nil: new ones
}

// sameAsLast reports whether every identity field of the current row is
// absent, or repeats its cached value, exactly as on the last row given a
// part: then the row belongs to that part, with no signature to build.
func (od *objectDecoder) sameAsLast() bool {
	if !od.gensOK || od.lastPart == nil {
		return false
	}
	d := od.dec
	if od.idGen == d.cacheGen+1 && d.exHits&od.idHit == od.idHit && d.exSeen&od.idAbsent == 0 {
		return true
	}
	for i, id := range od.idIDs {
		var g uint64
		if j := d.extraAt(id, "", 0); j >= 0 && d.extras[j].kind != kindNull {
			if !d.extras[j].hit {
				return false
			}
			g = d.top.keys[id].gen
		}
		if g != od.lastGens[i] {
			return false
		}
	}
	od.idGen = d.cacheGen + 1
	return true
}

// noteGens records the identity fields' cache versions of the current row,
// whose part partFor has just found.
func (od *objectDecoder) noteGens() {
	d := od.dec
	od.gensOK = true
	od.idGen, od.idHit, od.idAbsent = 0, 0, 0
	for i, id := range od.idIDs {
		if id == noKey {
			od.gensOK = false
			return
		}
		var g uint64
		if j := d.extraAt(id, "", 0); j >= 0 && d.extras[j].kind != kindNull {
			if !d.extras[j].hit {
				od.gensOK = false
				return
			}
			g = d.top.keys[id].gen
			od.idHit |= 1 << id
		} else {
			od.idAbsent |= 1 << id
		}
		od.lastGens[i] = g
	}
	od.idGen = d.cacheGen + 1
}

// partFor returns the part of the current row's identity.
func (od *objectDecoder) partFor(line int) (*part, error) {
	if od.sameAsLast() {
		return od.lastPart, nil
	}
	p, err := od.findPart(line)
	if err == nil {
		od.noteGens()
	}
	return p, err
}

// findPart is partFor on the general path.
func (od *objectDecoder) findPart(line int) (*part, error) {
	ex := od.dec.extras
	sig := od.sig[:0]
	for i, f := range od.opts.IdentityFields {
		j := od.dec.extraAt(od.idIDs[i], f, od.idPos[i])
		if j < 0 || ex[j].kind == kindNull {
			sig = append(sig, 0)
			continue
		}
		if k := ex[j].kind; k == kindObject || k == kindArray {
			return nil, &DataError{URL: od.obj.URL, Line: line, Field: f,
				Msg: fmt.Sprintf("an identity field must be a string, number or boolean, got %s", kindName(k))}
		}
		od.idPos[i] = j
		if ex[j].hit {
			// The bytes of the key's cached value, version gen: shorter
			// than the bytes, and never equal to the marker of other
			// bytes (a kind is a letter). Equal identities may still
			// differ here (one cached, one not); canonical values settle
			// that below.
			sig = append(sig, 1)
			sig = binary.AppendUvarint(sig, uint64(od.dec.top.keys[ex[j].id].gen))
			continue
		}
		sig = append(sig, ex[j].kind)
		sig = binary.AppendUvarint(sig, uint64(len(od.dec.exVal(&ex[j]))))
		sig = append(sig, od.dec.exVal(&ex[j])...)
	}
	od.sig = sig
	if od.lastPart != nil && bytes.Equal(sig, od.lastSig) {
		return od.lastPart, nil
	}
	od.lastSig = append(od.lastSig[:0], sig...)

	// A new raw identity: compare canonical values.
	for i, f := range od.opts.IdentityFields {
		v := rawValue{kind: kindNull}
		if j := od.dec.extraAt(od.idIDs[i], f, od.idPos[i]); j >= 0 {
			v = rawValue{od.dec.exVal(&ex[j]), ex[j].kind}
		}
		od.g.vals[i] = v
	}
	carried, err := od.g.identify(line)
	if err != nil {
		return nil, err
	}
	p, err := od.g.find(line, carried)
	if err != nil {
		return nil, err
	}
	od.lastPart = p
	return p, nil
}

func tooManyLabels(url string, line int, runKey string, max int) error {
	return &DataError{URL: url, Line: line, Field: "regime_id",
		Msg: fmt.Sprintf("run %s has more than %d labels (the limit set by --max-labels)", runKey, max), Err: ErrLimit}
}

// newPart makes the part of h, a new run of the object.
func (od *objectDecoder) newPart(h partHeader) *part {
	var b *skyfall.Builder
	if od.builders != nil {
		b, _ = od.builders.get()
	}
	if b != nil {
		b.Reset(h.runKey)
	} else {
		b = skyfall.NewBuilder(h.runKey, od.opts.Components)
	}
	p := &part{partCore: partCore{partHeader: h}, b: b}
	od.obj.parts = append(od.obj.parts, p)
	return p
}

func (od *objectDecoder) internBytes(b []byte) string {
	if s, ok := od.intern[string(b)]; ok {
		return s
	}
	s := string(b)
	od.intern[s] = s
	return s
}

// add appends the current row to p and updates p's metadata candidates.
func (od *objectDecoder) add(p *part, line int) error {
	d := od.dec
	row := &d.row
	if od.labelGen != d.labelGen {
		od.label, od.labelGen = od.internBytes(d.label), d.labelGen
	}
	row.Label = od.label
	row.Origin, row.AliasOf = "", ""
	if row.HasOrigin {
		row.Origin = od.internBytes(d.origin)
	}
	if row.HasAliasOf {
		row.AliasOf = od.internBytes(d.alias)
	}
	nl := p.b.NumLabels()
	p.b.Add(row)
	if p.b.NumLabels() > nl {
		if od.chunk {
			p.newLabels = append(p.newLabels, labelLine{row.Label, line})
		}
		if p.b.NumLabels() > od.opts.MaxLabels {
			return tooManyLabels(od.obj.URL, line, p.runKey, od.opts.MaxLabels)
		}
	}
	if row.HasOrigin || row.HasAliasOf {
		p.addOrigin(row.Label, labelOrigin{row.Origin, row.AliasOf, row.HasOrigin, row.HasAliasOf})
	}

	ex := d.extras
	if p.b.Len() == 1 {
		for i, e := range ex {
			if e.kind != kindNull {
				p.addCandidate(string(d.exKey(&ex[i])), uint32(e.id), bytes.Clone(d.exVal(&ex[i])), e.kind, i)
			}
		}
		return nil
	}
	// Every live candidate's key repeated the cached value it was last found
	// equal to, and no cached value has changed since: the loop below would
	// change nothing.
	if p.sameGen == d.cacheGen+1 && d.exHits&p.sameKeys == p.sameKeys {
		return nil
	}
	same, keys := true, uint64(0)
	for i := range p.cands {
		c := &p.cands[i]
		if !c.alive {
			continue
		}
		j := d.extraAt(uint8(c.key), c.name, c.pos)
		if j < 0 || ex[j].kind == kindNull {
			c.alive = false
			continue
		}
		c.pos = j
		// A value that repeats the key's cached value of a version
		// already found to be c's value needs no comparison.
		hit := ex[j].hit
		if !hit || d.top.keys[ex[j].id].gen != c.gen {
			if raw := d.exVal(&ex[j]); !bytes.Equal(raw, c.raw) {
				od.tmp = c.differs(raw, ex[j].kind, od.tmp)
			}
			if hit && c.alive {
				c.gen = d.top.keys[ex[j].id].gen
			}
		}
		// Later rows may skip this loop only if every live candidate's
		// value was its key's cached value (a hit has a key of the table).
		if c.alive {
			same = same && hit
			keys |= 1 << ex[j].id
		}
	}
	p.sameGen = 0
	if same {
		p.sameKeys, p.sameGen = keys, d.cacheGen+1
	}
	return nil
}
