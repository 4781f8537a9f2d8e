package main

import (
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/crlbatch/crlbatch/readers"
	"github.com/crlbatch/crlbatch/writers"
)

// readRows returns the decompressed bytes of a trace object.
func readRows(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r, _, err := readers.Open(f)
	if err != nil {
		return nil, err
	}
	return io.ReadAll(r)
}

// Issue 12: every number report.md shows equals the families.parquet value
// it stands for (to the report's four decimals), every per-label or
// per-task cell the mean and sample standard deviation of runs.parquet's
// values computed here, every `--` has a footnote that starts with the
// reason the Parquet file gives, and the summary
// names exactly the metrics that the Parquet columns say a family beats or
// trails the baseline on. The report is parsed as a reader would, the
// Parquet file read back from the same job.

var reportNumberCases = []struct {
	name string
	args []string
}{
	{"sweep", []string{"../../configs/example-sweep"}},
	{"sweep-6seeds", []string{"../../configs/example-sweep-6seeds"}},
	{"sweep-anchor-ceiling", []string{"../../configs/example-sweep", "--anchor", "ceiling", "--bound", "1"}},
	{"safecrl", []string{"../../configs/examples/safecrl", "--protocol", "safecrl"}},
	{"contilab", []string{"../../configs/examples/contilab", "--protocol", "contilab"}},
	{"skillshift", []string{"../../configs/examples/skillshift", "--protocol", "skillshift"}},
}

// mdRow splits a table line into its trimmed cells (the examples' names
// hold no pipe).
func mdRow(l string) []string {
	parts := strings.Split(strings.Trim(strings.TrimSpace(l), "|"), "|")
	for i := range parts {
		parts[i] = strings.TrimSpace(parts[i])
	}
	return parts
}

var (
	footRef  = regexp.MustCompile(`^--\[\^([0-9]+)\]$`)
	footDef  = regexp.MustCompile(`^\[\^([0-9]+)\]: (.*)$`)
	meanStdN = regexp.MustCompile(`^(\S+) ± (\S+) \(([0-9]+)\)$`)
	meanStd  = regexp.MustCompile(`^(\S+) ± (\S+)$`)
	interval = regexp.MustCompile(`^\[(\S+), (\S+)\]$`)
)

type reportCheck struct {
	t *testing.T
	// runs are runs.parquet's rows when it has one row per run × key
	// (keyCol names the key: regime_id, task).
	runs     []map[string]any
	keyCol   string
	rows     map[[2]string]map[string]any // (family, metric) → families.parquet row
	notes    map[string]string            // footnote number → text
	titles   map[string]string            // report name → metric
	compared int
}

// num checks that cell shows column col of row: the value to four
// decimals, or `--` with a footnote starting with the row's reason.
func (c *reportCheck) num(where, cell string, row map[string]any, col string) {
	c.t.Helper()
	c.compared++
	v := row[col]
	if m := footRef.FindStringSubmatch(cell); m != nil {
		if v != nil {
			c.t.Errorf("%s: %s is %q, families.parquet has %v", where, col, cell, v)
			return
		}
		reason := reasonOf(row, col)
		if text := c.notes[m[1]]; reason == "" || !strings.HasPrefix(text, reason) {
			c.t.Errorf("%s: %s's footnote %q does not give the Parquet reason %q", where, col, text, reason)
		}
		return
	}
	f, ok := v.(float64)
	if !ok {
		c.t.Errorf("%s: %s is %q, families.parquet has %v", where, col, cell, v)
		return
	}
	got, err := strconv.ParseFloat(cell, 64)
	if err != nil || math.Abs(got-f) > 0.00005+1e-9 {
		c.t.Errorf("%s: %s is %q, families.parquet has %v", where, col, cell, f)
	}
}

func reasonOf(row map[string]any, col string) string {
	kvs, _ := row["reasons"].([]writers.KV)
	for _, kv := range kvs {
		if kv.Key == col {
			return kv.Value
		}
	}
	return ""
}

