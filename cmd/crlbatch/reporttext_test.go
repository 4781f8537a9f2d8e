package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Issue 13, finding 10: text from the data (family names, run keys,
// labels, task and benchmark names, object keys, notes that quote them)
// must not rewrite report.md. Each protocol scores an input whose names
// hold table pipes, line breaks, headings, backticks, emphasis, links and
// HTML; the report must keep one heading per family, every table's shape,
// every note on its own list line, and no raw HTML tag from the data.

// hostile are names no report may take as Markdown or HTML.
var hostile = []string{
	"a|b\n# INJECTED <script>alert(1)</script>",
	"c`d``e\\|f",
	"*em* _u_ [l](http://e.test) ~~s~~ $x$ &lt; <img src=x onerror=alert(2)>",
	"- item\r\n---\n> quote\n1. one",
}

func jsonString(s string) string {
	b, err := json.Marshal(s)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func TestReportEscapesDataTextSkyfall(t *testing.T) {
	t.Parallel()
	in := filepath.Join(t.TempDir(), "in")
	var objs []string
	for f, fam := range hostile[:2] {
		for seed := 0; seed < 2; seed++ {
			var b strings.Builder
			for step := 0; step < 12; step++ {
				label := hostile[(step/4+seed)%len(hostile)]
				b.WriteString(`{"step":` + itoa(step) + `,"reward":` + itoa(step%3) + `,"regime_id":` + jsonString(label) +
					`,"run_id":` + jsonString(hostile[3]+itoa(seed)) + `,"seed":` + itoa(seed) +
					`,"algorithm_id":` + jsonString(fam) + "}\n")
			}
			name := "ob`j|#<script>x" + itoa(f) + itoa(seed) + ".jsonl"
			if f == 0 && seed == 0 {
				b.WriteString("{not json\n") // a bad row, so the object's key is quoted in the notes
			}
			writeFile(t, filepath.Join(in, name), b.String())
			objs = append(objs, name)
		}
	}
	for _, groupBy := range []string{"algorithm_id", "source"} {
		t.Run(groupBy, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			code, _, stderr := crl(t, "score", in, "--out", out, "--quiet", "--max-bad-rows", "1", "--group-by", groupBy)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			families := 2
			if groupBy == "source" {
				families = len(objs)
			}
			checkReportShape(t, readReport(t, out), families)
		})
	}
}

func TestReportEscapesDataTextRecordProtocols(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		protocol string
		families int
		replace  map[string]string
	}{
		{"safecrl", 2, map[string]string{`"algorithm_id":"cpo"`: `"algorithm_id":` + jsonString(hostile[0]),
			`"task":"reach"`: `"task":` + jsonString(hostile[1]), `"task":"push"`: `"task":` + jsonString(hostile[2]),
			`"run_id":"ppo_lag-s0"`: `"run_id":` + jsonString(hostile[3])}},
		{"contilab", 3, map[string]string{`"algorithm_id":"er"`: `"algorithm_id":` + jsonString(hostile[0]),
			`"benchmark":"split_cifar"`: `"benchmark":` + jsonString(hostile[1]), `"run_id":"perm_mnist-ewc-s0"`: `"run_id":` + jsonString(hostile[3])}},
		{"skillshift", 2, map[string]string{`"method":"ReAct"`: `"method":` + jsonString(hostile[0]),
			`"site":"gitlab"`: `"site":` + jsonString(hostile[1]), `"condition":"tgt"`: `"condition":` + jsonString(hostile[2])}},
	} {
		t.Run(tc.protocol, func(t *testing.T) {
			in := filepath.Join(t.TempDir(), "in")
			if err := os.CopyFS(in, os.DirFS("../../configs/examples/"+tc.protocol)); err != nil {
				t.Fatal(err)
			}
			err := filepath.WalkDir(in, func(p string, d os.DirEntry, err error) error {
				if err != nil || d.IsDir() {
					return err
				}
				data, err := os.ReadFile(p)
				if err != nil {
					return err
				}
				s := string(data)
				for from, to := range tc.replace {
					s = strings.ReplaceAll(s, from, to)
				}
				return os.WriteFile(p, []byte(s), 0o644)
			})
			if err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(t.TempDir(), "out")
			if code, _, stderr := crl(t, "score", in, "--protocol", tc.protocol, "--out", out, "--quiet"); code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			checkReportShape(t, readReport(t, out), tc.families)
		})
	}
}

