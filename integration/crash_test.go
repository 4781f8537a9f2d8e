package integration

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"gocloud.dev/blob"
	"gocloud.dev/gcerrors"

	"github.com/crlbatch/crlbatch/internal/synth"
)

// TestCrashConsistency kills crlbatch -9 at random points of publishing,
// crashKills times through a local folder and crashKills times through the
// S3 server, each kill a --history run over the results of the runs
// before it. After each kill: LATEST names either the result it named
// before or a newer one (a killed job leaves the previous newest result
// the newest, or its own complete), every result a manifest names is
// complete (each output's bytes and sha256 as the manifest says), every
// history partition belongs to a complete result and holds its table's
// bytes, and no complete result is ever lost. Every fifth kill, and at the
// end, a run that is left to finish must clean what the killed runs left:
// no temporary file, no attempt without a manifest, no claim, no empty
// folder, nothing in $TMPDIR, every complete result in the history view,
// and LATEST naming the newest.
//
// Where the kill lands: on S3, at the k-th write request (PUT, POST,
// DELETE) seen by a fault proxy, before the request is forwarded or a
// moment after; locally, at the k-th file-system event under OUTPUT
// (inotify: a file created, written and closed, renamed or deleted), k
// drawn uniformly over the events of a clean publishing run. The seed is
// logged; CRLBATCH_CRASH_SEED replays it. Issues 13 and 12.
func TestCrashConsistency(t *testing.T) {
	t.Parallel()
	f := getFixture(t)
	in := filepath.Join(root, "crash-in")
	crashInput.Do(func() {
		_, crashInput.err = synth.Run(context.Background(), synth.Config{Out: in, Seeds: 1, Steps: 80, Seed: 21})
	})
	if crashInput.err != nil {
		t.Fatal(crashInput.err)
	}
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("CRLBATCH_CRASH_SEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	t.Logf("seed %d (CRLBATCH_CRASH_SEED replays it)", seed)

	t.Run("local", func(t *testing.T) {
		t.Parallel()
		out := filepath.Join(t.TempDir(), "out")
		tmp := t.TempDir()
		st := &localStore{dir: out}
		crashLoop(t, f, rand.New(rand.NewPCG(seed, 1)), in, out, []string{"TMPDIR=" + tmp}, st,
			func(kill func(), k int) func() { return st.killAt(t, kill, k) })
		if left, _ := os.ReadDir(tmp); len(left) > 0 {
			t.Errorf("left in $TMPDIR: %v", left)
		}
	})
	t.Run("s3", func(t *testing.T) {
		t.Parallel()
		_, c, p, url := faultyS3(t, nil)
		prefix := fmt.Sprintf("crash-%d", seed%1e6)
		b, err := blob.OpenBucket(context.Background(), c.url(outBucket, ""))
		if err != nil {
			t.Fatal(err)
		}
		defer b.Close()
		st := &bucketStore{b: b, prefix: prefix + "/"}
		rng := rand.New(rand.NewPCG(seed, 2))
		crashLoop(t, f, rng, in, url(outBucket, prefix), nil, st, func(kill func(), k int) func() {
			var n atomic.Int64
			delayed := rng.IntN(2) == 0
			delay := time.Duration(rng.IntN(4000)) * time.Microsecond
			p.SetPolicy(func(r *Request) Fault {
				switch r.Kind {
				case "put", "post", "delete":
					if i := n.Add(1); k < 0 || i == int64(k) {
						if delayed {
							time.AfterFunc(delay, kill)
						} else {
							kill()
						}
					}
				}
				return Pass
			})
			return func() { p.SetPolicy(nil) }
		})
	})
}

var crashInput struct {
	sync.Once
	err error
}

// crashKills is the number of kills per store: 50 each, about half a
// minute in all on two cores.
const crashKills = 50

// crashStore reads what a store holds under OUTPUT.
type crashStore interface {
	// files maps every key under OUTPUT (relative, slash-separated) to its
	// contents.
	files(t *testing.T) map[string][]byte
	// emptyDirs lists folders under OUTPUT that hold nothing (local only).
	emptyDirs(t *testing.T) []string
}

// crashLoop runs the kills. arm sets up the k-th event to call kill (every
// event when k < 0) and returns what disarms it; k is drawn from 1 to the
// events of a clean run plus one.
func crashLoop(t *testing.T, f *fixture, rng *rand.Rand, in, out string, env []string, st crashStore, arm func(kill func(), k int) func()) {
	ctx := context.Background()
	score := func(onStart func(*os.Process)) result {
		args := []string{"score", in, "--out", out, "--quiet", "--history", "--bootstrap-resamples", "200"}
		return f.crl(ctx, env, onStart, args...)
	}
	// A first result, then a clean --history run whose events are
	// counted (a kill that never comes).
	if r := score(nil); r.code != 0 {
		t.Fatalf("first run: %s", r)
	}
	total := countEvents(t, score, arm)
	t.Logf("a clean publishing run: %d events", total)

	complete := map[string]bool{} // every complete result seen: must never go
	named := check(t, st, "", complete, "after the first runs")
	start := time.Now()
	killedAt := map[string]int{}
	for i := 1; i <= crashKills; i++ {
		k := 1 + rng.IntN(total+1)
		var proc atomic.Pointer[os.Process]
		disarm := arm(func() {
			if p := proc.Load(); p != nil {
				p.Kill()
			}
		}, k)
		r := score(func(p *os.Process) { proc.Store(p) })
		disarm()
		switch {
		case r.code == -1:
			killedAt["killed"]++
		case r.code == 0:
			killedAt["finished first"]++
		default:
			t.Fatalf("kill %d (event %d): %s", i, k, r)
		}
		named = check(t, st, named, complete, fmt.Sprintf("kill %d at event %d of %d", i, k, total))
		if i%5 == 0 || i == crashKills {
			r := score(nil)
			if r.code != 0 {
				t.Fatalf("rerun after kill %d: %s", i, r)
			}
			named = check(t, st, named, complete, fmt.Sprintf("rerun after kill %d", i))
			assertClean(t, st, named, fmt.Sprintf("rerun after kill %d", i))
		}
		if t.Failed() {
			return
		}
	}
	t.Logf("%d kills in %v: %v; %d complete results", crashKills, time.Since(start).Round(time.Millisecond), killedAt, len(complete))
}

// countEvents runs a clean --history run and counts the events arm
// sees (k < 0: every event calls kill).
func countEvents(t *testing.T, score func(func(*os.Process)) result, arm func(kill func(), k int) func()) int {
	var n atomic.Int64
	disarm := arm(func() { n.Add(1) }, -1)
	r := score(nil)
	disarm()
	if r.code != 0 {
		t.Fatalf("calibration run: %s", r)
	}
	if n.Load() == 0 {
		t.Fatal("a clean run showed no publishing event")
	}
	return int(n.Load())
}

var attemptRE = regexp.MustCompile(`^results/([0-9]{8}T[0-9]{6}Z-[0-9]{6}[0-9a-f]{6})/$`)

type crashManifest struct {
	Outputs []struct {
		Name   string `json:"name"`
		Bytes  int64  `json:"bytes"`
		SHA256 string `json:"sha256"`
	} `json:"outputs"`
}

// check verifies the invariants and returns the prefix LATEST names now.
func check(t *testing.T, st crashStore, prev string, complete map[string]bool, when string) string {
	t.Helper()
	files := st.files(t)
	// Every manifest names a complete result.
	for k := range files {
		if filepath.Base(k) != "manifest.json" {
			continue
		}
		prefix := strings.TrimSuffix(k, "manifest.json")
		if err := verifyResult(files, prefix); err != nil {
			t.Errorf("%s: the result under %q is named by its manifest but partial: %v", when, prefix, err)
			continue
		}
		complete[prefix] = true
	}
	for p := range complete {
		if _, ok := files[p+"manifest.json"]; !ok {
			t.Errorf("%s: the complete result under %q is gone", when, p)
		}
	}
	// A reader of the history view never sees a partial attempt.
	for k, data := range files {
		parts := strings.Split(k, "/")
		if parts[0] != "history" || strings.HasSuffix(k, ".tmp") {
			continue
		}
		if len(parts) != 5 || parts[4] != "part.parquet" {
			t.Errorf("%s: history object %s", when, k)
			continue
		}
		result := "results/" + strings.TrimPrefix(parts[3], "attempt=") + "/"
		if _, ok := files[result+"manifest.json"]; !ok {
			t.Errorf("%s: %s belongs to no complete result", when, k)
		} else if !bytes.Equal(data, files[result+parts[1]+".parquet"]) {
			t.Errorf("%s: %s is not its result's %s.parquet", when, k, parts[1])
		}
	}
	l, ok := files["LATEST"]
	s := string(l)
	if !ok || !strings.HasSuffix(s, "\n") || !attemptRE.MatchString(strings.TrimSuffix(s, "\n")) {
		t.Errorf("%s: LATEST is %q", when, s)
		return prev
	}
	now := strings.TrimSuffix(s, "\n")
	if _, ok := files[now+"manifest.json"]; !ok {
		t.Errorf("%s: the named result %q has no manifest", when, now)
	}
	if now != prev && !attemptNewer(now, prev) {
		t.Errorf("%s: LATEST went from %q back to %q", when, prev, now)
	}
	return now
}

// attemptNewer reports whether result prefix a is newer than b ("" is
// older than any): attempt ids sort by start time.
func attemptNewer(a, b string) bool { return a > b }

// verifyResult checks that every output the manifest under prefix lists
// is there with its bytes and sha256.
func verifyResult(files map[string][]byte, prefix string) error {
	var m crashManifest
	if err := json.Unmarshal(files[prefix+"manifest.json"], &m); err != nil {
		return fmt.Errorf("manifest.json: %v", err)
	}
	if len(m.Outputs) == 0 {
		return fmt.Errorf("manifest.json lists no output")
	}
	for _, o := range m.Outputs {
		data, ok := files[prefix+o.Name]
		if !ok {
			return fmt.Errorf("%s missing", o.Name)
		}
		sum := sha256.Sum256(data)
		if int64(len(data)) != o.Bytes || hex.EncodeToString(sum[:]) != o.SHA256 {
			return fmt.Errorf("%s: %d bytes, sha256 %x; the manifest says %d, %s", o.Name, len(data), sum, o.Bytes, o.SHA256)
		}
	}
	return nil
}

// assertClean checks that nothing but complete results, their history
// partitions and LATEST is under OUTPUT, that every complete result is in
// the history view, and that LATEST names the newest.
func assertClean(t *testing.T, st crashStore, named, when string) {
	t.Helper()
	files := st.files(t)
	newest := ""
	for k := range files {
		switch {
		case k == "LATEST":
			continue
		case strings.HasSuffix(k, ".tmp"):
			t.Errorf("%s: temporary file %s left", when, k)
			continue
		case strings.HasPrefix(k, "history/"):
			continue // check: each belongs to a complete result
		case !strings.HasPrefix(k, "results/"):
			t.Errorf("%s: unexpected %s", when, k)
			continue
		}
		parts := strings.SplitN(k, "/", 3)
		if len(parts) < 3 {
			t.Errorf("%s: unexpected %s", when, k)
			continue
		}
		prefix := parts[0] + "/" + parts[1] + "/"
		if _, ok := files[prefix+"manifest.json"]; !ok {
			t.Errorf("%s: %s belongs to no complete result", when, k)
			continue
		}
		for _, table := range []string{"families", "run_summary"} {
			id := parts[1]
			key := "history/" + table + "/night=" + id[:4] + "-" + id[4:6] + "-" + id[6:8] + "/attempt=" + id + "/part.parquet"
			if _, ok := files[key]; !ok {
				t.Errorf("%s: the complete result %s is not in the history view (%s)", when, prefix, key)
			}
		}
		if attemptNewer(prefix, newest) {
			newest = prefix
		}
	}
	if named != newest {
		t.Errorf("%s: LATEST names %q, the newest result is %q", when, named, newest)
	}
	if d := st.emptyDirs(t); len(d) > 0 {
		t.Errorf("%s: empty folders left: %v", when, d)
	}
}

// localStore is a local OUTPUT folder.
type localStore struct {
	dir string
}

func (s *localStore) files(t *testing.T) map[string][]byte {
	m := map[string][]byte{}
	filepath.WalkDir(s.dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return nil // renamed or removed meanwhile: the run is dead, so not
		}
		rel, _ := filepath.Rel(s.dir, p)
		m[filepath.ToSlash(rel)] = data
		return nil
	})
	return m
}

