package diff

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/crlbatch/crlbatch/protocol"
	"github.com/crlbatch/crlbatch/published"
	"github.com/crlbatch/crlbatch/writers"
)

// Metric is the change of one family × metric present in both results.
type Metric struct {
	Family string `json:"family"`
	Metric string `json:"metric"`
	// HigherIsBetter is the new result's direction (nil for a count).
	HigherIsBetter *bool `json:"higher_is_better"`
	OldN           int64 `json:"old_n"`
	NewN           int64 `json:"new_n"`
	OldMean        Value `json:"old_mean"`
	NewMean        Value `json:"new_mean"`
	// DeltaMean is new − old, null when either is.
	DeltaMean Value `json:"delta_mean"`
	OldIQM    Value `json:"old_iqm"`
	NewIQM    Value `json:"new_iqm"`
	DeltaIQM  Value `json:"delta_iqm"`
	// MeanCIOverlap and IQMCIOverlap say whether the old and new
	// bootstrap intervals overlap; nil when a bound is null.
	MeanCIOverlap *bool `json:"mean_ci_overlap"`
	IQMCIOverlap  *bool `json:"iqm_ci_overlap"`
}

// Value is a number or null, as JSON has it.
type Value = *float64

// Param is a changed parameter: its JSON values, nil where absent.
type Param struct {
	Key string           `json:"key"`
	Old *json.RawMessage `json:"old"`
	New *json.RawMessage `json:"new"`
}

// Run is a run added or removed.
type Run struct {
	Key    string `json:"run_key"`
	Family string `json:"family"`
}

// Moved is a run in both results whose family changed (its key the same:
// the field its family is grouped by changed, not those naming the run).
type Moved struct {
	Key       string `json:"run_key"`
	OldFamily string `json:"old_family"`
	NewFamily string `json:"new_family"`
}

// FamilyMetric names a metric of a family that one result has and the
// other has not.
type FamilyMetric struct {
	Family string `json:"family"`
	Metric string `json:"metric"`
}

// Build is the crlbatch build that wrote a result: its manifest's version
// and commit, null where unknown (a manifest without them).
type Build struct {
	Version *string `json:"version"`
	Commit  *string `json:"commit"`
}

// Builds are the builds that wrote the old and new results.
type Builds struct {
	Old Build `json:"old"`
	New Build `json:"new"`
	// Changed is true when the version or the commit differs between
	// them (only fields both results name count), false when those they
	// both name agree, null when they name none in common: an unknown
	// build is not a change.
	Changed *bool `json:"changed"`
}

// Diff is what changed from Old to New.
type Diff struct {
	Old string `json:"old"`
	New string `json:"new"`
	// Build is information, not a change of the results: Empty ignores
	// it, and the renderings show it beside the metric changes, which a
	// new build may explain.
	Build   Builds   `json:"build"`
	Metrics []Metric `json:"metrics"`
	// MetricsAdded and MetricsRemoved are the family × metric rows of a
	// family in both results that only the new (old) one has: a
	// diagnostic no longer recorded, a metric a newer crlbatch adds.
	MetricsAdded    []FamilyMetric `json:"metrics_added"`
	MetricsRemoved  []FamilyMetric `json:"metrics_removed"`
	FamiliesAdded   []string       `json:"families_added"`
	FamiliesRemoved []string       `json:"families_removed"`
	RunsAdded       []Run          `json:"runs_added"`
	RunsRemoved     []Run          `json:"runs_removed"`
	RunsMoved       []Moved        `json:"runs_moved"`
	Params          []Param        `json:"params"`
	// MetricsNotCompared says why Metrics is empty whatever the numbers:
	// the results were scored under different protocols, whose metrics
	// of one name (forgetting) are defined differently. "" otherwise.
	MetricsNotCompared string `json:"metrics_not_compared,omitempty"`
}

// Empty reports whether nothing in the results changed (a change of the
// build that wrote them alone leaves it true).
func (d *Diff) Empty() bool {
	return len(d.Metrics)+len(d.MetricsAdded)+len(d.MetricsRemoved)+len(d.FamiliesAdded)+len(d.FamiliesRemoved)+len(d.RunsAdded)+len(d.RunsRemoved)+len(d.RunsMoved)+len(d.Params) == 0
}

