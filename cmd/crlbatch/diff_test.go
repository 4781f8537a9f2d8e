package main

import (
	"encoding/json"
	"maps"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// diffFixture scores the example sweep twice: old holds ppo and sac of the
// example as it is; new holds all three families of a copy in which one
// row of sac-s0 records an invalid action. Between them exactly this
// changed: the family ewc and its three runs were added, sac's
// invalid_action_rate rose by 1/(rows carrying the field)/3 seeds, and the
// --where parameter changed.
func diffFixture(t *testing.T) (old, new string, wantDelta float64) {
	t.Helper()
	tmp := t.TempDir()
	in := filepath.Join(tmp, "in")
	if err := os.CopyFS(in, os.DirFS("../../configs/example-sweep")); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(in, "sac", "sac-s0.jsonl")
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	s := string(data)
	carrying := strings.Count(s, `"invalid_action":`)
	i := strings.Index(s, `"invalid_action":false`)
	if i < 0 || carrying == 0 {
		t.Fatal("sac-s0.jsonl has no valid action to flip")
	}
	s = s[:i] + `"invalid_action":true` + s[i+len(`"invalid_action":false`):]
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	old, new = filepath.Join(tmp, "old"), filepath.Join(tmp, "new")
	if code, _, stderr := crl(t, "score", "../../configs/example-sweep", "--out", old, "--quiet", "--where", "algorithm_id=ppo", "--where", "algorithm_id=sac"); code != 0 {
		t.Fatalf("score old: exit %d: %s", code, stderr)
	}
	if code, _, stderr := crl(t, "score", in, "--out", new, "--quiet"); code != 0 {
		t.Fatalf("score new: exit %d: %s", code, stderr)
	}
	return old, new, 1 / float64(carrying) / 3
}

// familiesRow reads one family × metric row of a result's families.parquet.
func familiesRow(t *testing.T, dir, family, metric string) map[string]any {
	t.Helper()
	for _, r := range readParquet(t, filepath.Join(dir, "families.parquet")).Rows {
		if r["family"] == family && r["metric"] == metric {
			return r
		}
	}
	t.Fatalf("%s has no row %s/%s", dir, family, metric)
	return nil
}

func TestDiffReportsExactlyTheChanges(t *testing.T) {
	t.Parallel()
	old, new, wantDelta := diffFixture(t)
	code, stdout, stderr := crl(t, "diff", old, new, "--format", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal([]byte(stdout), &raw); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, stdout)
	}
	var metrics []map[string]any
	if err := json.Unmarshal(raw["metrics"], &metrics); err != nil {
		t.Fatal(err)
	}
	if len(metrics) != 1 || metrics[0]["family"] != "sac" || metrics[0]["metric"] != "invalid_action_rate" {
		t.Fatalf("metrics changed %v, want sac/invalid_action_rate alone", metrics)
	}
	m := metrics[0]
	o, n := familiesRow(t, old, "sac", "invalid_action_rate"), familiesRow(t, new, "sac", "invalid_action_rate")
	for _, c := range []struct {
		key  string
		want float64
	}{
		{"old_mean", o["mean"].(float64)}, {"new_mean", n["mean"].(float64)}, {"delta_mean", wantDelta},
		{"old_iqm", o["iqm"].(float64)}, {"new_iqm", n["iqm"].(float64)},
		{"delta_iqm", n["iqm"].(float64) - o["iqm"].(float64)},
	} {
		if got, ok := m[c.key].(float64); !ok || math.Abs(got-c.want) > 1e-9 {
			t.Errorf("%s = %v, want %v", c.key, m[c.key], c.want)
		}
	}
	overlaps := func(lo1, hi1, lo2, hi2 float64) bool { return !(hi1 < lo2 || hi2 < lo1) }
	if want := overlaps(o["ci_low"].(float64), o["ci_high"].(float64), n["ci_low"].(float64), n["ci_high"].(float64)); m["mean_ci_overlap"] != want {
		t.Errorf("mean_ci_overlap %v, want %v", m["mean_ci_overlap"], want)
	}
	if want := overlaps(o["iqm_ci_low"].(float64), o["iqm_ci_high"].(float64), n["iqm_ci_low"].(float64), n["iqm_ci_high"].(float64)); m["iqm_ci_overlap"] != want {
		t.Errorf("iqm_ci_overlap %v, want %v", m["iqm_ci_overlap"], want)
	}
	var fams, removed []string
	json.Unmarshal(raw["families_added"], &fams)
	json.Unmarshal(raw["families_removed"], &removed)
	if strings.Join(fams, ",") != "ewc" || len(removed) != 0 {
		t.Errorf("families added %v, removed %v; want [ewc], []", fams, removed)
	}
	var runs []map[string]string
	json.Unmarshal(raw["runs_added"], &runs)
	if len(runs) != 3 {
		t.Fatalf("runs added %v, want ewc's three", runs)
	}
	for s, r := range runs {
		if r["family"] != "ewc" || !strings.HasPrefix(r["run_key"], "run_id=ewc-s"+itoa(s)+"|") {
			t.Errorf("run added %v, want ewc-s%d", r, s)
		}
	}
	if string(raw["runs_removed"]) != "[]" {
		t.Errorf("runs removed %s, want none", raw["runs_removed"])
	}
	var params []map[string]json.RawMessage
	json.Unmarshal(raw["params"], &params)
	if len(params) != 1 || string(params[0]["key"]) != `"where"` || string(params[0]["new"]) != "[]" {
		t.Errorf("params changed %s, want where alone, now []", raw["params"])
	}

	// The Markdown says the same.
	code, md, stderr := crl(t, "diff", old, new)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"## Families added\n\n- `ewc`\n", "## Runs added", "## Parameters changed", "| `where`", "## Metrics changed", "| `sac`  | `invalid_action_rate` |"} {
		if !strings.Contains(md, want) {
			t.Errorf("the Markdown lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(md, "Families removed") || strings.Contains(md, "Runs removed") {
		t.Errorf("the Markdown lists removals:\n%s", md)
	}

	// Parquet, one row per change, read back.
	out := filepath.Join(t.TempDir(), "diff.parquet")
	if code, _, stderr := crl(t, "diff", old, new, "--format", "parquet", "--out", out); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var kinds []string
	for _, r := range readParquet(t, out).Rows {
		kinds = append(kinds, r["change"].(string))
		if r["change"] == "metric_changed" {
			if d, ok := r["delta_mean"].(float64); !ok || math.Abs(d-wantDelta) > 1e-9 {
				t.Errorf("parquet delta_mean %v, want %v", r["delta_mean"], wantDelta)
			}
		} else if r["delta_mean"] != nil {
			t.Errorf("a %s row has delta_mean %v, want null", r["change"], r["delta_mean"])
		}
	}
	if got := strings.Join(kinds, ","); got != "metric_changed,family_added,run_added,run_added,run_added,param_changed" {
		t.Errorf("parquet changes %s", got)
	}
}

func TestDiffOfAResultWithItselfIsEmpty(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ name, dir string }{
		{"sweep", "testdata/golden/sweep"}, {"safecrl", "testdata/golden/safecrl"},
		{"contilab", "testdata/golden/contilab"}, {"skillshift", "testdata/golden/skillshift"},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, md, stderr := crl(t, "diff", c.dir, c.dir)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			if !strings.HasSuffix(md, "\n\nNo changes.\n") {
				t.Errorf("diff of a result with itself:\n%s", md)
			}
			code, js, _ := crl(t, "diff", c.dir, c.dir, "--format", "json")
			var d map[string]any
			if code != 0 || json.Unmarshal([]byte(js), &d) != nil {
				t.Fatalf("exit %d, JSON %s", code, js)
			}
			for _, k := range []string{"metrics", "families_added", "families_removed", "runs_added", "runs_removed", "params"} {
				if l, ok := d[k].([]any); !ok || len(l) != 0 {
					t.Errorf("%s = %v, want []", k, d[k])
				}
			}
		})
	}
}

