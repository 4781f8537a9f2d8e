package family

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"

	"github.com/crlbatch/crlbatch/protocol"
	"github.com/crlbatch/crlbatch/protocol/stats"
)

// Metric names one column of seed values.
type Metric struct {
	Name string
	// HigherIsBetter is nil for counts, where neither way is better.
	HigherIsBetter *bool
}

// Run is one run's contribution.
type Run struct {
	Key string
	// Family is the run's family; "" when the run lacks the group-by field.
	Family string
	// Seed and HasSeed pair runs across families for the paired test.
	Seed    string
	HasSeed bool
	// Excluded runs are listed but left out of every aggregate.
	Excluded    bool
	ExcludedWhy string
	// NSteps is the run's length, used to flag truncated runs.
	NSteps int
	// Values holds the run's seed value of each metric, aligned with the
	// metrics handed to Aggregate.
	Values []protocol.Value
	// Remarks are protocol-specific findings named in the notes ("earned
	// nothing", "never shifted").
	Remarks []string
}

// ResolveBaseline is the family Aggregate compares the others with, given
// Options.Baseline and the families in order of first appearance: the
// named family (found when it is among them); else "ppo" if present, else
// the first family; none (found false) when there are no families.
func ResolveBaseline(named string, families []string) (name string, found bool) {
	switch {
	case named != "":
		return named, slices.Contains(families, named)
	case len(families) == 0:
		return "", false
	case slices.Contains(families, "ppo"):
		return "ppo", true
	}
	return families[0], true
}

// Options of Aggregate.
type Options struct {
	// Baseline names the family others are compared with; "" means "ppo" if
	// present, else the first family.
	Baseline string
	// Resamples and Seed drive the bootstrap; Level is the confidence level.
	Resamples int
	Seed      uint64
	Level     float64
	// AdvantageMetric is the metric whose row carries the relative
	// adaptation advantage ("adaptation_speed" for skyfall; "" for none).
	AdvantageMetric string
	// GroupBy names the grouping field, for the notes.
	GroupBy string
	// TruncatedShare flags runs shorter than this share of their family's
	// longest run (0.9).
	TruncatedShare float64
	// Each, when set, calls work(i) for every i in [0, n), in any order
	// and possibly at once, and returns when all calls have. Aggregate
	// hands it the family × metric cells (each bootstraps on its own seed
	// and writes its own slot, so the result does not depend on the
	// order): cell i is the row of metric i % len(metrics) of family
	// i / len(metrics), in Result.Families' order; nil calls them one
	// after another. A caller that keeps rows may leave cells out: their
	// rows stay zero until it sets them, then calls Adjust. This package starts no
	// goroutine: the caller owns the concurrency.
	Each func(n int, work func(i int))
	// Stop, when set, is asked during the bootstraps; once it returns
	// true (and from then on) Aggregate gives up and returns ErrStopped.
	// A job told to stop passes its context's check.
	Stop func() bool
}

// ErrStopped is Aggregate's error once Options.Stop returned true.
var ErrStopped = errors.New("family: stopped")

// DefaultOptions are the defaults of PROTOCOLS 1.6.
func DefaultOptions() Options {
	return Options{Resamples: 10000, Level: 0.95, AdvantageMetric: "adaptation_speed", GroupBy: "algorithm_id", TruncatedShare: 0.9}
}

// Row is one family × metric line of families.parquet.
type Row struct {
	Family         string
	Metric         string
	HigherIsBetter *bool

	N                                  int
	Mean, Std, Min, Max, Median, IQM   protocol.Value
	CILow, CIHigh, IQMCILow, IQMCIHigh protocol.Value

	Baseline                    string
	RelativeAdaptationAdvantage protocol.Value
	NPairs                      int
	// Test is "wilcoxon", "sign_flip", or "" when no pair exists.
	Test            string
	PValue          protocol.Value
	PValueAdjusted  protocol.Value
	MinP            protocol.Value
	PowerWarning    bool
	DiffMean        protocol.Value
	DiffCILow       protocol.Value
	DiffCIHigh      protocol.Value
	ProbImprovement protocol.Value
	// ProbImprovementCILow and High are the 95 % stratified-bootstrap
	// interval of ProbImprovement (stats.ProbImprovementCI): absent under
	// two seeds on either side.
	ProbImprovementCILow, ProbImprovementCIHigh protocol.Value
}

