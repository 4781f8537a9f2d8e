package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestValidateAgreesWithScore: validate exits 1 exactly when score would
// fail on the same input and flags, and names why. An input whose objects
// hold no row to score (blank lines only, an empty object, or only bad rows
// that --max-bad-rows skips) fails score ("nothing to score"); validate
// reported it clean and exited 0.
func TestValidateAgreesWithScore(t *testing.T) {
	t.Parallel()
	good := `{"run_id":"r","seed":0,"algorithm_id":"ppo","regime_id":"a","reward":1}` + "\n"
	cases := []struct {
		name  string
		files map[string]string
		flags []string
		code  int    // of both commands
		says  string // validate's stdout holds it when code is 1
	}{
		{"blank lines only", map[string]string{"a.jsonl": "\n\n\n"}, nil, exitData, "problem (input): IN: no rows in the 1 object(s) read: nothing to score"},
		{"an empty object", map[string]string{"a.jsonl": ""}, nil, exitData, "nothing to score"},
		{"every row bad, skipped", map[string]string{"a.jsonl": `{"reward":1,"reward":2}` + "\n" + `{"reward":NaN}` + "\n"},
			[]string{"--max-bad-rows", "2"}, exitData, "problem (input): IN: no rows in the 1 object(s) read: nothing to score"},
		{"two objects, rows in one", map[string]string{"a.jsonl": "\n", "b.jsonl": good}, nil, 0, ""},
		{"one good row, one skipped", map[string]string{"a.jsonl": good + `{"reward":NaN}` + "\n"}, []string{"--max-bad-rows", "1"}, 0, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			in := filepath.Join(dir, "in")
			for name, body := range c.files {
				writeFile(t, filepath.Join(in, name), body)
			}
			code, stdout, stderr := crl(t, append([]string{"score", in, "--out", filepath.Join(dir, "out"), "--quiet"}, c.flags...)...)
			if code != c.code {
				t.Fatalf("score: exit %d, want %d\n%s%s", code, c.code, stdout, stderr)
			}
			code, stdout, stderr = crl(t, append([]string{"validate", in, "--quiet"}, c.flags...)...)
			if code != c.code {
				t.Fatalf("validate: exit %d, want %d (score's)\n%s%s", code, c.code, stdout, stderr)
			}
			if want := strings.ReplaceAll(c.says, "IN", in); c.code != 0 && !strings.Contains(stdout, want) {
				t.Errorf("validate does not say %q:\n%s", want, stdout)
			}
		})
	}
}

// TestRecordedGammaOutOfRange: a run whose recorded gamma (the first
// numeric one, which discounts its return) is not a discount, outside
// 0 < γ ≤ 1 as --gamma must be, is bad data: score and validate exit 1
// naming the run, its object and the value. A gamma of 2 gave a
// "discounted" return of 15 for four rewards of 1. --gamma overrides the
// recorded value, as ever; a gamma a later row records is not used.
func TestRecordedGammaOutOfRange(t *testing.T) {
	t.Parallel()
	rows := func(gammas ...string) string {
		var b strings.Builder
		for i, g := range gammas {
			fmt.Fprintf(&b, `{"run_id":"r","seed":0,"algorithm_id":"ppo","regime_id":"a","reward":1,"step":%d,"gamma":%s}`+"\n", i, g)
		}
		return b.String()
	}
	cases := []struct {
		name  string
		body  string
		flags []string
		code  int
		says  string
	}{
		{"gamma 2", rows("2", "2"), nil, exitData, `run run_id=r|seed=0|algorithm_id=ppo (from a.jsonl): recorded gamma 2 is not a discount (want 0 < γ ≤ 1; --gamma overrides it)`},
		{"gamma 0", rows("0", "0"), nil, exitData, "recorded gamma 0 is not a discount"},
		{"gamma -0.5", rows("-0.5"), nil, exitData, "recorded gamma -0.5 is not a discount"},
		{"gamma 1", rows("1", "1"), nil, exitOK, ""},
		{"gamma 0.5, then 2", rows("0.5", "2"), nil, exitOK, ""},
		{"gamma null, then 3", rows("null", "3"), nil, exitData, "recorded gamma 3 is not a discount"},
		{"gamma 2 under --gamma", rows("2", "2"), []string{"--gamma", "0.9"}, exitOK, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			in := filepath.Join(dir, "in")
			writeFile(t, filepath.Join(in, "a.jsonl"), c.body)
			code, stdout, stderr := crl(t, append([]string{"score", in, "--out", filepath.Join(dir, "out"), "--quiet", "--bootstrap-resamples", "100", "--figures=false"}, c.flags...)...)
			if code != c.code || !strings.Contains(stderr, c.says) {
				t.Fatalf("score: exit %d, want %d and %q\n%s%s", code, c.code, c.says, stdout, stderr)
			}
			if c.code != exitOK {
				if names, err := os.ReadDir(filepath.Join(dir, "out")); err == nil && len(names) > 0 {
					t.Errorf("a failed job left %d entries in OUTPUT", len(names))
				}
			}
			if c.flags != nil {
				return // validate takes no protocol flag (decisions.md)
			}
			code, stdout, stderr = crl(t, "validate", in, "--quiet")
			if code != c.code || !strings.Contains(stdout, c.says) {
				t.Fatalf("validate: exit %d, want %d and %q\n%s%s", code, c.code, c.says, stdout, stderr)
			}
		})
	}
}
