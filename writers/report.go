package writers

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/crlbatch/crlbatch/protocol"
	"github.com/crlbatch/crlbatch/protocol/family"
	"github.com/crlbatch/crlbatch/protocol/stats"
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
	// Params are the parameters in the order they are listed: those that
	// shape a number under the chosen settings (crlbatch.params holds all).
	Params []KV
	// Omitted, when set, says in a sentence which parameters of
	// crlbatch.params the table leaves out and why (plain text).
	Omitted string
	// Bound says which ceiling was used and how it was derived, in a
	// sentence of Markdown: a name from the data in it goes through Code or
	// Text.
	Bound string
}

// SummaryLevel is the level at which the report's summary calls a
// difference from the baseline established: an adjusted p value at most
// this.
const SummaryLevel = 0.05

// Report is a protocol's report.md: the header, a summary of the
// comparison with the baseline, one section per family (the protocol's
// metric rows against its keys — labels, tasks — and `all`, then the
// headline metrics with their bootstrap intervals), the comparison of
// families, the paired tests against the baseline, protocol-specific
// sections, the metric names, the notes, and a footnote for each distinct
// reason a value is unavailable. Render escapes every text it is given
// (family names, keys, titles, metric names, notes, reasons) for Markdown
// and HTML, except Bound and what Extra returns, which are Markdown.
//
// Every metric has one name throughout: the Title of its row in Rows, else
// its entry in Titles, else its column name as code.
type Report struct {
	Header ReportHeader
	// Rows are the metric rows of every family table; PerKey rows have a
	// value per key, the others only under `all`.
	Rows []ReportRow
	// Titles name the metrics of the reduction that Rows does not.
	Titles map[string]string
	// KeyNoun names the columns ("label", "task").
	KeyNoun  string
	Families *family.Result
	// Columns gives a family's keys and, for a PerKey row, its cell.
	Columns func(family string) (keys []string, cell func(key int, metric string) family.Cell)
	// KeyReasons, if set, gives the distinct reasons the included runs of
	// a family have no value of metric for a key (the reasons column of
	// the run × key table).
	KeyReasons func(family, key, metric string) []string
	// SeedReasons, if set, gives the distinct reasons the included runs of
	// a family have no seed value of metric (the reasons column of the
	// per-run table).
	SeedReasons func(family, metric string) []string
	// AdvantageMetric, if set, reports the relative advantage with the
	// tests of that metric.
	AdvantageMetric string
	// Extra is Markdown placed before the metric names: text from the
	// data in it goes through Text or Code (and tables through
	// MarkdownTable). ExtraNotes, if set, is called instead, with a
	// function that returns the footnote mark of a reason.
	Extra      string
	ExtraNotes func(footnote func(reason string) string) string
	// Notes are plain sentences, as manifest.json lists them; a name may
	// be quoted in a code span. Render escapes them (see noteMarkdown).
	Notes []string
}

// AbsentReasons returns the distinct reasons, in order of first
// appearance, of the absent values that each hands to add: what a
// Report's KeyReasons and SeedReasons return.
func AbsentReasons(each func(add func(protocol.Value))) []string {
	var out []string
	each(func(v protocol.Value) {
		if !v.OK && !slices.Contains(out, v.Reason) {
			out = append(out, v.Reason)
		}
	})
	return out
}

// footnotes numbers the distinct reasons of absent values in order of
// first use.
type footnotes struct {
	index map[string]int
	text  []string
}

// mark returns the footnote reference of reason.
func (f *footnotes) mark(reason string) string {
	if reason == "" {
		reason = "unavailable"
	}
	if f.index == nil {
		f.index = map[string]int{}
	}
	i, ok := f.index[reason]
	if !ok {
		f.text = append(f.text, reason)
		i = len(f.text)
		f.index[reason] = i
	}
	return "[^" + strconv.Itoa(i) + "]"
}

// why joins a reason and the distinct reasons behind it ("no seed has a
// value: no ceiling was supplied").
func why(reason string, behind []string) string {
	if len(behind) == 0 {
		return reason
	}
	return reason + ": " + strings.Join(behind, "; ")
}

// value prints v, one of group (FormatScaled), or Absent with the
// footnote of its reason.
func (f *footnotes) value(v protocol.Value, group ...protocol.Value) string {
	if v.OK {
		return FormatScaled(v, group...)
	}
	return Absent + f.mark(v.Reason)
}