// Family is one family's result.
type Family struct {
	Name string
	// Runs indexes the runs handed in, excluded ones included, in order.
	Runs []int
	// Included counts the runs that take part in the aggregates.
	Included int
	Rows     []Row
}

// Note is a finding about a family (or, with Family "", the whole input when
// Global is set).
type Note struct {
	Family string
	Global bool
	Kind   string
	Text   string
}

// Kinds of note.
const (
	NoteNoFamily        = "no_family"
	NoteTruncated       = "truncated"
	NoteRemark          = "remark"
	NoteOneSeed         = "one_seed"
	NoteExcluded        = "excluded"
	NoteIdentical       = "identical_seed_values"
	NoteBaselineMissing = "baseline_missing"
	// NoteNormalization names family names that differ only in Unicode
	// normalisation (NFC), white space or invisible characters: they
	// print alike but are different families.
	NoteNormalization = "unicode_normalization"
)

// Result is the reduction of all runs.
type Result struct {
	Metrics  []Metric
	Families []Family
	// Baseline is the family compared against; BaselineFound is false when
	// a named baseline is not in the data (every comparison is then null).
	Baseline      string
	BaselineFound bool
	Notes         []Note
}

// Reasons of absent family values.
const (
	ReasonNoSeedValue  = "no seed has a value"
	ReasonOneSeed      = "fewer than two seeds"
	ReasonNotAdvantage = "reported on the adaptation_speed row only"
	ReasonNoPairs      = "no seed has a value in both this family and the baseline"
	ReasonNoBaseline   = "the baseline has no value"
	ReasonBaselineOne  = "the baseline has fewer than two seeds"
)

// Aggregate reduces runs (in canonical order) to families.
func Aggregate(metrics []Metric, runs []Run, opt Options) (*Result, error) {
	if opt.Resamples < 1 {
		return nil, fmt.Errorf("bootstrap resamples %d: want ≥ 1", opt.Resamples)
	}
	if !(opt.Level > 0 && opt.Level < 1) {
		return nil, fmt.Errorf("confidence level %v: want 0 < level < 1", opt.Level)
	}
	for i := range runs {
		if len(runs[i].Values) != len(metrics) {
			return nil, fmt.Errorf("run %s: %d values for %d metrics", runs[i].Key, len(runs[i].Values), len(metrics))
		}
		for m, v := range runs[i].Values {
			if err := v.Validate(); err != nil {
				return nil, fmt.Errorf("run %s, metric %s: %w", runs[i].Key, metrics[m].Name, err)
			}
		}
	}
	res := &Result{Metrics: metrics}
	idx := map[string]int{}
	for i := range runs {
		f := runs[i].Family
		k, ok := idx[f]
		if !ok {
			k = len(res.Families)
			idx[f] = k
			res.Families = append(res.Families, Family{Name: f})
		}
		res.Families[k].Runs = append(res.Families[k].Runs, i)
		if !runs[i].Excluded {
			res.Families[k].Included++
		}
	}

	names := make([]string, len(res.Families))
	for k := range res.Families {
		names[k] = res.Families[k].Name
	}
	res.Baseline, res.BaselineFound = ResolveBaseline(opt.Baseline, names)
	if opt.Baseline != "" && !res.BaselineFound {
		res.Notes = append(res.Notes, Note{Global: true, Kind: NoteBaselineMissing,
			Text: fmt.Sprintf("the baseline family %q is not in the data; every comparison column is null", opt.Baseline)})
	}
	res.Notes = append(res.Notes, normalizationNotes(names)...)

	// Seed values per family and metric, included runs only, in run order.
	values := func(f *Family, m int) []float64 {
		var out []float64
		for _, i := range f.Runs {
			if !runs[i].Excluded && runs[i].Values[m].OK {
				out = append(out, runs[i].Values[m].V)
			}
		}
		return out
	}
	var base *Family
	if res.BaselineFound {
		base = &res.Families[idx[res.Baseline]]
	}
	baseMean := make([]protocol.Value, len(metrics))
	for m := range metrics {
		if base == nil {
			continue
		}
		if xs := values(base, m); len(xs) > 0 {
			baseMean[m] = protocol.Finite(stats.Mean(xs))
		} else {
			baseMean[m] = protocol.None(ReasonNoBaseline)
		}
	}

	for fi := range res.Families {
		f := &res.Families[fi]
		res.Notes = append(res.Notes, familyNotes(f, runs, opt)...)
		f.Rows = make([]Row, len(metrics))
	}
	each := opt.Each
	if each == nil {
		each = func(n int, work func(int)) {
			for i := range n {
				work(i)
			}
		}
	}
	if nm := len(metrics); nm > 0 {
		each(len(res.Families)*nm, func(i int) {
			f, m := &res.Families[i/nm], i%nm
			xs := values(f, m)
			row := describe(f.Name, metrics[m], xs, opt)
			compare(&row, f, base, runs, m, xs, baseMean[m], res, opt)
			f.Rows[m] = row
		})
	}
	if opt.Stop != nil && opt.Stop() { // cells given up on are incomplete
		return nil, ErrStopped
	}
	for fi := range res.Families {
		Adjust(res.Families[fi].Rows)
	}
	return res, nil
}

