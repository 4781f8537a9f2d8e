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

// TestNotebookTopLevelHelpGivesEveryExitStatus: `crlbatch --help` is the
// first thing a newcomer reads; it must give every exit status the README
// lists (it stopped at 143: 70, 129 and 131 were missing) and the inputs
// it reads (Parquet traces and the four protocols, not JSON Lines and
// skyfall alone).
func TestNotebookTopLevelHelpGivesEveryExitStatus(t *testing.T) {
	t.Parallel()
	code, help, stderr := crl(t, "--help")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	flat := strings.Join(strings.Fields(help), " ")
	for _, want := range []string{"0 done", "1 bad input data", "2 usage error", "3 storage error", "70 internal error",
		"129 hung up", "130 interrupted", "131 quit", "143 terminated", "Parquet", "safecrl", "contilab", "skillshift"} {
		if !strings.Contains(flat, want) {
			t.Errorf("crlbatch --help lacks %q:\n%s", want, help)
		}
	}
}

// TestNotebookBoundNamesItsArgument: `crlbatch bound nonexist` has no
// --spec flag; its error must name the SPEC argument the user typed.
func TestNotebookBoundNamesItsArgument(t *testing.T) {
	t.Parallel()
	code, _, stderr := crl(t, "bound", "nonexist")
	if code != 2 || strings.Contains(stderr, "--spec") || !strings.Contains(stderr, `"nonexist"`) || !strings.Contains(stderr, "bundled: experiment, paper") {
		t.Errorf("bound nonexist: exit %d, %q; want 2 naming SPEC \"nonexist\" and the bundled specs, not --spec", code, stderr)
	}
	// score --spec keeps naming its flag.
	code, _, stderr = crl(t, "score", "../../configs/example-sweep", "--out", filepath.Join(t.TempDir(), "o"), "--spec", "nonexist")
	if code != 2 || !strings.Contains(stderr, "--spec nonexist") {
		t.Errorf("score --spec nonexist: exit %d, %q; want 2 naming --spec", code, stderr)
	}
}

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

// TestNotebookDiffShowsASmallChange: a mean that changed by less than the
// Markdown's four decimals printed Δ 0.0000 and two equal means, a row
// that says nothing changed; Δ prints in scientific notation instead. Here
// removing sac moves the pooled by_configuration ceiling, and so ewc's and
// ppo's performance_gap, by about 6e-6.
func TestNotebookDiffShowsASmallChange(t *testing.T) {
	t.Parallel()
	in := notebookSweep(t)
	old, new := filepath.Join(t.TempDir(), "old"), filepath.Join(t.TempDir(), "new")
	flags := []string{"--quiet", "--spec", "experiment", "--bootstrap-resamples", "200"}
	if code, _, stderr := crl(t, append([]string{"score", in, "--out", old}, flags...)...); code != 0 {
		t.Fatalf("score old: exit %d: %s", code, stderr)
	}
	if code, _, stderr := crl(t, append([]string{"score", in, "--out", new, "--where", "algorithm_id=ppo", "--where", "algorithm_id=ewc"}, flags...)...); code != 0 {
		t.Fatalf("score new: exit %d: %s", code, stderr)
	}
	code, js, stderr := crl(t, "diff", old, new, "--format", "json")
	if code != 0 {
		t.Fatalf("diff: exit %d: %s", code, stderr)
	}
	var d struct {
		Metrics []struct {
			Family, Metric string
			DeltaMean      *float64 `json:"delta_mean"`
		} `json:"metrics"`
	}
	if err := json.Unmarshal([]byte(js), &d); err != nil {
		t.Fatal(err)
	}
	small := 0
	for _, m := range d.Metrics {
		if m.Family != "sac" && m.DeltaMean != nil && *m.DeltaMean != 0 && *m.DeltaMean < 5e-5 && *m.DeltaMean > -5e-5 {
			small++
		}
	}
	if small == 0 {
		t.Fatalf("no metric changed by less than 5e-5: the case does not test what it says\n%s", js)
	}
	_, md, _ := crl(t, "diff", old, new)
	for _, line := range strings.Split(md, "\n") {
		if !strings.HasPrefix(line, "| `ewc`") && !strings.HasPrefix(line, "| `ppo`") {
			continue
		}
		cells := strings.Split(line, "|")
		// | family | metric | better | n | old | new | Δ mean | overlap | old IQM | new IQM | Δ IQM | overlap |
		if len(cells) < 13 {
			t.Fatalf("row %q", line)
		}
		if dm := strings.TrimSpace(cells[7]); dm == "0.0000" && strings.TrimSpace(cells[5]) == strings.TrimSpace(cells[6]) {
			t.Errorf("a listed change shows equal means and Δ 0.0000: %s", line)
		}
	}
	if !regexp.MustCompile(`\| \+6\.\d{4}e-06 \|`).MatchString(md) {
		t.Errorf("no Δ of about +6e-06 in scientific notation:\n%s", md)
	}
}
