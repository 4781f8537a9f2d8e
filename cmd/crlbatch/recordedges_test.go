package main

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The cases of protocol/safecrl/testdata/edge_cases.json were computed by
// protocol/safecrl/testdata/edge_reference.py, written from PROTOCOLS.md
// section 3 alone (`make check-references` reruns it): one episode, one task,
// windows of 1 and windows longer than every visit, revisits with cost or
// success on one side only, a normalised forgetting over a zero, a subnormal
// and an overflowing range, returns near ±1e308 whose sums leave float64,
// subnormal returns, -0, success as booleans and as 0/1. Each case goes
// through `score --protocol safecrl`; every value of runs.parquet (run ×
// task) and run_summary.parquet must agree to 1e-9 relative (1e-12
// absolute), and every null must be null and carry a reason.

type safecrlEdgeCase struct {
	Name     string           `json:"name"`
	Window   int              `json:"window"`
	Rows     []map[string]any `json:"rows"`
	Expected struct {
		Tasks []map[string]any `json:"tasks"`
		Runs  []map[string]any `json:"runs"`
	} `json:"expected"`
}

func TestSafecrlEdgesAgainstReference(t *testing.T) {
	t.Parallel()
	for _, c := range readEdgeCases[safecrlEdgeCase](t, "safecrl", 15) {
		c := c
		t.Run(c.Name, func(t *testing.T) {
			t.Parallel()
			out := scoreObjects(t, map[string][]byte{"runs.jsonl": jsonlRows(t, c.Rows)},
				"--protocol", "safecrl", "--window-episodes", strconv.Itoa(c.Window))
			tasks := indexRows(t, readParquet(t, filepath.Join(out, "runs.parquet")), "run_id", "task")
			runs := indexRows(t, readParquet(t, filepath.Join(out, "run_summary.parquet")), "run_id")
			for _, want := range c.Expected.Tasks {
				compareEdgeRow(t, "runs.parquet", tasks, want, "run_id", "task")
			}
			for _, want := range c.Expected.Runs {
				compareEdgeRow(t, "run_summary.parquet", runs, want, "run_id")
			}
			if len(tasks) != len(c.Expected.Tasks) || len(runs) != len(c.Expected.Runs) {
				t.Errorf("%d task rows and %d runs, the reference %d and %d",
					len(tasks), len(runs), len(c.Expected.Tasks), len(c.Expected.Runs))
			}
		})
	}
}

type skillshiftEdgeCase struct {
	Name     string           `json:"name"`
	Rows     []map[string]any `json:"rows"`
	Expected struct {
		Cells []map[string]any `json:"cells"`
		Table []map[string]any `json:"table"`
	} `json:"expected"`
}

