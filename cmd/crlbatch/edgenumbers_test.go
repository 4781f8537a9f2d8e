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

func loadEdgeCases(t *testing.T) []edgeCase {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "protocol", "family", "testdata", "edge_cases.json"))
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		Cases []edgeCase `json:"cases"`
	}
	if err := json.Unmarshal(data, &file); err != nil {
		t.Fatal(err)
	}
	if len(file.Cases) < 15 {
		t.Fatalf("only %d edge cases", len(file.Cases))
	}
	return file.Cases
}

// writeEdgeInput writes a case's objects as JSONL under a new folder.
func writeEdgeInput(t *testing.T, c *edgeCase) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "in")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for key, rows := range c.Objects {
		var b bytes.Buffer
		for _, r := range rows {
			line, err := json.Marshal(r)
			if err != nil {
				t.Fatal(err)
			}
			b.Write(line)
			b.WriteByte('\n')
		}
		if err := os.WriteFile(filepath.Join(dir, key), b.Bytes(), 0o644); err != nil {
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
			for _, want := range c.Expected.Families {
				got := compareEdgeRow(t, "families.parquet", fams, want, "family", "metric")
				if got == nil {
					continue
				}
				where := fmt.Sprintf("families.parquet %v/%v", want["family"], want["metric"])
				for _, col := range []string{"ci_low", "ci_high", "iqm_ci_low", "iqm_ci_high"} {
					switch {
					case want["ci_null"] == true:
						if got[col] != nil {
							t.Errorf("%s %s = %v, want null (fewer than two seeds)", where, col, got[col])
						}
					case got[col] == nil:
						t.Errorf("%s %s is null with %d seeds", where, col, int(want["n"].(float64)))
					case want["ci_collapses"] == true && !edgeClose(want["mean"].(float64), got[col].(float64)):
						t.Errorf("%s %s = %v, want %v: every seed value is equal", where, col, got[col], want["mean"])
					}
				}
			}
			if len(fams) != len(c.Expected.Families) {
				t.Errorf("families.parquet has %d rows, the reference %d", len(fams), len(c.Expected.Families))
			}
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
	return math.Abs(want-got) <= math.Max(1e-12, 1e-9*math.Max(math.Abs(want), math.Abs(got)))
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
