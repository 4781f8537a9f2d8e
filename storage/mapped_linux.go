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

// madvPopulateRead is MADV_POPULATE_READ (Linux 5.14): map the pages in
// at once, as reading each would fault them in.
const madvPopulateRead = 22

// populatePages maps b's pages in now, in one call rather than a fault
// every few pages as they are read; a kernel without the advice ignores
// it (the reads fault them in).
func populatePages(b []byte) { syscall.Madvise(b, madvPopulateRead) }
