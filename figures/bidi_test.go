package figures

import (
	"regexp"
	"strings"
	"testing"

	"github.com/crlbatch/crlbatch/protocol"
	"github.com/crlbatch/crlbatch/protocol/family"
)

// rtlName is a family name holding a right-to-left override and no
// closing one.
const rtlName = "\u202eevil"

// svgTexts are the contents of an SVG's text elements.
var svgText = regexp.MustCompile(`<text[^>]*>([^<]*)</text>`)

// TestNamesCloseTheirBidiControls: a name from the data holding an open
// right-to-left override, drawn in a figure's title, legend, axis label or
// tick label, is closed (U+202C) right after it in the SVG's text, so that
// the rest of that text is not reversed (in a browser, an SVG text element
// is one bidi paragraph: "evil: reward per step (5 runs)" was drawn with
// ": reward per step (5 runs)" reversed). The PNG of each renders. A
// figure of ordinary names draws no bidi control at all.
func TestNamesCloseTheirBidiControls(t *testing.T) {
	withNames := func(fam string) map[string]*Figure {
		hib := true
		var fams []family.Family
		for i, name := range []string{fam, "ewc"} {
			x := float64(i)
			fams = append(fams, family.Family{Name: name, Rows: []family.Row{{Metric: "m", HigherIsBetter: &hib,
				IQM: protocol.Finite(x), IQMCILow: protocol.Finite(x - 0.5), IQMCIHigh: protocol.Finite(x + 0.7)}}})
		}
		hs := []Headline{{Metric: "m", Label: "M"}}
		imps := [][]Improvement{{{Family: "ewc", Index: 1, P: protocol.Finite(0.6), Low: protocol.Finite(0.4), High: protocol.Finite(0.8)}}}
		return map[string]*Figure{
			"reward title": Reward("r", fam, 5, smallLine()),
			"interval ticks": intervals("i", 2, hs, [][]Estimate{{
				{Family: fam, IQM: protocol.Finite(1), Low: protocol.Finite(0.5), High: protocol.Finite(1.5)},
				{Family: "ewc", Index: 1, IQM: protocol.Finite(2), Low: protocol.Finite(1.5), High: protocol.Finite(2.5)}}}),
			"improvement axis label": probImprovement("p", fam, hs, imps),
			"trade-off legend": Tradeoff("t", "Reward against cost", []RunPoint{
				{Family: fam, Run: "a", X: protocol.Finite(1), Y: protocol.Finite(2)},
				{Family: "ewc", Run: "b", X: protocol.Finite(2), Y: protocol.Finite(1)}}, "cost", "reward"),
			"critical difference labels": CriticalDifference("cd", "Critical difference (acc)",
				[]Ranked{{Family: fam, Rank: protocol.Finite(1.5)}, {Family: "ewc", Rank: protocol.Finite(1.5)}}, protocol.Finite(1), 3, 0.05),
			"heat-map title": Heatmap("h", "Accuracy matrix of "+Name(fam)+" on "+Name(fam),
				Grid{Rows: []string{fam}, Cols: []string{"x"}, Cells: [][]protocol.Value{{protocol.Finite(0.5)}}},
				"evaluated task j", "after task i", 0, 1, "%.2f", ""),
		}
	}
	for kind, f := range withNames(rtlName) {
		t.Run(kind, func(t *testing.T) {
			svg, err := f.SVG()
			if err != nil {
				t.Fatal(err)
			}
			found := 0
			for _, m := range svgText.FindAllStringSubmatch(string(svg), -1) {
				txt := m[1]
				for i := strings.Index(txt, rtlName); i >= 0; i = strings.Index(txt, rtlName) {
					found++
					if rest := txt[i+len(rtlName):]; !strings.HasPrefix(rest, "\u202c") {
						t.Errorf("text %q: the override is not closed right after the name", txt)
						break
					}
					txt = txt[i+len(rtlName):]
				}
			}
			if found == 0 {
				t.Fatalf("no text of the SVG holds the name:\n%s", svg)
			}
			if _, err := f.PNG(); err != nil {
				t.Fatal(err)
			}
		})
	}
	for kind, f := range withNames("ppo") {
		svg, err := f.SVG()
		if err != nil {
			t.Fatal(err)
		}
		if strings.ContainsAny(string(svg), "\u202c\u2069") {
			t.Errorf("%s: a figure of ordinary names draws a bidi control", kind)
		}
	}
}

// TestName: Name closes what a name leaves open, innermost first, and
// returns any other name as it is.
func TestName(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"ppo", "ppo"},
		{"", ""},
		{"\u202eevil", "\u202eevil\u202c"},
		{"\u202ex\u202c", "\u202ex\u202c"},
		{"\u2067x", "\u2067x\u2069"},
		{"\u2066\u202ey", "\u2066\u202ey\u202c\u2069"},
		{"\u2067x\u2069\u202e", "\u2067x\u2069\u202e\u202c"},
	} {
		if got := Name(c.in); got != c.want {
			t.Errorf("Name(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
