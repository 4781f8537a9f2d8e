package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Family names from the data that the report's figures must survive
// (branch breakit3): a name with brackets (a hyperparameter in a name,
// "ewc[lr=3e-4]", or a stray "sac]") lost its figure in report.html,
// which showed the image's Markdown instead; a name of 300 characters
// failed the whole job (exit 3, "file name too long": the figure's file
// name is made from it).
func TestFamilyNamesFiguresSurvive(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		families []string
	}{
		{"brackets", []string{"ppo", "ewc[lr=3e-4]", "sac]", "td3[x"}},
		{"long", []string{"ppo", strings.Repeat("ewc-lr-0.0003-", 22), strings.Repeat("ewc-lr-0.0003-", 22) + "b"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			in := filepath.Join(dir, "in")
			for f, fam := range tc.families {
				for seed := 0; seed < 2; seed++ {
					var b strings.Builder
					for step := 0; step < 12; step++ {
						b.WriteString(`{"step":` + itoa(step) + `,"reward":` + itoa((step+f)%3) + `,"regime_id":"r` + itoa(step/6) +
							`","seed":` + itoa(seed) + `,"algorithm_id":` + jsonString(fam) + "}\n")
					}
					writeFile(t, filepath.Join(in, "f"+itoa(f)+"s"+itoa(seed)+".jsonl"), b.String())
				}
			}
			out := filepath.Join(dir, "out")
			if code, _, stderr := crl(t, "score", in, "--out", out, "--quiet", "--baseline", "ppo"); code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			svgs := 0
			for _, n := range listDir(t, out) {
				if strings.HasSuffix(n, ".svg") {
					svgs++
					if len(n) > 128 {
						t.Errorf("figure file name of %d bytes: %s", len(n), n)
					}
				}
			}
			if want := len(tc.families) + 2; svgs != want { // a reward figure a family, the interval estimates, P(improvement)
				t.Errorf("%d SVG figures, want %d", svgs, want)
			}
			page, err := os.ReadFile(filepath.Join(out, "report.html"))
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Count(string(page), "<figure>"); got != svgs {
				t.Errorf("report.html draws %d figures of %d", got, svgs)
			}
			if strings.Contains(string(page), "![") {
				t.Errorf("report.html shows an image's Markdown")
			}
		})
	}
}

// TestFamilyNamesThatPrintAlike: "ppo", "ppo " and "pp\u200bo" are three
// families (names compare by their bytes) that print alike in every table
// and figure: the report's notes must name them, escaped, as they name
// names that differ only in Unicode normalisation.
func TestFamilyNamesThatPrintAlike(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	in := filepath.Join(dir, "in")
	for f, fam := range []string{"ppo", "ppo ", "pp\u200bo"} {
		for seed := 0; seed < 2; seed++ {
			var b strings.Builder
			for step := 0; step < 12; step++ {
				b.WriteString(`{"step":` + itoa(step) + `,"reward":` + itoa((step+f)%3) + `,"regime_id":"r` + itoa(step/6) +
					`","seed":` + itoa(seed) + `,"algorithm_id":` + jsonString(fam) + "}\n")
			}
			writeFile(t, filepath.Join(in, "f"+itoa(f)+"s"+itoa(seed)+".jsonl"), b.String())
		}
	}
	out := filepath.Join(dir, "out")
	if code, _, stderr := crl(t, "score", in, "--out", out, "--quiet", "--baseline", "ppo"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	report := readReport(t, out)
	if !strings.Contains(report, `"ppo", "ppo ", "pp\\u200bo" differ only in white space, invisible characters or Unicode normalisation (NFC)`) {
		_, notes, _ := strings.Cut(report, "## Notes")
		t.Errorf("the notes do not name the three families that print alike:\n%s", notes)
	}
}