func TestReportNumbersAreParquet(t *testing.T) {
	t.Parallel()
	for _, tc := range reportNumberCases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			out := filepath.Join(t.TempDir(), "out")
			args := append(append([]string{"score"}, tc.args...), "--out", out, "--quiet")
			if code, _, stderr := crl(t, args...); code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			rb := readParquet(t, filepath.Join(out, "families.parquet"))
			c := &reportCheck{t: t, rows: map[[2]string]map[string]any{}, notes: map[string]string{}, titles: map[string]string{}}
			var families []string
			for _, r := range rb.Rows {
				fam := r["family"].(string)
				c.rows[[2]string{fam, r["metric"].(string)}] = r
				if !slices.Contains(families, fam) {
					families = append(families, fam)
				}
			}
			report := readReport(t, out)
			lines := strings.Split(report, "\n")
			// Footnotes and the names of the metrics first.
			section := ""
			for _, l := range lines {
				if m := footDef.FindStringSubmatch(l); m != nil {
					c.notes[m[1]] = m[2]
				}
				if strings.HasPrefix(l, "## ") {
					section = l
				}
				if section == "## Metrics" && strings.HasPrefix(l, "| ") && !strings.HasPrefix(l, "| Metric") && !strings.HasPrefix(l, "| :") {
					cells := mdRow(l)
					c.titles[cells[0]] = strings.Trim(cells[1], "`")
				}
			}
			if len(c.titles) != len(rb.Rows)/len(families) {
				t.Fatalf("the Metrics table names %d metrics, families.parquet has %d", len(c.titles), len(rb.Rows)/len(families))
			}
			if _, err := os.Stat(filepath.Join(out, "runs.parquet")); err == nil {
				runs := readParquet(t, filepath.Join(out, "runs.parquet"))
				for _, col := range []string{"regime_id", "task"} {
					if slices.Contains(runs.Columns, col) {
						c.runs, c.keyCol = runs.Rows, col
						break
					}
				}
			}
			baseline, _ := rb.Rows[0]["baseline"].(string)
			c.checkTables(lines, families)
			c.checkSummary(report, families, baseline)
			if c.compared < 50 {
				t.Errorf("only %d report cells compared", c.compared)
			}
			t.Logf("%d report cells compared with families.parquet and runs.parquet", c.compared)
		})
	}
}

// familyOf reads "`ewc`" or "`ppo` (baseline)".
func familyOf(s string) string {
	return strings.Trim(strings.TrimSuffix(s, " (baseline)"), "`")
}

func (c *reportCheck) checkTables(lines []string, families []string) {
	t := c.t
	fam, table, header := "", "", []string(nil)
	headline, tested := map[string]bool{}, map[string]bool{}
	for _, l := range lines {
		switch {
		case strings.HasPrefix(l, "## Family "):
			fam, table = familyOf(strings.TrimPrefix(l, "## Family ")), "family"
			continue
		case strings.HasPrefix(l, "### ") && strings.Contains(l, " against "):
			fam, table = familyOf(strings.SplitN(strings.TrimPrefix(l, "### "), " against ", 2)[0]), "tests"
			tested[fam] = true
			continue
		case strings.HasPrefix(l, "## Comparison of families"):
			fam, table = "", "comparison"
			continue
		case strings.HasPrefix(l, "## "):
			fam, table = "", ""
			continue
		case strings.HasPrefix(l, "Relative adaptation advantage") && table == "tests":
			v := strings.TrimSuffix(l[strings.LastIndex(l, ": ")+2:], ".")
			c.num(fam+" advantage", v, c.rows[[2]string{fam, "adaptation_speed"}], "relative_adaptation_advantage")
			continue
		}
		if !strings.HasPrefix(l, "| ") {
			header = nil
			continue
		}
		cells := mdRow(l)
		if header == nil {
			header = cells
			continue
		}
		if strings.HasPrefix(cells[0], ":") {
			continue
		}
		metric, ok := c.titles[cells[0]]
		where := fam + "/" + cells[0]
		switch {
		case table == "family" && header[1] == "better" && header[3] == "mean":
			if !ok {
				t.Fatalf("%s: the headline table names an unknown metric", where)
			}
			row := c.rows[[2]string{fam, metric}]
			headline[fam] = true
			c.better(where, cells[1], row)
			if cells[2] != strconv.FormatInt(row["n"].(int64), 10) {
				t.Errorf("%s: n %s, families.parquet %v", where, cells[2], row["n"])
			}
			c.num(where, cells[3], row, "mean")
			c.pair(where, cells[4], row, "ci_low", "ci_high")
			c.num(where, cells[5], row, "iqm")
			c.pair(where, cells[6], row, "iqm_ci_low", "iqm_ci_high")
		case table == "family" && header[len(header)-1] == "all":
			// The `all` column holds the family's seed values.
			if !ok {
				continue // a row the protocol shows that families.parquet lacks
			}
			row := c.rows[[2]string{fam, metric}]
			c.meanStd(where, cells[len(cells)-1], row, false)
			// The key columns: the mean and sample standard deviation over
			// the family's runs of runs.parquet's value for that key.
			for k := 1; k < len(header)-1; k++ {
				c.keyCell(where+"/"+header[k], cells[k], fam, header[k], metric)
			}
		case table == "comparison":
			if !ok {
				t.Fatalf("%s: the comparison names an unknown metric", cells[0])
			}
			off := 1
			if header[1] == "better" {
				off = 2
			}
			for i, name := range header[off:] {
				row := c.rows[[2]string{familyOf(name), metric}]
				if row == nil {
					t.Fatalf("comparison column %q is no family", name)
				}
				if off == 2 {
					c.better(where, cells[1], row)
					if row["higher_is_better"] == nil {
						t.Errorf("%s: a metric without a direction in the comparison", where)
					}
				} else if row["higher_is_better"] != nil {
					t.Errorf("%s: a metric with a direction among the counts", where)
				}
				c.meanStd(familyOf(name)+"/"+cells[0], cells[off+i], row, true)
			}
		case table == "tests":
			row := c.rows[[2]string{fam, metric}]
			if row == nil || row["higher_is_better"] == nil {
				t.Fatalf("%s: a test row of no compared metric", where)
			}
			c.better(where, cells[1], row)
			if cells[2] != strconv.FormatInt(row["n_pairs"].(int64), 10) {
				t.Errorf("%s: pairs %s, families.parquet %v", where, cells[2], row["n_pairs"])
			}
			c.num(where, cells[3], row, "diff_mean")
			c.pair(where, cells[4], row, "diff_ci_low", "diff_ci_high")
			c.num(where, cells[5], row, "prob_improvement")
			c.pair(where, cells[6], row, "prob_improvement_ci_low", "prob_improvement_ci_high")
			test, warn := cells[7], false
			if i := strings.Index(test, "[^"); i >= 0 && row["test"] != nil {
				note := c.notes[strings.Trim(test[i:], "[^]")]
				warn = strings.HasPrefix(note, "power warning: ")
				test = test[:i]
			}
			if row["test"] == nil {
				c.num(where+" test", test+"", row, "p_value")
			} else if test != row["test"] {
				t.Errorf("%s: test %s, families.parquet %v", where, test, row["test"])
			}
			if pw, _ := row["power_warning"].(bool); pw != warn {
				t.Errorf("%s: power warning shown %v, families.parquet %v", where, warn, row["power_warning"])
			}
			c.num(where, cells[8], row, "p_value")
			c.num(where, cells[9], row, "p_value_adjusted")
			if len(header) > 10 {
				c.num(where, cells[10], row, "min_p")
			} else if row["min_p"] != nil {
				t.Errorf("%s: min_p %v not shown", where, row["min_p"])
			}
		}
	}
	baseline := c.rows[[2]string{families[0], c.titles[firstKey(c.titles)]}]["baseline"]
	for _, f := range families {
		if !headline[f] {
			t.Errorf("family %s has no headline table", f)
		}
		if want := f != baseline; tested[f] != want {
			t.Errorf("family %s tested against the baseline %v: %v", f, baseline, tested[f])
		}
	}
}

