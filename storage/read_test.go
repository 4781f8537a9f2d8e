package storage

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"gocloud.dev/blob"
	_ "gocloud.dev/blob/s3blob"
)

// TestReadAllTouches: an object sent slowly but steadily (a byte every
// 20 ms, 1.2 s in all, through S3's client) is read whole by ReadAll
// under a policy that abandons an attempt after 300 ms without progress,
// its attempt told of every read; read without telling the attempt (what
// the reads of results did), every attempt is abandoned.
func TestReadAllTouches(t *testing.T) {
	body := bytes.Repeat([]byte("x"), 60)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.Header().Set("Last-Modified", time.Now().UTC().Format(http.TimeFormat))
		w.WriteHeader(http.StatusOK)
		for _, c := range body {
			if _, err := w.Write([]byte{c}); err != nil {
				return
			}
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}))
	defer srv.Close()
	t.Setenv("AWS_ACCESS_KEY_ID", "test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "test")
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	ctx := context.Background()
	b, err := blob.OpenBucket(ctx, "s3://lab?region=us-east-1&use_path_style=true&response_checksum_validation=when_required&endpoint="+srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	p := RetryPolicy{Attempts: 2, Initial: time.Millisecond, Max: time.Millisecond, IdleTimeout: 300 * time.Millisecond}
	var got []byte
	err = p.Retry(ctx, func(ctx context.Context, touch func()) error {
		var err error
		got, err = ReadAll(ctx, b, "slow.jsonl", touch)
		return err
	})
	if err != nil || !bytes.Equal(got, body) {
		t.Fatalf("ReadAll: %q, %v; want the object whole", got, err)
	}
	err = p.Retry(ctx, func(ctx context.Context, _ func()) error {
		_, err := b.ReadAll(ctx, "slow.jsonl")
		return err
	})
	if err == nil || !strings.Contains(err.Error(), "made no progress") {
		t.Errorf("read without touching the attempt: %v, want it abandoned", err)
	}
}
