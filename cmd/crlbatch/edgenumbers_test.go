package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/crlbatch/crlbatch/writers"
)

// The cases of protocol/family/testdata/edge_cases.json were computed by
// protocol/family/testdata/reference.py, written from PROTOCOLS.md alone
// (`make check-references` reruns it): degenerate families (one seed, a
// baseline of one seed, all seeds equal, a family or the baseline emptied by
// --min-steps, a repeated or a missing seed), degenerate runs (one step, one
// row per label, negative, flat, -0, huge, tiny and overflowing rewards,
// steps out of order, γ 0 and 1, recorded γ 0 and 1, a ceiling equal to
// every reward, ceilings 0 and −0.5, origins and aliases, episode ends),
// the metric knobs at their edges (post-shift window, tail fraction 1 and
// 0.28, zero-shot windows of 1 and 100, α = 1 with a zero band) and the
// statistics at theirs (IQM with 5, 6, 7 seeds and ties, Wilcoxon with
// ties, zero differences and 51 pairs, sign-flip with zero differences).
// Each case goes through `score`; every value of runs.parquet,
// run_summary.parquet and families.parquet the reference computes must agree
// to 1e-9 relative (1e-12 absolute), every null must be null and carry a
// reason, and the bootstrap columns must be null below two seeds and
// collapse onto the value when every seed value is equal.

type edgeCase struct {
	Name     string                      `json:"name"`
	Objects  map[string][]map[string]any `json:"objects"`
	Flags    []string                    `json:"flags"`
	Expected struct {
		Labels   []map[string]any `json:"labels"`
		Runs     []map[string]any `json:"runs"`
		Families []map[string]any `json:"families"`
	} `json:"expected"`
}

func loadEdgeCases(t *testing.T) []edgeCase { return readEdgeCases[edgeCase](t, "family", 15) }

// readEdgeCases reads the cases of protocol/<pkg>/testdata/edge_cases.json,
// failing the test when there are fewer than atLeast.
func readEdgeCases[T any](t *testing.T, pkg string, atLeast int) []T {
	t.Helper()
	return readCasesFile[T](t, filepath.Join("..", "..", "protocol", pkg, "testdata", "edge_cases.json"), atLeast)
}

// readCasesFile reads the "cases" of a reference's JSON file, failing the
// test when there are fewer than atLeast.
func readCasesFile[T any](t *testing.T, path string, atLeast int) []T {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		Cases []T `json:"cases"`
	}
	if err := json.Unmarshal(data, &file); err != nil {
		t.Fatal(err)
	}
	if len(file.Cases) < atLeast {
		t.Fatalf("%s: only %d cases", path, len(file.Cases))
	}
	return file.Cases
}

