package crlbeam

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// TestCommandWarns: crlbatch-beam says on stderr what crlbatch says there
// (branch breakit3): its engines had no logger, so every warning of the
// job was dropped: the bad rows skipped under --max-bad-rows, a previous
// result that could not be read, a result that will not be the newest, a
// failure to tidy. Skipped rows are in manifest.json and the report, but a
// nightly log said nothing of them.
func TestCommandWarns(t *testing.T) {
	in, _ := badSweep(t, 2)
	var stdout, stderr bytes.Buffer
	code := Main(context.Background(), []string{"score", in, "--protocol", "safecrl", "--max-bad-rows", "2", "--out", filepath.Join(t.TempDir(), "out")}, &stdout, &stderr)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if !strings.Contains(stderr.String(), `level=WARN msg="skipped bad rows" rows=2 max_bad_rows=2`) {
		t.Errorf("stderr does not warn of the skipped rows:\n%s", stderr.String())
	}
}
