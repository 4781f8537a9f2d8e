package hugemem

import (
	"bytes"
	"os"
	"runtime"
)

// PageSize is the size of a transparent huge page (x86-64, arm64 with 4 KiB
// base pages).
const PageSize = 2 << 20

// Bytes returns a zeroed buffer of n bytes whose 2 MiB-aligned interior is
// advised for huge pages (see the package comment).
func Bytes(n int) []byte {
	b := make([]byte, n)
	Advise(b)
	return b
}

// Advise advises the 2 MiB-aligned interior of b for huge pages, where they
// are available; call it before touching b. It never fails.
func Advise(b []byte) {
	if len(b) < PageSize || !available() {
		return
	}
	lo, hi := interior(addr(b), uintptr(len(b)))
	if hi > lo {
		advise(lo, hi-lo)
	}
	runtime.KeepAlive(b)
}

// interior returns the largest range [lo, hi) of whole 2 MiB pages within
// [base, base+n); hi <= lo when there is none.
func interior(base, n uintptr) (lo, hi uintptr) {
	lo = (base + PageSize - 1) &^ (PageSize - 1)
	hi = (base + n) &^ (PageSize - 1)
	if lo < base || hi < lo { // overflow or no whole page
		return 0, 0
	}
	return lo, hi
}

func readMode(path string) []byte {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	return b
}

// thpModeAllows reads the contents of the enabled file: the mode in use is
// the bracketed one.
func thpModeAllows(mode []byte) bool {
	return bytes.Contains(mode, []byte("[always]")) || bytes.Contains(mode, []byte("[madvise]"))
}