func (s *localStore) emptyDirs(t *testing.T) []string {
	var out []string
	filepath.WalkDir(s.dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() && p != s.dir {
			if e, _ := os.ReadDir(p); len(e) == 0 {
				out = append(out, p)
			}
		}
		return nil
	})
	return out
}

// killAt watches OUTPUT (and the folders created under it) with inotify
// and calls kill at the k-th event (every event when k < 0). A folder's
// watch is added once its creation is read, so a file made in it before
// then has no event: with k == 1 (kill at the first file anywhere), a
// folder newly watched is read at once and a file already in it counts as
// that first event (under load, a job can make a folder and a file in
// it, and rename the file, before the folder's watch is there).
func (s *localStore) killAt(t *testing.T, kill func(), k int) func() {
	os.MkdirAll(s.dir, 0o755)
	fd, err := syscall.InotifyInit1(syscall.IN_NONBLOCK | syscall.IN_CLOEXEC)
	if err != nil {
		t.Skipf("inotify: %v", err)
	}
	const mask = syscall.IN_CREATE | syscall.IN_CLOSE_WRITE | syscall.IN_MOVED_TO | syscall.IN_DELETE
	dirs := map[int32]string{}
	watch := func(dir string) {
		if wd, err := syscall.InotifyAddWatch(fd, dir, mask); err == nil {
			dirs[int32(wd)] = dir
		}
	}
	watch(s.dir)
	filepath.WalkDir(s.dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() && p != s.dir {
			watch(p)
		}
		return nil
	})
	file := os.NewFile(uintptr(fd), "inotify")
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 64<<10)
		n := 0
		for {
			m, err := file.Read(buf)
			if err != nil {
				return
			}
			for off := 0; off+syscall.SizeofInotifyEvent <= m; {
				mask := binary.NativeEndian.Uint32(buf[off+4:])
				wd := int32(binary.NativeEndian.Uint32(buf[off:]))
				l := int(binary.NativeEndian.Uint32(buf[off+12:]))
				name := string(bytes.TrimRight(buf[off+syscall.SizeofInotifyEvent:off+syscall.SizeofInotifyEvent+l], "\x00"))
				off += syscall.SizeofInotifyEvent + l
				if mask&syscall.IN_ISDIR != 0 {
					if mask&syscall.IN_CREATE != 0 {
						dir := filepath.Join(dirs[wd], name)
						watch(dir)
						if k == 1 && n == 0 && holdsFile(dir) {
							n++
							kill()
						}
					}
					continue
				}
				n++
				if k < 0 || n == k {
					kill()
				}
			}
		}
	}()
	return func() {
		file.Close()
		<-done
	}
}

