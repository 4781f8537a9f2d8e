package pipeline

import (
	"context"
	"errors"

	"gocloud.dev/blob"

	"github.com/crlbatch/crlbatch/readers"
	"github.com/crlbatch/crlbatch/storage"
)

// RetryPolicy retries transient storage errors; see storage.RetryPolicy,
// whose fields it has. It is a type of its own (convert with
// storage.RetryPolicy(p)) so that it can carry the pipeline's rule: bad data
// (*readers.DataError) is never retried.
type RetryPolicy storage.RetryPolicy

// DefaultRetry is storage.DefaultRetry.
func DefaultRetry() RetryPolicy { return RetryPolicy(storage.DefaultRetry()) }

// retry is storage.RetryPolicy.Retry, except that a *readers.DataError
// (a truncated gzip object wraps io.ErrUnexpectedEOF too) is not retried:
// bad data stays bad however often it is read.
func (p RetryPolicy) retry(ctx context.Context, op func(ctx context.Context, touch func()) error) error {
	return storage.RetryPolicy(p).Retry(ctx, func(ctx context.Context, touch func()) error {
		err := op(ctx, touch)
		var de *readers.DataError
		if errors.As(err, &de) {
			return storage.Permanent(err)
		}
		return err
	})
}

// object is one listed input object.
type object = storage.Object

// list is storage.List.
func list(ctx context.Context, b *blob.Bucket, loc Location, patterns []string, rp RetryPolicy) ([]object, error) {
	return storage.List(ctx, b, loc, patterns, storage.RetryPolicy(rp))
}
