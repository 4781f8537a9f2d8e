//go:build !race

package crlbeam

// Failed pipelines: without the race detector, as failed_test.go says.

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeOnly is a file any process, root too, can list but not open for
// reading (sysfs refuses a read of a write-only attribute).
const writeOnly = "/sys/bus/pci/rescan"

// TestCommandExitStatus (round 27, breakit5): an error raised inside a
// DoFn (a usage error only the runs can show, a store refusing an object)
// exits with crlbatch score's status and message, not 1: the runner hands
// the error back as text only. Before, every such error exited 1.
func TestCommandExitStatus(t *testing.T) {
	cases := []struct {
		name  string
		args  []string
		input func(t *testing.T) string
		code  int
		want  string // after INPUT's path
	}{
		{"group-by a field no run has", []string{"--group-by", "nosuch"}, examplesCopy, exitUsage,
			`--group-by nosuch: no run has the field "nosuch"; the runs have `},
		{"baseline no family has", []string{"--baseline", "nosuch"}, examplesCopy, exitUsage,
			"--baseline nosuch: no family of that name (grouped by algorithm_id); the families are "},
		{"an object the store refuses", nil, func(t *testing.T) string {
			if f, err := os.Open(writeOnly); err == nil || !os.IsPermission(err) {
				if f != nil {
					f.Close()
				}
				t.Skipf("%s is readable or absent here: %v", writeOnly, err)
			}
			in := examplesCopy(t)
			if err := os.Symlink(writeOnly, filepath.Join(in, "zz.jsonl")); err != nil {
				t.Fatal(err)
			}
			return in
		}, exitStorage, "read IN/zz.jsonl: "},
		{"a field's error points to the trace format", []string{"--max-labels", "1"}, examplesCopy, exitData,
			"IN/ewc/ewc-s0.jsonl: line "},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := c.input(t)
			out := filepath.Join(t.TempDir(), "out")
			var stdout, stderr bytes.Buffer
			code := Main(context.Background(), append([]string{"score", in, "--out", out}, c.args...), &stdout, &stderr)
			got := strings.ReplaceAll(stderr.String(), in, "IN")
			if code != c.code || !strings.HasPrefix(got, "crlbatch-beam: "+c.want) || strings.Count(got, "\n") != 1 {
				t.Errorf("exit %d, stderr %q; want exit %d and one line starting %q", code, got, c.code, "crlbatch-beam: "+c.want)
			}
			if c.name == "a field's error points to the trace format" && !strings.HasSuffix(got, " (see docs/trace-format.md)\n") {
				t.Errorf("stderr %q does not end as crlbatch's, with the trace format's page", got)
			}
			if left := files(t, out); len(left) != 0 {
				t.Errorf("a failed pipeline left files: %v", left)
			}
		})
	}
}

// examplesCopy is a copy of the bundled example sweep.
func examplesCopy(t *testing.T) string {
	t.Helper()
	in := filepath.Join(t.TempDir(), "in")
	if err := os.CopyFS(in, os.DirFS("../configs/example-sweep")); err != nil {
		t.Fatal(err)
	}
	return in
}