// copyResult copies a result folder to dir.
func copyResult(t *testing.T, from, to string) {
	t.Helper()
	if err := os.CopyFS(to, os.DirFS(from)); err != nil {
		t.Fatal(err)
	}
}

func TestDiffNights(t *testing.T) {
	t.Parallel()
	old, new, _ := diffFixture(t)
	hist := filepath.Join(t.TempDir(), "nightly")
	ids := []string{"20261129T020000Z-0a1b", "20261130T020000Z-9f3c", "20261201T020000Z-77aa", "20261202T020000Z-1234"}
	copyResult(t, old, filepath.Join(hist, "results", ids[0]))
	copyResult(t, old, filepath.Join(hist, "results", ids[1]))
	copyResult(t, new, filepath.Join(hist, "results", ids[2]))
	// A newer attempt that never finished: no manifest.
	copyResult(t, new, filepath.Join(hist, "results", ids[3]))
	if err := os.Remove(filepath.Join(hist, "results", ids[3], "manifest.json")); err != nil {
		t.Fatal(err)
	}
	direct := func() map[string]json.RawMessage {
		_, js, _ := crl(t, "diff", filepath.Join(hist, "results", ids[1]), filepath.Join(hist, "results", ids[2]), "--format", "json")
		var d map[string]json.RawMessage
		if err := json.Unmarshal([]byte(js), &d); err != nil {
			t.Fatal(err)
		}
		return d
	}()
	check := func(t *testing.T) {
		code, js, stderr := crl(t, "diff", hist, "--nights", "2", "--format", "json")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		var d map[string]json.RawMessage
		if err := json.Unmarshal([]byte(js), &d); err != nil {
			t.Fatal(err)
		}
		for k, v := range direct {
			if string(d[k]) != string(v) {
				t.Errorf("%s: --nights 2 gives %s, the two newest complete results %s", k, d[k], v)
			}
		}
	}
	t.Run("no LATEST", check)
	if err := os.WriteFile(filepath.Join(hist, "LATEST"), []byte("results/"+ids[2]+"/\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Run("LATEST", check)
	// --nights 3: the newest against the one two results before it.
	code, js, stderr := crl(t, "diff", hist, "--nights", "3", "--format", "json")
	if code != 0 || !strings.Contains(js, `"old": "`+filepath.Join(hist, "results", ids[0])+`"`) {
		t.Errorf("--nights 3: exit %d, %s %s", code, js, stderr)
	}
	if code, _, stderr := crl(t, "diff", hist, "--nights", "4"); code != 2 || !strings.Contains(stderr, "3 complete result(s)") {
		t.Errorf("--nights 4 with three complete results: exit %d, %s", code, stderr)
	}
	// LATEST naming the unfinished attempt is bad data.
	if err := os.WriteFile(filepath.Join(hist, "LATEST"), []byte("results/"+ids[3]+"/\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := crl(t, "diff", hist, "--nights", "2"); code != 1 || !strings.Contains(stderr, "not a complete result") {
		t.Errorf("LATEST naming an incomplete result: exit %d, %s", code, stderr)
	}
}

func TestDiffErrors(t *testing.T) {
	t.Parallel()
	notResult := t.TempDir()
	broken := filepath.Join(t.TempDir(), "broken")
	copyResult(t, "testdata/golden/sweep", broken)
	if err := os.Remove(filepath.Join(broken, "run_summary.parquet")); err != nil {
		t.Fatal(err)
	}
	// A result whose manifest or families.parquet is damaged is bad data
	// (exit 1), which diff's help must say among its exit statuses.
	badManifest := filepath.Join(t.TempDir(), "badmanifest")
	copyResult(t, "testdata/golden/sweep", badManifest)
	writeFile(t, filepath.Join(badManifest, "manifest.json"), "{broken")
	badFamilies := filepath.Join(t.TempDir(), "badfamilies")
	copyResult(t, "testdata/golden/sweep", badFamilies)
	writeFile(t, filepath.Join(badFamilies, "families.parquet"), "garbage")
	// A nightly history OUTPUT given as a result: the message says how to
	// compare its nights.
	hist := filepath.Join(t.TempDir(), "nightly")
	copyResult(t, "testdata/golden/sweep", filepath.Join(hist, "results", "20261130T020000Z-000000000000"))
	writeFile(t, filepath.Join(hist, "LATEST"), "results/20261130T020000Z-000000000000/\n")
	_, help, _ := crl(t, "diff", "--help")
	if !strings.Contains(strings.Join(strings.Fields(help), " "), "1 when a result cannot be read as one") {
		t.Errorf("diff --help does not give exit status 1:\n%s", help)
	}
	for _, c := range []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"one argument", []string{"diff", "testdata/golden/sweep"}, 2, "want OLD and NEW"},
		{"no result", []string{"diff", notResult, "testdata/golden/sweep"}, 2, "not a complete result (no manifest.json)"},
		{"history output", []string{"diff", hist, "testdata/golden/sweep"}, 2, "holds a nightly history (LATEST): compare its nights with crlbatch diff --nights N " + hist + ", or name one result, " + filepath.Join(hist, "results") + "/<attempt-id>"},
		{"no folder", []string{"diff", filepath.Join(notResult, "nope"), "testdata/golden/sweep"}, 2, "no such file or folder"},
		{"format", []string{"diff", "testdata/golden/sweep", "testdata/golden/sweep", "--format", "xml"}, 2, "want markdown, json or parquet"},
		{"parquet to stdout", []string{"diff", "testdata/golden/sweep", "testdata/golden/sweep", "--format", "parquet"}, 2, "needs --out"},
		{"nights 1", []string{"diff", notResult, "--nights", "1"}, 2, "want at least 2"},
		{"damaged manifest", []string{"diff", badManifest, "testdata/golden/sweep"}, 1, filepath.Join(badManifest, "manifest.json") + ": invalid character"},
		{"damaged families.parquet", []string{"diff", "testdata/golden/sweep", badFamilies}, 1, filepath.Join(badFamilies, "families.parquet") + ": "},
		{"missing table", []string{"diff", broken, "testdata/golden/sweep"}, 1, "run_summary.parquet: listed in manifest.json but missing"},
		{"out a folder", []string{"diff", "testdata/golden/sweep", "testdata/golden/sweep", "--out", notResult}, 2, "is a folder: want a file"},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, _, stderr := crl(t, c.args...)
			if code != c.code || !strings.Contains(stderr, c.msg) {
				t.Errorf("exit %d, %q; want %d and %q", code, stderr, c.code, c.msg)
			}
		})
	}
}

