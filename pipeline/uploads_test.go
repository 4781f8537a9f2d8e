package pipeline

import "testing"

// TestUploadAttempt: the keys of a nightly OUTPUT whose incomplete uploads
// belong to an attempt (and so may be aborted with its claim's proof), and
// those that belong to none (left, as files are).
func TestUploadAttempt(t *testing.T) {
	const id = "20261201T020000Z-0412873fa9c1"
	for rel, want := range map[string]string{
		"results/" + id + "/runs.parquet": id,
		"results/" + id + "/figure-x.png": id,
		"results/" + id + "/sub/any":      id,
		historyKey("families", id):        id,
		historyKey("run_summary", id):     id,
		"results/" + id + "/":             "",
		"results/" + id:                   "",
		"results/2026-12-01/runs.parquet": "",
		"results/notes.txt":               "",
		"history/families/night=2026-12-02/attempt=" + id + "/part.parquet":  "", // not its night
		"history/families/night=2026-12-01/attempt=" + id + "/other.parquet": "",
		"history//night=2026-12-01/attempt=" + id + "/part.parquet":          "",
		"history/families/night=2026-12-01/" + id + "/part.parquet":          "",
		"runs.parquet":                          "",
		"LATEST":                                "",
		".crlbatch/attempts/" + id + ".json":    "",
		"other/results/" + id + "/runs.parquet": "",
	} {
		if got := uploadAttempt(rel); got != want {
			t.Errorf("uploadAttempt(%q) = %q, want %q", rel, got, want)
		}
	}
}

// TestResultName: the names at a one-off OUTPUT's top whose incomplete
// uploads a one-off job aborts (its own files, of any registered
// protocol), and those it leaves (a user's own Parquet file among them).
func TestResultName(t *testing.T) {
	for name, want := range map[string]bool{
		"runs.parquet":          true,
		"curves.parquet":        true,
		"families.parquet":      true,
		"intervals.parquet":     true,
		"run_summary.parquet":   true,
		"matrix.parquet":        true, // contilab
		"benchmarks.parquet":    true,
		"cells.parquet":         true, // skillshift
		"table.parquet":         true,
		"mine.parquet":          false,
		"big.parquet":           false,
		"figure-learning.svg":   true,
		"figure-learning.png":   true,
		"report.md":             true,
		"report.html":           true,
		ManifestName:            true,
		LatestName:              false,
		"notes.txt":             false,
		"big.bin":               false,
		"sub/runs.parquet":      false,
		".crlbatch/job.json":    false,
		"figure-x.jpg":          false,
		"report.txt":            false,
		"runs.parquet.1a2b.tmp": false,
	} {
		if got := isResultName(name); got != want {
			t.Errorf("isResultName(%q) = %v, want %v", name, got, want)
		}
	}
}
