package main

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/crlbatch/crlbatch/writers"
)

// badSweep writes a sweep of four objects, two runs of two families, twice:
// clean, and with bad rows at the given lines of the given objects. It
// returns the two folders.
func badSweep(t *testing.T, bad map[string]map[int]string) (clean, dirty string) {
	t.Helper()
	dir := t.TempDir()
	clean, dirty = filepath.Join(dir, "clean"), filepath.Join(dir, "dirty")
	runs := []struct{ file, run, algo, seed string }{
		{"a.jsonl", "r1", "ppo", "0"}, {"b.jsonl", "r2", "ppo", "1"}, {"c.jsonl", "r3", "sac", "0"}, {"d.jsonl", "r4", "sac", "1"},
	}
	for k, r := range runs {
		var good []string
		for i := 0; i < 40; i++ {
			label := "a"
			if i >= 20 {
				label = "b"
			}
			reward := float64((i*7+k*3)%11)/10 + float64(i)/100
			good = append(good, fmt.Sprintf(`{"run_id":%q,"seed":%s,"algorithm_id":%q,"step":%d,"regime_id":%q,"reward":%v}`, r.run, r.seed, r.algo, i, label, reward))
		}
		writeFile(t, filepath.Join(clean, r.file), strings.Join(good, "\n")+"\n")
		var mixed []string
		for line := 1; len(good) > 0 || bad[r.file][line] != ""; line++ {
			if b := bad[r.file][line]; b != "" {
				mixed = append(mixed, b)
				continue
			}
			mixed, good = append(mixed, good[0]), good[1:]
		}
		writeFile(t, filepath.Join(dirty, r.file), strings.Join(mixed, "\n")+"\n")
	}
	return clean, dirty
}

// threeBadRows are three bad rows in two objects: b.jsonl lines 5 and 12,
// d.jsonl line 3. d's row comes first in its file, so a concurrent read
// may well meet it first; b line 5 is first in canonical order.
var threeBadRows = map[string]map[int]string{
	"b.jsonl": {
		5:  `{"run_id":"r2","seed":1,"algorithm_id":"ppo","regime_id":"zz","reward":"0.5"}`,
		12: `{"run_id":"r9","seed":1,"algorithm_id":"ppo","regime_id":"zz","reward":1`,
	},
	"d.jsonl": {
		3: `{"run_id":"r4","seed":1,"algorithm_id":"sac","reward":0.3}`,
	},
}

