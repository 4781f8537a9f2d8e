package main

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/crlbatch/crlbatch/cache"
)

// TestPruneStopsAtASignal: `cache prune` stopped by SIGINT or SIGTERM
// between two deletes (testhook "prune": after its first) removes no more
// (fileblob's Delete ignores a cancel: it went on through 17k entries),
// exits 130 or 143 saying what it removed, and leaves a cache that `cache
// stats` counts right and a later job reads (its report the same as the
// job's that filled the cache). The cache: a real job's entries and 2,000
// older copies of one of them under other keys (the oldest, pruned first).
func TestPruneStopsAtASignal(t *testing.T) {
	t.Parallel()
	const fillers = 2000
	for _, c := range []struct {
		sig  syscall.Signal
		code int
	}{{syscall.SIGINT, exitInterrupt}, {syscall.SIGTERM, exitTerminated}} {
		t.Run(c.sig.String(), func(t *testing.T) {
			t.Parallel()
			tmp := t.TempDir()
			in, cdir := workedExample(t), filepath.Join(tmp, "cache")
			first := filepath.Join(tmp, "first")
			if code, _, stderr := crl(t, "score", in, "--out", first, "--quiet", "--cache", cdir); code != exitOK {
				t.Fatalf("score: exit %d: %s", code, stderr)
			}
			var real []string
			filepath.WalkDir(cdir, func(path string, d fs.DirEntry, err error) error {
				if err == nil && !d.IsDir() && strings.HasSuffix(path, cache.EntrySuffix) {
					real = append(real, path)
				}
				return nil
			})
			if len(real) == 0 {
				t.Fatal("the job wrote no cache entry")
			}
			data, err := os.ReadFile(real[0])
			if err != nil {
				t.Fatal(err)
			}
			old := time.Now().Add(-48 * time.Hour)
			for i := range fillers {
				key := fmt.Sprintf("%064x", uint64(0xf111e000)+uint64(i))
				dir := filepath.Join(cdir, fmt.Sprintf("v%d", cache.FormatVersion), key[:2])
				if err := os.MkdirAll(dir, 0o755); err != nil {
					t.Fatal(err)
				}
				p := filepath.Join(dir, key+cache.EntrySuffix)
				if err := os.WriteFile(p, data, 0o644); err != nil {
					t.Fatal(err)
				}
				if err := os.Chtimes(p, old, old); err != nil {
					t.Fatal(err)
				}
			}
			all := fillers + len(real)

			code, stderr := signalled(t, tmp, "prune", []syscall.Signal{c.sig}, nil, "cache", "prune", cdir, "--max-bytes", "0")
			if code != c.code {
				t.Errorf("cache prune after %v: exit %d, want %d; stderr: %s", c.sig, code, c.code, stderr)
			}
			if want := "crlbatch: cache prune interrupted: removed 1 entries (" + fmt.Sprint(len(data)) + " bytes)"; !strings.Contains(stderr, want) {
				t.Errorf("stderr does not say %q: %s", want, stderr)
			}
			if strings.Contains(stderr, "published") {
				t.Errorf("a prune is not a job: %s", stderr)
			}

			code, out, stderr := crl(t, "cache", "stats", cdir)
			if want := fmt.Sprintf("entries: %d\n", all-1); code != exitOK || !strings.Contains(out, want) {
				t.Errorf("cache stats: exit %d, want %q in\n%s%s", code, want, out, stderr)
			}
			again := filepath.Join(tmp, "again")
			if code, _, stderr := crl(t, "score", in, "--out", again, "--quiet", "--cache", cdir); code != exitOK {
				t.Fatalf("score on the pruned cache: exit %d: %s", code, stderr)
			}
			a, _ := os.ReadFile(filepath.Join(first, "report.md"))
			b, _ := os.ReadFile(filepath.Join(again, "report.md"))
			if len(a) == 0 || string(a) != string(b) {
				t.Error("the job on the pruned cache wrote another report")
			}
		})
	}
}
