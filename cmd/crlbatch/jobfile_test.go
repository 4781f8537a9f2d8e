package main

import (
	"strings"
	"testing"
)

func TestParseJobFile(t *testing.T) {
	entries, err := parseJobFile("job.yaml", []byte("anchor: ceiling\nepisode-end: [success, bonus]\nbound: 1.5\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 3 || entries[1].key != "episode-end" || strings.Join(entries[1].values, ",") != "success,bonus" || entries[2].values[0] != "1.5" {
		t.Errorf("entries %+v", entries)
	}
	for _, bad := range []struct{ doc, want string }{
		{"anchor: a\nanchor: b\n", "repeated"},
		{"- a\n- b\n", "mapping"},
		{"anchor:\n", "no value"},
		{"where: {a: b}\n", "want a value or a list"},
		{"episode-end: [[a]]\n", "plain values"},
		{"a: 1\n---\nb: 2\n", "one YAML document"},
		{"anchor: [unclosed\n", "job.yaml"},
	} {
		if _, err := parseJobFile("job.yaml", []byte(bad.doc)); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%q: error %v, want one mentioning %q", bad.doc, err, bad.want)
		}
	}
}

// FuzzParseJobFile: any bytes give entries or an error, never a panic, and
// accepted entries have keys and values.
func FuzzParseJobFile(f *testing.F) {
	f.Add([]byte("anchor: ceiling\nbound: 1\n"))
	f.Add([]byte("where: [a=b, c=d]\n"))
	f.Add([]byte("{}"))
	f.Add([]byte("a: &x 1\nb: *x\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		entries, err := parseJobFile("fuzz.yaml", data)
		if err != nil {
			return
		}
		seen := map[string]bool{}
		for _, e := range entries {
			if seen[e.key] {
				t.Fatalf("key %q accepted twice", e.key)
			}
			seen[e.key] = true
		}
	})
}
