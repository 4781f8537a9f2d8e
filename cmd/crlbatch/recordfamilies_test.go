package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/crlbatch/crlbatch/writers"
)

// The cases of protocol/contilab/testdata/stream_cases.json were computed by
// protocol/contilab/testdata/stream_reference.py, written from PROTOCOLS.md
// sections 1.6 and 4 alone (`make check-references` reruns it): contilab's
// continual-evaluation metrics (min_acc, wc_acc, stability_gap,
// windowed_forgetting, aaa, lca) and recorded diagnostics at their edges (one
// stream step, equal steps whose window is exactly ρ, a window shorter than
// ρ, irregular step gaps, a task with one step, one task, a stream without a
// matrix, -0, accuracies near 1e308), the family statistics of 1.6 over the
// record protocol's run values, and the statistics across benchmarks (two
// benchmarks, two families, every family tied, a family missing on one
// benchmark, ties within a benchmark). Each case goes through `score
// --protocol contilab`; every value of runs.parquet, families.parquet and
// benchmarks.parquet must agree to 1e-9 relative (1e-12 absolute), and every
// null must be null and carry a reason.

type contilabStreamCase struct {
	Name     string           `json:"name"`
	Flags    []string         `json:"flags"`
	Rows     []map[string]any `json:"rows"`
	Expected struct {
		Runs       []map[string]any `json:"runs"`
		Families   []map[string]any `json:"families"`
		Benchmarks []map[string]any `json:"benchmarks"`
	} `json:"expected"`
}

func readStreamCases(t *testing.T) []contilabStreamCase {
	t.Helper()
	return readCasesFile[contilabStreamCase](t, filepath.Join("..", "..", "protocol", "contilab", "testdata", "stream_cases.json"), 12)
}

func TestContilabStreamFamiliesBenchmarksAgainstReference(t *testing.T) {
	t.Parallel()
	for _, c := range readStreamCases(t) {
		c := c
		t.Run(c.Name, func(t *testing.T) {
			t.Parallel()
			out := scoreObjects(t, map[string][]byte{"acc.jsonl": jsonlRows(t, c.Rows)}, append([]string{"--protocol", "contilab"}, c.Flags...)...)
			runs := indexRows(t, readParquet(t, filepath.Join(out, "runs.parquet")), "run_id")
			compareAll(t, "runs.parquet", runs, c.Expected.Runs, edgeRows("runs.parquet", "run_id"))
			fams := indexRows(t, readParquet(t, filepath.Join(out, "families.parquet")), "family", "metric")
			compareAll(t, "families.parquet", fams, c.Expected.Families, compareFamilyRow)
			bpath := filepath.Join(out, "benchmarks.parquet")
			if c.Expected.Benchmarks == nil {
				if _, err := os.Stat(bpath); err == nil {
					t.Errorf("benchmarks.parquet written for one benchmark")
				}
				return
			}
			bench := indexRows(t, readParquet(t, bpath), "family")
			compareAll(t, "benchmarks.parquet", bench, c.Expected.Benchmarks, edgeRows("benchmarks.parquet", "family"))
		})
	}
}

// compareFamilyRow compares a families.parquet row with the reference's, and
// the bootstrap columns' null-ness (null below two seeds; null with a reason
// where the reference says a resampled statistic can leave float64) and
// collapse onto the mean when every seed value is equal.
func compareFamilyRow(t *testing.T, fams map[string]map[string]any, want map[string]any) {
	t.Helper()
	w := map[string]any{}
	for k, v := range want {
		if k != "ci_overflow" && k != "iqm_ci_overflow" {
			w[k] = v
		}
	}
	got := compareEdgeRow(t, "families.parquet", fams, w, "family", "metric")
	if got == nil {
		return
	}
	reasons := map[string]bool{}
	if kvs, ok := got["reasons"].([]writers.KV); ok {
		for _, kv := range kvs {
			reasons[kv.Key] = true
		}
	}
	where := fmt.Sprintf("families.parquet %v/%v", want["family"], want["metric"])
	for _, col := range []string{"ci_low", "ci_high", "iqm_ci_low", "iqm_ci_high"} {
		overflow := want["ci_overflow"] == true
		if strings.HasPrefix(col, "iqm_") {
			overflow = want["iqm_ci_overflow"] == true
		}
		switch {
		case want["ci_null"] == true:
			if got[col] != nil {
				t.Errorf("%s %s = %v, want null (fewer than two seeds)", where, col, got[col])
			}
		case got[col] == nil && overflow:
			if !reasons[col] {
				t.Errorf("%s %s is null without a reason", where, col)
			}
		case got[col] == nil:
			t.Errorf("%s %s is null with %v seeds", where, col, want["n"])
		case want["ci_collapses"] == true && !edgeClose(want["mean"].(float64), got[col].(float64)):
			t.Errorf("%s %s = %v, want %v: every seed value is equal", where, col, got[col], want["mean"])
		}
	}
}

