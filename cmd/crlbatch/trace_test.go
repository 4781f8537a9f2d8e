package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTraceFlag: the hidden --trace FILE writes a Go execution trace of
// the job (the header go tool trace reads), and a file it cannot create is
// a usage error that names the flag.
//
// Not parallel (see TestMain): runtime/trace is process-wide: a second job
// with --trace would fail to start its trace, and the trace would hold other
// jobs.
func TestTraceFlag(t *testing.T) {
	in := workedExample(t)
	dir := t.TempDir()
	tr := filepath.Join(dir, "job.trace")
	code, _, errs := crl(t, "score", in, "--out", filepath.Join(dir, "out"), "--quiet", "--trace", tr)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	data, err := os.ReadFile(tr)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(data, []byte("go 1.")) || !bytes.Contains(data[:16], []byte(" trace")) {
		t.Errorf("--trace wrote %d bytes starting %q, not a Go execution trace", len(data), data[:min(len(data), 16)])
	}
	code, _, errs = crl(t, "score", in, "--out", filepath.Join(dir, "out2"), "--quiet", "--trace", filepath.Join(dir, "no", "such", "dir", "t"))
	if code != 2 || !strings.Contains(errs, "--trace") {
		t.Errorf("--trace into a missing folder: exit %d, %q; want 2 naming --trace", code, errs)
	}
}