// describe fills the one-family statistics of a metric.
func describe(family string, met Metric, xs []float64, opt Options) Row {
	row := Row{Family: family, Metric: met.Name, HigherIsBetter: met.HigherIsBetter, N: len(xs)}
	if len(xs) == 0 {
		none := protocol.None(ReasonNoSeedValue)
		row.Mean, row.Std, row.Min, row.Max, row.Median, row.IQM = none, none, none, none, none, none
		row.CILow, row.CIHigh, row.IQMCILow, row.IQMCIHigh = none, none, none, none
		return row
	}
	row.Mean = protocol.Finite(stats.Mean(xs))
	row.Min = protocol.Finite(stats.Min(xs))
	row.Max = protocol.Finite(stats.Max(xs))
	row.Median = protocol.Finite(stats.Median(xs))
	row.IQM = protocol.Finite(stats.IQM(xs))
	if len(xs) < 2 {
		one := protocol.None(ReasonOneSeed)
		row.Std, row.CILow, row.CIHigh, row.IQMCILow, row.IQMCIHigh = one, one, one, one, one
		return row
	}
	sd, _ := stats.SampleStd(xs)
	row.Std = protocol.Finite(sd)
	iv, ok := stats.BootstrapCIsUntil(xs, []stats.Statistic{stats.StatMean, stats.StatIQM}, opt.Resamples,
		stats.SeedFor(opt.Seed, family, met.Name), opt.Level, opt.Stop)
	if !ok {
		return row // Aggregate returns ErrStopped
	}
	row.CILow, row.CIHigh = protocol.Finite(iv[0].Lo), protocol.Finite(iv[0].Hi)
	row.IQMCILow, row.IQMCIHigh = protocol.Finite(iv[1].Lo), protocol.Finite(iv[1].Hi)
	return row
}

