package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// curveRun is one synthetic skyfall run: its family, rewards and labels.
type curveRun struct {
	family  string
	rewards []float64
	labels  []string
}

func writeCurveRuns(t *testing.T, runs []curveRun) string {
	t.Helper()
	dir := t.TempDir()
	for i, r := range runs {
		var b bytes.Buffer
		for s := range r.rewards {
			row := map[string]any{"run_id": fmt.Sprintf("%s-%d", r.family, i), "seed": i, "algorithm_id": r.family,
				"step": s, "reward": r.rewards[s], "regime_id": r.labels[s]}
			line, err := json.Marshal(row)
			if err != nil {
				t.Fatal(err)
			}
			b.Write(line)
			b.WriteByte('\n')
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("run%d.jsonl", i)), b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// tQuantile975 are Student-t 0.975 quantiles from a printed table, by
// degrees of freedom.
var tQuantile975 = map[int]float64{1: 12.706204736174705, 2: 4.302652729911275}

// TestCurvesParquet checks curves.parquet against the buckets computed
// here from the rewards written: the family's bucket width is the widest of
// its runs' (the smallest power of two that cuts a run into at most 2,000
// buckets), each run's mean reward per bucket and label, their mean across
// runs and 95 % Student-t band, and the extremes of every reward in the
// bucket (a spike survives). With --min-steps the runs it excludes are in
// no curve (the engine folds the others as they are scored, at
// --concurrency 8 in any order).
func TestCurvesParquet(t *testing.T) {
	t.Parallel()
	for _, minSteps := range []int{0, 2000} {
		t.Run(fmt.Sprintf("min-steps-%d", minSteps), func(t *testing.T) { testCurvesParquet(t, minSteps) })
	}
}

func testCurvesParquet(t *testing.T, minSteps int) {
	mk := func(fam string, n, shift int, phase float64, spikeAt int) curveRun {
		r := curveRun{family: fam}
		for i := range n {
			v := math.Sin(float64(i)/50+phase) * 0.3
			if i == spikeAt {
				v = 7.5
			}
			l := "calm"
			if i >= shift {
				l = "storm"
			}
			r.rewards, r.labels = append(r.rewards, v), append(r.labels, l)
		}
		return r
	}
	runs := []curveRun{
		mk("ppo", 2500, 1001, 0, 1234), // width 2
		mk("ppo", 4100, 1001, 1, -1),   // width 4: the family's
		mk("ppo", 1000, 999, 2, -1),    // width 1
		mk("sac", 300, 150, 0.5, -1),   // one run: no band
	}
	in := writeCurveRuns(t, runs)
	out := filepath.Join(t.TempDir(), "out")
	args := []string{"score", in, "--out", out, "--quiet", "--concurrency", "8"}
	if minSteps > 0 {
		args = append(args, "--min-steps", fmt.Sprint(minSteps))
	}
	if code, _, stderr := crl(t, args...); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	type key struct {
		fam, label string
		start      int64
	}
	type want struct {
		end          int64
		runs         int
		mean, lo, hi float64
		band         bool
		min, max     float64
	}
	expect := map[key]want{}
	var order []key
	for _, fam := range []string{"ppo", "sac"} {
		w := int64(1)
		for _, r := range runs {
			if r.family != fam || len(r.rewards) < minSteps {
				continue
			}
			rw := int64(1)
			for (int64(len(r.rewards))+rw-1)/rw > 2000 {
				rw *= 2
			}
			w = max(w, rw)
		}
		longest := 0
		for _, r := range runs {
			if r.family == fam && len(r.rewards) >= minSteps {
				longest = max(longest, len(r.rewards))
			}
		}
		for start := int64(0); start < int64(longest); start += w {
			for _, label := range []string{"calm", "storm"} {
				var means []float64
				lo, hi := math.Inf(1), math.Inf(-1)
				for _, r := range runs {
					if r.family != fam || len(r.rewards) < minSteps {
						continue
					}
					sum, n := 0.0, 0
					for i := start; i < start+w && i < int64(len(r.rewards)); i++ {
						if r.labels[i] == label {
							sum += r.rewards[i]
							n++
							lo, hi = math.Min(lo, r.rewards[i]), math.Max(hi, r.rewards[i])
						}
					}
					if n > 0 {
						means = append(means, sum/float64(n))
					}
				}
				if len(means) == 0 {
					continue
				}
				k := key{fam, label, start}
				m := 0.0
				for _, x := range means {
					m += x
				}
				m /= float64(len(means))
				e := want{end: min(start+w, int64(longest)), runs: len(means), mean: m, min: lo, max: hi}
				if len(means) > 1 {
					ss := 0.0
					for _, x := range means {
						ss += (x - m) * (x - m)
					}
					h := tQuantile975[len(means)-1] * math.Sqrt(ss/float64(len(means)-1)) / math.Sqrt(float64(len(means)))
					e.lo, e.hi, e.band = m-h, m+h, true
				}
				expect[k] = e
				order = append(order, k)
			}
		}
	}
	got := readParquet(t, filepath.Join(out, "curves.parquet"))
	if want := "family label step_start step_end runs mean band_low band_high min max reasons"; strings.Join(got.Columns, " ") != want {
		t.Fatalf("columns %v, want %s", got.Columns, want)
	}
	if len(got.Rows) != len(order) {
		t.Fatalf("%d rows, want %d", len(got.Rows), len(order))
	}
	near := func(a any, b float64) bool {
		f, ok := a.(float64)
		return ok && math.Abs(f-b) <= 1e-9*math.Max(1, math.Abs(b))
	}
	spike := false
	for i, row := range got.Rows {
		k := order[i]
		e := expect[k]
		if row["family"] != k.fam || row["label"] != k.label || row["step_start"] != k.start || row["step_end"] != e.end || row["runs"] != int64(e.runs) {
			t.Fatalf("row %d: %v, want %v %+v", i, row, k, e)
		}
		if !near(row["mean"], e.mean) || !near(row["min"], e.min) || !near(row["max"], e.max) {
			t.Errorf("row %d (%v): mean/min/max %v %v %v, want %v %v %v", i, k, row["mean"], row["min"], row["max"], e.mean, e.min, e.max)
		}
		if e.band {
			if !near(row["band_low"], e.lo) || !near(row["band_high"], e.hi) {
				t.Errorf("row %d (%v): band %v..%v, want %v..%v", i, k, row["band_low"], row["band_high"], e.lo, e.hi)
			}
		} else if row["band_low"] != nil || row["band_high"] != nil || !strings.Contains(fmt.Sprint(row["reasons"]), "fewer than two runs") {
			t.Errorf("row %d (%v): band %v..%v reasons %v, want null with its reason", i, k, row["band_low"], row["band_high"], row["reasons"])
		}
		if e.max == 7.5 {
			spike = true
		}
	}
	if !spike {
		t.Error("the spike of 7.5 is in no bucket's max")
	}
}

// TestFiguresSameAtAnyConcurrency: the figures, report.html and
// curves.parquet of every bundled example are byte-identical at
// --concurrency 1 and 8.
func TestFiguresSameAtAnyConcurrency(t *testing.T) {
	t.Parallel()
	for _, ex := range []struct{ name, in string }{
		{"skyfall", "../../configs/example-sweep"},
		{"safecrl", "../../configs/examples/safecrl"},
		{"contilab", "../../configs/examples/contilab"},
		{"skillshift", "../../configs/examples/skillshift"},
	} {
		t.Run(ex.name, func(t *testing.T) {
			t.Parallel()
			outs := map[string]map[string][]byte{}
			for _, conc := range []string{"1", "8"} {
				out := filepath.Join(t.TempDir(), "out")
				if code, _, stderr := crl(t, "score", ex.in, "--protocol", ex.name, "--out", out, "--quiet", "--concurrency", conc); code != 0 {
					t.Fatalf("exit %d: %s", code, stderr)
				}
				files := map[string][]byte{}
				for _, name := range listDir(t, out) {
					if strings.HasPrefix(name, "figure-") || name == "report.html" || name == "curves.parquet" {
						data, err := os.ReadFile(filepath.Join(out, name))
						if err != nil {
							t.Fatal(err)
						}
						files[name] = data
					}
				}
				outs[conc] = files
			}
			svgs := 0
			for name, data := range outs["1"] {
				if !bytes.Equal(data, outs["8"][name]) {
					t.Errorf("%s differs between --concurrency 1 and 8", name)
				}
				if strings.HasSuffix(name, ".svg") {
					svgs++
				}
			}
			if svgs == 0 || len(outs["1"]) != len(outs["8"]) {
				t.Errorf("%d SVG files; files at 1: %d, at 8: %d", svgs, len(outs["1"]), len(outs["8"]))
			}
		})
	}
}

// TestFiguresOff: --figures=false (on the command line or in a job file)
// writes no figure file; report.md is the one with figures up to its
// Figures section, which is absent; report.html holds no image; the Parquet
// files, curves.parquet among them, are byte-identical to those with
// figures; the manifest lists exactly the files written, with their sizes
// and SHA-256.
func TestFiguresOff(t *testing.T) {
	t.Parallel()
	for _, ex := range []struct{ name, in string }{
		{"skyfall", "../../configs/example-sweep"},
		{"safecrl", "../../configs/examples/safecrl"},
		{"contilab", "../../configs/examples/contilab"},
		{"skillshift", "../../configs/examples/skillshift"},
	} {
		t.Run(ex.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			on, off, offJob := filepath.Join(dir, "on"), filepath.Join(dir, "off"), filepath.Join(dir, "off-job")
			if code, _, stderr := crl(t, "score", ex.in, "--protocol", ex.name, "--out", on, "--quiet"); code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			if code, _, stderr := crl(t, "score", ex.in, "--protocol", ex.name, "--out", off, "--quiet", "--figures=false"); code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			job := filepath.Join(dir, "job.yaml")
			if err := os.WriteFile(job, []byte(fmt.Sprintf("input: %s\nout: %s\nprotocol: %s\nquiet: true\nfigures: false\n", ex.in, offJob, ex.name)), 0o644); err != nil {
				t.Fatal(err)
			}
			if code, _, stderr := crl(t, "score", "--config", job); code != 0 {
				t.Fatalf("job file: exit %d: %s", code, stderr)
			}
			read := func(d, name string) []byte {
				t.Helper()
				data, err := os.ReadFile(filepath.Join(d, name))
				if err != nil {
					t.Fatal(err)
				}
				return data
			}
			onFiles := listDir(t, on)
			figs := 0
			for _, name := range onFiles {
				if strings.HasPrefix(name, "figure-") {
					figs++
				}
			}
			if figs == 0 {
				t.Fatalf("with figures: no figure file among %v", onFiles)
			}
			onReport := string(read(on, "report.md"))
			head, _, found := strings.Cut(onReport, "\n## Figures\n")
			if !found {
				t.Fatalf("with figures: report.md has no Figures section")
			}
			for _, d := range []string{off, offJob} {
				var want []string
				for _, name := range onFiles {
					if !strings.HasPrefix(name, "figure-") {
						want = append(want, name)
					}
				}
				if got := listDir(t, d); !slices.Equal(got, want) {
					t.Errorf("%s: files %v, want %v", filepath.Base(d), got, want)
				}
				if got := string(read(d, "report.md")); got != head {
					t.Errorf("%s: report.md is not the one with figures up to its Figures section:\n%s", filepath.Base(d), got)
				}
				page := string(read(d, "report.html"))
				for _, tag := range []string{"<svg", "<img", "<figure", ".png"} {
					if strings.Contains(page, tag) {
						t.Errorf("%s: report.html holds %s", filepath.Base(d), tag)
					}
				}
				for _, name := range want {
					if strings.HasSuffix(name, ".parquet") && !bytes.Equal(read(d, name), read(on, name)) {
						t.Errorf("%s: %s differs from the one written with figures", filepath.Base(d), name)
					}
				}
				var m struct {
					Outputs []struct {
						Name   string `json:"name"`
						Bytes  int64  `json:"bytes"`
						SHA256 string `json:"sha256"`
					} `json:"outputs"`
				}
				if err := json.Unmarshal(read(d, "manifest.json"), &m); err != nil {
					t.Fatal(err)
				}
				var listed []string
				for _, o := range m.Outputs {
					listed = append(listed, o.Name)
					data := read(d, o.Name)
					if sum := sha256.Sum256(data); o.Bytes != int64(len(data)) || o.SHA256 != hex.EncodeToString(sum[:]) {
						t.Errorf("%s: manifest lists %s as %d bytes %s; it is %d bytes %x", filepath.Base(d), o.Name, o.Bytes, o.SHA256, len(data), sum)
					}
				}
				listed = append(listed, "manifest.json")
				slices.Sort(listed)
				if !slices.Equal(listed, want) {
					t.Errorf("%s: manifest lists %v (and itself); written: %v", filepath.Base(d), listed, want)
				}
			}
		})
	}
}
