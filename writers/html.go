package writers

import (
	"bytes"
	"fmt"
	"html"
	"io"
	"regexp"
	"strconv"
	"strings"
)

// The HTML report is report.md turned into one static page by a small
// converter for the Markdown the reports use (GitHub-flavoured: headings,
// paragraphs, lists, tables with alignment, block quotes, fenced code,
// code spans, **strong**, *emphasis*, links, images, backslash escapes,
// entities and <br>), so that the page and the Markdown never say
// different things. An image whose target is a figure handed in is
// replaced by that figure's SVG inline; the page fetches nothing: no
// script, font, stylesheet or image from anywhere.

// Figure is a figure the HTML report shows inline: the PNG path report.md
// links and the SVG drawn in its place.
type Figure struct {
	PNG string // "figure-reward-ppo.png"
	SVG []byte
}

// FigureRef is one entry of report.md's Figures section.
type FigureRef struct {
	Title, PNG, SVG, Caption string
}

// FiguresSection is the Figures section appended to report.md: per figure
// a heading, the PNG, a link to the SVG and the caption.
func FiguresSection(figs []FigureRef) string {
	if len(figs) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\n## Figures\n")
	for _, f := range figs {
		fmt.Fprintf(&b, "\n### %s\n\n![%s](%s)\n\n%s ([SVG](%s))\n", Text(f.Title), altText(f.Title), f.PNG, Text(f.Caption), f.SVG)
	}
	return b.String()
}

