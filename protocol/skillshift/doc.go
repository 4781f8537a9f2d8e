// Package skillshift scores the skillshift protocol of web-agent runs
// (PROTOCOLS.md section 5, seed 002): one record per task, four metrics per
// (site, condition) cell, and the ten numbers per metric that a Table-1 entry
// publishes (three website marginals, six condition marginals, O/A).
//
// # Cells
//
// A cell is a (site, condition) pair. The grid of a run is the sites present
// in its tasks × the conditions present in its tasks, each in order of first
// appearance in the run's task order. The expected grid (ExpectedSites ×
// ExpectedConditions, 3 × 6) is what a paper publishes; a run is scored on
// its own grid, whatever it is. A grid cell with no task is reported in
// RunResult.MissingCells (and as a Cell with Tasks 0 whose every metric is
// absent); an expected cell with no task is reported in
// RunResult.MissingExpected; nothing is ever filled in.
//
// Per cell:
//
//	SR   (100·successes)/tasks
//	AS   (Σ steps)/tasks, over every task, failures included
//	ASC  (Σ skill_calls)/k over the k tasks that carry skill_calls
//	SFR  (100·Σ skill_failures)/(Σ skill_calls) over the tasks that carry skill_calls
//
// ASC and SFR are absent for the whole run (keyed by the metric, "ASC",
// "SFR") when no task carries skill_calls: the method records no skill
// invocations at all. SFR is absent in a cell whose Σ skill_calls is 0,
// never 0. An SFR resting on fewer than MinStableInvocations invocations is
// flagged unstable.
//
// # Marginals
//
// Every marginal is macro: the unweighted mean of the present values of its
// cells, never weighted by task counts. A website marginal averages that
// site's cells in condition order, a condition marginal that condition's
// cells in site order, O/A every cell in grid order (site-major: for each
// site in order, each condition in order). An SFR marginal's invocation count
// is the sum of the invocation counts of the cells it averages.
//
// # Arithmetic
//
// float64 throughout, every sum accumulated sequentially: within a cell in
// task order; across cells in the orders above; the means of the identity
// check over the website marginals in site order and over the condition
// marginals in condition order. A mean is (sequential sum)/count.
//
// # The identity check
//
// Because both kinds of marginal average the same cells, mean(websites) =
// mean(conditions) = O/A. Each of the three means is rounded half-up (ties
// away from zero) to two decimals in decimal arithmetic, on the shortest
// decimal representation of the float64 (strconv 'g', -1: so 2.675, whose
// float64 is 2.67499999…, rounds to 2.68), and compared as integers of
// hundredths; two that differ by more than one hundredth fail. Score runs it
// when the grid is complete and the metric has no absent cell, and otherwise
// reports it skipped with the reason; a failure from Score is an error.
// CheckEntry runs it on ten transcribed numbers, comparing the means that can
// be formed when some numbers are null.
//
// # Entries
//
// ParseEntry reads a transcribed entry (INTERFACE.md, `crlbatch check-entry`):
// per metric its ten numbers under "websites", "conditions" and "overall",
// keyed by the expected names, with nulls allowed only with a reason in
// "reasons"; a bare {"websites", "conditions", "overall"} object is one
// metric named by the caller. Repeated keys, unknown keys, a reason for a
// number that is present, a negative number or a percentage above 100 are
// errors. Entry.Check runs the identity on whichever of the three means can
// be formed (a mean with a null, or whose sum leaves float64, cannot), and
// EntryResult renders one line per metric. RunResult.Entry
// turns a scored run into the same object, so a computed run and a paper
// are verified alike.
//
// # Table
//
// BuildTable lays out several methods in the shape of the seed's Table 1
// (websites, environments, O/A as columns; one row per method and metric),
// with each number as the Markdown prints it (two decimals rounded as the
// identity check rounds them, "--" when absent, "0.32 ⚠︎" when unstable).
//
// # Absence
//
// Every absent number is a protocol.Value with a reason, and RunResult.Reasons
// keys every one of them by metric ("ASC"), by marginal ("SFR.websites.wordpress",
// "SR.conditions.tgt", "AS.overall") or by grid cell ("SFR.cells.gitlab.src").
//
// The package is pure: no I/O, goroutines, clocks or contexts.
package skillshift
