//go:build !unix

package readers

// blocksOffHeap says whether the blocks of allocBlock are outside the Go
// heap.
const blocksOffHeap = false

// allocBlock returns n bytes for a block of a long line (lines.go); on this
// system, from the Go heap.
func allocBlock(n int) []byte { return make([]byte, n) }

// freeBlock leaves a block to the collector.
func freeBlock([]byte) {}
