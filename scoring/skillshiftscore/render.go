package skillshiftscore

import (
	"strings"

	"github.com/crlbatch/crlbatch/protocol/family"
	"github.com/crlbatch/crlbatch/protocol/skillshift"
	"github.com/crlbatch/crlbatch/scoring"
	"github.com/crlbatch/crlbatch/scoring/records"
	"github.com/crlbatch/crlbatch/writers"
)

// Params is skillshift's crlbatch.params: the protocol, then the engine's
// parameters.
type Params struct {
	Protocol string `json:"protocol"`
	scoring.Common
}

// output is what the tables are built from, runs in canonical order.
type output struct {
	res     *scoring.Results
	results []*skillshift.RunResult
}

// Render builds cells.parquet, table.parquet, families.parquet and the
// report.
func (j *job) Render(res *scoring.Results) (*scoring.Rendered, error) {
	results, err := records.Results[*skillshift.RunResult](records.Scored(res))
	if err != nil {
		return nil, err
	}
	o := &output{res: res, results: results}
	params := Params{Protocol: Name, Common: res.Common}
	return records.Render(Name, params, res, o.report,
		records.Table{Name: "cells.parquet", Build: o.cellsTable},
		records.Table{Name: "table.parquet", Build: o.table},
		records.Families(res))
}

// cellsTable is cells.parquet: one row per run × site × condition.
func (o *output) cellsTable() (*writers.Table, error) {
	t := writers.NewTable()
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
	for i := range o.res.Runs {
		r := &o.res.Runs[i]
		res := o.results[i]
		for ci := range res.Cells {
			c := &res.Cells[ci]
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

// table is table.parquet: one row per run × metric × marginal (the ten
// numbers of each metric), with the reason of a null value.
func (o *output) table() (*writers.Table, error) {
	t := writers.NewTable()
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
	for i := range o.res.Runs {
		r := &o.res.Runs[i]
		res := o.results[i]
		for mi := range res.Metrics {
			m := &res.Metrics[mi]
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

// report renders report.md: the Table-1-shaped table of every method, the
// identity checks, the family comparison and the notes.
func (o *output) report(h writers.ReportHeader) string {
	var rows []writers.ReportRow
	for _, m := range skillshift.Metrics {
		rows = append(rows, writers.ReportRow{Title: m + " (O/A)", Metric: m})
	}
	var in []skillshift.TableInput
	for i := range o.res.Runs {
		in = append(in, skillshift.TableInput{Name: o.res.Runs[i].Key, Result: o.results[i]})
	}
	tab := skillshift.BuildTable(in, nil)
	extra := func(footnote func(string) string) string {
		var sb strings.Builder
		sb.WriteString("## Results per method\n\nSR and SFR in percent, AS and ASC in counts; site and condition columns are unweighted means of their cells, O/A the unweighted mean of all cells (never task-weighted). `⚠︎` marks an SFR resting on fewer than 30 skill invocations.\n\n")
		header := []string{"Method", "Metric"}
		for _, c := range tab.Columns {
			header = append(header, writers.Text(c.Title))
		}
		header = append(header, "identity check")
		var trs [][]string
		for _, r := range tab.Rows {
			row := []string{writers.Text(r.Name), writers.Text(r.Metric)}
			for _, c := range r.Cells {
				if c.Value.OK {
					row = append(row, c.Text)
				} else {
					row = append(row, writers.Absent+footnote(c.Value.Reason))
				}
			}
			id := string(r.Identity.Status)
			if r.Identity.Reason != "" {
				id += ": " + r.Identity.Reason
			}
			row = append(row, writers.Text(id))
			trs = append(trs, row)
		}
		sb.WriteString(writers.MarkdownTable(header, trs))
		sb.WriteString("\n")
		return sb.String()
	}
	rep := &writers.Report{
		Header:      h,
		Rows:        rows,
		KeyNoun:     "cell",
		Families:    o.res.Families,
		SeedReasons: o.res.SeedReasons,
		Notes:       o.res.Notes,
		ExtraNotes:  extra,
		Columns: func(string) ([]string, func(int, string) family.Cell) {
			return nil, nil
		},
	}
	return rep.Render()
}
