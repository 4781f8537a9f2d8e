package pipeline

import (
	"context"

	"gocloud.dev/blob"

	"github.com/crlbatch/crlbatch/storage"
)

// Location is an INPUT or OUTPUT: a bucket and a key prefix within it. It is
// storage.Location; the name stays here for the callers of pipeline.
type Location = storage.Location

// ParseLocation is storage.ParseLocation.
func ParseLocation(s string, create bool) (Location, error) { return storage.ParseLocation(s, create) }

// Opener opens a bucket URL; it is storage.Opener.
type Opener = storage.Opener

// DefaultOpener is storage.DefaultOpener.
func DefaultOpener(ctx context.Context, bucketURL string) (*blob.Bucket, func() error, error) {
	return storage.DefaultOpener(ctx, bucketURL)
}

// Redact is storage.Redact.
func Redact(s string) string { return storage.Redact(s) }

// openBucket opens a location's bucket. Without an Opener of the
// caller's, a mem:// location is refused: gocloud.dev's URL mux opens a
// new, empty bucket each time, so an INPUT there holds nothing and a
// result written there is gone when the job ends (exit 0 with nothing
// published). Tests hand in an Opener that shares their buckets.
func openBucket(ctx context.Context, op Opener, l Location) (*blob.Bucket, func() error, error) {
	if op == nil && l.InMemory() {
		return nil, nil, Usagef("%s: a mem:// bucket lives in this process's memory, empty when the job starts and gone when it ends: give a folder or a bucket", l)
	}
	return storage.OpenBucket(ctx, op, l)
}

func redactErr(err error) error { return storage.RedactErr(err) }

// within reports whether the output location lies inside the input
// prefix, where the next night's job would read its own results: it is
// storage.Within, which compares canonical locations (links resolved,
// hosts by address, prefixes cleaned).
func within(out, in Location) bool { return storage.Within(out, in) }
