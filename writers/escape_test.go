package writers

import (
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/crlbatch/crlbatch/protocol"
	"github.com/crlbatch/crlbatch/protocol/family"
)

// Issue 13, finding 10: text from the data can rewrite the report. These
// tests pin the two ways data text enters Markdown (Text and Code), the
// table's cells and the report's headings against arbitrary names.

// ordinary names and notes, as the golden reports hold them: escaping must
// leave each byte for byte as it is.
var ordinary = []string{
	"calm", "calm_again", "a_again", "perm_mnist", "split_cifar", "ppo_lag", "ewc/0", "method=AWM",
	"Src-Perc", "GitLab", "sign_flip", "n_steps", "effective_rank_run", "Stability (variance)", "SR (O/A)",
	"run_id=ewc-s0|seed=0|algorithm_id=ewc|policy_id=mlp-256x2|task=navigate",
	"--where kept 10 of 12 runs",
	"1 run(s) lack the group-by field \"algorithm_id\" and form the family (none)",
	"ewc/0: runs [run_id=a|seed=0 run_id=b|seed=1] have identical seed values: the seed may be wired to nothing",
	"skipped: no task carries skill_calls: the method records no skill invocations",
	"… and 3 more skipped rows", "0.5·R_ub (ceiling anchor)", "×", "",
}

func TestTextLeavesOrdinaryTextAlone(t *testing.T) {
	for _, s := range ordinary {
		if got := Text(s); got != s {
			t.Errorf("Text(%q) = %q, want it unchanged", s, got)
		}
		if got := noteMarkdown(s); got != s {
			t.Errorf("noteMarkdown(%q) = %q, want it unchanged", s, got)
		}
	}
	for _, s := range []string{
		"1 bad row skipped under --max-bad-rows 1; manifest.json lists every one under `skipped`",
		"skipped `/data/in/a.jsonl` line 3: invalid JSON",
	} {
		if got := noteMarkdown(s); got != s {
			t.Errorf("noteMarkdown(%q) = %q, want it unchanged", s, got)
		}
	}
}

