//go:build linux

package hugemem

import (
	"os"
	"syscall"
)

func releaseExecutable() int64 {
	path, err := os.Executable()
	if err != nil {
		return 0
	}
	smaps, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		return 0
	}
	var released int64
	for _, m := range exeMappings(smaps, path) {
		if _, _, errno := syscall.Syscall(syscall.SYS_MADVISE, m.lo, m.hi-m.lo, syscall.MADV_DONTNEED); errno == 0 {
			released += m.rss
		}
	}
	return released
}
