package writers

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
)

func TestHTMLConvertsTheReportSubset(t *testing.T) {
	md := "# crlbatch report: skyfall\n\n- input: `a|b`\n- protocol: skyfall\n\n" +
		"| parameter | value |\n| :-- | --: |\n| where | `x=ppo\\|ewc` |\n| name | a &lt;b&gt; &amp; <br> c |\n\n" +
		"**Ceiling.** No *ceiling* \\*here\\*; see [the doc](docs/x.md).\n" +
		"A second line <script>alert(1)</script>.\n\n" +
		"> **Note** quoted\n\n" +
		"## Figures\n\n### Reward of `ppo`\n\n![Reward of ppo](figure-reward-ppo.png)\n\nCaption ([SVG](figure-reward-ppo.svg))\n\n" +
		"![other](figure-other.png)\n\n" +
		"| metric | ppo |\n| :-- | --: |\n| gap | --[^2] |\n\nSee[^1].\n\n[^1]: first *why*\n[^2]: second\n"
	svg := "<?xml version=\"1.0\"?>\n<!-- Generated -->\n<svg width=\"10pt\" height=\"5pt\" viewBox=\"0 0 10 5\"><path d=\"M0,0\"/></svg>\n"
	page, err := HTML(md, []Figure{{PNG: "figure-reward-ppo.png", SVG: []byte(svg)}})
	if err != nil {
		t.Fatal(err)
	}
	got := string(page)
	for _, want := range []string{
		"<title>crlbatch report: skyfall</title>",
		`<h1 id="crlbatch-report-skyfall">crlbatch report: skyfall</h1>`,
		"<li>input: <code>a|b</code></li>",
		`<th style="text-align:left">parameter</th><th style="text-align:right">value</th>`,
		`<td style="text-align:right"><code>x=ppo|ewc</code></td>`,
		`a &lt;b&gt; &amp; <br> c`,
		"<p><strong>Ceiling.</strong> No <em>ceiling</em> *here*; see <a href=\"docs/x.md\">the doc</a>.\nA second line &lt;script&gt;alert(1)&lt;/script&gt;.</p>",
		"<blockquote>\n<p><strong>Note</strong> quoted</p>\n</blockquote>",
		`<h3 id="reward-of-ppo">Reward of <code>ppo</code></h3>`,
		"<figure>\n<svg width=\"10pt\" height=\"5pt\" viewBox=\"0 0 10 5\"><path d=\"M0,0\"/></svg>\n</figure>",
		`<a href="figure-reward-ppo.svg">SVG</a>`,
		`<p><img src="figure-other.png" alt="other"></p>`,
		`content="default-src 'none'; style-src 'unsafe-inline'; img-src data:"`,
		`<td style="text-align:right">--<sup class="fn"><a href="#fn-2">2</a></sup></td>`,
		`<p>See<sup class="fn"><a href="#fn-1">1</a></sup>.</p>`,
		"<section class=\"footnotes\">\n<h4>Footnotes</h4>\n<ol class=\"footnotes\">\n<li id=\"fn-1\" value=\"1\">first <em>why</em></li>\n<li id=\"fn-2\" value=\"2\">second</li>\n</ol>\n</section>",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("page lacks %q:\n%s", want, got)
		}
	}
	for _, bad := range []string{"<script", "<?xml", "<!-- Generated", "http://", "https://"} {
		if strings.Contains(got, bad) {
			t.Errorf("page holds %q", bad)
		}
	}
}