func TestText(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"a|b\n# INJECTED <script>alert(1)</script>", `a|b<br>\# INJECTED &lt;script&gt;alert(1)&lt;/script&gt;`},
		{"a\r\nb\rc", "a<br>b<br>c"},
		{"*em* _u_ __b__ a_b_ _x", `\*em\* \_u\_ \_\_b\_\_ a_b\_ \_x`},
		{"[l](http://e) ![i](x) [r][d] [t]", `\[l\](http://e) ![i\](x) [r\][d] [t]`},
		{"[x]: http://evil", `\[x]: http://evil`},
		{"a\\|b `c` ~~s~~ $m$ &amp;", `a\\|b \` + "`c\\`" + ` \~\~s\~\~ \$m\$ &amp;amp;`},
		{"- item", `\- item`}, {"+", `\+`}, {"---", `\---`}, {"- - -", `\- - -`}, {"--where", "--where"},
		{"1. one", `1\. one`}, {"12) x", `12\) x`}, {"2024.01", "2024.01"}, {"> q", "&gt; q"},
		{"<br>", "&lt;br&gt;"},
	} {
		if got := Text(tc.in); got != tc.want {
			t.Errorf("Text(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestCode(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", "``"}, {"ewc", "`ewc`"}, {"a`b", "``a`b``"}, {"a``b`", "``` a``b` ```"}, {"`", "`` ` ``"},
		{" a ", "`  a  `"}, {"   ", "`   `"}, {" a", "` a`"},
		{"a|b\n# x <script>", "`a|b␤# x <script>`"}, {"a\r\nb", "`a␤b`"},
	} {
		if got := Code(tc.in); got != tc.want {
			t.Errorf("Code(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// hostileString draws a string from the characters that mean something to
// Markdown, HTML or a GFM table.
func hostileString(r *rand.Rand) string {
	const alphabet = "ab1_ |\\`*#[]()~$&<>!-+.=:^\n\r\té"
	rs := []rune(alphabet)
	n := r.IntN(24)
	var b strings.Builder
	for range n {
		b.WriteRune(rs[r.IntN(len(rs))])
	}
	return b.String()
}

// renderText is what a CommonMark renderer shows of Text's output, as
// plain text: backslash escapes, the three entities Text writes, <br>.
// ok is false if the output holds anything else a renderer would read as
// markup.
func renderText(s string) (string, bool) {
	var b strings.Builder
	for i := 0; i < len(s); {
		switch {
		case s[i] == '\\' && i+1 < len(s) && strings.IndexByte(asciiPunct, s[i+1]) >= 0:
			b.WriteByte(s[i+1])
			i += 2
		case strings.HasPrefix(s[i:], "<br>"):
			b.WriteByte('\n')
			i += 4
		case strings.HasPrefix(s[i:], "&lt;"):
			b.WriteByte('<')
			i += 4
		case strings.HasPrefix(s[i:], "&gt;"):
			b.WriteByte('>')
			i += 4
		case strings.HasPrefix(s[i:], "&amp;"):
			b.WriteByte('&')
			i += 5
		case strings.IndexByte("<>&\\`*#~$\r\n", s[i]) >= 0:
			return "", false // unescaped markup
		case s[i] == ']' && i+1 < len(s) && (s[i+1] == '(' || s[i+1] == '['):
			return "", false // a link could close here
		case s[i] == '_':
			before, _ := utf8.DecodeLastRuneInString(s[:i])
			after, _ := utf8.DecodeRuneInString(s[i+1:])
			if i == 0 || i+1 == len(s) || !(isWordRune(before) || before == '_') || !(isWordRune(after) || after == '_') {
				return "", false // emphasis could open or close here
			}
			b.WriteByte('_')
			i++
		default:
			b.WriteByte(s[i])
			i++
		}
	}
	return b.String(), true
}

const asciiPunct = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"

// blockMarker is what, at the start of a list item or a line, opens a block
// (or a link definition, a footnote or a task-list box); an HTML tag other
// than Text's own <br> too.
var blockMarker = regexp.MustCompile(`^([-+*]( |\t|$)|[0-9]{1,9}[.)]( |\t|$)|([-*_][ \t]*){3,}$|\[|>|#|<[^b]|<b[^r])`)

func TestTextProperty(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 10))
	for range 50000 {
		s := hostileString(r)
		got := Text(s)
		shown, ok := renderText(got)
		if !ok {
			t.Fatalf("Text(%q) = %q holds markup", s, got)
		}
		if want := replaceLineBreaks(s, "\n"); shown != want {
			t.Fatalf("Text(%q) = %q shows %q, want %q", s, got, shown, want)
		}
		if blockMarker.MatchString(got) {
			t.Fatalf("Text(%q) = %q opens a block at the start of a line", s, got)
		}
	}
}

// codeSpan parses s as CommonMark inline code and returns what it shows;
// ok is false unless s is exactly one code span.
func codeSpan(s string) (string, bool) {
	n := 0
	for n < len(s) && s[n] == '`' {
		n++
	}
	if n == 0 {
		return "", false
	}
	end := closingBackticks(s, n, n)
	if end < 0 || end+n != len(s) || strings.ContainsAny(s, "\r\n") {
		return "", false
	}
	return codeContent(s[n:end]), true
}

func TestCodeProperty(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 11))
	for range 50000 {
		s := hostileString(r)
		if s == "" {
			continue
		}
		got := Code(s)
		shown, ok := codeSpan(got)
		if !ok {
			t.Fatalf("Code(%q) = %q is not one code span", s, got)
		}
		if want := replaceLineBreaks(s, LineBreakInCode); shown != want {
			t.Fatalf("Code(%q) = %q shows %q, want %q", s, got, shown, want)
		}
	}
}

