package pipeline

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/crlbatch/crlbatch/readers"
)

// TestBadRowsLimit: whatever order the objects' rows arrive in (each
// object's in line order), the row named is the (N+1)th in key and line
// order, the rows kept are the same, and objects after it are abandoned.
func TestBadRowsLimit(t *testing.T) {
	t.Parallel()
	// Bad rows per object: lines.
	lines := [][]int{{}, {3, 9}, {}, {1}, {2, 4, 8}, {5}}
	var canon []string
	for i, ls := range lines {
		for _, l := range ls {
			canon = append(canon, fmt.Sprintf("o%d: line %d", i, l))
		}
	}
	for max := 0; max <= len(canon); max++ {
		for seed := range 50 {
			b := newBadRows(len(lines), max)
			rng := rand.New(rand.NewPCG(uint64(seed), uint64(max)))
			// Interleave the objects at random; an abandoned object stops.
			next := make([]int, len(lines))
			stopped := make([]bool, len(lines))
			for {
				var live []int
				for i := range lines {
					if !stopped[i] && next[i] < len(lines[i]) {
						live = append(live, i)
					}
				}
				if len(live) == 0 {
					break
				}
				i := live[rng.IntN(len(live))]
				if next[i] == 0 && b.skip(i) {
					stopped[i] = true
					continue
				}
				de := &readers.DataError{URL: fmt.Sprintf("o%d", i), Line: lines[i][next[i]], Msg: "bad"}
				next[i]++
				if err := b.add(i, de); err != nil {
					if !errors.Is(err, errAbandoned) {
						t.Fatal(err)
					}
					stopped[i] = true
				}
			}
			err := b.err()
			if max >= len(canon) {
				if err != nil || len(b.all()) != len(canon) {
					t.Fatalf("max %d: %v, %d rows", max, err, len(b.all()))
				}
				continue
			}
			if err == nil || !strings.HasPrefix(err.Error(), canon[max]+": bad") {
				t.Fatalf("max %d seed %d: got %v, want %s", max, seed, err, canon[max])
			}
			var de *readers.DataError
			if !errors.As(err, &de) {
				t.Errorf("not a readers.DataError: %v", err)
			}
			if max > 0 && !strings.Contains(err.Error(), fmt.Sprintf("(bad row %d, past --max-bad-rows %d)", max+1, max)) {
				t.Errorf("max %d: %v", max, err)
			}
			if max == 0 && err.Error() != canon[0]+": bad" {
				t.Errorf("max 0: %v, want the row's own error", err)
			}
		}
	}
}

// TestBadRowsReplay: a retried read of an object meets its rows again;
// they count once.
func TestBadRowsReplay(t *testing.T) {
	t.Parallel()
	b := newBadRows(2, 3)
	for range 2 {
		for _, l := range []int{2, 5} {
			if err := b.add(0, &readers.DataError{URL: "a", Line: l}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if b.count() != 2 || b.err() != nil {
		t.Errorf("count %d err %v", b.count(), b.err())
	}
}

// TestBadRowsConcurrent: under the race detector, concurrent objects.
func TestBadRowsConcurrent(t *testing.T) {
	t.Parallel()
	b := newBadRows(8, -1)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			h := b.hook(i)
			for l := 1; l <= 100; l++ {
				if err := h(&readers.DataError{URL: fmt.Sprint(i), Line: l}); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	all := b.all()
	if len(all) != 800 || b.err() != nil {
		t.Fatalf("%d rows, %v", len(all), b.err())
	}
	for k, de := range all {
		if de.URL != fmt.Sprint(k/100) || de.Line != k%100+1 {
			t.Fatalf("row %d is %s line %d", k, de.URL, de.Line)
		}
	}
	rows := skippedRows(all[:1])
	if rows[0].Object != "0" || rows[0].Line != 1 || rows[0].Reason != "" {
		t.Errorf("%+v", rows[0])
	}
}

func TestBadRowNotes(t *testing.T) {
	t.Parallel()
	var rows []*readers.DataError
	for l := 1; l <= 7; l++ {
		rows = append(rows, &readers.DataError{URL: "s3://b/x.jsonl", Line: l, Field: "reward", Msg: "got string, want number"})
	}
	notes := badRowNotes(rows, 10)
	want := []string{
		"7 bad rows skipped under --max-bad-rows 10; manifest.json lists every one under `skipped`",
		"skipped `s3://b/x.jsonl` line 1: reward: got string, want number",
	}
	if len(notes) != 7 || notes[0] != want[0] || notes[1] != want[1] || notes[6] != "… and 2 more skipped rows" {
		t.Errorf("%q", notes)
	}
	if badRowNotes(nil, 10) != nil {
		t.Error("notes without bad rows")
	}
}

// TestBadRowsStopRow: the row an object's abandoned decode stopped at,
// which a job names when the object changed while it was read, is the
// object's own row that broke the limit (the last it found, not its
// first), and none when the rows of the objects before it broke the limit
// (the object no longer matters).
func TestBadRowsStopRow(t *testing.T) {
	t.Parallel()
	row := func(i, line int) *readers.DataError {
		return &readers.DataError{URL: fmt.Sprintf("o%d", i), Line: line, Msg: "bad"}
	}
	cases := []struct {
		name  string
		max   int
		rows  [][2]int // object, line, in arrival order
		obj   int
		want  int // line; 0: none
		abort bool
	}{
		// Object 1's second row (line 9, say cut by a writer) breaks the
		// limit of 1: its decode stopped there, not at line 3.
		{"own rows", 1, [][2]int{{1, 3}, {1, 9}}, 1, 9, true},
		// Object 0's rows break the limit of 1; object 1, still decoding,
		// is abandoned at its next row.
		{"rows before it", 1, [][2]int{{1, 3}, {0, 2}, {0, 5}, {1, 9}}, 1, 0, true},
		// Object 1 stopped at its own row first; then object 0's rows
		// alone break the limit, and object 1 no longer matters.
		{"cut moved back", 1, [][2]int{{1, 3}, {1, 9}, {0, 2}, {0, 5}}, 1, 0, true},
		// One row of object 0 comes later: the limit is still broken in
		// object 1 (its line 3 is the sweep's second bad row).
		{"a row before it", 1, [][2]int{{1, 3}, {1, 9}, {0, 2}}, 1, 9, true},
		// Under the limit nothing stopped.
		{"within the limit", 5, [][2]int{{1, 3}, {1, 9}}, 1, 9, false},
	}
	for _, c := range cases {
		b := newBadRows(3, c.max)
		var last error
		for _, r := range c.rows {
			if err := b.add(r[0], row(r[0], r[1])); r[0] == c.obj {
				last = err
			}
		}
		if got := errors.Is(last, errAbandoned); got != c.abort {
			t.Errorf("%s: object %d abandoned %v, want %v", c.name, c.obj, got, c.abort)
		}
		if !c.abort {
			continue
		}
		got := b.stopRow(c.obj)
		switch {
		case c.want == 0 && got != nil:
			t.Errorf("%s: stopped at %v, want none (the object no longer matters)", c.name, got)
		case c.want != 0 && (got == nil || got.Line != c.want):
			t.Errorf("%s: stopped at %v, want line %d", c.name, got, c.want)
		}
	}
}
