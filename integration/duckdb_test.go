package integration

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/crlbatch/crlbatch/pipeline"
	"github.com/crlbatch/crlbatch/writers"
)

// duckFile is what duckdb.mjs reports of one Parquet file.
type duckFile struct {
	Rows    int `json:"rows"`
	Columns []struct {
		Name string `json:"name"`
		Type string `json:"type"`
	} `json:"columns"`
	KV          map[string]string `json:"kv"`
	Compression []string          `json:"compression"`
	Nulls       map[string]int    `json:"nulls"`
	Nans        map[string]int    `json:"nans"`
	Data        []map[string]any  `json:"data"`
}

func (d duckFile) types() map[string]string {
	m := map[string]string{}
	for _, c := range d.Columns {
		m[c.Name] = c.Type
	}
	return m
}

// duckdb reads files with DuckDB through node and duckdb.mjs.
func duckdb(t testing.TB, f *fixture, files ...string) map[string]duckFile {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		need(t, fmt.Errorf("node is not on PATH (DuckDB runs under node): install Node.js, then %s", InstallHint))
	}
	dir := filepath.Join(f.repo, "integration")
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@duckdb", "node-api", "package.json")); err != nil {
		need(t, fmt.Errorf("@duckdb/node-api is not installed in integration/node_modules: %s", InstallHint))
	}
	cmd := exec.Command(node, append([]string{"duckdb.mjs"}, files...)...)
	cmd.Dir = dir
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("node duckdb.mjs: %v\n%s", err, errb.String())
	}
	var res map[string]duckFile
	dec := json.NewDecoder(&out)
	dec.UseNumber()
	if err := dec.Decode(&res); err != nil {
		t.Fatalf("duckdb.mjs printed no JSON: %v", err)
	}
	return res
}

// wantTypes are the columns INTERFACE.md promises in each file ("at least")
// and the type DuckDB must see for each.
var wantTypes = map[string]map[string]string{
	"runs.parquet": typed(map[string][]string{
		"VARCHAR":               {"run_key", "source", "family", "run_id", "algorithm_id", "policy_id", "task", "regime_id", "regime_origin", "anchor", "window"},
		"BIGINT":                {"seed", "n_steps", "n_intervals"},
		"BOOLEAN":               {"excluded"},
		"MAP(VARCHAR, VARCHAR)": {"run_meta", "reasons"},
		"DOUBLE": {"per_configuration_reward", "adaptation_speed", "recovery_time", "forgetting", "stability_variance",
			"performance_gap", "zero_shot_reward", "settled_reward", "settled_reward_policy", "effective_rank", "upper_bound"},
		"DOUBLE[]": {"stability_variance_per_interval"},
	}),
	"intervals.parquet": typed(map[string][]string{
		"VARCHAR": {"run_key", "family", "regime_id", "regime_origin"},
		"BIGINT":  {"interval_index", "encounter_index", "start_row", "end_row", "first_step", "last_step", "n_steps"},
		"DOUBLE":  {"mean", "variance", "adaptation_speed", "recovery_time", "zero_shot_reward", "tail_mean"},
	}),
	"run_summary.parquet": typed(map[string][]string{
		"VARCHAR":               {"run_key", "source", "family", "run_id", "algorithm_id", "policy_id", "task"},
		"BIGINT":                {"seed", "n_steps", "n_intervals", "n_shifts", "n_labels"},
		"BOOLEAN":               {"excluded"},
		"MAP(VARCHAR, VARCHAR)": {"run_meta", "reasons"},
		"DOUBLE": {"return_discounted", "return_undiscounted", "invalid_action_rate", "solve_rate", "regret", "effective_rank_run",
			"per_configuration_reward", "adaptation_speed", "recovery_time", "forgetting", "stability_variance",
			"performance_gap", "zero_shot_reward", "settled_reward", "settled_reward_policy", "effective_rank"},
	}),
	"families.parquet": typed(map[string][]string{
		"VARCHAR": {"family", "metric", "baseline", "test"},
		"BOOLEAN": {"higher_is_better", "power_warning"},
		"BIGINT":  {"n", "n_pairs"},
		"DOUBLE": {"mean", "std", "min", "max", "median", "iqm", "ci_low", "ci_high", "iqm_ci_low", "iqm_ci_high",
			"relative_adaptation_advantage", "p_value", "p_value_adjusted", "min_p", "diff_mean", "diff_ci_low", "diff_ci_high", "prob_improvement",
			"prob_improvement_ci_low", "prob_improvement_ci_high"},
		"MAP(VARCHAR, VARCHAR)": {"reasons"},
	}),
}