// gfmRowCells counts a table row's cells as cmark-gfm splits it: a
// backslash escapes any ASCII punctuation, every other pipe separates
// cells, and a leading and a trailing pipe open and close the row.
func gfmRowCells(line string) int {
	var pipes []int
	for i := 0; i < len(line); i++ {
		switch {
		case line[i] == '\\' && i+1 < len(line) && strings.IndexByte(asciiPunct, line[i+1]) >= 0:
			i++
		case line[i] == '|':
			pipes = append(pipes, i)
		}
	}
	n := len(pipes) + 1
	if len(pipes) > 0 && pipes[0] == 0 {
		n--
	}
	if len(pipes) > 1 && pipes[len(pipes)-1] == len(line)-1 {
		n--
	}
	return n
}

// checkTable checks that table has one line per row plus the delimiter
// row, each with width cells.
func checkTable(t *testing.T, table string, width, rows int) {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(table, "\n"), "\n")
	if len(lines) != rows+2 {
		t.Fatalf("%d lines for %d rows:\n%s", len(lines), rows, table)
	}
	for i, l := range lines {
		if c := gfmRowCells(l); c != width {
			t.Fatalf("line %d has %d cells, want %d: %q\n%s", i+1, c, width, l, table)
		}
	}
}

func TestMarkdownTableShapeProperty(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 12))
	for range 5000 {
		width, n := 1+r.IntN(4), r.IntN(4)
		cell := func() string {
			s := hostileString(r)
			switch r.IntN(3) {
			case 0:
				return Text(s)
			case 1:
				return Code(s)
			}
			return s // raw: the table must hold its shape even so
		}
		header := make([]string, width)
		for j := range header {
			header[j] = cell()
		}
		rows := make([][]string, n)
		for i := range rows {
			rows[i] = make([]string, width)
			for j := range rows[i] {
				rows[i][j] = cell()
			}
		}
		checkTable(t, MarkdownTable(header, rows), width, n)
	}
}

func FuzzMarkdownTable(f *testing.F) {
	f.Add("a|b", "c\\|d", "e\\\\|f\n# g")
	f.Add("`x|y`", "<script>", "\r\n")
	f.Fuzz(func(t *testing.T, a, b, c string) {
		checkTable(t, MarkdownTable([]string{a, Text(b)}, [][]string{{Code(c), a}, {b, Text(c)}}), 2, 2)
	})
}

// TestReportRenderHostileNames renders a report whose family names, keys,
// row titles, metric names and notes are arbitrary: one heading per family,
// every table keeps its shape, every note stays on its list line.
func TestReportRenderHostileNames(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 13))
	for range 300 {
		nf := 1 + r.IntN(3)
		res := &family.Result{Metrics: []family.Metric{{Name: hostileString(r)}}}
		for range nf {
			name := hostileString(r)
			res.Families = append(res.Families, family.Family{Name: name, Rows: []family.Row{{Metric: res.Metrics[0].Name,
				Mean: protocol.Finite(1), Std: protocol.Finite(0), N: 2}}})
			res.Notes = append(res.Notes, family.Note{Family: name, Text: name + ": run `" + hostileString(r) + "` " + hostileString(r)})
		}
		res.Baseline, res.BaselineFound = res.Families[0].Name, true
		keys := []string{hostileString(r), hostileString(r)}
		rep := &Report{
			Header: ReportHeader{Title: "crlbatch report: toy", Input: hostileString(r), Protocol: "toy", Version: "0",
				Params: []KV{{Key: "baseline", Value: hostileString(r)}}},
			Rows:     []ReportRow{{Title: hostileString(r), Metric: res.Metrics[0].Name, PerLabel: true}},
			KeyNoun:  "label",
			Families: res,
			Columns: func(string) ([]string, func(int, string) family.Cell) {
				return keys, func(int, string) family.Cell { return family.Cell{Mean: protocol.Finite(1)} }
			},
			AdvantageMetric: res.Metrics[0].Name,
			Notes:           []string{hostileString(r), "skipped `" + hostileString(r) + "` line 1: " + hostileString(r)},
		}
		checkRendered(t, rep.Render(), nf, len(res.Notes)+2)
	}
}