// TestHTMLOfEveryGoldenReport converts every golden report.md: each
// Markdown table row is one <tr>, each heading one <h…>, and nothing is
// fetched.
func TestHTMLOfEveryGoldenReport(t *testing.T) {
	paths, err := filepath.Glob("../cmd/crlbatch/testdata/golden/*/report.md")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no golden report: %v", err)
	}
	for _, p := range paths {
		md, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		page, err := HTML(string(md), nil)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		rows, heads := 0, 0
		for _, l := range strings.Split(string(md), "\n") {
			if strings.HasPrefix(l, "|") && !isSepRow(l) {
				rows++
			}
			if headingRe.MatchString(l) {
				heads++
			}
		}
		s := string(page)
		if n := strings.Count(s, "<tr>"); n != rows {
			t.Errorf("%s: %d <tr>, want %d", p, n, rows)
		}
		if n := strings.Count(s, "<h1 ") + strings.Count(s, "<h2 ") + strings.Count(s, "<h3 "); n != heads {
			t.Errorf("%s: %d headings, want %d", p, n, heads)
		}
		if strings.Contains(s, "<script") || strings.Contains(s, "http://") || strings.Contains(s, "https://") {
			t.Errorf("%s: the page could fetch something", p)
		}
		// Every footnote reference links to its definition, which is there;
		// no "[^n]" is left as text.
		defs := 0
		for _, l := range strings.Split(string(md), "\n") {
			if m := footnoteDefRe.FindStringSubmatch(l); m != nil {
				defs++
				if !strings.Contains(s, `<li id="fn-`+m[1]+`"`) {
					t.Errorf("%s: footnote %s has no list item", p, m[1])
				}
			}
		}
		if n := strings.Count(s, `<li id="fn-`); n != defs {
			t.Errorf("%s: %d footnote items, want %d", p, n, defs)
		}
		if strings.Contains(s, "[^") {
			t.Errorf("%s: a footnote left as text", p)
		}
	}
}

