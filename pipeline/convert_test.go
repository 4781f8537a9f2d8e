package pipeline

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/crlbatch/crlbatch/internal/synth"
	"github.com/crlbatch/crlbatch/readers"
)

// TestConvertFailureLeavesNothing: a convert that fails on one object (a
// line that is not JSON) removes the Parquet objects it wrote before the
// failure; what OUTPUT held before is left as it was, and a folder it
// created is removed.
func TestConvertFailureLeavesNothing(t *testing.T) {
	t.Parallel()
	in := localSweep(t)
	var objs []string
	filepath.WalkDir(in, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			objs = append(objs, p)
		}
		return err
	})
	if len(objs) < 3 {
		t.Fatalf("sweep of %d objects, want 3", len(objs))
	}
	// The last object listed breaks, so that the ones before it are
	// written first (one at a time).
	f, err := os.OpenFile(objs[len(objs)-1], os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("{bad\n")
	f.Close()
	for _, fresh := range []bool{true, false} {
		out := filepath.Join(t.TempDir(), "out")
		if !fresh {
			write(t, filepath.Join(out, "notes.txt"), "mine")
		}
		before := snapshot(t, out)
		_, err := Convert(context.Background(), ConvertConfig{Input: in, Output: out, Concurrency: 1, Retry: DefaultRetry()})
		var de *readers.DataError
		if !errors.As(err, &de) {
			t.Fatalf("convert: %v, want a data error", err)
		}
		if after := snapshot(t, out); !maps.Equal(after, before) {
			t.Errorf("a failed convert left %v in OUTPUT (before: %v)", slices.Collect(maps.Keys(after)), slices.Collect(maps.Keys(before)))
		}
		if _, err := os.Stat(out); fresh && !errors.Is(err, os.ErrNotExist) {
			t.Errorf("a failed convert left OUTPUT %s: %v", out, err)
		}
	}
}

// TestConvertWriteFailsLeavesNothing: a convert whose write of an object
// fails (a disk that fills: the file system's ENOSPC, after part of the
// object) removes the objects it wrote before, and the folders it made,
// also the one it made for the object whose write failed, which was left
// behind, empty; a fresh OUTPUT goes too. Folders that were there before,
// empty or not, stay, as does a user's file.
//
// Not parallel (see TestMain): it sets testHookConvertWriter.
func TestConvertWriteFailsLeavesNothing(t *testing.T) {
	in := filepath.Join(t.TempDir(), "in")
	if _, err := synth.Run(context.Background(), synth.Config{Out: in, Seeds: 2, Steps: 80, Seed: 3}); err != nil {
		t.Fatal(err)
	}
	keys := map[string]bool{}
	filepath.WalkDir(in, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(in, p)
			keys[ConvertedKey(filepath.ToSlash(rel))] = true
		}
		return err
	})
	sorted := slices.Sorted(maps.Keys(keys))
	if len(sorted) < 4 || !strings.Contains(sorted[len(sorted)-1], "/") {
		t.Fatalf("converted keys %v: want at least 4, the last in a folder", sorted)
	}
	// The last key in order fails; with one object at a time, every
	// other is written first.
	last := sorted[len(sorted)-1]
	testHookConvertWriter = func(key string, w io.Writer) io.Writer {
		if key != last {
			return w
		}
		return &fullDisk{w: w, left: 100}
	}
	defer func() { testHookConvertWriter = nil }()
	tree := func(dir string) []string {
		var all []string
		filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err == nil {
				rel, _ := filepath.Rel(dir, p)
				all = append(all, filepath.ToSlash(rel))
			}
			return nil
		})
		return all
	}
	for _, fresh := range []bool{true, false} {
		out := filepath.Join(t.TempDir(), "out")
		if !fresh {
			// A user's file, an empty folder of their own, and the
			// failing object's folder, there before and empty.
			write(t, filepath.Join(out, "notes.txt"), "mine")
			for _, d := range []string{"empty", path.Dir(last)} {
				if err := os.MkdirAll(filepath.Join(out, filepath.FromSlash(d)), 0o755); err != nil {
					t.Fatal(err)
				}
			}
		}
		before := tree(out)
		retry := RetryPolicy{Attempts: 2, Initial: time.Millisecond, Max: time.Millisecond}
		n, err := Convert(context.Background(), ConvertConfig{Input: in, Output: out, Concurrency: 1, Retry: retry})
		var se *StorageError
		if !errors.As(err, &se) || se.Op != "write" || !strings.Contains(err.Error(), "no space left on device") || !strings.Contains(err.Error(), last) {
			t.Fatalf("fresh %v: convert returned %d, %v; want a write error naming %s", fresh, n, err, last)
		}
		if after := tree(out); !slices.Equal(after, before) {
			t.Errorf("fresh %v: a convert whose write failed left OUTPUT as %v, was %v", fresh, after, before)
		}
		if _, err := os.Stat(out); fresh && !errors.Is(err, os.ErrNotExist) {
			t.Errorf("a convert whose write failed left OUTPUT %s: %v", out, err)
		}
	}
}

