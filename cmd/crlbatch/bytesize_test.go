package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// Issue 13, item 11: every byte-size flag takes the sizes --memory-limit
// takes (1MiB, 256MB, 1048576), on the command line and in a job file, and
// a bad value is a usage error naming the flag and what it wants.
func TestByteSizeFlags(t *testing.T) {
	t.Parallel()
	in := workedExample(t)
	for _, args := range [][]string{
		{"--max-line-bytes", "1MiB", "--max-object-bytes", "256MB"},
		{"--max-line-bytes=1048576", "--max-object-bytes", "1.5GiB"},
		{"--max-line-bytes", "4 KiB", "--max-object-bytes", "64G"},
	} {
		out := filepath.Join(t.TempDir(), "out")
		if code, _, stderr := crl(t, append([]string{"score", in, "--out", out, "--quiet"}, args...)...); code != 0 {
			t.Errorf("%v: exit %d: %s", args, code, stderr)
		}
		if code, _, stderr := crl(t, append([]string{"validate", in, "--quiet"}, args...)...); code != 0 {
			t.Errorf("validate %v: exit %d: %s", args, code, stderr)
		}
	}
	// The limit is a size in bytes: the worked example's lines are under
	// 100 bytes.
	if code, _, stderr := crl(t, "score", in, "--out", filepath.Join(t.TempDir(), "out"), "--quiet", "--max-line-bytes", "40B"); code != 1 || !strings.Contains(stderr, "--max-line-bytes") {
		t.Errorf("--max-line-bytes 40B: exit %d, want 1 naming the flag: %s", code, stderr)
	}
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"--max-line-bytes", "lots"}, []string{`--max-line-bytes "lots": want a size such as`, "1MiB"}},
		{[]string{"--max-object-bytes", "-1GB"}, []string{`--max-object-bytes "-1GB": want a size such as`}},
		{[]string{"--max-line-bytes", "0"}, []string{`--max-line-bytes "0"`, "at least 1 byte"}},
		{[]string{"--max-object-bytes", "0.2"}, []string{`--max-object-bytes "0.2"`, "at least 1 byte"}},
	} {
		code, _, stderr := crl(t, append([]string{"score", in, "--out", filepath.Join(t.TempDir(), "out"), "--quiet"}, tc.args...)...)
		if code != 2 {
			t.Errorf("%v: exit %d, want 2: %s", tc.args, code, stderr)
		}
		for _, w := range tc.want {
			if !strings.Contains(stderr, w) {
				t.Errorf("%v: stderr lacks %q: %s", tc.args, w, stderr)
			}
		}
	}
}

func TestByteSizeFlagsInJobFile(t *testing.T) {
	t.Parallel()
	in := workedExample(t)
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yaml")
	writeFile(t, good, "max-line-bytes: 64KiB\nmax-object-bytes: 2GB\n")
	if code, _, stderr := crl(t, "score", in, "--out", filepath.Join(dir, "out"), "--quiet", "--config", good); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	small := filepath.Join(dir, "small.yaml")
	writeFile(t, small, "max-line-bytes: 40B\n")
	if code, _, stderr := crl(t, "score", in, "--out", filepath.Join(dir, "out2"), "--quiet", "--config", small); code != 1 || !strings.Contains(stderr, "--max-line-bytes") {
		t.Fatalf("max-line-bytes: 40B: exit %d, want 1 naming the flag: %s", code, stderr)
	}
	bad := filepath.Join(dir, "bad.yaml")
	writeFile(t, bad, "max-object-bytes: a lot\n")
	code, _, stderr := crl(t, "score", in, "--out", filepath.Join(dir, "out3"), "--quiet", "--config", bad)
	if code != 2 || !strings.Contains(stderr, `--max-object-bytes "a lot": want a size such as`) {
		t.Fatalf("exit %d, want 2 naming the flag and what it wants: %s", code, stderr)
	}
}

func TestByteSizeFlagsHelp(t *testing.T) {
	t.Parallel()
	for _, cmd := range []string{"score", "validate"} {
		_, stdout, _ := crl(t, cmd, "--help")
		for _, tc := range []struct{ flag, def string }{{"--max-line-bytes", "256MiB"}, {"--max-object-bytes", "64GiB"}, {"--memory-limit", ""}} {
			line := ""
			for _, l := range strings.Split(stdout, "\n") {
				if strings.Contains(l, tc.flag+" ") {
					line = l
					break
				}
			}
			if !strings.Contains(line, "1MiB") || !strings.Contains(line, "256MB") || !strings.Contains(line, "default: "+tc.def) {
				t.Errorf("%s --help: the line of %s does not say it takes sizes such as 1MiB and 256MB, default %s: %q", cmd, tc.flag, tc.def, line)
			}
		}
	}
}
