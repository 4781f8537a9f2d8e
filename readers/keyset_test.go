package readers

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// wideRow is a skyfall row with n extra keys x<from>…x<from+n-1>, and the
// key x<dup> once more at its end when dup >= 0.
func wideRow(from, n, dup int) string {
	var b strings.Builder
	b.WriteString(`{"reward":1,"regime_id":"a"`)
	for k := from; k < from+n; k++ {
		fmt.Fprintf(&b, `,"x%d":%d`, k, k)
	}
	if dup >= 0 {
		fmt.Fprintf(&b, `,"x%d":0`, dup)
	}
	b.WriteString("}\n")
	return b.String()
}

// TestKeySetKeptAcrossRows: the map of a row's keys past 32 is kept,
// emptied, for the next row, whichever way it is emptied (cleared; a delete
// per key after a row of many more keys; dropped after one of more than
// keySetKeptKeys): a key of an earlier row is never taken for a repeated
// one, and a key repeated within a row always is, at every size.
func TestKeySetKeptAcrossRows(t *testing.T) {
	// Every row has more keys than a key table holds (maxKeys), or follows
	// one that had: the rows' keys go through the keySet.
	cases := []struct {
		name string
		rows []string
		bad  int // the line with a repeated key; 0: none
	}{
		{"same keys, row after row", []string{wideRow(0, 100, -1), wideRow(0, 100, -1), wideRow(0, 100, -1)}, 0},
		{"repeated after rows of the same keys", []string{wideRow(0, 100, -1), wideRow(0, 100, -1), wideRow(0, 100, 7)}, 3},
		{"cleared", []string{wideRow(0, 100, -1), wideRow(50, 100, -1), wideRow(0, 100, 99)}, 3},
		{"deleted one by one after a wider row", []string{wideRow(0, 2000, -1), wideRow(0, 100, -1), wideRow(0, 100, -1), wideRow(100, 100, -1), wideRow(0, 100, 99)}, 5},
		{"deleted, then the wider row's keys", []string{wideRow(0, 2000, -1), wideRow(0, 100, -1), wideRow(0, 2000, -1), wideRow(0, 2000, 1999)}, 4},
		{"dropped after a huge row", []string{wideRow(0, keySetKeptKeys+10, -1), wideRow(0, 100, -1), wideRow(0, 100, -1), wideRow(0, keySetKeptKeys+10, -1), wideRow(0, 100, 0)}, 5},
		{"repeated in a huge row", []string{wideRow(0, 100, -1), wideRow(0, keySetKeptKeys+10, 5)}, 2},
		{"32 and 33 keys", []string{wideRow(0, 100, -1), wideRow(0, 29, -1), wideRow(0, 31, -1), wideRow(0, 31, -1), wideRow(0, 29, 3), wideRow(0, 31, 5)}, 5},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := DecodeObject("mem://b/x.jsonl", "x.jsonl", strings.NewReader(strings.Join(c.rows, "")), Options{})
			var de *DataError
			switch {
			case c.bad == 0 && err != nil:
				t.Fatalf("error %v, want none", err)
			case c.bad > 0 && (!errors.As(err, &de) || de.Line != c.bad || !strings.Contains(err.Error(), "repeated key")):
				t.Fatalf("error %v, want a repeated key at line %d", err, c.bad)
			}
		})
	}
}

// TestKeySetResetEmpties: whichever way reset empties the map (clear, a
// delete per key, dropping it), nothing of the object before is left in it.
func TestKeySetResetEmpties(t *testing.T) {
	var s keySet
	d := &rowDecoder{}
	fill := func(n int) {
		s.reset()
		var line strings.Builder
		var offs []int
		for k := range n {
			if k > 0 {
				line.WriteByte(',')
			}
			offs = append(offs, line.Len())
			fmt.Fprintf(&line, `"k%d"`, k)
		}
		d.data = []byte(line.String())
		for k := range n {
			if s.add(d, []byte(fmt.Sprintf("k%d", k)), offs[k]) {
				t.Fatalf("k%d of %d keys taken for a repeated key", k, n)
			}
		}
	}
	for _, n := range []int{100, 2000, 100, 40, 2000, keySetKeptKeys + 1, 100, 10} {
		fill(n)
		s.reset()
		if len(s.m) != 0 || len(s.hashes) != 0 || s.hashed {
			t.Fatalf("after an object of %d keys, reset left %d keys in the map (%d hashes, hashed %v)", n, len(s.m), len(s.hashes), s.hashed)
		}
		if n > keySetKeptKeys && s.m != nil {
			t.Errorf("the map of an object of %d keys was kept", n)
		}
	}
}