// fullDisk is a file on a disk with left bytes free: it writes those,
// then fails as the file system does.
type fullDisk struct {
	w    io.Writer
	left int
}

func (f *fullDisk) Write(p []byte) (int, error) {
	if len(p) <= f.left {
		f.left -= len(p)
		return f.w.Write(p)
	}
	n, _ := f.w.Write(p[:f.left])
	f.left = 0
	return n, &os.PathError{Op: "write", Path: "converted", Err: syscall.ENOSPC}
}

// TestConvertCancelled: a convert whose context is cancelled (SIGINT or
// SIGTERM in cmd/crlbatch) while it converts stops, returns the
// cancellation (exit 130 or 143) and removes the objects it wrote, as a
// failed convert does. It converted every object and returned nil (exit
// 0), whatever the signal: nothing checked the context once the objects
// were listed. The context is cancelled as the second object starts, one
// object at a time, in a fresh OUTPUT and in one that holds a file.
//
// Not parallel (see TestMain): it sets testHookPhase.
func TestConvertCancelled(t *testing.T) {
	in := filepath.Join(t.TempDir(), "in")
	if _, err := synth.Run(context.Background(), synth.Config{Out: in, Seeds: 2, Steps: 80, Seed: 3}); err != nil {
		t.Fatal(err)
	}
	for _, fresh := range []bool{true, false} {
		out := filepath.Join(t.TempDir(), "out")
		if !fresh {
			write(t, filepath.Join(out, "notes.txt"), "mine")
		}
		before := snapshot(t, out)
		ctx, cancel := context.WithCancel(context.Background())
		started := 0
		testHookPhase = func(p string) {
			if p == "convert" {
				if started++; started == 2 {
					cancel()
				}
			}
		}
		n, err := Convert(ctx, ConvertConfig{Input: in, Output: out, Concurrency: 1, Retry: DefaultRetry()})
		testHookPhase = nil
		cancel()
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("fresh %v: convert returned %d, %v; want the cancellation", fresh, n, err)
		}
		if started > 2 {
			t.Errorf("fresh %v: %d objects started converting, want 2 (none after the cancel)", fresh, started)
		}
		if after := snapshot(t, out); !maps.Equal(after, before) {
			t.Errorf("fresh %v: a cancelled convert left %v in OUTPUT (before: %v)", fresh, slices.Collect(maps.Keys(after)), slices.Collect(maps.Keys(before)))
		}
		if _, err := os.Stat(out); fresh && !errors.Is(err, os.ErrNotExist) {
			t.Errorf("a cancelled convert left OUTPUT %s: %v", out, err)
		}
	}
}

