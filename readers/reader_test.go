package readers

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/crlbatch/crlbatch/protocol/skyfall"
)

// rows0 is a small sweep in one object: two identified runs interleaved, an
// anonymous row, every schema field.
const rows0 = `{"run_id":"r1","seed":0,"algorithm_id":"ppo","task":"nav","step":0,"regime_id":"a","reward":0.5,"components":{"progress":0.25,"success":0},"invalid_action":false,"effective_rank":12.5,"gamma":0.95,"obs_hash":"aa","logp":-1.25}
{"run_id":"r1","seed":0,"algorithm_id":"ppo","task":"nav","step":1,"regime_id":"b","reward":-0.125,"components":{"progress":0.5,"success":1},"invalid_action":true,"effective_rank":null,"gamma":0.95,"obs_hash":"bb","logp":-0.5}
{"run_id":"r2","seed":1,"algorithm_id":"sac","task":"nav","step":0,"regime_id":"a","reward":1e-3,"components":{"progress":0.75},"gamma":0.99}
{"run_id":"r1","seed":0,"algorithm_id":"ppo","task":"nav","step":2,"regime_id":"a_again","regime_origin":"a","reward":0.75,"components":{"success":0.5,"other":3},"gamma":0.95,"obs_hash":"cc","logp":-2}
{"regime_id":"z","reward":7}
`

// TestConformance runs every format over the same rows: plain, gzip and zstd
// (also multi-member / multi-frame) give identical traces, whatever the name.
func TestConformance(t *testing.T) {
	opts := Options{Components: []string{"success", "progress"}}
	half := strings.Index(rows0, "\n{\"run_id\":\"r2\"") + 1
	cases := []struct {
		name   string
		format Format
		data   []byte
	}{
		{"x.jsonl", Plain, []byte(rows0)},
		{"x.jsonl.gz", Gzip, gz(t, []byte(rows0))},
		{"x.jsonl.zst", Zstd, zst(t, []byte(rows0))},
		// Misleading names: detection is by magic bytes only.
		{"x.jsonl.zst", Plain, []byte(rows0)},
		{"x.jsonl", Gzip, gz(t, []byte(rows0))},
		{"x.jsonl.gz", Zstd, zst(t, []byte(rows0))},
		{"x.bin", Gzip, append(gz(t, []byte(rows0[:half])), gz(t, []byte(rows0[half:]))...)},
		{"x.bin", Zstd, append(zst(t, []byte(rows0[:half])), zst(t, []byte(rows0[half:]))...)},
	}
	var want any
	for i, c := range cases {
		t.Run(fmt.Sprintf("%d-%s-%s", i, c.name, c.format), func(t *testing.T) {
			// One byte at a time exercises every buffer boundary.
			for _, r := range []io.Reader{bytes.NewReader(c.data), iotest.OneByteReader(bytes.NewReader(c.data))} {
				o, err := DecodeObject("mem://b/"+c.name, "x", r, opts)
				if err != nil {
					t.Fatal(err)
				}
				if o.Format != c.format {
					t.Errorf("format %v, want %v", o.Format, c.format)
				}
				if o.Rows != 5 || o.Lines != 5 {
					t.Errorf("rows %d lines %d, want 5 5", o.Rows, o.Lines)
				}
				traces, err := Assemble([]*ObjectRuns{o}, opts)
				if err != nil {
					t.Fatal(err)
				}
				if want == nil {
					want = traces
				} else if !reflect.DeepEqual(traces, want) {
					t.Errorf("traces differ from the plain ones")
				}
			}
		})
	}
	if !reflect.DeepEqual(want, wantRows0()) {
		t.Errorf("got\n%s\nwant\n%s", dump(want), dump(wantRows0()))
	}
}

