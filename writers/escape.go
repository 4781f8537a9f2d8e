package writers

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/crlbatch/crlbatch/internal/bidi"
)

// Text from the data (family names, run keys, labels, task names, object
// keys, metadata values) enters report.md only through Text or Code, so that
// no name can open a heading, a list, a quote, a link, emphasis, a table
// cell or an HTML element. Both leave an ordinary name ("calm_again",
// "ppo/0", "run_id=ewc-s0|seed=0") byte for byte as it is: they escape what
// Markdown or HTML would read as syntax, and nothing else.

// LineBreakInCode is what a line break of the data becomes inside a code
// span, which cannot hold one.
const LineBreakInCode = "␤"

// Code returns s as one Markdown code span: its fence is one backtick longer
// than the longest run of backticks in s, padded by a space on each side
// when s starts or ends with a backtick (or with a space on both sides), so
// that CommonMark shows exactly s. A line break becomes LineBreakInCode.
// Inside a code span nothing is Markdown or HTML. Code("") is two
// backticks, which Markdown shows as they are, as the report always has
// for an empty value. In a table cell MarkdownTable still escapes the pipes.
func Code(s string) string {
	if s == "" {
		return "``"
	}
	s = closeBidi(replaceLineBreaks(s, LineBreakInCode))
	longest, run := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", longest+1)
	pad := ""
	if s[0] == '`' || s[len(s)-1] == '`' || s[0] == ' ' && s[len(s)-1] == ' ' && strings.Trim(s, " ") != "" {
		pad = " "
	}
	return fence + pad + s + pad + fence
}

// Text returns s as Markdown inline text that shows s and nothing else, in a
// table cell, a heading or a list item: a line break becomes <br>; < > &
// become HTML entities; \ ` * # ~ $ are backslash-escaped, and so are a ]
// before ( or [ (a link or an image), a _ not between two letters or digits
// (emphasis; "calm_again" stays as it is), and at the start of s a [ (a
// link definition, a footnote, a task-list box) or a list or
// thematic-break marker ("- ", "+ ", "1. ", "---"). Elsewhere a [ is plain
// text ("runs [a b] have …" stays as it is): no link can close without the
// escaped ]( or ][, and none is defined but at the start of a block. A | is
// left to MarkdownTable: outside a table it is plain text.
func Text(s string) string {
	if !needsText(s) {
		return closeBidi(s)
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		c := s[i]
		switch c {
		case '\r':
			b.WriteString("<br>")
			i++
			if i < len(s) && s[i] == '\n' {
				i++
			}
			continue
		case '\n':
			b.WriteString("<br>")
		case '<':
			b.WriteString("&lt;")
		case '>':
			b.WriteString("&gt;")
		case '&':
			b.WriteString("&amp;")
		case '\\', '`', '*', '#', '~', '$':
			b.WriteByte('\\')
			b.WriteByte(c)
		case '[':
			if i == 0 {
				b.WriteByte('\\')
			}
			b.WriteByte(c)
		case ']':
			if i+1 < len(s) && (s[i+1] == '(' || s[i+1] == '[') {
				b.WriteByte('\\')
			}
			b.WriteByte(c)
		case '_':
			j := i
			for j < len(s) && s[j] == '_' {
				j++
			}
			before, _ := utf8.DecodeLastRuneInString(s[:i])
			after, _ := utf8.DecodeRuneInString(s[j:])
			intraword := i > 0 && j < len(s) && isWordRune(before) && isWordRune(after)
			for ; i < j; i++ {
				if !intraword {
					b.WriteByte('\\')
				}
				b.WriteByte('_')
			}
			continue
		default:
			b.WriteByte(c)
		}
		i++
	}
	return closeBidi(escapeBlockStart(b.String()))
}

// closeBidi is bidi.Close: the bidi embeddings, overrides and isolates s
// leaves open closed at its end.
func closeBidi(s string) string { return bidi.Close(s) }

// needsText reports whether Text would change s.
func needsText(s string) bool {
	if s == "" {
		return false
	}
	if escapeBlockStart(s) != s {
		return true
	}
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\r', '\n', '<', '>', '&', '\\', '`', '*', '#', '[', '~', '$', ']', '_':
			return true
		}
	}
	return false
}

func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// escapeBlockStart escapes a marker at the start of s that would open a
// list or a thematic break where s starts a line or a list item ("- x",
// "+", "1. x", "2) x", "--", "- - -"). #, >, <, `, ~, * and [ are escaped
// wherever they stand.
func escapeBlockStart(s string) string {
	if s == "" {
		return s
	}
	switch s[0] {
	case '-', '+':
		if len(s) == 1 || s[1] == ' ' || s[1] == '\t' || s[0] == '-' && strings.Trim(s, "- \t") == "" {
			return `\` + s
		}
	case '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		j := 1
		for j < len(s) && j < 10 && s[j] >= '0' && s[j] <= '9' {
			j++
		}
		if j < len(s) && j <= 9 && (s[j] == '.' || s[j] == ')') && (j+1 == len(s) || s[j+1] == ' ' || s[j+1] == '\t') {
			return s[:j] + `\` + s[j:]
		}
	}
	return s
}

// replaceLineBreaks replaces every \r\n, \n and \r of s with with.
func replaceLineBreaks(s, with string) string {
	if !strings.ContainsAny(s, "\r\n") {
		return s
	}
	return strings.NewReplacer("\r\n", with, "\n", with, "\r", with).Replace(s)
}

// noteMarkdown renders a note for the report's list. Notes are plain
// sentences (manifest.json holds them as they are) that quote names from
// the data, some inside code spans ("skipped `x.jsonl` line 3"): the code
// spans, as CommonMark finds them, are rendered again with Code, the text
// around them with Text, so an ordinary note is unchanged and no name
// inside one can end its list item or open a block or an HTML element. A
// backtick of the data may at worst set part of a name in code type.
func noteMarkdown(s string) string {
	var b strings.Builder
	text := 0 // start of the text not yet written
	for i := 0; i < len(s); {
		switch {
		case s[i] == '\\' && i+1 < len(s) && s[i+1] == '`':
			i += 2 // an escaped backtick opens nothing
		case s[i] == '`':
			n := backtickRun(s, i)
			end := closingBackticks(s, i+n, n)
			if end < 0 {
				i += n
				continue
			}
			b.WriteString(Text(s[text:i]))
			b.WriteString(Code(codeContent(s[i+n : end])))
			i = end + n
			text = i
		default:
			i++
		}
	}
	if text == 0 {
		return Text(s)
	}
	b.WriteString(Text(s[text:]))
	return b.String()
}

// codeContent is what CommonMark shows of a code span's raw content: one
// space stripped from each side when both are spaces and not all is space.
func codeContent(raw string) string {
	if len(raw) >= 2 && raw[0] == ' ' && raw[len(raw)-1] == ' ' && strings.Trim(raw, " ") != "" {
		return raw[1 : len(raw)-1]
	}
	return raw
}

func backtickRun(s string, i int) int {
	n := 0
	for i+n < len(s) && s[i+n] == '`' {
		n++
	}
	return n
}

// closingBackticks is where the first run of exactly n backticks at or
// after i starts, or -1.
func closingBackticks(s string, i, n int) int {
	for i < len(s) {
		if s[i] != '`' {
			i++
			continue
		}
		m := backtickRun(s, i)
		if m == n {
			return i
		}
		i += m
	}
	return -1
}
