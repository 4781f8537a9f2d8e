package diff

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/crlbatch/crlbatch/protocol"
	"github.com/crlbatch/crlbatch/published"
	"github.com/crlbatch/crlbatch/writers"
)

func row(fam, metric string, n int64, mean, lo, hi float64) published.Row {
	up := true
	return published.Row{Family: fam, Metric: metric, HigherIsBetter: &up, N: n,
		Mean: protocol.Some(mean), IQM: protocol.Some(mean), CILow: protocol.Some(lo), CIHigh: protocol.Some(hi),
		IQMCILow: protocol.Some(lo), IQMCIHigh: protocol.Some(hi)}
}

func fixture() (old, new *published.Result) {
	old = &published.Result{URL: "s3://b/results/1/", FinishedAt: "2026-11-30T02:00:00Z",
		Params:   map[string]any{"alpha": 0.9, "bound": map[string]any{"derivation": "analytic", "value": 1.0}, "gone": true},
		Families: []string{"ppo", "sac"},
		Rows:     []published.Row{row("ppo", "reward", 3, 0.5, 0.4, 0.6), row("sac", "reward", 3, 0.7, 0.6, 0.8), row("sac", "speed", 3, 2, 1, 3)},
		Runs:     []published.Run{{Key: "ppo-0", Family: "ppo"}, {Key: "sac-0", Family: "sac"}}}
	none := protocol.None("fewer than two seeds")
	one := row("sac", "speed", 1, 2.5, 0, 0)
	one.CILow, one.CIHigh, one.IQMCILow, one.IQMCIHigh = none, none, none, none
	new = &published.Result{URL: "s3://b/results/2/",
		Params:   map[string]any{"alpha": 0.9, "bound": map[string]any{"derivation": "analytic", "value": 2.0}, "new": "x"},
		Families: []string{"ppo", "ewc", "sac"},
		Rows:     []published.Row{row("ppo", "reward", 3, 0.5, 0.4, 0.6), row("ewc", "reward", 3, 0.1, 0, 0.2), row("sac", "reward", 3, 0.95, 0.85, 1.0), one},
		Runs:     []published.Run{{Key: "ppo-0", Family: "ppo"}, {Key: "ewc-0", Family: "ewc"}}}
	return old, new
}

func TestCompare(t *testing.T) {
	old, new := fixture()
	d := Compare(old, new)
	if len(d.Metrics) != 2 {
		t.Fatalf("metrics changed %+v, want sac/reward and sac/speed", d.Metrics)
	}
	r, s := d.Metrics[0], d.Metrics[1]
	if r.Family != "sac" || r.Metric != "reward" || math.Abs(*r.DeltaMean-0.25) > 1e-12 || math.Abs(*r.DeltaIQM-0.25) > 1e-12 {
		t.Errorf("sac/reward %+v: want Δ 0.25", r)
	}
	// [0.6, 0.8] and [0.85, 1.0] do not overlap.
	if r.MeanCIOverlap == nil || *r.MeanCIOverlap || r.IQMCIOverlap == nil || *r.IQMCIOverlap {
		t.Errorf("sac/reward overlap %v %v, want false", r.MeanCIOverlap, r.IQMCIOverlap)
	}
	if s.Metric != "speed" || s.OldN != 3 || s.NewN != 1 || math.Abs(*s.DeltaMean-0.5) > 1e-12 || s.MeanCIOverlap != nil {
		t.Errorf("sac/speed %+v: want n 3 → 1, Δ 0.5, overlap unknown", s)
	}
	if strings.Join(d.FamiliesAdded, ",") != "ewc" || len(d.FamiliesRemoved) != 0 {
		t.Errorf("families added %v removed %v", d.FamiliesAdded, d.FamiliesRemoved)
	}
	if len(d.RunsAdded) != 1 || d.RunsAdded[0].Key != "ewc-0" || len(d.RunsRemoved) != 1 || d.RunsRemoved[0].Key != "sac-0" {
		t.Errorf("runs added %v removed %v", d.RunsAdded, d.RunsRemoved)
	}
	var keys []string
	for _, p := range d.Params {
		keys = append(keys, p.Key)
	}
	if strings.Join(keys, ",") != "bound.value,gone,new" || string(*d.Params[0].Old) != "1" || string(*d.Params[0].New) != "2" ||
		d.Params[1].New != nil || d.Params[2].Old != nil {
		t.Errorf("params %v", keys)
	}
	if Compare(old, old).Empty() != true || Compare(new, new).Empty() != true || d.Empty() {
		t.Error("Empty wrong")
	}
}