func wantRows0() []*skyfall.Trace {
	return []*skyfall.Trace{
		{
			Key:        "run_id=r1|seed=0|algorithm_id=ppo|task=nav",
			Meta:       map[string]string{"run_id": "r1", "seed": "0", "algorithm_id": "ppo", "task": "nav", "gamma": "0.95", "source": "x"},
			Rewards:    []float64{0.5, -0.125, 0.75},
			Labels:     []int32{0, 1, 2},
			LabelNames: []string{"a", "b", "a_again"},
			Origins:    []string{"a", "b", "a"},
			Steps:      []int64{0, 1, 2},
			HasStep:    []bool{true, true, true},
			Components: map[string][]float64{"success": {0, 1, 0.5}, "progress": {0.25, 0.5, 0}},
			Invalid:    []int8{0, 1, -1},
			EffRank:    []float64{12.5, 0, 0},
			HasEffRank: []bool{true, false, false},
			Gamma:      0.95, HasGamma: true,
		},
		{
			Key:        "run_id=r2|seed=1|algorithm_id=sac|task=nav",
			Meta:       map[string]string{"run_id": "r2", "seed": "1", "algorithm_id": "sac", "task": "nav", "gamma": "0.99", "source": "x"},
			Rewards:    []float64{0.001},
			Labels:     []int32{0},
			LabelNames: []string{"a"},
			Origins:    []string{"a"},
			Steps:      []int64{0},
			HasStep:    []bool{true},
			Components: map[string][]float64{"success": {0}, "progress": {0.75}},
			Uncarried:  []string{"success"}, // r2's one row has no success
			Gamma:      0.99, HasGamma: true,
		},
		{
			Key:        "anonymous:x",
			Meta:       map[string]string{"source": "x"},
			Rewards:    []float64{7},
			Labels:     []int32{0},
			LabelNames: []string{"z"},
			Origins:    []string{"z"},
			Components: map[string][]float64{"success": {0}, "progress": {0}},
			Uncarried:  []string{"progress", "success"},
		},
	}
}

func dump(v any) string {
	b, _ := json.MarshalIndent(v, "", "  ")
	return string(b)
}

const okRow = `{"run_id":"r","reward":1,"regime_id":"a"}`