// meanStd prints "mean ± std", each absent part with its footnote; behind
// are the reasons behind an absent mean.
func (f *footnotes) meanStd(mean, std protocol.Value, behind []string) string {
	if !mean.OK {
		return Absent + f.mark(why(mean.Reason, behind))
	}
	return FormatScaled(mean, std) + " ± " + f.value(std, mean)
}

// interval prints "[lo, hi]", the interval of mid (FormatScaled: the three
// are one group), or Absent with the footnote of the reason.
func (f *footnotes) interval(mid, lo, hi protocol.Value) string {
	if !lo.OK {
		return Absent + f.mark(lo.Reason)
	}
	if !hi.OK {
		return Absent + f.mark(hi.Reason)
	}
	return "[" + FormatScaled(lo, mid, hi) + ", " + FormatScaled(hi, mid, lo) + "]"
}

// Better is the report's mark of a metric's direction: ↑ when higher is
// better, ↓ when lower is, and "·" for a count or a metric without one.
func Better(higherIsBetter *bool) string {
	switch {
	case higherIsBetter == nil:
		return "·"
	case *higherIsBetter:
		return "↑"
	default:
		return "↓"
	}
}

// Render renders the report.
func (r *Report) Render() string {
	var b strings.Builder
	var fn footnotes
	res := r.Families
	writeHeader(&b, r.Header)
	r.writeSummary(&b)
	for _, f := range res.Families {
		r.writeFamily(&b, &fn, &f)
	}
	r.writeComparison(&b, &fn)
	r.writeTests(&b, &fn)
	extra := r.Extra
	if r.ExtraNotes != nil {
		extra = r.ExtraNotes(fn.mark)
	}
	if extra != "" {
		b.WriteString(extra)
		if !strings.HasSuffix(extra, "\n\n") {
			b.WriteString("\n")
		}
	}
	r.writeMetrics(&b)
	writeNotes(&b, res, r.Notes)
	if len(fn.text) > 0 {
		b.WriteString("\n")
		for i, t := range fn.text {
			fmt.Fprintf(&b, "[^%d]: %s\n", i+1, noteMarkdown(t))
		}
	}
	return b.String()
}

// title is the one name of metric throughout the report.
func (r *Report) title(metric string) string {
	for _, rr := range r.Rows {
		if rr.Metric == metric {
			return Text(rr.Title)
		}
	}
	if t, ok := r.Titles[metric]; ok {
		return Text(t)
	}
	return Code(metric)
}

// compared lists the indices of the metrics with a direction of better:
// the others (counts, diagnostics) are described but never compared.
func compared(res *family.Result) (yes, no []int) {
	for i, m := range res.Metrics {
		if m.HigherIsBetter != nil {
			yes = append(yes, i)
		} else {
			no = append(no, i)
		}
	}
	return yes, no
}

