package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/crlbatch/crlbatch/writers"
)

var update = flag.Bool("update", false, "rewrite golden files")

// crl runs the program in-process and returns its exit status and output.
func crl(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), append([]string{"crlbatch"}, args...), &out, &errb)
	return code, out.String(), errb.String()
}

// workedExample writes the thirty-row trace of PROTOCOLS 1.4 and returns its
// folder.
func workedExample(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "in")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for i := 0; i < 30; i++ {
		r, l, origin := 0.8, "a", "null"
		switch {
		case i >= 20:
			r, l, origin = 0.5, "a_again", `"a"`
		case i >= 13:
			r, l = 0.6, "b"
		case i >= 10:
			r, l = []float64{0.1, 0.9, 0.9}[i-10], "b"
		}
		fmt.Fprintf(&b, `{"step": %d, "reward": %v, "regime_id": %q, "regime_origin": %s}`+"\n", i, r, l, origin)
	}
	if err := os.WriteFile(filepath.Join(dir, "seed000.jsonl"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func readParquet(t *testing.T, path string) *writers.ReadBack {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rb, err := writers.ReadParquet(f)
	if err != nil {
		t.Fatal(err)
	}
	return rb
}

func listDir(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		if os.IsNotExist(err) {
			return nil
		}
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}

func TestWorkedExampleEndToEnd(t *testing.T) {
	t.Parallel()
	in := workedExample(t)
	out := filepath.Join(t.TempDir(), "out")
	code, stdout, stderr := crl(t, "score", in, "--out", out, "--quiet")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "report: "+out+"/report.md") {
		t.Errorf("stdout does not say where the report is:\n%s", stdout)
	}
	want := []string{"curves.parquet", "families.parquet", "figure-interval-estimates.png", "figure-interval-estimates.svg", "figure-reward-none.png", "figure-reward-none.svg",
		"intervals.parquet", "manifest.json", "report.html", "report.md", "run_summary.parquet", "runs.parquet"}
	if got := listDir(t, out); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("output files %v, want %v (no .attrs sidecars)", got, want)
	}

	runs := readParquet(t, filepath.Join(out, "runs.parquet"))
	if len(runs.Rows) != 3 {
		t.Fatalf("%d rows in runs.parquet, want 3", len(runs.Rows))
	}
	// The worked example, column by column: nil is a Parquet null.
	exp := []map[string]any{
		{"regime_id": "a", "regime_origin": "a", "per_configuration_reward": 0.8, "adaptation_speed": nil, "recovery_time": nil, "forgetting": 0.3, "stability_variance": 0.0},
		{"regime_id": "b", "regime_origin": "b", "per_configuration_reward": 0.61, "adaptation_speed": 3.0, "recovery_time": 2.0, "forgetting": nil, "stability_variance": 0.0477},
		{"regime_id": "a_again", "regime_origin": "a", "per_configuration_reward": 0.5, "adaptation_speed": 1.0, "recovery_time": 1.0, "forgetting": 0.3, "stability_variance": 0.0},
	}
	for i, w := range exp {
		row := runs.Rows[i]
		for k, v := range w {
			got := row[k]
			switch v := v.(type) {
			case nil:
				if got != nil {
					t.Errorf("row %d %s = %v, want null", i, k, got)
				}
			case float64:
				g, ok := got.(float64)
				if !ok || math.Abs(g-v) > 5e-5 {
					t.Errorf("row %d %s = %v, want %v (4 d.p.)", i, k, got, v)
				}
			default:
				if got != v {
					t.Errorf("row %d %s = %v, want %v", i, k, got, v)
				}
			}
		}
		if row["performance_gap"] != nil || row["upper_bound"] != nil {
			t.Errorf("row %d: gap and bound must be null without a ceiling", i)
		}
		reasons := map[string]string{}
		for _, kv := range row["reasons"].([]writers.KV) {
			reasons[kv.Key] = kv.Value
		}
		for k, v := range row {
			if v == nil && k != "seed" && k != "run_id" && k != "algorithm_id" && k != "policy_id" && k != "task" {
				if reasons[k] == "" {
					t.Errorf("row %d: %s is null without a reason (reasons %v)", i, k, reasons)
				}
			}
		}
	}
	if r := runs.Rows[0]["reasons"].([]writers.KV); len(r) == 0 || r[0].Key != "adaptation_speed" || r[0].Value != "no shift precedes the first interval" {
		t.Errorf("a's first reason: %v", r)
	}
	for _, k := range []string{"crlbatch.version", "crlbatch.protocol", "crlbatch.params", "crlbatch.schema_version"} {
		if runs.Metadata[k] == "" {
			t.Errorf("runs.parquet lacks metadata %s", k)
		}
	}
	var params map[string]any
	if err := json.Unmarshal([]byte(runs.Metadata["crlbatch.params"]), &params); err != nil {
		t.Fatal(err)
	}
	if params["anchor"] != "segment" || params["alpha"] != 0.9 || params["window"] != "segment" {
		t.Errorf("params %v", params)
	}

	iv := readParquet(t, filepath.Join(out, "intervals.parquet"))
	if len(iv.Rows) != 3 || iv.Rows[1]["start_row"] != int64(10) || iv.Rows[1]["end_row"] != int64(20) ||
		iv.Rows[1]["first_step"] != int64(10) || iv.Rows[1]["last_step"] != int64(19) || iv.Rows[0]["adaptation_speed"] != nil {
		t.Errorf("intervals: %v", iv.Rows)
	}
	sum := readParquet(t, filepath.Join(out, "run_summary.parquet"))
	if len(sum.Rows) != 1 || sum.Rows[0]["n_shifts"] != int64(2) || sum.Rows[0]["regret"] != nil {
		t.Errorf("run summary: %v", sum.Rows)
	}
	fam := readParquet(t, filepath.Join(out, "families.parquet"))
	for _, r := range fam.Rows {
		if r["n"] == int64(1) && r["std"] != nil {
			t.Errorf("one seed: std %v, want null", r["std"])
		}
	}

	report, err := os.ReadFile(filepath.Join(out, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	// The report names the input as given; make it stable for the golden file.
	got := strings.ReplaceAll(string(report), in, "IN")
	golden := filepath.Join("testdata", "worked_example.report.md")
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	wantReport, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(wantReport) {
		t.Errorf("report.md differs from %s (run with -update and review the diff):\n%s", golden, got)
	}
}

// TestExistingOutputIsNotOverwritten: a one-off OUTPUT holding a result
// is refused without --overwrite; with it, the result is replaced in place
// (report where it was); a failed --overwrite leaves no result at all (no
// manifest: nothing to take for complete) and nothing it wrote.
func TestExistingOutputIsNotOverwritten(t *testing.T) {
	t.Parallel()
	in := workedExample(t)
	out := filepath.Join(t.TempDir(), "out")
	if code, _, stderr := crl(t, "score", in, "--out", out, "--quiet"); code != 0 {
		t.Fatal(stderr)
	}
	first, _ := os.ReadFile(filepath.Join(out, "manifest.json"))
	code, _, stderr := crl(t, "score", in, "--out", out, "--quiet")
	if code != exitUsage || !strings.Contains(stderr, "--overwrite") || !strings.Contains(stderr, "--history") {
		t.Errorf("second run: exit %d, %s", code, stderr)
	}
	if again, _ := os.ReadFile(filepath.Join(out, "manifest.json")); !bytes.Equal(first, again) {
		t.Error("a refused job changed the result")
	}
	code, stdout, stderr := crl(t, "score", in, "--out", out, "--quiet", "--overwrite")
	if code != 0 {
		t.Fatalf("--overwrite: exit %d, %s", code, stderr)
	}
	if !strings.Contains(stdout, "report: "+filepath.Join(out, "report.md")) {
		t.Errorf("stdout does not name the report in place: %s", stdout)
	}
	if again, _ := os.ReadFile(filepath.Join(out, "manifest.json")); bytes.Equal(first, again) {
		t.Error("the result was not replaced (the same manifest, attempt id and all)")
	}
	// The files the new manifest lists, and the manifest.
	var m struct{ Outputs []struct{ Name string } }
	data, _ := os.ReadFile(filepath.Join(out, "manifest.json"))
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	listed := []string{"manifest.json"}
	for _, o := range m.Outputs {
		listed = append(listed, o.Name)
	}
	slices.Sort(listed)
	ents := listDir(t, out)
	if !slices.Equal(ents, listed) || !slices.Contains(ents, "report.html") {
		t.Errorf("OUTPUT holds %v, its manifest lists %v", ents, listed)
	}
	code, stdout, _ = crl(t, "latest", out)
	if code != 0 || stdout != out+string(filepath.Separator)+"\n" {
		t.Errorf("latest: exit %d, %q", code, stdout)
	}
	os.WriteFile(filepath.Join(in, "z.jsonl"), []byte("{not json\n"), 0o644)
	if code, _, _ := crl(t, "score", in, "--out", out, "--quiet", "--overwrite"); code != exitData {
		t.Errorf("failed --overwrite: exit %d", code)
	}
	// Bad data fails the job before it publishes: the result is untouched.
	if again := listDir(t, out); !slices.Equal(again, ents) {
		t.Errorf("after a failed --overwrite OUTPUT holds %v, before %v", again, ents)
	}
}

// TestHistoryCommand: --history publishes under results/<attempt-id>/ and
// moves LATEST; latest prints it; --keep without --history, --history with
// --overwrite, and a one-off job into a nightly OUTPUT are usage errors;
// latest on an empty folder exits 1.
func TestHistoryCommand(t *testing.T) {
	t.Parallel()
	in := workedExample(t)
	out := filepath.Join(t.TempDir(), "nightly")
	code, stdout, stderr := crl(t, "score", in, "--out", out, "--quiet", "--history")
	if code != 0 {
		t.Fatal(stderr)
	}
	latest, err := os.ReadFile(filepath.Join(out, "LATEST"))
	if err != nil || !regexp.MustCompile(`^results/[0-9]{8}T[0-9]{6}Z-[0-9]{6}[0-9a-f]{6}/\n$`).Match(latest) {
		t.Fatalf("LATEST %q (%v)", latest, err)
	}
	result := filepath.Join(out, filepath.FromSlash(strings.TrimSpace(string(latest))))
	if !strings.Contains(stdout, "report: "+filepath.Join(result, "report.md")) {
		t.Errorf("stdout does not name the new report: %s", stdout)
	}
	code, got, _ := crl(t, "latest", out)
	if code != 0 || got != result+string(filepath.Separator)+"\n" {
		t.Errorf("latest: exit %d, %q, want %s/", code, got, result)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"score", in, "--out", out, "--quiet"}, "--history"},
		{[]string{"score", in, "--out", out, "--quiet", "--overwrite"}, "nightly history"},
		{[]string{"score", in, "--out", out, "--quiet", "--keep", "3"}, "only a nightly OUTPUT"},
		{[]string{"score", in, "--out", out, "--quiet", "--history", "--overwrite"}, "drop --overwrite"},
		{[]string{"score", in, "--out", out, "--quiet", "--history", "--keep", "-1"}, "--keep -1"},
		{[]string{"score", in, "--out", t.TempDir(), "--quiet", "--history", "--keep", "x"}, "--keep"},
	} {
		if code, _, stderr := crl(t, c.args...); code != exitUsage || !strings.Contains(stderr, c.want) {
			t.Errorf("%q: exit %d, %s; want %d and %q", c.args, code, stderr, exitUsage, c.want)
		}
	}
	if code, _, stderr := crl(t, "latest", t.TempDir()); code != exitData || !strings.Contains(stderr, "holds no complete result") {
		t.Errorf("latest on an empty folder: exit %d, %s", code, stderr)
	}
	if code, _, stderr := crl(t, "latest"); code != exitUsage {
		t.Errorf("latest without OUTPUT: exit %d, %s", code, stderr)
	}
}