// TestConvertObjectChanged: convert reads each object twice. An object
// rewritten between the two reads of every attempt fails the convert as a
// storage read error naming it (exit 3), after every attempt, OUTPUT left
// as it was; one rewritten once, between the reads of the first attempt,
// is converted on the next attempt from its new bytes (the file a convert
// of them alone writes); one appended to between the reads (a log still
// written) is converted at once, as its first read saw it.
//
// Not parallel (see TestMain): it sets testHookConvertOpen.
func TestConvertObjectChanged(t *testing.T) {
	in := filepath.Join(t.TempDir(), "in")
	if _, err := synth.Run(context.Background(), synth.Config{Out: in, Seeds: 2, Steps: 80, Seed: 3}); err != nil {
		t.Fatal(err)
	}
	const key = "sac/sac-s1.jsonl"
	path := filepath.Join(in, filepath.FromSlash(key))
	orig, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// Another version of the object, of the same length: a digit changed.
	other := bytes.Clone(orig)
	k := bytes.Index(other, []byte(`"step":1`)) + len(`"step":`)
	other[k] = '2'
	convert := func(data []byte) []byte {
		var b bytes.Buffer
		if err := readers.ConvertToParquet("x", bytes.NewReader(data), &b, 0, 0); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	retry := RetryPolicy{Attempts: 3, Initial: time.Millisecond, Max: time.Millisecond}
	defer func() { testHookConvertOpen = nil }()
	for _, tc := range []struct {
		name string
		// change is called before each second read (n: 1 in the first
		// attempt) and says what the object becomes; nil: unchanged.
		change    func(n int) []byte
		fails     bool
		reads     int
		convertOf []byte
	}{
		{"rewritten at every attempt", func(n int) []byte { return [][]byte{orig, other}[n%2] }, true, 2 * retry.Attempts, nil},
		{"rewritten once", func(n int) []byte {
			if n == 1 {
				return other
			}
			return nil
		}, false, 4, other},
		{"appended to", func(n int) []byte { return append(bytes.Clone(orig), bytes.SplitAfter(orig, []byte("\n"))[0]...) }, false, 2, orig},
	} {
		if err := os.WriteFile(path, orig, 0o644); err != nil {
			t.Fatal(err)
		}
		reads := 0
		testHookConvertOpen = func(k string) {
			if k != key {
				return
			}
			if reads++; reads%2 == 0 {
				if data := tc.change(reads / 2); data != nil {
					if err := os.WriteFile(path, data, 0o644); err != nil {
						t.Error(err)
					}
				}
			}
		}
		out := filepath.Join(t.TempDir(), "out")
		n, err := Convert(context.Background(), ConvertConfig{Input: in, Output: out, Concurrency: 1, Retry: retry})
		testHookConvertOpen = nil
		if reads != tc.reads {
			t.Errorf("%s: %d reads, want %d", tc.name, reads, tc.reads)
		}
		if tc.fails {
			var se *StorageError
			if !errors.As(err, &se) || se.Op != "read" || !errors.Is(err, readers.ErrChangedWhileConverting) || !strings.Contains(err.Error(), path) {
				t.Errorf("%s: %d, %v; want a storage read error naming %s", tc.name, n, err, path)
			}
			if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("%s: a failed convert left OUTPUT %s: %v", tc.name, out, err)
			}
			continue
		}
		if err != nil || n != 6 {
			t.Fatalf("%s: %d objects, %v; want 6", tc.name, n, err)
		}
		got, err := os.ReadFile(filepath.Join(out, "sac", "sac-s1.parquet"))
		if err != nil || !bytes.Equal(got, convert(tc.convertOf)) {
			t.Errorf("%s: the object's file is not the conversion of the bytes it should be (%v)", tc.name, err)
		}
	}
}

