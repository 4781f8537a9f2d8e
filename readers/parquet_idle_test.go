package readers

import (
	"testing"
	"unsafe"
)

// TestIdleParquetMemory: IdleParquetMemory carves idle pool buffers into
// disjoint, 64-byte rounded, capped pieces, hands out nothing the pool or a
// later call hands out again, and returns nil rather than allocate.
func TestIdleParquetMemory(t *testing.T) {
	type span struct{ lo, hi uintptr }
	var spans []span
	var keep [][]byte
	add := func(b []byte, n int) {
		t.Helper()
		if b == nil {
			return
		}
		want := (n + 63) &^ 63
		if len(b) != want || cap(b) != want {
			t.Fatalf("IdleParquetMemory(%d): len %d cap %d, want %d", n, len(b), cap(b), want)
		}
		p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
		if p%8 != 0 {
			t.Fatalf("IdleParquetMemory(%d) at %#x: not 8-byte aligned", n, p)
		}
		for _, s := range spans {
			if p < s.hi && s.lo < p+uintptr(len(b)) {
				t.Fatalf("IdleParquetMemory(%d) overlaps memory handed out before", n)
			}
		}
		for i := range b {
			b[i] = 0xEE
		}
		spans = append(spans, span{p, p + uintptr(len(b))})
		keep = append(keep, b)
	}
	if IdleParquetMemory(0) != nil || IdleParquetMemory(-1) != nil {
		t.Fatal("memory for nothing")
	}
	got := 0
	for round := range 20 {
		// An idle buffer of 1 MiB, as the reader gives one back.
		ReleaseParquetObjectBuffer(ParquetObjectBuffer(1 << 20))
		for _, n := range []int{1, 100, 4096, 200 << 10, 300 << 10} {
			b := IdleParquetMemory(n)
			if b != nil {
				got++
			}
			add(b, n)
		}
		// What the pool hands out next is none of it.
		o := ParquetObjectBuffer(1 << 20)
		p := uintptr(unsafe.Pointer(unsafe.SliceData(o)))
		for _, s := range spans {
			if p < s.hi && s.lo < p+uintptr(cap(o)) {
				t.Fatalf("round %d: the pool handed out a buffer carved from", round)
			}
		}
		_ = o // not given back: the next round's is new
	}
	if got == 0 && !raceEnabled {
		t.Error("no memory carved out of 20 idle buffers")
	}
	// Switched off: nothing, whatever is idle.
	UseIdleParquetMemory(false)
	ReleaseParquetObjectBuffer(ParquetObjectBuffer(1 << 20))
	if b := IdleParquetMemory(100); b != nil {
		t.Error("memory carved after UseIdleParquetMemory(false)")
	}
	UseIdleParquetMemory(true)
	// A piece larger than any idle buffer: nil, nothing allocated.
	if b := IdleParquetMemory(1 << 30); b != nil {
		t.Errorf("IdleParquetMemory(1 GiB) = %d bytes", len(b))
	}
	for _, b := range keep {
		for i, v := range b {
			if v != 0xEE {
				t.Fatalf("byte %d of a piece changed under it: %#x", i, v)
			}
		}
	}
}
