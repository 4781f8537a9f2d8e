package writers

import (
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/crlbatch/crlbatch/protocol"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// golden compares got with testdata/name, or rewrites it under -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Errorf("%s differs from the golden file (run go test -update and review the diff)\ngot:\n%s\nwant:\n%s", path, got, want)
	}
}

func TestFormatValue(t *testing.T) {
	cases := []struct {
		v    protocol.Value
		want string
	}{
		{protocol.None("no shift"), "--"},
		{protocol.Value{}, "--"},
		{protocol.Some(0), "0.0000"},
		{protocol.Some(1.0 / 3), "0.3333"},
		{protocol.Some(2.0 / 3), "0.6667"},
		{protocol.Some(-0.3), "-0.3000"},
		{protocol.Some(-0.00004), "-4.0000e-05"}, // was 0.0000: a non-zero value shown as zero
		{protocol.Some(-0.00005), "-0.0001"},
		{protocol.Some(12345.678), "12345.6780"},
		{protocol.Some(1e21), "1.0000e+21"}, // was 1000000000000000000000.0000
		// The edges of the rule (docs/decisions.md, "Numbers in the report").
		{protocol.Some(math.Copysign(0, -1)), "0.0000"},
		{protocol.Some(1e-9), "1.0000e-09"},
		{protocol.Some(3e-9), "3.0000e-09"},
		{protocol.Some(-1.23456e-7), "-1.2346e-07"},
		{protocol.Some(0.00005), "0.0001"},
		{protocol.Some(0.000049), "4.9000e-05"},
		{protocol.Some(9.99995e5), "999995.0000"},
		{protocol.Some(999999.99996), "1000000.0000"},
		{protocol.Some(1e6), "1.0000e+06"},
		{protocol.Some(-1e6), "-1.0000e+06"},
		{protocol.Some(1e15), "1.0000e+15"},
		{protocol.Some(4.57e301), "4.5700e+301"},
		{protocol.Some(1e301), "1.0000e+301"},
		{protocol.Some(-1e301), "-1.0000e+301"},
		// 1.7977e+308 would read back as +Inf: the shortest exact digits.
		{protocol.Some(math.MaxFloat64), "1.7976931348623157e+308"},
		{protocol.Some(-math.MaxFloat64), "-1.7976931348623157e+308"},
		{protocol.Some(1.79769e308), "1.79769e+308"}, // 1.7977e+308 too
		{protocol.Some(1.7976e308), "1.7976e+308"},
		// Below Noise (2^-52): zero, as the variance of a constant.
		{protocol.Some(math.SmallestNonzeroFloat64), "0.0000"},
		{protocol.Some(-math.SmallestNonzeroFloat64), "0.0000"},
		{protocol.Some(1.3696e-32), "0.0000"},
		{protocol.Some(0x1p-53), "0.0000"},
		{protocol.Some(0x1p-52), "2.2204e-16"},
		{protocol.Some(-1e-15), "-1.0000e-15"},
	}
	for _, c := range cases {
		got := FormatValue(c.v)
		if got != c.want {
			t.Errorf("FormatValue(%+v) = %q, want %q", c.v, got, c.want)
		}
		// Whatever it prints reads back as a finite number of the value's
		// sign.
		if c.v.OK && math.Abs(c.v.V) >= Noise {
			back, err := strconv.ParseFloat(got, 64)
			if err != nil || math.IsInf(back, 0) || math.Signbit(back) != math.Signbit(c.v.V) {
				t.Errorf("FormatValue(%v) = %q reads back as %v, %v", c.v.V, got, back, err)
			}
		}
	}
}

// TestFormatScaled: a non-zero number that four decimals show as zero is
// zero beside a number of its group that they show, and in scientific
// notation when none of its group shows (docs/decisions.md, "Numbers in
// the report").
func TestFormatScaled(t *testing.T) {
	some := protocol.Some
	cases := []struct {
		v     protocol.Value
		group []protocol.Value
		want  string
	}{
		{some(1.4456e-19), []protocol.Value{some(-0.0075), some(0.0050)}, "0.0000"},
		{some(-1.4456e-19), []protocol.Value{some(-0.0075), some(0.0050)}, "0.0000"},
		{some(1.8302e-05), []protocol.Value{some(-0.0003), some(-0.0005)}, "0.0000"},
		{some(1.8302e-05), []protocol.Value{some(3e-9), some(-4e-5)}, "1.8302e-05"},
		{some(3e-9), []protocol.Value{some(1e-9), some(5e-9)}, "3.0000e-09"},
		{some(3e-9), []protocol.Value{protocol.None("no seed"), some(0)}, "3.0000e-09"},
		{some(3e-9), []protocol.Value{some(2e7)}, "0.0000"},
		{some(0.25), []protocol.Value{some(3e-9)}, "0.2500"},
		{some(2e7), []protocol.Value{some(0.5)}, "2.0000e+07"},
		{protocol.None("x"), []protocol.Value{some(0.5)}, "--"},
	}
	for _, c := range cases {
		if got := FormatScaled(c.v, c.group...); got != c.want {
			t.Errorf("FormatScaled(%v, %v) = %q, want %q", c.v, c.group, got, c.want)
		}
	}
}