func typed(byType map[string][]string) map[string]string {
	m := map[string]string{}
	for typ, cols := range byType {
		for _, c := range cols {
			m[c] = typ
		}
	}
	return m
}

var snakeCase = regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`)

// checkParquet reads every Parquet file of a result in dir with DuckDB and
// checks what a notebook relies on: row counts (against the manifest and
// each other), column types, zstd compression, the crlbatch.* key/value
// metadata, no NaN or infinity anywhere, a null metric is NULL with a reason
// and a reason goes with a NULL (never 0 or NaN), and every value equals the
// one crlbatch's own Parquet reader sees.
func checkParquet(t *testing.T, f *fixture, dir string, runs int) {
	t.Helper()
	var man writers.Manifest
	data, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &man); err != nil {
		t.Fatalf("manifest.json: %v", err)
	}
	rows := map[string]int{}
	for _, o := range man.Outputs {
		if o.Rows != nil {
			rows[o.Name] = int(*o.Rows)
		}
	}
	var files []string
	for _, n := range outputNames {
		if strings.HasSuffix(n, ".parquet") {
			files = append(files, filepath.Join(dir, n))
		}
	}
	res := duckdb(t, f, files...)
	if len(res) != len(files) {
		t.Fatalf("DuckDB read %d files, want %d", len(res), len(files))
	}
	var schemaVersion string
	for _, p := range files {
		name := filepath.Base(p)
		d, ok := res[p]
		if !ok {
			t.Fatalf("DuckDB did not report %s", name)
		}
		t.Run(strings.TrimSuffix(name, ".parquet"), func(t *testing.T) {
			if want, ok := rows[name]; !ok || d.Rows != want {
				t.Errorf("DuckDB counts %d rows; the manifest says %d", d.Rows, want)
			}
			if len(d.Data) != d.Rows {
				t.Errorf("DuckDB returned %d rows of %d", len(d.Data), d.Rows)
			}
			if !reflect.DeepEqual(d.Compression, []string{"ZSTD"}) {
				t.Errorf("column chunk compression %v, want only ZSTD", d.Compression)
			}

			// Key/value metadata.
			for _, k := range []string{"crlbatch.version", "crlbatch.protocol", "crlbatch.params", "crlbatch.schema_version"} {
				if d.KV[k] == "" {
					t.Errorf("no key/value metadata %s (have %v)", k, keys(d.KV))
				}
			}
			if d.KV["crlbatch.version"] != f.version {
				t.Errorf("crlbatch.version %q, want %q (crlbatch version)", d.KV["crlbatch.version"], f.version)
			}
			if d.KV["crlbatch.protocol"] != "skyfall" {
				t.Errorf("crlbatch.protocol %q, want skyfall", d.KV["crlbatch.protocol"])
			}
			if d.KV["crlbatch.schema_version"] != pipeline.SchemaVersion {
				t.Errorf("crlbatch.schema_version %q, want %q", d.KV["crlbatch.schema_version"], pipeline.SchemaVersion)
			}
			if schemaVersion == "" {
				schemaVersion = d.KV["crlbatch.schema_version"]
			}
			var params, manParams map[string]any
			if err := json.Unmarshal([]byte(d.KV["crlbatch.params"]), &params); err != nil {
				t.Errorf("crlbatch.params is not a JSON object: %v", err)
			}
			if err := json.Unmarshal(man.Params, &manParams); err != nil {
				t.Errorf("manifest params: %v", err)
			}
			if !reflect.DeepEqual(params, manParams) {
				t.Errorf("crlbatch.params %s differs from the manifest's params %s", d.KV["crlbatch.params"], man.Params)
			}
			for _, k := range []string{"anchor", "alpha", "epsilon", "epsilon_fraction", "tail_fraction", "window", "zero_shot_window",
				"gamma", "bound", "group_by", "baseline", "bootstrap_resamples", "bootstrap_seed"} {
				if _, ok := params[k]; !ok {
					t.Errorf("crlbatch.params lacks %s", k)
				}
			}

			// Columns and types.
			types := d.types()
			for col, want := range wantTypes[name] {
				if got, ok := types[col]; !ok {
					t.Errorf("no column %s", col)
				} else if got != want {
					t.Errorf("column %s is %s in DuckDB, want %s", col, got, want)
				}
			}
			for _, c := range d.Columns {
				if !snakeCase.MatchString(c.Name) {
					t.Errorf("column %q is not snake_case", c.Name)
				}
				if strings.Contains(c.Type, "FLOAT") || strings.Contains(c.Type, "DECIMAL") {
					t.Errorf("column %s is %s: metrics are float64 (DOUBLE)", c.Name, c.Type)
				}
				if n := d.Nans[c.Name]; n > 0 {
					t.Errorf("column %s holds %d NaN or infinite values: an unavailable metric is NULL", c.Name, n)
				}
			}

			// Nulls and reasons: a DOUBLE column is NULL exactly where the
			// row's reasons name it.
			nullsWithReason := 0
			for i, row := range d.Data {
				reasons := map[string]string{}
				for _, kv := range asKVs(row["reasons"]) {
					reasons[kv.Key] = kv.Value
				}
				for _, c := range d.Columns {
					if c.Type != "DOUBLE" {
						continue
					}
					v := row[c.Name]
					why, has := reasons[c.Name]
					switch {
					case v == nil && !has:
						t.Errorf("row %d: %s is NULL without a reason (reasons %v)", i, c.Name, reasons)
					case v != nil && has:
						t.Errorf("row %d: %s = %v, but its reason says it is unavailable (%q): want NULL", i, c.Name, v, why)
					case v == nil && why == "":
						t.Errorf("row %d: %s is NULL with an empty reason", i, c.Name)
					case v == nil:
						nullsWithReason++
					}
				}
				for k := range reasons {
					if _, ok := types[k]; !ok {
						t.Errorf("row %d: a reason names %q, which is no column", i, k)
					}
				}
			}
			if nullsWithReason == 0 && name != "families.parquet" && name != "curves.parquet" { // every bucket of the sweep's curves has several runs
				t.Errorf("no NULL metric at all: the sweep should give some (the first interval has no shift)")
			}

			// The notebook sees the numbers crlbatch's own reader sees.
			fh, err := os.Open(p)
			if err != nil {
				t.Fatal(err)
			}
			defer fh.Close()
			rb, err := writers.ReadParquet(fh)
			if err != nil {
				t.Fatal(err)
			}
			if len(rb.Rows) != len(d.Data) {
				t.Fatalf("arrow-go reads %d rows, DuckDB %d", len(rb.Rows), len(d.Data))
			}
			if !reflect.DeepEqual(rb.Columns, columnNames(d)) {
				t.Errorf("columns: arrow-go %v, DuckDB %v", rb.Columns, columnNames(d))
			}
			bad := 0
			for i := range d.Data {
				for _, c := range d.Columns {
					dv, err := fromDuck(c.Type, d.Data[i][c.Name])
					if err != nil {
						t.Fatalf("row %d %s: %v", i, c.Name, err)
					}
					gv := fromArrow(rb.Rows[i][c.Name])
					if !reflect.DeepEqual(dv, gv) && bad < 5 {
						bad++
						t.Errorf("row %d %s: DuckDB %#v, arrow-go %#v", i, c.Name, dv, gv)
					}
				}
			}
		})
	}

	// Row counts agree with each other: one run_summary row per run, one
	// runs row per run and label, one intervals row per interval.
	sum := res[filepath.Join(dir, "run_summary.parquet")]
	if sum.Rows != runs {
		t.Errorf("run_summary has %d rows, want %d runs", sum.Rows, runs)
	}
	var labels, intervals int
	for _, r := range sum.Data {
		labels += atoi(r["n_labels"])
		intervals += atoi(r["n_intervals"])
	}
	if n := res[filepath.Join(dir, "runs.parquet")].Rows; n != labels {
		t.Errorf("runs has %d rows, want %d (runs × labels)", n, labels)
	}
	if n := res[filepath.Join(dir, "intervals.parquet")].Rows; n != intervals {
		t.Errorf("intervals has %d rows, want %d (sum of n_intervals)", n, intervals)
	}
	fam := res[filepath.Join(dir, "families.parquet")]
	if fam.Rows == 0 || fam.Rows%man.Families != 0 {
		t.Errorf("families has %d rows, not a multiple of the %d families", fam.Rows, man.Families)
	}
	// With --bound 1 every label has a ceiling: upper_bound is 1, never null.
	for i, r := range res[filepath.Join(dir, "runs.parquet")].Data {
		if v, _ := fromDuck("DOUBLE", r["upper_bound"]); v != 1.0 {
			t.Errorf("runs row %d: upper_bound %v, want 1 (--bound 1)", i, v)
			break
		}
	}
}

func keys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func columnNames(d duckFile) []string {
	var out []string
	for _, c := range d.Columns {
		out = append(out, c.Name)
	}
	return out
}

func atoi(v any) int {
	switch v := v.(type) {
	case string:
		n, _ := strconv.Atoi(v)
		return n
	case json.Number:
		n, _ := v.Int64()
		return int(n)
	}
	return -1
}

// asKVs reads DuckDB's JSON of a MAP: [{"key": k, "value": v}].
func asKVs(v any) []writers.KV {
	list, _ := v.([]any)
	out := make([]writers.KV, 0, len(list))
	for _, e := range list {
		m, _ := e.(map[string]any)
		k, _ := m["key"].(string)
		val, _ := m["value"].(string)
		out = append(out, writers.KV{Key: k, Value: val})
	}
	return out
}

// fromDuck turns DuckDB's JSON rendering of a value of type typ into the
// Go value fromArrow gives for the same cell.
func fromDuck(typ string, v any) (any, error) {
	if v == nil {
		return nil, nil
	}
	switch typ {
	case "DOUBLE":
		switch v := v.(type) {
		case json.Number:
			return strconv.ParseFloat(string(v), 64)
		case string: // NaN, Infinity
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return nil, fmt.Errorf("DOUBLE %q", v)
			}
			return f, nil
		}
	case "BIGINT":
		if s, ok := v.(string); ok {
			return strconv.ParseInt(s, 10, 64)
		}
	case "BOOLEAN", "VARCHAR":
		return v, nil
	case "MAP(VARCHAR, VARCHAR)":
		return asKVs(v), nil
	case "DOUBLE[]", "VARCHAR[]":
		list, ok := v.([]any)
		if !ok {
			break
		}
		out := make([]any, len(list))
		for i, e := range list {
			x, err := fromDuck(strings.TrimSuffix(typ, "[]"), e)
			if err != nil {
				return nil, err
			}
			out[i] = x
		}
		return out, nil
	}
	return nil, fmt.Errorf("unexpected %s value %#v", typ, v)
}

// fromArrow normalises writers.ReadParquet's values: a NaN stays NaN (and
// so never equals DuckDB's), an empty map is an empty slice.
func fromArrow(v any) any {
	switch v := v.(type) {
	case []writers.KV:
		if v == nil {
			return []writers.KV{}
		}
	case float64:
		if math.IsNaN(v) {
			return "NaN"
		}
	}
	return v
}

// TestDuckDBReadsLocalOutputs is the notebook's view of the local result
// that every bucket's result must equal byte for byte.
func TestDuckDBReadsLocalOutputs(t *testing.T) {
	t.Parallel()
	f := getFixture(t)
	t.Run("sweep", func(t *testing.T) { checkParquet(t, f, f.ref, f.runs) })
	t.Run("one object", func(t *testing.T) { checkParquet(t, f, f.refSingle, 1) })
}

// TestFixture checks the sweep: the local job read exactly the objects it
// must, of every compression, and none of the files it must skip.
func TestFixture(t *testing.T) {
	t.Parallel()
	f := getFixture(t)
	var man writers.Manifest
	data, err := os.ReadFile(filepath.Join(f.ref, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &man); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, o := range man.Objects {
		got = append(got, o.Key)
	}
	want := append([]string(nil), f.objects...)
	sort.Strings(want)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("the job read %q\nwant %q", got, want)
	}
	var plain, gz, zst, nested bool
	for _, k := range want {
		plain = plain || strings.HasSuffix(k, ".jsonl")
		gz = gz || strings.HasSuffix(k, ".jsonl.gz")
		zst = zst || strings.HasSuffix(k, ".jsonl.zst")
		nested = nested || strings.Count(k, "/") >= 4
	}
	if !plain || !gz || !zst || !nested {
		t.Errorf("the sweep lacks plain %v, gzip %v, zstd %v or deeply nested %v objects: %q", plain, gz, zst, nested, want)
	}
	if man.Runs != f.runs {
		t.Errorf("manifest runs %d, want %d", man.Runs, f.runs)
	}
}
