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

// TestHiddenObjects: objects under a folder starting with '.' or '_' (a
// Jupyter checkpoint copy, a Spark _temporary attempt) give on Beam
// crlbatch score's files, the report's note naming them included, and its
// warning on stderr.
func TestHiddenObjects(t *testing.T) {
	in := filepath.Join(t.TempDir(), "sweep")
	if err := os.CopyFS(in, os.DirFS("../configs/example-sweep")); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(in, "ppo", "ppo-s0.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"ppo/.ipynb_checkpoints/ppo-s0-checkpoint.jsonl", "_temporary/0/ppo-s0.jsonl"} {
		dst := filepath.Join(in, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		half := data[:bytes.IndexByte(data[len(data)/2:], '\n')+len(data)/2+1] // whole lines
		if err := os.WriteFile(dst, half, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	const note = "2 objects read lie under a folder or name starting with '.' or '_' (_temporary/0/ppo-s0.jsonl, ppo/.ipynb_checkpoints/ppo-s0-checkpoint.jsonl)"
	spec, want := local(t, []string{in})
	if md, err := os.ReadFile(filepath.Join(want, "report.md")); err != nil || !strings.Contains(strings.ReplaceAll(string(md), `\_`, "_"), note) {
		t.Fatalf("the local report lacks the note (%v)", err)
	}
	got, _ := onBeam(t, spec, Options{})
	same(t, want, got)
	var stdout, stderr bytes.Buffer
	if code := Main(context.Background(), []string{"score", in, "--out", filepath.Join(t.TempDir(), "out")}, &stdout, &stderr); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if !strings.Contains(stderr.String(), "level=WARN msg=\""+note) {
		t.Errorf("stderr does not warn of them:\n%s", stderr.String())
	}
}
