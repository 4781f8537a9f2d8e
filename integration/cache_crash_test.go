package integration

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/crlbatch/crlbatch/internal/synth"
	"github.com/crlbatch/crlbatch/internal/testhook"
	"github.com/crlbatch/crlbatch/scoring/protocoltest"
)

// TestCacheKilledWhileWriting kills crlbatch -9 while its first cache
// entry is in its temporary file in a local --cache folder, so that the
// entry is never renamed into place (the crlbatch it kills is built with
// testhook.Pause at "cache-entry": an entry's writer stops once its bytes
// are in the temporary file, and the kill comes when the job says so; a
// kill timed by inotify alone missed the window ten times in a row on a
// slow machine), then checks what the
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
		_, cacheCrashInput.err = synth.Run(ctx, synth.Config{Out: in, Seeds: 2, Steps: 4000, Seed: 23})
	})
	if cacheCrashInput.err != nil {
		t.Fatal(cacheCrashInput.err)
	}
	tmp := t.TempDir()
	cold := filepath.Join(tmp, "cold")
	if r := f.score(ctx, nil, in, cold); r.code != 0 {
		t.Fatalf("cold run without a cache: %s", r)
	}

	// Killed the moment the first entry's writer stops, its bytes in
	// the temporary file and the rename not done.
	paused := pausedBinary(t, f, "cache-entry")
	cdir := filepath.Join(tmp, "cache")
	killed := killAtPause(t, paused, "cache-entry", append([]string{"score", in, "--out", filepath.Join(tmp, "killed"), "--quiet", "--cache", cdir}, scoreFlags...)...)
	temps := tempFiles(t, cdir)
	if len(temps) == 0 {
		t.Fatalf("the kill left no temporary file of an entry; the job's stderr:\n%s", killed)
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

// pausedBinary returns f with its crlbatch built again with
// testhook.Pause set to where by the linker, once per place.
func pausedBinary(t *testing.T, f *fixture, where string) *fixture {
	t.Helper()
	pausedBuilds.Lock()
	defer pausedBuilds.Unlock()
	bin := filepath.Join(root, "bin", "crlbatch-paused-"+where)
	if _, err := os.Stat(bin); err != nil {
		build := exec.Command("go", "build", "-ldflags=-X github.com/crlbatch/crlbatch/internal/testhook.Pause="+where, "-o", bin, "./cmd/crlbatch")
		build.Dir = f.repo
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("go build ./cmd/crlbatch paused at %s: %v\n%s", where, err, out)
		}
	}
	p := *f
	p.bin = bin
	return &p
}

var pausedBuilds sync.Mutex

// killAtPause runs f's crlbatch with args, kills it -9 once it writes
// that it is paused at where (testhook.Wait) and returns what it wrote
// to stderr until then. The test fails if the job ends otherwise.
func killAtPause(t *testing.T, f *fixture, where string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), runLimit)
	defer cancel()
	cmd := exec.CommandContext(ctx, f.bin, args...)
	cmd.Env = childEnv()
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var seen strings.Builder
	paused := false
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		if sc.Text() == testhook.PauseMarker+where {
			paused = true
			cmd.Process.Kill()
			break
		}
		seen.WriteString(sc.Text() + "\n")
	}
	io.Copy(io.Discard, stderr)
	err = cmd.Wait()
	var ee *exec.ExitError
	if !paused || !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("crlbatch %s: want it paused at %s and killed, got paused %v, %v; stderr:\n%s", strings.Join(args, " "), where, paused, err, seen.String())
	}
	return seen.String()
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
