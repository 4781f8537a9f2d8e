package storage

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"path"
	"sort"
	"sync/atomic"
	"syscall"
	"time"

	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
	"gocloud.dev/blob"
	"gocloud.dev/gcerrors"
)

// RetryPolicy retries transient storage errors with exponential backoff,
// and bounds every attempt: one that makes no progress for IdleTimeout (a
// request the store accepted and never answered, a body that stopped
// halfway, a client retrying without end) is abandoned and counts as a
// transient failure. No new attempt starts once MaxElapsed has passed since
// the first, so a persistent fault fails the job in bounded time.
type RetryPolicy struct {
	// Attempts is the number of tries (1 = no retry).
	Attempts int
	// Initial and Max bound the backoff between tries.
	Initial time.Duration
	Max     time.Duration
	// IdleTimeout abandons an attempt without progress for this long; 0
	// means never.
	IdleTimeout time.Duration
	// MaxElapsed stops retrying once this long has passed since the first
	// attempt; 0 means no bound beyond Attempts.
	MaxElapsed time.Duration
}

// DefaultRetry tries five times, waiting 200 ms, 400 ms, 800 ms, 1.6 s,
// abandons an attempt after 20 s without progress, and starts no attempt
// more than 60 s after the first.
func DefaultRetry() RetryPolicy {
	return RetryPolicy{Attempts: 5, Initial: 200 * time.Millisecond, Max: 5 * time.Second,
		IdleTimeout: 20 * time.Second, MaxElapsed: 60 * time.Second}
}

// Permanent marks err as not worth retrying, whatever it wraps: bad data
// read from the store (a truncated gzip object wraps io.ErrUnexpectedEOF,
// which would otherwise count as a cut connection). Retry returns err
// itself, without the mark; nil stays nil.
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return &permanentError{err}
}

type permanentError struct{ err error }

func (e *permanentError) Error() string { return e.err.Error() }
func (e *permanentError) Unwrap() error { return e.err }

// Transient marks err as worth retrying, whatever it wraps: an object that
// changed while it was read twice may read the same twice on the next
// attempt. Retry returns err itself, without the mark; nil stays nil.
func Transient(err error) error {
	if err == nil {
		return nil
	}
	return &transientError{err}
}

type transientError struct{ err error }

func (e *transientError) Error() string { return e.err.Error() }
func (e *transientError) Unwrap() error { return e.err }

// unmark removes Permanent's or Transient's mark from the error an
// operation returned.
func unmark(err error) error {
	switch e := err.(type) {
	case *permanentError:
		return e.err
	case *transientError:
		return e.err
	}
	return err
}

// errStalled is the cause of an attempt abandoned for want of progress.
var errStalled = errors.New("the store made no progress")

// transient reports whether a storage error is worth retrying: throttling,
// server errors, timeouts, reset or truncated connections.
func transient(err error) bool {
	if errors.Is(err, errStalled) {
		return true
	}
	if err == nil || errors.Is(err, context.Canceled) {
		return false
	}
	// Bad data stays bad however often it is read (a truncated gzip object
	// wraps io.ErrUnexpectedEOF too): the caller marks it Permanent.
	var pe *permanentError
	if errors.As(err, &pe) {
		return false
	}
	if _, ok := err.(*transientError); ok {
		return true
	}
	switch gcerrors.Code(err) {
	case gcerrors.ResourceExhausted, gcerrors.Internal, gcerrors.DeadlineExceeded:
		return true
	case gcerrors.NotFound, gcerrors.PermissionDenied, gcerrors.InvalidArgument,
		gcerrors.AlreadyExists, gcerrors.FailedPrecondition, gcerrors.Unimplemented:
		return false
	}
	if retryableStatus(httpStatus(err)) {
		return true
	}
	var ne net.Error
	if errors.As(err, &ne) {
		return true
	}
	return errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, context.DeadlineExceeded)
}

// httpStatus is the HTTP status of a failed request inside err, or 0. The
// AWS SDK's response errors (smithy-go's ResponseError, which the S3 driver
// reports as gcerrors.Unknown) say it through HTTPStatusCode.
func httpStatus(err error) int {
	var hs interface{ HTTPStatusCode() int }
	if errors.As(err, &hs) {
		return hs.HTTPStatusCode()
	}
	return 0
}

// retryableStatus reports whether a response status is throttling or a
// server error worth another try. A request whose response was 200 can still
// fail transiently (a body cut short), so a status that is not retryable
// decides nothing.
func retryableStatus(code int) bool {
	switch code {
	case http.StatusRequestTimeout, http.StatusTooManyRequests, http.StatusInternalServerError,
		http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	}
	return false
}

// Retry runs op until it succeeds, fails permanently, or the attempts (or
// MaxElapsed) are spent; it returns the last error. An error op marks
// Permanent is returned at once, without the mark. Each attempt runs under
// its own context, cancelled when op reports no progress (touch) for
// IdleTimeout.
func (p RetryPolicy) Retry(ctx context.Context, op func(ctx context.Context, touch func()) error) error {
	attempts := max(p.Attempts, 1)
	wait := p.Initial
	start := time.Now()
	var err error
	for i := 0; i < attempts; i++ {
		if err = p.attempt(ctx, op); err == nil || !transient(err) || ctx.Err() != nil {
			return unmark(err)
		}
		if i == attempts-1 || p.MaxElapsed > 0 && time.Since(start)+wait > p.MaxElapsed {
			break
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait):
		}
		wait = min(2*wait, p.Max)
	}
	return unmark(err)
}

