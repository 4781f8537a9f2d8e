package readers

import (
	"bytes"
	"encoding/binary"
	"math/bits"
)

// The rows of one object nearly always repeat one shape: the same keys in
// the same order, most identity and metadata values unchanged from the
// previous row. The row decoder exploits that without trusting it: a
// keyTable numbers the keys it has met, predicts each key from the one
// before it (one of the last two keys seen after it), and confirms the
// prediction by comparing the raw bytes; a value cache skips the
// validation of a value whose raw bytes equal the last valid value of the
// same key. Whatever does not match takes the general path, so a row
// decodes to exactly what a fresh decoder gives it, error messages
// included (FuzzDecodeSequence checks this).

// maxKeys bounds a keyTable: its keys' IDs are bits of a uint64. Keys met
// once the table is full take the general path (keySet) for good.
const maxKeys = 64

// noKey is the ID of no key: a key not in the table, or no prediction.
// startKey stands for the start of an object, before its first key.
const (
	noKey    uint8 = 0xff
	startKey uint8 = 0xfe
)

// keyInfo is one key of a keyTable.
type keyInfo struct {
	name   []byte  // the decoded key
	quoted []byte  // `"name"` when those raw bytes decode to name, else nil
	q      pattern // quoted, for a quick comparison
	qc     pattern // quoted and its colon (colonForm), or noPattern
	qcn    uint8   // the length of qc's bytes; 0 until colonForm has run
	field  int     // what the key is to the decoder (schema field, component index), or -1
	id     uint8   // its ID
	next   uint8   // the ID of the key that followed this one last time, or noKey
	alt    uint8   // the one that followed it before, when it was another key
	chain  uint8   // the next key of the same bucket (keyTable.buckets), or noKey

	// The value cache (top-level keys other than schema fields).
	last     []byte  // raw text of the last valid value; nil when none or off
	lastP    pattern // last, for a quick comparison
	lastKind byte    // its kind
	lastNum  float64 // its value, when the key is gamma and the value a number
	gen      uint64  // counts the changes of last
	hits     int
	misses   int
	off      bool // values change too often for the cache to pay
}

// keyTable numbers the keys of one object level (the top level, or the
// components object) across the rows of an object.
type keyTable struct {
	keys     []keyInfo
	ids      map[string]uint8
	first    uint8 // the ID of the first key of the last object, or noKey
	firstAlt uint8 // the first key of an object before, when it was another

	// after[prev] is the key that followed key prev last time (keyInfo.next;
	// after[startKey] is first), noKey when none (after[noKey] always): what
	// predictedColon tries, in one load.
	after [256]uint8

	// The keys with a quoted form and a name of one byte or more, by
	// bucketOf their first two raw bytes after the quote: the head of each
	// bucket's chain (keyInfo.chain), or noKey. find looks a key up there
	// when the prediction fails (keys in varying order: dicts that Python
	// builds in another order on every row).
	buckets [256]uint8

	// A bucket whose chain holds crowdedChain keys or more is crowded
	// (crowded, one bit a bucket): keys of one prefix (obs_0 … obs_59)
	// share their first two bytes, and find walked the whole chain for
	// every key it missed. find looks the keys of a crowded bucket up in
	// byRaw instead: an open-addressed table of 256 slots (at most 64 keys)
	// by rawHash of a key's raw bytes, holding the key's ID plus one (0: an
	// empty slot).
	crowded [4]uint64
	byRaw   [256]uint8

	// Which way key looks first: the prediction, or find when the
	// predictions of the last 64 rows missed more than one key in ten
	// (keys in another order on every row). adapt decides every 64 rows
	// from the counts of the prediction's tries and misses; after 16 such
	// windows of find first, the prediction is tried again. In find-first
	// mode every key read counts a try and none a miss (adapt does not
	// read them then), whichever way it was found: the inline prediction,
	// tried first all the same, or key.
	findFirst      bool
	windows        int
	nKeys, nMisses int
}

// adapt sets findFirst (keyTable) at the end of a window of 64 rows.
func (t *keyTable) adapt() {
	if t.findFirst {
		if t.windows++; t.windows == 16 {
			t.findFirst, t.windows = false, 0
		}
	} else {
		t.findFirst = t.nMisses*10 > t.nKeys
	}
	t.nKeys, t.nMisses = 0, 0
}

