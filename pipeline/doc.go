// Package pipeline is crlbatch's batch engine: it lists the trace objects
// under an input prefix, reads and decodes them concurrently, assembles runs,
// scores them concurrently, reduces them to families and publishes the
// results under an output prefix, the manifest last.
//
// Storage is reached only through gocloud.dev/blob URLs (plain local paths,
// file://, s3://, gs://, azblob://, mem://); the drivers are blank-imported by
// the binary, never here. Concurrency lives here and nowhere else: bounded
// errgroups whose tasks each write their own slot, so that every output is in
// the canonical order of PROTOCOLS whatever the number of workers. An object
// holding more than 1/--concurrency of the sweep's bytes is decoded in
// chunks on --concurrency goroutines and merged in order (chunks.go), with
// exactly the result of decoding it on one.
//
// Memory: decoded objects hold their rows in compact columns; every pass
// over the runs (a ceiling derived from the data, then scoring) assembles
// them one at a time, the runs being scored lend their dense columns to the
// next ones, and past --memory-limit objects spill to local disk. Once the
// scoring pass is over the decoded rows are dropped and collected at once
// (runtime.GC), before the reduction and the writers allocate.
//
// Errors carry their kind so that the command line can map them to exit
// statuses: *UsageError (2), *readers.DataError and *DataError (1),
// *StorageError (3), and context cancellation (130/143).
package pipeline