func num(v protocol.Value) Value {
	if !v.OK {
		return nil
	}
	x := v.V
	return &x
}

func delta(a, b protocol.Value) Value {
	if !a.OK || !b.OK {
		return nil
	}
	x := b.V - a.V
	return &x
}

func same(a, b protocol.Value) bool {
	return a.OK == b.OK && (!a.OK || a.V == b.V)
}

// overlap reports whether [lo1, hi1] and [lo2, hi2] overlap; nil when a
// bound is absent.
func overlap(lo1, hi1, lo2, hi2 protocol.Value) *bool {
	if !lo1.OK || !hi1.OK || !lo2.OK || !hi2.OK {
		return nil
	}
	o := lo1.V <= hi2.V && lo2.V <= hi1.V
	return &o
}

// known is s, or nil for "" (unknown).
func known(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// changed reports whether the builds are known to differ.
func (b Builds) changed() bool { return b.Changed != nil && *b.Changed }

// builds compares the builds of two results field by field, counting only
// the fields both name.
func builds(old, new published.Build) Builds {
	b := Builds{Old: Build{known(old.Version), known(old.Commit)}, New: Build{known(new.Version), known(new.Commit)}}
	for _, f := range [][2]string{{old.Version, new.Version}, {old.Commit, new.Commit}} {
		if f[0] == "" || f[1] == "" {
			continue
		}
		changed := f[0] != f[1] || b.changed()
		b.Changed = &changed
	}
	return b
}

// Compare compares old with new: families and rows in new's order, the
// removed ones in old's.
func Compare(old, new *published.Result) *Diff {
	d := &Diff{Old: old.URL, New: new.URL, Build: builds(old.Build, new.Build), Metrics: []Metric{}, MetricsAdded: []FamilyMetric{}, MetricsRemoved: []FamilyMetric{}, FamiliesAdded: []string{}, FamiliesRemoved: []string{},
		RunsAdded: []Run{}, RunsRemoved: []Run{}, RunsMoved: []Moved{}, Params: []Param{}}
	oldRows := map[[2]string]*published.Row{}
	rows := old.Rows
	op, _ := old.Params["protocol"].(string)
	np, _ := new.Params["protocol"].(string)
	if op != "" && np != "" && op != np {
		d.MetricsNotCompared = fmt.Sprintf("The results were scored under different protocols (%s, then %s), whose metrics of one name are defined differently: their metrics are not compared", op, np)
		rows = nil
	}
	for i := range rows {
		r := &old.Rows[i]
		oldRows[[2]string{r.Family, r.Metric}] = r
	}
	newRows := map[[2]string]bool{}
	if rows != nil {
		for _, n := range new.Rows {
			newRows[[2]string{n.Family, n.Metric}] = true
		}
	}
	for i := range new.Rows {
		n := &new.Rows[i]
		o := oldRows[[2]string{n.Family, n.Metric}]
		if o == nil {
			if rows != nil && contains(old.Families, n.Family) {
				d.MetricsAdded = append(d.MetricsAdded, FamilyMetric{n.Family, n.Metric})
			}
			continue
		}
		if o.N == n.N && same(o.Mean, n.Mean) && same(o.IQM, n.IQM) && same(o.CILow, n.CILow) && same(o.CIHigh, n.CIHigh) &&
			same(o.IQMCILow, n.IQMCILow) && same(o.IQMCIHigh, n.IQMCIHigh) {
			continue
		}
		d.Metrics = append(d.Metrics, Metric{
			Family: n.Family, Metric: n.Metric, HigherIsBetter: n.HigherIsBetter, OldN: o.N, NewN: n.N,
			OldMean: num(o.Mean), NewMean: num(n.Mean), DeltaMean: delta(o.Mean, n.Mean),
			OldIQM: num(o.IQM), NewIQM: num(n.IQM), DeltaIQM: delta(o.IQM, n.IQM),
			MeanCIOverlap: overlap(o.CILow, o.CIHigh, n.CILow, n.CIHigh),
			IQMCIOverlap:  overlap(o.IQMCILow, o.IQMCIHigh, n.IQMCILow, n.IQMCIHigh),
		})
	}
	for _, o := range rows {
		if !newRows[[2]string{o.Family, o.Metric}] && contains(new.Families, o.Family) {
			d.MetricsRemoved = append(d.MetricsRemoved, FamilyMetric{o.Family, o.Metric})
		}
	}
	d.FamiliesAdded = minus(new.Families, old.Families)
	d.FamiliesRemoved = minus(old.Families, new.Families)
	oldRuns, newRuns := map[string]string{}, map[string]bool{}
	for _, r := range old.Runs {
		oldRuns[r.Key] = r.Family
	}
	for _, r := range new.Runs {
		newRuns[r.Key] = true
		fam, ok := oldRuns[r.Key]
		switch {
		case !ok:
			d.RunsAdded = append(d.RunsAdded, Run(r))
		case fam != r.Family:
			d.RunsMoved = append(d.RunsMoved, Moved{Key: r.Key, OldFamily: fam, NewFamily: r.Family})
		}
	}
	for _, r := range old.Runs {
		if !newRuns[r.Key] {
			d.RunsRemoved = append(d.RunsRemoved, Run(r))
		}
	}
	d.Params = params(flatten("", old.Params), flatten("", new.Params))
	return d
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

func minus(a, b []string) []string {
	out := []string{}
	for _, x := range a {
		found := false
		for _, y := range b {
			if x == y {
				found = true
				break
			}
		}
		if !found {
			out = append(out, x)
		}
	}
	return out
}

// flatten turns nested objects into dotted keys with JSON values (arrays
// stay whole).
func flatten(prefix string, m map[string]any) map[string]json.RawMessage {
	out := map[string]json.RawMessage{}
	for k, v := range m {
		key := prefix + k
		if sub, ok := v.(map[string]any); ok && len(sub) > 0 {
			for k2, v2 := range flatten(key+".", sub) {
				out[k2] = v2
			}
			continue
		}
		b, _ := json.Marshal(v)
		out[key] = b
	}
	return out
}

func params(old, new map[string]json.RawMessage) []Param {
	keys := map[string]bool{}
	for k := range old {
		keys[k] = true
	}
	for k := range new {
		keys[k] = true
	}
	sorted := make([]string, 0, len(keys))
	for k := range keys {
		sorted = append(sorted, k)
	}
	sort.Strings(sorted)
	out := []Param{}
	for _, k := range sorted {
		o, okO := old[k]
		n, okN := new[k]
		if okO && okN && string(o) == string(n) {
			continue
		}
		p := Param{Key: k}
		if okO {
			p.Old = &o
		}
		if okN {
			p.New = &n
		}
		out = append(out, p)
	}
	return out
}

// JSON writes d as one indented JSON document.
func (d *Diff) JSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(d)
}

// format prints v as the report prints a number of the group of v and
// group (writers.FormatScaled).
func format(v Value, group ...Value) string {
	if v == nil {
		return writers.Absent
	}
	var g []protocol.Value
	for _, x := range group {
		if x != nil {
			g = append(g, protocol.Some(*x))
		}
	}
	return writers.FormatScaled(protocol.Some(*v), g...)
}

// signed prints a change: format with a plus sign on a non-zero positive
// number. A change that is not zero but that the report's four decimals
// would print as 0.0000 beside the values it separates (a mean that moved
// by 6e-6, or in its last bit) prints in scientific notation, so that a
// row listed as changed never reads as unchanged.
func signed(v Value, group ...Value) string {
	s := format(v, group...)
	if v != nil && *v != 0 && strings.Trim(s, "-+0.") == "" {
		s = strconv.FormatFloat(*v, 'e', writers.Decimals, 64)
	}
	if v != nil && !strings.HasPrefix(s, "-") && s != "0.0000" {
		s = "+" + s
	}
	return s
}

func overlapText(o *bool) string {
	switch {
	case o == nil:
		return "unknown"
	case *o:
		return "yes"
	default:
		return "no"
	}
}

func param(v *json.RawMessage) string {
	if v == nil {
		return "(absent)"
	}
	return writers.Code(string(*v))
}

// Markdown renders d for a person: a heading naming both results and the
// builds that wrote them, then what changed, or "No changes." ("No other
// changes." after a change of build).
func (d *Diff) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# crlbatch diff\n\n- old: %s, written by %s\n- new: %s, written by %s\n\n",
		writers.Code(d.Old), d.Build.Old.text(), writers.Code(d.New), d.Build.New.text())
	d.body(&b, "##")
	return b.String()
}

