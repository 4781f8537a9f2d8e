package crlbeam

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// TestCommandLogLevel: --log-level takes crlbatch's values with crlbatch's
// meaning (warn by default: no info line; info adds the engine's, here
// --overwrite's; anything else a usage error, exit 2, crlbatch's message);
// a cancelled job exits 130 as crlbatch's does.
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
		{"cancelled", cancelled, nil, exitInterrupt, "context canceled", ""},
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
