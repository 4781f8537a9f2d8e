//go:build linux

package hugemem

import (
	"sync"
	"syscall"
	"unsafe"
)

// thpEnabled is the file saying whether transparent huge pages are in use.
var thpEnabled = "/sys/kernel/mm/transparent_hugepage/enabled"

var thpOnce struct {
	sync.Once
	ok bool
}

// available reports whether transparent huge pages may be used on advice:
// the mode is always or madvise ("[never]", or a file that cannot be read,
// means not).
func available() bool {
	thpOnce.Do(func() { thpOnce.ok = thpModeAllows(readMode(thpEnabled)) })
	return thpOnce.ok
}

func addr(b []byte) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(b))) }

// advise gives the advice on [p, p+n); a failure is ignored (the memory is
// then served in small pages, as without advice).
func advise(p, n uintptr) {
	_, _, _ = syscall.Syscall(syscall.SYS_MADVISE, p, n, syscall.MADV_HUGEPAGE)
}

// unadvise withdraws the advice on [p, p+n); a failure is ignored.
func unadvise(p, n uintptr) {
	_, _, _ = syscall.Syscall(syscall.SYS_MADVISE, p, n, syscall.MADV_NOHUGEPAGE)
}