func readManifest(t *testing.T, dir string) writers.Manifest {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m writers.Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestMaxBadRows: three bad rows in two objects fail the job by default,
// naming the first in key and line order; --max-bad-rows 3 skips them,
// lists them in the manifest and the report, and scores exactly what the
// sweep without them scores; --max-bad-rows 2 fails on the third.
func TestMaxBadRows(t *testing.T) {
	t.Parallel()
	clean, dirty := badSweep(t, threeBadRows)
	dir := t.TempDir()
	score := func(in, out string, extra ...string) (int, string, string) {
		args := append([]string{"score", in, "--out", filepath.Join(dir, out), "--quiet", "--bootstrap-resamples", "200"}, extra...)
		return crl(t, args...)
	}

	for _, conc := range []string{"1", "2", "8"} {
		code, _, stderr := score(dirty, "default"+conc, "--concurrency", conc)
		want := filepath.Join(dirty, "b.jsonl") + ": line 5: reward: got string, want number"
		if code != exitData || !strings.Contains(stderr, want) {
			t.Errorf("--concurrency %s: exit %d, %q; want 1 and %q", conc, code, stderr, want)
		}
		if files := listDir(t, filepath.Join(dir, "default"+conc)); len(files) != 0 {
			t.Errorf("a failed job left %v", files)
		}
		code, _, stderr = score(dirty, "two"+conc, "--concurrency", conc, "--max-bad-rows", "2")
		want = filepath.Join(dirty, "d.jsonl") + ": line 3: regime_id: missing (a string is required) (bad row 3, past --max-bad-rows 2)"
		if code != exitData || !strings.Contains(stderr, want) {
			t.Errorf("--max-bad-rows 2 --concurrency %s: exit %d, %q; want 1 and %q", conc, code, stderr, want)
		}
		if files := listDir(t, filepath.Join(dir, "two"+conc)); len(files) != 0 {
			t.Errorf("a failed job left %v", files)
		}
	}

	if code, _, stderr := score(clean, "clean"); code != 0 {
		t.Fatal(stderr)
	}
	var manifests [][]writers.SkippedRow
	for _, conc := range []string{"1", "8"} {
		out := "three" + conc
		code, stdout, stderr := score(dirty, out, "--max-bad-rows", "3", "--concurrency", conc)
		if code != 0 {
			t.Fatalf("--max-bad-rows 3: exit %d: %s", code, stderr)
		}
		if !strings.Contains(stdout, "(160 rows)") {
			t.Errorf("stdout: %s", stdout)
		}
		m := readManifest(t, filepath.Join(dir, out))
		manifests = append(manifests, m.Skipped)
		want := []writers.SkippedRow{
			{Object: filepath.Join(dirty, "b.jsonl"), Line: 5, Reason: "reward: got string, want number"},
			{Object: filepath.Join(dirty, "b.jsonl"), Line: 12, Reason: "invalid JSON: unexpected end of line, want ',' or '}'"},
			{Object: filepath.Join(dirty, "d.jsonl"), Line: 3, Reason: "regime_id: missing (a string is required)"},
		}
		if len(m.Skipped) != 3 {
			t.Fatalf("skipped %v", m.Skipped)
		}
		for i := range want {
			got := m.Skipped[i]
			if !strings.HasSuffix(got.Object, want[i].Object) || got.Line != want[i].Line || !strings.HasSuffix(got.Reason, strings.TrimPrefix(want[i].Reason, "invalid JSON: ")) {
				t.Errorf("skipped[%d] = %+v, want %+v", i, got, want[i])
			}
		}
		for _, o := range m.Objects {
			if o.RowsRead != 40 {
				t.Errorf("object %s: %d rows read, want 40", o.Key, o.RowsRead)
			}
		}
		report, err := os.ReadFile(filepath.Join(dir, out, "report.md"))
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range []string{"3 bad rows skipped under --max-bad-rows 3", "b.jsonl` line 5: reward: got string, want number",
			"b.jsonl` line 12: ", "d.jsonl` line 3: regime_id: missing"} {
			if !strings.Contains(string(report), s) {
				t.Errorf("report.md does not say %q", s)
			}
		}
		// The results are those of the sweep without the bad rows.
		for _, name := range []string{"runs.parquet", "intervals.parquet", "run_summary.parquet", "families.parquet"} {
			a, _ := os.ReadFile(filepath.Join(dir, "clean", name))
			b, _ := os.ReadFile(filepath.Join(dir, out, name))
			if len(a) == 0 || !sameTable(t, a, b) {
				t.Errorf("%s differs from the clean sweep's", name)
			}
		}
	}
	if !reflect.DeepEqual(manifests[0], manifests[1]) {
		t.Errorf("skipped lists differ between --concurrency 1 and 8:\n%v\n%v", manifests[0], manifests[1])
	}

	// A clean sweep skips nothing: the manifest's list is empty, not null.
	data, _ := os.ReadFile(filepath.Join(dir, "clean", "manifest.json"))
	if !bytes.Contains(data, []byte(`"skipped": []`)) {
		t.Errorf("clean manifest: %s", data)
	}
	if code, _, stderr := score(dirty, "neg", "--max-bad-rows", "-1"); code != exitUsage || !strings.Contains(stderr, "--max-bad-rows") {
		t.Errorf("--max-bad-rows -1: exit %d %s", code, stderr)
	}
}

// TestMaxBadRowsNeverSkipsObjects: a corrupt object fails the job whatever
// --max-bad-rows says.
func TestMaxBadRowsNeverSkipsObjects(t *testing.T) {
	t.Parallel()
	_, dirty := badSweep(t, threeBadRows)
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte(strings.Repeat(`{"reward": 1, "regime_id": "a"}`+"\n", 500)))
	zw.Close()
	writeFile(t, filepath.Join(dirty, "e.jsonl.gz"), gz.String()[:gz.Len()/2])
	out := filepath.Join(t.TempDir(), "out")
	code, _, stderr := crl(t, "score", dirty, "--out", out, "--quiet", "--max-bad-rows", "1000")
	if code != exitData || !strings.Contains(stderr, "e.jsonl.gz") || !strings.Contains(stderr, "corrupt gzip stream") {
		t.Errorf("exit %d: %s", code, stderr)
	}
	long := filepath.Join(t.TempDir(), "long")
	writeFile(t, filepath.Join(long, "x.jsonl"), `{"reward":1,"regime_id":"a"}`+"\n"+`{"reward":1,"regime_id":"`+strings.Repeat("a", 300)+`"}`+"\n")
	code, _, stderr = crl(t, "score", long, "--out", out, "--quiet", "--max-bad-rows", "1000", "--max-line-bytes", "100")
	if code != exitData || !strings.Contains(stderr, "--max-line-bytes") {
		t.Errorf("exit %d: %s", code, stderr)
	}
}

