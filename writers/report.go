package writers

import (
	"fmt"
	"strings"

	"github.com/crlbatch/crlbatch/protocol"
	"github.com/crlbatch/crlbatch/protocol/family"
)

// ReportRow is one row of a family table: its title and the metric behind
// it; PerLabel is false for per-run metrics, which have a value only in the
// "all" column.
type ReportRow struct {
	Title    string
	Metric   string
	PerLabel bool
}

// ReportHeader is what the report says about the job before any number.
// Every field but Bound is plain text, escaped where it is placed (Input
// and the parameter values as code).
type ReportHeader struct {
	Title    string
	Input    string
	Protocol string
	Version  string
	// Params are the parameters in the order they are listed.
	Params []KV
	// Bound says which ceiling was used and how it was derived, in a
	// sentence of Markdown: a name from the data in it goes through Code or
	// Text.
	Bound string
}

// Report is a protocol's report.md: the header, one table per family (the
// protocol's metric rows against its keys — labels, tasks — and `all`), a
// comparison of families, protocol-specific sections, and the notes. Render
// escapes every text it is given (family names, keys, titles, metric names,
// notes) for Markdown and HTML, except Bound and Extra, which are Markdown.
type Report struct {
	Header ReportHeader
	// Rows are the metric rows of every family table; PerKey rows have a
	// value per key, the others only under `all`.
	Rows []ReportRow
	// KeyNoun names the columns ("label", "task").
	KeyNoun  string
	Families *family.Result
	// Columns gives a family's keys and, for a PerKey row, its cell.
	Columns func(family string) (keys []string, cell func(key int, metric string) family.Cell)
	// AdvantageMetric, if set, adds the relative-advantage table.
	AdvantageMetric string
	// Extra is Markdown placed before the notes: text from the data in it
	// goes through Text or Code (and tables through MarkdownTable).
	Extra string
	// Notes are plain sentences, as manifest.json lists them; a name may
	// be quoted in a code span. Render escapes them (see noteMarkdown).
	Notes []string
}

// Render renders the report.
func (r *Report) Render() string {
	var b strings.Builder
	writeHeader(&b, r.Header)
	for _, f := range r.Families.Families {
		fmt.Fprintf(&b, "## Family %s\n\n", familyTitle(f.Name, r.Families))
		fmt.Fprintf(&b, "%d run(s), %d in the aggregates. Each cell is the mean ± sample standard deviation across seeds; `--` is unavailable, `± --` means fewer than two seeds.\n\n", len(f.Runs), f.Included)
		keys, cell := r.Columns(f.Name)
		header := []string{"Metric"}
		for _, k := range keys {
			header = append(header, Text(k))
		}
		header = append(header, "all")
		rows := make([][]string, 0, len(r.Rows))
		perRun := false
		for _, rr := range r.Rows {
			row := []string{Text(rr.Title)}
			for k := range keys {
				if rr.PerLabel {
					c := cell(k, rr.Metric)
					row = append(row, FormatMeanStd(c.Mean, c.Std))
				} else {
					row = append(row, Absent)
				}
			}
			perRun = perRun || !rr.PerLabel
			if fr := familyRow(&f, rr.Metric); fr == nil {
				row = append(row, Absent)
			} else {
				row = append(row, FormatMeanStd(fr.Mean, fr.Std))
			}
			rows = append(rows, row)
		}
		b.WriteString(MarkdownTable(header, rows))
		if perRun && len(keys) > 0 {
			fmt.Fprintf(&b, "\nPer-run metrics have no per-%s value: they appear under `all`, which holds the family's seed values (for per-%s metrics, each run's mean over its %ss).\n", r.KeyNoun, r.KeyNoun, r.KeyNoun)
		}
		b.WriteString("\n")
	}
	writeComparison(&b, r.Families, r.AdvantageMetric)
	if r.Extra != "" {
		b.WriteString(r.Extra)
		if !strings.HasSuffix(r.Extra, "\n\n") {
			b.WriteString("\n")
		}
	}
	writeNotes(&b, r.Families, r.Notes)
	return b.String()
}

