package crlbeam

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestCommandLogLevel: --log-level takes crlbatch's values with crlbatch's
// meaning (warn by default: no info line; info adds the engine's, here
// --overwrite's; anything else a usage error, exit 2, crlbatch's message);
// a cancelled job exits 130 as crlbatch's does and says it was interrupted
// (interruptedMsg), not the runner's "context canceled".
func TestCommandLogLevel(t *testing.T) {
	in := "../configs/examples/safecrl"
	out := filepath.Join(t.TempDir(), "out")
	var stdout, stderr bytes.Buffer
	if code := Main(context.Background(), []string{"score", in, "--protocol", "safecrl", "--out", out}, &stdout, &stderr); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, c := range []struct {
		name   string
		ctx    context.Context
		flags  []string
		code   int
		want   string // in stderr
		absent string // not in stderr
	}{
		{"default", context.Background(), []string{"--overwrite"}, exitOK, "", "level=INFO"},
		{"info", context.Background(), []string{"--overwrite", "--log-level", "info"}, exitOK, `level=INFO msg="replacing the result in place`, ""},
		{"error", context.Background(), []string{"--overwrite", "--log-level", "ERROR"}, exitOK, "", "level=INFO"},
		{"bogus", context.Background(), []string{"--log-level", "loud"}, exitUsage, `crlbatch-beam: --log-level "loud": want debug, info, warn or error` + "\n", ""},
		{"cancelled", cancelled, nil, exitInterrupt, "crlbatch-beam: " + interruptedMsg + "\n", "crlbatch-beam: context canceled"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			args := append([]string{"score", in, "--protocol", "safecrl", "--out", out}, c.flags...)
			code := Main(c.ctx, args, &stdout, &stderr)
			if code != c.code || !strings.Contains(stderr.String(), c.want) || c.absent != "" && strings.Contains(stderr.String(), c.absent) {
				t.Errorf("exit %d, stderr:\n%s\nwant exit %d, %q in it and not %q", code, stderr.String(), c.code, c.want, c.absent)
			}
		})
	}
}

// TestCommandCancelledWhileRunning: a job cancelled on the runner (once
// the runner has started its loopback worker: Beam's beamloopbackworker-*
// file in Run's temporary folder) exits 130 and says it was interrupted,
// not the runner's text of its own cancelled calls ("failed to get metrics
// … rpc error: code = Canceled desc = context canceled" before); it
// publishes no manifest.json.
func TestCommandCancelledWhileRunning(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	out := filepath.Join(t.TempDir(), "out")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	running := make(chan bool, 1)
	go func() {
		for ctx.Err() == nil {
			if m, _ := filepath.Glob(filepath.Join(tmp, "crlbatch-beam-*", "beamloopbackworker-*")); len(m) > 0 {
				cancel()
				running <- true
				return
			}
			time.Sleep(time.Millisecond) // polls for a phase; nothing here measures time
		}
		running <- false
	}()
	var stdout, stderr bytes.Buffer
	code := Main(ctx, []string{"score", "../configs/examples/safecrl", "--protocol", "safecrl", "--out", out}, &stdout, &stderr)
	cancel()
	if !<-running {
		t.Fatalf("the job ended (exit %d) before the runner started its worker: %s", code, stderr.String())
	}
	if code != exitInterrupt || !strings.HasSuffix(stderr.String(), "crlbatch-beam: "+interruptedMsg+"\n") || strings.Contains(stderr.String(), "rpc error") {
		t.Errorf("exit %d, stderr:\n%s\nwant exit %d, ending in crlbatch-beam: %s, no rpc error", code, stderr.String(), exitInterrupt, interruptedMsg)
	}
	if _, err := os.Stat(filepath.Join(out, "manifest.json")); !os.IsNotExist(err) {
		t.Errorf("manifest.json published: %v", err)
	}
}