func itoa(i int) string {
	b, _ := json.Marshal(i)
	return string(b)
}

func readReport(t *testing.T, out string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(out, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// reportSections are the headings a report may hold besides its title and
// one "## Family …" per family.
var reportSections = map[string]bool{
	"## Summary": true, "## Comparison of families": true, "## Notes": true, "## Across benchmarks": true,
	"## Results per method": true, "## Metrics": true,
}

// footnoteDef is a footnote's definition line: "[^3]: why".
var footnoteDef = regexp.MustCompile(`^\[\^([0-9]+)\]: (.*)$`)

// footnoteRef is a reference to a footnote.
var footnoteRef = regexp.MustCompile(`\[\^([0-9]+)\]`)

var rawHTML = regexp.MustCompile(`(?i)<\s*/?\s*(script|img|a|iframe|style)\b`)

// checkReportShape checks the structure of report.md as a GFM renderer
// sees it: the title, one heading per family and the fixed sections, no
// other block opened by a line's start, tables whose every row has the
// header's number of cells, one list line per note, and no raw HTML tag.
func checkReportShape(t *testing.T, report string, families int) {
	t.Helper()
	defer func() {
		if t.Failed() {
			t.Logf("report.md:\n%s", report)
		}
	}()
	if m := rawHTML.FindString(outsideCodeSpans(report)); m != "" {
		t.Errorf("report.md holds raw HTML %q outside code spans", m)
	}
	lines := strings.Split(strings.TrimSuffix(report, "\n"), "\n")
	titles, fams, inNotes, inSummary, inFigures, headerItems, summaryItems, against, tested := 0, 0, false, false, false, 0, 0, 0, 0
	refs, defs := map[string]bool{}, map[string]bool{}
	for _, l := range lines {
		if !footnoteDef.MatchString(l) {
			for _, m := range footnoteRef.FindAllStringSubmatch(l, -1) {
				refs[m[1]] = true
			}
		}
	}
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if m := footnoteDef.FindStringSubmatch(l); m != nil {
			// A footnote: one line, after the notes, defined once.
			if !inNotes || defs[m[1]] || opensBlock(m[2]) {
				t.Errorf("line %d: footnote %q out of place, defined twice or opening a block", i+1, l)
			}
			defs[m[1]] = true
			continue
		}
		switch {
		case strings.HasPrefix(l, "# "):
			titles++
		case strings.HasPrefix(l, "## Family "):
			fams++
			inNotes, inSummary = false, false
		case l == "## Figures":
			inNotes, inSummary, inFigures = false, false, true
		case inFigures && strings.HasPrefix(l, "### "): // one heading per figure
		case strings.HasPrefix(l, "## Against the baseline "):
			against++
		case strings.HasPrefix(l, "### ") && strings.Contains(l, " against "):
			tested++
		case strings.HasPrefix(l, "#"):
			if !reportSections[l] {
				t.Errorf("line %d is an unexpected heading: %q", i+1, l)
			}
			inNotes, inSummary = l == "## Notes", l == "## Summary"
		case inSummary && strings.HasPrefix(l, "- "):
			if opensBlock(l[2:]) {
				t.Errorf("line %d of the summary is not one plain list item: %q", i+1, l)
			}
			summaryItems++
		case strings.HasPrefix(l, "|"):
			// A table: the header, the delimiter row, the body.
			n := gfmCells(l)
			j := i
			for ; j < len(lines) && strings.HasPrefix(lines[j], "|"); j++ {
				if c := gfmCells(lines[j]); c != n {
					t.Errorf("line %d has %d cells, its table's header %d: %q", j+1, c, n, lines[j])
				}
			}
			if j-i < 2 || strings.Trim(lines[i+1], "|:- ") != "" {
				t.Errorf("line %d: a table without a delimiter row", i+1)
			}
			i = j - 1
		case inNotes:
			if l != "" && l != "None." && (!strings.HasPrefix(l, "- ") || opensBlock(l[2:])) {
				t.Errorf("line %d of the notes is not one plain list item: %q", i+1, l)
			}
		case strings.HasPrefix(l, "- "):
			headerItems++
		case l == "" || l[0] != ' ' && !opensBlock(l):
		default:
			t.Errorf("line %d opens an unexpected block: %q", i+1, l)
		}
	}
	if titles != 1 {
		t.Errorf("%d title lines, want 1", titles)
	}
	if fams != families {
		t.Errorf("%d family headings, want %d", fams, families)
	}
	if headerItems != 3 {
		t.Errorf("%d list items outside the notes, want the header's 3", headerItems)
	}
	if against != 1 || tested != families-1 || summaryItems != families-1 {
		t.Errorf("%d baseline sections, %d families tested, %d summary items; want 1, %d, %d", against, tested, summaryItems, families-1, families-1)
	}
	for n := range refs {
		if !defs[n] {
			t.Errorf("footnote [^%s] is referenced but not defined", n)
		}
	}
	for n := range defs {
		if !refs[n] {
			t.Errorf("footnote [^%s] is defined but never referenced", n)
		}
	}
}

// opensBlock reports whether text at the start of a line (or of a list
// item) opens a Markdown block other than a paragraph.
var blockStart = regexp.MustCompile("^( {4}|\t|#{1,6}( |$)|[-+*]( |$)|[0-9]{1,9}[.)]( |$)|>|```|~~~|<[A-Za-z/!?]|([-*_] *){3,}$|=+ *$)")

func opensBlock(s string) bool { return blockStart.MatchString(s) }

// gfmCells counts the cells of a table row as cmark-gfm splits it: a
// backslash escapes any ASCII punctuation (itself included), and every
// other pipe separates cells; a leading and a trailing pipe open and close
// the row.
func gfmCells(line string) int {
	s := strings.TrimSpace(line)
	var pipes []int
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '\\' && i+1 < len(s) && strings.IndexByte("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~", s[i+1]) >= 0:
			i++
		case s[i] == '|':
			pipes = append(pipes, i)
		}
	}
	n := len(pipes) + 1
	if len(pipes) > 0 && pipes[0] == 0 {
		n--
	}
	if len(pipes) > 0 && pipes[len(pipes)-1] == len(s)-1 && len(s) > 1 {
		n--
	}
	return n
}

