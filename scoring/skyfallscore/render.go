package skyfallscore

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/crlbatch/crlbatch/protocol"
	"github.com/crlbatch/crlbatch/protocol/skyfall"
	"github.com/crlbatch/crlbatch/scoring"
	"github.com/crlbatch/crlbatch/upperbound"
	"github.com/crlbatch/crlbatch/writers"
)

// params is crlbatch.params: every parameter that shaped a number.
type params struct {
	Protocol        string       `json:"protocol"`
	Anchor          string       `json:"anchor"`
	Window          string       `json:"window"`
	Alpha           float64      `json:"alpha"`
	Epsilon         *float64     `json:"epsilon"`
	EpsilonFraction float64      `json:"epsilon_fraction"`
	EpsilonAbsFloor float64      `json:"epsilon_abs_floor"`
	TailFraction    float64      `json:"tail_fraction"`
	ZeroShotWindow  int          `json:"zero_shot_window"`
	Gamma           *float64     `json:"gamma"`
	Bound           *ceilingInfo `json:"bound"`
	EpisodeEnd      []string     `json:"episode_end"`
	SolveComponent  *string      `json:"solve_component"`
	Reference       bool         `json:"reference"`
	scoring.Common
}

func (j *job) params(c scoring.Common) params {
	p := &j.p
	sp := params{
		Protocol:        Name,
		Anchor:          string(p.Anchor),
		Window:          string(p.Window),
		Alpha:           p.AlphaValue(),
		Epsilon:         p.Epsilon,
		EpsilonFraction: p.EpsilonFraction,
		EpsilonAbsFloor: p.EpsilonAbsFloor,
		TailFraction:    p.TailFraction,
		ZeroShotWindow:  p.ZeroShotWindow,
		Gamma:           p.Gamma,
		Bound:           j.info,
		EpisodeEnd:      p.EpisodeEnd,
		Reference:       j.cfg.Reference != nil,
		Common:          c,
	}
	if sp.EpisodeEnd == nil {
		sp.EpisodeEnd = []string{}
	}
	if p.SolveComponent != "" {
		s := p.SolveComponent
		sp.SolveComponent = &s
	}
	return sp
}

// Render builds runs.parquet, intervals.parquet, run_summary.parquet,
// families.parquet and the report.
func (j *job) Render(res *scoring.Results) (*scoring.Rendered, error) {
	out := &output{Families: res.Families, Anchor: string(j.p.Anchor), Window: string(j.p.Window), Identity: res.Common.IdentityFields}
	for i := range res.Runs {
		r := &res.Runs[i]
		out.Runs = append(out.Runs, runRow{Key: r.Key, Source: r.Source(), Family: r.Family, Meta: r.Meta,
			Excluded: r.Excluded, Result: r.Result.(*skyfall.RunResult)})
	}
	ps := j.params(res.Common)
	rd := &scoring.Rendered{Params: ps}
	rd.Notes = j.uncarriedNotes(out.Runs)
	rd.Warnings = rd.Notes
	notes := res.Notes
	if len(rd.Notes) > 0 {
		notes = append(notes[:len(notes):len(notes)], rd.Notes...)
	}
	// The report first: the per-label summaries it is built from (for
	// 100,000 labels ~80 MB, and its table's cells) go before the tables
	// are built (issue 16).
	rd.Report = report(writers.ReportHeader{
		Title:    "crlbatch report: " + Name,
		Input:    res.Input,
		Protocol: Name,
		Version:  res.Version,
		Params:   paramList(ps),
		Bound:    boundSentence(j.info),
		Omitted:  omitted(ps),
	}, out, notes, res.SeedReasons)
	for _, tb := range []struct {
		name  string
		build func(*output) (*writers.Table, error)
	}{
		{"runs.parquet", runsTable},
		{"intervals.parquet", intervalsTable},
		{"run_summary.parquet", runSummaryTable},
		{"families.parquet", func(o *output) (*writers.Table, error) { return writers.FamiliesTable(o.Families) }},
	} {
		t, err := tb.build(out)
		if err != nil {
			return nil, fmt.Errorf("building %s: %w", tb.name, err)
		}
		rd.Tables = append(rd.Tables, scoring.Table{Name: tb.name, Table: t})
	}
	return rd, nil
}

