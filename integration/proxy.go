package integration

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Fault is what the proxy does to one request.
type Fault string

// The faults. Each one is something object stores really do.
const (
	Pass Fault = "" // forward the request and its response unchanged
	// SlowDown answers 503 with S3's SlowDown error, without forwarding.
	SlowDown Fault = "503-slowdown"
	// InternalError answers 500 with S3's InternalError, without forwarding.
	InternalError Fault = "500-internal"
	// Reset resets the connection (TCP RST) before forwarding.
	Reset Fault = "reset"
	// ResetAfter forwards the request (so a write takes effect), then resets
	// the connection instead of answering.
	ResetAfter Fault = "reset-after"
	// Truncate forwards, sends the headers (with the full Content-Length)
	// and half the body, then closes the connection.
	Truncate Fault = "truncate"
	// Slow forwards, then delays the headers by half the proxy's delay and
	// trickles the body over the other half.
	Slow Fault = "slow"
	// Stall answers nothing for the proxy's hold (forever if 0, until the
	// client gives up or the proxy closes), then forwards.
	Stall Fault = "stall"
	// StallBody forwards, sends the headers and half the body, then sends
	// nothing more for the proxy's hold (forever if 0) and closes the
	// connection.
	StallBody Fault = "stall-body"
)

// Request is what a Policy sees of one request. Kind and Key assume S3's
// path-style addressing (/bucket/key); for other protocols Key is the path.
type Request struct {
	Seq    int    // 1-based order of arrival at the proxy
	Method string // GET, PUT, …
	Kind   string // list, get, head, put, delete, post, other
	Bucket string
	Key    string // unescaped object key; "" for bucket-level requests
	Query  url.Values
}

// Policy decides the fault of each request. It is called under the proxy's
// lock, in order of arrival, so a stateful Policy needs no locking of its own.
type Policy func(r *Request) Fault

// Match selects requests.
type Match func(r *Request) bool

// Any matches every request.
func Any(*Request) bool { return true }

// Kinds matches requests of the given kinds (list, get, head, put, delete, post).
func Kinds(kinds ...string) Match {
	return func(r *Request) bool {
		for _, k := range kinds {
			if r.Kind == k {
				return true
			}
		}
		return false
	}
}

// KeySuffix matches requests whose object key ends in suffix.
func KeySuffix(suffix string) Match {
	return func(r *Request) bool { return r.Key != "" && strings.HasSuffix(r.Key, suffix) }
}

// KeyContains matches requests whose object key contains s.
func KeyContains(s string) Match {
	return func(r *Request) bool { return r.Key != "" && strings.Contains(r.Key, s) }
}

// And matches requests that every m matches.
func And(ms ...Match) Match {
	return func(r *Request) bool {
		for _, m := range ms {
			if !m(r) {
				return false
			}
		}
		return true
	}
}

// Always gives every matching request the fault.
func Always(m Match, f Fault) Policy {
	return func(r *Request) Fault {
		if m(r) {
			return f
		}
		return Pass
	}
}

// FirstN gives the first n matching requests the fault, then passes.
func FirstN(m Match, n int, f Fault) Policy {
	seen := 0
	return func(r *Request) Fault {
		if !m(r) {
			return Pass
		}
		seen++
		if seen <= n {
			return f
		}
		return Pass
	}
}

// EachFirstN gives the first n matching requests of every distinct
// (method, key) the fault: each object fails n times, then succeeds.
func EachFirstN(m Match, n int, f Fault) Policy {
	seen := map[string]int{}
	return func(r *Request) Fault {
		if !m(r) {
			return Pass
		}
		k := r.Method + " " + r.Bucket + "/" + r.Key
		seen[k]++
		if seen[k] <= n {
			return f
		}
		return Pass
	}
}

// Random gives each matching request a fault with probability p, drawn
// uniformly from faults, from a PRNG seeded with seed. Which requests fail
// depends on their order of arrival, which concurrency makes vary; the rate
// does not.
func Random(m Match, p float64, seed uint64, faults ...Fault) Policy {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	return func(r *Request) Fault {
		if !m(r) || len(faults) == 0 {
			return Pass
		}
		if rng.Float64() < p {
			return faults[rng.IntN(len(faults))]
		}
		return Pass
	}
}

// Chain applies the policies in order; the first fault wins.
func Chain(ps ...Policy) Policy {
	return func(r *Request) Fault {
		f := Pass
		for _, p := range ps {
			// Every policy sees every request, so counters stay in step.
			if g := p(r); g != Pass && f == Pass {
				f = g
			}
		}
		return f
	}
}

