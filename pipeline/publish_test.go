package pipeline

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	_ "gocloud.dev/blob/fileblob"

	"github.com/crlbatch/crlbatch/internal/synth"
)

// Publishing faults of issue 13 (findings 7, 8 and the read-only warning
// of 11), through local folders.

// localSweep writes a small synthetic sweep into a fresh folder.
func localSweep(t *testing.T) string {
	t.Helper()
	in := filepath.Join(t.TempDir(), "in")
	if _, err := synth.Run(context.Background(), synth.Config{Out: in, Seeds: 1, Steps: 80, Seed: 3}); err != nil {
		t.Fatal(err)
	}
	return in
}

// localJob scores in into out with a logger writing to log (if set), few
// resamples and a short retry.
func localJob(in, out string, log *bytes.Buffer) Config {
	cfg := DefaultConfig()
	cfg.Input, cfg.Output = in, out
	cfg.Resamples = 200
	cfg.Retry = RetryPolicy{Attempts: 2, Initial: time.Millisecond, Max: time.Millisecond}
	if log != nil {
		cfg.Logger = slog.New(slog.NewTextHandler(log, nil))
	}
	return cfg
}

// device is the device number of the file system holding path.
func device(t *testing.T, path string) uint64 {
	t.Helper()
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		t.Fatal(err)
	}
	return uint64(st.Dev)
}

// mountTmpfs mounts a tmpfs of the given size and options on a fresh
// folder for the test, or skips the test saying why it cannot.
func mountTmpfs(t *testing.T, opts string) string {
	t.Helper()
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", opts, "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs (needs root with CAP_SYS_ADMIN): %v %s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v %s", dir, err, out)
		}
	})
	return dir
}

// otherFS is a fresh folder on another file system than near: under
// /dev/shm when that is one, else on a tmpfs of its own.
func otherFS(t *testing.T, near string) string {
	t.Helper()
	if fi, err := os.Stat("/dev/shm"); err == nil && fi.IsDir() && device(t, "/dev/shm") != device(t, near) {
		dir, err := os.MkdirTemp("/dev/shm", "crlbatch-test-")
		if err == nil {
			t.Cleanup(func() { os.RemoveAll(dir) })
			return dir
		}
	}
	return mountTmpfs(t, "size=64m")
}

// TestLocalOutputOnAnotherFilesystem: a local OUTPUT on another file system
// than $TMPDIR publishes (the temporary files are made in the destination
// folder, not in $TMPDIR, so the rename never crosses devices), and nothing
// is left in $TMPDIR. Issue 13, finding 7.
func TestLocalOutputOnAnotherFilesystem(t *testing.T) {
	in := localSweep(t)
	out := filepath.Join(t.TempDir(), "out")
	tmp := otherFS(t, filepath.Dir(out))
	t.Setenv("TMPDIR", tmp)
	ctx := context.Background()
	if _, err := Run(ctx, localJob(in, out, nil)); err != nil {
		t.Fatalf("first result: %v", err)
	}
	cfg := localJob(in, out, nil)
	cfg.Overwrite = true
	sum, err := Run(ctx, cfg)
	if err != nil {
		t.Fatalf("--overwrite: %v", err)
	}
	if _, err := os.Stat(filepath.Join(sum.Result, ManifestName)); err != nil {
		t.Errorf("no manifest under %s: %v", sum.Result, err)
	}
	left, _ := os.ReadDir(tmp)
	for _, e := range left {
		t.Errorf("left in $TMPDIR: %s", e.Name())
	}
}

// syncLog records the fsyncs of a job through the syncFile and syncDir
// hooks.
type syncLog struct {
	mu     sync.Mutex
	events []string // "file FINAL-PATH" (temporary path TMP) or "dir PATH"
	temps  []string
}

var tmpSuffix = regexp.MustCompile(`\.[0-9a-f]+\.tmp$`)

func (l *syncLog) install(t *testing.T) {
	t.Helper()
	of, od := syncFile, syncDir
	t.Cleanup(func() { syncFile, syncDir = of, od })
	syncFile = func(f *os.File) error {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.temps = append(l.temps, f.Name())
		l.events = append(l.events, "file "+tmpSuffix.ReplaceAllString(f.Name(), ""))
		return of(f)
	}
	syncDir = func(dir string) error {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.events = append(l.events, "dir "+dir)
		return od(dir)
	}
}