func writeHeader(b *strings.Builder, h ReportHeader) {
	fmt.Fprintf(b, "# %s\n\n", Text(h.Title))
	fmt.Fprintf(b, "- input: %s\n- protocol: %s\n- crlbatch: %s\n\n", Code(h.Input), Text(h.Protocol), Text(h.Version))
	var rows [][]string
	for _, kv := range h.Params {
		rows = append(rows, []string{Text(kv.Key), Code(kv.Value)})
	}
	b.WriteString(MarkdownTable([]string{"parameter", "value"}, rows))
	if h.Bound != "" {
		fmt.Fprintf(b, "\n**Ceiling.** %s\n", h.Bound)
	}
	b.WriteString("\n")
}

// familyTitle names a family in the report, "(none)" for the runs without
// a group-by value, marking the baseline of res (nil: mark none).
func familyTitle(name string, res *family.Result) string {
	t := FamilyName(name)
	if res != nil && res.BaselineFound && name == res.Baseline {
		t += " (baseline)"
	}
	return t
}

// FamilyName is how the report names a family wherever it stands (a
// heading, a table cell, a sentence): the name as code, or "(none)" for the
// runs without a group-by value.
func FamilyName(name string) string {
	if name == "" {
		return "(none)"
	}
	return Code(name)
}

func familyRow(f *family.Family, metric string) *family.Row {
	for i := range f.Rows {
		if f.Rows[i].Metric == metric {
			return &f.Rows[i]
		}
	}
	return nil
}

// writeComparison renders families as columns, metrics as rows.
func writeComparison(b *strings.Builder, res *family.Result, advantage string) {
	if len(res.Families) == 0 {
		return
	}
	b.WriteString("## Comparison of families\n\n")
	fmt.Fprintf(b, "Mean ± sample standard deviation across seeds (n seeds with a value).")
	if res.BaselineFound || res.Baseline != "" {
		fmt.Fprintf(b, " Baseline: %s.", familyTitle(res.Baseline, nil))
	}
	b.WriteString("\n\n")
	header := []string{"Metric"}
	for _, f := range res.Families {
		header = append(header, familyTitle(f.Name, res))
	}
	rows := make([][]string, 0, len(res.Metrics))
	for mi, m := range res.Metrics {
		row := []string{Text(m.Name)}
		for _, f := range res.Families {
			r := f.Rows[mi]
			row = append(row, fmt.Sprintf("%s (%d)", FormatMeanStd(r.Mean, r.Std), r.N))
		}
		rows = append(rows, row)
	}
	b.WriteString(MarkdownTable(header, rows))
	if res.BaselineFound && advantage != "" {
		b.WriteString("\n")
		hdr := []string{"Family", "relative adaptation advantage", Text(advantage) + " test", "p", "pairs"}
		var rows2 [][]string
		for _, f := range res.Families {
			var adv, p protocol.Value
			test, pairs := Absent, "0"
			for _, r := range f.Rows {
				if r.Metric == advantage {
					adv, p = r.RelativeAdaptationAdvantage, r.PValue
					if r.Test != "" {
						test = Text(r.Test)
					}
					pairs = fmt.Sprint(r.NPairs)
				}
			}
			rows2 = append(rows2, []string{familyTitle(f.Name, res), FormatValue(adv), test, FormatValue(p), pairs})
		}
		b.WriteString(MarkdownTable(hdr, rows2))
		b.WriteString("\nThe relative adaptation advantage is the baseline's mean adaptation speed minus the family's: positive is faster. Every metric's paired test, adjusted p value, paired difference and probability of improvement are in `families.parquet`.\n")
	}
	b.WriteString("\n")
}

func writeNotes(b *strings.Builder, res *family.Result, notes []string) {
	b.WriteString("## Notes\n\n")
	n := 0
	for _, note := range res.Notes {
		fmt.Fprintf(b, "- %s\n", noteMarkdown(note.Text))
		n++
	}
	for _, note := range notes {
		fmt.Fprintf(b, "- %s\n", noteMarkdown(note))
		n++
	}
	if n == 0 {
		b.WriteString("None.\n")
	}
}
