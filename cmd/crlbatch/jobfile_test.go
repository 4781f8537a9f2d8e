package main

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
)

func TestParseJobFile(t *testing.T) {
	t.Parallel()
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
		// Accepted input round-trips: written back as YAML (every value
		// quoted) it parses to the same keys and values.
		var b strings.Builder
		for _, e := range entries {
			if len(e.values) == 0 {
				fmt.Fprintf(&b, "%s: []\n", strconv.Quote(e.key))
				continue
			}
			fmt.Fprintf(&b, "%s:\n", strconv.Quote(e.key))
			for _, v := range e.values {
				fmt.Fprintf(&b, "  - %s\n", strconv.Quote(v))
			}
		}
		again, err := parseJobFile("again.yaml", []byte(b.String()))
		if err != nil {
			t.Fatalf("re-encoded job file refused: %v\n%s", err, b.String())
		}
		if len(again) != len(entries) {
			t.Fatalf("%d entries after the round trip, want %d", len(again), len(entries))
		}
		for i := range entries {
			if again[i].key != entries[i].key || strings.Join(again[i].values, "\x00") != strings.Join(entries[i].values, "\x00") {
				t.Fatalf("entry %d: %+v after the round trip, want %+v", i, again[i], entries[i])
			}
		}
	})
}
