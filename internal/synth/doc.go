// Package synth writes synthetic skyfall sweeps (PROTOCOLS 1.1–1.3), for
// `crlbatch synth`, for trying the tool out, for tests and for benchmarks.
//
// A sweep is deterministic: the same Config gives byte-identical objects,
// whatever Concurrency is and whether a write was retried. Run reaches
// storage the way every crlbatch input and output does: the output is
// parsed by storage.ParseLocation, its bucket opened by storage.OpenBucket
// through the caller's storage.Opener, and every object is written under a
// storage.RetryPolicy; Write does the same into a bucket the caller opened.
// An object is committed whole or not at all, and a failed Run removes what
// it had committed. Errors are storage's: *storage.UsageError for a bad
// configuration (nothing is written), *storage.StorageError naming the
// object for a failure of the store.
//
// The package depends on storage only, not on pipeline, so that pipeline's
// own tests can write their sweeps with it.
package synth
