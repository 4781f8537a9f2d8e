package integration

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/crlbatch/crlbatch/internal/synth"
	"github.com/crlbatch/crlbatch/scoring/protocoltest"
)

// TestCacheKilledWhileWriting kills crlbatch -9 the moment its first cache
// entry's temporary file appears in a local --cache folder (inotify), so
// that the entry is never renamed into place, then checks what the
// nightly user relies on: `cache stats` counts the left file apart from
// the entries, a rerun on that cache scores exactly what a run without a
// cache scores (the file is neither read nor in the way), `cache prune`
// keeps it while it may still be a live job's write and removes it once
// it is older than the grace, and nothing of it is left.
func TestCacheKilledWhileWriting(t *testing.T) {
	t.Parallel()
	f := getFixture(t)
	ctx := context.Background()
	in := filepath.Join(root, "cache-crash-in")
	cacheCrashInput.Do(func() {
		// Objects of a few MB: an entry takes long enough to write that
		// the kill lands before its rename.
		_, cacheCrashInput.err = synth.Run(ctx, synth.Config{Out: in, Seeds: 2, Steps: 40000, Seed: 23})
	})
	if cacheCrashInput.err != nil {
		t.Fatal(cacheCrashInput.err)
	}
	tmp := t.TempDir()
	cold := filepath.Join(tmp, "cold")
	if r := f.score(ctx, nil, in, cold); r.code != 0 {
		t.Fatalf("cold run without a cache: %s", r)
	}

	cdir := filepath.Join(tmp, "cache")
	var temps []string
	for attempt := 1; attempt <= 10 && len(temps) == 0; attempt++ {
		os.RemoveAll(cdir)
		var proc atomic.Pointer[os.Process]
		st := &localStore{dir: cdir}
		disarm := st.killAt(t, func() {
			if p := proc.Load(); p != nil {
				p.Kill()
			}
		}, 1) // the first file created under the cache: an entry's temporary file
		args := append([]string{"score", in, "--out", filepath.Join(tmp, fmt.Sprintf("killed-%d", attempt)), "--quiet", "--cache", cdir}, scoreFlags...)
		r := f.crl(ctx, nil, func(p *os.Process) { proc.Store(p) }, args...)
		disarm()
		if r.code != -1 {
			t.Logf("attempt %d: the job was not killed (%s)", attempt, r)
		}
		temps = tempFiles(t, cdir)
	}
	if len(temps) == 0 {
		t.Fatal("in 10 attempts no kill landed between an entry's temporary file and its rename")
	}
	for _, p := range temps {
		if !cacheTempName.MatchString(filepath.Base(p)) {
			t.Fatalf("left %s: not the name a cache entry's write takes", p)
		}
	}

	stats := func() string {
		r := f.crl(ctx, nil, nil, "cache", "stats", cdir)
		if r.code != 0 {
			t.Fatalf("cache stats: %s", r)
		}
		return r.stdout
	}
	want := fmt.Sprintf("unfinished writes: %d temporary files, ", len(temps))
	if s := stats(); !strings.Contains(s, want) {
		t.Errorf("cache stats after the kill:\n%s\nwant a line starting %q", s, want)
	}

	// A rerun on the cache: the same result as the cold run without one.
	warm := filepath.Join(tmp, "warm")
	if r := f.score(ctx, nil, in, warm, "--cache", cdir); r.code != 0 {
		t.Fatalf("rerun on the cache the killed job left: %s", r)
	}
	protocoltest.SameOutputs(t, cold, warm)
	if left := tempFiles(t, cdir); len(left) != len(temps) {
		t.Errorf("the rerun changed the temporary files: %v, before %v", left, temps)
	}

	// Young: may be a write under way in a job sharing the cache.
	if r := f.crl(ctx, nil, nil, "cache", "prune", cdir, "--older-than", "0s"); r.code != 0 || strings.Contains(r.stdout, "temporary") {
		t.Errorf("prune of a temporary file younger than the grace: %s", r)
	}
	if left := tempFiles(t, cdir); len(left) != len(temps) {
		t.Errorf("prune removed a young temporary file: %v left of %v", left, temps)
	}
	old := time.Now().Add(-2 * time.Hour)
	for _, p := range temps {
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
	}
	r := f.crl(ctx, nil, nil, "cache", "prune", cdir, "--older-than", "7d")
	if wantRemoved := fmt.Sprintf("and %d temporary files of unfinished writes", len(temps)); r.code != 0 || !strings.Contains(r.stdout, wantRemoved) {
		t.Errorf("prune of temporary files two hours old: %s\nwant %q", r, wantRemoved)
	}
	if left := tempFiles(t, cdir); len(left) != 0 {
		t.Errorf("left after prune: %v", left)
	}
	if s := stats(); strings.Contains(s, "unfinished") {
		t.Errorf("cache stats after prune:\n%s", s)
	}
}

var cacheCrashInput struct {
	sync.Once
	err error
}

// cacheTempName is the name of a local cache entry's temporary file:
// gocloud.dev's fileblob writes <entry>.<nanoseconds in hex>.tmp beside it.
var cacheTempName = regexp.MustCompile(`^[0-9a-f]{64}\.crlc\.[0-9a-f]+\.tmp$`)

// tempFiles lists the files under dir whose names end in .tmp.
func tempFiles(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".tmp") {
			out = append(out, p)
		}
		return nil
	})
	return out
}