// The cases of protocol/skillshift/testdata/edge_cases.json were computed by
// protocol/skillshift/testdata/edge_reference.py, written from PROTOCOLS.md
// section 5 alone: one task in one cell, missing cells, a cell or a method
// without skill calls, zero calls, invocations at the boundary of 30, steps
// and calls whose sums leave float64, subnormal and -0 steps. Every cell of
// cells.parquet and every marginal of table.parquet must agree, and every
// null must carry a reason.
func TestSkillshiftEdgesAgainstReference(t *testing.T) {
	t.Parallel()
	for _, c := range readEdgeCases[skillshiftEdgeCase](t, "skillshift", 10) {
		c := c
		t.Run(c.Name, func(t *testing.T) {
			t.Parallel()
			out := scoreObjects(t, map[string][]byte{"tasks.jsonl": jsonlRows(t, c.Rows)}, "--protocol", "skillshift")
			cells := indexRows(t, readParquet(t, filepath.Join(out, "cells.parquet")), "run_key", "site", "condition")
			table := indexRows(t, readParquet(t, filepath.Join(out, "table.parquet")), "run_key", "metric", "scope", "key")
			for _, want := range c.Expected.Cells {
				w := byRunKey(want)
				compareEdgeRow(t, "cells.parquet", cells, w, "run_key", "site", "condition")
			}
			for _, want := range c.Expected.Table {
				w := byRunKey(want)
				keys := []string{"run_key", "metric", "scope", "key"}
				got := table[edgeKey(w, keys)]
				if got == nil {
					t.Errorf("table.parquet has no row %s", edgeKey(w, keys))
					continue
				}
				if w["value"] == nil {
					if got["value"] != nil {
						t.Errorf("table.parquet %s value = %v, want null", edgeKey(w, keys), got["value"])
					} else if s, _ := got["reason"].(string); s == "" {
						t.Errorf("table.parquet %s value is null without a reason", edgeKey(w, keys))
					}
					continue
				}
				delete(w, "value")
				w["value"] = want["value"]
				compareEdgeRow(t, "table.parquet", table, w, keys...)
			}
			// The tables also carry the grid's cells no task fell in (the product
			// of the run's sites and conditions) and the marginals of the
			// expected grid the run lacks: each is reported, never filled.
			seenCells := map[string]bool{}
			for _, want := range c.Expected.Cells {
				seenCells[fmt.Sprintf("method=%v/%v/%v", want["method"], want["site"], want["condition"])] = true
			}
			for k, got := range cells {
				if seenCells[k] {
					continue
				}
				if got["tasks"] != int64(0) {
					t.Errorf("cells.parquet %s: tasks = %v in a cell the reference has no task in", k, got["tasks"])
				}
				for _, col := range []string{"sr", "as", "asc", "sfr"} {
					if got[col] != nil {
						t.Errorf("cells.parquet %s: %s = %v in a missing cell, want null", k, col, got[col])
					}
				}
			}
			seenMarg := map[string]bool{}
			for _, want := range c.Expected.Table {
				seenMarg[fmt.Sprintf("method=%v/%v/%v/%v", want["method"], want["metric"], want["scope"], want["key"])] = true
			}
			for k, got := range table {
				if seenMarg[k] {
					continue
				}
				if got["value"] != nil {
					t.Errorf("table.parquet %s = %v over no cell, want null", k, got["value"])
				} else if s, _ := got["reason"].(string); s == "" {
					t.Errorf("table.parquet %s is null without a reason", k)
				}
			}
		})
	}
}

// byRunKey is a reference row keyed as the skillshift tables key it: its
// method as the run key `method=<name>`.
func byRunKey(want map[string]any) map[string]any {
	w := map[string]any{"run_key": "method=" + want["method"].(string)}
	for k, v := range want {
		if k != "method" {
			w[k] = v
		}
	}
	return w
}