// TestDiffOutInsideAResult: --out inside a result compared (or, with
// --nights, the history's results/, history/ or its LATEST) is a usage
// error that writes nothing: `--out OLD/manifest.json` replaced a complete
// result's manifest with Markdown.
func TestDiffOutInsideAResult(t *testing.T) {
	t.Parallel()
	old := filepath.Join(t.TempDir(), "old")
	copyResult(t, "testdata/golden/sweep", old)
	hist := filepath.Join(t.TempDir(), "nightly")
	copyResult(t, "testdata/golden/sweep", filepath.Join(hist, "results", "20261129T020000Z-000000000000"))
	copyResult(t, "testdata/golden/sweep", filepath.Join(hist, "results", "20261130T020000Z-000000000000"))
	for _, args := range [][]string{
		{"diff", old, "testdata/golden/sweep", "--out", filepath.Join(old, "manifest.json")},
		{"diff", "testdata/golden/sweep", old, "--out", filepath.Join(old, "sub", "changes.md")},
		{"diff", hist, "--nights", "2", "--format", "parquet", "--out", filepath.Join(hist, "results", "changes.parquet")},
		{"diff", hist, "--nights", "2", "--out", filepath.Join(hist, "LATEST")},
		{"diff", hist, "--nights", "2", "--out", filepath.Join(hist, "history", "x.md")},
	} {
		before := snapshotDir(t, old)
		beforeHist := snapshotDir(t, hist)
		code, _, stderr := crl(t, args...)
		if code != 2 || !strings.Contains(stderr, "lies inside") {
			t.Errorf("%q: exit %d, %s; want 2 saying --out lies inside a result", args, code, stderr)
		}
		if !maps.Equal(snapshotDir(t, old), before) || !maps.Equal(snapshotDir(t, hist), beforeHist) {
			t.Errorf("%q changed a result", args)
		}
	}
}

// snapshotDir maps every file under dir to its contents.
func snapshotDir(t *testing.T, dir string) map[string]string {
	t.Helper()
	m := map[string]string{}
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			b, _ := os.ReadFile(p)
			m[p] = string(b)
		}
		return nil
	})
	return m
}
