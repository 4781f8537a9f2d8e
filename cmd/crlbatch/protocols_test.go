package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/crlbatch/crlbatch/writers"
)

func reasonsOf(row map[string]any) map[string]string {
	out := map[string]string{}
	if kv, ok := row["reasons"].([]writers.KV); ok {
		for _, p := range kv {
			out[p.Key] = p.Value
		}
	}
	return out
}

func hasColumns(t *testing.T, name string, rb *writers.ReadBack, cols ...string) {
	t.Helper()
	for _, c := range cols {
		if !slices.Contains(rb.Columns, c) {
			t.Errorf("%s lacks column %q (has %v)", name, c, rb.Columns)
		}
	}
}

func scoreExample(t *testing.T, protocol string, extra ...string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), protocol)
	args := append([]string{"score", "../../configs/examples/" + protocol, "--protocol", protocol, "--out", out, "--quiet", "--bootstrap-resamples", "1000"}, extra...)
	if code, _, stderr := crl(t, args...); code != 0 {
		t.Fatalf("%s: exit %d: %s", protocol, code, stderr)
	}
	return out
}

func TestSafecrlEndToEnd(t *testing.T) {
	t.Parallel()
	out := scoreExample(t, "safecrl")
	runs := readParquet(t, filepath.Join(out, "runs.parquet"))
	hasColumns(t, "runs.parquet", runs, "run_key", "source", "family", "run_id", "seed", "algorithm_id", "policy_id", "run_meta",
		"task", "n_visits", "n_episodes", "final_task_reward", "total_cost", "mean_episode_cost", "forgetting",
		"normalized_forgetting", "success_rate", "forgetting_success", "reasons")
	if len(runs.Rows) != 6*3 {
		t.Fatalf("%d rows, want 18 (6 runs × 3 tasks)", len(runs.Rows))
	}
	for _, r := range runs.Rows {
		switch r["task"] {
		case "pick": // visited once
			if r["forgetting"] != nil || reasonsOf(r)["forgetting"] != "task never revisited" {
				t.Errorf("pick forgetting %v (%v), want null: never revisited", r["forgetting"], reasonsOf(r))
			}
		case "reach", "push":
			if r["forgetting"] == nil || r["n_visits"] != int64(2) {
				t.Errorf("%v: forgetting %v visits %v", r["task"], r["forgetting"], r["n_visits"])
			}
		}
		if r["n_episodes"] == int64(0) || r["final_task_reward"] == nil {
			t.Errorf("row %v", r)
		}
	}
	sum := readParquet(t, filepath.Join(out, "run_summary.parquet"))
	hasColumns(t, "run_summary.parquet", sum, "n_tasks", "n_episodes", "final_task_reward", "forgetting")
	if len(sum.Rows) != 6 || sum.Rows[0]["n_tasks"] != int64(3) {
		t.Errorf("run summary %v", sum.Rows)
	}
	fam := readParquet(t, filepath.Join(out, "families.parquet"))
	if fam.Metadata[writers.KeyProtocol] != "safecrl" || !strings.Contains(fam.Metadata[writers.KeyParams], `"window_episodes":20`) {
		t.Errorf("metadata %v", fam.Metadata)
	}

	// W is a flag; skyfall's flags are refused.
	out2 := scoreExample(t, "safecrl", "--window-episodes", "5")
	fam2 := readParquet(t, filepath.Join(out2, "families.parquet"))
	if !strings.Contains(fam2.Metadata[writers.KeyParams], `"window_episodes":5`) {
		t.Errorf("params %s", fam2.Metadata[writers.KeyParams])
	}
	if code, _, stderr := crl(t, "score", "../../configs/examples/safecrl", "--protocol", "safecrl", "--out", t.TempDir()+"/x", "--anchor", "ceiling"); code != exitUsage || !strings.Contains(stderr, "--anchor") {
		t.Errorf("--anchor with safecrl: exit %d %s", code, stderr)
	}
	if code, _, stderr := crl(t, "score", "../../configs/examples/safecrl", "--protocol", "safecrl", "--out", t.TempDir()+"/x", "--rank-metric", "acc"); code != exitUsage || !strings.Contains(stderr, "contilab") {
		t.Errorf("--rank-metric with safecrl: exit %d %s", code, stderr)
	}
}

