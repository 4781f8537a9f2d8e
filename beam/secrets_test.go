//go:build !race

package crlbeam

// Failed pipelines among the cases: without the race detector, as
// failed_test.go says.

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCommandNoSecret (round 27, breakit5): what crlbatch-beam prints
// (stdout's summary line, stderr's error, at --log-level debug) holds no
// secret of OUTPUT's URL. Before, the summary line printed OUTPUT as
// given: "results under file:///…?…&secret_key_path=/…/Hunter2Key77".
func TestCommandNoSecret(t *testing.T) {
	dir := t.TempDir()
	key := filepath.Join(dir, "Hunter2Key77")
	if err := os.WriteFile(key, []byte("k"), 0o600); err != nil {
		t.Fatal(err)
	}
	out := "file://" + filepath.ToSlash(filepath.Join(dir, "out")) + "?base_url=http://127.0.0.1/&secret_key_path=" + filepath.ToSlash(key)
	for _, c := range []struct {
		name string
		args []string
		code int
	}{
		{"a result published", nil, exitOK},
		{"a result already there", nil, exitUsage},
		{"a usage error on a worker", []string{"--group-by", "nosuch", "--overwrite"}, exitUsage},
	} {
		t.Run(c.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			args := append([]string{"score", "../configs/examples/safecrl", "--protocol", "safecrl", "--out", out, "--log-level", "debug"}, c.args...)
			code := Main(context.Background(), args, &stdout, &stderr)
			if code != c.code {
				t.Errorf("exit %d, want %d: %s", code, c.code, stderr.String())
			}
			for what, text := range map[string]string{"stdout": stdout.String(), "stderr": stderr.String()} {
				if strings.Contains(text, "Hunter2") {
					t.Errorf("%s holds the secret: %s", what, text)
				}
			}
		})
	}
}