type recordFamilyCase struct {
	Protocol string           `json:"protocol"`
	Name     string           `json:"name"`
	Flags    []string         `json:"flags"`
	Rows     []map[string]any `json:"rows"`
	Expected struct {
		Families []map[string]any `json:"families"`
	} `json:"expected"`
}

// The cases of protocol/family/testdata/records_cases.json were computed by
// protocol/family/testdata/records_reference.py, written from PROTOCOLS.md
// 1.6, 3 and 5 alone: the family statistics of safecrl (a run's value is its
// tasks' mean) and skillshift (a run's value is its O/A) with one seed, a
// metric no run has (n = 0), unpaired and repeated seeds, equal seed values,
// zero differences, Wilcoxon's six pairs and more, values near 1e308, -0
// against 0, runs lacking the group-by field (the family ""), a method
// without skill calls. Every column of families.parquet must agree to 1e-9,
// and every null must carry a reason.
func TestRecordFamiliesAgainstReference(t *testing.T) {
	t.Parallel()
	cases := readCasesFile[recordFamilyCase](t, filepath.Join("..", "..", "protocol", "family", "testdata", "records_cases.json"), 8)
	for _, c := range cases {
		c := c
		t.Run(c.Protocol+"/"+c.Name, func(t *testing.T) {
			t.Parallel()
			out := scoreObjects(t, map[string][]byte{"records.jsonl": jsonlRows(t, c.Rows)}, append([]string{"--protocol", c.Protocol}, c.Flags...)...)
			fams := indexRows(t, readParquet(t, filepath.Join(out, "families.parquet")), "family", "metric")
			compareAll(t, "families.parquet", fams, c.Expected.Families, compareFamilyRow)
		})
	}
}

// TestContilabRunWithoutBenchmarkIsNoted: when the runs carry several
// benchmarks, a run without the `benchmark` field cannot be ranked on any of
// them. It was left out of the ranking with nothing said (its family's
// average rank then rested on fewer runs than the family tables); it is still
// left out (PROTOCOLS 4 ranks per benchmark, and it has none; inventing a
// benchmark "(none)" would rank runs of unknown data against each other), and
// the notes name it (the first 20, and how many more). The numbers are
// unchanged.
func TestContilabRunWithoutBenchmarkIsNoted(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		unbenched int
		want      []string
	}{
		{1, []string{"1 run(s) carry no benchmark and are left out of the ranking across benchmarks: run_id=x0|"}},
		{25, []string{"25 run(s) carry no benchmark", "run_id=x19|", " and 5 more"}},
	} {
		c := c
		t.Run(strconv.Itoa(c.unbenched), func(t *testing.T) {
			t.Parallel()
			var rows []map[string]any
			run := func(id, algo, bench string, last float64) {
				for i := 0; i < 2; i++ {
					for j := 0; j < 2; j++ {
						acc := [2][2]float64{{0.5, 0.1}, {0.25, last}}[i][j]
						r := map[string]any{"run_id": id, "seed": 0, "algorithm_id": algo, "kind": "matrix",
							"after_task": i, "eval_task": j, "acc": acc}
						if bench != "" {
							r["benchmark"] = bench
						}
						rows = append(rows, r)
					}
				}
			}
			for _, b := range []string{"b1", "b2"} {
				run("p"+b, "ppo", b, 0.1)
				run("s"+b, "sac", b, 0.2)
				run("d"+b, "dqn", b, 0.3)
			}
			for i := 0; i < c.unbenched; i++ {
				run("x"+strconv.Itoa(i), "dqn", "", 0.9) // would make dqn's b1 and b2 means 0.6 and rank it first either way
			}
			out := scoreObjects(t, map[string][]byte{"acc.jsonl": jsonlRows(t, rows)}, "--protocol", "contilab")
			bench := indexRows(t, readParquet(t, filepath.Join(out, "benchmarks.parquet")), "family")
			for fam, rank := range map[string]float64{"ppo": 3, "sac": 2, "dqn": 1} {
				if got := bench[fam]["average_rank"]; got != rank {
					t.Errorf("%s average_rank = %v, want %v", fam, got, rank)
				}
			}
			report, err := os.ReadFile(filepath.Join(out, "report.md"))
			if err != nil {
				t.Fatal(err)
			}
			manifest, err := os.ReadFile(filepath.Join(out, "manifest.json"))
			if err != nil {
				t.Fatal(err)
			}
			for name, text := range map[string]string{"report.md": string(report), "manifest.json": string(manifest)} {
				for _, w := range c.want {
					if !strings.Contains(text, w) {
						t.Errorf("%s lacks %q", name, w)
					}
				}
				for _, line := range strings.Split(text, "\n") {
					if strings.Contains(line, "carry no benchmark") && strings.Contains(line, "run_id=x20|") {
						t.Errorf("%s: the note names a 21st run: %s", name, line)
					}
				}
			}
		})
	}
}
