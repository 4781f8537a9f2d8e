package integration

import (
	"context"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/crlbatch/crlbatch/pipeline"
)

// failBound is the longest a job may take to give up on a persistent
// fault: crlbatch's five tries (0.2+0.4+0.8+1.6 s of backoff) of the AWS
// SDK's three (up to 2+4 s of jittered backoff each) take 18 s on average
// and 33 s at most; the rest is room for a shared 2-core machine running
// the cases in parallel.
const failBound = 90 * time.Second

// faulty is the named server (s3 or azure) behind a fault proxy of the
// test's own, so that fault cases can run in parallel; url names bucket/key
// through it. (fake-gcs-server knows one public host, its shared proxy's.)
func faulty(t *testing.T, name string, pol Policy) (*fixture, *cloud, *FaultProxy, func(bucket, key string) string) {
	t.Helper()
	f := getFixture(t)
	c := getCloud(t, name)
	p, err := NewFaultProxy(c.srv.Addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	p.SetClassify(c.classify)
	p.SetPolicy(pol)
	url := func(bucket, key string) string { return s3URL(p.URL(), bucket, key) }
	switch name {
	case "s3":
	case "azure":
		url = func(bucket, key string) string { return azURL(p.Addr(), bucket, key) }
	default:
		t.Fatalf("no proxy of its own for %s", name)
	}
	return f, c, p, url
}

// faultyS3 is faulty for S3.
func faultyS3(t *testing.T, pol Policy) (*fixture, *cloud, *FaultProxy, func(bucket, key string) string) {
	t.Helper()
	return faulty(t, "s3", pol)
}

func faulted(log []Entry) int {
	n := 0
	for _, e := range log {
		if e.Fault != Pass {
			n++
		}
	}
	return n
}

// TestS3TransientFaults checks that, with the faults a real store produces
// now and then, the job retries and writes exactly what a clean run writes.
// The large cases score the large object, decoded in chunks on two cores
// (a read broken after some chunks were decoded and merged), against
// decoding it on one goroutine from the local folder.
func TestS3TransientFaults(t *testing.T) {
	t.Parallel()
	// Per-object faults hit the sac family's three objects (plain, gzip
	// and zstd), to keep the backoffs short; the random mix hits everything.
	get, put, list := And(Kinds("get"), KeyContains("/sac/")), Kinds("put"), Kinds("list")
	getLarge := And(Kinds("get"), KeyContains(largePrefix+"/"))
	cases := []struct {
		name   string
		policy Policy
		delay  time.Duration // FaultProxy.SetTiming
		hold   time.Duration
		large  bool // score largePrefix with --concurrency 2, not inPrefix
	}{
		{name: "503 SlowDown twice per read", policy: EachFirstN(get, 2, SlowDown)},
		{name: "500 once per read", policy: EachFirstN(get, 1, InternalError)},
		{name: "reset before each read", policy: EachFirstN(get, 1, Reset)},
		{name: "truncated body once per read", policy: EachFirstN(get, 1, Truncate)},
		{name: "body stalls then cut once per read", policy: EachFirstN(get, 1, StallBody), hold: 2 * time.Second},
		{name: "stalled 2 s once per read", policy: EachFirstN(get, 1, Stall), hold: 2 * time.Second},
		{name: "slow reads", policy: Always(get, Slow), delay: 400 * time.Millisecond},
		{name: "listing throttled beyond the SDK's retries", policy: FirstN(list, 4, SlowDown)},
		{name: "throttling beyond the SDK's retries per read", policy: EachFirstN(get, 4, SlowDown)},
		{name: "uploads: reset after the write, then 500", policy: Chain(
			EachFirstN(And(put, KeySuffix("/runs.parquet")), 1, ResetAfter),
			EachFirstN(And(put, KeySuffix("/manifest.json")), 1, ResetAfter),
			EachFirstN(And(put, KeySuffix("/report.md")), 2, InternalError))},
		{name: "random mix 20%", policy: Random(Any, 0.2, 1, SlowDown, InternalError, Reset, ResetAfter, Truncate, Slow), delay: 200 * time.Millisecond},
		{name: "large: truncated body once per read", policy: EachFirstN(getLarge, 1, Truncate), large: true},
		{name: "large: reset before each read", policy: EachFirstN(getLarge, 1, Reset), large: true},
		{name: "large: body stalls then cut once per read", policy: EachFirstN(getLarge, 1, StallBody), hold: 2 * time.Second, large: true},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f, c, p, url := faultyS3(t, tc.policy)
			t.Parallel()
			p.SetTiming(max(tc.delay, time.Millisecond), tc.hold)
			prefix := fmt.Sprintf("transient-%02d", i)
			in, ref, more := url(inBucket, inPrefix), f.ref, []string(nil)
			if tc.large {
				in, ref, more = url(inBucket, largePrefix), f.refLarge, []string{"--concurrency", "2"}
			}
			r := f.score(context.Background(), nil, in, url(outBucket, prefix), more...)
			p.SetPolicy(nil)
			log := p.Log()
			t.Logf("exit %d after %v; %d of %d requests faulted", r.code, r.elapsed.Round(time.Millisecond), faulted(log), len(log))
			if faulted(log) == 0 {
				t.Errorf("no request was faulted: the policy matched nothing")
			}
			if r.code != 0 {
				t.Fatalf("a transient fault failed the job: %s", r)
			}
			dir, names := download(t, c, prefix)
			compareWithLocal(t, dir, names, ref, pipeline.Redact(in))
		})
	}
}