func TestRender(t *testing.T) {
	old, new := fixture()
	d := Compare(old, new)
	md := d.Markdown()
	for _, want := range []string{"## Families added\n\n- `ewc`\n", "## Runs removed", "| `bound.value` |", "(absent)",
		"| `sac`  | `reward` |      ↑ | 3 → 3 |   0.7000 |   0.9500 | +0.2500 |      no |"} {
		if !strings.Contains(md, want) {
			t.Errorf("Markdown lacks %q:\n%s", want, md)
		}
	}
	sec := Section(old, new)
	if !strings.HasPrefix(sec, "## Changes since the previous result\n\nPrevious result: `s3://b/results/1/`, finished 2026-11-30T02:00:00Z.\n\n### Families added") {
		t.Errorf("Section:\n%s", sec)
	}
	if got := Section(old, old); !strings.HasSuffix(got, "No changes.\n") {
		t.Errorf("Section of a result and itself:\n%s", got)
	}
	var buf bytes.Buffer
	if err := d.JSON(&buf); err != nil {
		t.Fatal(err)
	}
	var back Diff
	if err := json.Unmarshal(buf.Bytes(), &back); err != nil || len(back.Metrics) != 2 || *back.Metrics[0].NewMean != 0.95 {
		t.Errorf("JSON round trip: %v %+v", err, back)
	}
	rb := parquetOf(t, d)
	if len(rb.Rows) != 2+1+1+1+3 {
		t.Fatalf("%d Parquet rows, want 8", len(rb.Rows))
	}
	if r := rb.Rows[1]; r["change"] != "metric_changed" || r["mean_ci_overlap"] != nil || r["old_n"] != 3.0 || r["new_n"] != 1.0 {
		t.Errorf("row 1 %v", r)
	}
}

// TestCompareAcrossProtocols: two results scored under different
// protocols share metric names (forgetting) defined differently in each;
// their metrics are not compared, and every format says why.
func TestCompareAcrossProtocols(t *testing.T) {
	old, new := fixture()
	old.Params["protocol"], new.Params["protocol"] = "skyfall", "contilab"
	d := Compare(old, new)
	if len(d.Metrics) != 0 {
		t.Errorf("metrics compared across protocols: %+v", d.Metrics)
	}
	if !strings.Contains(d.MetricsNotCompared, "skyfall") || !strings.Contains(d.MetricsNotCompared, "contilab") {
		t.Errorf("MetricsNotCompared %q does not name both protocols", d.MetricsNotCompared)
	}
	md := d.Markdown()
	if !strings.Contains(md, d.MetricsNotCompared) || strings.Contains(md, "Metrics changed") {
		t.Errorf("Markdown does not say why metrics are not compared:\n%s", md)
	}
	var buf bytes.Buffer
	if err := d.JSON(&buf); err != nil || !strings.Contains(buf.String(), `"metrics_not_compared": "`) {
		t.Errorf("JSON %v:\n%s", err, buf.String())
	}
	// The same protocol: compared as before, nothing said.
	new.Params["protocol"] = "skyfall"
	if d := Compare(old, new); len(d.Metrics) != 2 || d.MetricsNotCompared != "" {
		t.Errorf("same protocol: %d metrics, %q", len(d.Metrics), d.MetricsNotCompared)
	}
}

// TestRenderALastBitChange: a mean that changed in its last bit only is
// listed, and its Δ printed so that the row does not read as unchanged
// (four decimals, or the report's zero below 2^-52, printed 0.0000).
func TestRenderALastBitChange(t *testing.T) {
	old, _ := fixture()
	new := *old
	new.Rows = append([]published.Row(nil), old.Rows...)
	m := math.Nextafter(0.5, 1)
	new.Rows[0].Mean = protocol.Some(m)
	d := Compare(old, &new)
	if len(d.Metrics) != 1 || *d.Metrics[0].DeltaMean != m-0.5 {
		t.Fatalf("metrics %+v, want ppo/reward with Δ %g", d.Metrics, m-0.5)
	}
	md := d.Markdown()
	if want := "|   0.5000 |   0.5000 | +1.1102e-16 |"; !strings.Contains(md, want) {
		t.Errorf("the Markdown lacks %q:\n%s", want, md)
	}
	// An exact zero stays 0.0000 (the IQM did not move).
	if want := "| 0.0000 |"; !strings.Contains(md, want) {
		t.Errorf("the Markdown lacks %q:\n%s", want, md)
	}
}

