package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/crlbatch/crlbatch/scoring"
)

// TestTraceFormatDoc: docs/trace-format.md has a section for every
// protocol crlbatch registers (protocols.go), naming every row field and
// identity field of its Description, and every JSON example in it is a
// valid input of that protocol (crlbatch validate finds no problem).
func TestTraceFormatDoc(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile("../../docs/trace-format.md")
	if err != nil {
		t.Fatal(err)
	}
	sections := map[string]string{}
	for _, s := range strings.Split(string(data), "\n## ")[1:] {
		name, _, _ := strings.Cut(s, " ")
		sections[strings.TrimSuffix(name, ":")] = s
	}
	example := regexp.MustCompile("(?s)```json\n(.*?)```")
	for _, p := range scoring.Protocols() {
		if p.Name() == toyName {
			continue // toy_test.go's, registered only in this test binary
		}
		sec, ok := sections[p.Name()]
		if !ok {
			t.Errorf("docs/trace-format.md has no section \"## %s\"", p.Name())
			continue
		}
		d := p.Describe()
		for _, f := range d.Rows {
			if !strings.Contains(sec, "`"+f.Name+"`") {
				t.Errorf("docs/trace-format.md, %s: field %q (%s) is not named", p.Name(), f.Name, f.Type)
			}
		}
		for _, f := range append(append([]string{}, d.Identity...), d.GroupBy...) {
			if !strings.Contains(sec, "`"+f+"`") {
				t.Errorf("docs/trace-format.md, %s: identity or group-by field %q is not named", p.Name(), f)
			}
		}
		blocks := example.FindAllStringSubmatch(sec, -1)
		if len(blocks) == 0 {
			t.Errorf("docs/trace-format.md, %s: no example", p.Name())
		}
		for i, b := range blocks {
			in := filepath.Join(t.TempDir(), "in")
			if err := os.MkdirAll(in, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(in, "example.jsonl"), []byte(b[1]), 0o644); err != nil {
				t.Fatal(err)
			}
			if code, stdout, stderr := crl(t, "validate", in, "--protocol", p.Name(), "--quiet"); code != 0 {
				t.Errorf("docs/trace-format.md, %s: example %d does not validate (exit %d):\n%s%s", p.Name(), i+1, code, stdout, stderr)
			}
		}
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(readme), "docs/trace-format.md") {
		t.Error("README.md does not point to docs/trace-format.md")
	}
}

// TestFieldErrorsPointToTheTraceFormat: an error about a row's field ends
// with the page that describes the fields.
func TestFieldErrorsPointToTheTraceFormat(t *testing.T) {
	t.Parallel()
	in := filepath.Join(t.TempDir(), "in")
	if err := os.MkdirAll(in, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(in, "x.jsonl"), []byte(`{"reward":"high","regime_id":"a"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := crl(t, "score", in, "--out", filepath.Join(t.TempDir(), "out"), "--quiet")
	if code != exitData || !strings.Contains(stderr, "line 1: reward: ") || !strings.HasSuffix(strings.TrimSpace(stderr), "(see docs/trace-format.md)") {
		t.Errorf("exit %d, stderr %q: want exit 1 naming line 1 and reward, ending with (see docs/trace-format.md)", code, stderr)
	}
}