// TestConvertStoreObjectFetchedOnce: from a store, an object of at most
// convertHoldBytes is fetched once (its bytes serve both reads), a larger
// one twice, and one grown past the threshold between the listing and its
// first read is read on and fetched again; each converts to the bytes a
// convert of what was read writes. A local object is read twice
// (TestConvertObjectChanged).
//
// Not parallel (see TestMain): it sets testHookConvertOpen and
// convertHoldBytes.
func TestConvertStoreObjectFetchedOnce(t *testing.T) {
	ctx := context.Background()
	op := &memOpener{}
	lab, keys := synthSweep(t, op)
	defer func(n int64) { convertHoldBytes, testHookConvertOpen = n, nil }(convertHoldBytes)
	var mu sync.Mutex
	var opens map[string]int
	var grow func(key string)
	testHookConvertOpen = func(key string) {
		mu.Lock()
		opens[key]++
		n := opens[key]
		mu.Unlock()
		if grow != nil && n == 1 {
			grow(key)
		}
	}
	sizes := map[string]int64{}
	smallest := int64(1 << 62)
	for _, k := range keys {
		a, err := lab.Attributes(ctx, k)
		if err != nil {
			t.Fatal(err)
		}
		sizes[k] = a.Size
		smallest = min(smallest, a.Size)
	}
	grown := keys[1]
	extra := []byte(`{"run_id":"late","regime_id":"r0","step":0,"reward":1.0}` + "\n")
	for _, tc := range []struct {
		name  string
		hold  int64
		grow  bool
		opens func(key string) int
	}{
		{"held", 1 << 30, false, func(string) int { return 1 }},
		{"too large to hold", smallest - 1, false, func(string) int { return 2 }},
		{"grown past the threshold", sizes[grown] + int64(len(extra)) - 1, true, func(k string) int {
			if k == grown || sizes[k] > sizes[grown]+int64(len(extra))-1 {
				return 2
			}
			return 1
		}},
	} {
		convertHoldBytes, opens = tc.hold, map[string]int{}
		grow = nil
		if tc.grow {
			orig, err := lab.ReadAll(ctx, grown)
			if err != nil {
				t.Fatal(err)
			}
			defer lab.WriteAll(ctx, grown, orig, nil)
			grow = func(key string) {
				if key == grown {
					if err := lab.WriteAll(ctx, key, append(bytes.Clone(orig), extra...), nil); err != nil {
						t.Error(err)
					}
				}
			}
		}
		out := "mem://out/" + strings.ReplaceAll(tc.name, " ", "-") + "/"
		n, err := Convert(ctx, ConvertConfig{Input: "mem://lab/sweep/", Output: out, Opener: op.open, Concurrency: 2, Retry: DefaultRetry()})
		if err != nil || n != len(keys) {
			t.Fatalf("%s: convert: %d, %v; want %d objects", tc.name, n, err, len(keys))
		}
		ob, _, _ := op.open(ctx, "mem://out")
		for _, k := range keys {
			if opens[k] != tc.opens(k) {
				t.Errorf("%s: %s fetched %d times, want %d", tc.name, k, opens[k], tc.opens(k))
			}
			data, err := lab.ReadAll(ctx, k)
			if err != nil {
				t.Fatal(err)
			}
			var want bytes.Buffer
			if err := readers.ConvertToParquet("x", bytes.NewReader(data), &want, 0, 0); err != nil {
				t.Fatal(err)
			}
			key := strings.TrimPrefix(out, "mem://out/") + ConvertedKey(strings.TrimPrefix(k, "sweep/"))
			got, err := ob.ReadAll(ctx, key)
			if err != nil || !bytes.Equal(got, want.Bytes()) {
				t.Errorf("%s: %s is not the conversion of %s's bytes (%v)", tc.name, key, k, err)
			}
		}
		if tc.grow {
			if data, _ := lab.ReadAll(ctx, grown); !bytes.HasSuffix(data, extra) {
				t.Errorf("%s: %s did not grow", tc.name, grown)
			}
		}
	}
}

