package main

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/crlbatch/crlbatch/protocol"
	"github.com/crlbatch/crlbatch/writers"
)

// scaledSweep copies configs/example-sweep to a folder of plain JSON Lines
// with every reward multiplied by scale.
func scaledSweep(t *testing.T, scale float64) string {
	t.Helper()
	src := "../../configs/example-sweep"
	dst := filepath.Join(t.TempDir(), "sweep")
	err := filepath.WalkDir(src, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		var r io.Reader = f
		name := strings.TrimSuffix(strings.TrimSuffix(path, ".gz"), ".zst")
		switch {
		case strings.HasSuffix(path, ".gz"):
			if r, err = gzip.NewReader(f); err != nil {
				return err
			}
		case strings.HasSuffix(path, ".zst"):
			zr, err := zstd.NewReader(f)
			if err != nil {
				return err
			}
			defer zr.Close()
			r = zr
		}
		rel, _ := filepath.Rel(src, name)
		out := filepath.Join(dst, rel)
		if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
			return err
		}
		var b strings.Builder
		sc := bufio.NewScanner(r)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var row map[string]any
			if err := json.Unmarshal(sc.Bytes(), &row); err != nil {
				return err
			}
			row["reward"] = row["reward"].(float64) * scale
			line, err := json.Marshal(row)
			if err != nil {
				return err
			}
			b.Write(line)
			b.WriteByte('\n')
		}
		if err := sc.Err(); err != nil {
			return err
		}
		return os.WriteFile(out, []byte(b.String()), 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

var longDigits = regexp.MustCompile(`[0-9]{20,}`)

// TestReportScientificNumbers: the bundled sweep with its rewards scaled
// to 1e150 and to 1e-9, scored: every mean of families.parquet that is at
// least writers.Large, or that would show as 0.0000 with an interval that
// would too, is in report.md and report.html in scientific notation
// (docs/decisions.md, "Numbers in the report"), and neither holds a run of
// 20 digits. Before, a mean of
// ~1e152 printed as 153 digits and one of ~1e-9 as 0.0000.
func TestReportScientificNumbers(t *testing.T) {
	t.Parallel()
	for _, scale := range []float64{1e150, 1e-9} {
		out := filepath.Join(t.TempDir(), "out")
		if code, _, stderr := crl(t, "score", scaledSweep(t, scale), "--out", out, "--quiet"); code != 0 {
			t.Fatalf("scale %g: exit %d: %s", scale, code, stderr)
		}
		report := readReport(t, out)
		html, err := os.ReadFile(filepath.Join(out, "report.html"))
		if err != nil {
			t.Fatal(err)
		}
		if m := longDigits.FindString(report + string(html)); m != "" {
			t.Errorf("scale %g: the report holds %s", scale, m)
		}
		found := 0
		for _, r := range readParquet(t, filepath.Join(out, "families.parquet")).Rows {
			mean, ok := r["mean"].(float64)
			lo, _ := r["ci_low"].(float64)
			hi, _ := r["ci_high"].(float64)
			tiny := func(x float64) bool { return math.Abs(x) < 0.00005 }
			if !ok || math.Abs(mean) < writers.Noise || (math.Abs(mean) < writers.Large && !(tiny(mean) && tiny(lo) && tiny(hi))) {
				continue // four decimals, or zero beside its interval
			}
			want := writers.FormatScaled(protocol.Some(mean), protocol.Some(lo), protocol.Some(hi))
			if !strings.Contains(want, "e") {
				t.Errorf("scale %g: %s's %s mean %v prints as %s", scale, r["family"], r["metric"], mean, want)
			}
			if !strings.Contains(report, want) || !strings.Contains(string(html), want) {
				t.Errorf("scale %g: %s's %s mean %v: %s not in report.md and report.html", scale, r["family"], r["metric"], mean, want)
			}
			found++
		}
		if found < 6 {
			t.Errorf("scale %g: only %d means in scientific notation", scale, found)
		}
		t.Logf("scale %g: %d means in scientific notation", scale, found)
	}
}