func TestContilabEndToEnd(t *testing.T) {
	t.Parallel()
	out := scoreExample(t, "contilab")
	runs := readParquet(t, filepath.Join(out, "runs.parquet"))
	hasColumns(t, "runs.parquet", runs, "run_key", "n_tasks", "scenario", "acc", "aia", "bwt", "fwt", "forgetting",
		"relative_forgetting", "learning_acc", "intransigence", "min_acc", "wc_acc", "stability_gap",
		"windowed_forgetting", "aaa", "lca", "diag_effective_rank", "reasons")
	if len(runs.Rows) != 12 {
		t.Fatalf("%d runs, want 12", len(runs.Rows))
	}
	for _, r := range runs.Rows {
		if r["n_tasks"] != int64(3) || r["scenario"] != "task-il" || r["acc"] == nil || r["fwt"] == nil || r["intransigence"] == nil {
			t.Errorf("run %v: %v", r["run_key"], r)
		}
	}
	m := readParquet(t, filepath.Join(out, "matrix.parquet"))
	if len(m.Rows) != 12*9 {
		t.Errorf("matrix rows %d, want 108", len(m.Rows))
	}
	b := readParquet(t, filepath.Join(out, "benchmarks.parquet"))
	hasColumns(t, "benchmarks.parquet", b, "family", "average_rank", "n_benchmarks", "friedman_statistic", "friedman_p_value", "critical_difference")
	if len(b.Rows) != 3 {
		t.Fatalf("benchmarks rows %d", len(b.Rows))
	}
	// er keeps the most accuracy on both benchmarks: rank 1 on each.
	for _, r := range b.Rows {
		if r["family"] == "er" && r["average_rank"] != 1.0 {
			t.Errorf("er average rank %v", r["average_rank"])
		}
		if r["n_benchmarks"] != int64(2) || r["critical_difference"] == nil {
			t.Errorf("row %v", r)
		}
	}

	// Class-IL makes fwt absent with a reason.
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "in", "r.jsonl"), strings.Join([]string{
		`{"run_id":"r","algorithm_id":"a","scenario":"class-il","kind":"initial","eval_task":0,"acc":0.1}`,
		`{"run_id":"r","algorithm_id":"a","scenario":"class-il","kind":"initial","eval_task":1,"acc":0.1}`,
		`{"run_id":"r","algorithm_id":"a","scenario":"class-il","kind":"matrix","after_task":0,"eval_task":0,"acc":0.9}`,
		`{"run_id":"r","algorithm_id":"a","scenario":"class-il","kind":"matrix","after_task":0,"eval_task":1,"acc":0.2}`,
		`{"run_id":"r","algorithm_id":"a","scenario":"class-il","kind":"matrix","after_task":1,"eval_task":0,"acc":0.5}`,
		`{"run_id":"r","algorithm_id":"a","scenario":"class-il","kind":"matrix","after_task":1,"eval_task":1,"acc":0.8}`,
	}, "\n")+"\n")
	if code, _, stderr := crl(t, "score", filepath.Join(dir, "in"), "--protocol", "contilab", "--out", filepath.Join(dir, "out"), "--quiet"); code != 0 {
		t.Fatal(stderr)
	}
	r := readParquet(t, filepath.Join(dir, "out", "runs.parquet")).Rows[0]
	// acc = (0.5 + 0.8)/2; bwt = 0.5 − 0.9; fwt absent in Class-IL.
	if v, _ := r["acc"].(float64); v != (0.5+0.8)/2 {
		t.Errorf("acc %v", r["acc"])
	}
	if v, _ := r["bwt"].(float64); v != 0.5-0.9 {
		t.Errorf("bwt %v", r["bwt"])
	}
	if r["fwt"] != nil || !strings.Contains(strings.ToLower(reasonsOf(r)["fwt"]), "class-il") {
		t.Errorf("fwt %v reason %q", r["fwt"], reasonsOf(r)["fwt"])
	}
	// An unknown kind names the object and the line.
	writeFile(t, filepath.Join(dir, "bad", "r.jsonl"), `{"run_id":"r","kind":"matrix","after_task":0,"eval_task":0,"acc":0.9}`+"\n"+`{"run_id":"r","kind":"matrx"}`+"\n")
	code, _, stderr := crl(t, "score", filepath.Join(dir, "bad"), "--protocol", "contilab", "--out", filepath.Join(dir, "out2"), "--quiet")
	if code != exitData || !strings.Contains(stderr, "line 2") || !strings.Contains(stderr, "kind") {
		t.Errorf("unknown kind: exit %d %s", code, stderr)
	}
}

func TestSkillshiftEndToEnd(t *testing.T) {
	t.Parallel()
	out := scoreExample(t, "skillshift")
	cells := readParquet(t, filepath.Join(out, "cells.parquet"))
	hasColumns(t, "cells.parquet", cells, "run_key", "site", "condition", "tasks", "successes", "sr", "as", "asc", "sfr", "skill_calls", "sfr_unstable")
	if len(cells.Rows) != 2*18 {
		t.Fatalf("%d cells, want 36", len(cells.Rows))
	}
	tab := readParquet(t, filepath.Join(out, "table.parquet"))
	hasColumns(t, "table.parquet", tab, "run_key", "metric", "scope", "key", "value", "unstable", "invocations", "reason")
	if len(tab.Rows) != 2*4*10 {
		t.Fatalf("%d table rows, want 80 (2 methods × 4 metrics × 10 numbers)", len(tab.Rows))
	}
	for _, r := range tab.Rows {
		if r["run_key"] == "method=ReAct" && (r["metric"] == "ASC" || r["metric"] == "SFR") {
			if r["value"] != nil || r["reason"] == nil {
				t.Errorf("ReAct %v %v: value %v reason %v (no skill calls recorded: null with a reason)", r["metric"], r["key"], r["value"], r["reason"])
			}
		}
		if r["run_key"] == "method=AWM" && r["metric"] == "SR" && r["value"] == nil {
			t.Errorf("AWM SR %v is null", r["key"])
		}
	}
	fam := readParquet(t, filepath.Join(out, "families.parquet"))
	fams := map[any]bool{}
	for _, r := range fam.Rows {
		fams[r["family"]] = true
	}
	if !fams["AWM"] || !fams["ReAct"] || len(fams) != 2 {
		t.Errorf("families %v: skillshift groups by method", fams)
	}
}

func writeFile(t *testing.T, path, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}