// text names a build for a person: "crlbatch 0.3.1 (commit `4f1c2a9e`)",
// "unknown" in place of what its manifest does not name.
func (b Build) text() string {
	v, c := "unknown", "unknown"
	if b.Version != nil {
		v = writers.Code(*b.Version)
	}
	if b.Commit != nil {
		c = writers.Code(*b.Commit)
	}
	if b.Version == nil && b.Commit == nil {
		return "an unknown crlbatch build"
	}
	return fmt.Sprintf("crlbatch %s (commit %s)", v, c)
}

// buildChanged renders a change of build (nothing otherwise) under a
// heading of level h.
func (d *Diff) buildChanged(b *strings.Builder, h string) {
	if !d.Build.changed() {
		return
	}
	fmt.Fprintf(b, "%s crlbatch build changed\n\nThe results were written by different crlbatch builds: old %s, new %s. "+
		"A metric that changed may have changed with crlbatch rather than with the runs.\n\n", h, d.Build.Old.text(), d.Build.New.text())
}

// body renders the changes under headings of level h.
func (d *Diff) body(b *strings.Builder, h string) {
	if d.Empty() {
		d.buildChanged(b, h)
		if d.Build.changed() {
			b.WriteString("No other changes.\n")
		} else {
			b.WriteString("No changes.\n")
		}
		return
	}
	list := func(title string, xs []string) {
		if len(xs) == 0 {
			return
		}
		fmt.Fprintf(b, "%s %s\n\n", h, title)
		for _, x := range xs {
			fmt.Fprintf(b, "- %s\n", writers.FamilyName(x))
		}
		b.WriteString("\n")
	}
	list("Families added", d.FamiliesAdded)
	list("Families removed", d.FamiliesRemoved)
	runs := func(title string, rs []Run) {
		if len(rs) == 0 {
			return
		}
		fmt.Fprintf(b, "%s %s\n\n", h, title)
		rows := make([][]string, len(rs))
		for i, r := range rs {
			rows[i] = []string{writers.Code(r.Key), writers.FamilyName(r.Family)}
		}
		b.WriteString(writers.MarkdownTable([]string{"run", "family"}, rows))
		b.WriteString("\n")
	}
	runs("Runs added", d.RunsAdded)
	runs("Runs removed", d.RunsRemoved)
	if len(d.RunsMoved) > 0 {
		fmt.Fprintf(b, "%s Runs moved\n\nRuns in both results whose family changed.\n\n", h)
		rows := make([][]string, len(d.RunsMoved))
		for i, r := range d.RunsMoved {
			rows[i] = []string{writers.Code(r.Key), writers.FamilyName(r.OldFamily), writers.FamilyName(r.NewFamily)}
		}
		b.WriteString(writers.MarkdownTable([]string{"run", "old family", "new family"}, rows))
		b.WriteString("\n")
	}
	if len(d.Params) > 0 {
		fmt.Fprintf(b, "%s Parameters changed\n\n", h)
		rows := make([][]string, len(d.Params))
		for i, p := range d.Params {
			rows[i] = []string{writers.Code(p.Key), param(p.Old), param(p.New)}
		}
		b.WriteString(writers.MarkdownTable([]string{"parameter", "old", "new"}, rows))
		b.WriteString("\n")
	}
	d.buildChanged(b, h)
	if d.MetricsNotCompared != "" {
		fmt.Fprintf(b, "%s Metrics\n\n%s.\n\n", h, writers.Text(d.MetricsNotCompared))
	}
	fms := func(title, what string, xs []FamilyMetric) {
		if len(xs) == 0 {
			return
		}
		fmt.Fprintf(b, "%s %s\n\n%s\n\n", h, title, what)
		rows := make([][]string, len(xs))
		for i, x := range xs {
			rows[i] = []string{writers.FamilyName(x.Family), writers.Code(x.Metric)}
		}
		b.WriteString(writers.MarkdownTable([]string{"family", "metric"}, rows))
		b.WriteString("\n")
	}
	fms("Metrics added", "Metrics of a family in both results that only the new result has.", d.MetricsAdded)
	fms("Metrics removed", "Metrics of a family in both results that only the old result has.", d.MetricsRemoved)
	if len(d.Metrics) > 0 {
		fmt.Fprintf(b, "%s Metrics changed\n\n", h)
		b.WriteString("Families in both results whose mean, IQM, n or bootstrap intervals changed; Δ is new − old (in scientific notation when four decimals would show it as zero); \"overlap\" says whether the old and new 95 % intervals overlap (no: the change exceeds the bootstrap's spread; unknown: an interval is null).\n\n")
		rows := make([][]string, len(d.Metrics))
		for i, m := range d.Metrics {
			rows[i] = []string{writers.FamilyName(m.Family), writers.Code(m.Metric), writers.Better(m.HigherIsBetter),
				fmt.Sprintf("%d → %d", m.OldN, m.NewN),
				format(m.OldMean), format(m.NewMean), signed(m.DeltaMean, m.OldMean, m.NewMean), overlapText(m.MeanCIOverlap),
				format(m.OldIQM), format(m.NewIQM), signed(m.DeltaIQM, m.OldIQM, m.NewIQM), overlapText(m.IQMCIOverlap)}
		}
		b.WriteString(writers.MarkdownTable([]string{"family", "metric", "better", "n", "old mean", "new mean", "Δ mean", "overlap",
			"old IQM", "new IQM", "Δ IQM", "overlap (IQM)"}, rows))
		b.WriteString("\n")
	}
}

