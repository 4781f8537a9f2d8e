package storage

import (
	"errors"
	"io"
	"os"
	"runtime/debug"
	"unsafe"
)

// MapMinBytes is the size from which a local object read whole from its
// start is mapped into memory rather than read (Mapped): below it, a read
// costs less than mapping the object and faulting its pages in. Tests
// lower it; nothing else changes it.
var MapMinBytes int64 = 1 << 20

// Mapped is a local object's bytes in the page cache, mapped read-only
// into the process, so that its reader reads them where they lie instead
// of having the kernel copy them into a buffer (a tenth of a job's CPU on
// a sweep in the page cache). blob.Reader.As gives it for a local INPUT's
// object of at least MapMinBytes opened from its start, on Linux; it
// maps nothing until Bytes is called, and is unmapped when the reader is
// closed, after which nothing of it may be touched.
//
// A mapped file cut shorter while it is read faults on its pages past the
// new end: Guard turns such a fault into an error (ErrFaulted) instead of
// a crash, and every use of the bytes must be within a Guard, on the
// goroutine that makes it.
type Mapped struct {
	f      *os.File
	size   int64 // when opened
	data   []byte
	given  int // the bytes before this have their pages given back
	failed bool
}

// ErrFaulted is the error of a mapped object's page that could not be read:
// the file was cut shorter while it was read, or the disk failed.
var ErrFaulted = errors.New("a page of the mapped object could not be read (the file was cut shorter while it was read, or the disk failed)")

// Bytes maps the object's bytes, as many as it had when it was opened, and
// returns them; nil when they cannot be mapped (the file's size is no
// longer that, or the system refused the mapping): it is read then.
func (m *Mapped) Bytes() []byte {
	if m.data == nil && !m.failed {
		m.data = mapFile(m.f, m.size)
		m.failed = m.data == nil
	}
	return m.data
}

// Release gives back the pages of the first n bytes, once they are done
// with: the process's memory then holds those of the bytes being read, not
// the whole object. They stay in the page cache, and touching them again
// reads them again from it.
func (m *Mapped) Release(n int) {
	if end := n &^ (os.Getpagesize() - 1); end > m.given && end <= len(m.data) {
		releasePages(m.data[m.given:end])
		m.given = end
	}
}

// Ahead maps in the pages of the n bytes from off, which are read next:
// at once, instead of a fault every few pages as they are read (8-13 ms
// of the 0.13 s warm rerun whose one changed object of 50 MB is mapped,
// on a 2-core Intel Xeon).
func (m *Mapped) Ahead(off, n int) {
	if off >= 0 && off < len(m.data) && n > 0 {
		populatePages(m.data[off&^(os.Getpagesize()-1) : min(off+n, len(m.data))])
	}
}

// ReadAt reads the object at off: the mapped bytes, then, past them, the
// file itself (bytes appended since it was opened, which a reader counts
// as a change of the object).
func (m *Mapped) ReadAt(p []byte, off int64) (n int, err error) {
	if off < int64(len(m.data)) {
		err = Guard(m.data, func() { n = copy(p, m.data[off:]) })
		return n, err
	}
	return m.f.ReadAt(p, off)
}

func (m *Mapped) close() {
	if m.data != nil {
		unmapFile(m.data)
		m.data = nil
	}
}

// Guard runs fn, which reads data (a Mapped's bytes), and returns
// ErrFaulted when a page of data could not be read, instead of the crash
// such a fault is by default. Any other panic goes on.
func Guard(data []byte, fn func()) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if p := recover(); p != nil {
			if f, ok := p.(interface{ Addr() uintptr }); ok && inside(data, f.Addr()) {
				err = ErrFaulted
				return
			}
			panic(p)
		}
	}()
	fn()
	return nil
}

// inside says whether addr is within data.
func inside(data []byte, addr uintptr) bool {
	if len(data) == 0 {
		return false
	}
	start := uintptr(unsafe.Pointer(unsafe.SliceData(data)))
	return addr >= start && addr-start < uintptr(len(data))
}

var _ io.ReaderAt = (*Mapped)(nil)
