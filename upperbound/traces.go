package upperbound

import (
	"errors"
	"fmt"

	"github.com/crlbatch/crlbatch/protocol/skyfall"
)

// DataRelativeOptions tunes DataRelative.
type DataRelativeOptions struct {
	// Spec, when set, identifies final steps by their episode-end
	// contributions; the trace columns of its episode-end components must
	// have been kept by the reader. Nil takes each trace's last row as its
	// final step.
	Spec *Spec
	// Label, when set, restricts the bound to rows with that label.
	Label *string
	// Quantile, when set, replaces the best with this quantile (in [0, 1],
	// linear interpolation as numpy's default). Nil means 1, the best.
	Quantile *float64
}

// DataRelative is the best reward observed in recorded traces: PerStep over
// the rows that are not final steps, FinalStep over those that are (both
// the same value when only one kind is present). With a spec, final steps
// are the rows with a nonzero contribution from one of its episode-end
// components, so a spec without any has no final steps; without a spec,
// each trace's last row is its final step.
//
// The result depends on the policy that was recorded, so it says how close a
// run came to what runs like it have achieved; it is no yardstick for ranking
// policies against each other. No row at all (after the label filter) is an error.
func DataRelative(traces []*skyfall.Trace, opts DataRelativeOptions) (Bound, error) {
	q, err := resolveQuantile(opts.Quantile)
	if err != nil {
		return Bound{}, err
	}
	var episodeEnd []string
	if opts.Spec != nil {
		if err := opts.Spec.Validate(); err != nil {
			return Bound{}, err
		}
		episodeEnd = EpisodeEndComponents(opts.Spec)
	}
	var steps, finals []float64
	for _, t := range traces {
		if t == nil {
			return Bound{}, errors.New("data_relative bound: nil trace")
		}
		if err := t.Validate(); err != nil {
			return Bound{}, err
		}
		want := int32(-1)
		if opts.Label != nil {
			for i, name := range t.LabelNames {
				if name == *opts.Label {
					want = int32(i)
					break
				}
			}
			if want < 0 {
				continue
			}
		}
		var isFinal func(row int) bool
		if opts.Spec != nil {
			cols, err := episodeEndColumns(t, episodeEnd)
			if err != nil {
				return Bound{}, err
			}
			isFinal = func(row int) bool { return nonzeroAny(cols, row) }
		} else {
			last := t.Len() - 1
			isFinal = func(row int) bool { return row == last }
		}
		for i, r := range t.Rewards {
			if want >= 0 && t.Labels[i] != want {
				continue
			}
			if isFinal(i) {
				finals = append(finals, r)
			} else {
				steps = append(steps, r)
			}
		}
	}
	if len(steps) == 0 && len(finals) == 0 {
		if opts.Label != nil {
			return Bound{}, fmt.Errorf("data_relative bound: no recorded row has label %q", *opts.Label)
		}
		return Bound{}, errors.New("data_relative bound: no recorded rows")
	}
	per, fin := splitBest(steps, finals, q)
	b := Bound{PerStep: per, FinalStep: fin, Derivation: DerivationDataRelative, Quantile: q}
	if opts.Spec != nil {
		b.Spec = opts.Spec.Name
	}
	if opts.Label != nil {
		b.Label = *opts.Label
	}
	return b, nil
}

// LabelBound is the ceiling of one label.
type LabelBound struct {
	Label string
	// Rows is L_k, the rows with this label over all traces; FinalRows is
	// m_k, the final steps among them.
	Rows, FinalRows int
	// Ceiling is ((L_k − m_k)·PerStep + m_k·FinalStep)/L_k.
	Ceiling float64
}

// LabelBounds holds the per-label ceilings of BoundsByConfiguration, labels
// in order of first appearance across the traces (traces in the order
// given, rows in recorded order).
type LabelBounds struct {
	// Bound is the bound the ceilings were computed from.
	Bound  Bound
	Labels []LabelBound
	// EpisodeEnd lists the components whose nonzero contributions marked
	// the final steps; nil when each run's last row was its final step.
	EpisodeEnd []string

	index map[string]int
}

// Get returns the ceiling of label.
func (lb *LabelBounds) Get(label string) (float64, bool) {
	i, ok := lb.index[label]
	if !ok {
		return 0, false
	}
	return lb.Labels[i].Ceiling, true
}

// Map returns the ceilings keyed by label.
func (lb *LabelBounds) Map() map[string]float64 {
	m := make(map[string]float64, len(lb.Labels))
	for _, l := range lb.Labels {
		m[l.Label] = l.Ceiling
	}
	return m
}

