package skyfall

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"maps"
	"slices"
	"sync"
	"unsafe"
)

// WriteBinaryTo writes to w the encoding of the trace b.TraceFrom(nil,
// meta) builds, the bytes its WriteTo writes, without building that trace:
// the rewards, and the labels when they are held dense, are encoded from
// the builder's own chunks, and every other column is made in turn in one
// scratch column of 8 bytes a row (and one of a bool a row), lent from one
// call to the next. A trace of n rows held ~55 bytes a row of fresh memory
// while it was encoded (a cache entry of a 50 MB object, a spilled run),
// and its first touch was most of the encoding's cost after the
// compression. It returns the bytes written.
func (b *Builder) WriteBinaryTo(w io.Writer, meta map[string]string) (int64, error) {
	n := b.n
	if n == 0 {
		// Every column nil or empty as TraceFrom leaves it: build it.
		return b.TraceFrom(nil, meta).WriteTo(w)
	}
	nl := len(b.labelNames)
	if nl == 0 {
		return 0, fmt.Errorf("skyfall: trace %s: %d rows and no label", b.key, n)
	}
	sc := getBinaryScratch(n)
	defer binaryScratches.Put(sc)
	words, flags := sc.words[:n], sc.flags[:n]
	f64s := unsafe.Slice((*float64)(unsafe.Pointer(unsafe.SliceData(words))), n)
	i64s := unsafe.Slice((*int64)(unsafe.Pointer(unsafe.SliceData(words))), n)
	i32s := unsafe.Slice((*int32)(unsafe.Pointer(unsafe.SliceData(words))), n)
	i8s := unsafe.Slice((*int8)(unsafe.Pointer(unsafe.SliceData(words))), n)

	e := encoder{buf: make([]byte, 0, flushAt+16*chunk), w: w}
	e.head(b.hasGamma, b.gamma, b.key, meta)
	e.strs(b.labelNames)
	e.count(false, nl) // Origins: one a label, never nil
	for i := range nl {
		e.str(b.labelOrigin(i))
	}

	e.count(false, n)
	b.rewards.each(e.f64vals)

	// The labels, each checked against the names as Trace.WriteTo checks
	// them (a builder never holds another).
	bad := false
	check := func(ls []int32) {
		for _, l := range ls {
			bad = bad || l < 0 || int(l) >= nl
		}
	}
	e.count(false, n)
	if b.labels.isDen {
		b.labels.dense.each(func(ls []int32) {
			check(ls)
			e.labelVals(ls)
		})
	} else {
		b.labels.fill(i32s)
		check(i32s)
		e.labelVals(i32s)
	}
	if bad {
		return e.n, fmt.Errorf("skyfall: trace %s: a label index out of its %d labels", b.key, nl)
	}

	if b.anyStep {
		clear(flags)
		b.steps.fill(i64s, flags)
		e.count(false, n)
		e.stepVals(i64s, 0)
		e.bits(flags)
	} else {
		e.count(true, 0)
		e.count(true, 0)
	}
	if b.anyInv {
		b.invalid.fill(i8s)
		e.int8s(i8s)
	} else {
		e.count(true, 0)
	}
	if b.anyRank {
		clear(f64s)
		b.rank.expand(f64s)
		e.f64s(f64s)
		clear(flags)
		b.rank.mask.bools(flags)
		e.bits(flags)
	} else {
		e.count(true, 0)
		e.count(true, 0)
	}

	// The components as TraceFrom's map holds them: one column a distinct
	// name, the last of that name's, in the order of their names.
	if len(b.compNames) == 0 {
		e.count(true, 0)
	} else {
		last := make(map[string]int, len(b.compNames))
		for i, name := range b.compNames {
			last[name] = i
		}
		e.count(false, len(last))
		for _, name := range slices.Sorted(maps.Keys(last)) {
			e.str(name)
			clear(f64s)
			b.comps[last[name]].expand(f64s)
			e.f64s(f64s)
		}
	}
	e.strs(b.uncarried())

	e.buf = binary.LittleEndian.AppendUint32(e.buf, crc32.Update(e.crc, castagnoli, e.buf))
	e.flush(false)
	return e.n, e.err
}

// binaryScratch is WriteBinaryTo's scratch: a column of 8 bytes a row,
// seen as each type a column holds, and one of a bool a row.
type binaryScratch struct {
	words []uint64
	flags []bool
}

// binaryScratches lends scratch columns from one WriteBinaryTo to the
// next (the objects of a job, the runs of an object); the collector takes
// back those not used since its last cycle.
var binaryScratches = sync.Pool{New: func() any { return new(binaryScratch) }}

// getBinaryScratch returns scratch columns of at least n rows.
func getBinaryScratch(n int) *binaryScratch {
	sc := binaryScratches.Get().(*binaryScratch)
	if cap(sc.words) < n {
		sc.words = make([]uint64, n)
		sc.flags = make([]bool, n)
	}
	sc.words, sc.flags = sc.words[:cap(sc.words)], sc.flags[:cap(sc.flags)]
	return sc
}