// TestHTMLWideTableMemory: a report with a table of many labels (issue 16:
// 100,000 labels made a 35 MB report.md and a 137 MB report.html) is
// converted in one buffer sized from the Markdown, its cells written
// straight into it: the page is not built twice, nor grown by doubling
// when the estimate holds. Bytes, not time.
func TestHTMLWideTableMemory(t *testing.T) {
	const labels = 20000
	var md strings.Builder
	md.WriteString("# crlbatch report\n\n## Family ppo\n\n| Metric |")
	for i := range labels {
		fmt.Fprintf(&md, " l%05d |", i)
	}
	md.WriteString(" all |\n| :----- |")
	for range labels + 1 {
		md.WriteString(" -----: |")
	}
	md.WriteString("\n")
	for r := range 15 {
		fmt.Fprintf(&md, "| Metric %d |", r)
		for i := range labels + 1 {
			if i%7 == 0 {
				md.WriteString(" --[^2] |")
			} else {
				fmt.Fprintf(&md, " %d.125 ± 0.5 |", i)
			}
		}
		md.WriteString("\n")
	}
	md.WriteString("\n[^2]: why.\n")
	src := md.String()
	page, err := HTML(src, nil)
	if err != nil {
		t.Fatal(err)
	}
	p, err := NewPage(src, nil)
	if err != nil {
		t.Fatal(err)
	}
	var page2 bytes.Buffer
	if _, err := p.WriteTo(&page2); err != nil || !bytes.Equal(page, page2.Bytes()) {
		t.Fatal("HTML is not deterministic, or WriteTo writes another page")
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	n, err := p.WriteTo(io.Discard)
	runtime.ReadMemStats(&after)
	if err != nil || n != int64(len(page)) {
		t.Fatalf("WriteTo wrote %d bytes (%v), want %d", n, err, len(page))
	}
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("%d bytes of Markdown, %d of HTML, %d allocated (%.2fx the page)", len(src), len(page), alloc, float64(alloc)/float64(len(page)))
	// The page is written as it is converted, never held: what is
	// allocated is the lines of the Markdown, each row's cells (100,001
	// strings a row here) and one row of the page. Before (the page built
	// in one buffer sized from above): 1.8x the page; before that, a
	// string per cell, a second buffer and their doublings: 11.9x.
	if !raceEnabled && alloc > uint64(len(page)) {
		t.Errorf("converting a %d-byte page allocated %d bytes (%.2fx): it is held", len(page), alloc, float64(alloc)/float64(len(page)))
	}
	if !bytes.Contains(page, []byte(`<td style="text-align:right">3.125 ± 0.5</td>`)) ||
		!bytes.Contains(page, []byte(`<td style="text-align:right">--<sup class="fn"><a href="#fn-2">2</a></sup></td>`)) {
		t.Error("the wide table's cells are not in the page")
	}
}

// TestFootnoteRefMatchesItsExpression: the hand-written matcher of a
// footnote reference matches exactly what footnoteRefRe matches.
func TestFootnoteRefMatchesItsExpression(t *testing.T) {
	cases := []string{"", "[", "[^", "[^]", "[^1]", "[^1", "[^12]x", "[^a-b_C9] rest", "[^a b]", "[^é]", "[x]", "[^^1]",
		"[^1]]", "[[^1]", "[^-]", "[^_]", "[^1\\]", "[^ab](c)"}
	// And every short string over the characters that matter.
	cases = appendStrings(cases, "[", "[^]a1-_ \\", 4)
	for _, s := range cases {
		if got, want := footnoteRef(s), len(footnoteRefRe.FindString(s)); got != want {
			t.Errorf("footnoteRef(%q) = %d, footnoteRefRe matches %d bytes", s, got, want)
		}
	}
}

// sepRe is the expression isSepRow matches by hand.
var sepRe = regexp.MustCompile(`^\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$`)

// TestIsSepRowMatchesItsExpression: isSepRow matches exactly what sepRe
// matches, on every string of up to 6 characters over those that matter
// and on separator rows of real tables.
func TestIsSepRowMatchesItsExpression(t *testing.T) {
	cases := []string{"| :----- | -----: |", "|---|", "---", ":-:", "| --- | --- |  ", "|-|-|-|", "| :--- | --- x", "||", "|", ""}
	cases = appendStrings(cases, "", "|:- \tx\v", 6)
	for _, s := range cases {
		if got, want := isSepRow(s), sepRe.MatchString(s); got != want {
			t.Errorf("isSepRow(%q) = %v, sepRe matches: %v", s, got, want)
		}
	}
}

// appendStrings appends prefix followed by every string of up to n bytes of
// alphabet.
func appendStrings(out []string, prefix, alphabet string, n int) []string {
	out = append(out, prefix)
	if n == 0 {
		return out
	}
	for i := range len(alphabet) {
		out = appendStrings(out, prefix+alphabet[i:i+1], alphabet, n-1)
	}
	return out
}

// TestFiguresSectionTitlesWithBrackets: a figure's title comes from the
// data (a family "sac]" or "ewc[lr"), and sits inside the image's
// brackets in report.md: an unbalanced bracket there ended the image
// early (or made a link of its tail), so report.md showed the raw
// "![Reward of sac]](…)" and report.html lost the figure. Every figure
// handed in must be drawn inline, and report.md's image must parse as
// one: its alt text has no unescaped bracket.
func TestFiguresSectionTitlesWithBrackets(t *testing.T) {
	svg := "<svg width=\"10pt\" height=\"5pt\" viewBox=\"0 0 10 5\"><path d=\"M0,0\"/></svg>\n"
	for _, title := range []string{
		"Reward of sac]",
		"Reward of ewc[lr",
		"Reward of ][",
		"Reward of [x](javascript:alert(1))",
		"Reward of a]](b.png)",
		"Reward of ppo[lr=3e-4]",
		"Reward of \\]",
	} {
		t.Run(title, func(t *testing.T) {
			md := "# r\n" + FiguresSection([]FigureRef{{Title: title, PNG: "figure-x.png", SVG: "figure-x.svg", Caption: "c"}})
			line := ""
			for _, l := range strings.Split(md, "\n") {
				if strings.HasPrefix(l, "![") {
					line = l
				}
			}
			alt, ok := strings.CutSuffix(strings.TrimPrefix(line, "!["), "](figure-x.png)")
			if !ok {
				t.Fatalf("no image line ending in the PNG:\n%s", md)
			}
			for i := 0; i < len(alt); i++ {
				if alt[i] == '\\' {
					i++
					continue
				}
				if alt[i] == '[' || alt[i] == ']' {
					t.Errorf("alt text %q holds an unescaped %q at %d", alt, alt[i], i)
				}
			}
			page, err := HTML(md, []Figure{{PNG: "figure-x.png", SVG: []byte(svg)}})
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(page), "<figure>\n"+svg+"</figure>") {
				t.Errorf("the figure is not drawn inline:\n%s", page)
			}
			if strings.Contains(string(page), "![") {
				t.Errorf("the page shows the image's Markdown:\n%s", page)
			}
		})
	}
}
