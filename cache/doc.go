// Package cache is the store behind score's --cache: entries, each one
// trace object's decoded runs as its protocol's decoder encodes them
// (scoring.Codec), or what the engine keeps of an object or a run (its
// index of run pieces, its scored run: pipeline/runcache.go), in any blob prefix (a local folder, s3://, gs://,
// azblob://) or, for "auto", a folder under os.UserCacheDir. The engine
// (pipeline) decides what an entry's key is made of and when it is
// written; this package only stores, checks and lists entries. Its
// methods may be called concurrently; the only goroutine it starts is the
// watchdog of a request on a remote store (StallAfter).
//
// A store that fails every request fails each for one cause: a Cache
// stops reading after ReadsOffAfter requests for entries fail in a row
// (an entry not there, or not to be trusted, is an answer), and writing
// after one write fails or its reads stop; each request it then does not
// make is answered ErrOff, naming the failure that stopped it
// (health.go). On a remote store each request is abandoned once it has
// made no progress for the bound StallAfter sets, so that a store that
// accepts connections and never answers costs a job that bound, not the
// job.
//
// An entry is named <prefix>v<FormatVersion>/<key[:2]>/<key>.crlc, key
// being a SHA-256 in hex (Key); the entries of a Kind (the engine's object
// indexes and scored runs, "index" and "runs", its family rows and
// figures) are kept apart under <prefix>v<FormatVersion>/<kind>/<key>.crlc,
// in the same format: side by side, with no folder per two hex digits,
// since on a local disk each new folder is a mkdir and a nightly rerun's
// few dozen small entries would mostly go into new ones (entries a
// version before kept in such folders are no longer read; Stats and Prune
// still count and remove them). It holds a magic line, FormatVersion, its own key, a hash of the object's bytes (for the engine's note on objects
// stored twice), the zstd-compressed encoding and, last, the checksum
// (XXH3-128) of everything before it. Get refuses (ErrCorrupt) an entry whose checksum,
// version, key, length or compression is not right, so that a flipped
// byte, a truncated file or an entry of another version is never trusted.
//
// Seal compresses an object's entry as the engine's codec writes it (a
// zstd stream saying its length, into chunks: no copy of the whole
// encoding, nothing grown), PutSealed adds the object's hash and the
// checksum and publishes it as Put does; the entry is the same format.
//
// Writes: an object's entry depends on its key alone (a run's entry may
// differ by the preparation it was scored under, which it records and the
// engine compares), and Put publishes it whole (on a local disk
// gocloud.dev's fileblob writes a temporary file beside it and renames it;
// a blob store's upload is atomic), so two jobs writing one entry at once
// leave one of two whole entries, either right, and a reader never sees
// half of one; a write that fails is cancelled before it is closed, so
// that nothing is published. Put asks the store for no MD5 of its own
// (bucket.WriteAll's two passes) and zstd for no frame checksum: the
// entry's checksum guards both. Stats and Prune list the entries of every
// version; Prune removes the oldest first (by when each was written: a hit
// does not refresh an entry).
//
// A job killed while it writes an entry to a local cache leaves the
// temporary file beside the entry's name (<entry>.<hex>.tmp), which no
// read ever opens. Stats counts such files apart from the entries, and
// Prune removes those last written over TempGrace (an hour) ago, whatever
// its bounds: a younger one may be the write under way of a job that
// shares the cache.
//
// On S3 an entry over 16 MiB (the transfer manager's threshold) is
// uploaded in parts, and a job killed during the upload leaves an
// incomplete multipart upload, which S3 keeps, and bills, until it is
// aborted. When the bucket is on S3 (storage.S3UploadsOf), Stats also
// lists (ListMultipartUploads, paged to the end) the
// incomplete uploads under the cache's prefix whose key is an entry's
// name (v<version>/<folder>/<64 hex>.crlc; others are left alone and not
// counted), with the bytes of their parts (ListParts); Prune aborts those
// initiated over TempGrace ago, whatever its bounds (NoSuchUpload, another
// prune's doing, is no error). A store that does not let the caller list
// or abort uploads costs a warning (Stats.Warnings), not the rest of
// Stats or Prune. GCS and Azure need nothing of the kind: they expire
// uncommitted uploads themselves.
package cache
