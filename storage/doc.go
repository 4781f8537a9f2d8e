// Package storage is how crlbatch reaches object storage: every command and
// package that reads or writes a bucket goes through it.
//
//   - ParseLocation turns a gocloud.dev blob URL (s3://, gs://, azblob://,
//     mem://, file://) or a plain local path into a Location: a bucket URL
//     and a key prefix. Local folders are opened with metadata=skip, so no
//     .attrs sidecars are written.
//   - OpenBucket opens a Location's bucket through an Opener (DefaultOpener
//     uses gocloud.dev's URL mux; tests hand in their own). The package
//     imports no blob driver: whoever runs it (cmd) blank-imports the
//     drivers it needs.
//   - RetryPolicy.Retry retries transient failures (throttling, server
//     errors, resets, truncated bodies, attempts that make no progress for
//     IdleTimeout) with exponential backoff, bounded in attempts and time.
//   - List lists a prefix, or one named object, in bytewise key order.
//   - Redact and RedactErr remove secrets (keys, tokens, SAS signatures,
//     user:password) from URLs and from messages that quote them; every
//     error this package returns is redacted.
//
// Errors are typed for the exit status the command maps them to: a
// *UsageError is a bad location or flag (2), a *StorageError a failure of
// the store that persisted through the retries and names the object or
// prefix (3), a *DataError bad input found after decoding (1).
//
// The package holds no state and starts no goroutine that outlives a call;
// it knows no protocol and no output format.
package storage
