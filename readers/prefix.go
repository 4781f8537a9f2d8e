package readers

import (
	"bytes"
	"math/bits"
)

// The rows of an object nearly always start alike: the run's identity and
// metadata (run_id, seed, algorithm_id, ...), byte for byte the values the
// row before had. Each such member costs a predicted key, a colon, a
// comparison with the key's cached value and an extra. A prefix keeps the
// raw bytes of the last row up to its first member that is not a repeated
// cached value (a schema field, gamma, a key the table lacks, a value that
// differs from its key's cached value), and what decoding them gave: a row
// that starts with the same bytes, and has more after them, takes all of it
// over with one comparison.
//
// That gives exactly what decoding those bytes would: they are a valid
// start of a row (the last row decoded them), and each of their members
// would again be a repeated cached value. A key's cached value changes
// only when the key is decoded with another value (keyInfo.remember), the
// cache stops (keyInfo.off) only then too, and no key of the prefix was
// decoded after it was recorded: it was recorded by the last row decode
// was given (a row that does not take it over records its own, or none),
// which cannot hold a key twice, and a row that takes it over holds its
// keys only in it. The extras of its members are the first ones of the
// row, left in place in d.extras by the row that recorded them, as are
// their exAt; what a row sets for them (exSeen, exHits, the IDs met, the
// key before the next) the replay sets, and it counts the keys' hits
// (credit) for flushHits to add before any of them is decoded again.
type prefix struct {
	raw  []byte // the row's bytes up to the next key, whitespace included
	n    int    // members: the first n extras
	ids  uint64 // their keys' IDs
	last uint8  // the ID of the last of them
	bare int    // how many of their keys are not written in their quoted form (keyInfo.quoted): never predicted
	used int    // rows that took it over (tests)

	// Rows that took the prefix over since its keys' hits (keyInfo.hits)
	// were last brought up to date: each of them is a hit of each key in
	// ids. flushHits adds them before the prefix changes, so that they are
	// there when a key is decoded again (keyInfo.remember reads hits).
	credit int

	// What the row being decoded records: from nothing, or from the
	// prefix it took over; end makes it the prefix when it is longer.
	rEnd  int // where the next key starts
	rN    int
	rIDs  uint64
	rLast uint8
	rBare int
}

// flushHits adds the hits of the rows that took the prefix over to its
// keys' counts.
func (p *prefix) flushHits(t *keyTable) {
	if p.credit == 0 {
		return
	}
	for m := p.ids; m != 0; m &= m - 1 {
		t.keys[bits.TrailingZeros64(m)].hits += p.credit
	}
	p.credit = 0
}

// reset forgets the prefix; a row records its own as it is decoded.
func (p *prefix) reset(t *keyTable) {
	p.flushHits(t)
	p.raw = p.raw[:0]
	p.rEnd, p.rN, p.rIDs, p.rBare = 0, 0, 0, 0
}

// add records that the member of key id, a repeated cached value, and the
// ',' after it end at d.pos, where the next key starts; escaped reports
// that the key was written with escapes.
func (p *prefix) add(d *rowDecoder, id uint8, escaped bool) {
	p.rEnd = d.pos
	p.rN++
	p.rIDs |= 1 << id
	p.rLast = id
	if escaped || d.top.keys[id].quoted == nil {
		p.rBare++ // the prediction never finds the key (keyTable.predict)
	}
}

// end ends the recording at the last member added: that is the prefix
// now, when the row recorded more than the prefix it took over.
func (p *prefix) end(d *rowDecoder) {
	if p.rEnd > len(p.raw) {
		p.flushHits(d.top)
		p.raw = append(p.raw[:0], d.data[:p.rEnd]...)
		p.n, p.ids, p.last, p.bare = p.rN, p.rIDs, p.rLast, p.rBare
	}
}

// matches reports whether the row d decodes starts with the prefix and
// has more bytes after it.
func (p *prefix) matches(d *rowDecoder) bool {
	n := len(p.raw)
	return n > 0 && !d.noPrefix && len(d.data) > n && bytes.Equal(d.data[:n], p.raw)
}

// replayPrefix applies the prefix to the row being decoded (openRow has
// read its '{') and returns the ID of its last key and the IDs of its
// keys, as the members' loop would have them.
func (d *rowDecoder) replayPrefix() (prev uint8, ids uint64) {
	p := &d.pfx
	p.used++
	p.rEnd, p.rN, p.rIDs, p.rLast, p.rBare = len(p.raw), p.n, p.ids, p.last, p.bare
	d.pos = len(p.raw)
	d.skipWS() // the row may have more whitespace there than the last
	d.extras = d.extras[:p.n]
	d.exSeen, d.exHits = p.ids, p.ids
	p.credit++
	t := d.top
	// The row before read the same keys in the same order, so the
	// prediction tries each and misses only the keys it never predicts
	// (in find-first mode, misses are not counted: keyTable.findFirst).
	t.nKeys += p.n
	if !t.findFirst {
		t.nMisses += p.bare
	}
	d.fieldRef = p.last + 1
	return p.last, p.ids
}