// compare fills the comparison with the baseline.
func compare(row *Row, f, base *Family, runs []Run, m int, xs []float64, baseMean protocol.Value, res *Result, opt Options) {
	row.Baseline = res.Baseline
	noBase := ""
	// "" is the key of the family of runs without a group-by value, a
	// family like any other: only BaselineFound says whether there is a
	// baseline to compare with.
	if !res.BaselineFound {
		noBase = fmt.Sprintf("the baseline family %q is not in the data", res.Baseline)
	}
	if noBase != "" {
		none := protocol.None(noBase)
		row.RelativeAdaptationAdvantage, row.PValue, row.PValueAdjusted, row.MinP = none, none, none, none
		row.DiffMean, row.DiffCILow, row.DiffCIHigh, row.ProbImprovement = none, none, none, none
		row.ProbImprovementCILow, row.ProbImprovementCIHigh = none, none
		return
	}
	// Relative adaptation advantage: baseline − family, on its own row.
	switch {
	case row.Metric != opt.AdvantageMetric:
		row.RelativeAdaptationAdvantage = protocol.None(ReasonNotAdvantage)
	case !row.Mean.OK:
		row.RelativeAdaptationAdvantage = protocol.None(ReasonNoSeedValue)
	case !baseMean.OK:
		row.RelativeAdaptationAdvantage = protocol.None(baseMean.Reason)
	default:
		row.RelativeAdaptationAdvantage = protocol.Finite(baseMean.V - row.Mean.V)
	}

	// Probability of improvement over all pairs of seed values, raw.
	var ys []float64
	for _, i := range base.Runs {
		if !runs[i].Excluded && runs[i].Values[m].OK {
			ys = append(ys, runs[i].Values[m].V)
		}
	}
	switch {
	case len(xs) == 0:
		row.ProbImprovement = protocol.None(ReasonNoSeedValue)
	case len(ys) == 0:
		row.ProbImprovement = protocol.None(ReasonNoBaseline)
	default:
		row.ProbImprovement = protocol.Finite(stats.ProbImprovement(xs, ys))
	}
	switch {
	case !row.ProbImprovement.OK:
		row.ProbImprovementCILow, row.ProbImprovementCIHigh = row.ProbImprovement, row.ProbImprovement
	case len(xs) < 2:
		row.ProbImprovementCILow, row.ProbImprovementCIHigh = protocol.None(ReasonOneSeed), protocol.None(ReasonOneSeed)
	case len(ys) < 2:
		row.ProbImprovementCILow, row.ProbImprovementCIHigh = protocol.None(ReasonBaselineOne), protocol.None(ReasonBaselineOne)
	default:
		lo, hi, ok := stats.ProbImprovementCIUntil(xs, ys, opt.Resamples, stats.SeedFor(opt.Seed, f.Name, row.Metric, "probability of improvement"), opt.Level, opt.Stop)
		if !ok {
			return // Aggregate returns ErrStopped
		}
		row.ProbImprovementCILow, row.ProbImprovementCIHigh = protocol.Finite(lo), protocol.Finite(hi)
	}

	// Paired differences by seed: the first run per seed on each side.
	baseBySeed := map[string]protocol.Value{}
	for _, i := range base.Runs {
		r := &runs[i]
		if r.Excluded || !r.HasSeed {
			continue
		}
		if _, dup := baseBySeed[r.Seed]; !dup {
			baseBySeed[r.Seed] = r.Values[m]
		}
	}
	seen := map[string]bool{}
	var d []float64
	for _, i := range f.Runs {
		r := &runs[i]
		if r.Excluded || !r.HasSeed || seen[r.Seed] {
			continue
		}
		seen[r.Seed] = true
		b, ok := baseBySeed[r.Seed]
		if !ok || !b.OK || !r.Values[m].OK {
			continue
		}
		d = append(d, r.Values[m].V-b.V)
	}
	row.NPairs = len(d)
	if len(d) == 0 {
		none := protocol.None(ReasonNoPairs)
		row.PValue, row.MinP, row.DiffMean, row.DiffCILow, row.DiffCIHigh = none, none, none, none, none
		return
	}
	// Two finite seed values near ±MaxFloat64 can differ by more than
	// float64 holds: the differences are then no numbers to rank, flip or
	// resample, and every paired statistic is absent (docs/decisions.md).
	for _, x := range d {
		if math.IsInf(x, 0) || math.IsNaN(x) {
			none := protocol.None(protocol.ReasonOverflow)
			row.PValue, row.MinP, row.DiffMean, row.DiffCILow, row.DiffCIHigh = none, none, none, none, none
			return
		}
	}
	pr := stats.Paired(d)
	row.Test = pr.Test
	row.PowerWarning = pr.PowerWarning
	if pr.P != nil {
		row.PValue = protocol.Finite(*pr.P)
	} else {
		row.PValue = protocol.None(pr.Reason)
	}
	if pr.MinP != nil {
		row.MinP = protocol.Finite(*pr.MinP)
	} else {
		row.MinP = protocol.None("only the sign-flip test has a smallest attainable p")
	}
	row.DiffMean = protocol.Finite(stats.Mean(d))
	if len(d) < 2 {
		one := protocol.None("fewer than two pairs")
		row.DiffCILow, row.DiffCIHigh = one, one
		return
	}
	iv, ok := stats.BootstrapCIsUntil(d, []stats.Statistic{stats.StatMean}, opt.Resamples,
		stats.SeedFor(opt.Seed, f.Name, row.Metric, "paired difference"), opt.Level, opt.Stop)
	if !ok {
		return // Aggregate returns ErrStopped
	}
	row.DiffCILow, row.DiffCIHigh = protocol.Finite(iv[0].Lo), protocol.Finite(iv[0].Hi)
}

