package main

import (
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
