package main

import (
	"io/fs"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/crlbatch/crlbatch/internal/testhook"
)

// signalledEnv, when set, makes TestHelperSignalled run the program as
// main does, under its signal handling, with the job paused (testhook.Pause)
// at the place pauseEnv names.
const (
	signalledEnv = "CRLBATCH_TEST_SIGNALLED_ARGS"
	pauseEnv     = "CRLBATCH_TEST_PAUSE"
)

func TestHelperSignalled(t *testing.T) {
	args := helperArgs(t, signalledEnv)
	testhook.Pause = os.Getenv(pauseEnv)
	os.Exit(runSignalled(args, os.Stdout, os.Stderr, os.Exit))
}

// childSignalsDefault makes the processes this one starts begin with
// SIGHUP and SIGQUIT at their default action even when this one was started
// with them ignored (go test run under nohup, as a CI script may be): an
// ignored signal stays ignored across exec, and crlbatch then rightly
// leaves it ignored, so the tests of SIGHUP would wait in vain. A signal
// this process handles is reset to the default in a child, so it handles
// them here (and drops them: the tests never send them to themselves).
var childSignalsDefault = sync.OnceFunc(func() {
	for _, s := range []os.Signal{syscall.SIGHUP, syscall.SIGQUIT} {
		if signal.Ignored(s) {
			signal.Notify(make(chan os.Signal, 1), s)
		}
	}
})

// signalled runs crlbatch ARGS in a process of its own (the test binary,
// with TMPDIR set to tmp), waits until the job has paused at pause, sends
// it the signals one after the other and returns its exit status and
// stderr. wrap, when given, is a command the process is started under
// (nohup). A process still running after two minutes is killed and fails
// the test (a safety net; nothing here measures time).
func signalled(t *testing.T, tmp, pause string, sigs []syscall.Signal, wrap []string, args ...string) (int, string) {
	t.Helper()
	paused := false
	c := child{test: "TestHelperSignalled", argsEnv: signalledEnv, env: []string{pauseEnv + "=" + pause, "TMPDIR=" + tmp},
		wrap: wrap, timeout: 2 * time.Minute}
	code, stderr := c.runLines(t, args, func(p *os.Process, line string) {
		if line != testhook.PauseMarker+pause || paused {
			return
		}
		paused = true
		for _, s := range sigs {
			if err := p.Signal(s); err != nil {
				t.Errorf("signal %v: %v", s, err)
			}
		}
	})
	if !paused {
		t.Fatalf("the job never paused at %s: %s", pause, stderr)
	}
	return code, stderr
}

// signalSweep synthesises a sweep (seed 4, the synth flags given) under
// dir for the signal tests and returns its folder.
func signalSweep(t *testing.T, dir string, flags ...string) string {
	t.Helper()
	in := filepath.Join(dir, "sweep")
	if code, _, stderr := crl(t, append([]string{"synth", "--out", in, "--seed", "4"}, flags...)...); code != 0 {
		t.Fatal(stderr)
	}
	return in
}

// jobFolders names a signalled job's OUTPUT, spill folder and TMPDIR under
// base, making the last two (OUTPUT is the job's to make).
func jobFolders(t *testing.T, base string) (out, spill, tmp string) {
	t.Helper()
	out, spill, tmp = filepath.Join(base, "out"), filepath.Join(base, "spill"), filepath.Join(base, "tmp")
	for _, d := range []string{spill, tmp} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return out, spill, tmp
}

// noneLeft fails the test for any file under dir (folders may stay: OUTPUT
// itself, an empty spill folder).
func noneLeft(t *testing.T, what, dir string) {
	t.Helper()
	filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			t.Errorf("left in %s: %s", what, path)
		}
		return nil
	})
}