// Entry records one request that went through the proxy.
type Entry struct {
	Request
	Fault    Fault
	Status   int   // status sent to the client; 0 when the connection was cut first
	BytesIn  int64 // request body bytes forwarded
	BytesOut int64 // response body bytes sent to the client
	Duration time.Duration
}

// FaultProxy is a loopback HTTP proxy in front of one upstream server. It
// forwards each request with its Host header unchanged (so signatures over
// the host still verify) unless its Policy says otherwise.
type FaultProxy struct {
	ln       net.Listener
	srv      *http.Server
	tr       *http.Transport
	closed   chan struct{}
	holding  atomic.Int64
	held     atomic.Int64
	most     atomic.Int64 // the most requests held at once since the last ResetMostHolding
	inflight atomic.Int64
	opened   atomic.Int64 // connections clients opened since the last Opened

	mu       sync.Mutex
	upstream string
	policy   Policy
	classify func(method string, u *url.URL) (bucket, key, kind string)
	delay    time.Duration // the total extra time of a Slow response
	hold     time.Duration // how long Stall and StallBody hold; 0: until the client gives up
	seq      int
	log      []Entry
}

// NewFaultProxy listens on a free 127.0.0.1 port and forwards to upstream
// (host:port; may be set later with SetUpstream, for a server that must know
// the proxy's address before it starts). It starts with no faults.
func NewFaultProxy(upstream string) (*FaultProxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &FaultProxy{
		delay:    time.Second,
		classify: ClassifyS3,
		upstream: upstream,
		ln:       ln,
		closed:   make(chan struct{}),
		tr: &http.Transport{
			Proxy:               nil,
			DisableCompression:  true, // never re-encode a body
			MaxIdleConnsPerHost: 64,
			IdleConnTimeout:     30 * time.Second,
		},
	}
	p.srv = &http.Server{Handler: p, ReadHeaderTimeout: 30 * time.Second,
		ConnState: func(_ net.Conn, s http.ConnState) {
			if s == http.StateNew {
				p.opened.Add(1)
			}
		}}
	go p.srv.Serve(ln)
	return p, nil
}

// Addr is the proxy's host:port.
func (p *FaultProxy) Addr() string { return p.ln.Addr().String() }

// URL is http://host:port.
func (p *FaultProxy) URL() string { return "http://" + p.Addr() }

// SetUpstream sets the server requests are forwarded to (host:port).
func (p *FaultProxy) SetUpstream(addr string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.upstream = addr
}

// SetClassify sets how requests are named for policies and the log
// (default ClassifyS3).
func (p *FaultProxy) SetClassify(fn func(method string, u *url.URL) (bucket, key, kind string)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.classify = fn
}

// SetTiming sets the total extra time of a Slow response (default 1 s) and
// how long Stall and StallBody hold (0, the default: until the client gives
// up or the proxy closes).
func (p *FaultProxy) SetTiming(delay, hold time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.delay, p.hold = delay, hold
}

// SetPolicy replaces the policy (nil: no faults).
func (p *FaultProxy) SetPolicy(pol Policy) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.policy = pol
}

// Reset forgets the recorded requests and restarts the sequence.
func (p *FaultProxy) Reset() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.seq, p.log = 0, nil
}

// Log returns the requests recorded so far, in order of completion. It first
// waits (up to 5 s) for the requests in flight to be recorded: a client can
// have its whole response a moment before the proxy's handler returns.
func (p *FaultProxy) Log() []Entry {
	for deadline := time.Now().Add(5 * time.Second); p.inflight.Load() > 0 && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Entry(nil), p.log...)
}

// Holding is the number of requests a Stall or StallBody holds right now.
func (p *FaultProxy) Holding() int { return int(p.holding.Load()) }

// Held is the number of requests a Stall or StallBody has held so far.
func (p *FaultProxy) Held() int { return int(p.held.Load()) }

// MostHolding is the most requests a Stall or StallBody held at once since
// the last ResetMostHolding (or the proxy's start): how many requests the
// client had in flight at once.
func (p *FaultProxy) MostHolding() int { return int(p.most.Load()) }

// Opened is the number of connections clients opened to the proxy since
// the last call.
func (p *FaultProxy) Opened() int { return int(p.opened.Swap(0)) }

// ResetMostHolding starts MostHolding's count again.
func (p *FaultProxy) ResetMostHolding() { p.most.Store(0) }

// Close stops the proxy, releases held requests and cuts open connections.
func (p *FaultProxy) Close() error {
	select {
	case <-p.closed:
		return nil
	default:
	}
	close(p.closed)
	err := p.srv.Close()
	p.tr.CloseIdleConnections()
	return err
}