// TestPersistentFaults checks that a fault that does not go away ends the
// job with exit status 3 and a message naming the object, within failBound,
// and leaves no result file in the output bucket: S3 through every fault,
// Azure through a throttled and a reset read.
func TestPersistentFaults(t *testing.T) {
	t.Parallel()
	get, put, list := And(Kinds("get"), KeySuffix(singleKey)), Kinds("put"), Kinds("list")
	s3Object := "s3://" + inBucket + "/" + singleKey
	cases := []struct {
		cloud  string
		name   string
		policy Policy
		names  string // the message must contain this (redacted URL)
	}{
		{"s3", "read: 500", Always(get, InternalError), s3Object},
		{"s3", "read: 503 SlowDown", Always(get, SlowDown), s3Object},
		{"s3", "read: connection reset", Always(get, Reset), s3Object},
		{"s3", "read: truncated body", Always(get, Truncate), s3Object},
		{"s3", "list: 503 SlowDown", Always(list, SlowDown), "list s3://" + inBucket + "/" + inPrefix},
		{"s3", "write: 500 on report.md", Always(And(put, KeySuffix("/report.md")), InternalError), "/report.md"},
		{"s3", "write: reset on manifest.json", Always(And(put, KeySuffix("/manifest.json")), Reset), "/manifest.json"},
		{"azure", "read: 503", Always(get, SlowDown), "azblob://" + inBucket + "/" + singleKey},
		{"azure", "read: connection reset", Always(get, Reset), "azblob://" + inBucket + "/" + singleKey},
	}
	for i, tc := range cases {
		t.Run(tc.cloud+" "+tc.name, func(t *testing.T) {
			f, c, p, url := faulty(t, tc.cloud, tc.policy)
			t.Parallel()
			prefix := fmt.Sprintf("persistent-%02d", i)
			r := f.score(context.Background(), nil, url(inBucket, inPrefix), url(outBucket, prefix))
			p.SetPolicy(nil)
			t.Logf("exit %d after %v, %d requests: %s", r.code, r.elapsed.Round(time.Millisecond), len(p.Log()), firstLine(r.stderr))
			if r.code != 3 {
				t.Errorf("want exit 3 (storage error), got %s", r)
			}
			if !strings.Contains(r.stderr, tc.names) {
				t.Errorf("the message does not name %s:\n%s", tc.names, r.stderr)
			}
			if r.elapsed > failBound {
				t.Errorf("gave up after %v, want at most %v", r.elapsed, failBound)
			}
			assertNoOutput(t, c, prefix)
		})
	}
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " …"
	}
	return s
}