// scoreObjects writes each object of objects (key → bytes) under a fresh
// input folder, runs `score IN --out OUT --quiet` with flags and returns
// OUT; an exit other than 0 fails the test.
func scoreObjects(t *testing.T, objects map[string][]byte, flags ...string) string {
	t.Helper()
	in := filepath.Join(t.TempDir(), "in")
	if err := os.MkdirAll(in, 0o755); err != nil {
		t.Fatal(err)
	}
	for key, body := range objects {
		if err := os.WriteFile(filepath.Join(in, key), body, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(t.TempDir(), "out")
	if code, _, stderr := crl(t, append([]string{"score", in, "--out", out, "--quiet"}, flags...)...); code != 0 {
		t.Fatalf("score: exit %d: %.300s", code, stderr)
	}
	return out
}

// jsonlRows is rows as JSONL, one JSON object a line.
func jsonlRows(t *testing.T, rows []map[string]any) []byte {
	t.Helper()
	var b bytes.Buffer
	for _, r := range rows {
		line, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// writeEdgeInput writes a case's objects as JSONL under a new folder.
func writeEdgeInput(t *testing.T, c *edgeCase) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "in")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for key, rows := range c.Objects {
		if err := os.WriteFile(filepath.Join(dir, key), jsonlRows(t, rows), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestEdgeNumbersAgainstReference(t *testing.T) {
	t.Parallel()
	for _, c := range loadEdgeCases(t) {
		c := c
		t.Run(c.Name, func(t *testing.T) {
			t.Parallel()
			in := writeEdgeInput(t, &c)
			out := filepath.Join(t.TempDir(), "out")
			args := append([]string{"score", in, "--out", out, "--quiet"}, c.Flags...)
			if code, _, stderr := crl(t, args...); code != 0 {
				t.Fatalf("score %v: exit %d: %s", c.Flags, code, stderr)
			}
			labels := indexRows(t, readParquet(t, filepath.Join(out, "runs.parquet")), "run_id", "regime_id")
			runs := indexRows(t, readParquet(t, filepath.Join(out, "run_summary.parquet")), "run_id")
			fams := indexRows(t, readParquet(t, filepath.Join(out, "families.parquet")), "family", "metric")
			for _, want := range c.Expected.Labels {
				compareEdgeRow(t, "runs.parquet", labels, want, "run_id", "regime_id")
			}
			for _, want := range c.Expected.Runs {
				compareEdgeRow(t, "run_summary.parquet", runs, want, "run_id")
			}
			compareAll(t, "families.parquet", fams, c.Expected.Families, compareFamilyRow)
		})
	}
}

func indexRows(t *testing.T, rb *writers.ReadBack, keys ...string) map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]any{}
	for _, r := range rb.Rows {
		k := edgeKey(r, keys)
		if _, dup := out[k]; dup {
			t.Fatalf("two rows %s", k)
		}
		out[k] = r
	}
	return out
}

func edgeKey(r map[string]any, keys []string) string {
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprint(r[k])
	}
	return strings.Join(parts, "/")
}

func edgeClose(want, got float64) bool {
	if math.IsInf(got, 0) || math.IsNaN(got) {
		return false // 1e-9·Inf would let an infinity agree with any number
	}
	return math.Abs(want-got) <= math.Max(1e-12, 1e-9*math.Max(math.Abs(want), math.Abs(got)))
}

// compareAll compares every row of the reference (wants) with compare and
// fails the test when TABLE (rows) has another number of rows.
func compareAll(t *testing.T, table string, rows map[string]map[string]any, wants []map[string]any, compare func(t *testing.T, rows map[string]map[string]any, want map[string]any)) {
	t.Helper()
	for _, want := range wants {
		compare(t, rows, want)
	}
	if len(rows) != len(wants) {
		t.Errorf("%s has %d rows, the reference %d", table, len(rows), len(wants))
	}
}

// edgeRows is compareEdgeRow for TABLE's rows keyed by keys, for compareAll.
func edgeRows(table string, keys ...string) func(t *testing.T, rows map[string]map[string]any, want map[string]any) {
	return func(t *testing.T, rows map[string]map[string]any, want map[string]any) {
		t.Helper()
		compareEdgeRow(t, table, rows, want, keys...)
	}
}

// compareEdgeRow compares every column the reference computed (the keys of
// want, but for the key columns and the reference's own ci_* flags) and
// returns the row it compared.
func compareEdgeRow(t *testing.T, table string, rows map[string]map[string]any, want map[string]any, keys ...string) map[string]any {
	t.Helper()
	k := edgeKey(want, keys)
	got, ok := rows[k]
	if !ok {
		t.Errorf("%s has no row %s", table, k)
		return nil
	}
	reasons := map[string]bool{}
	if kvs, ok := got["reasons"].([]writers.KV); ok {
		for _, kv := range kvs {
			reasons[kv.Key] = true
		}
	}
	cols := make([]string, 0, len(want))
	for col := range want {
		cols = append(cols, col)
	}
	sort.Strings(cols)
	for _, col := range cols {
		w := want[col]
		if col == "ci_null" || col == "ci_collapses" || (col == "min_p" && w == nil && got["test"] == "wilcoxon") {
			continue
		}
		g, present := got[col]
		if !present {
			t.Errorf("%s %s: no column %s", table, k, col)
			continue
		}
		switch w := w.(type) {
		case nil:
			if g != nil {
				t.Errorf("%s %s %s = %v, want null", table, k, col, g)
			} else if !reasons[col] && col != "test" { // test names the test; p_value carries the reason
				t.Errorf("%s %s %s is null without a reason", table, k, col)
			}
		case float64:
			var gf float64
			switch g := g.(type) {
			case float64:
				gf = g
			case int64:
				gf = float64(g)
			default:
				t.Errorf("%s %s %s = %v (%T), want %v", table, k, col, g, g, w)
				continue
			}
			if !edgeClose(w, gf) {
				t.Errorf("%s %s %s = %v, want %v", table, k, col, gf, w)
			}
		default:
			if fmt.Sprint(g) != fmt.Sprint(w) {
				t.Errorf("%s %s %s = %v, want %v", table, k, col, g, w)
			}
		}
	}
	return got
}

// TestEdgeNumbersDeterministic: the same case scored at --concurrency 1, 2
// and 8, and with a cold and then a warm --cache, writes the same Parquet
// files byte for byte (PROTOCOLS, "Canonical order": bootstrap draws follow
// the canonical order, never the workers').
func TestEdgeNumbersDeterministic(t *testing.T) {
	t.Parallel()
	cases := loadEdgeCases(t)
	for _, name := range []string{"wilcoxon_ties_zeros", "iqm_ties_7_seeds", "min_steps_empties_baseline"} {
		var c *edgeCase
		for i := range cases {
			if cases[i].Name == name {
				c = &cases[i]
			}
		}
		if c == nil {
			t.Fatalf("no case %s", name)
		}
		in := writeEdgeInput(t, c)
		cache := filepath.Join(t.TempDir(), "cache")
		variants := [][]string{
			{"--concurrency", "1"}, {"--concurrency", "2"}, {"--concurrency", "8"},
			{"--concurrency", "2", "--cache", cache}, {"--concurrency", "8", "--cache", cache},
		}
		var first map[string][]byte
		for i, v := range variants {
			out := filepath.Join(t.TempDir(), "out")
			args := append(append([]string{"score", in, "--out", out, "--quiet", "--figures=false"}, c.Flags...), v...)
			if code, _, stderr := crl(t, args...); code != 0 {
				t.Fatalf("%s %v: exit %d: %s", name, v, code, stderr)
			}
			files := map[string][]byte{}
			for _, f := range []string{"runs.parquet", "intervals.parquet", "run_summary.parquet", "families.parquet", "curves.parquet"} {
				b, err := os.ReadFile(filepath.Join(out, f))
				if err != nil {
					t.Fatal(err)
				}
				files[f] = b
			}
			if i == 0 {
				first = files
				continue
			}
			for f, b := range files {
				if !bytes.Equal(b, first[f]) {
					t.Errorf("%s: %s with %v differs from --concurrency 1", name, f, v)
				}
			}
		}
	}
}

// TestRecordProtocolEdgesByHand: the record protocols at their edges, each
// value computed by hand from PROTOCOLS 3–5 (the arithmetic is in the
// comments), through `score`. nil is a null, which must carry a reason.
func TestRecordProtocolEdgesByHand(t *testing.T) {
	t.Parallel()
	type want struct {
		table string
		keys  []string
		rows  map[string]map[string]any
	}
	safe := func(run, seed, algo, task string, ret float64, extra string) string {
		return fmt.Sprintf(`{"run_id":%q,"seed":%s,"algorithm_id":%q,"task":%q,"return":%v%s}`, run, seed, algo, task, ret, extra)
	}
	var safeRows []string
	// Run A, W = 2. t0: visit 1 returns 1, 2, 3 (cost 1 each, success),
	// t1: 5 (cost 0), t0: visit 2 returns 2, 2 (no cost, failures), t1: 5
	// (cost 2, success).
	for _, x := range []float64{1, 2, 3} {
		safeRows = append(safeRows, safe("A", "0", "ppo", "t0", x, `,"cost":1,"success":true`))
	}
	safeRows = append(safeRows, safe("A", "0", "ppo", "t1", 5, `,"cost":0`))
	for range 2 {
		safeRows = append(safeRows, safe("A", "0", "ppo", "t0", 2, `,"success":false`))
	}
	safeRows = append(safeRows, safe("A", "0", "ppo", "t1", 5, `,"cost":2,"success":true`))
	// Run B: one episode of one task.
	safeRows = append(safeRows, safe("B", "1", "ppo", "t0", -1, `,"cost":0.5,"success":1`))
	// Run C: t0 flat over two visits (range zero), no cost, no success.
	safeRows = append(safeRows, safe("C", "0", "sac", "t0", 2, ""), safe("C", "0", "sac", "t0", 2, ""),
		safe("C", "0", "sac", "t1", 1, ""), safe("C", "0", "sac", "t0", 2, ""), safe("C", "0", "sac", "t0", 2, ""))

	contilab := func(run, seed string, rows ...string) []string {
		out := make([]string, len(rows))
		for i, r := range rows {
			out[i] = fmt.Sprintf(`{"run_id":%q,"seed":%s,"algorithm_id":"ppo",%s}`, run, seed, r)
		}
		return out
	}
	// Two tasks: R = [[0.9, 0.1], [0.5, 0.8]], b = [0.1, 0.2], a* = [0.95,
	// 0.85]; a stream every 10 steps, task 0 at steps 0–20, task 1 at 30–60;
	// a curve of three batches per task.
	var cl []string
	R := [2][2]float64{{0.9, 0.1}, {0.5, 0.8}}
	for i := range 2 {
		for j := range 2 {
			cl = append(cl, fmt.Sprintf(`"kind":"matrix","after_task":%d,"eval_task":%d,"acc":%v`, i, j, R[i][j]))
		}
	}
	cl = append(cl, `"kind":"initial","eval_task":0,"acc":0.1`, `"kind":"initial","eval_task":1,"acc":0.2`,
		`"kind":"joint","eval_task":0,"acc":0.95`, `"kind":"joint","eval_task":1,"acc":0.85`)
	a0 := []float64{0.3, 0.7, 0.9, 0.6, 0.4, 0.7, 0.5}
	a1 := []float64{0.1, 0.1, 0.2, 0.3, 0.6, 0.8, 0.8}
	for i := range a0 {
		tt := 0
		if i >= 3 {
			tt = 1
		}
		cl = append(cl, fmt.Sprintf(`"kind":"stream","step":%d,"train_task":%d,"eval_task":0,"acc":%v`, 10*i, tt, a0[i]),
			fmt.Sprintf(`"kind":"stream","step":%d,"train_task":%d,"eval_task":1,"acc":%v`, 10*i, tt, a1[i]))
	}
	for task := range 2 {
		for b, z := range []float64{0.1, 0.3, 0.5} {
			cl = append(cl, fmt.Sprintf(`"kind":"curve","task":%d,"batch":%d,"acc":%v`, task, b, z+0.1*float64(task)))
		}
	}
	clRows := append(contilab("r0", "0", cl...), contilab("r1", "1",
		`"kind":"matrix","after_task":0,"eval_task":0,"acc":0.7`,
		`"kind":"stream","step":0,"train_task":0,"eval_task":0,"acc":0.6`)...)

	skill := func(site, cond string, success bool, steps int, calls string) string {
		return fmt.Sprintf(`{"uid":"u-%s-%s-%d-%v","method":"awm","site":%q,"condition":%q,"success":%v,"steps":%d%s}`,
			site, cond, steps, success, site, cond, success, steps, calls)
	}
	ssRows := []string{
		skill("gitlab", "src", true, 5, `,"skill_calls":2,"skill_failures":1`),
		skill("gitlab", "src", false, 7, `,"skill_calls":0,"skill_failures":0`),
		skill("gitlab", "tgt", false, 3, ""),
		skill("gitlab", "tgt", true, 4, ""),
		skill("magento", "src", true, 10, `,"skill_calls":0,"skill_failures":0`),
		skill("magento", "tgt", false, 1, `,"skill_calls":3,"skill_failures":3`),
		skill("magento", "tgt", false, 2, `,"skill_calls":1,"skill_failures":0`),
	}

	cases := []struct {
		name  string
		flags []string
		rows  []string
		wants []want
	}{
		{"safecrl", []string{"--protocol", "safecrl", "--window-episodes", "2"}, safeRows, []want{
			{"runs.parquet", []string{"run_id", "task"}, map[string]map[string]any{
				// last 2 of 1,2,3,2,2 → 2; cost 3 over the 1 visit with cost; 3/3 per
				// episode; mean(2,3) − mean(2,2) = 0.5; initial mean(1,2) = 1.5, so
				// 0.5/|2 − 1.5| = 1; the last 2 successes false, false → 0; success
				// forgetting mean(1,1) − mean(0,0) = 1.
				"A/t0": {"final_task_reward": 2.0, "total_cost": 3.0, "mean_episode_cost": 1.0, "forgetting": 0.5,
					"normalized_forgetting": 1.0, "success_rate": 0.0, "forgetting_success": 1.0, "n_visits": 2.0, "n_episodes": 5.0},
				// (0 + 2)/2 visits; 5 − 5 = 0 forgotten, range |5 − 5| = 0 → null;
				// success on the second visit only → no success forgetting.
				"A/t1": {"final_task_reward": 5.0, "total_cost": 1.0, "mean_episode_cost": 1.0, "forgetting": 0.0,
					"normalized_forgetting": nil, "success_rate": 1.0, "forgetting_success": nil},
				"B/t0": {"final_task_reward": -1.0, "total_cost": 0.5, "mean_episode_cost": 0.5, "forgetting": nil,
					"normalized_forgetting": nil, "success_rate": 1.0, "forgetting_success": nil},
				"C/t0": {"final_task_reward": 2.0, "total_cost": nil, "mean_episode_cost": nil, "forgetting": 0.0,
					"normalized_forgetting": nil, "success_rate": nil, "forgetting_success": nil},
			}},
			{"run_summary.parquet", []string{"run_id"}, map[string]map[string]any{
				"A": {"final_task_reward": 3.5, "total_cost": 2.0, "mean_episode_cost": 1.0, "forgetting": 0.25,
					"normalized_forgetting": 1.0, "success_rate": 0.5, "forgetting_success": 1.0},
				"C": {"final_task_reward": 1.5, "total_cost": nil, "forgetting": 0.0, "normalized_forgetting": nil},
			}},
		}},
		{"contilab", []string{"--protocol", "contilab", "--window-fraction", "1"}, clRows, []want{
			{"runs.parquet", []string{"run_id"}, map[string]map[string]any{
				// acc (0.5+0.8)/2; aia (0.9 + (0.5+0.8)/2)/2; bwt 0.5 − 0.9;
				// fwt 0.1 − 0.2; forgetting 0.9 − 0.5, relative 0.4/0.9;
				// learning (0.9+0.8)/2; intransigence (0.05+0.05)/2; min_acc
				// min(0.6, 0.4, 0.7, 0.5); wc_acc 0.8/2 + 0.4/2; stability gap
				// 0.9 − 0.4; windowed forgetting (Δ = 30) 0.6 − 0.4; aaa
				// (0.3+0.7+0.9+0.45+0.5+0.75+0.65)/7; lca (0.15+0.35+0.55)/3.
				"r0": {"acc": 0.65, "aia": 0.775, "bwt": -0.4, "fwt": -0.1, "forgetting": 0.4,
					"relative_forgetting": 0.4 / 0.9, "learning_acc": 0.85, "intransigence": 0.05,
					"min_acc": 0.4, "wc_acc": 0.6, "stability_gap": 0.5, "windowed_forgetting": 0.2,
					"aaa": 4.25 / 7, "lca": 0.35, "n_tasks": 2.0},
				// One task: every cross-task metric null, never 0.
				"r1": {"acc": 0.7, "aia": 0.7, "learning_acc": 0.7, "aaa": 0.6, "bwt": nil, "fwt": nil,
					"forgetting": nil, "relative_forgetting": nil, "intransigence": nil, "min_acc": nil,
					"wc_acc": nil, "stability_gap": nil, "windowed_forgetting": nil, "lca": nil, "n_tasks": 1.0},
			}},
		}},
		{"contilab window shorter than ρ", []string{"--protocol", "contilab"}, clRows, []want{
			// Δ = 0.1 · 3 · 10 = 3 < ρ = 10.
			{"runs.parquet", []string{"run_id"}, map[string]map[string]any{"r0": {"windowed_forgetting": nil}}},
		}},
		{"skillshift", []string{"--protocol", "skillshift"}, ssRows, []want{
			{"cells.parquet", []string{"site", "condition"}, map[string]map[string]any{
				"gitlab/src":  {"sr": 50.0, "as": 6.0, "asc": 1.0, "sfr": 50.0, "skill_calls": 2.0, "sfr_unstable": true},
				"gitlab/tgt":  {"sr": 50.0, "as": 3.5, "asc": nil, "sfr": nil, "skill_calls": nil},
				"magento/src": {"sr": 100.0, "as": 10.0, "asc": 0.0, "sfr": nil, "skill_calls": 0.0},
				"magento/tgt": {"sr": 0.0, "as": 1.5, "asc": 2.0, "sfr": 75.0, "skill_calls": 4.0},
			}},
			{"table.parquet", []string{"metric", "key"}, map[string]map[string]any{
				"SR/gitlab": {"value": 50.0}, "SR/magento": {"value": 50.0}, "SR/wordpress": {"value": nil},
				"SR/src": {"value": 75.0}, "SR/tgt": {"value": 25.0}, "SR/overall": {"value": 50.0},
				"AS/gitlab": {"value": 4.75}, "AS/magento": {"value": 5.75}, "AS/overall": {"value": 5.25},
				// ASC: the mean of the non-null cells (1, 0, 2).
				"ASC/magento": {"value": 1.0}, "ASC/src": {"value": 0.5}, "ASC/overall": {"value": 1.0},
				// SFR: cells 50 and 75 only; invocations summed over the cells.
				"SFR/gitlab": {"value": 50.0, "invocations": 2.0}, "SFR/magento": {"value": 75.0, "invocations": 4.0},
				"SFR/overall": {"value": 62.5, "invocations": 6.0, "unstable": true},
			}},
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			out := scoreObjects(t, map[string][]byte{"t.jsonl": []byte(strings.Join(c.rows, "\n") + "\n")}, c.flags...)
			for _, w := range c.wants {
				rows := indexRows(t, readParquet(t, filepath.Join(out, w.table)), w.keys...)
				for k, cols := range w.rows {
					want := map[string]any{}
					parts := strings.Split(k, "/")
					for i, key := range w.keys {
						want[key] = parts[i]
					}
					for col, v := range cols {
						want[col] = v
					}
					compareEdgeRow(t, w.table, rows, want, w.keys...)
				}
			}
		})
	}
}

// TestHugeRewardsScoreEndToEnd: one-row runs of ±1.0e308…±1.2e308 (valid
// JSON numbers) publish a result: the paired differences between the
// families leave float64, so their statistics are null with the overflow
// reason; before, the paired difference's bootstrap panicked and the job
// died with no result.
func TestHugeRewardsScoreEndToEnd(t *testing.T) {
	t.Parallel()
	objects := map[string][]byte{}
	for s := range 3 {
		for fam, sign := range map[string]string{"ppo": "", "sac": "-"} {
			line := fmt.Sprintf(`{"run_id":"%s%d","seed":%d,"algorithm_id":%q,"regime_id":"a","reward":%s1.%de308}`+"\n", fam, s, s, fam, sign, s)
			objects[fmt.Sprintf("%s%d.jsonl", fam, s)] = []byte(line)
		}
	}
	out := scoreObjects(t, objects)
	fams := indexRows(t, readParquet(t, filepath.Join(out, "families.parquet")), "family", "metric")
	compareEdgeRow(t, "families.parquet", fams, map[string]any{
		"family": "sac", "metric": "per_configuration_reward", "n": 3.0, "n_pairs": 3.0,
		"min": -1.2e308, "max": -1e308, "median": -1.1e308, "mean": nil,
		"p_value": nil, "diff_mean": nil, "diff_ci_low": nil, "diff_ci_high": nil, "prob_improvement": 0.0,
	}, "family", "metric")
	if r := fams["sac/per_configuration_reward"]; r != nil {
		for _, kv := range r["reasons"].([]writers.KV) {
			if kv.Key == "diff_mean" && kv.Value != "the value overflows float64" {
				t.Errorf("diff_mean's reason %q", kv.Value)
			}
		}
	}
}

// TestSignFlipOverflowEndToEnd: two seeds, sac's rewards 1.0e308 and
// 1.5e308 against ppo's 0.5: each paired difference is finite, but Σ|d|
// leaves float64, so the sign-flip p is absent (it was 0, a p the test can
// never give) while its smallest attainable p, 2/2², stays.
func TestSignFlipOverflowEndToEnd(t *testing.T) {
	t.Parallel()
	objects := map[string][]byte{}
	for s, r := range []string{"1.0e308", "1.5e308"} {
		for fam, reward := range map[string]string{"ppo": "0.5", "sac": r} {
			line := fmt.Sprintf(`{"run_id":"%s%d","seed":%d,"algorithm_id":%q,"regime_id":"a","reward":%s}`+"\n", fam, s, s, fam, reward)
			objects[fmt.Sprintf("%s%d.jsonl", fam, s)] = []byte(line)
		}
	}
	out := scoreObjects(t, objects)
	fams := indexRows(t, readParquet(t, filepath.Join(out, "families.parquet")), "family", "metric")
	compareEdgeRow(t, "families.parquet", fams, map[string]any{
		"family": "sac", "metric": "per_configuration_reward", "n_pairs": 2.0, "test": "sign_flip",
		"p_value": nil, "p_value_adjusted": nil, "min_p": 0.5, "diff_mean": nil, "prob_improvement": 1.0,
	}, "family", "metric")
}

// TestHugeRecordValuesEndToEnd: the record protocols on finite values whose
// sums leave float64 publish a result in which those values are null with
// the overflow reason (docs/decisions.md), as skyfall does; before, contilab
// and skillshift panicked ("protocol.Some(+Inf)") and the job died.
func TestHugeRecordValuesEndToEnd(t *testing.T) {
	t.Parallel()
	const over = "the value overflows float64"
	var cl []string
	for i := range 2 {
		for j := range 2 {
			cl = append(cl, fmt.Sprintf(`{"run_id":"r0","seed":0,"algorithm_id":"ppo","kind":"matrix","after_task":%d,"eval_task":%d,"acc":1.6e308}`, i, j))
		}
	}
	ss := []string{
		`{"uid":"u1","method":"awm","site":"gitlab","condition":"src","success":true,"steps":1.7e308,"skill_calls":1.7e308,"skill_failures":1}`,
		`{"uid":"u2","method":"awm","site":"gitlab","condition":"src","success":false,"steps":1.7e308,"skill_calls":1.7e308,"skill_failures":1}`,
		`{"uid":"u3","method":"awm","site":"gitlab","condition":"tgt","success":true,"steps":4,"skill_calls":40,"skill_failures":10}`,
	}
	cases := []struct {
		name, protocol, table string
		rows                  []string
		keys                  []string
		want                  map[string]any
		overflowed            []string
	}{
		// acc and learning_acc sum 1.6e308 twice; bwt = R₁₀ − R₀₀ = 0 and
		// forgetting = max − R = 0 are numbers.
		{"contilab", "contilab", "runs.parquet", cl, []string{"run_id"},
			map[string]any{"run_id": "r0", "acc": nil, "learning_acc": nil, "bwt": 0.0, "forgetting": 0.0},
			[]string{"acc", "learning_acc"}},
		// gitlab/src: Σ steps and Σ calls leave float64, so AS, ASC, SFR and
		// the invocations are null (SFR was never 100·2/+Inf = 0).
		{"skillshift cell", "skillshift", "cells.parquet", ss, []string{"site", "condition"},
			map[string]any{"site": "gitlab", "condition": "src", "sr": 50.0, "as": nil, "asc": nil, "sfr": nil, "skill_calls": nil},
			[]string{"as", "asc", "sfr", "skill_calls"}},
		{"skillshift marginal", "skillshift", "table.parquet", ss, []string{"metric", "key"},
			map[string]any{"metric": "SFR", "key": "gitlab", "value": 25.0, "invocations": 40.0}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			out := scoreObjects(t, map[string][]byte{"t.jsonl": []byte(strings.Join(c.rows, "\n") + "\n")}, "--protocol", c.protocol)
			rows := indexRows(t, readParquet(t, filepath.Join(out, c.table)), c.keys...)
			got := compareEdgeRow(t, c.table, rows, c.want, c.keys...)
			if got == nil {
				return
			}
			reasons := reasonsOf(got)
			for _, col := range c.overflowed {
				if reasons[col] != over {
					t.Errorf("%s: reason %q, want %q", col, reasons[col], over)
				}
			}
		})
	}
}