// Adjust fills the Benjamini–Hochberg adjusted p values across the metrics of
// one family (its rows, in metric order), as Aggregate does. A row left out
// by Options.Each (the zero Row) stays as it is.
func Adjust(rows []Row) {
	p := make([]float64, len(rows))
	for i := range rows {
		p[i] = math.NaN()
		if rows[i].PValue.OK {
			p[i] = rows[i].PValue.V
		}
	}
	adj := stats.BenjaminiHochberg(p)
	for i := range rows {
		if rows[i].PValue.OK {
			rows[i].PValueAdjusted = protocol.Finite(adj[i])
		} else if rows[i].PValue.Reason != "" {
			rows[i].PValueAdjusted = protocol.None(rows[i].PValue.Reason)
		}
	}
}

// normalizationNotes notes each group of family names that are equal
// printed (printedAs: under Unicode NFC, white space trimmed and
// collapsed, invisible characters dropped) but differ in their bytes (a
// precomposed é against e and a combining accent, "ppo " against "ppo",
// a zero-width space): they print alike in every table and figure,
// yet are two families, as names compare by their bytes (run keys and
// JSON values do). Nothing is merged: the note names them, escaped so
// that the difference shows. Groups in order of their first name.
func normalizationNotes(names []string) []Note {
	groups := map[string][]string{}
	var order []string
	for _, n := range names {
		k := printedAs(n)
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], n)
	}
	var out []Note
	for _, k := range order {
		g := groups[k]
		if len(g) < 2 {
			continue
		}
		quoted := make([]string, len(g))
		how := "Unicode normalisation (NFC)"
		for i, n := range g {
			quoted[i] = strconv.QuoteToASCII(n)
			if norm.NFC.String(n) != norm.NFC.String(g[0]) {
				how = "white space, invisible characters or Unicode normalisation (NFC)"
			}
		}
		out = append(out, Note{Global: true, Kind: NoteNormalization,
			Text: fmt.Sprintf("families %s differ only in %s: they print alike but are scored as %d families; write the name one way in the traces to make them one", strings.Join(quoted, ", "), how, len(g))})
	}
	return out
}

// printedAs is what a family name looks like printed: NFC, without
// invisible (format) characters (a zero-width space, a direction mark, a
// byte-order mark), white space trimmed at both ends and each run of it
// one space, as a table cell, a code span or a figure's legend shows it.
func printedAs(n string) string {
	k := n
	if !norm.NFC.IsNormalString(k) {
		k = norm.NFC.String(k)
	}
	if strings.IndexFunc(k, func(r rune) bool { return unicode.IsSpace(r) || unicode.Is(unicode.Cf, r) }) < 0 {
		return k
	}
	k = strings.Join(strings.Fields(strings.Map(func(r rune) rune {
		if unicode.Is(unicode.Cf, r) {
			return -1
		}
		return r
	}, k)), " ")
	return k
}

