package main

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// TestReadOnlyCommandInterrupted: a command that writes nothing (here
// cache stats, on an S3 endpoint on loopback that never answers), stopped
// by a signal (the context the signal cancels), exits 130 saying only that
// it was interrupted, not a job's "nothing was published, and files
// written so far were removed".
func TestReadOnlyCommandInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var once sync.Once
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		once.Do(cancel) // the request is under way: the signal comes
		<-r.Context().Done()
	}))
	defer srv.Close()
	t.Setenv("AWS_ACCESS_KEY_ID", "test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "test")
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	var out, errb bytes.Buffer
	code := run(ctx, []string{"crlbatch", "cache", "stats", "s3://lab/cache?region=us-east-1&use_path_style=true&endpoint=" + srv.URL}, &out, &errb)
	if code != exitInterrupt || errb.String() != "crlbatch: cache stats interrupted\n" {
		t.Errorf("exit %d, stderr %q; want %d and only that cache stats was interrupted", code, errb.String(), exitInterrupt)
	}
	if strings.Contains(errb.String(), "published") {
		t.Errorf("a command that writes nothing speaks of publishing: %q", errb.String())
	}
}