// altText is s as an image's alt text in Markdown: Text, with every [
// and ] escaped too. Text leaves a bracket that opens or closes no link
// as it is, but inside "![…](…)" one ends the image early ("sac]") or
// makes a link of its tail ("ewc[lr"), and a balanced pair ("ppo[lr=3]")
// is a nested bracket the report's converter does not take: either way
// the figure was shown as its Markdown.
func altText(s string) string {
	t := Text(s)
	if !strings.ContainsAny(t, "[]") {
		return t
	}
	var b strings.Builder
	b.Grow(len(t) + 4)
	for i := 0; i < len(t); i++ {
		switch c := t[i]; c {
		case '\\': // an escape of Text's: keep it with what it escapes
			b.WriteByte(c)
			if i+1 < len(t) {
				i++
				b.WriteByte(t[i])
			}
		case '[', ']':
			b.WriteByte('\\')
			b.WriteByte(c)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// pageStyle is the page's only style: readable on a phone, printable.
const pageStyle = `:root{color-scheme:light}
body{margin:0 auto;max-width:64rem;padding:1rem;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Liberation Sans",Arial,sans-serif;color:#1b1f24;background:#fff}
h1{font-size:1.6rem;margin:.5rem 0 1rem}h2{font-size:1.3rem;margin:2rem 0 .5rem;border-bottom:1px solid #d0d7de}h3{font-size:1.1rem;margin:1.5rem 0 .5rem}
code{font-family:ui-monospace,"Liberation Mono",Menlo,Consolas,monospace;font-size:.9em;background:#f3f4f6;padding:0 .2em;border-radius:3px}
pre{overflow-x:auto;background:#f3f4f6;padding:.5rem}pre code{padding:0}
.table{overflow-x:auto;margin:.5rem 0 1rem}table{border-collapse:collapse;font-size:.9rem}th,td{border:1px solid #d0d7de;padding:.2rem .5rem;white-space:nowrap}th{background:#f6f8fa}td code{white-space:normal;overflow-wrap:anywhere}tr:nth-child(even) td{background:#fafbfc}
blockquote{margin:.5rem 0;padding:.2rem 1rem;border-left:4px solid #d0d7de;color:#444}
figure{margin:1rem 0}figure svg{display:block;width:100%;max-width:48rem;height:auto}
img{max-width:100%}
sup.fn{line-height:0}section.footnotes{border-top:1px solid #d0d7de;margin-top:1rem}section.footnotes h4{margin:.5rem 0 0;font-size:.9rem;color:#444}ol.footnotes{font-size:.9rem;color:#444}
@media print{body{max-width:none;font-size:11pt}.table{overflow:visible}th,td{white-space:normal}figure,table{break-inside:avoid}a{color:inherit}}`

// HTML returns the page for the report md: title from its first heading,
// figures (by the PNG path report.md links) drawn inline as SVG.
func HTML(md string, figs []Figure) ([]byte, error) {
	p, err := NewPage(md, figs)
	if err != nil {
		return nil, err
	}
	var page bytes.Buffer
	if _, err := p.WriteTo(&page); err != nil {
		return nil, err
	}
	return page.Bytes(), nil
}

// Page is the page of a report, not yet converted: WriteTo converts it
// as it writes, so that it is never held whole (a report with a table of
// 100,000 labels is 35 MB of Markdown and 137 MB of HTML).
type Page struct {
	md   string
	svgs map[string][]byte
}

// NewPage checks the figures of the page for the report md (HTML's).
func NewPage(md string, figs []Figure) (*Page, error) {
	svgs := map[string][]byte{}
	for _, f := range figs {
		svg, err := inlineSVG(f.SVG)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f.PNG, err)
		}
		svgs[f.PNG] = svg
	}
	return &Page{md: md, svgs: svgs}, nil
}

// htmlFlush is how many bytes of the page the converter gathers before it
// hands them to the writer.
const htmlFlush = 64 << 10

// WriteTo writes the page to w in pieces of about htmlFlush bytes, as they
// are converted (a block at a time; a table a row at a time); the first
// error of w ends the conversion. It may be called again (another attempt
// at a write) and writes the same bytes.
func (p *Page) WriteTo(w io.Writer) (int64, error) {
	c := &converter{svgs: p.svgs, w: w}
	md := p.md
	lines := strings.Split(strings.ReplaceAll(md, "\r\n", "\n"), "\n")
	title := "crlbatch report"
	for _, l := range lines {
		if strings.HasPrefix(l, "# ") {
			title = plain(strings.TrimPrefix(l, "# "))
			break
		}
	}
	c.out.Grow(2 * htmlFlush)
	c.out.WriteString("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n")
	c.out.WriteString("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n")
	c.out.WriteString("<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\">\n")
	fmt.Fprintf(&c.out, "<title>%s</title>\n<style>\n%s\n</style>\n</head>\n<body>\n", html.EscapeString(title), pageStyle)
	c.blocks(lines)
	c.out.WriteString("</body>\n</html>\n")
	c.flush(0)
	return c.n, c.err
}

var xmlDecl = regexp.MustCompile(`^(?s)\s*(<\?xml[^>]*\?>\s*)?(<!--.*?-->\s*)*(<!DOCTYPE[^>]*>\s*)?`)

// inlineSVG makes an SVG document an element of the page: no XML
// declaration, a viewBox so that it scales with the page.
func inlineSVG(svg []byte) ([]byte, error) {
	s := xmlDecl.ReplaceAllString(string(svg), "")
	if !strings.HasPrefix(s, "<svg") {
		return nil, fmt.Errorf("not an SVG document")
	}
	end := strings.IndexByte(s, '>')
	open := s[:end]
	if !strings.Contains(open, "viewBox") {
		w := attr(open, "width")
		h := attr(open, "height")
		if w == "" || h == "" {
			return nil, fmt.Errorf("an SVG without width and height")
		}
		open += fmt.Sprintf(` viewBox="0 0 %s %s" role="img"`, strings.TrimSuffix(w, "pt"), strings.TrimSuffix(h, "pt"))
	}
	return []byte(open + s[end:]), nil
}

func attr(tag, name string) string {
	m := regexp.MustCompile(`\s` + name + `="([^"]*)"`).FindStringSubmatch(tag)
	if m == nil {
		return ""
	}
	return m[1]
}

type converter struct {
	out  bytes.Buffer // the page not yet handed to w
	w    io.Writer
	n    int64 // the bytes w took
	err  error // w's first error: nothing more is converted
	svgs map[string][]byte
	ids  map[string]int
}

// flush hands the page converted so far to w once it holds at least
// atLeast bytes (0: whatever it holds).
func (c *converter) flush(atLeast int) {
	if c.out.Len() < max(atLeast, 1) {
		return
	}
	if c.err == nil {
		var n int
		n, c.err = c.w.Write(c.out.Bytes())
		c.n += int64(n)
	}
	c.out.Reset()
}

var (
	headingRe = regexp.MustCompile(`^(#{1,6}) +(.*?)#*\s*$`)
	bulletRe  = regexp.MustCompile(`^([-*+]) +(.*)$`)
	orderedRe = regexp.MustCompile(`^(\d{1,9})[.)] +(.*)$`)
	imageRe   = regexp.MustCompile(`^!\[((?:[^\\\[\]]|\\.)*)\]\(([^)\s]+)\)$`)
	// A footnote's definition, "[^3]: why", and a reference to it, "[^3]"
	// (GitHub-flavoured Markdown; the report's reasons for "--").
	footnoteDefRe = regexp.MustCompile(`^\[\^([A-Za-z0-9_-]+)\]: ?(.*)$`)
	footnoteRefRe = regexp.MustCompile(`^\[\^([A-Za-z0-9_-]+)\]`)
)

// blocks converts a sequence of lines.
func (c *converter) blocks(lines []string) {
	for i := 0; i < len(lines) && c.err == nil; {
		c.flush(htmlFlush)
		l := lines[i]
		t := strings.TrimSpace(l)
		switch {
		case t == "":
			i++
		case strings.HasPrefix(t, "```"):
			j := i + 1
			for j < len(lines) && !strings.HasPrefix(strings.TrimSpace(lines[j]), "```") {
				j++
			}
			c.out.WriteString("<pre><code>")
			for _, cl := range lines[i+1 : min(j, len(lines))] {
				c.out.WriteString(html.EscapeString(cl))
				c.out.WriteByte('\n')
			}
			c.out.WriteString("</code></pre>\n")
			i = j + 1
		case headingRe.MatchString(l):
			m := headingRe.FindStringSubmatch(l)
			n := len(m[1])
			fmt.Fprintf(&c.out, "<h%d id=\"%s\">%s</h%d>\n", n, c.id(plain(m[2])), c.inline(m[2]), n)
			i++
		case strings.HasPrefix(t, ">"):
			j := i
			var inner []string
			for j < len(lines) && strings.HasPrefix(strings.TrimSpace(lines[j]), ">") {
				s := strings.TrimPrefix(strings.TrimSpace(lines[j]), ">")
				inner = append(inner, strings.TrimPrefix(s, " "))
				j++
			}
			c.out.WriteString("<blockquote>\n")
			c.blocks(inner)
			c.out.WriteString("</blockquote>\n")
			i = j
		case strings.HasPrefix(t, "|") && i+1 < len(lines) && isSepRow(strings.TrimSpace(lines[i+1])):
			j := i + 2
			for j < len(lines) && strings.HasPrefix(strings.TrimSpace(lines[j]), "|") {
				j++
			}
			c.table(lines[i], lines[i+1], lines[i+2:j])
			i = j
		case footnoteDefRe.MatchString(l):
			// Consecutive definitions, in place, as one numbered list whose
			// items the references link to, under a heading of their own:
			// GitHub moves them to the foot of the page under "Footnotes",
			// and without one they read as items of the section they
			// follow ("Notes: None." then a numbered note).
			c.out.WriteString("<section class=\"footnotes\">\n<h4>Footnotes</h4>\n<ol class=\"footnotes\">\n")
			for ; i < len(lines) && footnoteDefRe.MatchString(lines[i]); i++ {
				m := footnoteDefRe.FindStringSubmatch(lines[i])
				value := ""
				if n, err := strconv.Atoi(m[1]); err == nil && n > 0 {
					value = fmt.Sprintf(" value=\"%d\"", n)
				}
				fmt.Fprintf(&c.out, "<li id=\"fn-%s\"%s>%s</li>\n", m[1], value, c.inline(m[2]))
			}
			c.out.WriteString("</ol>\n</section>\n")
		case bulletRe.MatchString(l) || orderedRe.MatchString(l):
			i = c.list(lines, i)
		case imageRe.MatchString(t):
			m := imageRe.FindStringSubmatch(t)
			if svg, ok := c.svgs[unescape(m[2])]; ok {
				fmt.Fprintf(&c.out, "<figure>\n%s</figure>\n", svg)
			} else {
				fmt.Fprintf(&c.out, "<p>%s</p>\n", c.inline(t))
			}
			i++
		default:
			j := i
			var para []string
			for j < len(lines) && strings.TrimSpace(lines[j]) != "" && !c.startsBlock(lines, j) {
				para = append(para, strings.TrimSpace(lines[j]))
				j++
			}
			if j == i { // a line that looks like a block but is not one
				para, j = []string{t}, i+1
			}
			fmt.Fprintf(&c.out, "<p>%s</p>\n", c.inline(strings.Join(para, "\n")))
			i = j
		}
	}
}

// isSepRow reports whether s is a table's separator row: what
// `^\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$` matches (TestIsSepRowMatchesItsExpression),
// by hand: the expression took 0.27 s on the separator row of a table of
// 100,000 labels (a megabyte long; issue 16).
func isSepRow(s string) bool {
	i := 0
	if i < len(s) && s[i] == '|' {
		i++
	}
	i, ok := sepCell(s, i)
	if !ok {
		return false
	}
	for i < len(s) && s[i] == '|' {
		j, ok := sepCell(s, i+1)
		if !ok {
			i++ // the row's closing pipe
			break
		}
		i = j
	}
	return skipSpaces(s, i) == len(s)
}

// sepCell matches `\s*:?-+:?\s*` at s[i:], returning where it ends.
func sepCell(s string, i int) (int, bool) {
	i = skipSpaces(s, i)
	if i < len(s) && s[i] == ':' {
		i++
	}
	j := i
	for j < len(s) && s[j] == '-' {
		j++
	}
	if j == i {
		return 0, false
	}
	if j < len(s) && s[j] == ':' {
		j++
	}
	return skipSpaces(s, j), true
}

// skipSpaces skips what `\s*` matches (RE2's \s: tab, newline, form
// feed, carriage return, space).
func skipSpaces(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\f' || s[i] == '\r') {
		i++
	}
	return i
}

