package skyfall

import (
	"reflect"
	"runtime"
	"testing"
	"unsafe"
)

// TestSlabTypesPointerFree: chunks carved out of []byte slabs must hold no
// pointers (the collector would not see them).
func TestSlabTypesPointerFree(t *testing.T) {
	var hasPtr func(reflect.Type) bool
	hasPtr = func(ty reflect.Type) bool {
		switch ty.Kind() {
		case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
			reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
			reflect.Float32, reflect.Float64, reflect.Complex64, reflect.Complex128:
			return false
		case reflect.Array:
			return hasPtr(ty.Elem())
		case reflect.Struct:
			for i := range ty.NumField() {
				if hasPtr(ty.Field(i).Type) {
					return true
				}
			}
			return false
		}
		return true
	}
	// Every chunked[T] in a Builder, found by its fields' types.
	seen := map[reflect.Type]bool{}
	var walk func(reflect.Type)
	walk = func(ty reflect.Type) {
		if seen[ty] {
			return
		}
		seen[ty] = true
		switch ty.Kind() {
		case reflect.Struct:
			if f, ok := ty.FieldByName("spare"); ok && ty.NumField() == 3 {
				elem := f.Type.Elem().Elem() // [][]T
				if hasPtr(elem) {
					t.Errorf("%v holds pointers", ty)
				}
			}
			for i := range ty.NumField() {
				walk(ty.Field(i).Type)
			}
		case reflect.Slice, reflect.Array, reflect.Pointer:
			walk(ty.Elem())
		}
	}
	walk(reflect.TypeOf(Builder{}))
	n := 0
	for ty := range seen {
		if ty.Kind() == reflect.Struct && ty.NumField() == 3 {
			if _, ok := ty.FieldByName("spare"); ok {
				n++
			}
		}
	}
	if n < 6 {
		t.Errorf("found %d chunked types in Builder, want 6 or more", n)
	}
}

// TestSlabChunks: chunks from slabs are empty, of capacity chunkLen, zero,
// 8-byte aligned, and never overlap, also across slabs.
func TestSlabChunks(t *testing.T) {
	type span struct{ lo, hi uintptr }
	var spans []span
	var keep [][]stepRun
	var keepF [][]float64
	total := 0
	for i := 0; total < 3*slabSize; i++ {
		if i%3 == 0 {
			c := slabChunk[stepRun]()
			if len(c) != 0 || cap(c) != chunkLen {
				t.Fatalf("stepRun chunk len %d cap %d", len(c), cap(c))
			}
			c = c[:chunkLen]
			for _, v := range c {
				if v != (stepRun{}) {
					t.Fatal("chunk not zero")
				}
			}
			for j := range c {
				c[j] = stepRun{start: i, first: int64(j)}
			}
			p := uintptr(unsafe.Pointer(&c[0]))
			spans = append(spans, span{p, p + uintptr(chunkLen)*unsafe.Sizeof(stepRun{})})
			keep = append(keep, c)
			total += chunkLen * int(unsafe.Sizeof(stepRun{}))
			continue
		}
		c := slabChunk[float64]()[:chunkLen]
		for _, v := range c {
			if v != 0 {
				t.Fatal("chunk not zero")
			}
		}
		for j := range c {
			c[j] = float64(i*chunkLen + j)
		}
		p := uintptr(unsafe.Pointer(&c[0]))
		spans = append(spans, span{p, p + chunkLen*8})
		keepF = append(keepF, c)
		total += chunkLen * 8
	}
	for i, a := range spans {
		if a.lo%8 != 0 {
			t.Fatalf("chunk %d at %#x not 8-byte aligned", i, a.lo)
		}
		for _, b := range spans[i+1:] {
			if a.lo < b.hi && b.lo < a.hi {
				t.Fatalf("chunks [%#x, %#x) and [%#x, %#x) overlap", a.lo, a.hi, b.lo, b.hi)
			}
		}
	}
	k, kf := 0, 0
	for i := 0; k < len(keep) || kf < len(keepF); i++ {
		if i%3 == 0 {
			for j, v := range keep[k] {
				if v != (stepRun{start: i, first: int64(j)}) {
					t.Fatalf("stepRun chunk %d element %d = %+v", i, j, v)
				}
			}
			k++
			continue
		}
		for j, v := range keepF[kf] {
			if v != float64(i*chunkLen+j) {
				t.Fatalf("float64 chunk %d element %d = %v", i, j, v)
			}
		}
		kf++
	}
}

// TestSlabReleased: once no chunk in the current slab is referenced, the
// slab is garbage (held weakly), and the next chunk comes from a new one.
func TestSlabReleased(t *testing.T) {
	c := slabChunk[float64]()
	c = append(c, 1)
	slab.Lock()
	held := slab.cur.Value() != nil
	slab.Unlock()
	if !held {
		t.Fatal("the current slab is gone while a chunk in it is referenced")
	}
	runtime.KeepAlive(c)
	c = nil
	for range 3 {
		runtime.GC()
	}
	slab.Lock()
	gone := slab.cur.Value() == nil
	slab.Unlock()
	if !gone {
		t.Error("the current slab is still held with no chunk in it referenced")
	}
	d := slabChunk[float64]()[:chunkLen]
	for _, v := range d {
		if v != 0 {
			t.Fatal("chunk not zero")
		}
	}
}
