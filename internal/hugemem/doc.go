// Package hugemem hands out large pointer-free buffers whose memory the
// kernel may back with transparent huge pages: on a machine where the first
// touch of a fresh 4 KiB page is dear (a fault each), a 2 MiB page costs one
// fault where 512 small ones would.
//
// Bytes allocates a []byte on the Go heap (the garbage collector frees it as
// any other) and, before anything touches it, advises its 2 MiB-aligned
// interior with madvise(MADV_HUGEPAGE). Only that interior: the advised
// range never reaches outside the buffer, so a neighbouring object's memory
// is never advised, and a buffer too small to hold an aligned 2 MiB range is
// not advised at all. Advice is only advice: on systems other than Linux,
// when /sys/kernel/mm/transparent_hugepage/enabled says never (or cannot be
// read), or when madvise fails, the buffer is returned as make returns it,
// never with an error.
//
// A huge page is resident as a whole once any byte of it is touched, so
// advise only memory that will be filled: a half-used advised buffer holds
// more resident memory than the same buffer unadvised.
//
// Advice is given at most once per buffer; the package keeps no state but
// whether huge pages are available (read once) and the ranges of the heap
// AdviseHeap advised.
//
// # The heap
//
// Since Go 1.21.1 the runtime advises none of the heap for huge pages, and
// advice given to address space it has only reserved is lost when it maps
// that space (mmap with MAP_FIXED makes a new mapping). AdviseHeap works
// with the runtime's allocator instead: it allocates a large buffer, which
// the heap maps as fresh address space, advises that space, drops the
// buffer unwritten and has it collected and its pages counted as given
// back to the system at once (debug.FreeOSMemory: nothing is left for the
// background scavenger); the runtime then places later allocations in it,
// lowest addresses first, and each 2 MiB of it is first touched as one
// huge page. That placement is the runtime's behaviour (Go 1.26), not its
// promise: were it to change, the advice would only go unused
// (TestAdviseHeap checks the placement). Called while a process starts,
// with little heap in use, it turns most of a short job's page faults on
// fresh heap memory into one per 2 MiB; WithdrawHeap takes the advice back
// where a small memory budget matters more than faults.
//
// TrimHeap is the other end of a job's heap: once the heap has shrunk, it
// releases the free pages beyond the room to the next heap goal, and keeps
// that room resident for the allocations that follow.
//
// # The executable
//
// ReleaseExecutable unmaps the resident pages of the executable's read-only
// mappings (Linux; those with no page the process wrote), which the
// process faults back in from the page cache as it runs them: most of what
// package initialisation made resident is not run again.
package hugemem
