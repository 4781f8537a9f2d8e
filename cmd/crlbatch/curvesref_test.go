package main

import (
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"testing"

	"github.com/crlbatch/crlbatch/writers"
)

// The cases of figures/testdata/curves_cases.json were computed by
// figures/testdata/curves_reference.py, written from the documented
// downsampling rule (docs/decisions.md, "Figures and the HTML report") and
// PROTOCOLS.md alone (`make check-references` reruns it): runs of 1, 2, 1999,
// 2000, 2001 and 4097 steps, families of 1, 2, 3 and 120 runs, runs of
// unequal lengths folded at the widest width, a bucket spanning a shift, an
// alias, a label only one run has, rewards at ±1e308, subnormal and -0, a
// constant reward and --min-steps. Each case goes through `score`;
// curves.parquet must hold the reference's rows in its order, every float
// within 1e-9 relative (1e-12 absolute), counts, steps, min and max exact, and
// every null with the reference's reason.

type curvesCase struct {
	Name  string   `json:"name"`
	Flags []string `json:"flags"`
	Runs  []struct {
		Meta     map[string]any `json:"meta"`
		Segments [][3]any       `json:"segments"` // label, origin or null, rewards
	} `json:"runs"`
	Expected [][]any `json:"expected"` // rows in curvesColumns' order
}

// curvesColumns are curves.parquet's columns, in the order of the
// reference's rows (its file names them under "columns").
var curvesColumns = []string{"family", "label", "step_start", "step_end", "runs", "mean",
	"band_low", "band_high", "min", "max", "reasons"}

// curvesObjects writes each run of c as one JSONL object, named so that key
// order is the reference's run order.
func curvesObjects(t *testing.T, c *curvesCase) map[string][]byte {
	t.Helper()
	objects := map[string][]byte{}
	for i, r := range c.Runs {
		var rows []map[string]any
		for _, seg := range r.Segments {
			for _, rew := range seg[2].([]any) {
				row := map[string]any{"reward": rew, "regime_id": seg[0]}
				if seg[1] != nil {
					row["regime_origin"] = seg[1]
				}
				for k, v := range r.Meta {
					row[k] = v
				}
				rows = append(rows, row)
			}
		}
		objects[fmt.Sprintf("%03d.jsonl", i)] = jsonlRows(t, rows)
	}
	return objects
}

func TestCurvesAgainstReference(t *testing.T) {
	t.Parallel()
	cases := readCasesFile[curvesCase](t, filepath.Join("..", "..", "figures", "testdata", "curves_cases.json"), 11)
	for _, c := range cases {
		c := c
		t.Run(c.Name, func(t *testing.T) {
			t.Parallel()
			out := scoreObjects(t, curvesObjects(t, &c), append([]string{"--figures=false"}, c.Flags...)...)
			got := readParquet(t, filepath.Join(out, "curves.parquet")).Rows
			if len(got) > 0 && len(got[0]) != len(curvesColumns) {
				t.Errorf("curves.parquet has columns %v, the reference %v", slices.Sorted(maps.Keys(got[0])), curvesColumns)
			}
			if len(got) != len(c.Expected) {
				t.Errorf("curves.parquet has %d rows, the reference %d", len(got), len(c.Expected))
			}
			for i := 0; i < len(got) && i < len(c.Expected); i++ {
				compareCurvesRow(t, i, c.Expected[i], got[i])
			}
		})
	}
}

// compareCurvesRow compares row i of curves.parquet with the reference's
// want, column by column; it stops at the first row that differs so that a
// shifted row does not report thousands.
func compareCurvesRow(t *testing.T, i int, want []any, got map[string]any) {
	t.Helper()
	reasons := map[string]string{}
	if kvs, ok := got["reasons"].([]writers.KV); ok {
		for _, kv := range kvs {
			reasons[kv.Key] = kv.Value
		}
	}
	where := fmt.Sprintf("curves.parquet row %d (%v/%v/%v)", i, got["family"], got["label"], got["step_start"])
	for j, col := range curvesColumns {
		w, g := want[j], got[col]
		var bad string
		switch col {
		case "reasons":
			wr := map[string]string{}
			for k, v := range w.(map[string]any) {
				wr[k] = v.(string)
			}
			if fmt.Sprint(wr) != fmt.Sprint(reasons) {
				bad = fmt.Sprintf("reasons %v, want %v", reasons, wr)
			}
		case "mean", "band_low", "band_high", "min", "max":
			gf, ok := g.(float64)
			switch {
			case w == nil && g != nil:
				bad = fmt.Sprintf("%s = %v, want null", col, g)
			case w == nil:
			case !ok:
				bad = fmt.Sprintf("%s = %v (%T), want %v", col, g, g, w)
			default:
				wf := w.(float64)
				exact := col == "min" || col == "max"
				if (exact && wf != gf) || (!exact && !edgeClose(wf, gf)) {
					bad = fmt.Sprintf("%s = %v, want %v", col, gf, wf)
				}
			}
		default: // family, label, step_start, step_end, runs: equal
			if fmt.Sprint(g) != fmt.Sprint(w) {
				bad = fmt.Sprintf("%s = %v, want %v", col, g, w)
			}
		}
		if bad != "" {
			t.Fatalf("%s: %s", where, bad)
		}
	}
}