// rowErrorCases are bad rows and the error each gives: the field and a part
// of the message. TestRowErrors runs them through DecodeObject, and
// TestRecordRowErrors through DecodeRecords and the accessors.
var rowErrorCases = []struct {
	name, row, field, msg string
}{
	{"unterminated object", `{"reward":1,"regime_id":"a"`, "regime_id", "unexpected end of line, want ',' or '}'"},
	{"not JSON", `reward=1`, "", "invalid JSON"},
	{"trailing data", `{"reward":1,"regime_id":"a"} x`, "", "after the object"},
	{"two objects", `{"reward":1,"regime_id":"a"}{"reward":1,"regime_id":"a"}`, "", "after the object"},
	{"missing reward", `{"regime_id":"a"}`, "reward", "missing"},
	{"reward string", `{"reward":"1","regime_id":"a"}`, "reward", "got string, want number"},
	{"reward bool", `{"reward":true,"regime_id":"a"}`, "reward", "got bool, want number"},
	{"reward null", `{"reward":null,"regime_id":"a"}`, "reward", "got null, want number"},
	{"reward object", `{"reward":{},"regime_id":"a"}`, "reward", "got object, want number"},
	{"reward NaN", `{"reward":NaN,"regime_id":"a"}`, "reward", `unexpected "N"`},
	{"reward Infinity", `{"reward":Infinity,"regime_id":"a"}`, "reward", `unexpected "I"`},
	{"reward -Infinity", `{"reward":-Infinity,"regime_id":"a"}`, "reward", "invalid number"},
	{"reward 1e999", `{"reward":1e999,"regime_id":"a"}`, "reward", "1e999 overflows float64"},
	{"reward -1e999", `{"reward":-1e999,"regime_id":"a"}`, "reward", "overflows float64"},
	{"reward 2e308", `{"reward":2e308,"regime_id":"a"}`, "reward", "overflows float64"},
	{"reward leading zero", `{"reward":01,"regime_id":"a"}`, "reward", "invalid JSON"},
	{"reward plus", `{"reward":+1,"regime_id":"a"}`, "reward", "invalid JSON"},
	{"reward dot", `{"reward":1.,"regime_id":"a"}`, "reward", "invalid"},
	{"reward leading dot", `{"reward":.5,"regime_id":"a"}`, "reward", "invalid JSON"},
	{"reward bare exponent", `{"reward":1e,"regime_id":"a"}`, "reward", "invalid"},
	{"reward hex", `{"reward":0x10,"regime_id":"a"}`, "reward", "invalid JSON"},
	{"overflow in an extra", `{"reward":1,"regime_id":"a","logp":1e999}`, "logp", "overflows float64"},
	{"overflow deep in an extra", `{"reward":1,"regime_id":"a","x":{"y":[1,1e400]}}`, "x", "overflows float64"},
	{"overflow in a component", `{"reward":1,"regime_id":"a","components":{"c":-1e999}}`, "components.c", "overflows float64"},
	{"NaN in an extra", `{"reward":1,"regime_id":"a","value":NaN}`, "value", "invalid JSON"},
	{"missing regime_id", `{"reward":1}`, "regime_id", "missing"},
	{"numeric regime_id", `{"reward":1,"regime_id":3}`, "regime_id", "got number, want string"},
	{"null regime_id", `{"reward":1,"regime_id":null}`, "regime_id", "got null, want string"},
	{"array instead of object", `[{"reward":1,"regime_id":"a"}]`, "", "got array, want a JSON object"},
	{"string instead of object", `"x"`, "", "got string, want a JSON object"},
	{"repeated reward", `{"reward":1,"regime_id":"a","reward":2}`, "reward", "repeated key"},
	{"repeated extra", `{"seed":1,"reward":1,"regime_id":"a","seed":1}`, "seed", "repeated key"},
	{"repeated key by escape", `{"reward":1,"regime_id":"a","rew\u0061rd":1}`, "reward", "repeated key"},
	{"repeated component", `{"reward":1,"regime_id":"a","components":{"c":1,"d":2,"c":1}}`, "components.c", "repeated key"},
	{"repeated nested key", `{"reward":1,"regime_id":"a","cfg":{"lr":1,"x":{"a":1,"a":2}}}`, "cfg", `repeated key "a"`},
	{"invalid UTF-8 in a label", "{\"reward\":1,\"regime_id\":\"a\xff\"}", "regime_id", "invalid UTF-8"},
	{"invalid UTF-8 in an extra", "{\"reward\":1,\"regime_id\":\"a\",\"note\":\"\xc3\x28\"}", "note", "invalid UTF-8"},
	{"UTF-8 surrogate", "{\"reward\":1,\"regime_id\":\"\xed\xa0\x80\"}", "regime_id", "invalid UTF-8"},
	{"invalid UTF-8 outside strings", "{\"reward\":1,\"regime_id\":\"a\"\xff}", "regime_id", "invalid UTF-8"},
	{"bad escape", `{"reward":1,"regime_id":"a\x"}`, "regime_id", "invalid escape"},
	{"bad unicode escape", `{"reward":1,"regime_id":"a\u12"}`, "regime_id", `invalid \u escape`},
	{"control character", "{\"reward\":1,\"regime_id\":\"a\tb\"}", "regime_id", "control character"},
	{"step fraction", `{"reward":1,"regime_id":"a","step":1.5}`, "step", "want an integer"},
	{"step string", `{"reward":1,"regime_id":"a","step":"3"}`, "step", "got string, want integer"},
	{"step too big", `{"reward":1,"regime_id":"a","step":9223372036854775808}`, "step", "out of the range"},
	{"components array", `{"reward":1,"regime_id":"a","components":[1]}`, "components", "got array, want object"},
	{"component string", `{"reward":1,"regime_id":"a","components":{"c":"1"}}`, "components.c", "got string, want number"},
	{"component null", `{"reward":1,"regime_id":"a","components":{"c":null}}`, "components.c", "got null, want number"},
	{"regime_origin number", `{"reward":1,"regime_id":"a","regime_origin":1}`, "regime_origin", "want string or null"},
	{"alias_of bool", `{"reward":1,"regime_id":"a","alias_of":true}`, "alias_of", "want string or null"},
	{"invalid_action string", `{"reward":1,"regime_id":"a","invalid_action":"yes"}`, "invalid_action", "got string, want bool"},
	{"effective_rank string", `{"reward":1,"regime_id":"a","effective_rank":"1"}`, "effective_rank", "want number or null"},
	{"gamma string", `{"reward":1,"regime_id":"a","gamma":"0.99"}`, "gamma", "got string, want number"},
	{"BOM on a later line", "\ufeff{\"reward\":1,\"regime_id\":\"a\"}", "", "invalid JSON"},
	{"truncated literal", `{"reward":1,"regime_id":"a","x":tru}`, "x", "invalid JSON"},
	{"missing colon", `{"reward" 1,"regime_id":"a"}`, "reward", "want ':'"},
	{"trailing comma", `{"reward":1,"regime_id":"a",}`, "regime_id", "want a key"},
}