func firstKey(m map[string]string) string {
	for k := range m {
		return k
	}
	return ""
}

func (c *reportCheck) better(where, cell string, row map[string]any) {
	c.t.Helper()
	want := "·"
	if h, ok := row["higher_is_better"].(bool); ok {
		want = map[bool]string{true: "↑", false: "↓"}[h]
	}
	if cell != want {
		c.t.Errorf("%s: direction %q, families.parquet higher_is_better %v", where, cell, row["higher_is_better"])
	}
}

// pair checks "[lo, hi]" or a footnoted `--`.
func (c *reportCheck) pair(where, cell string, row map[string]any, lo, hi string) {
	c.t.Helper()
	if m := interval.FindStringSubmatch(cell); m != nil {
		c.num(where, m[1], row, lo)
		c.num(where, m[2], row, hi)
		return
	}
	if row[lo] == nil {
		if row["mean"] == nil {
			c.num(where, cell, row, "mean") // one footnote for the empty row
		} else {
			c.num(where, cell, row, lo)
		}
		return
	}
	c.num(where, cell, row, hi)
}

// meanStd checks "mean ± std" (with " (n)" when withN).
func (c *reportCheck) meanStd(where, cell string, row map[string]any, withN bool) {
	c.t.Helper()
	if withN {
		n := strconv.FormatInt(row["n"].(int64), 10)
		if !strings.HasSuffix(cell, " ("+n+")") {
			c.t.Errorf("%s: %q does not end with n = %s", where, cell, n)
			return
		}
		cell = strings.TrimSuffix(cell, " ("+n+")")
	}
	if m := meanStd.FindStringSubmatch(cell); m != nil {
		c.num(where, m[1], row, "mean")
		c.num(where, m[2], row, "std")
		return
	}
	c.num(where, cell, row, "mean")
}

