package main

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Python 3.11's repr of each float (python3 -c 'print(repr(x))'), typed in
// from the interpreter.
func TestPyFloatIsPythonsRepr(t *testing.T) {
	tenth := 0.1 // a variable: 0.1 + 0.2 in constants is exactly 0.3
	for _, c := range []struct {
		f    float64
		want string
	}{
		{1e-05, "1e-05"}, {1.0, "1.0"}, {0.1, "0.1"}, {100.0, "100.0"}, {1e16, "1e+16"},
		{1234567890123456.0, "1234567890123456.0"}, {12345678901234567.0, "1.2345678901234568e+16"},
		{0.0001, "0.0001"}, {0.00012345, "0.00012345"}, {math.Copysign(0, -1), "-0.0"}, {0, "0.0"},
		{3e-4, "0.0003"}, {1.5e300, "1.5e+300"}, {2.5e-310, "2.5e-310"}, {tenth + 0.2, "0.30000000000000004"},
		{123456.789, "123456.789"}, {1e22, "1e+22"}, {5e-324, "5e-324"},
		{math.MaxFloat64, "1.7976931348623157e+308"}, {-2.0, "-2.0"}, {0.99, "0.99"},
	} {
		if got := pyFloat(c.f); got != c.want {
			t.Errorf("pyFloat(%v) = %s, Python prints %s", c.f, got, c.want)
		}
	}
}

// The generator's rows are what json.dumps would print: Python, reading each
// row and dumping it again, gives the same bytes (separators, escapes,
// floats). Needs /usr/bin/python3 (Debian's python3), skipped without it.
func TestRowsRoundTripThroughPython(t *testing.T) {
	py := "/usr/bin/python3"
	if _, err := os.Stat(py); err != nil {
		t.Skipf("no %s: apt-get install python3", py)
	}
	dir := filepath.Join(t.TempDir(), "s")
	if err := gen(dir, 3_000_000, []string{"ppo", "sac"}, 2, 7, "none"); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*", "*.jsonl"))
	if len(files) != 4 {
		t.Fatalf("wrote %d objects, want 4", len(files))
	}
	script := `import json, sys
n = 0
for f in sys.argv[1:]:
    for line in open(f, encoding="ascii"):
        n += 1
        if json.dumps(json.loads(line)) + "\n" != line:
            sys.exit("not json.dumps's bytes: " + f + ": " + line[:200])
print(n)`
	out, err := exec.Command(py, append([]string{"-c", script}, files...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	var rows int
	for _, f := range files {
		b, _ := os.ReadFile(f)
		rows += bytes.Count(b, []byte("\n"))
	}
	var n int
	if err := json.Unmarshal(bytes.TrimSpace(out), &n); err != nil || n != rows {
		t.Fatalf("Python read %q rows, the files hold %d", out, rows)
	}
}

// The shape the benchmark promises: key order varying, optional keys on a
// share of rows, components changing across intervals; and the same flags
// write the same bytes.
func TestShapeAndDeterminism(t *testing.T) {
	base := t.TempDir()
	a, b := filepath.Join(base, "a"), filepath.Join(base, "b")
	for _, d := range []string{a, b} {
		if err := gen(d, 2_000_000, []string{"ppo"}, 1, 3, "none"); err != nil {
			t.Fatal(err)
		}
	}
	x, _ := os.ReadFile(filepath.Join(a, "ppo", "ppo-s0.jsonl"))
	y, _ := os.ReadFile(filepath.Join(b, "ppo", "ppo-s0.jsonl"))
	if !bytes.Equal(x, y) {
		t.Fatal("the same flags wrote different bytes")
	}
	firstKeys := map[string]int{}
	has := map[string]int{}
	comps := map[string]int{}
	lines := bytes.Split(bytes.TrimSuffix(x, []byte("\n")), []byte("\n"))
	for _, l := range lines {
		dec := json.NewDecoder(bytes.NewReader(l))
		dec.Token() // {
		k, _ := dec.Token()
		firstKeys[k.(string)]++
		var row map[string]any
		if err := json.Unmarshal(l, &row); err != nil {
			t.Fatal(err)
		}
		for k := range row {
			has[k]++
		}
		for k := range row["components"].(map[string]any) {
			comps[k]++
		}
	}
	n := len(lines)
	if len(firstKeys) < 5 {
		t.Errorf("rows start with only %d different keys: %v", len(firstKeys), firstKeys)
	}
	for _, k := range []string{"effective_rank", "invalid_action", "episode", "eval/return", "regime_origin"} {
		if has[k] == 0 || has[k] == n {
			t.Errorf("%s on %d of %d rows, want some", k, has[k], n)
		}
	}
	for _, k := range []string{"success", "wind_drag", "slip"} {
		if comps[k] == 0 || comps[k] == n {
			t.Errorf("component %s on %d of %d rows, want some", k, comps[k], n)
		}
	}
}