func newKeyTable() *keyTable {
	t := &keyTable{ids: make(map[string]uint8), first: noKey, firstAlt: noKey}
	for i := range t.buckets {
		t.buckets[i] = noKey
		t.after[i] = noKey
	}
	return t
}

// bucketOf hashes the two bytes after a key's opening quote (the second
// is the closing quote for a name of one byte).
func bucketOf(c1, c2 byte) uint8 { return c1*31 + c2 }

// intern returns the ID of name, adding it (with field) when the table has
// room; noKey when it has none.
func (t *keyTable) intern(name []byte, field int) uint8 {
	if id, ok := t.ids[string(name)]; ok {
		return id
	}
	if len(t.keys) >= maxKeys {
		return noKey
	}
	id := uint8(len(t.keys))
	k := keyInfo{name: bytes.Clone(name), field: field, id: id, next: noKey, alt: noKey, chain: noKey}
	if k.name == nil {
		k.name = []byte{}
	}
	k.q, k.qc = noPattern, noPattern
	if plainKey(name) {
		k.quoted = make([]byte, 0, len(name)+2)
		k.quoted = append(append(append(k.quoted, '"'), name...), '"')
		k.q = makePattern(k.quoted)
		if len(name) > 0 {
			// At the end of its bucket's chain: the keys met first,
			// on nearly every row, are compared first (reward before
			// regime_id, value before the episode keys of a few rows).
			b := bucketOf(k.quoted[1], k.quoted[2])
			p, n := &t.buckets[b], 0
			for *p != noKey {
				p = &t.keys[*p].chain
				n++
			}
			*p = id
			switch {
			case t.crowded[b>>6]&(1<<(b&63)) != 0:
				t.addRaw(k.quoted, id)
			case n+1 >= crowdedChain:
				t.crowded[b>>6] |= 1 << (b & 63)
				// The chain's keys, then k, its last (not in t.keys yet).
				for c := t.buckets[b]; c != id; c = t.keys[c].chain {
					t.addRaw(t.keys[c].quoted, c)
				}
				t.addRaw(k.quoted, id)
			}
		}
	}
	t.keys = append(t.keys, k)
	t.ids[string(k.name)] = id
	return id
}

// lookup returns the ID of name, or noKey when it is not in the table.
func (t *keyTable) lookup(name string) uint8 {
	if id, ok := t.ids[name]; ok {
		return id
	}
	return noKey
}

