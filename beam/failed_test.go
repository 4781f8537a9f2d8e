//go:build !race

package crlbeam

// The tests of pipelines that fail. They are built without the race
// detector (make test-beam runs them in a second, plain go test) because
// Beam v2.77.0's SDK harness has a data race of its own on that path:
// when the runner ends a failed job, harness.MainWithOptions closes its
// response channel (harness.go:195) while a bundle goroutine it does not
// wait for may still send on it (harness.go:213). The race detector then
// fails whichever test is running, whatever our code does.

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBadRow: a bad row fails the pipeline, naming object and line, and
// publishes nothing.
func TestBadRow(t *testing.T) {
	in, obj := badSweep(t, 1)
	out := filepath.Join(t.TempDir(), "beam")
	spec, err := ParseScore(context.Background(), []string{in, "--protocol", "safecrl", "--out", out}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Run(context.Background(), spec, Options{})
	if err == nil {
		t.Fatal("a bad row did not fail the pipeline")
	}
	if msg := err.Error(); !strings.Contains(msg, filepath.ToSlash(obj)) || !strings.Contains(msg, "line 3") {
		t.Errorf("the error does not name %s line 3: %v", obj, err)
	}
	if left := files(t, out); len(left) != 0 {
		t.Errorf("a failed pipeline left files: %v", left)
	}
}

// TestMaxBadRowsExceeded: one more bad row than --max-bad-rows allows
// fails the pipeline with the local job's message.
func TestMaxBadRowsExceeded(t *testing.T) {
	in, _ := badSweep(t, 2)
	spec, err := ParseScore(context.Background(), []string{in, "--protocol", "safecrl", "--max-bad-rows", "1", "--out", filepath.Join(t.TempDir(), "beam")}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Run(context.Background(), spec, Options{}); err == nil || !strings.Contains(err.Error(), "--max-bad-rows 1") {
		t.Errorf("two bad rows under --max-bad-rows 1: %v", err)
	}
}

// TestCommandBadRow: a bad row exits 1 with the row's object and line as
// the message (not the runner's plan of the failed bundle).
func TestCommandBadRow(t *testing.T) {
	var stdout, stderr bytes.Buffer
	in, obj := badSweep(t, 1)
	code := Main(context.Background(), []string{"score", in, "--protocol", "safecrl", "--out", filepath.Join(t.TempDir(), "out")}, &stdout, &stderr)
	want := "crlbatch-beam: " + filepath.Join(in, obj) + ": line 3: "
	if code != exitData || !strings.HasPrefix(stderr.String(), want) || strings.Count(stderr.String(), "\n") != 1 {
		t.Errorf("a bad row: exit %d, %q; want exit 1 and one line starting %q", code, stderr.String(), want)
	}
}

// TestFirstFailureInKeyOrder: with several objects failing, the pipeline
// names the first in key order, as crlbatch does at any --concurrency,
// whichever fails first in time: the objects handed to the pipeline in
// key order and in reverse (Prism decodes them in the order given), the
// first object's bad row its last of 20,001, the others' a bad row and a
// run over --max-labels at once (the last object's run also fails to
// assemble: a failure of the scoring step, after every read). The
// command exits 1 with the message crlbatch gives.
func TestFirstFailureInKeyOrder(t *testing.T) {
	in := t.TempDir()
	var a strings.Builder
	for i := range 20000 {
		fmt.Fprintf(&a, "{\"run_id\":\"r1\",\"step\":%d,\"reward\":0.5,\"regime_id\":\"a\"}\n", i)
	}
	a.WriteString("{\"run_id\":\"r1\",\"step\":20000,\"reward\":\"x\",\"regime_id\":\"a\"}\n")
	objects := map[string]string{
		"a.jsonl": a.String(),
		"m.jsonl": "{\"run_id\":\"r2\",\"step\":0,\"reward\":0.5,\"regime_id\":\"a\"}\n{\"run_id\":\"r2\",\"step\":1,\"reward\":0.5,\"regime_id\":\"b\"}\n",
		"z.jsonl": "{\"run_id\":\"r3\",\"step\":0,\"reward\":null,\"regime_id\":\"a\"}\n{\"run_id\":\"r1\",\"step\":1,\"reward\":0.5,\"regime_id\":\"b\"}\n",
	}
	for name, text := range objects {
		if err := os.WriteFile(filepath.Join(in, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want := filepath.Join(in, "a.jsonl") + ": line 20001: reward: "
	for _, reverse := range []bool{false, true} {
		spec, err := ParseScore(context.Background(), []string{in, "--max-labels", "1", "--out", filepath.Join(t.TempDir(), "beam")}, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		// The runner's text of the failed step, then the step's error.
		_, err = Run(context.Background(), spec, Options{Reverse: reverse})
		if err == nil || !strings.Contains(err.Error(), "\n"+want) || strings.Contains(err.Error(), "m.jsonl") || strings.Contains(err.Error(), "z.jsonl") {
			t.Errorf("objects in reverse %v: %v; want the failed step's error to start %q", reverse, err, want)
		}
	}
	var stdout, stderr bytes.Buffer
	code := Main(context.Background(), []string{"score", in, "--max-labels", "1", "--out", filepath.Join(t.TempDir(), "out")}, &stdout, &stderr)
	if code != exitData || !strings.HasPrefix(stderr.String(), "crlbatch-beam: "+want) || strings.Count(stderr.String(), "\n") != 1 {
		t.Errorf("exit %d, %q; want exit 1 and one line starting %q", code, stderr.String(), "crlbatch-beam: "+want)
	}
}
