package readers

import (
	"bytes"
	"encoding/binary"
	"math/bits"
	"slices"

	"github.com/crlbatch/crlbatch/protocol/skyfall"
)

// A row's prefix (prefix.go) helps only where rows start alike. Rows that
// Python's json.dumps writes from dicts built in varying order hold the
// same blocks of repeated cached members (the identity run_id ... task;
// host and git_commit) byte for byte, but wherever the row's order puts
// them. A key block keeps, for a key that started a run of such members
// (non-schema keys other than gamma whose values repeat their key's cached
// value), the raw bytes of that run from the key's opening quote to the
// last member's value, with what decoding them gave. When the member loop
// reads that key again, anywhere in a row, the bytes from it are compared
// with the block, and the members they repeat are taken over at once: all
// of them, or the first ones up to the first byte that differs. What
// follows the last one's value (a ',', whitespace, the row's '}', the
// line's end, anything else) the loop reads as after any value.
//
// That gives exactly what the member loop would: the loop's result for
// the bytes from a key on depends only on those bytes, on the keys the
// row met before (a key met again is an error: a block's members are
// taken over only up to the first whose key the row has met, and the loop
// reads that one and fails) and on the keys' cached values. A block's
// members were repeated cached values when it was recorded, in a row that
// decoded them without error (which cannot hold a key twice), and stay so
// while their keys' cached values do not change: a key's cached value
// changes only with its keyInfo.gen, which each member keeps from the
// recording, and its cache stops (keyInfo.off) for good; a block's members
// are taken over only up to the first whose key's gen differs or whose
// cache is off.
// The last member's value ends where the block's bytes end; a number must
// also not go on after it ("3" is not "35", as keyInfo.cached checks), and
// the members before end with the ',' and the whitespace up to the next
// key, so a row with other whitespace there differs there. A block taken
// over appends its members' extras where the loop would, sets exSeen,
// exHits and exAt as extraValue would, counts its keys' hits, and records
// in the key table what reading its keys would (the tries and misses of
// the prediction, the key that follows each: keyTable.follow).
//
// The member loop only takes blocks over; recordBlocks records them after
// a row that decoded without error and read repeated cached values one by
// one (not taken over from the prefix or a block): each run of two or more
// such members, adjacent in the row (nothing but the ',' and whitespace
// between them), becomes its first key's block. A block that a row repeats
// in part, up to a byte that differs, is cut to the members taken, so that
// blocks settle on the runs that rows repeat (a row that ends inside a
// block, or meets one of its keys before it, fails and cuts nothing). Keys
// written with escapes start or continue no run: their raw bytes are not
// their quoted form.
//
// The member loop with blocks is a copy of rowDecoder.decode's
// (decodeBlocks), used while the top-level key table looks keys up first
// (keyTable.findFirst: keys in another order on many rows, the irregular
// shape), so that rows in the order of the row before (the regular shape,
// whose repeated members the prefix takes over) run decode's loop
// unchanged: with blocks in the one loop, the whole job's CPU on the
// regular shape went up 1-2 % (docs/performance.md, fifth round). The
// blocks stay while the table does not look keys up first, and the
// members' gens keep them exact.

// blockMember is one member of a key block; offsets are relative to the
// block's start (its first key's opening quote).
type blockMember struct {
	vs, ve int32  // the value, without surrounding whitespace (extra.vs, extra.ve)
	end    int32  // where the member ends, but for the last: the next key
	gen    uint64 // its key's keyInfo.gen when the block was recorded
	id     uint8
	kind   byte
}

// keyBlock is the block of the key that starts it: its raw bytes end with
// its last member's value.
type keyBlock struct {
	raw []byte
	mem []blockMember
	ids uint64 // the IDs of its members' keys
}

// keyBlocks are a decoder's blocks, by the ID of the key that starts them.
type keyBlocks struct {
	at      [maxKeys]keyBlock
	scratch []blockMember // recordBlocks' run, before it is a block
	n       int           // the members the last takeBlock took
	used    int           // members taken over (tests)
}

// commonLen returns the length of the longest common prefix of a and b.
func commonLen(a, b []byte) int {
	n := min(len(a), len(b))
	i := 0
	for ; i+8 <= n; i += 8 {
		if x := binary.LittleEndian.Uint64(a[i:]) ^ binary.LittleEndian.Uint64(b[i:]); x != 0 {
			return i + bits.TrailingZeros64(x)/8
		}
	}
	for i < n && a[i] == b[i] {
		i++
	}
	return i
}