// TestConvertRemovesKilledTemps: the temporary files a killed convert left
// in the folders this convert writes into (writeLocal's names, untouched
// for convertTempAge) are removed before it writes, with a warning; one
// written to a moment ago, a file of another name, one of that name in a
// folder this convert does not write into, a folder of that name, and a
// user's file beside them are left. A convert that finds none says
// nothing, as does one that may not list a folder it writes into.
func TestConvertRemovesKilledTemps(t *testing.T) {
	t.Parallel()
	in := localSweep(t) // ewc/, ppo/, sac/: one object each
	out := filepath.Join(t.TempDir(), "out")
	killed := []string{"ppo/.crlbatch-convert-123456789", "sac/.crlbatch-convert-42"}
	// Among those kept, a live convert's (into a folder nested in OUTPUT:
	// written to a moment ago).
	kept := []string{"other/.crlbatch-convert-7", "ppo/.crlbatch-convert-x", "ppo/notes.txt", "ppo/mine.parquet", "sac/.crlbatch-convert-5"}
	old := time.Now().Add(-convertTempAge - time.Minute)
	for _, f := range append(slices.Clone(killed), kept...) {
		p := filepath.Join(out, filepath.FromSlash(f))
		write(t, p, "partial")
		if f != "sac/.crlbatch-convert-5" {
			if err := os.Chtimes(p, old, old); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := os.MkdirAll(filepath.Join(out, "ewc", ".crlbatch-convert-9"), 0o755); err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&log, nil))
	n, err := Convert(context.Background(), ConvertConfig{Input: in, Output: out, Concurrency: 2, Retry: DefaultRetry(), Logger: logger})
	if err != nil || n != 3 {
		t.Fatalf("convert: %d, %v", n, err)
	}
	for _, f := range killed {
		if _, err := os.Lstat(filepath.Join(out, filepath.FromSlash(f))); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s: left (%v)", f, err)
		}
	}
	for _, f := range append(kept, "ewc/.crlbatch-convert-9", "ppo/ppo-s0.parquet") {
		if _, err := os.Lstat(filepath.Join(out, filepath.FromSlash(f))); err != nil {
			t.Errorf("%s: %v, want it kept", f, err)
		}
	}
	if !strings.Contains(log.String(), "removed temporary files a killed convert left") || !strings.Contains(log.String(), "files=2") {
		t.Errorf("log %q: want a warning that 2 files were removed", log.String())
	}
	log.Reset()
	if _, err := Convert(context.Background(), ConvertConfig{Input: in, Output: out, Retry: DefaultRetry(), Logger: logger}); err != nil {
		t.Fatal(err)
	}
	if log.Len() != 0 {
		t.Errorf("a convert with nothing to tidy logged %q", log.String())
	}
	// A folder it may write into but not list (as root, every folder
	// lists).
	if os.Geteuid() != 0 {
		ppo := filepath.Join(out, "ppo")
		if err := os.Chmod(ppo, 0o333); err != nil {
			t.Fatal(err)
		}
		defer os.Chmod(ppo, 0o755)
		log.Reset()
		if _, err := Convert(context.Background(), ConvertConfig{Input: in, Output: out, Retry: DefaultRetry(), Logger: logger}); err != nil {
			t.Fatal(err)
		}
		if log.Len() != 0 {
			t.Errorf("a folder it may not list: logged %q", log.String())
		}
	}
}

// TestConvertLongerThanIdleTimeout: every read (and write) of a convert
// is progress for the retry's watchdog, so an object whose reads take
// many times the idle timeout in all, each well within it (here a store
// that takes 20 ms a read of at most 4 KiB, against 1 s: the time between
// two reads, the conversion's own, may be hundreds of milliseconds on a
// loaded machine under the race detector), converts; it failed with "the
// store made no progress" once the whole attempt outlasted the timeout
// (the default 20 s: an object of a gigabyte or two), each attempt
// starting over.
//
// Not parallel (see TestMain): it sets testHookConvertReader.
func TestConvertLongerThanIdleTimeout(t *testing.T) {
	in := filepath.Join(t.TempDir(), "in")
	if _, err := synth.Run(context.Background(), synth.Config{Out: in, Families: []string{"ppo"}, Seeds: 1, Steps: 1000, Extras: true, Seed: 3}); err != nil {
		t.Fatal(err)
	}
	reads := 0
	testHookConvertReader = func(r io.Reader) io.Reader { return &slowReader{r: r, reads: &reads} }
	defer func() { testHookConvertReader = nil }()
	out := filepath.Join(t.TempDir(), "out")
	retry := RetryPolicy{Attempts: 1, IdleTimeout: time.Second}
	n, err := Convert(context.Background(), ConvertConfig{Input: in, Output: out, Retry: retry})
	if err != nil || n != 1 {
		t.Fatalf("convert: %d, %v", n, err)
	}
	if total := time.Duration(reads) * slowRead; total < 3*retry.IdleTimeout {
		t.Errorf("%d reads of %v: not several idle timeouts in all; the test tests nothing", reads, slowRead)
	}
}