// paramList renders the parameters for the report header, in a fixed order.
func paramList(p params) []writers.KV {
	f := func(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
	opt := func(x *float64, absent string) string {
		if x == nil {
			return absent
		}
		return f(*x)
	}
	bound := "none"
	if p.Bound != nil {
		bound = p.Bound.Derivation + " (" + p.Bound.Source + ")"
	}
	baseline := "none"
	if p.Baseline != nil {
		baseline = *p.Baseline
	}
	solve := "none"
	if p.SolveComponent != nil {
		solve = *p.SolveComponent
	}
	list := func(xs []string) string {
		if len(xs) == 0 {
			return "none"
		}
		return strings.Join(xs, ",")
	}
	kv := []writers.KV{
		{Key: "anchor", Value: p.Anchor},
		{Key: "window", Value: p.Window},
		{Key: "alpha", Value: f(p.Alpha)},
	}
	// The recovery band: ε around the ceiling under the ceiling anchor,
	// ε_frac·|A| with its floor under the segment anchor.
	if p.Anchor == string(skyfall.AnchorCeiling) {
		kv = append(kv, writers.KV{Key: "epsilon", Value: opt(p.Epsilon, "0.5·R_ub")})
	} else {
		kv = append(kv, writers.KV{Key: "epsilon_fraction", Value: f(p.EpsilonFraction)},
			writers.KV{Key: "epsilon_abs_floor", Value: f(p.EpsilonAbsFloor)})
	}
	return append(kv, []writers.KV{
		{Key: "tail_fraction", Value: f(p.TailFraction)},
		{Key: "zero_shot_window", Value: strconv.Itoa(p.ZeroShotWindow)},
		{Key: "gamma", Value: opt(p.Gamma, "recorded, else 0.99")},
		{Key: "bound", Value: bound},
		{Key: "episode_end", Value: list(p.EpisodeEnd)},
		{Key: "solve_component", Value: solve},
		{Key: "reference", Value: strconv.FormatBool(p.Reference)},
		{Key: "group_by", Value: list(p.GroupBy)},
		{Key: "baseline", Value: baseline},
		{Key: "min_steps", Value: strconv.Itoa(p.MinSteps)},
		{Key: "where", Value: scoring.DescribeWhere(p.Where)},
		{Key: "identity_fields", Value: list(p.IdentityFields)},
		{Key: "patterns", Value: list(p.Patterns)},
		{Key: "bootstrap_resamples", Value: strconv.Itoa(p.BootstrapResamples)},
		{Key: "bootstrap_seed", Value: strconv.FormatUint(p.BootstrapSeed, 10)},
		{Key: "confidence_level", Value: f(p.ConfidenceLevel)},
	}...)
}

// omitted says which parameters of crlbatch.params the report's table
// leaves out under the chosen anchor.
func omitted(p params) string {
	if p.Anchor == string(skyfall.AnchorCeiling) {
		return "epsilon_fraction and epsilon_abs_floor set the recovery band under the segment anchor only: they are in crlbatch.params, not above."
	}
	return "epsilon sets the recovery band under the ceiling anchor only: it is in crlbatch.params, not above."
}

// boundSentence says in the report which ceiling was used.
func boundSentence(info *ceilingInfo) string {
	if info == nil {
		return "No ceiling was supplied: the performance gap is null throughout, and adaptation and recovery are anchored to each segment's own behaviour."
	}
	f := func(x float64) string { return writers.FormatValue(protocol.Some(x)) } // as every number of the report
	var b strings.Builder
	fmt.Fprintf(&b, "Derivation `%s`, from `%s`.", info.Derivation, info.Source)
	if info.PerStep != nil {
		fmt.Fprintf(&b, " Per step %s, final step %s.", f(*info.PerStep), f(*info.FinalStep))
	}
	if info.Value != nil {
		fmt.Fprintf(&b, " Every label's ceiling is %s.", f(*info.Value))
	}
	if info.Values != nil {
		keys := make([]string, 0, len(info.Values))
		for k := range info.Values {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = fmt.Sprintf("%s %s", writers.Code(k), f(info.Values[k]))
		}
		fmt.Fprintf(&b, " Per-label ceilings: %s.", strings.Join(parts, ", "))
	}
	if info.Derivation == upperbound.DerivationDataRelative {
		b.WriteString(" A data-relative ceiling is the best reward observed in these runs: it moves with the policies measured and is no basis for comparing families.")
	}
	return b.String()
}

// uncarriedNotes are the notes on the components of --episode-end (and
// --episode-end-from-spec) and --solve-component that no row of any scored run carries: they count as
// 0 on every row (PROTOCOLS), so the numbers stand, but a misspelt name
// gives a column of zeros the note points at. None when there is no run.
func (j *job) uncarriedNotes(runs []runRow) []string {
	if len(runs) == 0 {
		return nil
	}
	var names []string
	if c := j.p.SolveComponent; c != "" {
		names = append(names, c)
	}
	for _, c := range j.p.EpisodeEnd {
		if !slices.Contains(names, c) {
			names = append(names, c)
		}
	}
	var notes []string
	for _, c := range names {
		carried := false
		for _, r := range runs {
			if !slices.Contains(r.Result.Uncarried, c) {
				carried = true
				break
			}
		}
		if carried {
			continue
		}
		var flags []string
		if c == j.p.SolveComponent {
			flags = append(flags, "--solve-component")
		}
		switch {
		case slices.Contains(j.cfg.Params.EpisodeEnd, c):
			flags = append(flags, "--episode-end")
		case slices.Contains(j.p.EpisodeEnd, c):
			flags = append(flags, "--episode-end-from-spec")
		}
		var effect []string
		if c == j.p.SolveComponent {
			effect = append(effect, "no episode counts as solved")
		}
		if slices.Contains(j.p.EpisodeEnd, c) {
			effect = append(effect, "it ends no episode")
		}
		notes = append(notes, fmt.Sprintf("component %s (%s) is carried by no row of any scored run: it counts as 0 on every row, so %s; check the name",
			strconv.Quote(c), strings.Join(flags, ", "), strings.Join(effect, " and ")))
	}
	return notes
}
