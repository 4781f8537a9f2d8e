package pipeline

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/crlbatch/crlbatch/internal/synth"
)

// firstErrSweep is a synthetic sweep of nine objects (three algorithms,
// three seeds each) and its objects' paths in key order.
func firstErrSweep(t *testing.T) (string, []string) {
	t.Helper()
	in := filepath.Join(t.TempDir(), "in")
	if _, err := synth.Run(context.Background(), synth.Config{Out: in, Seeds: 3, Steps: 120, Seed: 7}); err != nil {
		t.Fatal(err)
	}
	var paths []string
	err := filepath.WalkDir(in, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			paths = append(paths, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(paths)
	return in, paths
}

// editLine replaces line n (from 1) of the file at p.
func editLine(t *testing.T, p string, n int, line string) {
	t.Helper()
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(data), "\n")
	lines[n-1] = line
	write(t, p, strings.Join(lines, "\n"))
}

// gzipAll compresses every object (name.gz) and, for those in cut, flips
// a byte at that offset of the compressed stream.
func gzipAll(t *testing.T, paths []string, cut map[int]int) {
	t.Helper()
	for i, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		zw.Write(data)
		zw.Close()
		z := buf.Bytes()
		if at, ok := cut[i]; ok {
			z[at] ^= 0xff
		}
		write(t, p+".gz", string(z))
		os.Remove(p)
	}
}

// parquetAll converts every object to Parquet (crlbatch convert) in place
// and, for those in cut, spoils the bytes of the column chunk data at
// that many eighths of the object.
func parquetAll(t *testing.T, paths []string, cut map[int]int) {
	t.Helper()
	in := filepath.Dir(filepath.Dir(paths[0]))
	out := filepath.Join(t.TempDir(), "pq")
	if _, err := Convert(context.Background(), ConvertConfig{Input: in, Output: out, Concurrency: 1, Retry: DefaultRetry()}); err != nil {
		t.Fatal(err)
	}
	for i, p := range paths {
		rel, _ := filepath.Rel(in, p)
		data, err := os.ReadFile(filepath.Join(out, ConvertedKey(rel)))
		if err != nil {
			t.Fatal(err)
		}
		if k, ok := cut[i]; ok {
			for j := range 64 {
				data[len(data)*k/8+j] ^= 0x5a
			}
		}
		write(t, filepath.Join(in, ConvertedKey(rel)), string(data))
		os.Remove(p)
	}
}

// TestFirstErrorSameAtAnyConcurrency: a job failing on data reports the
// first object in key order that fails, at its first failing line, whatever
// --concurrency, in memory and spilled, and leaves no OUTPUT. The objects
// that fail do so at lines that fall in reverse key order (the last object
// fails first in time). Each kind of failure runs three jobs (firstErrRuns);
// TestOrdered checks the timings these jobs may or may not meet.
func TestFirstErrorSameAtAnyConcurrency(t *testing.T) {
	t.Parallel()
	// failing objects (indexes in key order) and the line each fails at
	fails := []struct{ obj, line int }{{2, 100}, {5, 40}, {8, 3}}
	pad := `{"pad":"` + strings.Repeat("x", 5000) + `"}`
	for _, c := range []struct {
		name  string
		edit  func(t *testing.T, paths []string) // spoils the sweep
		cfg   func(*Config)
		obj   int    // the object the error must name
		wants string // and what it must say
	}{
		{"bad row", func(t *testing.T, paths []string) {
			for _, f := range fails {
				editLine(t, paths[f.obj], f.line, "{bad")
			}
		}, nil, 2, "line 100"},
		{"bad row past --max-bad-rows 1", func(t *testing.T, paths []string) {
			for _, f := range fails {
				editLine(t, paths[f.obj], f.line, "{bad")
				editLine(t, paths[f.obj], f.line+1, "{bad")
			}
		}, func(c *Config) { c.MaxBadRows = 1 }, 2, "line 101"},
		{"bad row before an object's hard failure", func(t *testing.T, paths []string) {
			editLine(t, paths[1], 110, "{bad")
			editLine(t, paths[1], 111, "{bad")
			editLine(t, paths[6], 2, pad)
		}, func(c *Config) { c.MaxBadRows = 1; c.Reader.MaxLineBytes = 4096 }, 1, "line 111"},
		{"bad row breaking the limit before its own object's line limit", func(t *testing.T, paths []string) {
			editLine(t, paths[0], 110, "{bad")
			editLine(t, paths[4], 10, "{bad")
			editLine(t, paths[4], 30, pad)
		}, func(c *Config) { c.MaxBadRows = 1; c.Reader.MaxLineBytes = 4096 }, 4, "line 10"},
		{"--max-line-bytes", func(t *testing.T, paths []string) {
			for _, f := range fails {
				editLine(t, paths[f.obj], f.line, pad)
			}
		}, func(c *Config) { c.Reader.MaxLineBytes = 4096 }, 2, "line 100"},
		{"--max-labels", nil, func(c *Config) { c.Reader.MaxLabels = 1 }, 0, "--max-labels"},
		{"--max-object-bytes", func(t *testing.T, paths []string) {
			for _, f := range fails {
				data, _ := os.ReadFile(paths[f.obj])
				write(t, paths[f.obj], string(data)+strings.Repeat("\n", 60000))
			}
		}, func(c *Config) { c.Reader.MaxObjectBytes = 60000 }, 2, "--max-object-bytes"},
		{"corrupt gzip", func(t *testing.T, paths []string) {
			gzipAll(t, paths, map[int]int{2: 3000, 5: 900, 8: 40})
		}, nil, 2, ".gz"},
		{"corrupt Parquet column", func(t *testing.T, paths []string) {
			parquetAll(t, paths, map[int]int{2: 3, 5: 2, 8: 1})
		}, func(c *Config) { c.Patterns = []string{"*.parquet"} }, 2, ".parquet"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			in, paths := firstErrSweep(t)
			if c.edit != nil {
				c.edit(t, paths)
			}
			var first string
			for _, r := range firstErrRuns(len(paths)) {
				out := filepath.Join(t.TempDir(), "out")
				cfg := localJob(in, out, nil)
				cfg.Concurrency = r.conc
				if r.spilled {
					cfg.MemoryLimit = 1
				}
				if c.cfg != nil {
					c.cfg(&cfg)
				}
				_, err := Run(context.Background(), cfg)
				if err == nil {
					t.Fatalf("--concurrency %d: the job did not fail", r.conc)
				}
				// the message, and its kind: the exit status
				msg := fmt.Sprintf("storage=%v: %v", IsStorage(err), err)
				if first == "" {
					first = msg
					rel, _ := filepath.Rel(in, paths[c.obj])
					if !strings.Contains(msg, strings.TrimSuffix(filepath.ToSlash(rel), ".jsonl")) || !strings.Contains(msg, c.wants) {
						t.Fatalf("the first error in key order is in %s (%s): got %s", rel, c.wants, msg)
					}
				} else if msg != first {
					t.Fatalf("spilled=%v --concurrency %d: %s\nwant (as at --concurrency 1) %s", r.spilled, r.conc, msg, first)
				}
				if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
					t.Fatalf("a failed job left %s (%v)", out, err)
				}
			}
		})
	}
}

