// Package storage is how crlbatch reaches object storage: every command and
// package that reads or writes a bucket goes through it.
//
//   - ParseLocation turns a gocloud.dev blob URL (s3://, gs://, azblob://,
//     mem://, file://) or a plain local path into a Location: a bucket URL
//     and a key prefix. Only scheme:// makes a URL (night:1 is a folder).
//     Local outputs are opened with metadata=skip, so no .attrs sidecars
//     are written; a local INPUT is read by this package's read-only
//     driver (local.go): links followed, names as they are, unreadable
//     folders, dangling links and loops errors, only regular files read.
//   - A local INPUT's object of MapMinBytes (1 MiB) or more, opened
//     from its start, gives through blob.Reader.As a *Mapped (Linux): its
//     bytes mapped read-only from the page cache, so that its reader reads
//     them in place instead of having them copied; Release gives back the
//     pages of the bytes done with, ReadAt reads on past them, and Guard
//     turns a fault on a page (the file cut shorter while mapped) into
//     ErrFaulted instead of a crash.
//   - OpenBucket opens a Location's bucket through an Opener (DefaultOpener
//     uses gocloud.dev's URL mux; tests hand in their own). The package
//     imports no blob driver: whoever runs it (cmd) blank-imports the
//     drivers it needs. A local OUTPUT folder that opening makes (and the
//     missing parents) goes again when the bucket is released with nothing
//     under it, so a job that fails leaves no empty folder.
//   - RetryPolicy.Retry retries transient failures (throttling, server
//     errors, resets, truncated bodies, attempts that make no progress for
//     IdleTimeout) with exponential backoff, bounded in attempts and time.
//   - List lists a prefix, or one named object, in bytewise key order,
//     with each object's size and, where the listing gives them, ETag (S3;
//     a local file's is its modification time and size) and MD5.
//   - ReadAll reads an object whole, telling a RetryPolicy attempt
//     (touch) of every read, so that a large object read slowly but
//     steadily is not abandoned as a stall: the reads of results (diff,
//     the previous night's), OUTPUT's objects and cache entries.
//   - ListPage and ListEach list a page, or every page, of any bucket;
//     a local folder's page is walked again when a file under it vanished
//     mid-walk (another job's claim, temporary file or pruned entry),
//     which fileblob reports as a failed listing. Every listing of an
//     OUTPUT, a cache or a history goes through them.
//   - CreateExclusive creates an object only if none of its name exists
//     (blob IfNotExist on buckets; a local file written whole and linked,
//     which fails like O_EXCL): the claims of publishing.
//   - WriteObject writes one object through a blob writer whose context
//     is cancelled before Close when the write fails, so that nothing
//     partial is committed: publishing, the cache's entries, synth and
//     CreateExclusive all write that way.
//   - S3UploadsOf reaches, on S3 (the *s3.Client gocloud.dev's s3blob
//     gives As), the incomplete multipart uploads a job killed while
//     uploading in parts leaves: List (a prefix, paged to the end; a
//     prefix s3blob would escape, S3Plain false, is an error), PartBytes,
//     and Abort (an upload gone meanwhile, NoSuchUpload, is no error).
//     Which uploads may be aborted is the caller's business: the cache's
//     prune, a job tidying its OUTPUT.
//   - Within tells whether an OUTPUT lies inside an INPUT, comparing
//     canonical locations (links resolved, hosts by address, prefixes
//     cleaned).
//   - Redact, the one redaction function, and RedactErr remove secrets
//     (keys, tokens, SAS signatures, user:password, and the value of any
//     parameter of a location URL that no driver knows) from URLs at every
//     nesting and encoding and from messages that quote them; every error
//     this package returns is redacted. ParseLocation remembers the
//     secrets of the locations it parses, so that Redact finds them in any
//     message: the package's only state.
//
// Errors are typed for the exit status the command maps them to: a
// *UsageError is a bad location or flag (2), a *StorageError a failure of
// the store that persisted through the retries and names the object or
// prefix (3), a *DataError bad input found after decoding (1).
//
// Besides those secrets (and MapMinBytes, which tests lower) the
// package holds no state; it starts no goroutine that outlives a call; it
// knows no protocol and no output format.
package storage
