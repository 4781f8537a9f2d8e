package integration

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestFaultProxy checks each fault against a plain upstream, without any
// object store: what the client sees is what the fault promises.
func TestFaultProxy(t *testing.T) {
	t.Parallel()
	body := strings.Repeat("0123456789", 1000)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Host == "" {
			t.Errorf("no Host header upstream")
		}
		w.Header().Set("X-Host", r.Host)
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		io.WriteString(w, body)
	}))
	defer up.Close()
	p, err := NewFaultProxy(strings.TrimPrefix(up.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	const hold = 200 * time.Millisecond
	p.SetTiming(100*time.Millisecond, hold)
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	get := func(ctx context.Context) (*http.Response, string, error) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, p.URL()+"/bucket/some/key.jsonl", nil)
		resp, err := client.Do(req)
		if err != nil {
			return nil, "", err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return resp, string(b), err
	}

	for _, tc := range []struct {
		fault  Fault
		status int
		check  func(resp *http.Response, got string, err error) string
	}{
		{Pass, 200, func(resp *http.Response, got string, err error) string {
			if err != nil || got != body || resp.Header.Get("X-Host") != strings.TrimPrefix(p.URL(), "http://") {
				return "want the body unchanged and the client's Host header upstream"
			}
			return ""
		}},
		{SlowDown, 503, func(resp *http.Response, got string, err error) string {
			if err != nil || resp.StatusCode != 503 || !strings.Contains(got, "<Code>SlowDown</Code>") {
				return "want 503 with S3's SlowDown error"
			}
			return ""
		}},
		{InternalError, 500, func(resp *http.Response, got string, err error) string {
			if err != nil || resp.StatusCode != 500 || !strings.Contains(got, "<Code>InternalError</Code>") {
				return "want 500 with S3's InternalError"
			}
			return ""
		}},
		{Reset, 0, func(_ *http.Response, _ string, err error) string {
			if !errors.Is(err, syscall.ECONNRESET) && !errors.Is(err, io.EOF) {
				return "want a connection reset"
			}
			return ""
		}},
		{ResetAfter, 0, func(_ *http.Response, _ string, err error) string {
			if !errors.Is(err, syscall.ECONNRESET) && !errors.Is(err, io.EOF) {
				return "want a connection reset"
			}
			return ""
		}},
		{Truncate, 200, func(_ *http.Response, got string, err error) string {
			if !errors.Is(err, io.ErrUnexpectedEOF) || len(got) != len(body)/2 {
				return "want half the body, then unexpected EOF"
			}
			return ""
		}},
		{StallBody, 200, func(_ *http.Response, got string, err error) string {
			if !errors.Is(err, io.ErrUnexpectedEOF) || len(got) != len(body)/2 {
				return "want half the body, a pause, then unexpected EOF"
			}
			return ""
		}},
		{Stall, 200, func(_ *http.Response, got string, err error) string {
			if err != nil || got != body {
				return "want the body after the hold"
			}
			return ""
		}},
		{Slow, 200, func(_ *http.Response, got string, err error) string {
			if err != nil || got != body {
				return "want the whole body, slowly"
			}
			return ""
		}},
	} {
		name := string(tc.fault)
		if name == "" {
			name = "pass"
		}
		t.Run(name, func(t *testing.T) {
			p.Reset()
			p.SetPolicy(Always(Kinds("get"), tc.fault))
			start := time.Now()
			resp, got, err := get(context.Background())
			if msg := tc.check(resp, got, err); msg != "" {
				t.Errorf("%s: got %d bytes, error %v", msg, len(got), err)
			}
			if (tc.fault == Stall || tc.fault == StallBody) && time.Since(start) < hold {
				t.Errorf("answered after %v, before the hold of %v", time.Since(start), hold)
			}
			log := p.Log()
			if len(log) != 1 || log[0].Fault != tc.fault || log[0].Kind != "get" || log[0].Key != "some/key.jsonl" || log[0].Status != tc.status {
				t.Errorf("log %+v", log)
			}
		})
	}

	t.Run("stall released when the client gives up", func(t *testing.T) {
		p.SetTiming(0, 0)
		p.SetPolicy(Always(Any, Stall))
		// The client gives up once the proxy holds its request (a
		// deadline could pass before the request arrives, on a loaded
		// machine, and nothing would be held).
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		go func() {
			for deadline := time.Now().Add(30 * time.Second); p.Holding() == 0 && time.Now().Before(deadline); {
				time.Sleep(time.Millisecond)
			}
			cancel()
		}()
		if _, _, err := get(ctx); !errors.Is(err, context.Canceled) {
			t.Errorf("want the client's cancel, got %v", err)
		}
		deadline := time.Now().Add(5 * time.Second)
		for p.Holding() > 0 && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if p.Holding() != 0 || p.Held() == 0 {
			t.Errorf("holding %d, held %d: want 0 and more than 0", p.Holding(), p.Held())
		}
	})
}