func (c *converter) startsBlock(lines []string, i int) bool {
	l := lines[i]
	t := strings.TrimSpace(l)
	return strings.HasPrefix(t, "```") || headingRe.MatchString(l) || strings.HasPrefix(t, ">") || footnoteDefRe.MatchString(l) ||
		bulletRe.MatchString(l) || orderedRe.MatchString(l) || imageRe.MatchString(t) ||
		strings.HasPrefix(t, "|") && i+1 < len(lines) && isSepRow(strings.TrimSpace(lines[i+1]))
}

// list converts the list starting at line i; an item continues on lines
// indented by two spaces or more (a nested list among them).
func (c *converter) list(lines []string, i int) int {
	ordered := !bulletRe.MatchString(lines[i])
	tag := "ul"
	if ordered {
		tag = "ol"
	}
	c.out.WriteString("<" + tag + ">\n")
	for i < len(lines) {
		var m []string
		if ordered {
			m = orderedRe.FindStringSubmatch(lines[i])
		} else {
			m = bulletRe.FindStringSubmatch(lines[i])
		}
		if m == nil {
			break
		}
		item := []string{m[2]}
		i++
		for i < len(lines) && (strings.HasPrefix(lines[i], "  ") || strings.TrimSpace(lines[i]) == "" && i+1 < len(lines) && strings.HasPrefix(lines[i+1], "  ")) {
			item = append(item, strings.TrimPrefix(strings.TrimPrefix(lines[i], "  "), "  "))
			i++
		}
		c.out.WriteString("<li>")
		if len(item) == 1 {
			c.out.WriteString(c.inline(item[0]))
		} else {
			// the first line is the item's text; what follows its blocks
			j := 1
			for j < len(item) && strings.TrimSpace(item[j]) != "" && !c.startsBlock(item, j) {
				j++
			}
			c.out.WriteString(c.inline(strings.Join(item[:j], "\n")))
			c.out.WriteByte('\n')
			c.blocks(item[j:])
		}
		c.out.WriteString("</li>\n")
	}
	c.out.WriteString("</" + tag + ">\n")
	return i
}

