package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/crlbatch/crlbatch/internal/stop"
	"github.com/crlbatch/crlbatch/internal/testhook"
)

// holdEnv, with signalledEnv and pauseEnv, makes TestHelperSecondSignal
// run the program as main does with the job paused at pauseEnv's place
// and, once cancelled, held for good at holdEnv's (testhook.Hold).
const holdEnv = "CRLBATCH_TEST_HOLD"

func TestHelperSecondSignal(t *testing.T) {
	if os.Getenv(holdEnv) == "" {
		t.Skip("runs only as the helper process of another test")
	}
	args := helperArgs(t, signalledEnv)
	testhook.Pause, testhook.Hold = os.Getenv(pauseEnv), os.Getenv(holdEnv)
	os.Exit(runSignalled(args, os.Stdout, os.Stderr, os.Exit))
}

// twoSignals runs crlbatch ARGS in a process of its own, sends it first
// once its job has paused at "main" (after scoring, spill files held) and
// second once its clean-up is held at "release" (before it lets go of
// OUTPUT's claim), and returns its exit status and stderr. A process still
// running after two minutes is killed and fails the test (a safety net;
// nothing here measures time).
func twoSignals(t *testing.T, tmp string, first, second syscall.Signal, args ...string) (int, string) {
	t.Helper()
	c := child{test: "TestHelperSecondSignal", argsEnv: signalledEnv,
		env: []string{pauseEnv + "=main", holdEnv + "=release", "TMPDIR=" + tmp}, timeout: 2 * time.Minute}
	paused, held := false, false
	code, stderr := c.runLines(t, args, func(p *os.Process, line string) {
		switch {
		case !paused && line == testhook.PauseMarker+"main":
			paused = true
			if err := p.Signal(first); err != nil {
				t.Errorf("signal %v: %v", first, err)
			}
		case paused && !held && line == testhook.HoldMarker+"release":
			held = true
			if err := p.Signal(second); err != nil {
				t.Errorf("signal %v: %v", second, err)
			}
		}
	})
	if !held {
		t.Fatalf("the job never paused and was held in its clean-up: %s", stderr)
	}
	return code, stderr
}

// TestSecondSignalDuringCleanUp: the first signal cancels the job, which
// says so at info level ("stopping", only under --log-level info); a
// second one while it cleans up ends the process at once with the second
// signal's status, saying on stderr that it did and naming what may be
// left behind: the claim on OUTPUT (it is: the clean-up was held before
// letting go of it) and the spill folder. The next job on OUTPUT takes the
// claim over (its holder is gone) and publishes. Before, the second
// signal exited without a word.
func TestSecondSignalDuringCleanUp(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	in := signalSweep(t, dir, "--seeds", "2", "--steps", "200", "--split-files", "2")
	for _, c := range []struct {
		name          string
		first, second syscall.Signal
		info          bool
		code          int
	}{
		{"INT-INT", syscall.SIGINT, syscall.SIGINT, true, exitInterrupt},
		{"TERM-TERM", syscall.SIGTERM, syscall.SIGTERM, false, exitTerminated},
		{"INT-TERM", syscall.SIGINT, syscall.SIGTERM, true, exitTerminated},
		{"HUP-INT", syscall.SIGHUP, syscall.SIGINT, false, exitInterrupt},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			base := filepath.Join(dir, c.name)
			out, spill, tmp := jobFolders(t, base)
			args := []string{"score", in, "--out", out, "--quiet", "--bootstrap-resamples", "200",
				"--memory-limit", "1KiB", "--spill-dir", spill}
			if c.info {
				args = append(args, "--log-level", "info")
			}
			code, stderr := twoSignals(t, tmp, c.first, c.second, args...)
			if code != c.code {
				t.Errorf("exit %d, want %d: %s", code, c.code, stderr)
			}
			first, second := stop.Name(c.first), stop.Name(c.second)
			stopping := `msg="stopping: the job is cancelled and cleans up; a second signal exits at once" signal=` + first
			if got := strings.Contains(stderr, stopping); got != c.info {
				t.Errorf("the first signal logged at info level: %v, want %v (--log-level info: %v):\n%s", got, c.info, c.info, stderr)
			}
			for _, want := range []string{
				"crlbatch: a second signal (" + second + "): exiting at once, before the clean-up ended; may be left behind: the claim " + out + "/.crlbatch/job.json",
				"this job's spill folder " + spill + "/crlbatch-spill.tmp-",
			} {
				if !strings.Contains(stderr, want) {
					t.Errorf("stderr lacks %q:\n%s", want, stderr)
				}
			}
			if _, err := os.Stat(filepath.Join(out, ".crlbatch", "job.json")); err != nil {
				t.Errorf("the claim the message names is not there: %v", err)
			}
			if code, _, stderr := crl(t, "score", in, "--out", out, "--quiet", "--bootstrap-resamples", "200"); code != exitOK {
				t.Errorf("the next job on OUTPUT: exit %d: %s", code, stderr)
			}
		})
	}
}
