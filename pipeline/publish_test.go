package pipeline

import (
	"bytes"
	"context"
	"errors"
	"fmt"
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
//
// Not parallel (see TestMain): it sets TMPDIR with t.Setenv (process-wide).
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
// manifest stands beside a file that is empty or missing; under --history,
// the history partitions and then LATEST come after the manifest. Issue
// 13, finding 7; issue 12.
//
// Not parallel (see TestMain): it replaces syncFile and syncDir, which every
// job in the process calls.
func TestLocalOutputIsSynced(t *testing.T) {
	in := localSweep(t)
	out := filepath.Join(t.TempDir(), "out")
	nightly := filepath.Join(t.TempDir(), "nightly")
	ctx := context.Background()
	for _, mode := range []string{"one-off", "overwrite", "history"} {
		var l syncLog
		l.install(t)
		cfg := localJob(in, out, nil)
		cfg.Overwrite = mode == "overwrite"
		if mode == "history" {
			cfg.Output, cfg.History = nightly, true
		}
		sum, err := Run(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		res := filepath.Clean(sum.Result)
		for _, tmp := range l.temps {
			if !strings.HasPrefix(tmp, filepath.Clean(cfg.Output)+string(filepath.Separator)) {
				t.Errorf("temporary file %s is not under OUTPUT %s", tmp, cfg.Output)
			}
		}
		at := func(ev string) int {
			i := slices.Index(l.events, ev)
			if i < 0 {
				t.Errorf("%s: no %q among the fsyncs %q", mode, ev, l.events)
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
				t.Errorf("%s: %s: its folder is not fsynced between its fsync and the manifest's: %q", mode, o.Name, l.events)
			}
			if f > man {
				t.Errorf("%s: %s fsynced after the manifest", mode, o.Name)
			}
		}
		for d := res; ; d = filepath.Dir(d) {
			if i := slices.Index(l.events, "dir "+d); i < 0 || i > man {
				t.Errorf("%s: folder %s not fsynced before the manifest: %q", mode, d, l.events)
			}
			if d == filepath.Dir(cfg.Output) {
				break
			}
		}
		if i := slices.Index(l.events[man+1:], "dir "+res); i < 0 {
			t.Errorf("%s: the result folder is not fsynced after the manifest: %q", mode, l.events)
		}
		if mode == "history" {
			id := filepath.Base(res)
			latest := at("file " + filepath.Join(nightly, LatestName))
			for _, table := range []string{"families", "run_summary"} {
				p := at("file " + filepath.Join(nightly, filepath.FromSlash(historyKey(table, id))))
				if p < man || p > latest {
					t.Errorf("the %s partition is not written between the manifest and LATEST: %q", table, l.events)
				}
			}
			if latest < man || !slices.Contains(l.events[latest+1:], "dir "+nightly) {
				t.Errorf("LATEST not fsynced (file, then OUTPUT) after the manifest: %q", l.events)
			}
		}
	}
}

// TestFailedLatestWriteNamesTheResult: when the LATEST pointer cannot be
// moved, the error says where the complete result is; `latest` finds it
// all the same, and the next --history run moves LATEST forward. Issue
// 13, finding 8; issue 12.
func TestFailedLatestWriteNamesTheResult(t *testing.T) {
	t.Parallel()
	in := localSweep(t)
	out := filepath.Join(t.TempDir(), "out")
	ctx := context.Background()
	// A folder where LATEST goes: the pointer cannot be written.
	block := filepath.Join(out, LatestName, "block")
	if err := os.MkdirAll(block, 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := localJob(in, out, nil)
	cfg.History = true
	_, err := Run(ctx, cfg)
	if !IsStorage(err) {
		t.Fatalf("LATEST not written: %v, want a storage error", err)
	}
	results, _ := filepath.Glob(filepath.Join(out, "results", "*", ManifestName))
	if len(results) != 1 {
		t.Fatalf("complete results %q, want one", results)
	}
	where := filepath.Dir(results[0])
	if !strings.Contains(err.Error(), where) || !strings.Contains(err.Error(), "complete") {
		t.Errorf("error %q does not say the result is complete under %s", err, where)
	}
	if err := os.RemoveAll(filepath.Join(out, LatestName)); err != nil {
		t.Fatal(err)
	}
	if got, err := Latest(ctx, LatestConfig{Output: out}); err != nil || got != where+string(filepath.Separator) {
		t.Errorf("latest = %q, %v; want %s/", got, err, where)
	}
	sum, err := Run(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(out, LatestName))
	want := "results/" + filepath.Base(sum.Result) + "/\n"
	if err != nil || string(got) != want || filepath.Base(sum.Result) <= filepath.Base(where) {
		t.Errorf("LATEST = %q (%v), want %q, newer than %s", got, err, want, where)
	}
}

// TestReadOnlyOutputWarnsNothing: a job whose output is on a read-only file
// system fails with a storage error naming the object, and warns about no
// "partial output" it could not delete, since it wrote none. Issue 13,
// finding 11.
func TestReadOnlyOutputWarnsNothing(t *testing.T) {
	t.Parallel()
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

// TestRerunCleansLeftovers: what killed jobs leave under a nightly OUTPUT
// (an attempt without a manifest whose claim names a dead process of this
// host, one without a claim, an empty attempt folder, temporary files
// beside LATEST, a missing history partition, a takeover marker and a
// temporary claim file of dead processes) is removed, or written, by
// the next --history run, while an attempt whose holder lives, every
// complete result and files crlbatch does not write stay as they were.
func TestRerunCleansLeftovers(t *testing.T) {
	t.Parallel()
	in := localSweep(t)
	out := filepath.Join(t.TempDir(), "out")
	ctx := context.Background()
	cfg := localJob(in, out, nil)
	cfg.History = true
	first, err := Run(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	firstID := filepath.Base(first.Result)
	host, _ := os.Hostname()
	deadPID := deadProcess(t)
	claim := func(pid int) string {
		return fmt.Sprintf(`{"host":%q,"pid":%d,"started_at":%q,"attempt":"x"}`, host, pid, time.Now().UTC().Format(time.RFC3339))
	}
	const deadID, noClaimID, emptyID, liveID = "20200101T000000Z-0000000000aa", "20200101T000001Z-0000000000bb", "20200101T000002Z-0000000000cc", "20200101T000003Z-0000000000dd"
	leftovers := map[string]string{
		"LATEST.18ed273efd5d7000.tmp":                                                       "results/x/",
		"results/" + deadID + "/runs.parquet":                                               "partial",
		"results/" + deadID + "/report.md.18ed27.tmp":                                       "partial",
		".crlbatch/attempts/" + deadID + ".json":                                            claim(deadPID),
		"results/" + noClaimID + "/families.parquet":                                        "partial",
		historyKey("families", deadID):                                                      "partial",
		".crlbatch/latest.lock.takeover-0123456789abcdef":                                   claim(deadPID),
		fmt.Sprintf(".crlbatch/attempts/%s.json.tmp-%s-%d-0a0b0c0d", liveID, host, deadPID): "",
		".crlbatch/attempts/20200101T000004Z-0000000000ee.json":                             claim(deadPID),
	}
	live := map[string]string{
		"results/" + liveID + "/runs.parquet":    "in progress",
		".crlbatch/attempts/" + liveID + ".json": claim(os.Getpid()),
		"notes.txt":                              "mine",
	}
	for k, v := range maps.All(leftovers) {
		write(t, filepath.Join(out, filepath.FromSlash(k)), v)
	}
	for k, v := range live {
		write(t, filepath.Join(out, filepath.FromSlash(k)), v)
	}
	os.MkdirAll(filepath.Join(out, "results", emptyID), 0o755)
	before := snapshot(t, first.Result)
	part := filepath.Join(out, filepath.FromSlash(historyKey("families", firstID)))
	want, _ := os.ReadFile(filepath.Join(first.Result, "families.parquet"))
	os.Remove(part)

	var log bytes.Buffer
	cfg.Logger = slog.New(slog.NewTextHandler(&log, nil))
	if _, err := Run(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	for k := range leftovers {
		if _, err := os.Stat(filepath.Join(out, filepath.FromSlash(k))); err == nil {
			t.Errorf("leftover %s still there", k)
		}
	}
	for _, id := range []string{deadID, noClaimID, emptyID} {
		if _, err := os.Stat(filepath.Join(out, "results", id)); err == nil {
			t.Errorf("attempt folder %s still there", id)
		}
	}
	for k, v := range live {
		if got, err := os.ReadFile(filepath.Join(out, filepath.FromSlash(k))); err != nil || string(got) != v {
			t.Errorf("%s, of a job alive or not crlbatch's, changed: %q, %v", k, got, err)
		}
	}
	if got := snapshot(t, first.Result); !maps.Equal(got, before) {
		t.Errorf("the earlier result changed")
	}
	if got, err := os.ReadFile(part); err != nil || !bytes.Equal(got, want) {
		t.Errorf("the missing history partition of %s is not written again (%v)", firstID, err)
	}
	if !strings.Contains(log.String(), "removing") || !strings.Contains(log.String(), "history partition") {
		t.Errorf("the cleaning is not logged:\n%s", log.String())
	}
}

// deadProcess is the pid of a process that has ended.
func deadProcess(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skipf("cannot run true: %v", err)
	}
	return cmd.Process.Pid
}

func write(t *testing.T, p, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
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

// A file of the result that goes before the manifest is written (removed
// by hand, or by a process that ignores the claims) fails the job
// with a storage error naming it: no manifest ever names a missing file.
//
// Not parallel (see TestMain): it sets testHookBeforeManifest, which every
// job in the process calls.
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