// TestSignalsEndTheJobCleanly (breakit4): SIGINT, SIGTERM, SIGHUP and
// SIGQUIT while the job holds spill files (after scoring) and while its
// result files are written (before the manifest) end it as a failure: exit
// 128 + the signal's number, nothing under OUTPUT, no claim, the spill
// folder and TMPDIR empty. Before, SIGHUP killed the process (the claim
// and the spill folder left) and SIGQUIT dumped the stacks and exited 2, a
// usage error's status, leaving the same.
func TestSignalsEndTheJobCleanly(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	in := signalSweep(t, dir, "--seeds", "3", "--steps", "300", "--split-files", "2")
	cases := []struct {
		sig  syscall.Signal
		code int
	}{
		{syscall.SIGINT, exitInterrupt},
		{syscall.SIGTERM, exitTerminated},
		{syscall.SIGHUP, exitHangup},
		{syscall.SIGQUIT, exitQuit},
	}
	for _, pause := range []string{"main", "publish"} {
		for _, c := range cases {
			name := pause + "-" + strings.ToUpper(strings.TrimPrefix(c.sig.String(), "signal "))
			t.Run(name, func(t *testing.T) {
				base := filepath.Join(dir, name)
				out, spill, tmp := jobFolders(t, base)
				code, stderr := signalled(t, tmp, pause, []syscall.Signal{c.sig}, nil,
					"score", in, "--out", out, "--quiet", "--spec", "experiment",
					"--episode-end-from-spec", "--solve-component", "progress", "--bootstrap-resamples", "200",
					"--memory-limit", "1KiB", "--spill-dir", spill, "--log-level", "info")
				if code != c.code {
					t.Fatalf("exit %d, want %d: %s", code, c.code, stderr)
				}
				if !strings.Contains(stderr, "spilled") {
					t.Errorf("the job did not spill before the signal: %s", stderr)
				}
				if want := "crlbatch: interrupted: nothing was published, and files written so far were removed\n"; !strings.Contains(stderr, want) {
					t.Errorf("stderr lacks %q:\n%s", want, stderr)
				}
				if c.sig == syscall.SIGQUIT && !strings.Contains(stderr, "testhook.Wait(") {
					t.Errorf("SIGQUIT printed no goroutine stacks:\n%s", stderr)
				}
				if _, err := os.Stat(filepath.Join(out, ".crlbatch", "job.json")); !os.IsNotExist(err) {
					t.Errorf("the claim is left: %v", err)
				}
				noneLeft(t, "OUTPUT", out)
				if left, _ := os.ReadDir(spill); len(left) != 0 {
					t.Errorf("spill files left: %v", left)
				}
				noneLeft(t, "TMPDIR", tmp)
			})
		}
	}
}

// TestIgnoredHangupStaysIgnored (breakit4): a job started under nohup
// (SIGHUP ignored) goes on after a SIGHUP, as it did before crlbatch caught
// SIGHUP; the SIGTERM after it ends the job with 143.
func TestIgnoredHangupStaysIgnored(t *testing.T) {
	t.Parallel()
	nohup, err := exec.LookPath("nohup")
	if err != nil {
		t.Skip("no nohup on PATH")
	}
	dir := t.TempDir()
	in := signalSweep(t, dir, "--seeds", "2", "--steps", "200")
	out, tmp := filepath.Join(dir, "out"), filepath.Join(dir, "tmp")
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		t.Fatal(err)
	}
	code, stderr := signalled(t, tmp, "main", []syscall.Signal{syscall.SIGHUP, syscall.SIGTERM}, []string{nohup},
		"score", in, "--out", out, "--quiet", "--bootstrap-resamples", "200")
	if code != exitTerminated {
		t.Fatalf("exit %d, want %d (the SIGHUP was not ignored?): %s", code, exitTerminated, stderr)
	}
	if _, err := os.Stat(filepath.Join(out, ".crlbatch", "job.json")); !os.IsNotExist(err) {
		t.Errorf("the claim is left: %v", err)
	}
	noneLeft(t, "OUTPUT", out)
}