// BoundsByConfiguration gives each label the ceiling its rows are measured
// against, pooled over all traces: ((L_k − m_k)·PerStep + m_k·FinalStep)/L_k
// with L_k the label's rows and m_k the final steps among them. Final steps
// are the rows with a nonzero contribution from one of spec's episode-end
// components (whose columns the reader must have kept); when spec is nil or
// has no episode-end component, the last row of each trace. Pooling rather
// than averaging keeps the arithmetic right when seeds ran different
// lengths.
func BoundsByConfiguration(b Bound, spec *Spec, traces []*skyfall.Trace) (*LabelBounds, error) {
	out, err := NewLabelBounds(b, spec)
	if err != nil {
		return nil, err
	}
	for _, t := range traces {
		if err := out.Add(t); err != nil {
			return nil, err
		}
	}
	out.Finish()
	return out, nil
}

// NewLabelBounds starts BoundsByConfiguration one trace at a time, for a
// caller that cannot hold every trace at once: Add each trace in canonical
// order, then Finish. The result equals BoundsByConfiguration's, since the
// ceilings depend only on the counts.
func NewLabelBounds(b Bound, spec *Spec) (*LabelBounds, error) {
	if err := b.Validate(); err != nil {
		return nil, err
	}
	var episodeEnd []string
	if spec != nil {
		if err := spec.Validate(); err != nil {
			return nil, err
		}
		episodeEnd = EpisodeEndComponents(spec)
	}
	return &LabelBounds{Bound: b, EpisodeEnd: episodeEnd, index: map[string]int{}}, nil
}

// slot returns label name's index in out.Labels, appending it when it is
// new (labels keep the order they were first met in).
func (out *LabelBounds) slot(name string) int {
	j, ok := out.index[name]
	if !ok {
		j = len(out.Labels)
		out.index[name] = j
		out.Labels = append(out.Labels, LabelBound{Label: name})
	}
	return j
}

// Add counts one trace's rows and final steps per label.
func (out *LabelBounds) Add(t *skyfall.Trace) error {
	if t == nil {
		return errors.New("bounds by configuration: nil trace")
	}
	if err := t.Validate(); err != nil {
		return err
	}
	episodeEnd := out.EpisodeEnd
	slot := make([]int, len(t.LabelNames))
	for i, name := range t.LabelNames {
		slot[i] = out.slot(name)
	}
	var cols [][]float64
	if len(episodeEnd) > 0 {
		var err error
		if cols, err = episodeEndColumns(t, episodeEnd); err != nil {
			return err
		}
	}
	last := t.Len() - 1
	for i, l := range t.Labels {
		lb := &out.Labels[slot[l]]
		lb.Rows++
		if len(episodeEnd) > 0 && nonzeroAny(cols, i) || len(episodeEnd) == 0 && i == last {
			lb.FinalRows++
		}
	}
	return nil
}

// PartCounts is what one part of a trace (some of its rows, in order)
// adds to BoundsByConfiguration: its labels in order of first appearance,
// and per label its rows and the rows with a nonzero contribution from one
// of the episode-end components (Final; all zero without any); Last is the
// index in Labels of the label of the part's last row (-1: no row).
type PartCounts struct {
	Labels      []string
	Rows, Final []int
	Last        int
}

// CountPart counts the rows of t, some consecutive rows of a trace, for
// AddParts: per label, as Add counts them, with t's own label indices.
// It fails as Add fails on t (Validate, an episode-end column missing).
func (out *LabelBounds) CountPart(t *skyfall.Trace) (PartCounts, error) {
	if t == nil {
		return PartCounts{}, errors.New("bounds by configuration: nil trace")
	}
	if err := t.Validate(); err != nil {
		return PartCounts{}, err
	}
	pc := PartCounts{
		Labels: t.LabelNames,
		Rows:   make([]int, len(t.LabelNames)),
		Final:  make([]int, len(t.LabelNames)),
		Last:   -1,
	}
	for _, l := range t.Labels {
		pc.Rows[l]++
	}
	if n := t.Len(); n > 0 {
		pc.Last = int(t.Labels[n-1])
	}
	if len(out.EpisodeEnd) == 0 {
		return pc, nil
	}
	cols, err := episodeEndColumns(t, out.EpisodeEnd)
	if err != nil {
		return PartCounts{}, err
	}
	if len(cols) == 1 {
		// One column (the bundled specs): its nonzero rows, compared
		// as nonzeroAny compares (-0.0 is zero, NaN is not).
		for i, x := range cols[0] {
			if x != 0 {
				pc.Final[t.Labels[i]]++
			}
		}
		return pc, nil
	}
	for i, l := range t.Labels {
		if nonzeroAny(cols, i) {
			pc.Final[l]++
		}
	}
	return pc, nil
}

// CountBuilder is CountPart of the trace b would materialise (b.Trace),
// counted straight from b's compact columns without materialising one
// (skyfall.Builder.CountLabels): the same counts, and the same error for an
// episode-end component b does not keep. b is not modified; parts may be
// counted at once on different goroutines.
func (out *LabelBounds) CountBuilder(b *skyfall.Builder) (PartCounts, error) {
	if b == nil {
		return PartCounts{}, errors.New("bounds by configuration: nil builder")
	}
	c, err := b.CountLabels(out.EpisodeEnd)
	if err != nil {
		var nc *skyfall.NoComponentError
		if errors.As(err, &nc) {
			return PartCounts{}, noEpisodeEndColumn(nc.Trace, nc.Component)
		}
		return PartCounts{}, err
	}
	return PartCounts{Labels: c.Labels, Rows: c.Rows, Final: c.Marked, Last: c.Last}, nil
}