// checkSummary computes from families.parquet which metrics each family
// beats or trails the baseline on (adjusted p ≤ 0.05, no power warning,
// the mean paired difference pointing the metric's way) and finds exactly
// them in the summary.
func (c *reportCheck) checkSummary(report string, families []string, baseline string) {
	t := c.t
	names := map[string]string{}
	for title, m := range c.titles {
		names[m] = title
	}
	start := strings.Index(report, "## Summary\n")
	end := strings.Index(report[start+1:], "\n## ") + start + 1
	summary := report[start:end]
	for _, fam := range families {
		if fam == baseline {
			if strings.Contains(summary, "- Family `"+fam+"`") {
				t.Errorf("the baseline %s has a summary line", fam)
			}
			continue
		}
		var line string
		for _, l := range strings.Split(summary, "\n") {
			if strings.HasPrefix(l, "- Family `"+fam+"` ") {
				line = l
			}
		}
		if line == "" {
			t.Errorf("no summary line for %s", fam)
			continue
		}
		var good, bad []string
		allWeak, anyTested := true, false
		for key, row := range c.rows {
			if key[0] != fam || row["higher_is_better"] == nil || row["p_value_adjusted"] == nil {
				continue
			}
			anyTested = true
			if row["power_warning"].(bool) {
				continue
			}
			allWeak = false
			d, p := row["diff_mean"].(float64), row["p_value_adjusted"].(float64)
			if p > 0.05 || d == 0 {
				continue
			}
			entry := names[key[1]] + " (p (BH) " + strconv.FormatFloat(p, 'f', 4, 64) + ")"
			if (d > 0) == row["higher_is_better"].(bool) {
				good = append(good, entry)
			} else {
				bad = append(bad, entry)
			}
		}
		if anyTested && allWeak {
			if !strings.Contains(line, "cannot be told apart from the baseline") || strings.Contains(line, "beats") {
				t.Errorf("%s: every test has a power warning, the summary says %q", fam, line)
			}
			continue
		}
		for _, e := range append(good, bad...) {
			if !strings.Contains(line, e) {
				t.Errorf("%s: the summary %q lacks %s", fam, line, e)
			}
		}
		if got := strings.Count(line, "(p (BH) "); got != len(good)+len(bad) {
			t.Errorf("%s: the summary names %d metrics, families.parquet supports %d: %q", fam, got, len(good)+len(bad), line)
		}
		if (len(good) > 0) != strings.Contains(line, "beats the baseline on") || (len(bad) > 0) != strings.Contains(line, "does worse than the baseline on") {
			t.Errorf("%s: summary %q, better %v, worse %v", fam, line, good, bad)
		}
	}
}

// keyCell checks a family table's cell for key: the mean ± sample standard
// deviation of runs.parquet's metric over the family's included runs with
// a value for that key, computed here; `--` with a footnote giving the
// runs' reasons when none has one, or saying a per-run metric (or a
// count) has no per-key value.
func (c *reportCheck) keyCell(where, cell, fam, key, metric string) {
	c.t.Helper()
	if c.runs == nil {
		c.t.Fatalf("%s: a key column without a run × key table", where)
	}
	var xs []float64
	var reasons []string
	perKey := false
	for _, r := range c.runs {
		// A metric column (float64, nullable); an int64 column is a
		// count, which the family tables show per run.
		if v, ok := r[metric]; ok {
			if _, count := v.(int64); !count {
				perKey = true
			}
		}
		if r["family"] != fam || r[c.keyCol] != key || r["excluded"] == true {
			continue
		}
		if v, ok := r[metric].(float64); ok {
			xs = append(xs, v)
		} else if why := reasonOf(r, metric); !slices.Contains(reasons, why) {
			reasons = append(reasons, why)
		}
	}
	c.compared++
	if m := footRef.FindStringSubmatch(cell); m != nil {
		note := c.notes[m[1]]
		switch {
		case !perKey:
			if !strings.HasPrefix(note, "a per-run metric has no per-") {
				c.t.Errorf("%s: a per-run metric's footnote %q", where, note)
			}
		case len(xs) > 0:
			c.t.Errorf("%s: %q, but %d run(s) have a value", where, cell, len(xs))
		case note != "no seed has a value: "+strings.Join(reasons, "; "):
			c.t.Errorf("%s: footnote %q, the runs' reasons %q", where, note, reasons)
		}
		return
	}
	m := meanStd.FindStringSubmatch(cell)
	if m == nil || len(xs) == 0 {
		c.t.Errorf("%s: %q, %d run values", where, cell, len(xs))
		return
	}
	mean := 0.0
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	got, err := strconv.ParseFloat(m[1], 64)
	if err != nil || math.Abs(got-mean) > 0.00005+1e-9 {
		c.t.Errorf("%s: mean %q, runs.parquet gives %v", where, m[1], mean)
	}
	if len(xs) < 2 {
		if !footRef.MatchString(m[2]) {
			c.t.Errorf("%s: std %q of one seed", where, m[2])
		}
		return
	}
	ss := 0.0
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	sd := math.Sqrt(ss / float64(len(xs)-1))
	if got, err := strconv.ParseFloat(m[2], 64); err != nil || math.Abs(got-sd) > 0.00005+1e-9 {
		c.t.Errorf("%s: std %q, runs.parquet gives %v", where, m[2], sd)
	}
}
