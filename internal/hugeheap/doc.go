// Package hugeheap is imported, for its side effect only, by crlbatch's
// main package: while the process starts it advises Size bytes of the Go
// heap's address space for transparent huge pages (hugemem.AdviseHeap), so
// that the heap a job builds is first touched in 2 MiB pages, one page
// fault each where 512 small pages would take 512. On the machine the
// benchmarks ran on a fault costs 8-16 µs, and a warm nightly rerun touched
// ~7,000 fresh pages of heap (docs/performance-history.md).
//
// The advice is given where hugemem gives any (Linux, transparent huge
// pages in mode always or madvise), and not when GOGC=off or GOMEMLIMIT is
// set. A huge page is resident whole once touched, so a job that keeps it
// may peak a few MiB higher; the engine withdraws it
// (hugemem.WithdrawHeap) for a score job that decodes much, whose largest
// buffers are advised on their own, or runs under a small memory budget
// (pipeline's useSlabs); validate and convert keep it.
//
// It then holds the collector for the rest of the start (startup.go): the
// GC percent raised so that the heap goal is 16 MiB, not Go's first 4 MiB,
// until the first collection or until the command sets the GC percent
// itself (Release: the score command's heap floor). GOGC in the
// environment is left alone.
package hugeheap
