package skillshift

import "github.com/crlbatch/crlbatch/protocol"

// Metric names, as the seed and the outputs spell them.
const (
	SR  = "SR"
	AS  = "AS"
	ASC = "ASC"
	SFR = "SFR"
)

// Metrics lists the four metrics in the order of the seed's table.
var Metrics = []string{SR, AS, ASC, SFR}

// ExpectedSites are the websites of the expected grid, in the order of the
// seed's Table 1.
var ExpectedSites = []string{"gitlab", "magento", "wordpress"}

// ExpectedConditions are the conditions of the expected grid, in the order of
// the seed's Table 1.
var ExpectedConditions = []string{"src", "src-perc", "src-exec", "tgt", "tgt-perc", "tgt-exec"}

// MinStableInvocations is the number of skill invocations an SFR value must
// rest on not to be flagged unstable.
const MinStableInvocations = 30

// Scope is the kind of a marginal, as the `scope` column of table.parquet
// spells it.
type Scope string

// Scopes of a marginal.
const (
	ScopeWebsite   Scope = "website"
	ScopeCondition Scope = "condition"
	ScopeOverall   Scope = "overall"
)

// OverallKey is the key of the O/A marginal.
const OverallKey = "overall"

// Sections of a reason key and of an entry: "SR.websites.gitlab",
// "SR.conditions.src", "SR.overall", "SR.cells.gitlab.src".
const (
	sectionWebsites   = "websites"
	sectionConditions = "conditions"
	sectionOverall    = "overall"
	sectionCells      = "cells"
)

// Reasons an absent value carries. They are part of the output contract
// (Parquet reasons column, Markdown notes): change them only deliberately.
const (
	ReasonNoTask           = "no task in this cell"
	ReasonNoSkillCalls     = "no task carries skill_calls: the method records no skill invocations"
	ReasonCellNoSkillCalls = "no task of this cell carries skill_calls"
	ReasonNoInvocation     = "Σ skill_calls is 0: SFR is a ratio over zero invocations"
	ReasonFailuresMissing  = "a task with skill calls does not carry skill_failures"
	ReasonNoSiteTask       = "no task on this website"
	ReasonNoConditionTask  = "no task under this condition"
	ReasonNoCellValue      = "no cell has a value"
	ReasonSFROnly          = "invocations are counted for SFR only"
)

// HigherIsBetter says which way is better for a metric: true for SR, false
// for AS (fewer steps per task) and SFR, and (ok=false) neither for ASC, which
// describes how much a method leans on its skills.
func HigherIsBetter(metric string) (better, ok bool) {
	switch metric {
	case SR:
		return true, true
	case AS, SFR:
		return false, true
	}
	return false, false
}

// IsPercent reports whether a metric is a percentage (SR, SFR), bounded by
// 0 and 100.
func IsPercent(metric string) bool { return metric == SR || metric == SFR }

// Title returns the display name of a site, a condition or "overall" as the
// seed's Table 1 prints it; an unknown name is returned unchanged.
func Title(key string) string {
	switch key {
	case "gitlab":
		return "GitLab"
	case "magento":
		return "Magento"
	case "wordpress":
		return "WordPress"
	case "src":
		return "Src"
	case "src-perc":
		return "Src-Perc"
	case "src-exec":
		return "Src-Exec"
	case "tgt":
		return "Tgt"
	case "tgt-perc":
		return "Tgt-Perc"
	case "tgt-exec":
		return "Tgt-Exec"
	case OverallKey:
		return "O/A"
	}
	return key
}

// CellKey names a cell.
type CellKey struct {
	Site, Condition string
}

// String renders the key as "site/condition".
func (k CellKey) String() string { return k.Site + "/" + k.Condition }

// Cell is one (site, condition) cell of a run.
type Cell struct {
	Site, Condition string
	// Tasks and Successes count the cell's tasks; Tasks is 0 for a cell of
	// the grid without any task (every metric is then absent).
	Tasks, Successes int
	SR, AS, ASC, SFR protocol.Value
	// Invocations is Σ skill_calls over the cell's tasks that carry it
	// (the `skill_calls` column of cells.parquet); absent when none does.
	Invocations protocol.Value
	// SFRUnstable is true when SFR is present and rests on fewer than
	// MinStableInvocations invocations.
	SFRUnstable bool
}

// Key returns the cell's key.
func (c *Cell) Key() CellKey { return CellKey{c.Site, c.Condition} }

// Metric returns the cell's value of a metric (one of Metrics).
func (c *Cell) Metric(name string) (protocol.Value, bool) {
	switch name {
	case SR:
		return c.SR, true
	case AS:
		return c.AS, true
	case ASC:
		return c.ASC, true
	case SFR:
		return c.SFR, true
	}
	return protocol.Value{}, false
}

