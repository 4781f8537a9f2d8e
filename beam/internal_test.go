//go:build !race

package crlbeam

// Failed pipelines: without the race detector, as failed_test.go says.

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/crlbatch/crlbatch/internal/testhook"
)

// TestCommandInternalError: a panic in a DoFn — in the engine's decode
// (returned by it as an internal error) or in the DoFn's own code, which
// the runner would return as text like any error — exits 70 with
// crlbatch's message, "internal error: … (a bug in crlbatch; please report
// it)" and the stack, and publishes nothing. Before, it exited 1, a data
// error's status.
func TestCommandInternalError(t *testing.T) {
	in := "../configs/examples/safecrl"
	for _, where := range []string{"decode", "beam"} {
		t.Run(where, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			testhook.Panic = where
			defer func() { testhook.Panic = "" }()
			var stdout, stderr bytes.Buffer
			code := Main(context.Background(), []string{"score", in, "--protocol", "safecrl", "--out", out}, &stdout, &stderr)
			want := "crlbatch-beam: internal error: test hook: a panic at " + where + " (a bug in crlbatch; please report it)\n"
			if code != exitInternal || !strings.HasPrefix(stderr.String(), want) {
				t.Errorf("exit %d, stderr %q; want exit 70 and stderr starting %q", code, stderr.String(), want)
			}
			if !strings.Contains(stderr.String(), "goroutine ") {
				t.Errorf("no stack on stderr: %s", stderr.String())
			}
			if left := files(t, out); len(left) != 0 {
				t.Errorf("a failed pipeline left files: %v", left)
			}
		})
	}
}

// TestIsInternal: what tells a bug's failed DoFn from a data error's, in
// the runner's text (Brief).
func TestIsInternal(t *testing.T) {
	for _, c := range []struct {
		msg  string
		want bool
	}{
		{"internal error: boom (a bug in crlbatch; please report it)\ngoroutine 1 [running]:", true},
		{"internal error: boom (a bug in crlbatch; please report it)", true},
		{"panic: runtime error: index out of range [3] with length 3 goroutine 7", true},
		{"/in/a.jsonl: line 3: reward: want a number, got \"internal error: x (a bug in crlbatch; please report it)\"", false},
		{"/in/panic: a.jsonl: line 3: bad", false},
		{"internal error: no closing words", false},
	} {
		if got := isInternal(c.msg); got != c.want {
			t.Errorf("isInternal(%q) = %v, want %v", c.msg, got, c.want)
		}
	}
}