// attempt runs op once under a watchdog that cancels it after IdleTimeout
// without a call of touch.
func (p RetryPolicy) attempt(ctx context.Context, op func(ctx context.Context, touch func()) error) error {
	if p.IdleTimeout <= 0 {
		return op(ctx, func() {})
	}
	actx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var last atomic.Int64
	last.Store(time.Now().UnixNano())
	done := make(chan struct{})
	defer close(done)
	go func() {
		tick := time.NewTicker(max(p.IdleTimeout/8, 10*time.Millisecond))
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case now := <-tick.C:
				if now.Sub(time.Unix(0, last.Load())) > p.IdleTimeout {
					cancel(errStalled)
					return
				}
			}
		}
	}()
	err := op(actx, func() { last.Store(time.Now().UnixNano()) })
	if err != nil && ctx.Err() == nil && errors.Is(context.Cause(actx), errStalled) {
		return fmt.Errorf("%w for %v (%v)", errStalled, p.IdleTimeout, err)
	}
	return err
}

// Object is one listed object.
type Object struct {
	Key  string // full key in the bucket
	Rel  string // key relative to the input prefix
	Size int64
	ETag string
	MD5  string
}

// List returns the objects under the location's prefix whose base names
// match a pattern, in bytewise key order. When the location names one object
// exactly (with no trailing "/": that names a folder), that object alone is
// returned.
//
// A local INPUT folder is walked here, links followed (see local.go): a
// folder or link that cannot be followed is a *StorageError naming it, and
// so is a FIFO, socket or device whose name matches a pattern (it is never
// opened).
func List(ctx context.Context, b *blob.Bucket, loc Location, patterns []string, rp RetryPolicy) ([]Object, error) {
	if loc.Local && loc.read {
		return listLocal(ctx, b, loc, patterns)
	}
	if loc.Path != "" && !loc.Folder {
		var attrs *blob.Attributes
		err := rp.Retry(ctx, func(ctx context.Context, _ func()) error {
			var err error
			attrs, err = b.Attributes(ctx, loc.Path)
			return err
		})
		if err == nil {
			return []Object{{Key: loc.Path, Rel: path.Base(loc.Path), Size: attrs.Size, ETag: attrs.ETag, MD5: hexMD5(attrs.MD5)}}, nil
		}
		if gcerrors.Code(err) != gcerrors.NotFound {
			return nil, &StorageError{Op: "read", URL: loc.ObjectURL(loc.Path), Err: RedactErr(err)}
		}
	}
	var out []Object
	var token = blob.FirstPageToken
	for {
		var page []*blob.ListObject
		var next []byte
		err := rp.Retry(ctx, func(ctx context.Context, _ func()) error {
			var err error
			page, next, err = ListPage(ctx, b, token, 1000, &blob.ListOptions{Prefix: loc.Prefix})
			return err
		})
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, &StorageError{Op: "list", URL: loc.String(), Err: RedactErr(err)}
		}
		for _, o := range page {
			if o.IsDir {
				continue
			}
			base := path.Base(o.Key)
			for _, p := range patterns {
				if ok, _ := path.Match(p, base); ok {
					out = append(out, Object{Key: o.Key, Rel: o.Key[len(loc.Prefix):], Size: o.Size, ETag: listETag(o), MD5: hexMD5(o.MD5)})
					break
				}
			}
		}
		// fileblob and memblob never look at the context (and fileblob
		// walks the whole folder for every page): a cancel stops here.
		if len(next) == 0 || ctx.Err() != nil {
			break
		}
		token = next
	}
	if err := ctx.Err(); err != nil { // memblob ends a listing quietly on a cancelled context
		return nil, err
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out, nil
}

func hexMD5(b []byte) string {
	const digits = "0123456789abcdef"
	out := make([]byte, 2*len(b))
	for i, c := range b {
		out[2*i], out[2*i+1] = digits[c>>4], digits[c&15]
	}
	return string(out)
}

// listLocal is List for a local INPUT, folder or file.
func listLocal(ctx context.Context, b *blob.Bucket, loc Location, patterns []string) ([]Object, error) {
	dir := loc.localDir()
	if loc.Path != "" {
		attrs, err := b.Attributes(ctx, loc.Path)
		if err != nil {
			return nil, &StorageError{Op: "read", URL: loc.ObjectURL(loc.Path), Err: localCause(err)}
		}
		return []Object{{Key: loc.Path, Rel: path.Base(loc.Path), Size: attrs.Size, ETag: attrs.ETag}}, nil
	}
	ents, err := walkLocal(ctx, dir)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, &StorageError{Op: "list", URL: loc.String(), Err: err}
	}
	var out []Object
	for _, e := range ents {
		if !matches(patterns, path.Base(e.key)) {
			continue
		}
		if !e.mode.IsRegular() {
			p := loc.ObjectURL(e.key)
			return nil, &StorageError{Op: "read", URL: p, Err: notRegular(e.mode)}
		}
		out = append(out, Object{Key: e.key, Rel: e.key, Size: e.size, ETag: localETag(e.mod, e.size)})
	}
	return out, nil
}

// localCause is the os error inside a gocloud.dev error, for a message
// without the driver's wrapping.
func localCause(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe
	}
	var nr *notRegularError
	if errors.As(err, &nr) {
		return nr
	}
	return err
}

func matches(patterns []string, base string) bool {
	for _, p := range patterns {
		if ok, _ := path.Match(p, base); ok {
			return true
		}
	}
	return false
}

// listETag is the ETag a listing gives, where the driver exposes it (S3);
// "" elsewhere (the MD5, when the store gives one, is recorded instead).
func listETag(o *blob.ListObject) string {
	var so s3types.Object
	if o.As(&so) && so.ETag != nil {
		return *so.ETag
	}
	return ""
}
