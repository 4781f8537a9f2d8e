package crlbeam

import (
	"bytes"
	"context"
	"os"
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

// TestUncarriedComponent: a --solve-component and an --episode-end no row
// carries give on Beam crlbatch score's files (the report's note
// included) and its warning on stderr; split runs included.
func TestUncarriedComponent(t *testing.T) {
	flags := []string{"--solve-component", "progres", "--episode-end", "goal"}
	for _, in := range []string{"../configs/example-sweep", splitSweep(t)} {
		spec, want := local(t, append([]string{in}, flags...))
		if md, err := os.ReadFile(filepath.Join(want, "report.md")); err != nil || !strings.Contains(string(md), `component "progres" (--solve-component) is carried by no row of any scored run`) {
			t.Fatalf("the local report lacks the note (%v)", err)
		}
		got, _ := onBeam(t, spec, Options{})
		same(t, want, got)
	}
	var stdout, stderr bytes.Buffer
	args := append([]string{"score", "../configs/example-sweep", "--out", filepath.Join(t.TempDir(), "out")}, flags...)
	if code := Main(context.Background(), args, &stdout, &stderr); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	for _, c := range []string{"progres", "goal"} {
		if !strings.Contains(stderr.String(), `level=WARN msg="component \"`+c+`\" (`) {
			t.Errorf("stderr does not warn of %s:\n%s", c, stderr.String())
		}
	}
}