func (r *Report) writeFamily(b *strings.Builder, fn *footnotes, f *family.Family) {
	res := r.Families
	fmt.Fprintf(b, "## Family %s\n\n", familyTitle(f.Name, res))
	fmt.Fprintf(b, "%d run(s), %d in the aggregates. Each cell is the mean ± sample standard deviation across seeds; `--` is unavailable (the footnote says why), `± --` means fewer than two seeds.\n\n", len(f.Runs), f.Included)
	keys, cell := r.Columns(f.Name)
	header := []string{"Metric"}
	for _, k := range keys {
		header = append(header, Text(k))
	}
	header = append(header, "all")
	rows := make([][]string, 0, len(r.Rows))
	perRun := false
	for _, rr := range r.Rows {
		row := make([]string, 1, len(keys)+2)
		row[0] = Text(rr.Title)
		// A per-run metric's cells are one text: its footnote is marked
		// where the first of them is (a row of 100,000 labels made and
		// looked up the same reason for each).
		var perRunCell string
		for k, key := range keys {
			if rr.PerLabel {
				c := cell(k, rr.Metric)
				var behind []string
				if !c.Mean.OK && r.KeyReasons != nil {
					behind = r.KeyReasons(f.Name, key, rr.Metric)
				}
				row = append(row, fn.meanStd(c.Mean, c.Std, behind))
			} else {
				if k == 0 {
					perRunCell = Absent + fn.mark(fmt.Sprintf("a per-run metric has no per-%s value: its value is under `all`", r.KeyNoun))
				}
				row = append(row, perRunCell)
			}
		}
		perRun = perRun || !rr.PerLabel
		if fr := familyRow(f, rr.Metric); fr == nil {
			row = append(row, Absent+fn.mark("not a metric of families.parquet"))
		} else {
			var behind []string
			if !fr.Mean.OK && r.SeedReasons != nil {
				behind = r.SeedReasons(f.Name, rr.Metric)
			}
			row = append(row, fn.meanStd(fr.Mean, fr.Std, behind))
		}
		rows = append(rows, row)
	}
	WriteMarkdownTable(b, header, rows)
	if perRun && len(keys) > 0 {
		fmt.Fprintf(b, "\nPer-run metrics have no per-%s value: they appear under `all`, which holds the family's seed values (for per-%s metrics, each run's mean over its %ss).\n", r.KeyNoun, r.KeyNoun, r.KeyNoun)
	}
	b.WriteString("\n")

	yes, _ := compared(res)
	if len(yes) == 0 {
		return
	}
	fmt.Fprintf(b, "Headline metrics of %s: the mean and the interquartile mean (IQM) over seeds, each with its 95 %% bootstrap confidence interval (percentile, `families.parquet` columns `ci_low`/`ci_high` and `iqm_ci_low`/`iqm_ci_high`); ↑ higher is better, ↓ lower is better.\n\n", FamilyName(f.Name))
	hrows := make([][]string, 0, len(yes))
	for _, mi := range yes {
		fr := &f.Rows[mi]
		var behind []string
		if !fr.Mean.OK && r.SeedReasons != nil {
			behind = r.SeedReasons(f.Name, fr.Metric)
		}
		var mean, ci, iqm, iqmCI string
		if fr.Mean.OK {
			mean, ci = FormatScaled(fr.Mean, fr.CILow, fr.CIHigh), fn.interval(fr.Mean, fr.CILow, fr.CIHigh)
			iqm, iqmCI = fn.value(fr.IQM, fr.IQMCILow, fr.IQMCIHigh), fn.interval(fr.IQM, fr.IQMCILow, fr.IQMCIHigh)
		} else {
			// One footnote says why the whole row is empty.
			mean = Absent + fn.mark(why(fr.Mean.Reason, behind))
			ci, iqm, iqmCI = mean, mean, mean
		}
		hrows = append(hrows, []string{r.title(fr.Metric), Better(fr.HigherIsBetter), strconv.Itoa(fr.N), mean, ci, iqm, iqmCI})
	}
	b.WriteString(MarkdownTable([]string{"Metric", "better", "n", "mean", "95 % CI", "IQM", "95 % CI (IQM)"}, hrows))
	b.WriteString("\n")
}

