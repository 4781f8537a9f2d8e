package writers

import (
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/crlbatch/crlbatch/protocol"
)

// Decimals is the number of decimals of every number in the report.
const Decimals = 4

// Absent is how the report prints an unavailable number.
const Absent = "--"

// Large is the magnitude from which the report prints a number in
// scientific notation: from there on Decimals decimals are more digits
// than a reader takes in, and near the top of float64's range hundreds.
const Large = 1e6

// Noise is the magnitude below which the report prints a number as zero:
// float64's machine epsilon, 2^-52. Numbers of order one summed, averaged
// or squared leave remainders of about that size relative to themselves
// where the exact result is zero (the variance of a constant 0.8 is
// 1.3696e-32), and those are no number to show in scientific notation.
const Noise = 0x1p-52

// FormatValue prints v with Decimals decimals, or Absent when v is absent:
// FormatScaled(v) of v alone.
func FormatValue(v protocol.Value) string { return FormatScaled(v) }

// FormatScaled prints v, one of the numbers of a group that are read
// together on one scale (a mean with its std or its confidence interval),
// or Absent when v is absent. Zero (of either sign) and a magnitude below
// Noise print as 0.0000. A magnitude of at least Large prints in
// scientific notation. A number that Decimals decimals would show as zero
// prints as zero (without a minus sign) when a number of its group shows
// a non-zero digit with Decimals decimals: beside 0.0050, 1.4456e-19 is
// zero at the report's resolution. It prints in scientific notation when
// none does: the whole group is below that resolution (a metric measured
// in units of 1e-9), and zeros would hide it. Scientific notation has
// Decimals decimals (1.2346e-09, -4.5700e+301: as many significant digits
// as 1.2346 has), or the shortest digits that read back as v when those
// would read back out of float64's range (next to math.MaxFloat64).
// docs/decisions.md, "Numbers in the report".
func FormatScaled(v protocol.Value, group ...protocol.Value) string {
	if !v.OK {
		return Absent
	}
	if math.Abs(v.V) < Noise { // zero, -0 and rounding noise
		return strconv.FormatFloat(0, 'f', Decimals, 64)
	}
	if math.Abs(v.V) < Large {
		s := strconv.FormatFloat(v.V, 'f', Decimals, 64)
		if shows(s) {
			return s
		}
		for _, g := range group {
			if g.OK && (math.Abs(g.V) >= Large || shows(strconv.FormatFloat(g.V, 'f', Decimals, 64))) {
				return s[strings.IndexByte(s, '0'):] // zero at the group's resolution
			}
		}
	}
	s := strconv.FormatFloat(v.V, 'e', Decimals, 64)
	if _, err := strconv.ParseFloat(s, 64); err != nil {
		s = strconv.FormatFloat(v.V, 'e', -1, 64)
	}
	return s
}

// shows says whether s, a number printed with 'f', has a non-zero digit.
func shows(s string) bool { return strings.Trim(strings.TrimPrefix(s, "-"), "0.") != "" }

// FormatMeanStd prints "mean ± std" ("0.5000 ± 0.1000"), "mean ± --" when std
// is absent (fewer than two values), and Absent when mean is absent.
func FormatMeanStd(mean, std protocol.Value) string {
	if !mean.OK {
		return Absent
	}
	return FormatScaled(mean, std) + " ± " + FormatScaled(std, mean)
}

// MarkdownTable renders a GitHub-flavoured Markdown table. The first column is
// left-aligned and the others right-aligned; cells are padded so that the
// pipes line up in the source. Cells are Markdown: text from the data goes
// in through Text or Code. Whatever a cell holds, it stays one cell: a "|"
// not already escaped is escaped and a line break becomes <br>. Every row
// must have as many cells as header, and header must not be empty: anything
// else is a bug in the caller, and MarkdownTable panics.
func MarkdownTable(header []string, rows [][]string) string {
	var b strings.Builder
	WriteMarkdownTable(&b, header, rows)
	return b.String()
}

// WriteMarkdownTable appends MarkdownTable(header, rows) to b, growing b
// once to hold it: a report's table of 100,000 labels (33 MB) is written
// into the report, not built beside it and copied.
func WriteMarkdownTable(b *strings.Builder, header []string, rows [][]string) {
	if len(header) == 0 {
		panic("writers.MarkdownTable: no columns")
	}
	cells := make([][]string, 0, len(rows)+1)
	cells = append(cells, escapeRow(header))
	for i, r := range rows {
		if len(r) != len(header) {
			panic("writers.MarkdownTable: row " + strconv.Itoa(i) + " has " + strconv.Itoa(len(r)) +
				" cells, header has " + strconv.Itoa(len(header)))
		}
		cells = append(cells, escapeRow(r))
	}
	// Each cell's width in runes, counted once.
	runes := make([][]int, len(cells))
	width := make([]int, len(header))
	size := 0
	for i, r := range cells {
		runes[i] = make([]int, len(r))
		for j, s := range r {
			n := utf8.RuneCountInString(s)
			runes[i][j] = n
			width[j] = max(width[j], 3, n)
			size += len(s) - n
		}
	}
	// Every line is "|" and, per column, " " + the width + " |", then "\n";
	// size holds the bytes of multi-byte runes beyond one each.
	line := 1
	for _, w := range width {
		line += w + 3
	}
	b.Grow(size + (line+1)*(len(cells)+1))
	pad := func(n int, ch byte) {
		for range n {
			b.WriteByte(ch)
		}
	}
	row := func(r []string, n []int) {
		b.WriteByte('|')
		for j, s := range r {
			b.WriteByte(' ')
			if j == 0 {
				b.WriteString(s)
				pad(width[j]-n[j], ' ')
			} else {
				pad(width[j]-n[j], ' ')
				b.WriteString(s)
			}
			b.WriteString(" |")
		}
		b.WriteByte('\n')
	}
	row(cells[0], runes[0])
	b.WriteByte('|')
	for j, w := range width {
		b.WriteByte(' ')
		if j == 0 {
			b.WriteByte(':')
			pad(w-1, '-')
		} else {
			pad(w-1, '-')
			b.WriteByte(':')
		}
		b.WriteString(" |")
	}
	b.WriteByte('\n')
	for i, r := range cells[1:] {
		row(r, runes[i+1])
	}
}

func escapeRow(r []string) []string {
	out := make([]string, len(r))
	for i, s := range r {
		out[i] = escapeCell(s)
	}
	return out
}

// escapeCell keeps a cell in its column: a line break becomes <br>, and a
// pipe not already escaped becomes \|. GFM splits a row before it reads
// any inline (a code span included), and a backslash escapes the character
// after it, so a pipe is escaped when an odd number of backslashes stand
// before it; "a\\|b" (an escaped backslash, then a pipe) would end the cell,
// and gets one more backslash.
func escapeCell(s string) string {
	if !strings.ContainsAny(s, "|\r\n") {
		return s
	}
	s = replaceLineBreaks(s, "<br>")
	var b strings.Builder
	slashes := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			slashes++
		case '|':
			if slashes%2 == 0 {
				b.WriteByte('\\')
			}
			slashes = 0
		default:
			slashes = 0
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