// slowRead is how long a slowReader's read takes.
const slowRead = 20 * time.Millisecond

// slowReader is a store that takes slowRead a read, of at most 4 KiB.
type slowReader struct {
	r     io.Reader
	reads *int
}

func (s *slowReader) Read(p []byte) (int, error) {
	*s.reads++
	time.Sleep(slowRead)
	return s.r.Read(p[:min(len(p), 4<<10)])
}

// TestConvertClaim: convert holds OUTPUT's claim while it writes. A claim
// of a live job (this test's own process) refuses the convert with a usage
// error naming the holder, OUTPUT untouched; a claim left by a job that is
// gone (a dead process of this host) is taken over, the convert writes
// its objects and lets the claim go (OUTPUT then holds the Parquet objects
// only); and a one-off score into an OUTPUT a convert holds is refused the
// same way.
func TestConvertClaim(t *testing.T) {
	t.Parallel()
	in := localSweep(t)
	host, _ := os.Hostname()
	claim := func(pid int) string {
		return fmt.Sprintf(`{"host":%q,"pid":%d,"started_at":%q,"attempt":"x"}`, host, pid, time.Now().UTC().Format(time.RFC3339))
	}
	cfg := func(out string) ConvertConfig {
		return ConvertConfig{Input: in, Output: out, Concurrency: 2, Retry: DefaultRetry()}
	}

	out := filepath.Join(t.TempDir(), "live")
	write(t, filepath.Join(out, ".crlbatch", "job.json"), claim(os.Getpid()))
	before := snapshot(t, out)
	_, err := Convert(context.Background(), cfg(out))
	var ue *UsageError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), fmt.Sprintf("pid %d", os.Getpid())) {
		t.Errorf("a live claim: %v, want a usage error naming pid %d", err, os.Getpid())
	}
	if after := snapshot(t, out); !maps.Equal(after, before) {
		t.Errorf("a refused convert changed OUTPUT: %v", slices.Collect(maps.Keys(after)))
	}

	out = filepath.Join(t.TempDir(), "stale")
	write(t, filepath.Join(out, ".crlbatch", "job.json"), claim(deadProcess(t)))
	n, err := Convert(context.Background(), cfg(out))
	if err != nil || n == 0 {
		t.Fatalf("a stale claim: converted %d, %v; want it taken over", n, err)
	}
	for name := range snapshot(t, out) {
		if !strings.HasSuffix(name, ".parquet") {
			t.Errorf("after a convert OUTPUT holds %s", name)
		}
	}
	if _, err := os.Stat(filepath.Join(out, ".crlbatch")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the claim's folder is left: %v", err)
	}

	// A one-off score finds the claim a convert holds.
	out = filepath.Join(t.TempDir(), "shared")
	started, hold, released := make(chan struct{}), make(chan struct{}), make(chan struct{})
	cj := &job{cfg: &Config{Retry: DefaultRetry()}, log: slog.New(slog.DiscardHandler), start: time.Now().UTC(), attempt: "convert"}
	cj.host = host
	loc, err := ParseLocation(out, true)
	if err != nil {
		t.Fatal(err)
	}
	cj.out = loc
	b, closeB, err := openBucket(context.Background(), nil, loc)
	if err != nil {
		t.Fatal(err)
	}
	defer closeB()
	go func() {
		defer close(released)
		if holder, err := cj.acquire(context.Background(), b, loc.Prefix+jobClaim, jobClaimAge); err != nil || holder != nil {
			t.Errorf("the stand-in convert's claim: %v, %v", holder, err)
		}
		close(started)
		<-hold
		cj.releaseKey(context.Background(), b, loc.Prefix+jobClaim)
	}()
	<-started
	_, err = Run(context.Background(), localJob(in, out, nil))
	close(hold)
	// The stand-in lets its claim go before the bucket is closed and its
	// folder removed (it deletes the claim and the folders left empty).
	<-released
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "(attempt convert)") {
		t.Errorf("a score into an OUTPUT a convert holds: %v, want a usage error naming the convert", err)
	}
}