// TestCheckEntryHugeNumbersEndToEnd: a transcribed AS entry of finite
// numbers near 1e308, whose sums leave float64, was an internal error
// (exit 70, a panic in protocol.Some); the means that cannot be formed are
// now not checked, like nulls, and the metric is skipped with the reason.
func TestCheckEntryHugeNumbersEndToEnd(t *testing.T) {
	t.Parallel()
	entry := `{"AS": {"websites": {"gitlab": 1e308, "magento": 1e308, "wordpress": 1e308},
 "conditions": {"src": 1e307, "src-perc": 1e307, "src-exec": 1e307, "tgt": 1e307, "tgt-perc": 1e307, "tgt-exec": 1e307},
 "overall": 1e307}}`
	path := filepath.Join(t.TempDir(), "entry.json")
	if err := os.WriteFile(path, []byte(entry), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := crl(t, "check-entry", path)
	if code != 0 {
		t.Fatalf("check-entry: exit %d: %s%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "pass") || !strings.Contains(stdout, "mean(websites): the sum of websites leaves float64") {
		t.Errorf("check-entry printed %q, want a pass of conditions against overall, websites not checked", stdout)
	}
}

type contilabEdgeCase struct {
	Name     string           `json:"name"`
	Rows     []map[string]any `json:"rows"`
	Expected map[string]any   `json:"expected"`
}

// The cases of protocol/contilab/testdata/edge_cases.json were computed by
// protocol/contilab/testdata/edge_reference.py, written from PROTOCOLS.md
// section 4 alone: the accuracy-matrix metrics with one task, two and three
// tasks, zero accuracies (a relative-forgetting term over a zero max is
// dropped), Class-IL, no joint or initial rows, a missing cell, subnormal
// accuracies and accuracies whose sums leave float64; with no stream rows,
// the stream metrics must be null with a reason. Every value of runs.parquet
// must agree to 1e-9 relative (1e-12 absolute).
func TestContilabEdgesAgainstReference(t *testing.T) {
	t.Parallel()
	for _, c := range readEdgeCases[contilabEdgeCase](t, "contilab", 10) {
		c := c
		t.Run(c.Name, func(t *testing.T) {
			t.Parallel()
			out := scoreObjects(t, map[string][]byte{"acc.jsonl": jsonlRows(t, c.Rows)}, "--protocol", "contilab")
			runs := indexRows(t, readParquet(t, filepath.Join(out, "runs.parquet")), "run_id")
			compareEdgeRow(t, "runs.parquet", runs, c.Expected, "run_id")
			if len(runs) != 1 {
				t.Errorf("%d runs, want 1", len(runs))
			}
		})
	}
}

// TestCeilingAtLargestFloatEndToEnd: a valid reward spec whose episode-end
// component reaches the largest float64 gives each label a finite ceiling
// (a weighted mean of the per step 1 and the final step MaxFloat64,
// PROTOCOLS 2.2), but the literal ((L−m)·per + m·final)/L overflowed: +Inf
// reached the report and the job died as an internal error (exit 70).
// Label a: 5 rows, 2 final (success ≠ 0): (3 + 2·Max)/5; label b: 2 rows,
// 1 final: (1 + Max)/2. Performance gap: the ceiling minus the first
// interval's final n = 1 reward.
func TestCeilingAtLargestFloatEndToEnd(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	in := filepath.Join(dir, "in")
	if err := os.MkdirAll(in, 0o755); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	for i, r := range []struct {
		label           string
		reward, success float64
	}{{"a", 0.5, 0}, {"a", 0.6, 0}, {"a", 0.7, 1}, {"b", 0.1, 0}, {"b", 0.2, 1}, {"a", 0.4, 0}, {"a", 0.9, 1}} {
		fmt.Fprintf(&b, `{"run_id":"r0","seed":0,"algorithm_id":"ppo","step":%d,"reward":%v,"regime_id":%q,"components":{"progress":%v,"success":%v}}`+"\n",
			i, r.reward, r.label, r.reward, r.success)
	}
	if err := os.WriteFile(filepath.Join(in, "t.jsonl"), b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	spec := filepath.Join(dir, "maxfinal.yaml")
	if err := os.WriteFile(spec, []byte(`name: maxfinal
components:
  - name: progress
    weight: 1.0
    clip: [0.0, 1.0]
    cadence: step
  - name: success
    weight: 1.7976931348623157e308
    clip: [0.0, 1.0]
    cadence: episode_end
`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, anchor := range []string{"segment", "ceiling"} {
		out := filepath.Join(dir, "out-"+anchor)
		if code, _, stderr := crl(t, "score", in, "--out", out, "--quiet", "--spec", spec,
			"--ceiling", "by_configuration", "--anchor", anchor); code != 0 {
			t.Fatalf("--anchor %s: exit %d: %s", anchor, code, stderr)
		}
		rows := indexRows(t, readParquet(t, filepath.Join(out, "runs.parquet")), "run_id", "regime_id")
		for _, want := range []map[string]any{
			{"run_id": "r0", "regime_id": "a", "upper_bound": 0.4 * math.MaxFloat64, "performance_gap": 0.4*math.MaxFloat64 - 0.7},
			{"run_id": "r0", "regime_id": "b", "upper_bound": 0.5 * math.MaxFloat64, "performance_gap": 0.5*math.MaxFloat64 - 0.2},
		} {
			compareEdgeRow(t, "runs.parquet (--anchor "+anchor+")", rows, want, "run_id", "regime_id")
		}
	}
}