// TestRowErrors: every bad row fails its object with an error naming the
// object URL, the 1-based line and the field. Line 1 is always good, so the
// bad row is line 2.
func TestRowErrors(t *testing.T) {
	for _, c := range rowErrorCases {
		t.Run(c.name, func(t *testing.T) {
			data := okRow + "\n" + c.row + "\n" + okRow + "\n"
			_, err := decodeAll(t, Options{Components: []string{"c"}}, object{"runs/x.jsonl", data})
			if err == nil {
				t.Fatal("no error")
			}
			de := asDataError(t, err)
			if de.URL != "mem://b/runs/x.jsonl" || de.Line != 2 || de.Field != c.field || !strings.Contains(de.Msg, c.msg) {
				t.Errorf("got URL %q line %d field %q msg %q\nwant line 2 field %q msg containing %q", de.URL, de.Line, de.Field, de.Msg, c.field, c.msg)
			}
			prefix := "mem://b/runs/x.jsonl: line 2: "
			if c.field != "" {
				prefix += c.field + ": "
			}
			if !strings.HasPrefix(err.Error(), prefix) {
				t.Errorf("message %q does not start with %q", err, prefix)
			}
		})
	}
}

func TestErrorMessage(t *testing.T) {
	_, err := decodeAll(t, Options{}, object{"runs/x.jsonl", okRow + "\n" + `{"reward":"0.5","regime_id":"a"}`})
	if got, want := err.Error(), `mem://b/runs/x.jsonl: line 2: reward: got string, want number`; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestAccepted: rows at the edges of the grammar that must pass.
func TestAccepted(t *testing.T) {
	cases := []struct {
		name, data string
		check      func(t *testing.T, tr *skyfall.Trace)
	}{
		{"BOM and CRLF", "\ufeff" + okRow + "\r\n" + okRow + "\r\n", func(t *testing.T, tr *skyfall.Trace) {
			if tr.Len() != 2 {
				t.Errorf("%d rows", tr.Len())
			}
		}},
		{"blank lines, whitespace, no final newline", "\n  \t\r\n" + " { \"reward\" : -0 , \"regime_id\" : \"a\", \"run_id\":\"r\" } " + "\n\n" + okRow, func(t *testing.T, tr *skyfall.Trace) {
			if tr.Len() != 2 {
				t.Errorf("%d rows", tr.Len())
			}
		}},
		{"escapes", `{"reward":1,"regime_id":"caf\u00e9 \ud83d\ude00 \"q\" \\ \/ \n","regime_origin":"\u0041"}`, func(t *testing.T, tr *skyfall.Trace) {
			if got, want := tr.LabelNames[0], "café 😀 \"q\" \\ / \n"; got != want {
				t.Errorf("label %q, want %q", got, want)
			}
			if tr.Origins[0] != "A" {
				t.Errorf("origin %q", tr.Origins[0])
			}
		}},
		{"raw UTF-8", `{"reward":1,"regime_id":"ключ — 鍵"}`, func(t *testing.T, tr *skyfall.Trace) {
			if got := tr.LabelNames[0]; got != "ключ — 鍵" {
				t.Errorf("label %q", got)
			}
		}},
		{"numbers", `{"reward":-12.5e-1,"regime_id":"a","step":1e2,"effective_rank":1E+2,"gamma":0.99,"x":1e-400,"y":1.7976931348623157e308}`, func(t *testing.T, tr *skyfall.Trace) {
			if tr.Rewards[0] != -1.25 || tr.Steps[0] != 100 || tr.EffRank[0] != 100 || tr.Gamma != 0.99 {
				t.Errorf("got %v %v %v %v", tr.Rewards, tr.Steps, tr.EffRank, tr.Gamma)
			}
		}},
		{"nulls are absent", `{"reward":1,"regime_id":"a","step":null,"regime_origin":null,"alias_of":null,"components":null,"invalid_action":null,"effective_rank":null,"gamma":null}`, func(t *testing.T, tr *skyfall.Trace) {
			if tr.Steps != nil || tr.Invalid != nil || tr.EffRank != nil || tr.HasGamma || tr.Origins[0] != "a" {
				t.Errorf("got %s", dump(tr))
			}
		}},
		{"full-precision floats", `{"reward":0.1234567890123456789,"regime_id":"a","components":{"c":-2.2250738585072014e-308}}`, func(t *testing.T, tr *skyfall.Trace) {
			if tr.Rewards[0] != 0.1234567890123456789 || tr.Components["c"][0] != -2.2250738585072014e-308 {
				t.Errorf("got %v %v", tr.Rewards, tr.Components)
			}
		}},
		{"deep nesting in an extra", `{"reward":1,"regime_id":"a","x":` + strings.Repeat("[", 9999) + strings.Repeat("]", 9999) + `}`, func(t *testing.T, tr *skyfall.Trace) {}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			traces := mustDecode(t, Options{Components: []string{"c"}}, object{"x", c.data})
			if len(traces) != 1 {
				t.Fatalf("%d traces", len(traces))
			}
			c.check(t, traces[0])
		})
	}
	_, err := decodeAll(t, Options{}, object{"x", `{"reward":1,"regime_id":"a","x":` + strings.Repeat("[", 10000) + strings.Repeat("]", 10000) + `}`})
	if de := asDataError(t, err); !strings.Contains(de.Msg, "nested deeper") {
		t.Errorf("got %v", err)
	}
}

