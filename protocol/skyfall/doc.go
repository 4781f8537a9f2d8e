// Package skyfall computes the skyfall protocol of continual RL over one
// recorded run (PROTOCOLS.md section 1): per-label metrics (per-configuration
// reward, adaptation speed, recovery time, forgetting, stability, performance
// gap, zero-shot and settled rewards, effective rank), their per-interval
// values, and per-run metrics (returns, invalid-action and solve rates,
// regret, counts).
//
// Receil brings a result to another ceiling without the rows (its upper
// bounds and performance gaps, the same float64 operations as Score), unless
// the ceiling anchors adaptation and recovery.
//
// A Trace is columnar: rewards as []float64 and a label index per row. Score
// walks it in a few linear passes (the post_shift window is inherently
// O(shifts × length)) and allocates per interval and per label, never per row.
// A Builder collects a run's rows, one at a time (Add, or AddTrace for
// every row of a dense Trace), a column at a time (AddColumns, the same
// columns) or all of another Builder's at once (AppendRows, straight from
// its compact columns), in compact columns (about a third
// of the dense size on typical traces, every value kept bit for bit) and
// materialises the dense Trace on demand, or counts the rows per label
// without materialising (CountLabels, for a ceiling); a TracePool lends the columns of
// traces already scored to the next one, and may take the memory of new
// ones from its caller (TracePool.Mem: idle buffers already touched).
// A missing component is 0 in the columns, as PROTOCOLS says; which
// components no row carried at all (a row carrying one as 0 does) goes
// from Row.Carried through the Builder to Trace.Uncarried and
// RunResult.Uncarried, for the report's note on a misspelt name.
//
// Arithmetic follows PROTOCOLS exactly so that an independent implementation
// agrees to 1e-9: float64 sums accumulated sequentially in row order; a
// running mean r̄_τ = (Σ_{i≤τ} r_i)/τ; sample variances in two passes; tail
// counts n = max(1, ceil(x·L − 1e-9)); thresholds compared literally and
// inclusively.
//
// Every unavailable number is a protocol.Value with OK false and a reason from
// the Reason* constants; nothing absent is ever reported as zero.
//
// A Builder's full-size chunks are carved out of 8 MiB slabs shared by the process's Builders and
// advised for transparent huge pages (internal/hugemem): fewer first
// touches of fresh 4 KiB pages (slabs.go says what that means for how
// long memory is held), unless UseSlabs(false) has them made alone (the
// pipeline uses slabs only for a read step that decodes 64 MiB or more
// under a memory limit of 256 MiB or more).
//
// The package is pure: no I/O, goroutines, clocks or contexts (the huge
// page advice is a madvise system call, and internal/hugemem reads once
// whether the kernel offers huge pages).
package skyfall
