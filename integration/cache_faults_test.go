package integration

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/crlbatch/crlbatch/scoring/protocoltest"
)

// TestCacheStoreFaults: a --cache on S3 that never answers (every request
// held until the client gives up), or that fails every request (500 after
// the SDK's own retries), costs a job time, never its result: each
// request is abandoned after the stall bound, the job stops asking the
// cache after a few failures in a row (not once per entry: the proxy sees
// about one round of lookups), says so in one warning beside the first
// entry it could not read, and writes what a job without a cache writes.
// Before, a cache that never answered held the job until it was killed.
func TestCacheStoreFaults(t *testing.T) {
	t.Parallel()
	f := getFixture(t)
	ctx := context.Background()
	tmp := t.TempDir()
	in := filepath.Join(f.sweep, filepath.FromSlash(inPrefix))
	none := filepath.Join(tmp, "none")
	if r := f.score(ctx, nil, in, none); r.code != 0 {
		t.Fatalf("without a cache: %s", r)
	}
	for _, fault := range []Fault{Stall, InternalError} {
		t.Run(string(fault), func(t *testing.T) {
			_, _, p, url := faultyS3(t, Always(Any, fault))
			t.Parallel()
			p.SetTiming(0, 0) // a stall holds until the client gives up
			out := filepath.Join(tmp, string(fault))
			ctx, cancel := context.WithTimeout(ctx, failBound+30*time.Second)
			defer cancel()
			r := f.score(ctx, nil, in, out, "--cache", url(inBucket, "faulty-cache"))
			t.Logf("%s: exit %d after %v, %d requests to the cache", fault, r.code, r.elapsed.Round(time.Millisecond), len(p.Log()))
			if r.code != 0 || r.elapsed > failBound {
				t.Fatalf("want exit 0 within %v: %s", failBound, r)
			}
			if n := strings.Count(r.stderr, "cache is no longer read nor written"); n != 1 {
				t.Errorf("%d warnings that the cache is no longer used, want 1: %s", n, r)
			}
			if n := strings.Count(r.stderr, "level=WARN"); n > 2 {
				t.Errorf("%d warnings, want at most 2: %s", n, r)
			}
			// One round of lookups (32 at a time), each tried by the SDK
			// at most three times: not one request per entry per kind.
			if n := len(p.Log()); n == 0 || n > 3*32 {
				t.Errorf("%d requests reached the cache", n)
			}
			protocoltest.SameOutputs(t, none, out)
		})
	}
}

// TestAppendedObjectStalls: an object that grew since the cache kept it is
// checked by range reads of its earlier bytes before only its new lines are
// decoded; those reads are part of the object's read, under its retry
// policy: when the first of them stalls (S3 holding it until the client
// gives up), the attempt is abandoned after the stall bound and the next
// one checks the earlier bytes again and decodes only the new lines: exit
// 0 with the results of a job without a cache, in about one bound.
func TestAppendedObjectStalls(t *testing.T) {
	t.Parallel()
	const copyPrefix = "appendstall/"
	f, c, p, in := stallableSweep(t, copyPrefix)
	ctx := context.Background()
	tmp := t.TempDir()
	cdir := filepath.Join(tmp, "cache")
	if r := f.score(ctx, nil, in, filepath.Join(tmp, "cold"), "--cache", cdir); r.code != 0 {
		t.Fatalf("cold: %s", r)
	}
	b, _, key, data, lines := plainObject(t, f, c, copyPrefix)
	if err := b.WriteAll(ctx, key, append(append(data, lines[len(lines)-1]...), '\n'), nil); err != nil {
		t.Fatal(err)
	}
	none := filepath.Join(tmp, "none")
	if r := f.score(ctx, nil, in, none); r.code != 0 {
		t.Fatalf("without a cache: %s", r)
	}
	p.SetPolicy(FirstN(And(Kinds("get"), KeySuffix(key)), 1, Stall))
	ctx, cancel := context.WithTimeout(ctx, failBound+30*time.Second)
	defer cancel()
	warm := filepath.Join(tmp, "warm")
	r := f.score(ctx, nil, in, warm, "--cache", cdir)
	t.Logf("exit %d after %v", r.code, r.elapsed.Round(time.Millisecond))
	if r.code != 0 || r.elapsed > failBound || !strings.Contains(r.stdout, "): 0 decoded, ") || !strings.Contains(r.stdout, ", 1 appended to") {
		t.Fatalf("want exit 0 within %v, the grown object's new lines decoded: %s", failBound, r)
	}
	if held := p.Held(); held != 1 {
		t.Errorf("%d requests held, want the first read of the grown object's earlier bytes", held)
	}
	protocoltest.SameOutputs(t, none, warm)
}

// TestInputStallsAfterRead: with --cache, an object of a bucket INPUT is
// looked up again once read (its entry is stored only if the object did
// not change meanwhile); when S3 holds that second HEAD until the client
// gives up, it is abandoned after the stall bound and made again: exit 0
// in about one bound, the object's entry stored (a warm rerun serves every
// object), the results those of a job without a cache. Before, the job
// waited on it for ever.
func TestInputStallsAfterRead(t *testing.T) {
	t.Parallel()
	const copyPrefix = "headstall/"
	f, c, p, in := stallableSweep(t, copyPrefix)
	ctx := context.Background()
	_, _, key, _, _ := plainObject(t, f, c, copyPrefix)
	tmp := t.TempDir()
	none := filepath.Join(tmp, "none")
	if r := f.score(ctx, nil, in, none); r.code != 0 {
		t.Fatalf("without a cache: %s", r)
	}
	heads := 0
	p.SetPolicy(func(r *Request) Fault {
		if r.Kind == "head" && r.Key == key {
			heads++
			if heads == 2 {
				return Stall
			}
		}
		return Pass
	})
	ctx, cancel := context.WithTimeout(ctx, failBound+30*time.Second)
	defer cancel()
	cdir := filepath.Join(tmp, "cache")
	cold := filepath.Join(tmp, "cold")
	r := f.score(ctx, nil, in, cold, "--cache", cdir)
	t.Logf("exit %d after %v", r.code, r.elapsed.Round(time.Millisecond))
	if r.code != 0 || r.elapsed > failBound {
		t.Fatalf("want exit 0 within %v: %s", failBound, r)
	}
	if held := p.Held(); held != 1 {
		t.Errorf("%d requests held, want the second HEAD of %s", held, key)
	}
	p.SetPolicy(nil)
	protocoltest.SameOutputs(t, none, cold)
	warm := filepath.Join(tmp, "warm")
	if r := f.score(ctx, nil, in, warm, "--cache", cdir); r.code != 0 || !strings.Contains(r.stdout, "): 0 decoded, ") {
		t.Fatalf("warm: want every object from the cache: %s", r)
	}
	protocoltest.SameOutputs(t, none, warm)
}

// stallableSweep copies the fixture's sweep under copyPrefix in S3 and
// returns the S3 URL of its input as read through a fault proxy of the
// test's own, which holds a request it stalls until the client gives up.
func stallableSweep(t *testing.T, copyPrefix string) (*fixture, *cloud, *FaultProxy, string) {
	t.Helper()
	f, c, p, url := faultyS3(t, nil)
	p.SetTiming(0, 0)
	if err := upload(context.Background(), c, f.sweep, copyPrefix); err != nil {
		t.Fatal(err)
	}
	return f, c, p, url(inBucket, copyPrefix+inPrefix)
}