// holdsFile says whether dir, or a folder in it, holds a file.
func holdsFile(dir string) bool {
	found := false
	filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			found = true
			return filepath.SkipAll
		}
		return nil
	})
	return found
}

// bucketStore is an OUTPUT prefix of a bucket.
type bucketStore struct {
	b      *blob.Bucket
	prefix string
	// read holds the bytes of every object files has read, by key, with
	// the content MD5, size and modification time the listing gave.
	read map[string]readObject
}

// readObject is an object as files read it.
type readObject struct {
	md5     []byte
	size    int64
	modTime time.Time
	data    []byte
}

// files lists OUTPUT and reads each object, but for one whose listing
// gives the content MD5 (S3's ETag of a single-part upload), size and
// modification time of an earlier read of its key: its bytes are those
// of that read, which the store says it still holds. The crash tests
// list a growing history of results after every kill, and reading every
// object again each time made them quadratic in GETs.
func (s *bucketStore) files(t *testing.T) map[string][]byte {
	ctx := context.Background()
	m := map[string][]byte{}
	if s.read == nil {
		s.read = map[string]readObject{}
	}
	it := s.b.List(&blob.ListOptions{Prefix: s.prefix})
	for {
		o, err := it.Next(ctx)
		if err == io.EOF {
			return m
		}
		if err != nil {
			t.Fatalf("listing %s: %v", s.prefix, err)
		}
		if r, ok := s.read[o.Key]; ok && len(o.MD5) > 0 && bytes.Equal(r.md5, o.MD5) && r.size == o.Size && r.modTime.Equal(o.ModTime) {
			m[strings.TrimPrefix(o.Key, s.prefix)] = r.data
			continue
		}
		data, err := s.b.ReadAll(ctx, o.Key)
		if gcerrors.Code(err) == gcerrors.NotFound {
			// Listed, then gone: a request the killed job had in flight
			// (the release of its short LATEST lock) that the server
			// carried out after the kill. Absent from the snapshot.
			continue
		}
		if err != nil {
			t.Fatalf("reading %s: %v", o.Key, err)
		}
		if len(o.MD5) > 0 {
			s.read[o.Key] = readObject{md5: o.MD5, size: o.Size, modTime: o.ModTime, data: data}
		}
		m[strings.TrimPrefix(o.Key, s.prefix)] = data
	}
}

func (s *bucketStore) emptyDirs(t *testing.T) []string { return nil }
