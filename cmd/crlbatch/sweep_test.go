package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/crlbatch/crlbatch/writers"
)

// TestSynthRoundTrip writes a sweep with synth (mixed compression, runs split
// across objects) and scores it: every run comes back whole, with its family.
func TestSynthRoundTrip(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	in := filepath.Join(dir, "sweep")
	code, stdout, stderr := crl(t, "synth", "--out", in, "--seed", "3", "--seeds", "2", "--steps", "240",
		"--compression", "mixed", "--split-files", "3", "--extras")
	if code != 0 {
		t.Fatalf("synth: exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "wrote 6 runs") {
		t.Errorf("synth said %q", stdout)
	}
	out := filepath.Join(dir, "out")
	if code, _, stderr := crl(t, "score", in, "--out", out, "--quiet", "--spec", "experiment", "--episode-end-from-spec", "--solve-component", "progress"); code != 0 {
		t.Fatalf("score: exit %d: %s", code, stderr)
	}
	sum := readParquet(t, filepath.Join(out, "run_summary.parquet"))
	if len(sum.Rows) != 6 {
		t.Fatalf("%d runs, want 6", len(sum.Rows))
	}
	for _, r := range sum.Rows {
		if r["n_steps"] != int64(240) {
			t.Errorf("run %v has %v rows, want 240 (reassembled from 3 objects)", r["run_key"], r["n_steps"])
		}
		if r["family"] != r["algorithm_id"] || r["seed"] == nil || r["solve_rate"] == nil || r["effective_rank_run"] == nil {
			t.Errorf("run %v: family %v algorithm %v seed %v solve %v rank %v", r["run_key"], r["family"], r["algorithm_id"], r["seed"], r["solve_rate"], r["effective_rank_run"])
		}
	}
	runs := readParquet(t, filepath.Join(out, "runs.parquet"))
	for _, r := range runs.Rows {
		if r["upper_bound"] == nil || r["performance_gap"] == nil || r["settled_reward_policy"] == nil {
			t.Errorf("run %v label %v: with a spec, bound, gap and policy settled reward must be present", r["run_key"], r["regime_id"])
		}
	}
	fam := readParquet(t, filepath.Join(out, "families.parquet"))
	families := map[any]bool{}
	for _, r := range fam.Rows {
		families[r["family"]] = true
		if r["n"] == int64(2) && r["metric"] == "per_configuration_reward" && (r["std"] == nil || r["ci_low"] == nil) {
			t.Errorf("family %v: two seeds must give a std and a CI", r["family"])
		}
	}
	if len(families) != 3 {
		t.Errorf("families %v, want ppo, sac, ewc", families)
	}
}

// TestConcurrencyIsInvisible: --concurrency 1 and 8 give byte-identical
// result files, and manifests equal but for their timestamps.
func TestConcurrencyIsInvisible(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	in := filepath.Join(dir, "sweep")
	if code, _, stderr := crl(t, "synth", "--out", in, "--seed", "11", "--seeds", "4", "--steps", "300",
		"--compression", "mixed", "--split-files", "2", "--family", "ppo", "--family", "sac", "--family", "dqn"); code != 0 {
		t.Fatal(stderr)
	}
	outs := map[string]string{}
	for _, c := range []string{"1", "8"} {
		out := filepath.Join(dir, "out"+c)
		if code, _, stderr := crl(t, "score", in, "--out", out, "--quiet", "--concurrency", c, "--bootstrap-resamples", "2000"); code != 0 {
			t.Fatal(stderr)
		}
		outs[c] = out
	}
	for _, name := range []string{"runs.parquet", "intervals.parquet", "run_summary.parquet", "families.parquet", "report.md"} {
		a, _ := os.ReadFile(filepath.Join(outs["1"], name))
		b, _ := os.ReadFile(filepath.Join(outs["8"], name))
		if len(a) == 0 || !bytes.Equal(a, b) {
			t.Errorf("%s differs between --concurrency 1 and 8", name)
		}
	}
	strip := func(path string) map[string]any {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(data, &m); err != nil {
			t.Fatal(err)
		}
		delete(m, "started_at")
		delete(m, "finished_at")
		delete(m, "attempt_id")
		return m
	}
	ma, mb := strip(filepath.Join(outs["1"], "manifest.json")), strip(filepath.Join(outs["8"], "manifest.json"))
	ja, _ := json.Marshal(ma)
	jb, _ := json.Marshal(mb)
	if !bytes.Equal(ja, jb) {
		t.Errorf("manifests differ beyond timestamps:\n%s\n%s", ja, jb)
	}
}

// TestBundledExample scores the committed example sweep with the example
// nightly job file, as the README's first command does, so that neither can
// rot.
//
// Not parallel (see TestMain): it changes the working folder (os.Chdir),
// against which every other test resolves ../../configs.
func TestBundledExample(t *testing.T) {
	out := filepath.Join(t.TempDir(), "nightly")
	code, stdout, stderr := crl(t, "score", "--config", "../../configs/nightly.yaml", "--input-override-for-test")
	if code != exitUsage {
		t.Fatalf("an unknown flag must be a usage error: %d %s %s", code, stdout, stderr)
	}
	wd, _ := os.Getwd()
	if err := os.Chdir("../.."); err != nil {
		t.Fatal(err)
	}
	defer os.Chdir(wd)
	code, stdout, stderr = crl(t, "score", "--config", "configs/nightly.yaml", "--out", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "scored 9 runs in 3 families from 9 objects") {
		t.Errorf("stdout: %s", stdout)
	}
	latest, err := os.ReadFile(filepath.Join(out, "LATEST"))
	if err != nil {
		t.Fatalf("the nightly job file publishes with --history: %v", err)
	}
	rb := readParquet(t, filepath.Join(out, strings.TrimSpace(string(latest)), "families.parquet"))
	var params map[string]any
	json.Unmarshal([]byte(rb.Metadata[writers.KeyParams]), &params)
	bound, _ := params["bound"].(map[string]any)
	if bound == nil || bound["derivation"] != "analytic" || params["baseline"] != "ppo" {
		t.Errorf("params %v", params)
	}
}

// TestSpillIsInvisible: with a memory limit far below the sweep, decoded
// rows spill to disk and runs are scored one at a time (with a ceiling
// derived from every run first); the results are byte-identical and the
// spill folder is empty afterwards.
//
// Not parallel (see TestMain): --memory-limit sets the runtime's soft memory
// limit for the process and restores the previous one at the end; two such
// jobs overlapping could leave the wrong one behind.
func TestSpillIsInvisible(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "sweep")
	if code, _, stderr := crl(t, "synth", "--out", in, "--seed", "5", "--seeds", "3", "--steps", "400", "--compression", "mixed", "--split-files", "2"); code != 0 {
		t.Fatal(stderr)
	}
	spill := filepath.Join(dir, "spill")
	if err := os.MkdirAll(spill, 0o755); err != nil {
		t.Fatal(err)
	}
	common := []string{"--quiet", "--spec", "experiment", "--episode-end-from-spec", "--solve-component", "progress", "--bootstrap-resamples", "500"}
	var outs []string
	for _, extra := range [][]string{nil, {"--memory-limit", "1KiB", "--spill-dir", spill, "--log-level", "info"}} {
		out := filepath.Join(dir, fmt.Sprintf("out%d", len(outs)))
		args := append(append([]string{"score", in, "--out", out}, common...), extra...)
		code, _, stderr := crl(t, args...)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		if extra != nil && !strings.Contains(stderr, "spilled") {
			t.Errorf("the limited run did not spill: %s", stderr)
		}
		outs = append(outs, out)
	}
	for _, name := range []string{"runs.parquet", "intervals.parquet", "run_summary.parquet", "families.parquet", "report.md"} {
		a, _ := os.ReadFile(filepath.Join(outs[0], name))
		b, _ := os.ReadFile(filepath.Join(outs[1], name))
		if len(a) == 0 || !bytes.Equal(a, b) {
			t.Errorf("%s differs when spilling", name)
		}
	}
	if left, _ := os.ReadDir(spill); len(left) != 0 {
		t.Errorf("spill files left: %v", left)
	}
	if code, _, _ := crl(t, "score", in, "--out", filepath.Join(dir, "x"), "--memory-limit", "lots"); code != exitUsage {
		t.Errorf("bad --memory-limit: exit %d", code)
	}
}