// cells splits a table row on the pipes that are not escaped.
func cells(row string) []string {
	row = strings.TrimSpace(row)
	row = strings.TrimPrefix(row, "|")
	if strings.HasSuffix(row, "|") && !strings.HasSuffix(row, `\|`) {
		row = row[:len(row)-1]
	}
	if strings.IndexByte(row, '\\') < 0 {
		// No escaped pipe: the cells are substrings, not copies.
		out := make([]string, 0, strings.Count(row, "|")+1)
		for {
			k := strings.IndexByte(row, '|')
			if k < 0 {
				return append(out, strings.TrimSpace(row))
			}
			out = append(out, strings.TrimSpace(row[:k]))
			row = row[k+1:]
		}
	}
	var out []string
	var cur strings.Builder
	for i := 0; i < len(row); i++ {
		switch {
		case row[i] == '\\' && i+1 < len(row) && row[i+1] == '|':
			cur.WriteByte('|')
			i++
		case row[i] == '|':
			out = append(out, strings.TrimSpace(cur.String()))
			cur.Reset()
		default:
			cur.WriteByte(row[i])
		}
	}
	return append(out, strings.TrimSpace(cur.String()))
}

func (c *converter) table(head, sep string, rows []string) {
	var align []string
	for _, s := range cells(sep) {
		switch {
		case strings.HasPrefix(s, ":") && strings.HasSuffix(s, ":"):
			align = append(align, "center")
		case strings.HasSuffix(s, ":"):
			align = append(align, "right")
		case strings.HasPrefix(s, ":"):
			align = append(align, "left")
		default:
			align = append(align, "")
		}
	}
	// Each cell's opening tag, by column; the cell's content is converted
	// straight into the page (a table may have 100,000 columns).
	style := make([]string, len(align))
	for i, a := range align {
		if a != "" {
			style[i] = ` style="text-align:` + a + `"`
		}
	}
	cell := func(tag string, i int, s string) {
		c.out.WriteByte('<')
		c.out.WriteString(tag)
		if i < len(style) {
			c.out.WriteString(style[i])
		}
		c.out.WriteByte('>')
		c.inlineTo(&c.out, s)
		c.out.WriteString("</")
		c.out.WriteString(tag)
		c.out.WriteByte('>')
	}
	c.out.WriteString("<div class=\"table\"><table>\n<thead><tr>")
	hs := cells(head)
	for i, h := range hs {
		cell("th", i, h)
	}
	c.out.WriteString("</tr></thead>\n<tbody>\n")
	for _, r := range rows {
		if c.flush(htmlFlush); c.err != nil {
			return
		}
		c.out.WriteString("<tr>")
		cs := cells(r)
		for i := range hs {
			s := ""
			if i < len(cs) {
				s = cs[i]
			}
			cell("td", i, s)
		}
		c.out.WriteString("</tr>\n")
	}
	c.out.WriteString("</tbody></table></div>\n")
}