func TestDateTemplate(t *testing.T) {
	t.Parallel()
	in := workedExample(t)
	dir := t.TempDir()
	code, stdout, stderr := crl(t, "score", in, "--out", filepath.Join(dir, "scores", "{date}"), "--quiet")
	if code != 0 {
		t.Fatal(stderr)
	}
	days := listDir(t, filepath.Join(dir, "scores"))
	if len(days) != 1 || len(days[0]) != len("2006-01-02") || !strings.Contains(stdout, days[0]) {
		t.Errorf("dated folders %v; stdout %s", days, stdout)
	}
}

func TestCorruptObjectFailsCleanly(t *testing.T) {
	t.Parallel()
	in := workedExample(t)
	bad := `{"reward": 1, "regime_id": "a"}` + "\n" + `{"reward": "oops", "regime_id": "a"}` + "\n"
	if err := os.WriteFile(filepath.Join(in, "z-broken.jsonl"), []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "out")
	code, _, stderr := crl(t, "score", in, "--out", out, "--quiet")
	if code != exitData {
		t.Fatalf("exit %d, want %d: %s", code, exitData, stderr)
	}
	for _, want := range []string{filepath.Join(in, "z-broken.jsonl"), "line 2", "reward"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("message %q does not name %q", stderr, want)
		}
	}
	if files := listDir(t, out); len(files) != 0 {
		t.Errorf("a failed job left %v", files)
	}

	// A truncated gzip object fails the same way.
	if err := os.Remove(filepath.Join(in, "z-broken.jsonl")); err != nil {
		t.Fatal(err)
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte(strings.Repeat(`{"reward": 1, "regime_id": "a"}`+"\n", 500)))
	zw.Close()
	if err := os.WriteFile(filepath.Join(in, "cut.jsonl.gz"), gz.Bytes()[:gz.Len()/2], 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr = crl(t, "score", in, "--out", out, "--quiet")
	if code != exitData || !strings.Contains(stderr, "cut.jsonl.gz") {
		t.Errorf("truncated gzip: exit %d, %s", code, stderr)
	}
	if files := listDir(t, out); len(files) != 0 {
		t.Errorf("a failed job left %v", files)
	}
}