// TestCompressedCorruption: a truncated gzip and a corrupt zstd stream fail
// with a DataError naming the object and the line being read.
func TestCompressedCorruption(t *testing.T) {
	var sb strings.Builder
	for i := range 2000 {
		fmt.Fprintf(&sb, `{"run_id":"r","reward":%d.%d,"regime_id":"a","obs":"%08x"}`+"\n", i, i*7919%1000, int64(i)*2654435761)
	}
	rows := []byte(sb.String())
	g := gz(t, rows)
	z := zst(t, rows)
	zc := bytes.Clone(z)
	for i := len(zc) / 2; i < len(zc)/2+64; i++ {
		zc[i] ^= 0x5a
	}
	cases := []struct {
		name string
		data []byte
		msg  string
	}{
		{"truncated gzip", g[:len(g)/2], "corrupt gzip stream: unexpected EOF"},
		{"gzip without trailer", g[:len(g)-4], "corrupt gzip stream"},
		{"gzip bad checksum", append(bytes.Clone(g[:len(g)-8]), 0, 0, 0, 0, g[len(g)-4], g[len(g)-3], g[len(g)-2], g[len(g)-1]), "corrupt gzip stream"},
		{"gzip header only", g[:5], "corrupt gzip stream"},
		{"gzip with trailing garbage", append(bytes.Clone(g), "garbage"...), "corrupt gzip stream"},
		{"truncated zstd", z[:len(z)/2], "corrupt zstd stream"},
		{"corrupt zstd", zc, "corrupt zstd stream"},
		{"zstd magic only", z[:4], "corrupt zstd stream"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := DecodeObject(testURL, "x", bytes.NewReader(c.data), Options{})
			if err == nil {
				t.Fatal("no error")
			}
			de := asDataError(t, err)
			if de.URL != testURL || de.Line < 1 || !strings.Contains(de.Msg, c.msg) {
				t.Errorf("got %v", err)
			}
			if !strings.HasPrefix(err.Error(), fmt.Sprintf("%s: line %d: ", testURL, de.Line)) {
				t.Errorf("message %q", err)
			}
		})
	}
}

// TestStorageError: a failing reader is not a data error.
func TestStorageError(t *testing.T) {
	boom := errors.New("connection reset")
	for _, data := range [][]byte{[]byte(rows0), gz(t, []byte(rows0)), zst(t, []byte(rows0))} {
		r := io.MultiReader(bytes.NewReader(data[:len(data)/2]), iotest.ErrReader(boom))
		_, err := DecodeObject(testURL, "x", r, Options{})
		var de *DataError
		if !errors.Is(err, boom) || errors.As(err, &de) || !strings.HasPrefix(err.Error(), testURL+": line ") {
			t.Errorf("got %v, want the reader's error wrapped, not a DataError", err)
		}
	}
	_, err := DecodeObject(testURL, "x", iotest.ErrReader(boom), Options{})
	if !errors.Is(err, boom) {
		t.Errorf("got %v", err)
	}
}