// id is a unique anchor for a heading.
func (c *converter) id(s string) string {
	if c.ids == nil {
		c.ids = map[string]int{}
	}
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		switch {
		case r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteByte('-')
		}
	}
	id := b.String()
	if id == "" {
		id = "section"
	}
	c.ids[id]++
	if n := c.ids[id]; n > 1 {
		id = fmt.Sprintf("%s-%d", id, n-1)
	}
	return id
}

const punct = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"

var entityRe = regexp.MustCompile(`^&(#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});`)

// inline converts the inline Markdown of one block.
func (c *converter) inline(s string) string {
	var b bytes.Buffer
	c.inlineTo(&b, s)
	return b.String()
}

func (c *converter) inlineTo(b *bytes.Buffer, s string) {
	for i := 0; i < len(s); {
		ch := s[i]
		switch {
		case ch == '\\' && i+1 < len(s) && strings.IndexByte(punct, s[i+1]) >= 0:
			b.WriteString(html.EscapeString(s[i+1 : i+2]))
			i += 2
		case ch == '\\' && i+1 < len(s) && s[i+1] == '\n':
			b.WriteString("<br>\n")
			i += 2
		case ch == '`':
			n := run(s[i:], '`')
			end := findRun(s, i+n, '`', n)
			if end < 0 {
				b.WriteString(s[i : i+n])
				i += n
				continue
			}
			code := strings.ReplaceAll(s[i+n:end], "\n", " ")
			if len(code) >= 2 && code[0] == ' ' && code[len(code)-1] == ' ' && strings.Trim(code, " ") != "" {
				code = code[1 : len(code)-1]
			}
			b.WriteString("<code>" + html.EscapeString(code) + "</code>")
			i = end + n
		case strings.HasPrefix(s[i:], "**"):
			end := strings.Index(s[i+2:], "**")
			if end <= 0 {
				b.WriteString("**")
				i += 2
				continue
			}
			b.WriteString("<strong>")
			c.inlineTo(b, s[i+2:i+2+end])
			b.WriteString("</strong>")
			i += end + 4
		case ch == '*' && i+1 < len(s) && s[i+1] != ' ':
			end := strings.IndexByte(s[i+1:], '*')
			if end <= 0 || s[i+end] == ' ' {
				b.WriteByte('*')
				i++
				continue
			}
			b.WriteString("<em>")
			c.inlineTo(b, s[i+1:i+1+end])
			b.WriteString("</em>")
			i += end + 2
		case ch == '!' && i+1 < len(s) && s[i+1] == '[':
			if text, target, n, ok := link(s[i+1:]); ok {
				fmt.Fprintf(b, `<img src="%s" alt="%s">`, html.EscapeString(target), html.EscapeString(plain(text)))
				i += 1 + n
				continue
			}
			b.WriteByte('!')
			i++
		case ch == '[' && footnoteRef(s[i:]) > 0:
			// footnoteRefRe, without a regular expression per bracket: a
			// table of 100,000 labels holds a reference in many cells.
			n := footnoteRef(s[i:])
			name := s[i+2 : i+n-1]
			b.WriteString(`<sup class="fn"><a href="#fn-`)
			b.WriteString(name)
			b.WriteString(`">`)
			b.WriteString(name)
			b.WriteString(`</a></sup>`)
			i += n
		case ch == '[':
			if text, target, n, ok := link(s[i:]); ok {
				fmt.Fprintf(b, `<a href="%s">`, html.EscapeString(target))
				c.inlineTo(b, text)
				b.WriteString("</a>")
				i += n
				continue
			}
			b.WriteByte('[')
			i++
		case ch == '&':
			if m := entityRe.FindString(s[i:]); m != "" {
				b.WriteString(m)
				i += len(m)
				continue
			}
			b.WriteString("&amp;")
			i++
		case strings.HasPrefix(s[i:], "<br>"):
			b.WriteString("<br>")
			i += 4
		case ch == '<':
			b.WriteString("&lt;")
			i++
		case ch == '>':
			b.WriteString("&gt;")
			i++
		case ch == '"':
			b.WriteString("&#34;")
			i++
		default:
			b.WriteByte(ch)
			i++
		}
	}
}