func familyNotes(f *Family, runs []Run, opt Options) []Note {
	var out []Note
	add := func(kind, format string, args ...any) {
		out = append(out, Note{Family: f.Name, Kind: kind, Text: fmt.Sprintf(format, args...)})
	}
	show := f.Name
	if show == "" {
		show = "(none)"
		add(NoteNoFamily, "%d run(s) lack the group-by field %q and form the family (none)", len(f.Runs), opt.GroupBy)
	}
	longest := 0
	for _, i := range f.Runs {
		if !runs[i].Excluded && runs[i].NSteps > longest {
			longest = runs[i].NSteps
		}
	}
	share := opt.TruncatedShare
	if share == 0 {
		share = 0.9
	}
	for _, i := range f.Runs {
		r := &runs[i]
		if r.Excluded {
			add(NoteExcluded, "%s: run %s excluded (%s)", show, r.Key, r.ExcludedWhy)
			continue
		}
		if float64(r.NSteps) < share*float64(longest) {
			add(NoteTruncated, "%s: run %s has %d rows, under %.0f%% of the family's longest run (%d): truncated?", show, r.Key, r.NSteps, 100*share, longest)
		}
		for _, rm := range r.Remarks {
			add(NoteRemark, "%s: run %s %s", show, r.Key, rm)
		}
	}
	if f.Included == 1 {
		add(NoteOneSeed, "%s has one seed: no spread, no confidence interval", show)
	}
	if f.Included == 0 {
		add(NoteOneSeed, "%s has no run left after exclusions", show)
	}
	// Runs whose vectors of seed values are identical.
	for _, same := range identicalRuns(f, runs) {
		add(NoteIdentical, "%s: runs %v have identical seed values: the seed may be wired to nothing", show, same)
	}
	return out
}

// identicalRuns lists, for each group of two or more included runs of f
// whose vectors of seed values are equal (slices.Equal: the same presence,
// values == and reasons) and hold a present value, the keys of the group's
// runs in run order; the groups in the order of their first run. The runs
// are grouped by a key that equal vectors share (a value's presence, its
// bits with −0 as +0, its reason), in one pass: comparing every pair cost
// runs² per family (a 20,000-run sweep has families of 5,000). A vector
// with NaN is equal to no other, as slices.Equal says, and forms no group.
func identicalRuns(f *Family, runs []Run) [][]string {
	groups := map[string]int{}
	var members [][]int
	var key []byte
	for _, i := range f.Runs {
		r := &runs[i]
		if r.Excluded || !anyPresent(r.Values) {
			continue
		}
		key = key[:0]
		nan := false
		for _, v := range r.Values {
			bits := math.Float64bits(v.V)
			if v.V == 0 {
				bits = 0
			}
			nan = nan || v.V != v.V
			ok := byte(0)
			if v.OK {
				ok = 1
			}
			key = binary.LittleEndian.AppendUint64(append(key, ok), bits)
			key = append(binary.LittleEndian.AppendUint64(key, uint64(len(v.Reason))), v.Reason...)
		}
		if nan {
			continue
		}
		g, ok := groups[string(key)]
		if !ok {
			g = len(members)
			groups[string(key)] = g
			members = append(members, nil)
		}
		members[g] = append(members[g], i)
	}
	var out [][]string
	for _, m := range members {
		if len(m) < 2 {
			continue
		}
		same := make([]string, len(m))
		for k, i := range m {
			same[k] = runs[i].Key
		}
		out = append(out, same)
	}
	return out
}

func anyPresent(vs []protocol.Value) bool {
	for _, v := range vs {
		if v.OK {
			return true
		}
	}
	return false
}