// TestLocalOutputIsSynced: every local output file is written under a
// temporary name in its destination folder and fsynced before its rename,
// its folder is fsynced after, and the folders up to OUTPUT's parent are
// fsynced before the manifest is written, so that after a power cut no
// manifest stands beside a file that is empty or missing. Issue 13,
// finding 7.
func TestLocalOutputIsSynced(t *testing.T) {
	in := localSweep(t)
	out := filepath.Join(t.TempDir(), "out")
	ctx := context.Background()
	for _, overwrite := range []bool{false, true} {
		var l syncLog
		l.install(t)
		cfg := localJob(in, out, nil)
		cfg.Overwrite = overwrite
		sum, err := Run(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		res := filepath.Clean(sum.Result)
		for _, tmp := range l.temps {
			if d := filepath.Dir(tmp); d != res && d != out {
				t.Errorf("temporary file %s is not in the destination folder %s", tmp, res)
			}
		}
		at := func(ev string) int {
			i := slices.Index(l.events, ev)
			if i < 0 {
				t.Errorf("overwrite=%v: no %q among the fsyncs %q", overwrite, ev, l.events)
			}
			return i
		}
		man := at("file " + filepath.Join(res, ManifestName))
		for _, o := range sum.Outputs {
			if o.Name == ManifestName {
				continue
			}
			f := at("file " + filepath.Join(res, o.Name))
			if d := slices.Index(l.events[f+1:], "dir "+res); d < 0 || f+1+d > man {
				t.Errorf("overwrite=%v: %s: its folder is not fsynced between its fsync and the manifest's: %q", overwrite, o.Name, l.events)
			}
			if f > man {
				t.Errorf("overwrite=%v: %s fsynced after the manifest", overwrite, o.Name)
			}
		}
		for d := res; ; d = filepath.Dir(d) {
			if i := slices.Index(l.events, "dir "+d); i < 0 || i > man {
				t.Errorf("overwrite=%v: folder %s not fsynced before the manifest: %q", overwrite, d, l.events)
			}
			if d == filepath.Dir(out) {
				break
			}
		}
		if i := slices.Index(l.events[man+1:], "dir "+res); i < 0 {
			t.Errorf("overwrite=%v: the result folder is not fsynced after the manifest: %q", overwrite, l.events)
		}
		if overwrite {
			latest := at("file " + filepath.Join(out, LatestName))
			if latest < man || !slices.Contains(l.events[latest+1:], "dir "+out) {
				t.Errorf("LATEST not fsynced (file, then OUTPUT) after the manifest: %q", l.events)
			}
		}
	}
}

// TestFailedLatestWriteNamesTheResult: when the LATEST pointer cannot be
// moved, the error says where the complete result is, and the next
// --overwrite run makes LATEST name the newest complete result before
// anything else, even if that run then fails. Issue 13, finding 8.
func TestFailedLatestWriteNamesTheResult(t *testing.T) {
	in := localSweep(t)
	out := filepath.Join(t.TempDir(), "out")
	ctx := context.Background()
	if _, err := Run(ctx, localJob(in, out, nil)); err != nil {
		t.Fatal(err)
	}
	// A folder where LATEST goes: the pointer cannot be written.
	block := filepath.Join(out, LatestName, "block")
	if err := os.MkdirAll(block, 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := localJob(in, out, nil)
	cfg.Overwrite = true
	_, err := Run(ctx, cfg)
	if !IsStorage(err) {
		t.Fatalf("LATEST not written: %v, want a storage error", err)
	}
	attempts, _ := filepath.Glob(filepath.Join(out, "attempts", "*", ManifestName))
	if len(attempts) != 1 {
		t.Fatalf("complete attempts %q, want one", attempts)
	}
	where := filepath.Dir(attempts[0])
	if !strings.Contains(err.Error(), where) || !strings.Contains(err.Error(), "complete") {
		t.Errorf("error %q does not say the result is complete under %s", err, where)
	}
	if err := os.RemoveAll(filepath.Join(out, LatestName)); err != nil {
		t.Fatal(err)
	}

	// The next run fails (bad data), but first finds the complete result.
	bad := t.TempDir()
	if err := os.WriteFile(filepath.Join(bad, "x.jsonl"), []byte("not json\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	cfg = localJob(bad, out, &log)
	cfg.Overwrite = true
	if _, err := Run(ctx, cfg); err == nil || IsStorage(err) {
		t.Fatalf("bad input: %v, want a data error", err)
	}
	got, err := os.ReadFile(filepath.Join(out, LatestName))
	want := "attempts/" + filepath.Base(where) + "/\n"
	if err != nil || string(got) != want {
		t.Errorf("LATEST = %q (%v), want %q", got, err, want)
	}
	if !strings.Contains(log.String(), filepath.Base(where)) {
		t.Errorf("the repair of LATEST is not logged: %s", log.String())
	}
}

// TestReadOnlyOutputWarnsNothing: a job whose output is on a read-only file
// system fails with a storage error naming the object, and warns about no
// "partial output" it could not delete, since it wrote none. Issue 13,
// finding 11.
func TestReadOnlyOutputWarnsNothing(t *testing.T) {
	in := localSweep(t)
	out := mountTmpfs(t, "size=1m,ro")
	var log bytes.Buffer
	_, err := Run(context.Background(), localJob(in, out, &log))
	if !IsStorage(err) || !strings.Contains(err.Error(), out) {
		t.Fatalf("read-only output: %v, want a storage error naming %s", err, out)
	}
	if strings.Contains(log.String(), "could not delete") {
		t.Errorf("spurious warning:\n%s", log.String())
	}
}

// TestRerunCleansLeftovers: what a killed job leaves under a local OUTPUT
// (temporary files beside the result, an attempt without a manifest, an
// empty attempt folder) is removed by the next --overwrite run, while every
// complete result stays as it was.
func TestRerunCleansLeftovers(t *testing.T) {
	in := localSweep(t)
	out := filepath.Join(t.TempDir(), "out")
	ctx := context.Background()
	if _, err := Run(ctx, localJob(in, out, nil)); err != nil {
		t.Fatal(err)
	}
	cfg := localJob(in, out, nil)
	cfg.Overwrite = true
	first, err := Run(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	leftovers := map[string]string{
		"runs.parquet.18ed273efd5d6fff.tmp":                        "half",
		"LATEST.18ed273efd5d7000.tmp":                              "attempts/x/",
		"attempts/20200101T000000Z/runs.parquet":                   "partial",
		"attempts/20200101T000000Z/report.md.18ed273efd5d6fff.tmp": "partial",
		"attempts/20200101T000001Z-2/families.parquet":             "partial",
	}
	for k, v := range leftovers {
		p := filepath.Join(out, filepath.FromSlash(k))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(v), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	os.MkdirAll(filepath.Join(out, "attempts", "20200101T000002Z"), 0o755)
	// Not crlbatch's: stays.
	os.WriteFile(filepath.Join(out, "notes.txt"), []byte("mine"), 0o644)
	before := snapshot(t, first.Result)
	top := snapshot(t, out)

	var log bytes.Buffer
	cfg = localJob(in, out, &log)
	cfg.Overwrite = true
	if _, err := Run(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	for k := range leftovers {
		if _, err := os.Stat(filepath.Join(out, filepath.FromSlash(k))); err == nil {
			t.Errorf("leftover %s still there", k)
		}
	}
	for _, d := range []string{"20200101T000000Z", "20200101T000001Z-2", "20200101T000002Z"} {
		if _, err := os.Stat(filepath.Join(out, "attempts", d)); err == nil {
			t.Errorf("attempt folder %s still there", d)
		}
	}
	if _, err := os.Stat(filepath.Join(out, "notes.txt")); err != nil {
		t.Errorf("a file that is not crlbatch's was removed")
	}
	if got := snapshot(t, first.Result); !maps.Equal(got, before) {
		t.Errorf("the earlier attempt changed")
	}
	for name, data := range top {
		if strings.Contains(name, "/") || strings.HasSuffix(name, ".tmp") || name == LatestName {
			continue
		}
		if got, err := os.ReadFile(filepath.Join(out, name)); err != nil || string(got) != data {
			t.Errorf("the first result's %s changed", name)
		}
	}
	if !strings.Contains(log.String(), "removed") {
		t.Errorf("the cleaning is not logged:\n%s", log.String())
	}
}

// snapshot maps every file under dir (slash-separated relative path) to
// its contents.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	m := map[string]string{}
	err := filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		m[filepath.ToSlash(rel)] = string(b)
		return err
	})
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	return m
}

// A file of the result that goes before the manifest is written (another
// job's tidy, two jobs publishing into one OUTPUT at once) fails the job
// with a storage error naming it: no manifest ever names a missing file.
func TestManifestNeverNamesAMissingFile(t *testing.T) {
	in := localSweep(t)
	out := filepath.Join(t.TempDir(), "out")
	testHookBeforeManifest = func(target string) {
		os.Remove(filepath.Join(out, filepath.FromSlash(target), "runs.parquet"))
	}
	defer func() { testHookBeforeManifest = nil }()
	_, err := Run(context.Background(), localJob(in, out, nil))
	var se *StorageError
	if !errors.As(err, &se) || !strings.Contains(err.Error(), "runs.parquet") || !strings.Contains(err.Error(), "before the manifest was written") {
		t.Fatalf("got %v, want a storage error naming runs.parquet", err)
	}
	if _, err := os.Stat(filepath.Join(out, ManifestName)); err == nil {
		t.Error("a manifest was written although runs.parquet is gone")
	}
}