// TestMaxBadRowsRecordProtocols: the record protocols skip bad JSON and
// rows whose fields their scorer rejects, as skyfall does.
func TestMaxBadRowsRecordProtocols(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	src := "../../configs/examples/safecrl"
	clean, dirty := filepath.Join(dir, "clean"), filepath.Join(dir, "dirty")
	bad := map[string][]string{
		"cpo/cpo-s1.jsonl":         {`{"run_id":"cpo-s1","seed":1,"algorithm_id":"cpo","policy_id":"mlp","task":"reach","episode":3,"return":"high"}`, `not json`},
		"ppo_lag/ppo_lag-s2.jsonl": {`{"run_id":"ppo_lag-s2","seed":2,"algorithm_id":"ppo_lag","policy_id":"mlp","episode":4,"return":1}`},
	}
	for _, f := range []string{"cpo/cpo-s0.jsonl", "cpo/cpo-s1.jsonl", "cpo/cpo-s2.jsonl", "ppo_lag/ppo_lag-s0.jsonl", "ppo_lag/ppo_lag-s1.jsonl", "ppo_lag/ppo_lag-s2.jsonl"} {
		data, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(clean, f), string(data))
		lines := strings.SplitAfter(string(data), "\n")
		var mixed []string
		for i, l := range lines {
			if i > 0 && i <= len(bad[f]) {
				mixed = append(mixed, bad[f][i-1]+"\n")
			}
			mixed = append(mixed, l)
		}
		writeFile(t, filepath.Join(dirty, f), strings.Join(mixed, ""))
	}
	score := func(in, out string, extra ...string) (int, string) {
		args := append([]string{"score", in, "--protocol", "safecrl", "--out", filepath.Join(dir, "out-"+out), "--quiet", "--bootstrap-resamples", "200"}, extra...)
		code, _, stderr := crl(t, args...)
		return code, stderr
	}
	if code, stderr := score(dirty, "default"); code != exitData || !strings.Contains(stderr, filepath.Join(dirty, "cpo/cpo-s1.jsonl")+": line 2: return: got string, want number") {
		t.Errorf("default: exit %d: %s", code, stderr)
	}
	if code, stderr := score(dirty, "two", "--max-bad-rows", "2"); code != exitData || !strings.Contains(stderr, "ppo_lag-s2.jsonl: line 2: task: missing") {
		t.Errorf("--max-bad-rows 2: exit %d: %s", code, stderr)
	}
	if code, stderr := score(clean, "clean"); code != 0 {
		t.Fatal(stderr)
	}
	if code, stderr := score(dirty, "three", "--max-bad-rows", "3"); code != 0 {
		t.Fatal(stderr)
	}
	m := readManifest(t, filepath.Join(dir, "out-three"))
	if len(m.Skipped) != 3 || m.Skipped[0].Line != 2 || m.Skipped[1].Line != 4 || !strings.HasSuffix(m.Skipped[2].Object, "ppo_lag-s2.jsonl") {
		t.Errorf("skipped %+v", m.Skipped)
	}
	for _, name := range []string{"runs.parquet", "run_summary.parquet", "families.parquet"} {
		a, _ := os.ReadFile(filepath.Join(dir, "out-clean", name))
		b, _ := os.ReadFile(filepath.Join(dir, "out-three", name))
		if len(a) == 0 || !sameTable(t, a, b) {
			t.Errorf("%s differs from the clean sweep's", name)
		}
	}
}