// plainKey reports whether `"name"` as raw JSON decodes to name: printable
// ASCII without '"' or '\\'.
func plainKey(name []byte) bool {
	for _, c := range name {
		if c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// predict returns the predicted key's ID when data at pos starts with its
// quoted form (then the key string ends at pos+len(quoted)), else noKey.
func (t *keyTable) predict(prev uint8, data []byte, pos int) uint8 {
	p, alt := t.first, t.firstAlt
	if prev != startKey {
		if prev == noKey {
			return noKey
		}
		p, alt = t.keys[prev].next, t.keys[prev].alt
	}
	if p == noKey {
		return noKey
	}
	if k := &t.keys[p]; k.quoted != nil && k.q.at(data, pos, k.quoted) {
		return p
	}
	// An optional field (effective_rank on some rows) makes two keys
	// alternate after the one before it.
	if alt == noKey {
		return noKey
	}
	if k := &t.keys[alt]; k.quoted != nil && k.q.at(data, pos, k.quoted) {
		return alt
	}
	return noKey
}

// colonForm sets k.qc, the first time k is met with its quoted form
// followed by a colon (pos is where the quoted form ends in data): the
// quoted form and the colon as they are written there, `"name":` or, when
// one space follows the colon (json.dumps), `"name": `, when that is 16
// bytes or fewer. predictedColon compares it.
func (k *keyInfo) colonForm(data []byte, pos int) {
	if k.quoted == nil || pos >= len(data) || data[pos] != ':' {
		return
	}
	b := append(append([]byte(nil), k.quoted...), ':')
	if pos+1 < len(data) && data[pos+1] == ' ' {
		b = append(b, ' ')
	}
	k.qc, k.qcn = makePattern(b), uint8(len(b))
}

// predictedColon is the fast path of rowDecoder.key and colon, small
// enough to be inlined where a key is read: the key first predicted after
// prev (what predict tries first) when its quoted form and the colon after
// it, as the key's first row wrote them (keyInfo.qc, at most 16 bytes), are
// at pos of data with 16 bytes to read there; else nil, and key does the
// rest (trying the prediction again by its quoted form alone). The key and
// the colon then take keyInfo.qcn bytes; whitespace after them is the
// caller's. A key without such a form has a pattern that matches nothing
// (noPattern). The caller counts the try (nKeys) as key does; there is
// nothing to record (follow), as the key is the one that followed prev
// last time. It is tried in find-first mode too (findFirst, where key
// compares a bucket's head first): the irregular shape's rows repeat about
// half their keys' order (run_id to task, reward, regime_id), and not
// testing findFirst here costs the regular shape's keys a load and a
// branch less (seventh round: regular +1.7 %, irregular unchanged). The
// colon in the pattern (eighth round): irregular +0.7 to +1.4 %, regular
// unchanged.
func (t *keyTable) predictedColon(prev uint8, data []byte, pos int) *keyInfo {
	if len(data)-pos < 16 {
		return nil
	}
	p := t.after[prev]
	if p == noKey {
		return nil
	}
	k := &t.keys[p]
	if (binary.LittleEndian.Uint64(data[pos:])&k.qc.m[0]^k.qc.w[0])|(binary.LittleEndian.Uint64(data[pos+8:])&k.qc.m[1]^k.qc.w[1]) != 0 {
		return nil
	}
	return k
}

// find returns the ID of the key whose quoted form data at pos starts
// with (then the key string ends at pos+len(quoted)), else noKey: what
// scanning the string and looking it up would give, for a key of the table
// with a quoted form.
func (t *keyTable) find(data []byte, pos int) uint8 {
	if pos+2 >= len(data) {
		return noKey
	}
	b := bucketOf(data[pos+1], data[pos+2])
	if t.crowded[b>>6]&(1<<(b&63)) != 0 && pos+17 <= len(data) {
		return t.findRaw(data, pos)
	}
	for id := t.buckets[b]; id != noKey; {
		k := &t.keys[id]
		if k.q.at(data, pos, k.quoted) {
			return id
		}
		id = k.chain
	}
	return noKey
}

// crowdedChain is the length of a bucket's chain from which its keys are
// looked up by rawHash (keyTable.crowded).
const crowdedChain = 8

// rawHash hashes the raw bytes of the key whose quoted form starts at
// q[0] (q holds at least 17 bytes from there: an opening quote, then 16):
// the bytes before the first '"' of the 16 (the whole key, for a plain key
// of up to 15 bytes), or all 16 (the first 16 of a longer key), with how
// many were kept. A key of the table is hashed from its quoted form
// followed by zero bytes; a key in a line from the line, whose bytes after
// the closing quote the mask drops.
func rawHash(q []byte) uint8 {
	const quotes = 0x2222222222222222
	const lo, hi = 0x0101010101010101, 0x8080808080808080
	w0 := binary.LittleEndian.Uint64(q[1:])
	w1 := binary.LittleEndian.Uint64(q[9:])
	n := uint64(16)
	if z := w0 ^ quotes; (z-lo)&^z&hi != 0 {
		n = uint64(bits.TrailingZeros64((z-lo)&^z&hi)) / 8
		w0 &= 1<<(8*n) - 1
		w1 = 0
	} else if z := w1 ^ quotes; (z-lo)&^z&hi != 0 {
		j := uint64(bits.TrailingZeros64((z-lo)&^z&hi)) / 8
		w1 &= 1<<(8*j) - 1
		n = 8 + j
	}
	h := (w0*0x9E3779B97F4A7C15 ^ w1*0xC2B2AE3D27D4EB4F ^ n*0x165667B19E3779F9) * 0xD6E8FEB86659FD93
	return uint8(h >> 56)
}

// addRaw puts key id, of quoted form quoted, in byRaw.
func (t *keyTable) addRaw(quoted []byte, id uint8) {
	var q [17]byte
	copy(q[:], quoted) // the quote and up to 16 bytes after it
	for i := rawHash(q[:]); ; i++ {
		if t.byRaw[i] == 0 {
			t.byRaw[i] = id + 1
			return
		}
	}
}

// findRaw is find for a key of a crowded bucket, at pos of data (17 bytes
// or more from there): the keys of byRaw from the key's rawHash on, until
// an empty slot, compared whole.
func (t *keyTable) findRaw(data []byte, pos int) uint8 {
	for i := rawHash(data[pos:]); t.byRaw[i] != 0; i++ {
		k := &t.keys[t.byRaw[i]-1]
		if k.q.at(data, pos, k.quoted) {
			return k.id
		}
	}
	return noKey
}

// pattern holds a short byte string (up to 16 bytes) as two masked
// little-endian words, so that finding it at a position of a line takes
// two loads and compares instead of a call to bytes.Equal.
type pattern struct {
	w, m [2]uint64
}

// noPattern is what makePattern returns for more than 16 bytes: a pattern
// that matches no bytes (its mask keeps none of them, its word is not 0).
// pattern.at never uses it: it compares longer strings with bytes.Equal.
var noPattern = pattern{w: [2]uint64{1, 1}}

func makePattern(b []byte) pattern {
	var p pattern
	if len(b) > 16 {
		return noPattern
	}
	var buf [16]byte
	copy(buf[:], b)
	for i := range 2 {
		p.w[i] = binary.LittleEndian.Uint64(buf[8*i:])
		if n := len(b) - 8*i; n >= 8 {
			p.m[i] = ^uint64(0)
		} else if n > 0 {
			p.m[i] = 1<<(8*uint(n)) - 1
		}
	}
	return p
}

// at reports whether data at pos starts with b, the bytes of p.
func (p *pattern) at(data []byte, pos int, b []byte) bool {
	if pos+16 <= len(data) && len(b) <= 16 {
		return (binary.LittleEndian.Uint64(data[pos:])&p.m[0]^p.w[0])|(binary.LittleEndian.Uint64(data[pos+8:])&p.m[1]^p.w[1]) == 0
	}
	return atSlow(data, pos, b)
}

func atSlow(data []byte, pos int, b []byte) bool {
	return len(data)-pos >= len(b) && bytes.Equal(data[pos:pos+len(b)], b)
}

// follow records that key id came after key prev (startKey: first). After
// a key not in the table there is nothing to record.
func (t *keyTable) follow(prev, id uint8) {
	switch prev {
	case startKey:
		if t.first != id {
			t.firstAlt, t.first = t.first, id
			t.after[startKey] = id
		}
	case noKey:
	default:
		if k := &t.keys[prev]; k.next != id {
			k.alt, k.next = k.next, id
			t.after[prev] = id
		}
	}
}

// cached returns the length of the cached value of k when the raw bytes at
// pos repeat it, else 0. A number must also end where the cached one ends
// ("3" is not a prefix match of "35").
func (k *keyInfo) cached(data []byte, pos int) int {
	n := len(k.last)
	if n == 0 || !k.lastP.at(data, pos, k.last) {
		return 0
	}
	if k.lastKind == kindNumber && pos+n < len(data) {
		switch data[pos+n] {
		case '0', '1', '2', '3', '4', '5', '6', '7', '8', '9', '.', 'e', 'E', '+', '-':
			return 0
		}
	}
	return n
}

// maxCachedValue is the longest value cached: a longer one costs a copy
// (of a line's length, for a long line's padding) and saves little.
const maxCachedValue = 64 << 10

// remember keeps val, just validated, as k's cached value, unless the
// cache has stopped paying for k or val is too long to keep (the cache
// keeps its value then). It reports whether val is the cached value now.
func (k *keyInfo) remember(val []byte, kind byte) bool {
	k.misses++
	if k.misses > 32 && k.misses > 2*k.hits {
		k.off, k.last = true, nil
		return false
	}
	if len(val) > maxCachedValue {
		return false
	}
	k.last = append(k.last[:0], val...)
	k.lastP = makePattern(k.last)
	k.lastKind = kind
	k.gen++
	return true
}