// AddParts counts one trace given as its parts, in row order (each
// counted by CountPart on the part's rows alone): the same counts, and
// the same order of labels, as Add of the whole trace. A label's final
// rows are its rows with an episode-end contribution, or without
// episode-end components the trace's last row: the last row of its last
// part with a row.
func (out *LabelBounds) AddParts(parts []PartCounts) {
	last := -1 // the label slot of the trace's last row
	for _, p := range parts {
		for i, name := range p.Labels {
			j := out.slot(name)
			out.Labels[j].Rows += p.Rows[i]
			out.Labels[j].FinalRows += p.Final[i]
			if i == p.Last {
				last = j
			}
		}
	}
	if len(out.EpisodeEnd) == 0 && last >= 0 {
		out.Labels[last].FinalRows++
	}
}

// AddCounts counts rows and final steps of label as Add counts a trace's:
// Add over traces equals, for each trace in turn, AddCounts of each of its
// labels in the order of its LabelNames (with the counts Add gave that
// trace alone, zeros included), which lets a caller keep each trace's
// counts rather than the trace.
func (out *LabelBounds) AddCounts(label string, rows, finalRows int) {
	j, ok := out.index[label]
	if !ok {
		j = len(out.Labels)
		out.index[label] = j
		out.Labels = append(out.Labels, LabelBound{Label: label})
	}
	out.Labels[j].Rows += rows
	out.Labels[j].FinalRows += finalRows
}

// Finish computes every label's ceiling from the counts.
func (out *LabelBounds) Finish() {
	b := out.Bound
	for i := range out.Labels {
		lb := &out.Labels[i]
		L, m := float64(lb.Rows), float64(lb.FinalRows)
		lb.Ceiling = weighted(b.PerStep, b.FinalStep, L-m, m)
	}
}

// episodeEndColumns returns t's columns for the named components; a column
// the reader did not keep is an error.
func episodeEndColumns(t *skyfall.Trace, names []string) ([][]float64, error) {
	cols := make([][]float64, len(names))
	for i, name := range names {
		c, ok := t.Components[name]
		if !ok {
			return nil, noEpisodeEndColumn(t.Key, name)
		}
		if len(c) != t.Len() {
			return nil, fmt.Errorf("trace %s: component %q has %d values for %d rows", t.Key, name, len(c), t.Len())
		}
		cols[i] = c
	}
	return cols, nil
}

func noEpisodeEndColumn(key, name string) error {
	return fmt.Errorf("trace %s: no column for episode-end component %q; "+
		"the reader must be asked to keep it, since its contributions mark the episode's final steps", key, name)
}

func nonzeroAny(cols [][]float64, row int) bool {
	for _, c := range cols {
		if c[row] != 0 {
			return true
		}
	}
	return false
}

// DataRelativeLabels is the data-relative ceiling of every label, from
// traces handed over one at a time (a caller that cannot hold every trace
// at once): a label's ceiling is the best reward observed on any row with
// that label, final step or not, which is the greater of DataRelative's
// PerStep and FinalStep for that Label, without a spec. Labels are in
// order of first appearance.
type DataRelativeLabels struct {
	best  map[string]float64
	order []string
}

// NewDataRelativeLabels starts an empty DataRelativeLabels.
func NewDataRelativeLabels() *DataRelativeLabels {
	return &DataRelativeLabels{best: map[string]float64{}}
}

// Add takes one trace's rows into account.
func (d *DataRelativeLabels) Add(t *skyfall.Trace) {
	for i, r := range t.Rewards {
		l := t.LabelNames[t.Labels[i]]
		best, ok := d.best[l]
		if !ok {
			d.order = append(d.order, l)
		}
		if !ok || r > best {
			d.best[l] = r
		}
	}
}

// AddBest takes into account the best reward x of label in one trace (the
// first of the trace's labels, in its order of first appearance, first):
// for finite rewards, Add over traces equals AddBest of each trace's
// labels and their best rewards, trace after trace.
func (d *DataRelativeLabels) AddBest(l string, x float64) {
	best, ok := d.best[l]
	if !ok {
		d.order = append(d.order, l)
	}
	if !ok || x > best {
		d.best[l] = x
	}
}

// Labels lists the labels seen, in order of first appearance.
func (d *DataRelativeLabels) Labels() []string { return d.order }

// Map returns the ceilings keyed by label.
func (d *DataRelativeLabels) Map() map[string]float64 {
	m := make(map[string]float64, len(d.best))
	for k, v := range d.best {
		m[k] = v
	}
	return m
}
