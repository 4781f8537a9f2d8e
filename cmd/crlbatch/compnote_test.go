package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// uncarriedRows are two runs: a carries progress and success (success only
// as 0), b carries progress alone (as 0); neither carries goal.
const uncarriedRows = `{"run_id":"a","algorithm_id":"ppo","step":0,"regime_id":"x","reward":1,"components":{"progress":0.5,"success":0}}
{"run_id":"a","algorithm_id":"ppo","step":1,"regime_id":"y","reward":0.5,"components":{"progress":1,"success":0}}
{"run_id":"b","algorithm_id":"ppo","step":0,"regime_id":"x","reward":0.25,"components":{"progress":0}}
{"run_id":"b","algorithm_id":"ppo","step":1,"regime_id":"y","reward":0.75}
`

// TestUncarriedComponentNote: a --solve-component or --episode-end that no
// row of any scored run carries keeps every number but gets a note in
// report.md, report.html and manifest.json and a warning on stderr; a
// component some row carries, even as 0, gets none. The same from a cold
// run, a warm --cache run, Parquet input and a spilled decode, with the
// same report from JSONL in every mode.
func TestUncarriedComponentNote(t *testing.T) {
	tmp := t.TempDir()
	in := filepath.Join(tmp, "in")
	if err := os.MkdirAll(in, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(in, "runs.jsonl"), []byte(uncarriedRows), 0o644); err != nil {
		t.Fatal(err)
	}
	pq := filepath.Join(tmp, "pq")
	if code, _, stderr := crl(t, "convert", in, "--out", pq); code != 0 {
		t.Fatalf("convert: exit %d: %s", code, stderr)
	}
	cases := []struct {
		name  string
		flags []string
		notes []string // the notes expected (nil: none)
	}{
		{"misspelt solve", []string{"--solve-component", "progres"}, []string{`component "progres" (--solve-component) is carried by no row of any scored run: it counts as 0 on every row, so no episode counts as solved; check the name`}},
		{"misspelt episode end", []string{"--episode-end", "goal", "--solve-component", "progress"}, []string{`component "goal" (--episode-end) is carried by no row of any scored run: it counts as 0 on every row, so it ends no episode; check the name`}},
		{"both flags", []string{"--episode-end", "goal", "--solve-component", "goal"}, []string{`component "goal" (--solve-component, --episode-end) is carried by no row of any scored run: it counts as 0 on every row, so no episode counts as solved and it ends no episode; check the name`}},
		{"carried as 0 only", []string{"--solve-component", "success"}, nil},
		{"carried by one run", []string{"--episode-end", "success", "--solve-component", "progress"}, nil},
		{"no component flag", nil, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cache := filepath.Join(t.TempDir(), "cache")
			modes := []struct {
				name string
				args []string
			}{
				{"cold", []string{in}},
				{"cache-cold", []string{in, "--cache", cache}},
				{"cache-warm", []string{in, "--cache", cache}},
				{"parquet", []string{pq, "--pattern", "*.parquet"}},
				{"spill", []string{in, "--memory-limit", "1KiB", "--spill-dir", t.TempDir(), "--concurrency", "1"}},
			}
			var first string
			for _, m := range modes {
				out := filepath.Join(t.TempDir(), "out")
				args := append(append([]string{"score"}, m.args...), append([]string{"--out", out, "--quiet"}, c.flags...)...)
				code, _, stderr := crl(t, args...)
				if code != 0 {
					t.Fatalf("%s: exit %d: %s", m.name, code, stderr)
				}
				md := readFile(t, filepath.Join(out, "report.md"))
				html := readFile(t, filepath.Join(out, "report.html"))
				manifest := readFile(t, filepath.Join(out, "manifest.json"))
				for _, n := range c.notes {
					if !strings.Contains(md, "- "+n+"\n") {
						t.Errorf("%s: report.md lacks the note %q", m.name, n)
					}
					if !strings.Contains(html, "<li>"+strings.ReplaceAll(n, `"`, "&#34;")+"</li>") {
						t.Errorf("%s: report.html lacks the note %q", m.name, n)
					}
					if !strings.Contains(manifest, strings.ReplaceAll(n, `"`, `\"`)) {
						t.Errorf("%s: manifest.json lacks the note %q", m.name, n)
					}
					if !strings.Contains(stderr, "level=WARN") || !strings.Contains(stderr, strings.ReplaceAll(n, `"`, `\"`)) {
						t.Errorf("%s: stderr lacks the warning %q:\n%s", m.name, n, stderr)
					}
				}
				if len(c.notes) == 0 && (strings.Contains(md+html+manifest+stderr, "carried by no row")) {
					t.Errorf("%s: a note on a carried component:\n%s", m.name, stderr)
				}
				if m.name == "parquet" {
					continue // its input and sources are named otherwise
				}
				if first == "" {
					first = md
				} else if md != first {
					t.Errorf("%s: report.md differs from the cold run's", m.name)
				}
			}
		})
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}