// ClassifyS3 names an S3 path-style request: its bucket, key and kind.
func ClassifyS3(method string, u *url.URL) (bucket, key, kind string) {
	path := strings.TrimPrefix(u.Path, "/")
	bucket, key, _ = strings.Cut(path, "/")
	q := u.Query()
	switch {
	case method == http.MethodGet && key == "" && (q.Has("list-type") || q.Has("prefix") || q.Has("delimiter") || len(q) == 0):
		kind = "list"
	case method == http.MethodGet:
		kind = "get"
	case method == http.MethodHead:
		kind = "head"
	case method == http.MethodPut:
		kind = "put"
	case method == http.MethodDelete:
		kind = "delete"
	case method == http.MethodPost:
		kind = "post"
	default:
		kind = "other"
	}
	return bucket, key, kind
}

// ClassifyGCS names a request of the Go GCS client to fake-gcs-server:
// JSON API listing, metadata, uploads and deletes, XML API or alt=media
// reads.
func ClassifyGCS(method string, u *url.URL) (bucket, key, kind string) {
	path := u.Path
	q := u.Query()
	switch {
	case strings.HasPrefix(path, "/upload/storage/v1/b/"):
		bucket, _, _ = strings.Cut(strings.TrimPrefix(path, "/upload/storage/v1/b/"), "/")
		return bucket, q.Get("name"), "put"
	case strings.HasPrefix(path, "/storage/v1/b/"):
		rest := strings.TrimPrefix(path, "/storage/v1/b/")
		bucket, rest, _ = strings.Cut(rest, "/")
		switch {
		case rest == "o" && method == http.MethodGet:
			return bucket, "", "list"
		case strings.HasPrefix(rest, "o/"):
			key = strings.TrimPrefix(rest, "o/")
			switch {
			case method == http.MethodDelete:
				return bucket, key, "delete"
			case method == http.MethodGet && q.Get("alt") == "media":
				return bucket, key, "get"
			case method == http.MethodGet:
				return bucket, key, "head"
			}
		}
		return bucket, "", "other"
	}
	bucket, key, kind = ClassifyS3(method, u) // XML API: /bucket/key
	return bucket, key, kind
}

// ClassifyAzure names a request to Azurite (path-style:
// /account/container/blob).
func ClassifyAzure(method string, u *url.URL) (bucket, key, kind string) {
	path := strings.TrimPrefix(u.Path, "/")
	_, path, _ = strings.Cut(path, "/") // the account
	bucket, key, _ = strings.Cut(path, "/")
	q := u.Query()
	switch {
	case key == "" && q.Get("comp") == "list":
		kind = "list"
	case key == "":
		kind = "other"
	case method == http.MethodGet && q.Get("comp") == "":
		kind = "get"
	case method == http.MethodHead || (method == http.MethodGet && q.Get("comp") == "properties"):
		kind = "head"
	case method == http.MethodPut:
		kind = "put"
	case method == http.MethodDelete:
		kind = "delete"
	default:
		kind = "other"
	}
	return bucket, key, kind
}

func (p *FaultProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	p.inflight.Add(1)
	p.mu.Lock()
	bucket, key, kind := p.classify(r.Method, r.URL)
	upstream, delay, hold := p.upstream, p.delay, p.hold
	p.seq++
	req := Request{Seq: p.seq, Method: r.Method, Kind: kind, Bucket: bucket, Key: key, Query: r.URL.Query()}
	f := Pass
	if p.policy != nil {
		f = p.policy(&req)
	}
	p.mu.Unlock()

	e := Entry{Request: req, Fault: f}
	defer func() {
		e.Duration = time.Since(start)
		p.mu.Lock()
		p.log = append(p.log, e)
		p.mu.Unlock()
		p.inflight.Add(-1)
	}()

	switch f {
	case SlowDown:
		e.Status = http.StatusServiceUnavailable
		s3Error(w, r, e.Status, "SlowDown", "Please reduce your request rate.", req.Seq)
		return
	case InternalError:
		e.Status = http.StatusInternalServerError
		s3Error(w, r, e.Status, "InternalError", "We encountered an internal error. Please try again.", req.Seq)
		return
	case Reset:
		io.Copy(io.Discard, io.LimitReader(r.Body, 64<<10))
		resetConn(w)
		return
	case Stall:
		if !p.holdFor(r.Context(), hold) {
			return
		}
	}

	resp, err := p.forward(r, upstream, &e)
	if err != nil {
		if r.Context().Err() == nil {
			e.Status = http.StatusBadGateway
			http.Error(w, "proxy: "+err.Error(), http.StatusBadGateway)
		}
		return
	}
	defer resp.Body.Close()

	if f == ResetAfter {
		io.Copy(io.Discard, resp.Body)
		resetConn(w)
		return
	}

	h := w.Header()
	for k, vs := range resp.Header {
		if hopByHop[http.CanonicalHeaderKey(k)] {
			continue
		}
		h[k] = vs
	}
	if f == Slow {
		if !p.sleep(r.Context(), delay/2) {
			return
		}
	}
	e.Status = resp.StatusCode
	w.WriteHeader(resp.StatusCode)
	if r.Method == http.MethodHead {
		return
	}

	switch f {
	case Truncate, StallBody:
		half := resp.ContentLength / 2
		if resp.ContentLength < 0 {
			half = 1024
		}
		n, _ := io.CopyN(w, resp.Body, half)
		e.BytesOut += n
		if fl, ok := w.(http.Flusher); ok {
			fl.Flush()
		}
		if f == StallBody {
			p.holdFor(r.Context(), hold)
		}
		// Cut the connection: the client sees fewer bytes than announced.
		panic(http.ErrAbortHandler)
	case Slow:
		const pieces = 16
		chunk := max(resp.ContentLength/pieces, 1)
		for {
			n, err := io.CopyN(w, resp.Body, chunk)
			e.BytesOut += n
			if fl, ok := w.(http.Flusher); ok {
				fl.Flush()
			}
			if err != nil {
				return
			}
			if !p.sleep(r.Context(), delay/(2*pieces)) {
				return
			}
		}
	default:
		n, _ := io.Copy(w, resp.Body)
		e.BytesOut += n
	}
}

