package writers

import (
	"strings"

	"github.com/crlbatch/crlbatch/protocol/family"
	"github.com/crlbatch/crlbatch/protocol/skillshift"
)

// SkillshiftRun is one scored skillshift run (a method's tasks).
type SkillshiftRun struct {
	Key      string
	Source   string
	Family   string
	Meta     map[string]string
	Excluded bool
	Result   *skillshift.RunResult
}

// SkillshiftOutput is what skillshift's tables are built from, runs in
// canonical order.
type SkillshiftOutput struct {
	Runs     []SkillshiftRun
	Families *family.Result
}

// SkillshiftCellsTable is cells.parquet: one row per run × site × condition.
func SkillshiftCellsTable(o *SkillshiftOutput) (*Table, error) {
	t := NewTable()
	key := t.String("run_key")
	fam := t.String("family")
	site := t.String("site")
	cond := t.String("condition")
	tasks := t.Int64("tasks")
	succ := t.Int64("successes")
	sr := t.Metric("sr")
	as := t.Metric("as")
	asc := t.Metric("asc")
	sfr := t.Metric("sfr")
	calls := t.Metric("skill_calls")
	unstable := t.Bool("sfr_unstable")
	t.Reasons()
	for i := range o.Runs {
		r := &o.Runs[i]
		for ci := range r.Result.Cells {
			c := &r.Result.Cells[ci]
			key.Append(r.Key)
			fam.Append(r.Family)
			site.Append(c.Site)
			cond.Append(c.Condition)
			tasks.Append(int64(c.Tasks))
			succ.Append(int64(c.Successes))
			sr.Append(c.SR)
			as.Append(c.AS)
			asc.Append(c.ASC)
			sfr.Append(c.SFR)
			calls.Append(c.Invocations)
			unstable.Append(c.SFRUnstable)
			if err := t.EndRow(); err != nil {
				return nil, err
			}
		}
	}
	return t, t.Err()
}

// SkillshiftTable is table.parquet: one row per run × metric × marginal
// (the ten numbers of each metric), with the reason of a null value.
func SkillshiftTable(o *SkillshiftOutput) (*Table, error) {
	t := NewTable()
	key := t.String("run_key")
	fam := t.String("family")
	metric := t.String("metric")
	scope := t.String("scope")
	k := t.String("key")
	value := t.Metric("value")
	unstable := t.Bool("unstable")
	inv := t.Metric("invocations")
	reason := t.NullableString("reason")
	t.Reasons()
	for i := range o.Runs {
		r := &o.Runs[i]
		for mi := range r.Result.Metrics {
			m := &r.Result.Metrics[mi]
			for _, mg := range m.Marginals() {
				key.Append(r.Key)
				fam.Append(r.Family)
				metric.Append(m.Metric)
				scope.Append(string(mg.Scope))
				k.Append(mg.Key)
				value.Append(mg.Value)
				unstable.Append(mg.Unstable)
				inv.Append(mg.Invocations)
				if mg.Value.OK {
					reason.AppendNull()
				} else {
					reason.Append(mg.Value.Reason)
				}
				if err := t.EndRow(); err != nil {
					return nil, err
				}
			}
		}
	}
	return t, t.Err()
}

// SkillshiftReport renders report.md: the Table-1-shaped table of every
// method, the identity checks, the family comparison and the notes.
func SkillshiftReport(h ReportHeader, o *SkillshiftOutput, notes []string) string {
	var rows []ReportRow
	for _, m := range skillshift.Metrics {
		rows = append(rows, ReportRow{Title: m + " (O/A)", Metric: m})
	}
	var in []skillshift.TableInput
	for i := range o.Runs {
		r := &o.Runs[i]
		in = append(in, skillshift.TableInput{Name: r.Key, Result: r.Result})
	}
	tab := skillshift.BuildTable(in, nil)
	var sb strings.Builder
	sb.WriteString("## Results per method\n\nSR and SFR in percent, AS and ASC in counts; site and condition columns are unweighted means of their cells, O/A the unweighted mean of all cells (never task-weighted). `⚠︎` marks an SFR resting on fewer than 30 skill invocations.\n\n")
	header := []string{"Method", "Metric"}
	for _, c := range tab.Columns {
		header = append(header, c.Title)
	}
	header = append(header, "identity check")
	var trs [][]string
	for _, r := range tab.Rows {
		row := []string{r.Name, r.Metric}
		for _, c := range r.Cells {
			row = append(row, c.Text)
		}
		id := string(r.Identity.Status)
		if r.Identity.Reason != "" {
			id += ": " + r.Identity.Reason
		}
		row = append(row, id)
		trs = append(trs, row)
	}
	sb.WriteString(MarkdownTable(header, trs))
	sb.WriteString("\n")
	rep := &Report{
		Header:   h,
		Rows:     rows,
		KeyNoun:  "cell",
		Families: o.Families,
		Notes:    notes,
		Extra:    sb.String(),
		Columns: func(string) ([]string, func(int, string) family.Cell) {
			return nil, nil
		},
	}
	return rep.Render()
}