// TestBuildChange: the crlbatch build that wrote each result (manifest's
// version and commit) is compared field by field where both results name
// it; a change is listed in Markdown, JSON, Parquet and the nightly
// section as information (Empty stays true), an unknown build is not a
// change and adds nothing to the section.
func TestBuildChange(t *testing.T) {
	yes, no := true, false
	for _, c := range []struct {
		name     string
		old, new published.Build
		changed  *bool
		md       string // in the Markdown (both builds are always named)
	}{
		{"same", published.Build{Version: "0.3.1", Commit: "4f1c2a9e"}, published.Build{Version: "0.3.1", Commit: "4f1c2a9e"}, &no,
			"- old: `s3://b/results/1/`, written by crlbatch `0.3.1` (commit `4f1c2a9e`)\n- new: `s3://b/results/1/`, written by crlbatch `0.3.1` (commit `4f1c2a9e`)\n"},
		{"version", published.Build{Version: "0.3.1", Commit: "4f1c2a9e"}, published.Build{Version: "0.4.0", Commit: "4f1c2a9e"}, &yes,
			"## crlbatch build changed\n\nThe results were written by different crlbatch builds: old crlbatch `0.3.1` (commit `4f1c2a9e`), new crlbatch `0.4.0` (commit `4f1c2a9e`)."},
		{"commit", published.Build{Version: "0.3.1", Commit: "4f1c2a9e"}, published.Build{Version: "0.3.1", Commit: "b07d5e11-dirty"}, &yes,
			"old crlbatch `0.3.1` (commit `4f1c2a9e`), new crlbatch `0.3.1` (commit `b07d5e11-dirty`)"},
		{"older layout", published.Build{}, published.Build{Version: "0.3.1", Commit: "4f1c2a9e"}, nil,
			"- old: `s3://b/results/1/`, written by an unknown crlbatch build\n"},
		{"commit unknown on one side", published.Build{Version: "0.3.1"}, published.Build{Version: "0.3.1", Commit: "4f1c2a9e"}, &no,
			"written by crlbatch `0.3.1` (commit unknown)\n"},
		{"version differs, a commit unknown", published.Build{Version: "0.3.1"}, published.Build{Version: "0.4.0", Commit: "4f1c2a9e"}, &yes,
			"old crlbatch `0.3.1` (commit unknown), new crlbatch `0.4.0` (commit `4f1c2a9e`)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			old, _ := fixture()
			new := *old
			old.Build, new.Build = c.old, c.new
			d := Compare(old, &new)
			if (d.Build.Changed == nil) != (c.changed == nil) || (c.changed != nil && *d.Build.Changed != *c.changed) {
				t.Errorf("Build.Changed %v, want %v", d.Build.Changed, c.changed)
			}
			if !d.Empty() {
				t.Errorf("a build change counts as a change of the results: %+v", d)
			}
			md := d.Markdown()
			if !strings.Contains(md, c.md) {
				t.Errorf("the Markdown lacks %q:\n%s", c.md, md)
			}
			listed := c.changed != nil && *c.changed
			wantEnd := map[bool]string{true: "No other changes.\n", false: "No changes.\n"}[listed]
			if !strings.HasSuffix(md, "\n\n"+wantEnd) || strings.Contains(md, "build changed") != listed {
				t.Errorf("Markdown (build change listed: %v):\n%s", listed, md)
			}
			sec := Section(old, &new)
			if strings.Contains(sec, "### crlbatch build changed\n") != listed || strings.Contains(sec, "- old:") {
				t.Errorf("Section (build change listed: %v):\n%s", listed, sec)
			}
			if !listed && sec != Section(old, old) {
				t.Errorf("an unchanged or unknown build changed the section:\n%s", sec)
			}
			var buf bytes.Buffer
			var back Diff
			if err := d.JSON(&buf); err != nil || json.Unmarshal(buf.Bytes(), &back) != nil {
				t.Fatalf("JSON %v: %s", err, buf.String())
			}
			if want := (Builds{Build{known(c.old.Version), known(c.old.Commit)}, Build{known(c.new.Version), known(c.new.Commit)}, c.changed}); !equalBuilds(back.Build, want) {
				t.Errorf("JSON build %s", buf.String())
			}
			rb := parquetOf(t, d)
			var rows []string
			for _, r := range rb.Rows {
				rows = append(rows, fmt.Sprintf("%v %v %v %v", r["change"], r["param"], r["old_value"], r["new_value"]))
			}
			var want []string
			if listed {
				want = []string{fmt.Sprintf("build_changed version %v %v", str(c.old.Version), str(c.new.Version)),
					fmt.Sprintf("build_changed commit %v %v", str(c.old.Commit), str(c.new.Commit))}
			}
			if strings.Join(rows, "\n") != strings.Join(want, "\n") {
				t.Errorf("Parquet rows:\n%s\nwant:\n%s", strings.Join(rows, "\n"), strings.Join(want, "\n"))
			}
		})
	}
}

// str is a Parquet string cell as ReadParquet gives it: nil for unknown.
func str(x string) any {
	if x == "" {
		return nil
	}
	return x
}

func equalBuilds(a, b Builds) bool {
	eq := func(x, y *string) bool { return (x == nil) == (y == nil) && (x == nil || *x == *y) }
	eqb := func(x, y *bool) bool { return (x == nil) == (y == nil) && (x == nil || *x == *y) }
	return eq(a.Old.Version, b.Old.Version) && eq(a.Old.Commit, b.Old.Commit) && eq(a.New.Version, b.New.Version) && eq(a.New.Commit, b.New.Commit) && eqb(a.Changed, b.Changed)
}

// parquetOf writes d's Table as Parquet and reads it back.
func parquetOf(t *testing.T, d *Diff) *writers.ReadBack {
	t.Helper()
	tab, err := d.Table()
	if err != nil {
		t.Fatal(err)
	}
	kv, _ := writers.NewMetadata("test", "skyfall", "1", map[string]string{})
	var buf bytes.Buffer
	if err := writers.WriteParquet(&buf, tab, kv); err != nil {
		t.Fatal(err)
	}
	rb, err := writers.ReadParquet(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	return rb
}