// forward sends r upstream with the same method, raw target, headers and
// Host.
func (p *FaultProxy) forward(r *http.Request, upstream string, e *Entry) (*http.Response, error) {
	var body io.Reader = http.NoBody
	cb := &countingBody{r: r.Body}
	if r.ContentLength != 0 || len(r.TransferEncoding) > 0 {
		body = cb
	}
	out, err := http.NewRequestWithContext(r.Context(), r.Method, "http://"+upstream+r.RequestURI, body)
	if err != nil {
		return nil, err
	}
	for k, vs := range r.Header {
		if hopByHop[http.CanonicalHeaderKey(k)] {
			continue
		}
		out.Header[k] = vs
	}
	out.Host = r.Host
	out.ContentLength = r.ContentLength
	resp, err := p.tr.RoundTrip(out)
	e.BytesIn = cb.n.Load()
	return resp, err
}

// holdFor waits for d (forever if 0); false if the client gave up or the
// proxy closed first.
func (p *FaultProxy) holdFor(ctx context.Context, d time.Duration) bool {
	p.held.Add(1)
	n := p.holding.Add(1)
	for m := p.most.Load(); n > m && !p.most.CompareAndSwap(m, n); m = p.most.Load() {
	}
	defer p.holding.Add(-1)
	if d <= 0 {
		select {
		case <-ctx.Done():
		case <-p.closed:
		}
		return false
	}
	return p.sleep(ctx, d)
}

func (p *FaultProxy) sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
	case <-p.closed:
	}
	return false
}

var hopByHop = map[string]bool{
	"Connection": true, "Keep-Alive": true, "Proxy-Authenticate": true, "Proxy-Authorization": true,
	"Proxy-Connection": true, "Te": true, "Trailer": true, "Transfer-Encoding": true, "Upgrade": true,
}

func s3Error(w http.ResponseWriter, r *http.Request, status int, code, msg string, seq int) {
	w.Header().Set("Content-Type", "application/xml")
	w.Header().Set("X-Amz-Request-Id", fmt.Sprintf("proxy-%d", seq))
	if code == "SlowDown" {
		w.Header().Set("Retry-After", "0")
	}
	io.Copy(io.Discard, io.LimitReader(r.Body, 64<<20))
	w.WriteHeader(status)
	if r.Method == http.MethodHead {
		return
	}
	fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?>`+"\n"+
		`<Error><Code>%s</Code><Message>%s</Message><Resource>%s</Resource><RequestId>proxy-%d</RequestId></Error>`,
		code, msg, r.URL.EscapedPath(), seq)
}

// resetConn closes the client's connection with a TCP RST.
func resetConn(w http.ResponseWriter) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		panic(http.ErrAbortHandler)
	}
	conn, _, err := hj.Hijack()
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		tc.SetLinger(0)
	}
	conn.Close()
}

type countingBody struct {
	r io.Reader
	n atomic.Int64
}

func (c *countingBody) Read(b []byte) (int, error) {
	n, err := c.r.Read(b)
	c.n.Add(int64(n))
	if errors.Is(err, http.ErrBodyReadAfterClose) {
		err = io.EOF
	}
	return n, err
}
