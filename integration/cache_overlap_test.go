package integration

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/crlbatch/crlbatch/scoring/protocoltest"
)

// TestS3CacheRequestsOverlap: with the input and the cache on S3, where
// each request is a round trip, a job has many of them in flight at once
// (sixteen writes and thirty-two lookups, pipeline's remoteWrites and
// remoteReads) rather than --concurrency or one:
// the input objects' attributes read to key their entries, whether the
// objects' entries are there (a cold job's first question), the entries
// written by the cold job and looked up by the warm ones; and the cold job
// opens about as many connections as it has requests in flight, its
// clients keeping them from one round of requests to the next. The proxy holds
// each such request for a while (Stall), so that the requests of a burst
// are all held together, and counts the most it held at once; every job
// scores what a job without a cache scores.
func TestS3CacheRequestsOverlap(t *testing.T) {
	t.Parallel()
	f, c, p, url := faultyS3(t, nil)
	ctx := context.Background()
	const copyPrefix, cachePrefix, firstPrefix = "overlap/", "overlapcache", "overlapfirst"
	if err := upload(ctx, c, f.sweep, copyPrefix); err != nil {
		t.Fatal(err)
	}
	in := url(inBucket, copyPrefix+inPrefix)
	cacheURL := url(inBucket, cachePrefix)
	p.SetTiming(0, 300*time.Millisecond)
	// At --concurrency 2 the job used to have at most two lookups or
	// attribute reads and one small entry's write (beside two objects'
	// entries) in flight; now sixteen or more, or all there are when fewer.
	want := func(n int) int { return min(n, 8) }
	var scoreWith func(name, cacheURL string) string
	held := func(what string, m Match, atLeast int, run func()) {
		t.Helper()
		p.ResetMostHolding()
		p.SetPolicy(Always(m, Stall))
		run()
		p.SetPolicy(nil)
		if got := p.MostHolding(); got < atLeast {
			t.Errorf("%s: at most %d requests in flight at once, want at least %d", what, got, atLeast)
		}
	}
	score := func(name string) string {
		t.Helper()
		return scoreWith(name, cacheURL)
	}
	scoreWith = func(name, cacheURL string) string {
		t.Helper()
		out := filepath.Join(t.TempDir(), name)
		r := f.score(ctx, nil, in, out, "--cache", cacheURL, "--concurrency", "2")
		if r.code != 0 || strings.Contains(r.stderr, "WARN") {
			t.Fatalf("%s: %s", name, r)
		}
		return out
	}
	n := len(f.objects)
	var cold, warm, again, first string
	// Whether each object's entry is there is asked before any is read:
	// on a cold cache every answer is no, and nothing more is asked.
	p.Opened()
	held("the cold job's questions whether the objects' entries are there", And(Kinds("head"), KeyContains(firstPrefix+"/")), want(n),
		func() { first = scoreWith("first", url(inBucket, firstPrefix)) })
	// Its S3 clients (the input's and the cache's) keep their idle
	// connections (cmd/crlbatch's keepS3Connections): each opens at most as
	// many as it ever has requests in flight at once (thirty-two lookups and
	// sixteen writes, pipeline's remoteReads and remoteWrites), not those
	// again for every round of requests (47-50 kept; 113-129 as the AWS
	// SDK keeps them: tried).
	const most = 2 * (32 + 16)
	got := p.Opened()
	t.Logf("the cold job opened %d connections", got)
	if got > most {
		t.Errorf("the cold job opened %d connections to the store, want at most %d", got, most)
	}
	held("the cold job's entry writes", And(Kinds("put"), KeyContains(cachePrefix+"/")), want(3*n), func() { cold = score("cold") })
	held("the warm job's attribute reads of the input", And(Kinds("head"), KeyContains(copyPrefix+inPrefix+"/")), want(n), func() { warm = score("warm") })
	held("the warm job's entry lookups", And(Kinds("get"), KeyContains(cachePrefix+"/")), want(n), func() { again = score("again") })
	plain := filepath.Join(t.TempDir(), "plain")
	if r := f.score(ctx, nil, in, plain, "--concurrency", "2"); r.code != 0 {
		t.Fatalf("without a cache: %s", r)
	}
	for _, out := range []string{first, cold, warm, again} {
		protocoltest.SameOutputs(t, plain, out)
	}
}