// takeBlock takes over the members of the block of key id, whose key
// string starts at koff and has been read with its ':', that the row
// repeats from koff, up to the first whose key the row has met before (in
// ids, id itself aside: the loop reads that one and fails), the last of
// them up to its value (a number not followed by more of one: as
// keyInfo.cached), when there is one or more. It returns how many it took
// in d.blk.n, and whether it took any (if not, the loop reads the key's
// value); d.pos is after the last one's value, d.fieldRef names it,
// d.covered holds their keys. The loop calls it for a key that has a
// block (hasBlk) only.
func (d *rowDecoder) takeBlock(id uint8, koff int, ids uint64) bool {
	if d.noPrefix {
		return false
	}
	b := &d.blk.at[id]
	ids &^= 1 << id
	// The members before the first whose key the row has met, or whose
	// key's cached value has changed (or stopped) since the block was
	// recorded.
	t := d.top
	lim := 0
	for lim < len(b.mem) {
		m := &b.mem[lim]
		if k := &t.keys[m.id]; ids&(1<<m.id) != 0 || k.gen != m.gen || k.off {
			break
		}
		lim++
	}
	rest := d.data[koff:]
	n := lim
	differs := false // a byte of the row differs from the block's
	if n > 0 {
		if ve := int(b.mem[n-1].ve); len(rest) < ve || !bytes.Equal(rest[:ve], b.raw[:ve]) {
			c := commonLen(rest, b.raw[:ve])
			differs = c < len(rest)
			n = 0
			for n < lim && int(b.mem[n].ve) <= c {
				n++
			}
		}
	}
	if n > 0 && b.mem[n-1].kind == kindNumber && int(b.mem[n-1].ve) < len(rest) {
		switch rest[b.mem[n-1].ve] {
		case '0', '1', '2', '3', '4', '5', '6', '7', '8', '9', '.', 'e', 'E', '+', '-':
			n-- // "3" is not the value "35"; the member before ends with its ','
			differs = true
		}
	}
	if n == 0 {
		return false
	}
	d.blk.n = n
	d.blk.used += n
	at := len(d.extras)
	d.extras = slices.Grow(d.extras, n)[:at+n]
	prev := startKey
	var taken uint64
	for i := range b.mem[:n] {
		m := &b.mem[i]
		e := &d.extras[at+i]
		e.vs, e.ve, e.ks, e.ke, e.kind, e.id, e.hit = koff+int(m.vs), koff+int(m.ve), 0, 0, m.kind, m.id, true
		d.exAt[m.id] = int16(at + i)
		t.keys[m.id].hits++
		if i > 0 {
			// What reading the key after prev records: key and predicted
			// count a try of the prediction, and a miss unless the key
			// is one of the two predict tries (a block's keys are written
			// in their quoted form; predict tries alt only after a next
			// that is a key).
			if !t.findFirst {
				t.nKeys++
				if p := &t.keys[prev]; p.next != m.id && (p.next == noKey || p.alt != m.id) {
					t.nMisses++
				}
			}
			t.follow(prev, m.id)
		}
		prev = m.id
		taken |= 1 << m.id
	}
	d.exSeen |= taken
	d.exHits |= taken
	d.covered |= taken
	d.fieldRef = prev + 1
	d.pos = koff + int(b.mem[n-1].ve)
	if differs {
		// The block is what this row repeated of it now: a block that
		// only the first members of rows repeat would cost a longer
		// comparison on each of them. (Not so for a line that ends
		// inside the block, or a key of the block met before it: the
		// row fails.)
		b.raw, b.mem, b.ids = b.raw[:b.mem[n-1].ve], b.mem[:n], taken
	}
	return true
}

// afterBlock reads, after the members of the block of key id (at koff)
// that takeBlock took over, what follows the last one's value, as the
// member loop reads what follows a value: true after a ',', false after
// the row's '}'. While inPfx (all members before were part of the row's
// prefix), it records them in the prefix as the loop would, and clears
// inPfx when the prefix ends.
func (d *rowDecoder) afterBlock(id uint8, koff int, inPfx *bool) (bool, *rowError) {
	last := d.fieldRef - 1
	if *inPfx {
		d.pfx.addBlock(d, &d.blk.at[id], koff, d.blk.n-1)
	}
	d.skipWS()
	if d.pos < len(d.data) && d.data[d.pos] == ',' {
		d.pos++
		d.skipWS()
		if *inPfx {
			d.pfx.add(d, last, false)
		}
		return true, nil
	}
	if *inPfx {
		*inPfx = false
		d.pfx.end(d)
	}
	if d.pos < len(d.data) && d.data[d.pos] == '}' {
		d.pos++
		return false, nil
	}
	return false, d.syntax("',' or '}'")
}

// addBlock records in the row's prefix the first n members of block b,
// which starts at koff, just taken over (takeBlock) while all members
// before were part of the prefix: all but the last one taken, which the
// loop records as any member.
func (p *prefix) addBlock(d *rowDecoder, b *keyBlock, koff, n int) {
	for _, m := range b.mem[:n] {
		p.rN++
		p.rIDs |= 1 << m.id
		p.rLast = m.id
	}
	if n > 0 {
		p.rEnd = koff + int(b.mem[n-1].end)
	}
}

