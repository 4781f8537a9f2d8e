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
// whether huge pages are available (read once).
package hugemem
