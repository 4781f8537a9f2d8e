package pipeline

import (
	"context"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"

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

// nameHints are endings of object names under which traces are often
// stored and the default patterns leave out, each with what its pattern
// reads: Parquet traces (read only when a pattern names them), and JSON
// Lines under the names Spark's and pandas' writers give them
// (part-00000-….json, .json.gz).
var nameHints = []struct{ ending, reads string }{
	{".parquet", "reads Parquet traces"},
	{".json", "reads such objects as JSON Lines"},
	{".json.gz", "reads such objects as JSON Lines"},
	{".json.zst", "reads such objects as JSON Lines"},
	{".ndjson.gz", "reads such objects as JSON Lines"},
	{".ndjson.zst", "reads such objects as JSON Lines"},
}

// noObjectMatches is the error of a listing that matched nothing. When
// objects named as nameHints lists are there (and no pattern names them),
// it says how many and which pattern reads them; Parquet objects only when
// parquet (convert reads JSON Lines only).
func noObjectMatches(ctx context.Context, b *blob.Bucket, loc Location, patterns []string, parquet bool, rp RetryPolicy) error {
	msg := fmt.Sprintf("%s: no object matches %q", loc, patterns)
	var globs []string // of the endings to count (not "*": a FIFO of another name stays unlisted)
	for _, h := range nameHints {
		if !slices.Contains(patterns, "*"+h.ending) && (parquet || h.ending != ".parquet") {
			globs = append(globs, "*"+h.ending)
		}
	}
	if found, err := list(ctx, b, loc, globs, rp); err == nil && len(found) > 0 {
		counts := make([]int, len(nameHints))
		for _, o := range found {
			for i, h := range nameHints {
				if strings.HasSuffix(path.Base(o.Rel), h.ending) {
					counts[i]++
					break
				}
			}
		}
		for i, h := range nameHints {
			if counts[i] == 0 {
				continue
			}
			n := "1 object ends"
			if counts[i] > 1 {
				n = fmt.Sprintf("%d objects end", counts[i])
			}
			msg += fmt.Sprintf("; %s in %s (--pattern '*%s' %s)", n, h.ending, h.ending, h.reads)
		}
	}
	return &DataError{Err: errors.New(msg)}
}