// TestConvertSpills: a convert whose Parquet files grow past HoldBytes
// writes each through a spill file, in a folder of
// the job's own under SpillDir that is there while the objects are written
// and gone when the convert ends; the objects are byte for byte those of a
// convert that held them in memory; the first spill removes the spill
// folder a killed job left. A spill folder that cannot be made
// fails the convert as that folder's storage error, with nothing left in
// OUTPUT. Not parallel (see TestMain): it sets testHookConvertWriter.
func TestConvertSpills(t *testing.T) {
	ctx := context.Background()
	in := localSweep(t)
	held := filepath.Join(t.TempDir(), "held")
	if _, err := Convert(ctx, ConvertConfig{Input: in, Output: held, Concurrency: 2, Retry: DefaultRetry()}); err != nil {
		t.Fatal(err)
	}
	spillDir := t.TempDir()
	// A killed job's spill folder (its process gone), which the convert's
	// first spill removes, as score's does (TestSpillFolderSweep).
	host, _ := os.Hostname()
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	killed := filepath.Join(spillDir, fmt.Sprintf("%s.tmp-%s-%d-0badf00d", spillName, host, dead.Process.Pid))
	if processAlive(dead.Process.Pid) {
		killed = "" // the pid was taken again
	} else {
		write(t, filepath.Join(killed, "convert-1.parquet"), "PAR1")
	}
	var mu sync.Mutex
	spilled := map[string]bool{}
	testHookConvertWriter = func(key string, w io.Writer) io.Writer {
		files, _ := filepath.Glob(filepath.Join(spillDir, spillName+".*", "convert-*.parquet"))
		mu.Lock()
		spilled[key] = len(files) > 0
		mu.Unlock()
		return w
	}
	defer func() { testHookConvertWriter = nil }()
	out := filepath.Join(t.TempDir(), "out")
	n, err := Convert(ctx, ConvertConfig{Input: in, Output: out, Concurrency: 2, Retry: DefaultRetry(), SpillDir: spillDir, HoldBytes: 100})
	if err != nil {
		t.Fatal(err)
	}
	if len(spilled) != n || slices.Contains(slices.Collect(maps.Values(spilled)), false) {
		t.Fatalf("%d objects converted; a spill file there while each was written: %v", n, spilled)
	}
	if ents, _ := os.ReadDir(spillDir); len(ents) != 0 {
		t.Fatalf("%d entries left in the spill directory (a killed job's folder: %q)", len(ents), killed)
	}
	want, got := snapshot(t, held), snapshot(t, out)
	if !maps.Equal(want, got) {
		t.Fatalf("spilled: %d objects, held: %d; they differ", len(got), len(want))
	}

	notDir := filepath.Join(t.TempDir(), "file")
	write(t, notDir, "not a folder")
	out2 := filepath.Join(t.TempDir(), "out2")
	_, err = Convert(ctx, ConvertConfig{Input: in, Output: out2, Concurrency: 2, Retry: DefaultRetry(), SpillDir: notDir, HoldBytes: 100})
	var se *StorageError
	if !errors.As(err, &se) || se.Op != "spill" || se.URL != notDir {
		t.Fatalf("a spill directory that is a file: %v, want the spill folder's storage error", err)
	}
	if left := snapshot(t, out2); len(left) != 0 {
		t.Fatalf("%v left in OUTPUT after the spill failed", slices.Sorted(maps.Keys(left)))
	}
}
