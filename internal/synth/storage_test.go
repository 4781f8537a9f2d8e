package synth

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"gocloud.dev/blob"
	"gocloud.dev/blob/driver"
	"gocloud.dev/blob/memblob"
	"gocloud.dev/gcerrors"

	"github.com/crlbatch/crlbatch/storage"
)

// TestRunOpener: Run parses Out with storage.ParseLocation and opens its
// bucket through the Opener it is given, writing under the URL's prefix.
func TestRunOpener(t *testing.T) {
	mem := memblob.OpenBucket(nil)
	defer mem.Close()
	var opened []string
	op := func(_ context.Context, u string) (*blob.Bucket, func() error, error) {
		opened = append(opened, u)
		return mem, func() error { return nil }, nil
	}
	cfg := Config{Out: "s3://bkt/some/prefix?region=eu-west-1&secret_key=hunter2", Opener: op, Seeds: 1, Steps: 60, Compression: "mixed"}
	sum, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"s3://bkt?region=eu-west-1&secret_key=hunter2"}; !slices.Equal(opened, want) {
		t.Errorf("opened %q, want %q", opened, want)
	}
	keys, objs := synthTestObjects(t, mem, "some/prefix/")
	if len(keys) != 3 || len(sum.Objects) != 3 {
		t.Fatalf("keys %q, summary %+v", keys, sum.Objects)
	}
	// The same bytes as Write into an open bucket.
	b, _ := synthTestRun(t, Config{Seeds: 1, Steps: 60, Compression: "mixed"}, "p/")
	_, want := synthTestObjects(t, b, "p/")
	if !maps.EqualFunc(objs, want, bytes.Equal) {
		t.Error("Run through an opener and Write wrote different bytes")
	}

	// A failing opener is a *StorageError that names the output, redacted.
	fail := func(context.Context, string) (*blob.Bucket, func() error, error) {
		return nil, nil, errors.New("dial tcp: connection refused")
	}
	cfg.Opener = fail
	_, err = Run(context.Background(), cfg)
	if !storage.IsStorage(err) || !strings.Contains(err.Error(), "s3://bkt/some/prefix") || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("failing opener: %v", err)
	}
	// An output that is a file is a usage error.
	var ue *storage.UsageError
	if _, err := Run(context.Background(), Config{Out: "synth_test.go", Seeds: 1, Steps: 60}); !errors.As(err, &ue) {
		t.Errorf("output is a file: %v, want a *UsageError", err)
	}
	if _, err := Run(context.Background(), Config{Seeds: 1, Steps: 60}); !errors.As(err, &ue) {
		t.Errorf("no output: %v, want a *UsageError", err)
	}
}

// TestRetry: a write that fails transiently (midway or at commit) is
// retried and the object generated again, with the same bytes; a permanent
// failure is a *StorageError naming the object, after one attempt, and
// nothing is left behind.
func TestRetry(t *testing.T) {
	cfg := Config{Seeds: 2, Steps: 3000, Compression: "mixed", SplitFiles: 3, Extras: true, Seed: 4,
		Retry: storage.RetryPolicy{Attempts: 3, Initial: time.Millisecond, Max: time.Millisecond}}
	ref, _ := synthTestRun(t, cfg, "")
	_, want := synthTestObjects(t, ref, "")

	for _, mode := range []string{"write", "close"} {
		t.Run(mode, func(t *testing.T) {
			fb := &faultyBucket{objs: map[string][]byte{}, failFirst: mode, code: gcerrors.Internal, attempts: map[string]int{}}
			b := blob.NewBucket(fb)
			defer b.Close()
			sum, err := Write(context.Background(), b, "", cfg)
			if err != nil {
				t.Fatal(err)
			}
			if !maps.EqualFunc(fb.objs, want, bytes.Equal) {
				t.Error("retried objects differ from a sweep written without faults")
			}
			for k, n := range fb.attempts {
				if n != 2 {
					t.Errorf("%s: %d attempts, want 2", k, n)
				}
			}
			if len(sum.Objects) != len(want) {
				t.Errorf("%d objects in the summary, want %d", len(sum.Objects), len(want))
			}
		})
	}

	t.Run("permanent", func(t *testing.T) {
		fb := &faultyBucket{objs: map[string][]byte{}, failFirst: "close", failAll: true, code: gcerrors.PermissionDenied, attempts: map[string]int{}}
		b := blob.NewBucket(fb)
		defer b.Close()
		c := cfg
		c.Out = "gs://bkt/x?access_token=hunter2"
		_, err := Write(context.Background(), b, "", c)
		var se *storage.StorageError
		if !errors.As(err, &se) || se.Op != "write" || !strings.HasPrefix(se.URL, "gs://bkt/x/") || strings.Contains(err.Error(), "hunter2") {
			t.Fatalf("err %v, want a redacted *StorageError naming the object", err)
		}
		for k, n := range fb.attempts {
			if n != 1 {
				t.Errorf("%s: %d attempts of a permanent failure", k, n)
			}
		}
		if len(fb.objs) != 0 {
			t.Errorf("left behind: %v", slices.Collect(maps.Keys(fb.objs)))
		}
	})
}

// faultyBucket is an in-memory blob driver whose writes fail: the first
// attempt of every key (all of them with failAll), at its first Write or at
// Close, with an error of the given code.
type faultyBucket struct {
	driver.Bucket // what the tests do not call
	failFirst     string
	failAll       bool
	code          gcerrors.ErrorCode

	mu       sync.Mutex
	objs     map[string][]byte
	attempts map[string]int
}

type codeErr struct{ code gcerrors.ErrorCode }

func (e codeErr) Error() string { return fmt.Sprintf("injected fault (%v)", e.code) }

func (f *faultyBucket) ErrorCode(err error) gcerrors.ErrorCode {
	var ce codeErr
	if errors.As(err, &ce) {
		return ce.code
	}
	return gcerrors.Unknown
}
func (f *faultyBucket) As(any) bool             { return false }
func (f *faultyBucket) ErrorAs(error, any) bool { return false }
func (f *faultyBucket) Close() error            { return nil }

func (f *faultyBucket) Delete(_ context.Context, key string, _ *driver.DeleteOptions) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.objs, key)
	return nil
}

func (f *faultyBucket) NewTypedWriter(ctx context.Context, key, _ string, _ *driver.WriterOptions) (driver.Writer, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.attempts[key]++
	fail := f.failAll || f.attempts[key] == 1
	return &faultyWriter{ctx: ctx, f: f, key: key, fail: fail}, nil
}

type faultyWriter struct {
	ctx  context.Context
	f    *faultyBucket
	key  string
	fail bool
	buf  bytes.Buffer
}

func (w *faultyWriter) Write(p []byte) (int, error) {
	if w.fail && w.f.failFirst == "write" {
		return 0, codeErr{w.f.code}
	}
	return w.buf.Write(p)
}

func (w *faultyWriter) Close() error {
	if err := w.ctx.Err(); err != nil {
		return err // aborted: not committed
	}
	if w.fail {
		return codeErr{w.f.code}
	}
	w.f.mu.Lock()
	defer w.f.mu.Unlock()
	w.f.objs[w.key] = bytes.Clone(w.buf.Bytes())
	return nil
}

var _ io.WriteCloser = (*faultyWriter)(nil)