// TestValidateListsEveryProblem: validate reads past every bad row and
// every broken object, lists each problem once in key and line order,
// counts them, and exits 1; 0 on a clean sweep, and when the bad rows are
// all it found and --max-bad-rows covers them.
func TestValidateListsEveryProblem(t *testing.T) {
	t.Parallel()
	bad := map[string]map[int]string{
		"a.jsonl": {1: `{"run_id":"r1","seed":0,"algorithm_id":"ppo","regime_id":"a","reward":NaN}`, 30: `[1,2]`},
		"b.jsonl": threeBadRows["b.jsonl"],
		"d.jsonl": {3: threeBadRows["d.jsonl"][3], 4: `{"run_id":"r4","seed":1,"seed":1,"regime_id":"a","reward":1}`, 41: `{"reward":1e999,"regime_id":"a"}`},
	}
	clean, dirty := badSweep(t, bad)
	for _, conc := range []string{"1", "8"} {
		code, stdout, stderr := crl(t, "validate", dirty, "--quiet", "--concurrency", conc)
		if code != exitData {
			t.Fatalf("exit %d: %s %s", code, stdout, stderr)
		}
		var problems []string
		for _, l := range strings.Split(stdout, "\n") {
			if strings.HasPrefix(l, "problem") {
				problems = append(problems, l)
			}
		}
		want := []string{
			"a.jsonl: line 1: reward", "a.jsonl: line 30: got array, want a JSON object", "b.jsonl: line 5: reward", "b.jsonl: line 12: ",
			"d.jsonl: line 3: regime_id", "d.jsonl: line 4: seed: repeated key", "d.jsonl: line 41: reward",
		}
		if len(problems) != len(want) {
			t.Fatalf("--concurrency %s: %d problems, want %d:\n%s", conc, len(problems), len(want), stdout)
		}
		for i, w := range want {
			if !strings.HasPrefix(problems[i], "problem (bad row): "+dirty+string(filepath.Separator)) || !strings.Contains(problems[i], w) {
				t.Errorf("problem %d: %q, want %q", i, problems[i], w)
			}
		}
		if !strings.Contains(stdout, "4 objects, 160 rows, 4 runs, 7 bad rows, 7 problems (bad row: 7)") {
			t.Errorf("counts: %s", stdout)
		}
		if !strings.Contains(stderr, "7 bad rows, more than --max-bad-rows 0") {
			t.Errorf("stderr: %s", stderr)
		}
	}
	if code, stdout, stderr := crl(t, "validate", dirty, "--quiet", "--max-bad-rows", "7"); code != 0 || !strings.Contains(stdout, "score would skip them") {
		t.Errorf("--max-bad-rows 7: exit %d: %s %s", code, stdout, stderr)
	}
	if code, stdout, stderr := crl(t, "validate", clean, "--quiet"); code != 0 || !strings.Contains(stdout, "4 objects, 160 rows, 4 runs, 0 bad rows, 0 problems\n") {
		t.Errorf("clean: exit %d: %s %s", code, stdout, stderr)
	}

	// Objects that fail as a whole, and run-key conflicts, are problems
	// too, each listed, the bad rows before them included.
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte(strings.Repeat(`{"reward": 1, "regime_id": "a"}`+"\n", 500)))
	zw.Close()
	writeFile(t, filepath.Join(dirty, "e.jsonl.gz"), gz.String()[:gz.Len()/2])
	writeFile(t, filepath.Join(dirty, "f.jsonl"), `{"run_id":1,"seed":0,"algorithm_id":"ppo","regime_id":"a","reward":1}`+"\n")
	writeFile(t, filepath.Join(dirty, "g.jsonl"), `{"run_id":"1","seed":0,"algorithm_id":"ppo","regime_id":"a","reward":1}`+"\n"+`{"run_id":2,"seed":1,"algorithm_id":"ppo","regime_id":"a","reward":1}`+"\n")
	writeFile(t, filepath.Join(dirty, "h.jsonl"), `{"run_id":"2","seed":1,"algorithm_id":"ppo","regime_id":"a","reward":1}`+"\n")
	code, stdout, _ := crl(t, "validate", dirty, "--quiet", "--max-bad-rows", "7")
	if code != exitData {
		t.Errorf("exit %d", code)
	}
	for _, s := range []string{
		"problem (object): " + filepath.Join(dirty, "e.jsonl.gz") + ": line ",
		"problem (runs): " + filepath.Join(dirty, "g.jsonl") + ": line 1: run key \"run_id=1|seed=0|algorithm_id=ppo\"",
		"problem (runs): " + filepath.Join(dirty, "h.jsonl") + ": line 1: run key \"run_id=2|seed=1|algorithm_id=ppo\"",
		"runs not assembled",
		"10 problems (bad row: 7, object: 1, runs: 2)",
	} {
		if !strings.Contains(stdout, s) {
			t.Errorf("validate does not say %q:\n%s", s, stdout)
		}
	}
}

