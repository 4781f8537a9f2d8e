// Package family reduces scored runs to families (PROTOCOLS 1.6), for every
// protocol alike: a protocol hands in, per run, its family, its seed, whether
// it was excluded and its seed value of every metric, and gets back per
// family and metric the count, mean, spread, order statistics, IQM,
// bootstrap confidence intervals, the comparison with a baseline family
// (relative adaptation advantage, a paired test, the paired difference, the
// probability of improvement, Benjamini–Hochberg adjusted p values) and the
// notes a reader must see (truncated runs, one-seed families, excluded runs,
// runs with identical seed values, …).
//
// Every result depends only on the order of the runs handed in, which the
// caller makes canonical (families and runs in order of first appearance);
// bootstrap draws are seeded by the bootstrap seed combined with the family
// and metric names (stats.SeedFor), never by scheduling:
//
//	mean and IQM intervals   stats.SeedFor(seed, family, metric)
//	paired-difference CI     stats.SeedFor(seed, family, metric, "paired difference")
//	prob. of improvement CI  stats.SeedFor(seed, family, metric, "probability of improvement")
//
// The package is pure: no I/O, goroutines or clocks.
//
// testdata/reference.py is an independent Python reference of these
// statistics at their edges (one seed, equal seeds, emptied families, ties,
// Wilcoxon with zeros and ties, overflow), and of the skyfall seed values
// they reduce, written from PROTOCOLS alone; cmd/crlbatch's
// edgenumbers_test.go checks its cases (testdata/edge_cases.json) end to end
// through `crlbatch score`, and `make check-references` reruns it.
// testdata/records_reference.py does the same for these statistics over the
// record protocols' run values (safecrl, skillshift; contilab's are in
// protocol/contilab/testdata/stream_reference.py), checked end to end by
// recordfamilies_test.go.
package family
