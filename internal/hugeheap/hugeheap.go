package hugeheap

import "github.com/crlbatch/crlbatch/internal/hugemem"

// Size is the address space advised: more than the heap of a warm nightly
// rerun on the 1 GB benchmark sweep (~60 MiB at its peak). Address space is
// not memory: what no allocation touches is neither in the kernel's page
// tables nor in the process's resident set.
const Size = 256 << 20

func init() {
	hugemem.AdviseHeap(Size)
	hold()
}