// TestPolicies checks the policies' counting and that Random is the same
// sequence for the same seed.
func TestPolicies(t *testing.T) {
	t.Parallel()
	req := func(method, key string) *Request {
		return &Request{Method: method, Kind: strings.ToLower(method), Bucket: "b", Key: key}
	}
	first := FirstN(Kinds("get"), 2, SlowDown)
	var got []Fault
	for _, r := range []*Request{req("GET", "a"), req("PUT", "a"), req("GET", "b"), req("GET", "c")} {
		got = append(got, first(r))
	}
	if want := []Fault{SlowDown, Pass, SlowDown, Pass}; !equalFaults(got, want) {
		t.Errorf("FirstN: %v, want %v", got, want)
	}
	each := EachFirstN(Kinds("get"), 1, Reset)
	got = nil
	for _, k := range []string{"a", "b", "a", "b"} {
		got = append(got, each(req("GET", k)))
	}
	if want := []Fault{Reset, Reset, Pass, Pass}; !equalFaults(got, want) {
		t.Errorf("EachFirstN: %v, want %v", got, want)
	}
	seq := func(seed uint64) []Fault {
		r := Random(Any, 0.3, seed, SlowDown, Reset)
		var out []Fault
		for i := 0; i < 200; i++ {
			out = append(out, r(req("GET", "k")))
		}
		return out
	}
	a, b := seq(7), seq(7)
	if !equalFaults(a, b) {
		t.Errorf("Random is not reproducible with one seed")
	}
	n := 0
	for _, f := range a {
		if f != Pass {
			n++
		}
	}
	if n < 30 || n > 90 {
		t.Errorf("Random(0.3) faulted %d of 200", n)
	}
}

func equalFaults(a, b []Fault) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestClassify names the requests of each client as the tests rely on.
func TestClassify(t *testing.T) {
	t.Parallel()
	u := func(s string) *url.URL {
		x, err := url.Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		return x
	}
	for _, tc := range []struct {
		classify          func(string, *url.URL) (string, string, string)
		method, url       string
		bucket, key, kind string
	}{
		{ClassifyS3, "GET", "/sweeps?list-type=2&prefix=night1%2F", "sweeps", "", "list"},
		{ClassifyS3, "GET", "/sweeps/night1/odd%20names%20%C3%BC%2B%3D/a.jsonl?x-id=GetObject", "sweeps", "night1/odd names ü+=/a.jsonl", "get"},
		{ClassifyS3, "HEAD", "/results/e2e/manifest.json", "results", "e2e/manifest.json", "head"},
		{ClassifyS3, "PUT", "/results/e2e/runs.parquet?x-id=PutObject", "results", "e2e/runs.parquet", "put"},
		{ClassifyGCS, "GET", "/storage/v1/b/sweeps/o?alt=json&prefix=night1%2F", "sweeps", "", "list"},
		{ClassifyGCS, "GET", "/sweeps/night1/a.jsonl", "sweeps", "night1/a.jsonl", "get"},
		{ClassifyGCS, "GET", "/storage/v1/b/results/o/e2e%2Fmanifest.json?alt=json", "results", "e2e/manifest.json", "head"},
		{ClassifyGCS, "POST", "/upload/storage/v1/b/results/o?uploadType=multipart&name=e2e%2Freport.md", "results", "e2e/report.md", "put"},
		{ClassifyAzure, "GET", "/devstoreaccount1/sweeps?restype=container&comp=list&prefix=night1%2F", "sweeps", "", "list"},
		{ClassifyAzure, "GET", "/devstoreaccount1/sweeps/night1%2Fa.jsonl", "sweeps", "night1/a.jsonl", "get"},
		{ClassifyAzure, "PUT", "/devstoreaccount1/results/e2e%2Freport.md", "results", "e2e/report.md", "put"},
	} {
		b, k, kind := tc.classify(tc.method, u(tc.url))
		if b != tc.bucket || k != tc.key || kind != tc.kind {
			t.Errorf("%s %s: %q %q %q, want %q %q %q", tc.method, tc.url, b, k, kind, tc.bucket, tc.key, tc.kind)
		}
	}
}
