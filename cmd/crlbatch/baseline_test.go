package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestUnlabelledFamilyIsABaselineLikeAnyOther: a stray object whose rows
// carry no algorithm_id forms the family (none), key "". When it sorts
// first it is the baseline by PROTOCOLS 1.6's rule (no family is named ppo),
// and every other family is compared with it; before, "" also meant "no
// baseline" and every comparison vanished.
func TestUnlabelledFamilyIsABaselineLikeAnyOther(t *testing.T) {
	t.Parallel()
	in := filepath.Join(t.TempDir(), "in")
	if err := os.CopyFS(in, os.DirFS("../../configs/examples/safecrl")); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(in, "cpo", "cpo-s1.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	stray := strings.ReplaceAll(strings.ReplaceAll(string(data), `"algorithm_id":"cpo",`, ""), `"run_id":"cpo-s1"`, `"run_id":"stray-s1"`)
	if err := os.WriteFile(filepath.Join(in, "0-stray.jsonl"), []byte(stray), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "out")
	if code, _, stderr := crl(t, "score", in, "--protocol", "safecrl", "--out", out, "--quiet"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	fam := readParquet(t, filepath.Join(out, "families.parquet"))
	compared := 0
	for _, r := range fam.Rows {
		if r["baseline"] != "" {
			t.Fatalf("family %q, metric %v: baseline %v, want \"\" ((none), the first family)", r["family"], r["metric"], r["baseline"])
		}
		if r["family"] == "cpo" && r["metric"] == "final_task_reward" {
			// cpo-s1 and the stray run hold the same rows: the paired
			// difference of seed 1 is 0.
			if r["diff_mean"] == nil || r["prob_improvement"] == nil || r["p_value"] == nil {
				t.Errorf("cpo against (none): diff %v, prob %v, p %v; reasons %v", r["diff_mean"], r["prob_improvement"], r["p_value"], reasonsOf(r))
			}
			compared++
		}
	}
	if compared != 1 {
		t.Fatalf("%d rows of cpo's final_task_reward, want 1", compared)
	}
	report, err := os.ReadFile(filepath.Join(out, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"## Family (none) (baseline)", "Baseline: (none)."} {
		if !strings.Contains(string(report), want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
	if strings.Contains(string(report), "no family to compare with") {
		t.Error("report.md still says there is no family to compare with")
	}
}