func TestUsageErrors(t *testing.T) {
	t.Parallel()
	in := workedExample(t)
	dir := t.TempDir()
	badSpec := filepath.Join(dir, "bad.yaml")
	os.WriteFile(badSpec, []byte("name: bad\ncomponents:\n  - name: x\n    weight: 1\n    clip: [0, 1]\n    cadence: step\n    colour: red\n"), 0o644)
	partialMap := filepath.Join(dir, "map.json")
	os.WriteFile(partialMap, []byte(`{"a": 1, "b": 1}`), 0o644)
	job := filepath.Join(dir, "job.yaml")
	os.WriteFile(job, []byte("anchr: ceiling\n"), 0o644)
	out := filepath.Join(dir, "out")
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"unknown flag", []string{"score", in, "--out", out, "--no-such-flag"}, "no-such-flag"},
		{"no out", []string{"score", in}, "--out"},
		{"no input", []string{"score", "--out", out}, "INPUT"},
		{"tail fraction", []string{"score", in, "--out", out, "--tail-fraction", "1.5"}, "tail fraction"},
		{"anchor", []string{"score", in, "--out", out, "--anchor", "peak"}, "anchor"},
		{"ceiling without ceiling", []string{"score", in, "--out", out, "--anchor", "ceiling"}, "needs a ceiling"},
		{"spec unknown key", []string{"score", in, "--out", out, "--spec", badSpec}, "colour"},
		{"bound map missing label", []string{"score", in, "--out", out, "--bound-map", partialMap}, `"a_again"`},
		{"two ceilings", []string{"score", in, "--out", out, "--bound", "1", "--spec", "paper"}, "alternatives"},
		{"job file unknown key", []string{"score", in, "--out", out, "--config", job}, `"anchr"`},
		{"out inside input", []string{"score", in, "--out", filepath.Join(in, "results")}, "inside the input"},
		{"where", []string{"score", in, "--out", out, "--where", "novalue"}, "FIELD=VALUE"},
		{"bound interval", []string{"bound", "paper", "--interval", "0"}, "--interval"},
		{"unknown spec", []string{"bound", "nosuchspec"}, "nosuchspec"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, _, stderr := crl(t, c.args...)
			if code != exitUsage {
				t.Errorf("exit %d, want %d: %s", code, exitUsage, stderr)
			}
			if !strings.Contains(stderr, c.want) {
				t.Errorf("message %q does not mention %q", stderr, c.want)
			}
			if files := listDir(t, out); len(files) != 0 {
				t.Errorf("a usage error left %v", files)
			}
		})
	}
}