// Section is the nightly report's "Changes since the previous result":
// what changed from old (the previous complete result) to new, with its
// subsections one level down.
func Section(old, new *published.Result) string {
	d := Compare(old, new)
	var b strings.Builder
	fmt.Fprintf(&b, "## Changes since the previous result\n\nPrevious result: %s", writers.Code(old.URL))
	if old.FinishedAt != "" {
		fmt.Fprintf(&b, ", finished %s", writers.Text(old.FinishedAt))
	}
	b.WriteString(".\n\n")
	d.body(&b, "###")
	return b.String()
}

// Table is d as one Parquet table, a row per change: change is
// "build_changed" (two rows, param "version" and "commit", old_value and
// new_value each result's, null when unknown; only when Build.Changed is
// true), "metric_changed", "metric_added", "metric_removed" (family and metric
// set), "family_added", "family_removed", "run_added",
// "run_removed", "run_moved" (family the new family, old_value and
// new_value the old and new) or "param_changed"; the columns that do not
// apply to a change are null.
func (d *Diff) Table() (*writers.Table, error) {
	t := writers.NewTable()
	change := t.String("change")
	family := t.NullableString("family")
	metric := t.NullableString("metric")
	runKey := t.NullableString("run_key")
	key := t.NullableString("param")
	oldV := t.NullableString("old_value")
	newV := t.NullableString("new_value")
	hib := t.Bool("higher_is_better")
	// n is a count, but nullable: float64 like every nullable number.
	oldN := t.Metric("old_n")
	newN := t.Metric("new_n")
	cols := map[string]writers.MetricColumn{}
	names := []string{"old_mean", "new_mean", "delta_mean", "old_iqm", "new_iqm", "delta_iqm"}
	for _, n := range names {
		cols[n] = t.Metric(n)
	}
	meanOv := t.Bool("mean_ci_overlap")
	iqmOv := t.Bool("iqm_ci_overlap")
	t.Reasons()
	val := func(v Value, why string) protocol.Value {
		if v == nil {
			return protocol.None(why)
		}
		return protocol.Some(*v)
	}
	boolOr := func(c writers.BoolColumn, b *bool) {
		if b == nil {
			c.AppendNull()
		} else {
			c.Append(*b)
		}
	}
	str := func(c writers.StringColumn, s *string) {
		if s == nil {
			c.AppendNull()
		} else {
			c.Append(*s)
		}
	}
	row := func(kind string, fam, met, run, param, o, n *string, m *Metric) error {
		change.Append(kind)
		str(family, fam)
		str(metric, met)
		str(runKey, run)
		str(key, param)
		str(oldV, o)
		str(newV, n)
		notMetric := "not a metric change"
		if m == nil {
			hib.AppendNull()
			oldN.Append(protocol.None(notMetric))
			newN.Append(protocol.None(notMetric))
			for _, name := range names {
				cols[name].Append(protocol.None(notMetric))
			}
			meanOv.AppendNull()
			iqmOv.AppendNull()
		} else {
			boolOr(hib, m.HigherIsBetter)
			oldN.Append(protocol.Some(float64(m.OldN)))
			newN.Append(protocol.Some(float64(m.NewN)))
			cols["old_mean"].Append(val(m.OldMean, "null in the old result"))
			cols["new_mean"].Append(val(m.NewMean, "null in the new result"))
			cols["delta_mean"].Append(val(m.DeltaMean, "a mean is null"))
			cols["old_iqm"].Append(val(m.OldIQM, "null in the old result"))
			cols["new_iqm"].Append(val(m.NewIQM, "null in the new result"))
			cols["delta_iqm"].Append(val(m.DeltaIQM, "an IQM is null"))
			boolOr(meanOv, m.MeanCIOverlap)
			boolOr(iqmOv, m.IQMCIOverlap)
		}
		return t.EndRow()
	}
	p := func(s string) *string { return &s }
	if d.Build.changed() {
		for _, f := range []struct {
			name     string
			old, new *string
		}{{"version", d.Build.Old.Version, d.Build.New.Version}, {"commit", d.Build.Old.Commit, d.Build.New.Commit}} {
			if err := row("build_changed", nil, nil, nil, p(f.name), f.old, f.new, nil); err != nil {
				return nil, err
			}
		}
	}
	for i := range d.Metrics {
		m := &d.Metrics[i]
		if err := row("metric_changed", p(m.Family), p(m.Metric), nil, nil, nil, nil, m); err != nil {
			return nil, err
		}
	}
	for _, x := range d.MetricsAdded {
		if err := row("metric_added", p(x.Family), p(x.Metric), nil, nil, nil, nil, nil); err != nil {
			return nil, err
		}
	}
	for _, x := range d.MetricsRemoved {
		if err := row("metric_removed", p(x.Family), p(x.Metric), nil, nil, nil, nil, nil); err != nil {
			return nil, err
		}
	}
	for _, f := range d.FamiliesAdded {
		if err := row("family_added", p(f), nil, nil, nil, nil, nil, nil); err != nil {
			return nil, err
		}
	}
	for _, f := range d.FamiliesRemoved {
		if err := row("family_removed", p(f), nil, nil, nil, nil, nil, nil); err != nil {
			return nil, err
		}
	}
	for _, r := range d.RunsAdded {
		if err := row("run_added", p(r.Family), nil, p(r.Key), nil, nil, nil, nil); err != nil {
			return nil, err
		}
	}
	for _, r := range d.RunsRemoved {
		if err := row("run_removed", p(r.Family), nil, p(r.Key), nil, nil, nil, nil); err != nil {
			return nil, err
		}
	}
	for _, r := range d.RunsMoved {
		if err := row("run_moved", p(r.NewFamily), nil, p(r.Key), nil, p(r.OldFamily), p(r.NewFamily), nil); err != nil {
			return nil, err
		}
	}
	for _, pc := range d.Params {
		var o, n *string
		if pc.Old != nil {
			o = p(string(*pc.Old))
		}
		if pc.New != nil {
			n = p(string(*pc.New))
		}
		if err := row("param_changed", nil, nil, nil, p(pc.Key), o, n, nil); err != nil {
			return nil, err
		}
	}
	return t, t.Err()
}
