package skillshift

import "github.com/crlbatch/crlbatch/protocol"

// UnstableMark follows an SFR value resting on fewer than
// MinStableInvocations invocations in the Markdown table ("0.32 ⚠︎").
const UnstableMark = "\u26a0\ufe0e"

// Column groups of the Table-1 layout.
const (
	GroupWebsite     = "Website"
	GroupEnvironment = "Environment"
	GroupOverall     = "O/A"
)

// TableColumn is one column of the Table-1 layout.
type TableColumn struct {
	// Group is GroupWebsite, GroupEnvironment or GroupOverall.
	Group string
	Scope Scope
	// Key is the site, the condition or OverallKey; Title its display name.
	Key   string
	Title string
}

// TableCell is one number of the table.
type TableCell struct {
	Value protocol.Value
	// Unstable and Invocations are those of the SFR marginal.
	Unstable    bool
	Invocations protocol.Value
	// Text is the value as the table prints it: two decimals rounded
	// half-up (Round2), "--" when absent, " ⚠︎" after an unstable value.
	Text string
}

// TableRow is one method's metric: the numbers in column order, and the
// identity check.
type TableRow struct {
	Name     string
	Metric   string
	Cells    []TableCell
	Identity Identity
}

// Table is the Table-1-shaped table of several methods: columns are the
// websites, the conditions (environments) and O/A; rows are metric-major
// (every method's SR, then every method's AS, …).
type Table struct {
	Columns []TableColumn
	Rows    []TableRow
}

// TableInput names one method's result.
type TableInput struct {
	Name   string
	Result *RunResult
}

// BuildTable lays out the metrics (nil means Metrics) of the methods given.
// The columns are the expected sites in the expected order, then any other
// site in order of first appearance over the inputs in order; likewise for
// conditions; then O/A. A method without a column's site or condition shows
// it as absent.
func BuildTable(in []TableInput, metrics []string) Table {
	if metrics == nil {
		metrics = Metrics
	}
	sites := append([]string(nil), ExpectedSites...)
	conds := append([]string(nil), ExpectedConditions...)
	for _, x := range in {
		for _, s := range x.Result.Sites {
			if indexOf(sites, s) < 0 {
				sites = append(sites, s)
			}
		}
		for _, c := range x.Result.Conditions {
			if indexOf(conds, c) < 0 {
				conds = append(conds, c)
			}
		}
	}
	var t Table
	for _, s := range sites {
		t.Columns = append(t.Columns, TableColumn{Group: GroupWebsite, Scope: ScopeWebsite, Key: s, Title: Title(s)})
	}
	for _, c := range conds {
		t.Columns = append(t.Columns, TableColumn{Group: GroupEnvironment, Scope: ScopeCondition, Key: c, Title: Title(c)})
	}
	t.Columns = append(t.Columns, TableColumn{Group: GroupOverall, Scope: ScopeOverall, Key: OverallKey, Title: Title(OverallKey)})
	for _, name := range metrics {
		for _, x := range in {
			row := TableRow{Name: x.Name, Metric: name}
			mr := x.Result.Metric(name)
			if mr != nil {
				row.Identity = mr.Identity
			} else {
				row.Identity = skipped("unknown metric " + name)
			}
			for _, col := range t.Columns {
				var m Marginal
				ok := false
				if mr != nil {
					m, ok = mr.Marginal(col.Scope, col.Key)
				}
				if !ok {
					reason := ReasonNoSiteTask
					if col.Scope == ScopeCondition {
						reason = ReasonNoConditionTask
					}
					if mr == nil {
						reason = "unknown metric " + name
					}
					m = Marginal{Value: protocol.None(reason), Invocations: protocol.None(reason)}
				}
				row.Cells = append(row.Cells, TableCell{Value: m.Value, Unstable: m.Unstable, Invocations: m.Invocations, Text: CellText(m.Value, m.Unstable)})
			}
			t.Rows = append(t.Rows, row)
		}
	}
	return t
}

// CellText renders a value as the Markdown table prints it: "35.29", "--",
// "0.32 ⚠︎".
func CellText(v protocol.Value, unstable bool) string {
	if !v.OK {
		return "--"
	}
	s := Round2(v.V)
	if unstable {
		s += " " + UnstableMark
	}
	return s
}
