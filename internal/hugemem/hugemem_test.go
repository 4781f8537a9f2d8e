package hugemem

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

func TestInterior(t *testing.T) {
	const P = PageSize
	for _, c := range []struct {
		base, n, lo, hi uintptr
	}{
		{0, P, 0, P},
		{P, 3 * P, P, 4 * P},
		{P + 8192, 3 * P, 2 * P, 4 * P},
		{P + 8192, 2 * P, 2 * P, 3 * P},
		{P + 8192, P, 0, 0}, // no whole page inside
		{P + 8192, 2*P - 8192, 2 * P, 3 * P},
		{P + 8192, 2*P - 8193, 0, 0},
		{^uintptr(0) - P, P, 0, 0}, // would overflow
		{4096, 0, 0, 0},
	} {
		lo, hi := interior(c.base, c.n)
		if hi <= lo {
			lo, hi = 0, 0
		}
		if lo != c.lo || hi != c.hi {
			t.Errorf("interior(%#x, %#x) = [%#x, %#x), want [%#x, %#x)", c.base, c.n, lo, hi, c.lo, c.hi)
		}
	}
}

// TestInteriorInside checks that the advised range is whole pages, aligned,
// never outside the buffer, and the largest such range.
func TestInteriorInside(t *testing.T) {
	const P = PageSize
	for base := uintptr(P); base < 3*P; base += 4096 * 37 {
		for n := uintptr(0); n < 5*P; n += 8192 * 29 {
			lo, hi := interior(base, n)
			if hi <= lo {
				// No whole aligned page fits.
				first := (base + P - 1) &^ (P - 1)
				if first+P <= base+n {
					t.Fatalf("interior(%#x, %#x) empty, but [%#x, %#x) fits", base, n, first, first+P)
				}
				continue
			}
			if lo%P != 0 || hi%P != 0 || lo < base || hi > base+n {
				t.Fatalf("interior(%#x, %#x) = [%#x, %#x): not aligned or outside", base, n, lo, hi)
			}
			if lo-base >= P || base+n-hi >= P {
				t.Fatalf("interior(%#x, %#x) = [%#x, %#x): not the largest", base, n, lo, hi)
			}
		}
	}
}

func TestBytes(t *testing.T) {
	for _, n := range []int{0, 1, 4096, PageSize - 1, PageSize, 3*PageSize + 5, 8 << 20} {
		b := Bytes(n)
		if len(b) != n || cap(b) < n {
			t.Fatalf("Bytes(%d): len %d cap %d", n, len(b), cap(b))
		}
		for i, v := range b {
			if v != 0 {
				t.Fatalf("Bytes(%d)[%d] = %d, want 0", n, i, v)
			}
		}
		for i := range b {
			b[i] = byte(i)
		}
		for i, v := range b {
			if v != byte(i) {
				t.Fatalf("Bytes(%d)[%d] = %d after writing %d", n, i, v, byte(i))
			}
		}
	}
	Advise(nil) // nothing to advise, no panic
}

func TestModeAllows(t *testing.T) {
	for mode, want := range map[string]bool{
		"always [madvise] never\n": true,
		"[always] madvise never\n": true,
		"always madvise [never]\n": false,
		"":                         false,
		"garbage":                  false,
	} {
		if got := thpModeAllows([]byte(mode)); got != want {
			t.Errorf("thpModeAllows(%q) = %v, want %v", mode, got, want)
		}
	}
}

// TestFallback: with huge pages unavailable (an unreadable mode file, or
// never), Bytes is a plain allocation.
func TestFallback(t *testing.T) {
	if runtime.GOOS != "linux" {
		if available() {
			t.Fatal("available on a system without advice")
		}
		return
	}
	dir := t.TempDir()
	never := filepath.Join(dir, "enabled")
	if err := os.WriteFile(never, []byte("always madvise [never]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if thpModeAllows(readMode(filepath.Join(dir, "missing"))) {
		t.Error("a missing mode file allows huge pages")
	}
	if thpModeAllows(readMode(never)) {
		t.Error("[never] allows huge pages")
	}
	// madvise failing (a range not mapped) is ignored.
	advise(PageSize, PageSize)
	b := Bytes(4 * PageSize)
	b[len(b)-1] = 1
}