// outsideCodeSpans is s without its code spans, as CommonMark finds them
// line by line: a run of n backticks not escaped by a backslash opens a
// span that the next run of exactly n closes (a code span's content is
// text, never HTML); an unclosed run is literal.
func outsideCodeSpans(s string) string {
	var b strings.Builder
	for _, line := range strings.SplitAfter(s, "\n") {
		for i := 0; i < len(line); {
			switch {
			case line[i] == '\\' && i+1 < len(line):
				b.WriteString(line[i : i+2])
				i += 2
			case line[i] == '`':
				n := runOf(line, i)
				if end := closingRun(line, i+n, n); end >= 0 {
					i = end + n
					continue
				}
				b.WriteString(line[i : i+n])
				i += n
			default:
				b.WriteByte(line[i])
				i++
			}
		}
	}
	return b.String()
}

func runOf(s string, i int) int {
	n := 0
	for i+n < len(s) && s[i+n] == '`' {
		n++
	}
	return n
}

// closingRun is where the first run of exactly n backticks at or after i
// starts, or -1.
func closingRun(s string, i, n int) int {
	for i < len(s) {
		if s[i] != '`' {
			i++
			continue
		}
		m := runOf(s, i)
		if m == n {
			return i
		}
		i += m
	}
	return -1
}

// Labels quoted in skyfall's ceiling sentence (per-label ceilings) are
// code spans that a backtick in the label cannot break.
func TestCeilingSentenceQuotesLabels(t *testing.T) {
	t.Parallel()
	in := filepath.Join(t.TempDir(), "in")
	if err := os.MkdirAll(in, 0o755); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for i := 0; i < 20; i++ {
		l := "calm"
		if i >= 10 {
			l = "a`b # x"
		}
		fmt.Fprintf(&b, `{"step": %d, "reward": %d, "regime_id": %q}`+"\n", i, i%3, l)
	}
	if err := os.WriteFile(filepath.Join(in, "r.jsonl"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "out")
	if code, _, stderr := crl(t, "score", in, "--out", out, "--quiet", "--ceiling", "data_relative"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	report, err := os.ReadFile(filepath.Join(out, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(report), "Per-label ceilings: ``a`b # x`` 2.0000, `calm` 2.0000.") {
		t.Errorf("the ceiling sentence does not quote the labels as code spans:\n%s", report)
	}
}