// TestValidateCapsItsList: past 100 problems validate prints the first
// 100 and counts the rest; --all-problems prints them all.
func TestValidateCapsItsList(t *testing.T) {
	t.Parallel()
	in := filepath.Join(t.TempDir(), "in")
	var b strings.Builder
	for i := 0; i < 150; i++ {
		fmt.Fprintf(&b, `{"reward":"%d","regime_id":"a"}`+"\n", i)
	}
	writeFile(t, filepath.Join(in, "x.jsonl"), b.String())
	for _, c := range []struct {
		args  []string
		shown int
	}{{nil, 100}, {[]string{"--all-problems"}, 150}} {
		code, stdout, _ := crl(t, append([]string{"validate", in, "--quiet"}, c.args...)...)
		if code != exitData || strings.Count(stdout, "problem (bad row): ") != c.shown || !strings.Contains(stdout, "150 bad rows, 150 problems") {
			t.Errorf("%v: exit %d, %d shown:\n%s", c.args, code, strings.Count(stdout, "problem (bad row)"), stdout)
		}
		if c.shown == 100 && !strings.Contains(stdout, "… and 50 more problems (--all-problems prints them all)") {
			t.Errorf("no count of the rest:\n%s", stdout)
		}
	}
}

// TestValidateRecordProtocols: validate reads a record protocol's rows as
// its scorer does.
func TestValidateRecordProtocols(t *testing.T) {
	t.Parallel()
	in := filepath.Join(t.TempDir(), "in")
	writeFile(t, filepath.Join(in, "x.jsonl"),
		`{"method":"m","site":"s","condition":"c","success":true,"steps":3}`+"\n"+
			`{"method":"m","site":"s","condition":"c","success":"yes","steps":3}`+"\n"+
			`{"method":"m","site":"s","condition":"c","success":false}`+"\n")
	code, stdout, _ := crl(t, "validate", in, "--quiet", "--protocol", "skillshift")
	if code != exitData || !strings.Contains(stdout, "x.jsonl: line 2: success: ") || !strings.Contains(stdout, "x.jsonl: line 3: steps: missing") ||
		!strings.Contains(stdout, "run method=m: 1 rows") {
		t.Errorf("exit %d:\n%s", code, stdout)
	}
}

// TestValidateRecordRunProblems: rows that contradict each other within a
// run (a repeated accuracy cell) are a problem of the run, as in score.
func TestValidateRecordRunProblems(t *testing.T) {
	t.Parallel()
	in := filepath.Join(t.TempDir(), "in")
	writeFile(t, filepath.Join(in, "acc.jsonl"),
		`{"run_id": "c1", "algorithm_id": "ewc", "kind": "matrix", "after_task": 0, "eval_task": 0, "acc": 0.9}`+"\n"+
			`{"run_id": "c1", "algorithm_id": "ewc", "kind": "matrix", "after_task": 0, "eval_task": 0, "acc": 0.8}`+"\n"+
			`{"run_id": "c1", "algorithm_id": "ewc", "kind": "heatmap"}`+"\n")
	code, stdout, _ := crl(t, "validate", in, "--quiet", "--protocol", "contilab", "--max-bad-rows", "1")
	if code != exitData || !strings.Contains(stdout, "problem (bad row): "+filepath.Join(in, "acc.jsonl")+`: line 3: kind: unknown kind "heatmap"`) ||
		!strings.Contains(stdout, "problem (runs): run run_id=c1|algorithm_id=ewc (from acc.jsonl): ") ||
		!strings.Contains(stdout, "is recorded twice") || !strings.Contains(stdout, "2 problems (bad row: 1, runs: 1)") {
		t.Errorf("exit %d:\n%s", code, stdout)
	}
}

// sameTable reports whether two Parquet files hold the same columns, rows
// and key/value metadata but crlbatch.input: the files of two inputs
// (a sweep and the same with bad rows) differ only there.
func sameTable(t *testing.T, a, b []byte) bool {
	t.Helper()
	ra, err := writers.ReadParquet(bytes.NewReader(a))
	if err != nil {
		t.Fatal(err)
	}
	rb, err := writers.ReadParquet(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if ra.Metadata[writers.KeyInput] == "" || rb.Metadata[writers.KeyInput] == "" {
		t.Errorf("no %s in the key/value metadata", writers.KeyInput)
	}
	delete(ra.Metadata, writers.KeyInput)
	delete(rb.Metadata, writers.KeyInput)
	return reflect.DeepEqual(ra, rb)
}