// TestLongLines: a row with a 50 MB components object passes under the
// default limit and fails clearly under a small one; nothing breaks at
// 64 KiB.
func TestLongLines(t *testing.T) {
	var b bytes.Buffer
	b.WriteString(okRow + "\n")
	b.WriteString(`{"run_id":"r","reward":1,"regime_id":"big","components":{`)
	n := 0
	for b.Len() < 50<<20 {
		if n > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"c%07d":0.%d`, n, int64(n)*2654435761%1000000007)
		n++
	}
	b.WriteString(`,"keep":2.5}}` + "\n" + okRow + "\n")
	data := b.Bytes()

	for _, enc := range []struct {
		name string
		data []byte
	}{{"plain", data}, {"zstd", zst(t, data)}} {
		t.Run(enc.name, func(t *testing.T) {
			o, err := DecodeObject(testURL, "x", bytes.NewReader(enc.data), Options{Components: []string{"keep", "c0000001"}})
			if err != nil {
				t.Fatal(err)
			}
			traces, err := Assemble([]*ObjectRuns{o}, Options{Components: []string{"keep", "c0000001"}})
			if err != nil {
				t.Fatal(err)
			}
			if got := traces[0].Components["keep"]; !reflect.DeepEqual(got, []float64{0, 2.5, 0}) {
				t.Errorf("keep = %v", got)
			}
			if got := traces[0].Components["c0000001"][1]; got != 0.654435747 {
				t.Errorf("c0000001 = %v", got)
			}
		})
	}

	_, err := DecodeObject(testURL, "x", bytes.NewReader(data), Options{MaxLineBytes: 1 << 20})
	de := asDataError(t, err)
	if de.Line != 2 || !errors.Is(err, ErrLimit) || !strings.Contains(err.Error(), "--max-line-bytes") || !strings.Contains(err.Error(), "1048576") {
		t.Errorf("got %v", err)
	}

	// A repeated key far into a huge object is still found.
	var dup bytes.Buffer
	dup.WriteString(`{"reward":1,"regime_id":"a","components":{`)
	for i := range 100000 {
		fmt.Fprintf(&dup, `"k%d":1,`, i)
	}
	dup.WriteString(`"k77777":2}}`)
	_, err = DecodeObject(testURL, "x", &dup, Options{})
	if de := asDataError(t, err); de.Field != "components.k77777" || !strings.Contains(de.Msg, "repeated key") {
		t.Errorf("got %v", err)
	}
}

// TestLineLimits checks the limit at its edge: a line of exactly
// MaxLineBytes passes (with or without \r), one byte more fails.
func TestLineLimits(t *testing.T) {
	row := `{"reward":1,"regime_id":"a"}`
	for _, end := range []string{"\n", "\r\n"} {
		for _, r := range []io.Reader{strings.NewReader(row + end + row + end), iotest.HalfReader(strings.NewReader(row + end + row + end))} {
			if _, err := DecodeObject(testURL, "x", r, Options{MaxLineBytes: len(row)}); err != nil {
				t.Errorf("end %q: %v", end, err)
			}
		}
		_, err := DecodeObject(testURL, "x", strings.NewReader(row+end+" "+row+end), Options{MaxLineBytes: len(row)})
		if de := asDataError(t, err); de.Line != 2 || !errors.Is(err, ErrLimit) {
			t.Errorf("end %q: got %v", end, err)
		}
	}
	// A byte-order mark does not count.
	if _, err := DecodeObject(testURL, "x", strings.NewReader("\ufeff"+row+"\r\n"), Options{MaxLineBytes: len(row)}); err != nil {
		t.Error(err)
	}
	// The last line needs no line end.
	if _, err := DecodeObject(testURL, "x", strings.NewReader(row), Options{MaxLineBytes: len(row)}); err != nil {
		t.Error(err)
	}
	if _, err := DecodeObject(testURL, "x", strings.NewReader(row+" "), Options{MaxLineBytes: len(row)}); !errors.Is(err, ErrLimit) {
		t.Errorf("got %v", err)
	}
}

// TestObjectLimit: a decompression bomb fails clearly.
func TestObjectLimit(t *testing.T) {
	bomb := bytes.Repeat([]byte(okRow+"\n"), 100000) // 4 MB, compresses ~1000:1
	for _, data := range [][]byte{bomb, gz(t, bomb), zst(t, bomb)} {
		_, err := DecodeObject(testURL, "x", bytes.NewReader(data), Options{MaxObjectBytes: 1 << 20})
		de := asDataError(t, err)
		if !errors.Is(err, ErrLimit) || !strings.Contains(de.Msg, "--max-object-bytes") || de.Line < 20000 {
			t.Errorf("got %v", err)
		}
		if _, err := DecodeObject(testURL, "x", bytes.NewReader(data), Options{MaxObjectBytes: int64(len(bomb))}); err != nil {
			t.Errorf("at the limit: %v", err)
		}
	}
}

func TestOtherLimits(t *testing.T) {
	var sb strings.Builder
	for i := range 5 {
		fmt.Fprintf(&sb, `{"run_id":"r%d","reward":1,"regime_id":"l%d"}`+"\n", i%2, i)
	}
	_, err := decodeAll(t, Options{MaxLabels: 2}, object{"x", sb.String()})
	if de := asDataError(t, err); de.Line != 5 || de.Field != "regime_id" || !errors.Is(err, ErrLimit) || !strings.Contains(de.Msg, "--max-labels") {
		t.Errorf("got %v", err)
	}
	_, err = decodeAll(t, Options{MaxRuns: 1}, object{"x", sb.String()})
	if de := asDataError(t, err); de.Line != 2 || !errors.Is(err, ErrLimit) || !strings.Contains(de.Msg, "--max-runs") {
		t.Errorf("got %v", err)
	}
	// Across objects: one run each, two in all.
	_, err = decodeAll(t, Options{MaxRuns: 1}, object{"a", `{"run_id":"a","reward":1,"regime_id":"x"}`}, object{"b", `{"run_id":"b","reward":1,"regime_id":"x"}`})
	if de := asDataError(t, err); de.URL != "mem://b/b" || !errors.Is(err, ErrLimit) {
		t.Errorf("got %v", err)
	}
	// Labels of one run split over objects.
	_, err = decodeAll(t, Options{MaxLabels: 1}, object{"a", `{"run_id":"a","reward":1,"regime_id":"x"}`}, object{"b", `{"run_id":"a","reward":1,"regime_id":"y"}`})
	if !errors.Is(err, ErrLimit) {
		t.Errorf("got %v", err)
	}
}

func TestOptions(t *testing.T) {
	for _, o := range []Options{
		{IdentityFields: []string{"run_id", "run_id"}},
		{IdentityFields: []string{"reward"}},
		{IdentityFields: []string{""}},
		{Components: []string{"a", "a"}},
	} {
		if _, err := DecodeObject(testURL, "x", strings.NewReader(okRow), o); err == nil {
			t.Errorf("%+v: no error", o)
		} else if errors.As(err, new(*DataError)) {
			t.Errorf("%+v: %v is a DataError", o, err)
		}
	}
}

// TestIdentityMustBeScalar: PROTOCOLS 1.1 makes the identity fields scalars;
// an array or object there is an error naming the object, line and field.
func TestIdentityMustBeScalar(t *testing.T) {
	for _, row := range []string{
		`{"run_id":["a"],"reward":1,"regime_id":"x"}`,
		`{"seed":{"s":1},"reward":1,"regime_id":"x"}`,
	} {
		_, err := DecodeObject("mem://b/o.jsonl", "o.jsonl", strings.NewReader(`{"reward":1,"regime_id":"x"}`+"\n"+row+"\n"), Options{})
		var de *DataError
		if !errors.As(err, &de) || de.Line != 2 || (de.Field != "run_id" && de.Field != "seed") {
			t.Errorf("%s: %v, want an identity error at line 2", row, err)
		}
		opts := recordOpts(t, "safecrl")
		_, err = DecodeRecords("mem://b/o.jsonl", "o.jsonl", strings.NewReader(strings.Replace(row, `"reward":1,"regime_id":"x"`, `"task":"t","return":1`, 1)+"\n"), opts)
		if !errors.As(err, &de) || de.Line != 1 {
			t.Errorf("records %s: %v, want an identity error at line 1", row, err)
		}
	}
}