// footnoteRef is the length of the footnote reference at the start of s
// ("[^name]", what footnoteRefRe matches), or 0.
func footnoteRef(s string) int {
	if len(s) < 4 || s[0] != '[' || s[1] != '^' {
		return 0
	}
	for i := 2; i < len(s); i++ {
		switch c := s[i]; {
		case c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-':
		case c == ']' && i > 2:
			return i + 1
		default:
			return 0
		}
	}
	return 0
}

func run(s string, ch byte) int {
	n := 0
	for n < len(s) && s[n] == ch {
		n++
	}
	return n
}

// findRun finds a run of exactly n ch from i.
func findRun(s string, i int, ch byte, n int) int {
	for i < len(s) {
		if s[i] == ch {
			m := run(s[i:], ch)
			if m == n {
				return i
			}
			i += m
			continue
		}
		i++
	}
	return -1
}

// link parses [text](target) at the start of s (escaped brackets in text
// are text), returning its length.
func link(s string) (text, target string, n int, ok bool) {
	depth := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '`':
			m := run(s[i:], '`')
			if end := findRun(s, i+m, '`', m); end >= 0 {
				i = end + m - 1
			}
		case '[':
			depth++
		case ']':
			depth--
			if depth == 0 {
				if i+1 >= len(s) || s[i+1] != '(' {
					return "", "", 0, false
				}
				end := strings.IndexByte(s[i+2:], ')')
				if end < 0 || strings.ContainsAny(s[i+2:i+2+end], " \n") {
					return "", "", 0, false
				}
				return s[1:i], unescape(s[i+2 : i+2+end]), i + 3 + end, true
			}
		}
	}
	return "", "", 0, false
}

func unescape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && strings.IndexByte(punct, s[i+1]) >= 0 {
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// plain is inline Markdown as text: for a title, an id or an alt text.
func plain(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '\\' && i+1 < len(s) && strings.IndexByte(punct, s[i+1]) >= 0:
			b.WriteByte(s[i+1])
			i++
		case s[i] == '`' || s[i] == '*':
		default:
			b.WriteByte(s[i])
		}
	}
	return html.UnescapeString(b.String())
}
