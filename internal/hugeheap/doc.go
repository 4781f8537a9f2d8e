// Package hugeheap is imported, for its side effect only, by crlbatch's
// main package: while the process starts it advises Size bytes of the Go
// heap's address space for transparent huge pages
// (hugemem.AdviseHeap), so that the heap a job builds is first touched in
// 2 MiB pages, one fault each where 512 small pages would take 512. On the
// machines the benchmarks ran on a fault costs 8-16 µs, and a warm nightly
// rerun touched ~7,000 fresh heap pages (docs/performance-history.md).
//
// The advice is given where hugemem gives any (Linux, transparent huge
// pages in mode always or madvise) and not when GOGC=off or GOMEMLIMIT is
// set. A huge page is resident whole once touched, so a job's peak holds up
// to a few MiB more; a job whose memory budget is below LimitMin calls
// Withdraw before it reads anything.
package hugeheap