func checkRendered(t *testing.T, md string, families, notes int) {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(md, "\n"), "\n")
	fams, inNotes, items := 0, false, 0
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		switch {
		case strings.HasPrefix(l, "## Family "):
			fams++
		case strings.HasPrefix(l, "#"):
			if l != "# crlbatch report: toy" && l != "## Comparison of families" && l != "## Notes" &&
				l != "## Summary" && l != "## Metrics" && !strings.HasPrefix(l, "## Against the baseline ") &&
				!(strings.HasPrefix(l, "### ") && strings.Contains(l, " against ")) {
				t.Fatalf("line %d is an unexpected heading %q:\n%s", i+1, l, md)
			}
			inNotes = l == "## Notes"
		case strings.HasPrefix(l, "|"):
			j := i
			for j < len(lines) && strings.HasPrefix(lines[j], "|") {
				j++
			}
			checkTable(t, strings.Join(lines[i:j], "\n"), gfmRowCells(l), j-i-2)
			i = j - 1
		case inNotes && strings.HasPrefix(l, "[^"):
			// A footnote after the notes: one line.
			if !regexp.MustCompile(`^\[\^[0-9]+\]: `).MatchString(l) || blockMarker.MatchString(l[strings.Index(l, ": ")+2:]) {
				t.Fatalf("footnote line %q opens a block:\n%s", l, md)
			}
		case inNotes && l != "":
			if !strings.HasPrefix(l, "- ") || blockMarker.MatchString(l[2:]) {
				t.Fatalf("note line %q opens a block:\n%s", l, md)
			}
			items++
		}
	}
	if fams != families || items != notes {
		t.Fatalf("%d family headings and %d notes, want %d and %d:\n%s", fams, items, families, notes, md)
	}
}

// bidiOpen is how many bidi embeddings, overrides and isolates s leaves
// open at its end: an override opened in a name (U+202E, right-to-left)
// and left open runs on past the name, to the end of its paragraph.
func bidiOpen(s string) int {
	var stack []rune
	for _, r := range s {
		switch r {
		case '\u202a', '\u202b', '\u202d', '\u202e', '\u2066', '\u2067', '\u2068':
			stack = append(stack, r)
		case '\u202c':
			if n := len(stack); n > 0 && stack[n-1] < '\u2066' {
				stack = stack[:n-1]
			}
		case '\u2069':
			for n := len(stack); n > 0; n = len(stack) {
				top := stack[n-1]
				stack = stack[:n-1]
				if top >= '\u2066' {
					break
				}
			}
		}
	}
	return len(stack)
}

// TestBidiControlsAreClosed: a name holding a right-to-left override
// (U+202E) and no closing one reversed the rest of the sentence it sits
// in: "Family ‮evil cannot be told apart from the baseline: … p is
// 0.5000" was drawn "… 0005.0 si p …" in report.html (branch breakit3).
// Text and Code close what the name leaves open, right after it, and
// change nothing else.
func TestBidiControlsAreClosed(t *testing.T) {
	for _, s := range []string{
		"\u202eevil", "a\u202bb\u202dc", "\u2067x", "\u2066\u202ey", "\u202ex\u202c", "\u2067x\u2069\u202e",
		"\u202c\u2069stray closers", "ppo",
	} {
		for name, f := range map[string]func(string) string{"Text": Text, "Code": Code} {
			got := f(s)
			if n := bidiOpen(got); n != 0 {
				t.Errorf("%s(%q) = %q leaves %d open", name, s, got, n)
			}
			if s == "ppo" && got != "ppo" && got != "`ppo`" {
				t.Errorf("%s(%q) = %q: changed", name, s, got)
			}
			if !strings.Contains(got, s) && name == "Code" {
				t.Errorf("%s(%q) = %q does not hold the name", name, s, got)
			}
		}
	}
}
