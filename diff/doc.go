// Package diff compares two published results (published.Result): per
// family × metric in both, the change of the mean and of the IQM and
// whether their bootstrap intervals overlap; the metrics of a family in
// both that one result has and the other has not; the families and runs
// added or removed; the runs whose family changed (moved); the parameters
// changed. It renders the comparison as Markdown (crlbatch diff), JSON and
// Parquet for machines, and as the short "Changes since the previous
// result" section of a nightly report (Section).
//
// Beside the changes, as information that Empty ignores, it compares the
// crlbatch builds that wrote the two results (Builds: version and commit,
// field by field where both name one; an unknown build is no change) and
// renders a change of build next to the metric changes.
//
// Two results of different protocols have their metrics not compared
// (MetricsNotCompared says so): a metric of one name differs between them.
//
// Only what changed is listed: a result compared with itself gives an
// empty Diff (Empty is true). A value changed when its presence changed or
// its float64 differs (results are deterministic, so any difference is
// real). Two intervals overlap when neither lies wholly above the other;
// the overlap is unknown (null) when either bound of either is null.
//
// The package is pure: no I/O but the io.Writer it is handed, no
// goroutine, no clock.
package diff