// Marginal is one of a metric's ten (or, on another grid, more) published
// numbers: a website marginal, a condition marginal, or O/A.
type Marginal struct {
	Scope Scope
	// Key is the site, the condition, or OverallKey.
	Key   string
	Value protocol.Value
	// Cells counts the present cell values averaged.
	Cells int
	// Invocations is, for SFR, the sum of the invocation counts of the cells
	// averaged; absent for the other metrics (ReasonSFROnly) and where the
	// count is unknown.
	Invocations protocol.Value
	// Unstable is true for a present SFR value resting on fewer than
	// MinStableInvocations invocations.
	Unstable bool
}

// ReasonKey returns the key under which the marginal's reason is filed:
// "SFR.websites.wordpress", "SR.conditions.src", "AS.overall".
func (m *Marginal) ReasonKey(metric string) string {
	switch m.Scope {
	case ScopeWebsite:
		return metric + "." + sectionWebsites + "." + m.Key
	case ScopeCondition:
		return metric + "." + sectionConditions + "." + m.Key
	}
	return metric + "." + sectionOverall
}

// CellReasonKey returns the key under which a grid cell's reason is filed:
// "SFR.cells.gitlab.src".
func CellReasonKey(metric string, k CellKey) string {
	return metric + "." + sectionCells + "." + k.Site + "." + k.Condition
}

// MetricResult holds one metric's marginals and its identity check.
type MetricResult struct {
	Metric string
	// Reason is non-empty when the metric is absent for the whole run (ASC
	// and SFR when no task carries skill_calls); every value below is then
	// absent with this reason.
	Reason string
	// Websites holds one marginal per site of the run's grid, in grid order,
	// followed by one absent marginal per expected site with no task.
	Websites []Marginal
	// Conditions likewise for conditions.
	Conditions []Marginal
	Overall    Marginal
	Identity   Identity
}

// Marginals returns every marginal in table order: websites, conditions,
// O/A (the rows of table.parquet for this metric).
func (m *MetricResult) Marginals() []Marginal {
	out := make([]Marginal, 0, len(m.Websites)+len(m.Conditions)+1)
	out = append(out, m.Websites...)
	out = append(out, m.Conditions...)
	return append(out, m.Overall)
}

// Marginal returns the marginal of a scope and key, if the metric has it.
func (m *MetricResult) Marginal(scope Scope, key string) (Marginal, bool) {
	var list []Marginal
	switch scope {
	case ScopeWebsite:
		list = m.Websites
	case ScopeCondition:
		list = m.Conditions
	case ScopeOverall:
		if key == OverallKey {
			return m.Overall, true
		}
		return Marginal{}, false
	}
	for _, x := range list {
		if x.Key == key {
			return x, true
		}
	}
	return Marginal{}, false
}

// RunResult holds every number of one run.
type RunResult struct {
	Key  string
	Meta map[string]string
	// NTasks counts the run's tasks.
	NTasks int
	// Sites and Conditions are the run's grid, each in order of first
	// appearance in the run's task order.
	Sites      []string
	Conditions []string
	// Cells holds every cell of the grid, site-major (for each site in
	// order, each condition in order), including cells without a task.
	Cells []Cell
	// MissingCells lists the grid cells without a task, in grid order; the
	// grid is complete when it is empty.
	MissingCells []CellKey
	// MissingExpected lists the cells of the expected grid without a task,
	// in the expected order (whether or not their site and condition are in
	// the run's grid).
	MissingExpected []CellKey
	// Metrics holds SR, AS, ASC, SFR in that order.
	Metrics []MetricResult
	// Reasons keys every absent value: "ASC" for a metric absent as a whole,
	// "SFR.websites.wordpress" for a marginal, "SFR.cells.gitlab.src" for a
	// grid cell.
	Reasons map[string]string
	// Notes are findings worth a reader's eye (missing cells, a task counted
	// twice).
	Notes []string
}

// Complete reports whether every cell of the run's grid has a task.
func (r *RunResult) Complete() bool { return len(r.MissingCells) == 0 }

// Metric returns the named metric's result, or nil.
func (r *RunResult) Metric(name string) *MetricResult {
	for i := range r.Metrics {
		if r.Metrics[i].Metric == name {
			return &r.Metrics[i]
		}
	}
	return nil
}

// Cell returns the cell of a site and condition, or nil when it is not in
// the grid.
func (r *RunResult) Cell(site, condition string) *Cell {
	for i := range r.Cells {
		if r.Cells[i].Site == site && r.Cells[i].Condition == condition {
			return &r.Cells[i]
		}
	}
	return nil
}

// SeedValue is the run's value of a metric for the family statistics: its
// O/A.
func (r *RunResult) SeedValue(metric string) protocol.Value {
	if m := r.Metric(metric); m != nil {
		return m.Overall.Value
	}
	return protocol.None("unknown metric " + metric)
}