// TestStallsAreBounded: a request the store accepts but never answers (or
// whose body stops halfway), and a persistent GCS 503 that the GCS client
// would retry without end, each end in exit 3 within failBound, like the
// other persistent faults: every attempt is abandoned after the retry
// policy's idle timeout, and no attempt starts past its MaxElapsed.
func TestStallsAreBounded(t *testing.T) {
	t.Parallel()
	get := And(Kinds("get"), KeySuffix(singleKey))
	check := func(t *testing.T, f *fixture, c *cloud, r result, prefix, object string) {
		t.Helper()
		if r.code != 3 || !strings.Contains(r.stderr, object) || r.elapsed > failBound {
			t.Errorf("want exit 3 naming %s within %v, got %s", object, failBound, r)
		}
		assertNoOutput(t, c, prefix)
	}
	for _, fault := range []Fault{Stall, StallBody} {
		t.Run("s3 "+string(fault), func(t *testing.T) {
			f, c, p, url := faultyS3(t, Always(get, fault))
			t.Parallel()
			p.SetTiming(0, 0)
			ctx, cancel := context.WithTimeout(context.Background(), failBound+30*time.Second)
			defer cancel()
			prefix := "bug-" + string(fault)
			r := f.score(ctx, nil, url(inBucket, inPrefix), url(outBucket, prefix))
			check(t, f, c, r, prefix, "s3://"+inBucket+"/"+singleKey)
		})
	}
	t.Run("gcs 503", func(t *testing.T) {
		f := getFixture(t)
		c := getCloud(t, "gcs")
		c.proxy.SetPolicy(Always(get, SlowDown))
		ctx, cancel := context.WithTimeout(context.Background(), failBound+30*time.Second)
		defer cancel()
		r := f.score(ctx, nil, c.url(inBucket, inPrefix), c.url(outBucket, "bug-503"))
		c.proxy.SetPolicy(nil)
		check(t, f, c, r, "bug-503", "gs://"+inBucket+"/"+singleKey)
	})
}

// TestS3Interrupt sends SIGINT (and SIGTERM) while the proxy holds a
// request: the job exits 130 (143) promptly and leaves no result file, also
// when it is interrupted halfway through writing its results.
func TestS3Interrupt(t *testing.T) { testInterrupt(t, "s3") }

// TestAzureInterrupt is TestS3Interrupt through Azurite: an upload held by
// the proxy when the signal comes is cut after the upload grace, those
// under way finish and are deleted, and nothing is left.
func TestAzureInterrupt(t *testing.T) { testInterrupt(t, "azure") }

// testInterrupt signals a job reading from, then writing to, the store
// name (behind a FaultProxy that holds one request): the job exits with
// the signal's code within seconds and leaves nothing in the output.
func testInterrupt(t *testing.T, name string) {
	t.Parallel()
	cases := []struct {
		name   string
		match  Match
		sig    syscall.Signal
		code   int
		writes bool // result files are written before the stall
	}{
		{name: "SIGINT during a read", match: And(Kinds("get"), KeySuffix(singleKey)), sig: syscall.SIGINT, code: 130},
		{name: "SIGINT during the uploads", match: And(Kinds("put"), KeySuffix("/families.parquet")), sig: syscall.SIGINT, code: 130, writes: true},
		{name: "SIGTERM during the uploads", match: And(Kinds("put"), KeySuffix("/report.md")), sig: syscall.SIGTERM, code: 143, writes: true},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f, c, p, url := faulty(t, name, Always(tc.match, Stall))
			t.Parallel()
			p.SetTiming(0, 0) // hold until the client gives up
			prefix := fmt.Sprintf("interrupt-%02d", i)
			var sent time.Time
			r := f.crl(context.Background(), nil, func(proc *os.Process) {
				// Signal once the proxy holds the request.
				deadline := time.Now().Add(time.Minute)
				for time.Now().Before(deadline) && p.Held() == 0 {
					time.Sleep(10 * time.Millisecond)
				}
				if p.Held() == 0 {
					t.Errorf("the job never reached the stalled request")
				}
				sent = time.Now()
				proc.Signal(tc.sig)
			}, append([]string{"score", url(inBucket, inPrefix), "--out", url(outBucket, prefix), "--quiet"}, scoreFlags...)...)
			p.SetPolicy(nil)
			after := time.Since(sent)
			t.Logf("exit %d %v after the signal: %s", r.code, after.Round(time.Millisecond), strings.TrimSpace(r.stderr))
			if r.code != tc.code {
				t.Errorf("want exit %d, got %s", tc.code, r)
			}
			if after > 30*time.Second {
				t.Errorf("the job took %v to stop after the signal", after)
			}
			if tc.writes {
				puts := 0
				for _, e := range p.Log() {
					if e.Kind == "put" && e.Status/100 == 2 { // S3 answers 200, Azure 201
						puts++
					}
				}
				if puts == 0 {
					t.Errorf("no result file was written before the stall: the test proves nothing")
				}
			}
			assertNoOutput(t, c, prefix)
		})
	}
}
