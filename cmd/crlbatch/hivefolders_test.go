package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestJSONLinesInHiveFolders: JSON Lines objects in Hive-style folders
// (algorithm_id=ppo/seed=0/, as DuckDB's FORMAT json, PARTITION_BY writes
// them) whose rows lack the fields get nothing from the folders (only
// Parquet objects do), and the job says so where it would otherwise go
// unnoticed: with the default grouping every run falls into (none), which
// a warning and a note of the report name with the folders; an explicit
// --group-by of that field fails (exit 2) with the same hint. Their
// Parquet form (crlbatch convert, into the same folders) reads the folders.
// Rows that hold the field read as they always did, with no note.
func TestJSONLinesInHiveFolders(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in")
	for _, algo := range []string{"ppo", "sac"} {
		var b strings.Builder
		for i := range 200 {
			row := map[string]any{"run_id": algo + "-0", "step": i, "reward": float64(i%9) / 8, "regime_id": []string{"a", "b"}[i/100]}
			line, err := json.Marshal(row)
			if err != nil {
				t.Fatal(err)
			}
			b.Write(append(line, '\n'))
		}
		p := filepath.Join(in, "algorithm_id="+algo, "seed=0", "data_0.jsonl")
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	hint := `no run has the field "algorithm_id"; yet objects sit in folders naming it (algorithm_id=ppo/...), which give a field to the rows of Parquet objects only`
	out := filepath.Join(dir, "out")
	// (The warning's text is logfmt's, its quotes escaped.)
	said := "yet objects sit in folders naming it (algorithm_id=ppo/...), which give a field to the rows of Parquet objects only"
	code, _, stderr := crl(t, "score", in, "--out", out, "--quiet")
	if code != 0 || !strings.Contains(stderr, said) {
		t.Fatalf("default grouping: exit %d, want 0 with a warning saying %q:\n%s", code, said, stderr)
	}
	report, err := os.ReadFile(filepath.Join(out, "report.md"))
	if err != nil || !strings.Contains(string(report), "every run is in the family (none): "+hint) {
		t.Errorf("report.md does not note %q (%v)", hint, err)
	}
	code, _, stderr = crl(t, "score", in, "--out", filepath.Join(dir, "out2"), "--quiet", "--group-by", "algorithm_id")
	if code != 2 || !strings.Contains(stderr, said) {
		t.Errorf("--group-by algorithm_id: exit %d, want 2 saying %q:\n%s", code, said, stderr)
	}
	// Their Parquet form reads its folders: two families.
	pq := filepath.Join(dir, "pq")
	if code, _, stderr := crl(t, "convert", in, "--out", pq); code != 0 {
		t.Fatalf("convert: exit %d: %s", code, stderr)
	}
	code, stdout, stderr := crl(t, "score", pq, "--out", filepath.Join(dir, "out-pq"), "--pattern", "*.parquet")
	if code != 0 || !strings.Contains(stdout, "scored 2 runs in 2 families") || strings.Contains(stderr, "folders naming") {
		t.Errorf("the Parquet form: exit %d, want 2 runs in 2 families and no hint:\n%s\n%s", code, stdout, stderr)
	}
	// The rows hold the field: nothing to say.
	code, _, stderr = crl(t, "score", in, "--out", filepath.Join(dir, "out3"), "--quiet", "--group-by", "run_id")
	if code != 0 || strings.Contains(stderr, "folders naming") {
		t.Errorf("--group-by run_id: exit %d, want 0 and no hint:\n%s", code, stderr)
	}
}
