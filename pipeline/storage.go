package pipeline

import (
	"context"
	"errors"
	"fmt"
	"slices"

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

// noObjectMatches is the error of a listing that matched nothing. When the
// patterns leave out *.parquet and objects named so are there, it says how
// to read them: Parquet traces are read only when a pattern names them.
func noObjectMatches(ctx context.Context, b *blob.Bucket, loc Location, patterns []string, rp RetryPolicy) error {
	msg := fmt.Sprintf("%s: no object matches %q", loc, patterns)
	if !slices.Contains(patterns, "*.parquet") {
		if pq, err := list(ctx, b, loc, []string{"*.parquet"}, rp); err == nil && len(pq) > 0 {
			n := "1 object ends"
			if len(pq) > 1 {
				n = fmt.Sprintf("%d objects end", len(pq))
			}
			msg += fmt.Sprintf("; %s in .parquet (--pattern '*.parquet' reads Parquet traces)", n)
		}
	}
	return &DataError{Err: errors.New(msg)}
}
