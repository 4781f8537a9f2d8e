package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The tests of this file try crlbatch as a newcomer and as the notebook that
// loads its results: the help a newcomer reads, the night-to-night diff on
// adversarial pairs, and the README's history query across versions.

// notebookSweep writes a small synthetic sweep (seed 7, two seeds of ppo,
// sac and ewc, 200 steps) and returns its folder.
func notebookSweep(t *testing.T) string {
	t.Helper()
	in := filepath.Join(t.TempDir(), "in")
	if code, _, stderr := crl(t, "synth", "--out", in, "--seed", "7", "--steps", "200", "--seeds", "2"); code != 0 {
		t.Fatalf("synth: exit %d: %s", code, stderr)
	}
	return in
}

// TestNotebookDiffRunMovedBetweenFamilies: a run whose family changed from
// one night to the next (its key the same) is a change diff must name,
// not only the metrics it moved: it said nothing of the run.
func TestNotebookDiffRunMovedBetweenFamilies(t *testing.T) {
	t.Parallel()
	in := notebookSweep(t)
	moved := filepath.Join(t.TempDir(), "moved")
	if err := os.CopyFS(moved, os.DirFS(in)); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(moved, "ewc", "ewc-s1.jsonl")
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(data, []byte(`"algorithm_id":"ewc"`)) {
		t.Fatalf("%s has no algorithm_id ewc", p)
	}
	writeFile(t, p, strings.ReplaceAll(string(data), `"algorithm_id":"ewc"`, `"algorithm_id":"ppo"`))
	old, new := filepath.Join(t.TempDir(), "old"), filepath.Join(t.TempDir(), "new")
	flags := []string{"--quiet", "--bootstrap-resamples", "200", "--identity-fields", "run_id,seed"}
	for _, c := range [][2]string{{in, old}, {moved, new}} {
		if code, _, stderr := crl(t, append([]string{"score", c[0], "--out", c[1]}, flags...)...); code != 0 {
			t.Fatalf("score %s: exit %d: %s", c[0], code, stderr)
		}
	}
	key := "run_id=ewc-s1|seed=1"
	code, js, stderr := crl(t, "diff", old, new, "--format", "json")
	if code != 0 {
		t.Fatalf("diff: exit %d: %s", code, stderr)
	}
	var d struct {
		Moved   []map[string]string `json:"runs_moved"`
		Added   []map[string]string `json:"runs_added"`
		Removed []map[string]string `json:"runs_removed"`
	}
	if err := json.Unmarshal([]byte(js), &d); err != nil {
		t.Fatal(err)
	}
	if len(d.Moved) != 1 || d.Moved[0]["run_key"] != key || d.Moved[0]["old_family"] != "ewc" || d.Moved[0]["new_family"] != "ppo" {
		t.Errorf("runs_moved %v, want %s from ewc to ppo", d.Moved, key)
	}
	if len(d.Added)+len(d.Removed) != 0 {
		t.Errorf("runs added %v, removed %v; want none (the run's key is the same)", d.Added, d.Removed)
	}
	code, md, _ := crl(t, "diff", old, new)
	if code != 0 || !strings.Contains(md, "## Runs moved") || !regexp.MustCompile("\\| `"+regexp.QuoteMeta(strings.ReplaceAll(key, "|", `\|`))+"` +\\| +`ewc` \\| +`ppo` \\|").MatchString(md) {
		t.Errorf("the Markdown does not list the run moved from ewc to ppo:\n%s", md)
	}
	out := filepath.Join(t.TempDir(), "changes.parquet")
	if code, _, stderr := crl(t, "diff", old, new, "--format", "parquet", "--out", out); code != 0 {
		t.Fatalf("diff parquet: exit %d: %s", code, stderr)
	}
	found := 0
	for _, r := range readParquet(t, out).Rows {
		if r["change"] == "run_moved" {
			found++
			if r["run_key"] != key || r["family"] != "ppo" || r["old_value"] != "ewc" || r["new_value"] != "ppo" {
				t.Errorf("run_moved row %v, want %s, family ppo, old_value ewc, new_value ppo", r, key)
			}
		}
	}
	if found != 1 {
		t.Errorf("%d run_moved rows, want 1", found)
	}
	// And back: the run moves from ppo to ewc.
	if code, js, _ := crl(t, "diff", new, old, "--format", "json"); code != 0 || !strings.Contains(js, `"old_family": "ppo"`) {
		t.Errorf("diff new old: exit %d, %s", code, js)
	}
}