// quotedKeyAt returns where the key of e starts, e an extra of a key with
// an ID and a quoted form written as that form: before the ':' and the
// whitespace around it that precede e's value; -1 when the key is not
// written so.
func (d *rowDecoder) quotedKeyAt(e *extra) int {
	q := d.top.keys[e.id].quoted
	p := e.vs
	for p > 0 && isSpace(d.data[p-1]) {
		p--
	}
	if p == 0 || d.data[p-1] != ':' {
		return -1
	}
	p--
	for p > 0 && isSpace(d.data[p-1]) {
		p--
	}
	if q == nil || p < len(q) || !bytes.Equal(d.data[p-len(q):p], q) {
		return -1
	}
	return p - len(q)
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// memberEnd returns where the member whose value ends at ve ends, when
// a ',' follows it: after the ',' and the whitespace after it; else -1.
func (d *rowDecoder) memberEnd(ve int) int {
	p := ve
	for p < len(d.data) && isSpace(d.data[p]) {
		p++
	}
	if p == len(d.data) || d.data[p] != ',' {
		return -1
	}
	p++
	for p < len(d.data) && isSpace(d.data[p]) {
		p++
	}
	return p
}

// recordBlocks records the runs of repeated cached members that the row,
// decoded without error, read one by one (keys not in d.covered, gamma
// excepted) as their first keys' blocks: two members or more, each but
// the first starting where the one before ends (memberEnd).
func (d *rowDecoder) recordBlocks() {
	ex := d.extras
	skip := d.covered | 1<<d.gammaID
	for i := 0; i < len(ex); {
		e := &ex[i]
		if !e.hit || skip&(1<<e.id) != 0 {
			i++
			continue
		}
		start := d.quotedKeyAt(e)
		if start < 0 {
			i++
			continue
		}
		mem := d.blk.scratch[:0]
		var ids uint64
		for j := i; ; {
			e := &ex[j]
			end := d.memberEnd(e.ve)
			mem = append(mem, blockMember{vs: int32(e.vs - start), ve: int32(e.ve - start),
				end: int32(end - start), gen: d.top.keys[e.id].gen, id: e.id, kind: e.kind})
			ids |= 1 << e.id
			j++
			if end < 0 || j == len(ex) || !ex[j].hit || skip&(1<<ex[j].id) != 0 || d.quotedKeyAt(&ex[j]) != end {
				i = j
				break
			}
		}
		if len(mem) < 2 {
			d.blk.scratch = mem
			continue
		}
		b := &d.blk.at[e.id]
		b.raw = append(b.raw[:0], d.data[start:ex[i-1].ve]...)
		b.mem, d.blk.scratch = mem, b.mem
		b.ids = ids
		d.hasBlk[e.id] = true
	}
}

// decodeBlocks is decode with key blocks: taken over in the member loop,
// recorded after the row.
func (d *rowDecoder) decodeBlocks(line []byte) *rowError {
	d.data, d.pos = line, 0
	if d.rows++; d.rows == 64 {
		d.top.adapt()
		d.compKeys.adapt()
		d.rows = 0
		d.blkMode = d.top.findFirst || d.forceBlk
	}
	d.clearField()
	d.clearSub()
	d.seen = 0
	d.exSeen = 0
	d.exHits = 0
	d.covered = 0
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
			d.covered = ids
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
			if k := d.top.predicted(prev, d.data, d.pos); k != nil {
				d.top.nKeys++
				key, id = k.name, k.id
				d.pos += len(k.quoted)
			} else {
				var err *rowError
				if key, id, keyEscaped, err = d.key(d.top, prev); err != nil {
					return err
				}
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
			} else if d.hasBlk[id] && d.takeBlock(id, koff, ids) { // (hasBlk[noKey] is never set)
				// Members taken over from id's block, up to the last
				// one's value, and what follows it.
				ids |= d.covered
				prev = d.fieldRef - 1
				more, err := d.afterBlock(id, koff, &inPfx)
				if err != nil {
					return err
				}
				if more {
					continue
				}
				break
			} else if err := d.extraValue(key, id, koff, keyEscaped); err != nil {
				return err
			}
			if inPfx && (f >= 0 || d.exHits&(1<<id) == 0 || id == d.gammaID) {
				// (noKey is never in exHits: 1<<noKey is 0.)
				inPfx = false
				d.pfx.end(d)
			}
			if d.pos < len(d.data) && d.data[d.pos] == ',' {
				d.pos++
				d.skipWS()
				if inPfx {
					d.pfx.add(d, id, keyEscaped)
				}
				continue
			}
			d.skipWS()
			if d.pos < len(d.data) && d.data[d.pos] == ',' {
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
			if d.pos < len(d.data) && d.data[d.pos] == '}' {
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
	// Repeated cached values read one by one (neither taken over from a
	// prefix or a block, nor gamma's): blocks to record.
	if d.exHits&^d.covered&^(1<<d.gammaID) != 0 {
		d.recordBlocks()
	}
	return nil
}
