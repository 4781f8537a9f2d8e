//go:build unix

package readers

import "syscall"

// blocksOffHeap says whether the blocks of allocBlock are outside the Go
// heap.
const blocksOffHeap = true

// allocBlock returns n bytes mapped outside the Go heap (anonymous private
// memory, given back to the system by freeBlock at once), or heap bytes when
// the mapping fails. Only the line reader uses it, for the blocks of a long
// line that it copies and frees before returning (lines.go): nothing else
// may hold a block.
func allocBlock(n int) []byte {
	b, err := syscall.Mmap(-1, 0, n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		return make([]byte, n)
	}
	return b
}

// freeBlock unmaps a block of allocBlock (nil, or heap bytes, are left to
// the collector: syscall.Munmap knows only its own mappings).
func freeBlock(b []byte) {
	if b != nil {
		syscall.Munmap(b)
	}
}