// firstErrRuns are the jobs each case of the first-error tests runs on a
// sweep of n objects, the first giving the reference: --concurrency 1
// (objects read one by one, in key order); n (every object read at once:
// the last object, failing at the earliest line, fails first in time);
// and 4, spilled (--memory-limit 1: every object read is spilled; later
// objects wait for a slot). Three jobs, not more: they run under the race
// detector, and TestOrdered checks the orders in time that they may not
// meet.
func firstErrRuns(n int) []struct {
	conc    int
	spilled bool
} {
	return []struct {
		conc    int
		spilled bool
	}{{1, false}, {n, false}, {4, true}}
}

// TestFirstErrorStorageOrData: the key-order rule holds between kinds of
// failure: an earlier object's storage failure (it changed while read:
// exit 3) wins over a later object's bad row (exit 1), and an earlier
// object's bad row over a later object's storage failure, at any
// --concurrency (the jobs of firstErrRuns).
//
// Not parallel (see TestMain): it sets testHookOpen, which every job in the
// process calls.
func TestFirstErrorStorageOrData(t *testing.T) {
	old := testHookOpen
	t.Cleanup(func() { testHookOpen = old })
	for _, c := range []struct {
		name           string
		changed, badAt int // the objects (key order) failing on storage, on data
		storage        bool
	}{
		{"storage first", 1, 5, true},
		{"data first", 7, 2, false},
	} {
		in, paths := firstErrSweep(t)
		editLine(t, paths[c.badAt], 3, "{bad")
		victim := paths[c.changed]
		keep, err := os.ReadFile(victim)
		if err != nil {
			t.Fatal(err)
		}
		testHookOpen = func(key string) {
			if strings.HasSuffix(victim, filepath.FromSlash(key)) {
				os.Truncate(victim, 10)
			}
		}
		want := paths[c.badAt]
		if c.storage {
			want = victim
		}
		for _, r := range firstErrRuns(len(paths)) {
			write(t, victim, string(keep))
			out := filepath.Join(t.TempDir(), "out")
			cfg := localJob(in, out, nil)
			cfg.Concurrency = r.conc
			if r.spilled {
				cfg.MemoryLimit = 1
			}
			_, err := Run(context.Background(), cfg)
			if err == nil || IsStorage(err) != c.storage || !strings.Contains(err.Error(), want) {
				t.Fatalf("%s, spilled=%v --concurrency %d: error %v, want a storage error %v naming %s", c.name, r.spilled, r.conc, err, c.storage, want)
			}
			if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("a failed job left %s (%v)", out, err)
			}
		}
	}
}
