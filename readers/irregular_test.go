package readers

import (
	"bytes"
	"os"
	"testing"
)

// testdata/irregular.jsonl holds rows of the benchmarks' irregular sweep
// shape (issue 16), written by bench/irregulargen as Python's json.dumps
// prints them: key order varying row to row, optional keys on some rows
// (effective_rank, invalid_action, regime_origin, episode-end fields and the
// success component, evaluation fields), components whose keys change across
// intervals, ints that are rewards, floats such as 1e-05 and 1.0, integers of
// every width, long strings with \u escapes, ", " and ": " separators. Made by
//
//	go run ./bench/irregulargen -out /tmp/irr -families ppo -seeds 1 -target-bytes 600000
//	awk 'NR <= 40 || /"eval\// || (/"episode_len"/ && e++ < 6) || (/"effective_rank": null/ && n++ < 2) ||
//	  (/"wind_drag"/ && w++ < 3) || (/"slip"/ && s++ < 3) || (/"calm-again"/ && c++ < 3) ||
//	  (/"reward": -1,/ && r++ < 2) || (/"storm"/ && st++ < 2)' /tmp/irr/ppo/ppo-s0.jsonl >readers/testdata/irregular.jsonl
func irregularLines(tb testing.TB) [][]byte {
	tb.Helper()
	data, err := os.ReadFile("testdata/irregular.jsonl")
	if err != nil {
		tb.Fatal(err)
	}
	return bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n"))
}

// irregularSeeds adds the irregular rows to a fuzz target's corpus: each
// line alone (perLine) or runs of consecutive lines, so that the decoder's
// key prediction meets rows whose keys come in another order.
func irregularSeeds(f *testing.F, perLine bool) {
	lines := irregularLines(f)
	if perLine {
		for _, l := range lines {
			f.Add(l)
		}
		return
	}
	for i := 0; i < len(lines); i += 8 {
		f.Add(bytes.Join(lines[i:min(i+8, len(lines))], []byte("\n")))
	}
}

var irregularComps = []string{"progress", "collision", "success"}

// decodeAsAlone decodes line n (a valid irregular row) with seq, after the
// rows seq decoded before it, and fails unless it gives what a fresh
// decoder gives.
func decodeAsAlone(t *testing.T, seq *rowDecoder, line []byte, n int) {
	t.Helper()
	if err := seq.decode(line); err != nil {
		t.Fatalf("line %d after the lines before: %v", n, err)
	}
	fresh := newRowDecoder(irregularComps)
	if err := fresh.decode(line); err != nil {
		t.Fatal(err)
	}
	if a, b := decodedRow(seq), decodedRow(fresh); !a.equal(b) {
		t.Fatalf("line %d:\nafter the lines before: %v\nalone:                  %v", n, a, b)
	}
}

// Every irregular row decodes as encoding/json decodes it (FuzzDecodeRow's
// check), and the same after the rows before it as alone (FuzzDecodeSequence's).
func TestIrregularRows(t *testing.T) {
	lines := irregularLines(t)
	if len(lines) < 50 {
		t.Fatalf("testdata/irregular.jsonl holds %d rows", len(lines))
	}
	seq := newRowDecoder(irregularComps)
	var reordered, withEval int
	for n, line := range lines {
		got, gerr := fastRow(line, irregularComps)
		want, werr := refDecode(line, irregularComps)
		if gerr != nil || werr != nil {
			t.Fatalf("line %d: a valid row: scanner %v, reference %v", n+1, gerr, werr)
		}
		if !got.equal(want) {
			t.Fatalf("line %d:\nscanner   %v\nreference %v", n+1, got, want)
		}
		decodeAsAlone(t, seq, line, n+1)
		if !bytes.HasPrefix(line, []byte(`{"run_id"`)) {
			reordered++
		}
		if bytes.Contains(line, []byte(`"eval/`)) {
			withEval++
		}
	}
	if reordered < len(lines)/6 || withEval == 0 {
		t.Fatalf("testdata/irregular.jsonl is not irregular: %d of %d rows reordered, %d with evaluation fields", reordered, len(lines), withEval)
	}
}

// TestKeyLookupModes: over many rows of the irregular shape, the key tables
// switch to looking keys up before predicting them (keyTable.findFirst)
// and back to predicting for a trial window; every row decodes as alone
// either way.
func TestKeyLookupModes(t *testing.T) {
	lines := irregularLines(t)
	seq := newRowDecoder(irregularComps)
	var findFirst, predictAfter int
	for n := range 40 * len(lines) {
		line := lines[n%len(lines)]
		decodeAsAlone(t, seq, line, n+1)
		switch {
		case seq.top.findFirst:
			findFirst++
		case findFirst > 0:
			predictAfter++
		}
	}
	if findFirst == 0 || predictAfter == 0 {
		t.Errorf("%d rows looked keys up first, %d predicted them after that: want both", findFirst, predictAfter)
	}
}
