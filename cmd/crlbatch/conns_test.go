package main

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
)

// connsFor sends rounds of n requests at once through do to a server on
// 127.0.0.1 that answers none until all n of a round are in, so that each
// round needs n connections at once, and returns how many the server saw
// opened.
func connsFor(t *testing.T, do func(*http.Request) (*http.Response, error), rounds, n int) int64 {
	t.Helper()
	var opened atomic.Int64
	var mu sync.Mutex
	arrived, gate := 0, make(chan struct{})
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		if arrived++; arrived == n {
			close(gate)
		}
		g := gate
		mu.Unlock()
		<-g
		io.WriteString(w, "ok")
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			opened.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()
	for range rounds {
		mu.Lock()
		arrived, gate = 0, make(chan struct{})
		mu.Unlock()
		var wg sync.WaitGroup
		for range n {
			wg.Go(func() {
				req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
				resp, err := do(req)
				if err != nil {
					t.Error(err)
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			})
		}
		wg.Wait()
		time.Sleep(20 * time.Millisecond) // the connections back in the pool
	}
	return opened.Load()
}

// TestKeepConnections: three rounds of sixteen requests at once open
// sixteen connections through Go's default transport (gocloud.dev's GCS
// client's) and an S3 client's, once keepConnections and
// keepS3Connections have done their work; as they come, the default
// transport closes all but 2 after each round and the AWS SDK's all but
// 10, and opens them again for the next (tried: 44 and 28).
func TestKeepConnections(t *testing.T) {
	const rounds, n = 3, 16
	// Go's default of 2 idle connections per host, as http.DefaultTransport
	// has it before keepConnections.
	before := &http.Transport{}
	got := connsFor(t, (&http.Client{Transport: before}).Do, rounds, n)
	t.Logf("a transport as Go's default: %d connections", got)
	if got < 2*n {
		t.Fatalf("a transport that keeps 2 idle connections opened %d, want more than %d: the test cannot tell", got, 2*n)
	}
	keepConnections()
	if got := connsFor(t, (&http.Client{Transport: http.DefaultTransport}).Do, rounds, n); got > n+n/4 {
		t.Errorf("the default transport opened %d connections for %d rounds of %d requests, want about %d", got, rounds, n, n)
	}
	s3c := keepS3Connections(awshttp.NewBuildableClient())
	if got := connsFor(t, s3c.Do, rounds, n); got > n+n/4 {
		t.Errorf("the S3 client opened %d connections for %d rounds of %d requests, want about %d", got, rounds, n, n)
	}
	got = connsFor(t, awshttp.NewBuildableClient().Do, rounds, n)
	t.Logf("the AWS SDK's own client: %d connections", got)
	if got <= n+n/4 {
		t.Errorf("the AWS SDK's own client opened %d connections: the test cannot tell it from keepS3Connections'", got)
	}
}