func writeHeader(b *strings.Builder, h ReportHeader) {
	fmt.Fprintf(b, "# %s\n\n", Text(h.Title))
	fmt.Fprintf(b, "- input: %s\n- protocol: %s\n- crlbatch: %s\n\n", Code(h.Input), Text(h.Protocol), Text(h.Version))
	var rows [][]string
	for _, kv := range h.Params {
		rows = append(rows, []string{Text(kv.Key), Code(kv.Value)})
	}
	b.WriteString(MarkdownTable([]string{"parameter", "value"}, rows))
	if h.Omitted != "" {
		fmt.Fprintf(b, "\n%s\n", Text(h.Omitted))
	}
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

// comparisonTable renders the metrics idx of every family as rows, the
// families as columns, each cell "mean ± std (n)".
func (r *Report) comparisonTable(fn *footnotes, idx []int, direction bool) string {
	res := r.Families
	header := []string{"Metric"}
	if direction {
		header = append(header, "better")
	}
	for _, f := range res.Families {
		header = append(header, familyTitle(f.Name, res))
	}
	rows := make([][]string, 0, len(idx))
	for _, mi := range idx {
		m := res.Metrics[mi]
		row := []string{r.title(m.Name)}
		if direction {
			row = append(row, Better(m.HigherIsBetter))
		}
		for _, f := range res.Families {
			fr := f.Rows[mi]
			var behind []string
			if !fr.Mean.OK && r.SeedReasons != nil {
				behind = r.SeedReasons(f.Name, fr.Metric)
			}
			row = append(row, fmt.Sprintf("%s (%d)", fn.meanStd(fr.Mean, fr.Std, behind), fr.N))
		}
		rows = append(rows, row)
	}
	return MarkdownTable(header, rows)
}

// writeComparison renders families as columns, metrics as rows: the
// metrics with a direction of better, then the counts and other metrics
// without one, apart.
func (r *Report) writeComparison(b *strings.Builder, fn *footnotes) {
	res := r.Families
	if len(res.Families) == 0 {
		return
	}
	yes, no := compared(res)
	b.WriteString("## Comparison of families\n\n")
	b.WriteString("Mean ± sample standard deviation across seeds (n seeds with a value); ↑ higher is better, ↓ lower is better.")
	if res.BaselineFound || res.Baseline != "" {
		fmt.Fprintf(b, " Baseline: %s.", familyTitle(res.Baseline, nil))
	}
	b.WriteString("\n\n")
	if len(yes) > 0 {
		b.WriteString(r.comparisonTable(fn, yes, true))
		b.WriteString("\n")
	}
	if len(no) > 0 {
		b.WriteString("Counts and other values without a direction of better, described but not compared:\n\n")
		b.WriteString(r.comparisonTable(fn, no, false))
		b.WriteString("\n")
	}
}

// powerNote says why a test cannot reach SummaryLevel.
func powerNote(row *family.Row) string {
	return fmt.Sprintf("power warning: with %d pair(s) the sign-flip test's smallest attainable p (`min_p`) is %s, above %g: no difference can be established at that level whatever the data", row.NPairs, FormatValue(row.MinP), SummaryLevel)
}

// writeTests renders, for each family but the baseline, the paired
// comparison of every metric with a direction of better.
func (r *Report) writeTests(b *strings.Builder, fn *footnotes) {
	res := r.Families
	if len(res.Families) < 2 && res.BaselineFound {
		return
	}
	if len(res.Families) == 0 {
		return
	}
	yes, _ := compared(res)
	if !res.BaselineFound {
		fmt.Fprintf(b, "## Against the baseline\n\nThe baseline family %s is not in the data: no family is compared with it.\n\n", FamilyName(res.Baseline))
		return
	}
	if len(yes) == 0 {
		return
	}
	base := FamilyName(res.Baseline)
	fmt.Fprintf(b, "## Against the baseline %s\n\n", base)
	fmt.Fprintf(b, "Seeds are paired by seed value. Difference: the family's mean paired difference to %s (family − baseline) with its 95 %% bootstrap interval; P(improvement): P(X > Y) + ½·P(X = Y) for a seed value X of the family and Y of the baseline, on the raw values as in `families.parquet` (where lower is better, ↓, a value under 0.5 favours the family), with its 95 %% stratified-bootstrap interval (the family's seeds and the baseline's resampled independently). The test is the exact sign-flip test with fewer than %d pairs, else Wilcoxon's signed-rank test; p (BH) is the p value adjusted by Benjamini–Hochberg across every metric of the family that has one (counts included, as in `families.parquet`); min p, shown when a sign-flip test was run, is the smallest p that test can give with that many pairs. The baseline is not tested against itself.\n\n",
		base, stats.WilcoxonMinPairs)
	for _, f := range res.Families {
		if f.Name == res.Baseline {
			continue
		}
		fmt.Fprintf(b, "### %s against %s\n\n", FamilyName(f.Name), base)
		minP := false
		for _, mi := range yes {
			if f.Rows[mi].MinP.OK {
				minP = true
			}
		}
		header := []string{"Metric", "better", "pairs", "difference", "95 % CI", "P(improvement)", "95 % CI of P", "test", "p", "p (BH)"}
		if minP {
			header = append(header, "min p")
		}
		rows := make([][]string, 0, len(yes))
		for _, mi := range yes {
			fr := &f.Rows[mi]
			var test string
			if fr.Test != "" {
				test = Text(fr.Test)
				if fr.PowerWarning {
					test += fn.mark(powerNote(fr))
				}
			} else {
				test = Absent + fn.mark(fr.PValue.Reason)
			}
			row := []string{r.title(fr.Metric), Better(fr.HigherIsBetter), strconv.Itoa(fr.NPairs),
				fn.value(fr.DiffMean, fr.DiffCILow, fr.DiffCIHigh), fn.interval(fr.DiffMean, fr.DiffCILow, fr.DiffCIHigh),
				fn.value(fr.ProbImprovement, fr.ProbImprovementCILow, fr.ProbImprovementCIHigh),
				fn.interval(fr.ProbImprovement, fr.ProbImprovementCILow, fr.ProbImprovementCIHigh), test, fn.value(fr.PValue), fn.value(fr.PValueAdjusted)}
			if minP {
				row = append(row, fn.value(fr.MinP))
			}
			rows = append(rows, row)
		}
		b.WriteString(MarkdownTable(header, rows))
		if r.AdvantageMetric != "" {
			if fr := familyRow(&f, r.AdvantageMetric); fr != nil {
				fmt.Fprintf(b, "\nRelative adaptation advantage (the baseline's mean %s minus the family's; positive is faster): %s.\n", r.title(r.AdvantageMetric), fn.value(fr.RelativeAdaptationAdvantage))
			}
		}
		b.WriteString("\n")
	}
}

// verdict classifies one row of a family against the baseline.
type verdict int

const (
	untested  verdict = iota // no p value, or no direction
	powerless                // the test cannot reach SummaryLevel
	noDiff                   // adjusted p above SummaryLevel
	better
	worse
)

func judge(fr *family.Row) verdict {
	switch {
	case fr.HigherIsBetter == nil || fr.Test == "" || !fr.PValueAdjusted.OK || !fr.DiffMean.OK:
		return untested
	case fr.PowerWarning:
		return powerless
	case fr.PValueAdjusted.V > SummaryLevel || fr.DiffMean.V == 0:
		return noDiff
	case (fr.DiffMean.V > 0) == *fr.HigherIsBetter:
		return better
	default:
		return worse
	}
}

// writeSummary says which families beat the baseline on which metrics
// after the Benjamini–Hochberg adjustment, and no more than the tests
// allow.
func (r *Report) writeSummary(b *strings.Builder) {
	res := r.Families
	if len(res.Families) == 0 {
		return
	}
	b.WriteString("## Summary\n\n")
	if !res.BaselineFound {
		fmt.Fprintf(b, "The baseline family %s is not in the data: no family is compared with a baseline.\n\n", FamilyName(res.Baseline))
		return
	}
	if len(res.Families) == 1 {
		fmt.Fprintf(b, "Only the baseline family %s is in the data: nothing is compared.\n\n", FamilyName(res.Baseline))
		return
	}
	fmt.Fprintf(b, "Against the baseline %s: a family beats it on a metric when the paired test's p value, adjusted by Benjamini–Hochberg across the family's metrics, is at most %g and the mean paired difference points the metric's better way (counts and values without a direction are not judged).\n\n", FamilyName(res.Baseline), SummaryLevel)
	yes, _ := compared(res)
	for _, f := range res.Families {
		if f.Name == res.Baseline {
			continue
		}
		var good, bad, weak, flat []string
		var pw *family.Row
		for _, mi := range yes {
			fr := &f.Rows[mi]
			entry := fmt.Sprintf("%s (p (BH) %s)", r.title(fr.Metric), FormatValue(fr.PValueAdjusted))
			switch judge(fr) {
			case better:
				good = append(good, entry)
			case worse:
				bad = append(bad, entry)
			case powerless:
				weak = append(weak, r.title(fr.Metric))
				pw = fr
			case noDiff:
				flat = append(flat, r.title(fr.Metric))
			}
		}
		var parts []string
		if len(good) > 0 {
			parts = append(parts, "beats the baseline on "+strings.Join(good, ", "))
		}
		if len(bad) > 0 {
			parts = append(parts, "does worse than the baseline on "+strings.Join(bad, ", "))
		}
		if len(good) == 0 && len(bad) == 0 && len(flat) > 0 {
			parts = append(parts, fmt.Sprintf("differs from the baseline on no metric at adjusted p ≤ %g", SummaryLevel))
		}
		if len(weak) > 0 {
			if len(weak) == len(yes) || len(good)+len(bad)+len(flat) == 0 {
				parts = append(parts, fmt.Sprintf("cannot be told apart from the baseline: with %d paired seed(s) the sign-flip test's smallest attainable p is %s, above %g, so no difference can be established whatever the data (more seeds are needed)", pw.NPairs, FormatValue(pw.MinP), SummaryLevel))
			} else {
				parts = append(parts, fmt.Sprintf("is not tested with enough pairs on %s (smallest attainable p above %g)", strings.Join(weak, ", "), SummaryLevel))
			}
		}
		if len(parts) == 0 {
			parts = append(parts, "has no paired test against the baseline")
		}
		fmt.Fprintf(b, "- Family %s %s.\n", FamilyName(f.Name), strings.Join(parts, "; "))
	}
	b.WriteString("\n")
}

// writeMetrics names every metric as the report does, with its column in
// the Parquet files and its direction.
func (r *Report) writeMetrics(b *strings.Builder) {
	res := r.Families
	if len(res.Metrics) == 0 {
		return
	}
	b.WriteString("## Metrics\n\n")
	rows := make([][]string, 0, len(res.Metrics))
	for _, m := range res.Metrics {
		dir := "none (a count or a value without a direction)"
		if m.HigherIsBetter != nil {
			dir = "↑ higher"
			if !*m.HigherIsBetter {
				dir = "↓ lower"
			}
		}
		rows = append(rows, []string{r.title(m.Name), Code(m.Name), dir})
	}
	b.WriteString(MarkdownTable([]string{"Metric", "column (`metric` in families.parquet)", "better"}, rows))
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
