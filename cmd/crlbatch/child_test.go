package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// helperArgs is, in a helper test process, the command line crlbatch runs
// with: "crlbatch" and the arguments the variable env holds as JSON. When
// env is not set the test is not a helper process and skips; arguments
// that are not JSON end the process with status 99.
func helperArgs(t *testing.T, env string) []string {
	raw := os.Getenv(env)
	if raw == "" {
		t.Skip("runs only as the helper process of another test")
	}
	var args []string
	if err := json.Unmarshal([]byte(raw), &args); err != nil {
		os.Stderr.WriteString(err.Error() + "\n")
		os.Exit(99)
	}
	return append([]string{"crlbatch"}, args...)
}

// child is crlbatch run as a process of its own: the test binary running
// only the helper test named test, which takes crlbatch's arguments as JSON
// from the variable argsEnv (helperArgs).
type child struct {
	test, argsEnv string
	env           []string      // more of the environment (TMPDIR, test hooks)
	bin           string        // the test binary to run; "" is this one
	dir           string        // the working folder; "" is this one's
	wrap          []string      // a command it is started under (nohup)
	timeout       time.Duration // after which it is killed and the test fails
}

// command is the child's command for crlbatch ARGS, not yet started, and
// the context that kills it after c.timeout (cancel it once done). Unless
// it is wrapped, the child starts with SIGHUP and SIGQUIT at their default
// action (childSignalsDefault).
func (c child) command(t *testing.T, args []string) (*exec.Cmd, context.Context, context.CancelFunc) {
	t.Helper()
	bin := c.bin
	if bin == "" {
		exe, err := os.Executable()
		if err != nil {
			t.Fatal(err)
		}
		bin = exe
	}
	if len(c.wrap) == 0 {
		childSignalsDefault()
	}
	js, _ := json.Marshal(args)
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	argv := append(append([]string{}, c.wrap...), bin, "-test.run=^"+c.test+"$")
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = append(append(os.Environ(), c.argsEnv+"="+string(js)), c.env...)
	cmd.Dir = c.dir
	return cmd, ctx, cancel
}

// exitStatus is the exit status of the child for ARGS whose Wait (or Run)
// returned err, with the error when it did not run to an exit status (it
// could not start). A child its context killed fails the test, naming
// stderr (a safety net; nothing here measures time).
func (c child) exitStatus(t *testing.T, ctx context.Context, err error, args []string, stderr string) (int, error) {
	t.Helper()
	if ctx.Err() != nil {
		t.Fatalf("crlbatch %s: still running after %v (killed); stderr: %s", strings.Join(args, " "), c.timeout, stderr)
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode(), nil
	}
	return 0, err
}

// runLines runs the child for ARGS, hands each line of its stderr to line
// as it comes (to signal the process at a marker), and returns its exit
// status and stderr.
func (c child) runLines(t *testing.T, args []string, line func(p *os.Process, line string)) (int, string) {
	t.Helper()
	cmd, ctx, cancel := c.command(t, args)
	defer cancel()
	pipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	sc := bufio.NewScanner(pipe)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		stderr.WriteString(sc.Text() + "\n")
		line(cmd.Process, sc.Text())
	}
	code, err := c.exitStatus(t, ctx, cmd.Wait(), args, stderr.String())
	if err != nil {
		t.Fatal(err)
	}
	return code, stderr.String()
}
