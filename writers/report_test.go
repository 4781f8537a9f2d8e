package writers

import (
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/crlbatch/crlbatch/protocol"
	"github.com/crlbatch/crlbatch/protocol/family"
)

func boolp(b bool) *bool { return &b }

// testRow is a family × metric row compared with the baseline.
func testRow(fam, metric string, up *bool, test string, p, padj, diff float64, warn bool) family.Row {
	r := family.Row{Family: fam, Metric: metric, HigherIsBetter: up, N: 6, Mean: protocol.Finite(1), Std: protocol.Finite(0.1),
		IQM: protocol.Finite(1), CILow: protocol.Finite(0.9), CIHigh: protocol.Finite(1.1), IQMCILow: protocol.Finite(0.9), IQMCIHigh: protocol.Finite(1.1),
		NPairs: 6, Test: test, PValue: protocol.Finite(p), PValueAdjusted: protocol.Finite(padj), PowerWarning: warn,
		DiffMean: protocol.Finite(diff), DiffCILow: protocol.Finite(diff - 0.1), DiffCIHigh: protocol.Finite(diff + 0.1),
		ProbImprovement: protocol.Finite(0.5), MinP: protocol.None("only the sign-flip test has a smallest attainable p")}
	if test == "sign_flip" {
		r.NPairs, r.MinP = 3, protocol.Finite(0.25)
	}
	return r
}

func summaryReport(res *family.Result) string {
	rep := &Report{
		Header:   ReportHeader{Title: "crlbatch report: toy", Input: "in", Protocol: "toy", Version: "0"},
		Rows:     []ReportRow{{Title: "Reward", Metric: "reward"}, {Title: "Speed", Metric: "speed"}, {Title: "Cost", Metric: "cost"}},
		KeyNoun:  "label",
		Families: res,
		Columns:  func(string) ([]string, func(int, string) family.Cell) { return nil, nil },
	}
	return rep.Render()
}

// TestReportSummary: the summary names exactly the metrics whose adjusted p
// is at most 0.05 without a power warning, as better or worse by the
// direction of the mean paired difference; a family whose every test has a
// power warning is said to be indistinguishable; the baseline has no line.
func TestReportSummary(t *testing.T) {
	up, down := boolp(true), boolp(false)
	metrics := []family.Metric{{Name: "reward", HigherIsBetter: up}, {Name: "speed", HigherIsBetter: down}, {Name: "cost", HigherIsBetter: down}, {Name: "n_steps"}}
	count := func(fam string) family.Row {
		return family.Row{Family: fam, Metric: "n_steps", N: 6, Mean: protocol.Finite(400), Std: protocol.Finite(0), Test: "wilcoxon",
			PValue: protocol.None("every difference is zero"), PValueAdjusted: protocol.None("every difference is zero"), NPairs: 6}
	}
	res := &family.Result{Metrics: metrics, Baseline: "base", BaselineFound: true, Families: []family.Family{
		{Name: "base", Rows: []family.Row{testRow("base", "reward", up, "wilcoxon", 1, 1, 0, false), testRow("base", "speed", down, "wilcoxon", 1, 1, 0, false),
			testRow("base", "cost", down, "wilcoxon", 1, 1, 0, false), count("base")}},
		// reward up by 0.3 (better), speed up by 0.2 (lower is better: worse), cost not below 0.05.
		{Name: "a", Rows: []family.Row{testRow("a", "reward", up, "wilcoxon", 0.01, 0.03, 0.3, false), testRow("a", "speed", down, "wilcoxon", 0.02, 0.04, 0.2, false),
			testRow("a", "cost", down, "wilcoxon", 0.03, 0.0500001, -0.2, false), count("a")}},
		{Name: "b", Rows: []family.Row{testRow("b", "reward", up, "sign_flip", 0.25, 0.25, 0.3, true), testRow("b", "speed", down, "sign_flip", 0.25, 0.25, -1, true),
			testRow("b", "cost", down, "sign_flip", 0.25, 0.25, -1, true), count("b")}},
		{Name: "c", Rows: []family.Row{testRow("c", "reward", up, "wilcoxon", 0.03, 0.06, 0.3, false), testRow("c", "speed", down, "wilcoxon", 0.5, 0.5, -1, false),
			testRow("c", "cost", down, "wilcoxon", 0.05, 0.05, -0.1, false), count("c")}},
	}}
	md := summaryReport(res)
	summary := md[strings.Index(md, "## Summary\n"):strings.Index(md, "## Family ")]
	want := []string{
		"- Family `a` beats the baseline on Reward (p (BH) 0.0300); does worse than the baseline on Speed (p (BH) 0.0400).",
		"- Family `b` cannot be told apart from the baseline: with 3 paired seed(s) the sign-flip test's smallest attainable p is 0.2500, above 0.05, so no difference can be established whatever the data (more seeds are needed).",
		"- Family `c` beats the baseline on Cost (p (BH) 0.0500).",
	}
	var got []string
	for _, l := range strings.Split(summary, "\n") {
		if strings.HasPrefix(l, "- ") {
			got = append(got, l)
		}
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("summary lines:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if strings.Contains(md, "significant") {
		t.Error("the report says significant")
	}
	// The baseline is marked, and not tested against itself.
	if !strings.Contains(md, "## Family `base` (baseline)") || strings.Contains(md, "### `base` against") || !strings.Contains(md, "### `a` against `base`") {
		t.Errorf("baseline sections wrong:\n%s", md)
	}
	// Counts stand apart from the comparison and are never tested.
	if !strings.Contains(md, "Counts and other values without a direction of better") || strings.Contains(md, "| `n_steps`                |      · |") {
		t.Errorf("counts in the comparison:\n%s", md)
	}
	// Footnotes: each distinct reason once, numbered in order of first
	// use, each used.
	defs := regexp.MustCompile(`(?m)^\[\^([0-9]+)\]: (.*)$`).FindAllStringSubmatch(md, -1)
	seen := map[string]bool{}
	for i, d := range defs {
		if d[1] != strconv.Itoa(i+1) || seen[d[2]] {
			t.Errorf("footnote %d: %q (numbering or a repeated reason)", i+1, d[0])
		}
		seen[d[2]] = true
		if strings.Count(md, "[^"+d[1]+"]") < 2 {
			t.Errorf("footnote %s is never used", d[1])
		}
	}
	if !seen["power warning: with 3 pair(s) the sign-flip test's smallest attainable p (`min_p`) is 0.2500, above 0.05: no difference can be established at that level whatever the data"] {
		t.Errorf("footnotes %v", defs)
	}

	// A baseline named but absent: no comparison claimed.
	res.Baseline, res.BaselineFound = "ppo", false
	md = summaryReport(res)
	if !strings.Contains(md, "The baseline family `ppo` is not in the data: no family is compared with a baseline.") || strings.Contains(md, "beats") {
		t.Errorf("missing baseline:\n%s", md)
	}
}
