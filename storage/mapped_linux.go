package storage

import (
	"os"
	"syscall"
)

// mapsFiles says whether local objects are mapped (Mapped).
const mapsFiles = true

// mapFile maps size bytes of f read-only, or returns nil when f no longer
// has size bytes or the mapping fails.
func mapFile(f *os.File, size int64) []byte {
	if fi, err := f.Stat(); err != nil || fi.Size() != size || size <= 0 || int64(int(size)) != size {
		return nil
	}
	b, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil
	}
	return b
}

func unmapFile(b []byte) { syscall.Munmap(b) }

// releasePages drops b's pages from the process (they stay in the page
// cache).
func releasePages(b []byte) { syscall.Madvise(b, syscall.MADV_DONTNEED) }
