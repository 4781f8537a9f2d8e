package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
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
	var d struct {
		Moved   []map[string]string `json:"runs_moved"`
		Added   []map[string]string `json:"runs_added"`
		Removed []map[string]string `json:"runs_removed"`
	}
	diffJSON(t, old, new, &d)
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
	movedRows := diffChanges(t, old, new, "run_moved")
	for _, r := range movedRows {
		if r["run_key"] != key || r["family"] != "ppo" || r["old_value"] != "ewc" || r["new_value"] != "ppo" {
			t.Errorf("run_moved row %v, want %s, family ppo, old_value ewc, new_value ppo", r, key)
		}
	}
	if len(movedRows) != 1 {
		t.Errorf("%d run_moved rows, want 1", len(movedRows))
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
	var d struct {
		Metrics []struct {
			Family, Metric string
			DeltaMean      *float64 `json:"delta_mean"`
		} `json:"metrics"`
	}
	js := diffJSON(t, old, new, &d)
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

// TestNotebookHistoryAcrossVersions: the README's query over every night
// must read the history written by versions with different columns. An
// older crlbatch (before the probability of improvement's interval)
// wrote families partitions without prob_improvement_ci_low and _high;
// DuckDB binds a glob to its first file's schema, so without
// union_by_name the newer columns were not found. The old partition is
// made from a new one with those columns dropped, as ee630c9 wrote it.
func TestNotebookHistoryAcrossVersions(t *testing.T) {
	t.Parallel()
	node, err := exec.LookPath("node")
	dir, _ := filepath.Abs("../../integration")
	if err == nil {
		_, err = os.Stat(filepath.Join(dir, "node_modules", "@duckdb", "node-api", "package.json"))
	}
	if err != nil {
		if os.Getenv("CRLBATCH_REQUIRE_INTEGRATION") != "" {
			t.Fatalf("DuckDB under node: %v (.ci/install-services installs it)", err)
		}
		t.Skipf("DuckDB under node: %v (.ci/install-services installs it)", err)
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	query := regexp.MustCompile("(?s)```sql\n-- DuckDB: every night[^\n]*\n(.*?)```").FindSubmatch(readme)
	if query == nil {
		t.Fatal("README has no \"-- DuckDB: every night\" snippet")
	}
	base := t.TempDir()
	sql := func(script string) (string, error) {
		cmd := exec.Command(node, "duckdb_sql.mjs", base)
		cmd.Dir = dir
		cmd.Stdin = strings.NewReader(script)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Run(); err != nil {
			return "", &exec.ExitError{Stderr: errb.Bytes()}
		}
		return out.String(), nil
	}
	out := filepath.Join(base, "results", "nightly")
	in := notebookSweep(t)
	if code, _, stderr := crl(t, "score", in, "--out", out, "--history", "--quiet", "--bootstrap-resamples", "200"); code != 0 {
		t.Fatalf("score: exit %d: %s", code, stderr)
	}
	parts, _ := filepath.Glob(filepath.Join(out, "history", "families", "*", "*", "part.parquet"))
	if len(parts) != 1 {
		t.Fatalf("history partitions %v, want one", parts)
	}
	night := filepath.Base(filepath.Dir(filepath.Dir(parts[0])))
	old := filepath.Join(out, "history", "families", night, "attempt=20000101T000000Z-000000000000", "part.parquet")
	if err := os.MkdirAll(filepath.Dir(old), 0o755); err != nil {
		t.Fatal(err)
	}
	lit := func(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
	if _, err := sql("COPY (SELECT * EXCLUDE (prob_improvement_ci_low, prob_improvement_ci_high) FROM read_parquet(" + lit(parts[0]) +
		")) TO " + lit(old) + " (FORMAT parquet);\nSELECT 1;\n"); err != nil {
		t.Fatalf("writing the old partition: %s", err.(*exec.ExitError).Stderr)
	}
	// The README's query as written, then a newer column through the same
	// read_parquet call: both nights, the old one's new column null.
	q := strings.TrimSpace(string(query[1]))
	from := regexp.MustCompile(`FROM read_parquet\([^)]*\)`).FindString(q)
	if from == "" {
		t.Fatalf("the README's query has no read_parquet call: %s", q)
	}
	for _, s := range []string{q, "SELECT attempt, count(*) AS n, count(prob_improvement_ci_low) AS ci FROM " + strings.TrimPrefix(from, "FROM ") + " GROUP BY attempt ORDER BY attempt;"} {
		res, err := sql(s + "\n")
		if err != nil {
			t.Errorf("%s\nfails on a history written by two versions: %s", s, err.(*exec.ExitError).Stderr)
			continue
		}
		if !strings.Contains(res, "20000101T000000Z-000000000000") {
			t.Errorf("%s\nmisses the old night: %s", s, res)
		}
		if strings.Contains(s, "count(prob_improvement_ci_low)") && !regexp.MustCompile(`"ci":"0"`).MatchString(res) {
			t.Errorf("the old night's prob_improvement_ci_low is not null: %s", res)
		}
	}
}

// TestNotebookDiffMetricAddedOrRemoved: a metric one result has for a
// family and the other has not (contilab's diag_<name> when a night's runs
// stop recording that diagnostic, or a metric a newer crlbatch adds) is a
// change diff must name: it compared only the metrics both had and said
// nothing of the one that disappeared.
func TestNotebookDiffMetricAddedOrRemoved(t *testing.T) {
	t.Parallel()
	in := "../../configs/examples/contilab"
	nodiag := filepath.Join(t.TempDir(), "nodiag")
	if err := os.CopyFS(nodiag, os.DirFS(in)); err != nil {
		t.Fatal(err)
	}
	dropped := 0
	filepath.WalkDir(nodiag, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var keep []string
		for _, l := range strings.SplitAfter(string(data), "\n") {
			if strings.Contains(l, `"kind":"diag"`) {
				dropped++
				continue
			}
			keep = append(keep, l)
		}
		writeFile(t, p, strings.Join(keep, ""))
		return nil
	})
	if dropped == 0 {
		t.Fatal("the contilab example records no diagnostic")
	}
	old, new := filepath.Join(t.TempDir(), "old"), filepath.Join(t.TempDir(), "new")
	flags := []string{"--quiet", "--protocol", "contilab", "--bootstrap-resamples", "200"}
	for _, c := range [][2]string{{in, old}, {nodiag, new}} {
		if code, _, stderr := crl(t, append([]string{"score", c[0], "--out", c[1]}, flags...)...); code != 0 {
			t.Fatalf("score %s: exit %d: %s", c[0], code, stderr)
		}
	}
	var families []string
	for _, r := range readParquet(t, filepath.Join(old, "families.parquet")).Rows {
		if r["metric"] == "diag_effective_rank" {
			families = append(families, r["family"].(string))
		}
	}
	if len(families) == 0 {
		t.Fatal("the old result has no diag_effective_rank row")
	}
	type fm struct{ Family, Metric string }
	check := func(a, b, key string) {
		t.Helper()
		var d map[string]json.RawMessage
		diffJSON(t, a, b, &d)
		var got []fm
		json.Unmarshal(d[key], &got)
		var want []fm
		for _, f := range families {
			want = append(want, fm{f, "diag_effective_rank"})
		}
		if len(got) != len(want) {
			t.Fatalf("%s = %s, want diag_effective_rank of %v", key, d[key], families)
		}
		for i := range want {
			if got[i] != want[i] {
				t.Errorf("%s[%d] = %v, want %v", key, i, got[i], want[i])
			}
		}
	}
	check(old, new, "metrics_removed")
	check(new, old, "metrics_added")
	code, md, _ := crl(t, "diff", old, new)
	if code != 0 || !strings.Contains(md, "## Metrics removed") || !strings.Contains(md, "`diag_effective_rank`") {
		t.Errorf("the Markdown does not list the metric removed:\n%s", md)
	}
	added := diffChanges(t, new, old, "metric_added")
	for _, r := range added {
		if r["metric"] != "diag_effective_rank" || r["family"] == nil {
			t.Errorf("metric_added row %v", r)
		}
	}
	if len(added) != len(families) {
		t.Errorf("%d metric_added rows, want %d", len(added), len(families))
	}
}

// diffJSON runs `crlbatch diff OLD NEW --format json`, fails the test
// unless it exits 0, decodes what it prints into v and returns it.
func diffJSON(t *testing.T, old, new string, v any) string {
	t.Helper()
	code, js, stderr := crl(t, "diff", old, new, "--format", "json")
	if code != 0 {
		t.Fatalf("diff: exit %d: %s", code, stderr)
	}
	if err := json.Unmarshal([]byte(js), v); err != nil {
		t.Fatal(err)
	}
	return js
}

// diffChanges runs `crlbatch diff OLD NEW --format parquet`, fails the
// test unless it exits 0, and returns its rows of the change kind given.
func diffChanges(t *testing.T, old, new, change string) []map[string]any {
	t.Helper()
	out := filepath.Join(t.TempDir(), "changes.parquet")
	if code, _, stderr := crl(t, "diff", old, new, "--format", "parquet", "--out", out); code != 0 {
		t.Fatalf("diff parquet: exit %d: %s", code, stderr)
	}
	var rows []map[string]any
	for _, r := range readParquet(t, out).Rows {
		if r["change"] == change {
			rows = append(rows, r)
		}
	}
	return rows
}
