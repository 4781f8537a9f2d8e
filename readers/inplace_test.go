package readers

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// decodeByLines is DecodeObject without rows decoded in place: every line
// is found first and decoded alone (objectDecoder.line), the reference for
// the rows DecodeObject and DecodeChunk decode in place.
func decodeByLines(data []byte, opts Options) (*ObjectRuns, error) {
	opts, err := opts.normalize()
	if err != nil {
		return nil, err
	}
	od := newObjectDecoder(&ObjectRuns{ObjectInfo: ObjectInfo{URL: testURL, Key: "x.jsonl"}, comps: opts.Components}, opts)
	err = readLines(&od.obj.ObjectInfo, bytes.NewReader(data), opts.MaxObjectBytes, opts.MaxLineBytes, nil, od.line)
	od.release()
	if err != nil {
		return nil, err
	}
	return od.obj, nil
}

// checkInPlace decodes data line by line (decodeByLines), whole
// (DecodeObject) and in chunks of several sizes, each from a reader and
// from mapped bytes, and requires the same object, or the same error after the
// same bad rows.
func checkInPlace(t *testing.T, data []byte, opts Options, badMode, stopAt int) {
	t.Helper()
	want := decodeLogged(opts, badMode, stopAt, func(o Options) (*ObjectRuns, error) {
		return decodeByLines(data, o)
	})
	got := decodeLogged(opts, badMode, stopAt, func(o Options) (*ObjectRuns, error) {
		return DecodeObject(testURL, "x.jsonl", bytes.NewReader(data), o)
	})
	sameDecoding(t, fmt.Sprintf("whole, bad rows %d", badMode), got, want)
	var mb *mappedBytes
	got = decodeLogged(opts, badMode, stopAt, func(o Options) (*ObjectRuns, error) {
		mb = &mappedBytes{data: data}
		return DecodeObject(testURL, "x.jsonl", mb, o)
	})
	sameDecoding(t, fmt.Sprintf("mapped, bad rows %d", badMode), got, want)
	mb.check(t, got.err == nil)
	for _, size := range []int{1, 100, 4096, 1 << 20} {
		got := decodeLogged(opts, badMode, stopAt, func(o Options) (*ObjectRuns, error) {
			return decodeChunked(data, o, size, size%2 == 0)
		})
		sameDecoding(t, fmt.Sprintf("chunks of %d bytes, bad rows %d", size, badMode), got, want)
		got = decodeLogged(opts, badMode, stopAt, func(o Options) (*ObjectRuns, error) {
			mb = &mappedBytes{data: data}
			return decodeChunkedFrom(mb, o, size, size%2 == 0)
		})
		sameDecoding(t, fmt.Sprintf("chunks of %d mapped bytes, bad rows %d", size, badMode), got, want)
		mb.check(t, got.err == nil)
	}
}

// inPlaceEdges are objects whose line ends fall where a row decoded in
// place could read on past its line: in the whitespace between tokens,
// after a prefix the row before recorded (prefix.go), inside a string, a
// number or a literal; '\r' before and after them, blank lines, a last line
// without its '\n', a byte-order mark.
var inPlaceEdges = []string{
	`{"reward":1,` + "\n" + `"regime_id":"a"}` + "\n",
	`{"reward":1,"regime_id":"a"` + "\n" + `}` + "\n" + okRow + "\n",
	`{` + "\n" + `"reward":1,"regime_id":"a"}`,
	`{"reward":` + "\n" + `1,"regime_id":"a"}` + "\n" + okRow,
	`{"reward"` + "\n" + `:1,"regime_id":"a"}` + "\n",
	`{"reward":1,"regime_id":"a","x":[1,` + "\n" + `2]}` + "\n",
	`{"reward":1,"regime_id":"a","x":{"y":` + "\n" + `2}}` + "\n",
	`{"reward":1,"regime_id":"a","components":{"progress":1` + "\n" + `}}` + "\n",
	`{"reward":1,"regime_id":"a` + "\n" + `b"}` + "\n" + okRow + "\n",
	`{"reward":1` + "\n" + `2,"regime_id":"a"}` + "\n",
	`{"reward":1,"regime_id":"a","x":tr` + "\n" + `ue}` + "\n",
	`{"reward":1,"regime_id":"a","x":true` + "\n",
	okRow + "\r\n" + okRow + "\r\r\n" + okRow + " \r\n" + okRow + "\r \n" + okRow + "\t\n" + okRow + "\r",
	`{"reward":1` + "\r" + `,"regime_id":"a"}` + "\r\n" + `{"reward":1,"regime_id":"a"}` + "\r" + `x` + "\n",
	"\n\n \n\t\r\n" + okRow + "\n\n" + okRow + "\n \n",
	"\ufeff" + okRow + "\n" + "\ufeff" + okRow + "\n" + okRow,
	okRow + "\n" + okRow + "}\n" + okRow + " x\n" + okRow + "\n",
	// A prefix the rows before recorded, then the same bytes and a line end.
	`{"run_id":"r","seed":1,"reward":1,"regime_id":"a"}` + "\n" +
		`{"run_id":"r","seed":1,"reward":2,"regime_id":"a"}` + "\n" +
		`{"run_id":"r","seed":1,` + "\n" + `"reward":3,"regime_id":"a"}` + "\n" +
		`{"run_id":"r","seed":1,"reward":4,"regime_id":"a"}` + "\n" +
		`{"run_id":"r","seed":1,"reward":5,"regime_id":"a"}`,
}