func TestBoundCommand(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"bound", "paper"}, "paper        per step 0.0000   final step 0.5000\n"},
		{[]string{"bound", "experiment"}, "experiment   per step 0.3333   final step 1.0000\n"},
		{[]string{"bound", "experiment", "--interval", "60", "--contains-final"}, "experiment   per step 0.3333   final step 1.0000\ninterval of 60 holding the final step: 0.3444\n"},
		{[]string{"bound", "../../configs/rewards/experiment.yaml"}, "experiment   per step 0.3333   final step 1.0000\n"},
	} {
		code, out, stderr := crl(t, c.args...)
		if code != 0 || out != c.want {
			t.Errorf("%v: exit %d, output %q, want %q (%s)", c.args, code, out, c.want, stderr)
		}
	}
}

func TestJobFile(t *testing.T) {
	t.Parallel()
	in := workedExample(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	job := filepath.Join(dir, "job.yaml")
	os.WriteFile(job, []byte(fmt.Sprintf("input: %s\nout: %s\nanchor: ceiling\nbound: 1.0\nquiet: true\n", in, out)), 0o644)
	code, _, stderr := crl(t, "score", "--config", job, "--alpha", "0.7")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	rb := readParquet(t, filepath.Join(out, "runs.parquet"))
	var params map[string]any
	json.Unmarshal([]byte(rb.Metadata["crlbatch.params"]), &params)
	if params["anchor"] != "ceiling" || params["alpha"] != 0.7 {
		t.Errorf("params %v: want the job file's anchor and the command line's alpha", params)
	}
	if rb.Rows[0]["upper_bound"] != 1.0 {
		t.Errorf("upper bound %v", rb.Rows[0]["upper_bound"])
	}
}

func TestVersion(t *testing.T) {
	t.Parallel()
	code, out, _ := crl(t, "version")
	if code != 0 || out != "crlbatch "+version+"\n" {
		t.Errorf("version: %d %q", code, out)
	}
}
