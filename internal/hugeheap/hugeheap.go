package hugeheap

import (
	"sync"

	"github.com/crlbatch/crlbatch/internal/hugemem"
)

// Size is the address space advised: more than the heap of a nightly job
// on the 1 GB benchmark sweep (~90 MiB at its peak). Address space is not
// memory: what no allocation touches stays unmapped in the kernel's page
// tables and out of the process's resident set.
const Size = 256 << 20

// LimitMin is the smallest memory budget under which a job keeps the
// advice (the same bound under which the builders take their chunks from
// skyfall's shared slabs): below it, the few MiB a partly used huge page
// holds are worth more than the faults it saves.
const LimitMin = 256 << 20

var (
	mu     sync.Mutex
	region = hugemem.AdviseHeap(Size)
)

// Advised is how many bytes of the heap's address space are advised (0
// where no advice was given or after Withdraw).
func Advised() int {
	mu.Lock()
	defer mu.Unlock()
	return region.Len()
}

// Withdraw takes the advice back for the rest of the process: heap pages
// first touched afterwards are small ones. Safe to call more than once and
// from several goroutines.
func Withdraw() {
	mu.Lock()
	defer mu.Unlock()
	region.Withdraw()
	region = hugemem.HeapRegion{}
}