// Rows decoded in place, from the line reader's buffer or a chunk's lines,
// give exactly what decoding each line alone gives, with every bad-row
// policy and line limit: on lines that end inside a row, lines across the
// line buffer's end, the random sweeps of the chunk tests and the corpus of
// bad and odd inputs.
func TestInPlaceMatchesLines(t *testing.T) {
	var inputs [][]byte
	for _, s := range inPlaceEdges {
		inputs = append(inputs, []byte(s))
	}
	for seed := range uint64(12) {
		inputs = append(inputs, chunkInput(seed))
	}
	// Larger than the line buffer (initialLineBuffer): rows cut by its
	// end at every offset of a row over the object.
	long := benchRows(1200)
	if len(long) < 2*initialLineBuffer {
		t.Fatalf("%d bytes: less than two line buffers", len(long))
	}
	inputs = append(inputs, long, append([]byte(okRow+"\n"), long...))
	for _, o := range corpusObjects(t) {
		inputs = append(inputs, o.data)
	}
	for _, data := range inputs {
		// Line limits at a row's length and one byte below it, the
		// default and none (-1: the limit near maxInt).
		first, _, _ := bytes.Cut(data, []byte("\n"))
		limits := []int{0, -1, len(first), len(first) - 1, len(bytes.TrimSuffix(first, []byte("\r")))}
		slices.Sort(limits)
		for _, maxLine := range slices.Compact(limits) {
			if maxLine < -1 {
				continue
			}
			for badMode := range 3 {
				stopAt := 0
				if badMode == 2 {
					stopAt = 2
				}
				checkInPlace(t, data, Options{Components: []string{"progress"}, MaxLineBytes: maxLine}, badMode, stopAt)
			}
		}
	}
}

// A row decoded in place succeeds exactly when its line, up to the first
// '\n' of the bytes given, decodes alone (one '\r' before the '\n'
// dropped), to the same row, and says where that '\n' is.
func checkRowInPlace(t *testing.T, data []byte) {
	t.Helper()
	d := newRowDecoder(fuzzComps)
	end, ok := d.decodeInPlace(data)
	i := bytes.IndexByte(data, '\n')
	if i < 0 {
		if ok {
			t.Fatalf("%q: decoded in place without a line end (at %d)", data, end)
		}
		return
	}
	line := bytes.TrimSuffix(data[:i], []byte("\r"))
	alone := newRowDecoder(fuzzComps)
	werr := alone.decode(line)
	if ok != (werr == nil) || ok && end != i {
		t.Fatalf("%q: in place %v at %d; the line alone: %v, its end at %d", data, ok, end, werr, i)
	}
	if ok {
		if got, want := decodedRow(d), decodedRow(alone); !got.equal(want) || !bytes.Equal(d.data, line) {
			t.Fatalf("%q:\nin place  %v (line %q)\nline      %v", data, got, d.data, want)
		}
	}
}

func TestRowInPlace(t *testing.T) {
	for _, s := range inPlaceEdges {
		for data := []byte(s); len(data) > 0; {
			checkRowInPlace(t, data)
			i := bytes.IndexByte(data, '\n')
			if i < 0 {
				break
			}
			data = data[i+1:]
		}
	}
	for _, s := range []string{okRow, okRow + "\n", okRow + "\r\n", okRow + "\r", okRow + " \n{", "{}\n", "\n", " \n", ""} {
		checkRowInPlace(t, []byte(s))
		checkRowInPlace(t, []byte(strings.Replace(s, `"reward":1`, `"reward":1,"x":[1,{"a":null}]`, 1)))
	}
}
