package readers

import (
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/crlbatch/crlbatch/protocol/skyfall"
)

// Row decoders are recycled from one object (or chunk) to the next. A
// fresh one interns the schema's names, the components and the identity
// fields into its key tables: a few dozen allocations, patterns and map
// entries, which on a sweep of 20,000 small objects were an eighth of the
// job's CPU and, as garbage, a good part of its collector's. A decoder is
// taken for an object with its key tables as a new decoder of its shape
// has them (resetTo the pool's templates) and every other field zero;
// what it learned on another object (the keys met since, their order, the
// cached values) is dropped, so that an object decodes as it did with a
// decoder of its own (TestRecycledDecoderIsFresh).

// rowDecoderPool holds the idle row decoders of one shape (the components
// and identity fields they were built for), and the key tables a new one
// of that shape starts with. The templates are only read: every decoder
// of the shape shares their keys' names and quoted forms, which nothing
// writes into once made.
type rowDecoderPool struct {
	pool      sync.Pool
	top, comp *keyTable
}

// rowDecoderPools holds a rowDecoderPool per shape (decoderShape).
var rowDecoderPools sync.Map // string -> *rowDecoderPool

// decoderShape is the pool key of a decoder for these components and
// identity fields.
func decoderShape(components, identity []string) string {
	var b strings.Builder
	for _, c := range components {
		b.WriteString(c)
		b.WriteByte(0)
	}
	b.WriteByte(1)
	for _, f := range identity {
		b.WriteString(f)
		b.WriteByte(0)
	}
	return b.String()
}

// rowDecoderPoolFor returns the pool of decoders for components whose
// top-level key table holds the identity fields too.
func rowDecoderPoolFor(components, identity []string) *rowDecoderPool {
	shape := decoderShape(components, identity)
	if p, ok := rowDecoderPools.Load(shape); ok {
		return p.(*rowDecoderPool)
	}
	d := newShapeDecoder(components, identity)
	p := &rowDecoderPool{top: d.top.clone(), comp: d.compKeys.clone()}
	p.pool.Put(d)
	actual, _ := rowDecoderPools.LoadOrStore(shape, p)
	return actual.(*rowDecoderPool)
}

// newShapeDecoder is a new row decoder of a rowDecoderPool's shape.
func newShapeDecoder(components, identity []string) *rowDecoder {
	d := newRowDecoder(components)
	for _, f := range identity {
		d.top.intern([]byte(f), -1)
	}
	return d
}

// get returns a decoder of the pool's shape, recycled or new.
func (p *rowDecoderPool) get(components, identity []string) *rowDecoder {
	if d, ok := p.pool.Get().(*rowDecoder); ok {
		return d
	}
	return newShapeDecoder(components, identity)
}

// put hands d back for another object (recycle); nothing the caller keeps
// may point into d's own buffers (the decoded labels, keys and messages
// are copies).
func (p *rowDecoderPool) put(d *rowDecoder) {
	d.recycle(p.top, p.comp)
	p.pool.Put(d)
}

// recycle makes d as a new decoder of its shape is: its key tables as top
// and comp, the templates, every other field as new (its buffers let go
// of).
func (d *rowDecoder) recycle(top, comp *keyTable) {
	d.top.resetTo(top)
	d.compKeys.resetTo(comp)
	*d = rowDecoder{
		comps: d.comps, compIdx: d.compIdx, row: skyfall.Row{Comps: make([]float64, len(d.comps))},
		top: d.top, compKeys: d.compKeys, gammaID: d.gammaID,
	}
}

// clone returns a copy of t that shares nothing t changes later: its own
// keys and IDs (the keys' names and quoted forms are never written to
// once made, and are shared).
func (t *keyTable) clone() *keyTable {
	c := *t
	c.keys = slices.Clone(t.keys)
	c.ids = maps.Clone(t.ids)
	return &c
}

// resetTo makes t as tpl is (a clone of a table that held only tpl's keys,
// interned in the same order as t's first keys), reusing t's keys and
// IDs: the keys interned since are forgotten, and the others' learned
// state (their followers, cached values, colon forms) with them.
func (t *keyTable) resetTo(tpl *keyTable) {
	for i := len(tpl.keys); i < len(t.keys); i++ {
		delete(t.ids, string(t.keys[i].name))
	}
	keys, ids := t.keys, t.ids
	clear(keys[len(tpl.keys):]) // drop what they point to
	*t = *tpl
	t.keys = append(keys[:0], tpl.keys...)
	t.ids = ids
}