func TestFormatMeanStd(t *testing.T) {
	cases := []struct {
		mean, std protocol.Value
		want      string
	}{
		{protocol.Some(0.8), protocol.Some(0.05), "0.8000 ± 0.0500"},
		{protocol.Some(0.8), protocol.None("n < 2"), "0.8000 ± --"},
		{protocol.None("no shift"), protocol.None("n < 2"), "--"},
		{protocol.None("no shift"), protocol.Some(0), "--"},
	}
	for _, c := range cases {
		if got := FormatMeanStd(c.mean, c.std); got != c.want {
			t.Errorf("FormatMeanStd(%v, %v) = %q, want %q", c.mean, c.std, got, c.want)
		}
	}
}

func TestMarkdownTableGolden(t *testing.T) {
	header := []string{"metric", "a", "b", "all"}
	rows := [][]string{
		{"Per-configuration reward", FormatMeanStd(protocol.Some(0.8), protocol.Some(0.05)), FormatMeanStd(protocol.Some(0.61), protocol.None("n < 2")), "0.7050 ± 0.1344"},
		{"Adaptation speed", "--", "3.0000 ± 0.0000", "3.0000 ± --"},
		{"a | b", "line\nbreak", "", "x"},
		{"ünïcödé", "±", "1", "2"},
	}
	got := MarkdownTable(header, rows) + "\n" + MarkdownTable([]string{"x"}, nil)
	golden(t, "markdown.golden", []byte(got))
}

func TestMarkdownTablePanics(t *testing.T) {
	for name, f := range map[string]func(){
		"no header": func() { MarkdownTable(nil, nil) },
		"short row": func() { MarkdownTable([]string{"a", "b"}, [][]string{{"1"}}) },
		"long row":  func() { MarkdownTable([]string{"a"}, [][]string{{"1", "2"}}) },
	} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Error("no panic")
				}
			}()
			f()
		})
	}
}

// TestMarkdownTableWideMemory: a table of many labels is written into one
// buffer of its exact size, padding included (issue 16: a string per cell
// and its padding, then the buffer's doublings). Bytes, not time.
func TestMarkdownTableWideMemory(t *testing.T) {
	const labels = 20000
	header := []string{"Metric"}
	for i := range labels {
		header = append(header, fmt.Sprintf("l%05d", i))
	}
	var rows [][]string
	for r := range 15 {
		row := []string{fmt.Sprintf("Metric %d", r)}
		for i := range labels {
			row = append(row, fmt.Sprintf("%d.125 ± 0.5", i*r))
		}
		rows = append(rows, row)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	out := MarkdownTable(header, rows)
	runtime.ReadMemStats(&after)
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("%d bytes of table, %d allocated", len(out), alloc)
	// The table itself, plus the escaped rows' slices and the cells'
	// widths (24 bytes a cell, and the slices' headers).
	cells := uint64(16 * (labels + 1))
	if !raceEnabled && alloc > uint64(len(out))+32*cells+1<<16 {
		t.Errorf("a %d-byte table allocated %d bytes: more than the table and its cells' bookkeeping", len(out), alloc)
	}
	// Written into a report that holds text already: the same table after
	// it, the report grown once.
	var b strings.Builder
	b.WriteString("## Family ppo\n\n")
	WriteMarkdownTable(&b, header, rows)
	if b.String() != "## Family ppo\n\n"+out {
		t.Error("WriteMarkdownTable appends another table than MarkdownTable returns")
	}
	if lines := strings.Count(out, "\n"); lines != 17 || !strings.HasPrefix(out, "| Metric    |") ||
		!strings.Contains(out, "\n| Metric 2  | 0.125 ± 0.5 |  2.125 ± 0.5 |") || !strings.Contains(out, "\n| :-------- | ---") {
		t.Errorf("unexpected table: %.200q", out)
	}
}
