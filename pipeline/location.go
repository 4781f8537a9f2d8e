package pipeline

import (
	"context"
	"net/url"
	"strings"

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

func openBucket(ctx context.Context, op Opener, l Location) (*blob.Bucket, func() error, error) {
	return storage.OpenBucket(ctx, op, l)
}

func redactErr(err error) error { return storage.RedactErr(err) }

// within reports whether the output location lies inside the input prefix,
// where the next night's job would read its own results.
func within(out, in Location) bool {
	if out.BucketURL == in.BucketURL {
		return strings.HasPrefix(out.Prefix, in.Prefix)
	}
	if out.Local && in.Local {
		ou, _ := url.Parse(out.BucketURL)
		iu, _ := url.Parse(in.BucketURL)
		if ou == nil || iu == nil {
			return false
		}
		od := strings.TrimSuffix(ou.Path, "/") + "/"
		id := strings.TrimSuffix(iu.Path, "/") + "/"
		if in.Path != "" { // a single input object: only its directory matters
			return false
		}
		return strings.HasPrefix(od, id)
	}
	return false
}
