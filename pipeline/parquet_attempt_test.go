package pipeline

import (
	"bytes"
	"context"
	"io"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"gocloud.dev/blob"
	"gocloud.dev/blob/driver"
	"gocloud.dev/gcerrors"

	"github.com/crlbatch/crlbatch/readers"
)

// lateBucket is a read-only blob driver over another bucket whose range
// reads of part of an object (not the whole: a Parquet object's footer and
// column chunks) go through onRange first: a store that answers them
// slowly, or not at all.
type lateBucket struct {
	driver.Bucket // what the tests do not call
	b             *blob.Bucket
	onRange       func(ctx context.Context) error
}

func (s *lateBucket) ErrorCode(err error) gcerrors.ErrorCode { return gcerrors.Code(err) }
func (s *lateBucket) As(any) bool                            { return false }
func (s *lateBucket) ErrorAs(error, any) bool                { return false }
func (s *lateBucket) Close() error                           { return nil }

func (s *lateBucket) Attributes(ctx context.Context, key string) (*driver.Attributes, error) {
	a, err := s.b.Attributes(ctx, key)
	if err != nil {
		return nil, err
	}
	return &driver.Attributes{Size: a.Size, ModTime: a.ModTime, ETag: a.ETag, MD5: a.MD5, ContentType: a.ContentType}, nil
}

func (s *lateBucket) ListPaged(ctx context.Context, opts *driver.ListOptions) (*driver.ListPage, error) {
	token := opts.PageToken
	if len(token) == 0 {
		token = blob.FirstPageToken
	}
	page, next, err := s.b.ListPage(ctx, token, max(opts.PageSize, 1000), &blob.ListOptions{Prefix: opts.Prefix, Delimiter: opts.Delimiter})
	if err != nil {
		return nil, err
	}
	out := &driver.ListPage{NextPageToken: next}
	for _, o := range page {
		out.Objects = append(out.Objects, &driver.ListObject{Key: o.Key, ModTime: o.ModTime, Size: o.Size, MD5: o.MD5, IsDir: o.IsDir})
	}
	return out, nil
}

func (s *lateBucket) NewRangeReader(ctx context.Context, key string, off, n int64, _ *driver.ReaderOptions) (driver.Reader, error) {
	if off > 0 || n >= 0 {
		if err := s.onRange(ctx); err != nil {
			return nil, err
		}
	}
	r, err := s.b.NewRangeReader(ctx, key, off, n, nil)
	if err != nil {
		return nil, err
	}
	return rangeReader{r}, nil
}

type rangeReader struct{ r *blob.Reader }

func (r rangeReader) Read(p []byte) (int, error) { return r.r.Read(p) }
func (r rangeReader) Close() error               { return r.r.Close() }
func (r rangeReader) As(any) bool                { return false }
func (r rangeReader) Download(w io.Writer) error { _, err := io.Copy(w, r.r); return err }
func (r rangeReader) Attributes() *driver.ReaderAttributes {
	return &driver.ReaderAttributes{ContentType: r.r.ContentType(), ModTime: r.r.ModTime(), Size: r.r.Size()}
}

// TestParquetRangesInTheReadAttempt: a Parquet object read by ranges (past
// Config.ParquetWholeBytes) is read within its read attempt: each range
// read reports progress to the attempt's watchdog, so that ranges coming
// slowly but steadily (each 60 ms late, the attempt abandoned after 150 ms
// without progress) do not get the object abandoned however long the
// whole takes; and a range read the store never answers is abandoned with
// the attempt and made again by the next one. Before, the ranges were read
// outside the attempt: the first case failed as a stall once the decode
// took longer than the bound, the second hung.
func TestParquetRangesInTheReadAttempt(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	op := &memOpener{}
	b, _, _ := op.open(ctx, "mem://lab")
	var jsonl strings.Builder
	for i := range 3000 {
		jsonl.WriteString(`{"run_id":"a","seed":1,"algorithm_id":"ppo","reward":0.` + string(rune('1'+i%9)) + `,"regime_id":"` + string(rune('x'+i/500%2)) + `"}` + "\n")
	}
	var pq bytes.Buffer
	if err := readers.ConvertToParquet("mem://lab/pq/a.jsonl", strings.NewReader(jsonl.String()), &pq, 0, 0); err != nil {
		t.Fatal(err)
	}
	if err := b.WriteAll(ctx, "pq/a.parquet", pq.Bytes(), nil); err != nil {
		t.Fatal(err)
	}
	score := func(out string, onRange func(ctx context.Context) error, retry RetryPolicy) (*Summary, error) {
		cfg := memJob(t, op, "mem://lab/pq/", "mem://out/"+out)
		if onRange != nil {
			slow := blob.NewBucket(&lateBucket{b: b, onRange: onRange})
			cfg.Opener = func(ctx context.Context, u string) (*blob.Bucket, func() error, error) {
				if strings.HasPrefix(u, "mem://lab") {
					return slow, func() error { return nil }, nil
				}
				return op.open(ctx, u)
			}
		}
		cfg.Patterns, cfg.ParquetWholeBytes, cfg.Concurrency, cfg.Retry = []string{"*.parquet"}, 1<<10, 1, retry
		done := make(chan struct{})
		var sum *Summary
		var err error
		go func() {
			defer close(done)
			sum, err = Run(ctx, cfg)
		}()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			t.Fatalf("%s: still running after 20 s", out)
		}
		return sum, err
	}
	if _, err := score("plain", nil, DefaultRetry()); err != nil {
		t.Fatal(err)
	}
	bound := RetryPolicy{Attempts: 2, Initial: time.Millisecond, Max: time.Millisecond, IdleTimeout: 150 * time.Millisecond}
	var ranges atomic.Int32
	late := func(ctx context.Context) error {
		ranges.Add(1)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(60 * time.Millisecond):
			return nil
		}
	}
	start := time.Now()
	if _, err := score("slow-steady", late, bound); err != nil {
		t.Fatalf("ranges each 60 ms late: %v", err)
	}
	if el := time.Since(start); int64(ranges.Load())*60*int64(time.Millisecond) <= int64(bound.IdleTimeout) {
		t.Fatalf("%d range reads in %v: not longer than the bound, the test proves nothing", ranges.Load(), el)
	}
	var stalled atomic.Bool
	never := func(ctx context.Context) error {
		if stalled.CompareAndSwap(false, true) {
			<-ctx.Done()
			return ctx.Err()
		}
		return nil
	}
	if _, err := score("slow-stalled", never, bound); err != nil {
		t.Fatalf("a range read never answered: %v", err)
	}
	if !stalled.Load() {
		t.Fatal("no range read was held")
	}
	ob, _, _ := op.open(ctx, "mem://out")
	for _, out := range []string{"slow-steady/", "slow-stalled/"} {
		for _, name := range []string{"runs.parquet", "families.parquet", "report.md"} {
			want, err := ob.ReadAll(ctx, "plain/"+name)
			if err != nil {
				t.Fatal(err)
			}
			got, err := ob.ReadAll(ctx, out+name)
			if err != nil || !bytes.Equal(got, want) {
				t.Errorf("%s%s: %v, differs from the job's without delays", out, name, err)
			}
		}
	}
}
