package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// scoreFamilies scores a sweep of the given families (algorithm_id), two
// seeds each, runs of 12 steps over two intervals, with ppo as the
// baseline, and returns the output folder.
func scoreFamilies(t *testing.T, families []string) string {
	t.Helper()
	dir := t.TempDir()
	in := filepath.Join(dir, "in")
	for f, fam := range families {
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
	return out
}

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
			out := scoreFamilies(t, tc.families)
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
	out := scoreFamilies(t, []string{"ppo", "ppo ", "pp\u200bo"})
	report := readReport(t, out)
	if !strings.Contains(report, `"ppo", "ppo ", "pp\\u200bo" differ only in white space, invisible characters or Unicode normalisation (NFC)`) {
		_, notes, _ := strings.Cut(report, "## Notes")
		t.Errorf("the notes do not name the three families that print alike:\n%s", notes)
	}
}

// TestFamilyNameWithARightToLeftOverride: a family named "\u202eevil"
// (a right-to-left override, left open) reversed the rest of every
// sentence it sat in, in report.html as in report.md on GitHub: "cannot
// be told apart from the baseline: … p is 0.5000" read "0005.0 si p …".
// Every line of report.md and of report.html's text that opens the
// override closes it.
func TestFamilyNameWithARightToLeftOverride(t *testing.T) {
	t.Parallel()
	out := scoreFamilies(t, []string{"ppo", "\u202eevil"})
	for _, name := range []string{"report.md", "report.html"} {
		data, err := os.ReadFile(filepath.Join(out, name))
		if err != nil {
			t.Fatal(err)
		}
		lines := 0
		for i, l := range strings.Split(string(data), "\n") {
			// An SVG figure's <text> is a paragraph of its own: an
			// override there stays in that label (the reward figure's
			// title still reads reversed after the name: left alone).
			if strings.Contains(l, "\u202e") && !strings.HasSuffix(l, "</text>") {
				lines++
				if o, c := strings.Count(l, "\u202e"), strings.Count(l, "\u202c"); o != c {
					t.Errorf("%s line %d opens %d overrides and closes %d: %q", name, i+1, o, c, l)
				}
			}
		}
		if lines == 0 {
			t.Errorf("%s never names the family", name)
		}
	}
}
