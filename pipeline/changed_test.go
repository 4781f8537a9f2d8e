package pipeline

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestObjectChangedAfterListing: an object whose bytes differ from what
// was listed (truncated or grown between the listing and the read, or
// while it is read) fails the job with a storage error naming it and
// saying what changed, and nothing is published. It is not re-read: the
// sweep is not at rest (docs/decisions.md). Issue 13, finding 3.
//
// Not parallel (see TestMain): it sets testHookListed and testHookOpen,
// which every job in the process calls.
func TestObjectChangedAfterListing(t *testing.T) {
	// appendText is a change appending s to the object, as a writer does.
	appendText := func(s string) func(path string) error {
		return func(p string) error {
			f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				return err
			}
			defer f.Close()
			_, err = f.WriteString(s)
			return err
		}
	}
	cases := []struct {
		name   string
		opened bool // change it once opened, else before opening
		change func(path string) error
		says   string
		// maxBad is --max-bad-rows; badLine2, a bad row at the object's
		// line 2 before the job (within the limit).
		maxBad   int
		badLine2 bool
	}{
		{"truncated before the read", false, func(p string) error { return os.Truncate(p, 10) }, "listed with", 0, false},
		{"truncated while read", true, func(p string) error { return os.Truncate(p, 10) }, "while the job read it", 0, false},
		{"grown while read", true, appendText(`{"reward": 1, "regime_id": "late"}` + "\n"), "while the job read it", 0, false},
		// A writer caught mid-line: the read meets a cut row (a bad row,
		// over the default --max-bad-rows 0). The error says the object
		// changed and gives that row's own error (its line), not the
		// engine's internal reason for stopping the decode.
		{"grown mid-line while read", true, appendText(`{"reward": 1, "regime_`), "the read failed: ", 0, false},
		// The same with a bad row of its own before, within
		// --max-bad-rows 1: the cut row breaks the limit, and is the row
		// named (not the object's first bad row).
		{"grown mid-line while read, a bad row before", true, appendText(`{"reward": 1, "regime_`), "the read failed: ", 1, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := localSweep(t)
			out := filepath.Join(t.TempDir(), "out")
			objs, _ := filepath.Glob(filepath.Join(in, "*", "*.jsonl"))
			if len(objs) == 0 {
				objs, _ = filepath.Glob(filepath.Join(in, "*.jsonl"))
			}
			if len(objs) == 0 {
				t.Fatal("no object in the sweep")
			}
			victim := objs[0]
			key := filepath.ToSlash(filepath.Base(victim))
			data, err := os.ReadFile(victim)
			if err != nil {
				t.Fatal(err)
			}
			if tc.badLine2 {
				first, rest, _ := strings.Cut(string(data), "\n")
				data = []byte(first + "\n{\"reward\": \"x\", \"regime_id\": \"a\"}\n" + rest)
				if err := os.WriteFile(victim, data, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			// A row cut by the change is the line after the object's last.
			cutLine := fmt.Sprintf("line %d: ", strings.Count(string(data), "\n")+1)
			hook := &testHookOpen
			if !tc.opened {
				hook = &testHookListed
			}
			old := *hook
			t.Cleanup(func() { *hook = old })
			*hook = func(k string) {
				if strings.HasSuffix(k, key) {
					if err := tc.change(victim); err != nil {
						t.Error(err)
					}
				}
			}
			cfg := localJob(in, out, nil)
			cfg.Concurrency = 1
			cfg.MaxBadRows = tc.maxBad
			_, err = Run(context.Background(), cfg)
			if !IsStorage(err) || !strings.Contains(err.Error(), victim) || !strings.Contains(err.Error(), "changed") || !strings.Contains(err.Error(), tc.says) {
				t.Fatalf("error %v: want a storage error naming %s, saying it changed (%q)", err, victim, tc.says)
			}
			if msg := err.Error(); strings.Contains(msg, "abandoned") || strings.Contains(msg, "max-bad-rows") {
				t.Errorf("error %v: names the engine's reason to stop decoding, not the row", err)
			}
			if tc.says == "the read failed: " && !strings.Contains(err.Error(), cutLine) {
				t.Errorf("error %v: want the cut row's line (%q)", err, cutLine)
			}
			if _, err := os.Stat(filepath.Join(out, ManifestName)); err == nil {
				t.Errorf("a result was published")
			}
		})
	}
}

// TestSameModTime: an object's modification time from its attributes and
// from a reader are the same when equal, or equal to the second when one
// of them has whole seconds only (GCS: the reader's Last-Modified header,
// the attributes' microseconds); a zero time is not compared.
func TestSameModTime(t *testing.T) {
	at := time.Date(2026, 12, 4, 19, 19, 37, 955405000, time.UTC)
	cases := []struct {
		name string
		a, b time.Time
		same bool
	}{
		{"equal", at, at, true},
		{"equal in other zones", at, at.In(time.FixedZone("x", 3600)), true},
		{"GCS: the reader's whole seconds", at, at.Truncate(time.Second), true},
		{"whole seconds either way", at.Truncate(time.Second), at, true},
		{"no time from the store", at, time.Time{}, true},
		{"a second later", at, at.Add(time.Second).Truncate(time.Second), false},
		{"a microsecond later", at, at.Add(time.Microsecond), false},
		{"whole seconds apart", at.Truncate(time.Second), at.Truncate(time.Second).Add(time.Second), false},
	}
	for _, c := range cases {
		if got := sameModTime(c.a, c.b); got != c.same {
			t.Errorf("%s: %v", c.name, got)
		}
	}
}
