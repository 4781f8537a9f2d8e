package readers

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
)

// recordOpts returns the options of a record protocol.
func recordOpts(t testing.TB, protocol string) RecordOptions {
	t.Helper()
	o, err := protocolRecordOptions(protocol)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// skyfallRecordOpts describe skyfall rows to the generic decoder.
var skyfallRecordOpts = RecordOptions{Protocol: "skyfall", IdentityFields: DefaultIdentityFields, SchemaFields: schemaFields}

// decodeRecordsAll decodes objects (already in key order) and assembles them.
func decodeRecordsAll(t testing.TB, opts RecordOptions, objs ...object) ([]*RecordRun, error) {
	t.Helper()
	var decoded []*ObjectRecords
	for _, o := range objs {
		d, err := DecodeRecords("mem://b/"+o.key, o.key, strings.NewReader(o.data), opts)
		if err != nil {
			return nil, err
		}
		decoded = append(decoded, d)
	}
	return AssembleRecords(decoded, opts)
}

func mustDecodeRecords(t testing.TB, opts RecordOptions, objs ...object) []*RecordRun {
	t.Helper()
	runs, err := decodeRecordsAll(t, opts, objs...)
	if err != nil {
		t.Fatal(err)
	}
	return runs
}

// allRecords lists an object's records in line order.
func allRecords(o *ObjectRecords) []*Record {
	var recs []*Record
	for _, p := range o.parts {
		recs = append(recs, p.rows...)
	}
	slices.SortFunc(recs, func(a, b *Record) int { return a.line - b.line })
	return recs
}

// skyfallRecordSchema checks a row against PROTOCOLS 1.1 through the
// accessors, as a protocol on top of DecodeRecords would.
func skyfallRecordSchema(r *Record) error {
	if _, ok, err := r.Number("reward"); err != nil {
		return err
	} else if !ok {
		return r.MissingError("reward", "number")
	}
	if _, ok, err := r.String("regime_id"); err != nil {
		return err
	} else if !ok {
		return r.MissingError("regime_id", "string")
	}
	for _, f := range []string{"regime_origin", "alias_of"} {
		if _, _, err := r.String(f); err != nil {
			return err
		}
	}
	if _, _, err := r.Int("step"); err != nil {
		return err
	}
	comps, ok, err := r.Object("components")
	if err != nil {
		return err
	}
	if ok {
		for _, k := range comps.Keys() {
			if _, ok, err := comps.Number(k); err != nil {
				return err
			} else if !ok {
				return comps.MissingError(k, "number")
			}
		}
	}
	if _, _, err := r.Bool("invalid_action"); err != nil {
		return err
	}
	for _, f := range []string{"effective_rank", "gamma"} {
		if _, _, err := r.Number(f); err != nil {
			return err
		}
	}
	return nil
}

// TestRecordRowErrors runs the skyfall reader's error corpus through the
// generic decoder. Every line that is not one valid JSON object fails
// DecodeRecords itself, with the skyfall reader's field and message; the
// rows that are valid JSON but break the skyfall schema pass the decoder and
// fail the accessors, again naming the line and the field.
func TestRecordRowErrors(t *testing.T) {
	accessorLevel := map[string]bool{
		"missing reward": true, "reward string": true, "reward bool": true, "reward null": true, "reward object": true,
		"missing regime_id": true, "numeric regime_id": true, "null regime_id": true,
		"step fraction": true, "step string": true, "step too big": true,
		"components array": true, "component string": true, "component null": true,
		"regime_origin number": true, "alias_of bool": true, "invalid_action string": true,
		"effective_rank string": true, "gamma string": true,
	}
	// Where the generic decoder words it differently: components is an
	// ordinary field for it (errors inside it name the top-level field, as
	// for any nested value), and the accessors accept null without saying so.
	override := map[string]struct{ field, msg string }{
		"overflow in a component": {"components", "number -1e999 overflows float64"},
		"repeated component":      {"components", `repeated key "c" in an object`},
		"regime_origin number":    {"regime_origin", "got number, want string"},
		"alias_of bool":           {"alias_of", "got bool, want string"},
		"effective_rank string":   {"effective_rank", "got string, want number"},
	}
	names := map[string]bool{}
	for _, c := range rowErrorCases {
		names[c.name] = true
	}
	for n := range accessorLevel {
		if !names[n] {
			t.Errorf("accessorLevel names %q, not in rowErrorCases", n)
		}
	}
	for n := range override {
		if !names[n] {
			t.Errorf("override names %q, not in rowErrorCases", n)
		}
	}
	for _, c := range rowErrorCases {
		t.Run(c.name, func(t *testing.T) {
			field, msg := c.field, c.msg
			if o, ok := override[c.name]; ok {
				field, msg = o.field, o.msg
			}
			data := okRow + "\n" + c.row + "\n" + okRow + "\n"
			obj, err := DecodeRecords("mem://b/runs/x.jsonl", "runs/x.jsonl", strings.NewReader(data), skyfallRecordOpts)
			if accessorLevel[c.name] {
				if err != nil {
					t.Fatalf("DecodeRecords: %v; want it to pass and the accessors to fail", err)
				}
				for _, r := range allRecords(obj) {
					if err = skyfallRecordSchema(r); err != nil {
						break
					}
				}
			} else if err == nil {
				t.Fatal("DecodeRecords accepted the row")
			}
			if err == nil {
				t.Fatal("no error")
			}
			de := asDataError(t, err)
			if de.URL != "mem://b/runs/x.jsonl" || de.Line != 2 || de.Field != field || !strings.Contains(de.Msg, msg) {
				t.Errorf("got URL %q line %d field %q msg %q\nwant line 2 field %q msg containing %q", de.URL, de.Line, de.Field, de.Msg, field, msg)
			}
			prefix := "mem://b/runs/x.jsonl: line 2: "
			if field != "" {
				prefix += field + ": "
			}
			if !strings.HasPrefix(err.Error(), prefix) {
				t.Errorf("message %q does not start with %q", err, prefix)
			}
		})
	}
}

// TestRecordAccepted: the edges of the grammar that must pass, as in
// TestAccepted.
func TestRecordAccepted(t *testing.T) {
	cases := []struct {
		name, data string
		lines      []int
		check      func(t *testing.T, recs []*Record)
	}{
		{"BOM and CRLF", "\ufeff" + `{"a":"x"}` + "\r\n" + `{"a":"y"}` + "\r\n", []int{1, 2}, func(t *testing.T, recs []*Record) {
			if s, _, _ := recs[0].String("a"); s != "x" {
				t.Errorf("a = %q", s)
			}
			if s, _, _ := recs[1].String("a"); s != "y" {
				t.Errorf("a = %q", s)
			}
		}},
		{"blank lines, whitespace, no final newline", "\n  \t\r\n" + ` { "a" : -0 , "b" : [ 1 , { } ] } ` + "\n\n" + `{}`, []int{3, 5}, func(t *testing.T, recs []*Record) {
			if v, ok, err := recs[0].Number("a"); v != 0 || !ok || err != nil {
				t.Errorf("a = %v %v %v", v, ok, err)
			}
			if raw, _ := recs[0].Raw("b"); string(raw) != "[ 1 , { } ]" {
				t.Errorf("raw b = %q", raw)
			}
			if len(recs[1].Keys()) != 0 {
				t.Errorf("keys %q", recs[1].Keys())
			}
		}},
		{"escapes", `{"s":"caf\u00e9 \ud83d\ude00 \"q\" \\ \/ \n","k\u0065y":1}`, []int{1}, func(t *testing.T, recs []*Record) {
			if s, _, _ := recs[0].String("s"); s != "café 😀 \"q\" \\ / \n" {
				t.Errorf("s = %q", s)
			}
			if !recs[0].Has("key") {
				t.Errorf("keys %q", recs[0].Keys())
			}
		}},
		{"raw UTF-8", `{"ключ":"ключ — 鍵"}`, []int{1}, func(t *testing.T, recs []*Record) {
			if s, _, _ := recs[0].String("ключ"); s != "ключ — 鍵" {
				t.Errorf("s = %q", s)
			}
		}},
		{"numbers", `{"r":-12.5e-1,"i":1e2,"e":1E+2,"g":0.99,"x":1e-400,"y":1.7976931348623157e308,"p":0.1234567890123456789}`, []int{1}, func(t *testing.T, recs []*Record) {
			r := recs[0]
			for _, c := range []struct {
				f string
				v float64
			}{{"r", -1.25}, {"i", 100}, {"e", 100}, {"g", 0.99}, {"x", 0}, {"y", math.MaxFloat64}, {"p", 0.1234567890123456789}} {
				if v, ok, err := r.Number(c.f); v != c.v || !ok || err != nil {
					t.Errorf("%s = %v %v %v, want %v", c.f, v, ok, err, c.v)
				}
			}
			if n, _, err := r.Int("i"); n != 100 || err != nil {
				t.Errorf("i = %v %v", n, err)
			}
		}},
		{"deep nesting", `{"x":` + strings.Repeat("[", 9999) + strings.Repeat("]", 9999) + `}`, []int{1}, func(t *testing.T, recs []*Record) {}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			obj, err := DecodeRecords(testURL, "x", strings.NewReader(c.data), RecordOptions{IdentityFields: []string{}})
			if err != nil {
				t.Fatal(err)
			}
			recs := allRecords(obj)
			var lines []int
			for _, r := range recs {
				lines = append(lines, r.Line())
				if r.URL() != testURL {
					t.Errorf("URL %q", r.URL())
				}
			}
			if !slices.Equal(lines, c.lines) || obj.Rows != len(c.lines) {
				t.Fatalf("lines %v (%d rows), want %v", lines, obj.Rows, c.lines)
			}
			c.check(t, recs)
		})
	}
	_, err := DecodeRecords(testURL, "x", strings.NewReader(`{"x":`+strings.Repeat("[", 10000)+strings.Repeat("]", 10000)+`}`), RecordOptions{IdentityFields: []string{}})
	if de := asDataError(t, err); !strings.Contains(de.Msg, "nested deeper") || de.Field != "x" {
		t.Errorf("got %v", err)
	}
}

// TestRecordAccessors: every accessor's values, absences and type errors.
func TestRecordAccessors(t *testing.T) {
	line := `{"n":1.5,"i":42,"ie":1e2,"if":1.5,"ibig":9223372036854775808,"imax":-9223372036854775808,"ihuge":1e300,"neg0":-0,` +
		`"s":"x\u00e9","b":true,"f":false,"z":0,"one":1.0,"half":0.5,"two":2,"nul":null,` +
		`"obj":{"a":1,"b":{"c":"d"},"n":null},"arr":[1],"e":""}`
	obj, err := DecodeRecords(testURL, "x", strings.NewReader("\n"+line+"\n"), RecordOptions{IdentityFields: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	r := allRecords(obj)[0]
	num := func(f string) func(*Record) (any, bool, error) {
		return func(r *Record) (any, bool, error) { return r.Number(f) }
	}
	integer := func(f string) func(*Record) (any, bool, error) {
		return func(r *Record) (any, bool, error) { return r.Int(f) }
	}
	str := func(f string) func(*Record) (any, bool, error) {
		return func(r *Record) (any, bool, error) { return r.String(f) }
	}
	boolean := func(f string) func(*Record) (any, bool, error) {
		return func(r *Record) (any, bool, error) { return r.Bool(f) }
	}
	b01 := func(f string) func(*Record) (any, bool, error) {
		return func(r *Record) (any, bool, error) { return r.BoolOrNumber01(f) }
	}
	object := func(f string) func(*Record) (any, bool, error) {
		return func(r *Record) (any, bool, error) {
			o, ok, err := r.Object(f)
			if o == nil {
				return nil, ok, err
			}
			return strings.Join(o.Keys(), ","), ok, err
		}
	}
	nested := func(path ...string) func(*Record) (any, bool, error) {
		return func(r *Record) (any, bool, error) {
			for _, p := range path[:len(path)-1] {
				o, _, err := r.Object(p)
				if err != nil {
					return nil, false, err
				}
				r = o
			}
			return r.Number(path[len(path)-1])
		}
	}
	cases := []struct {
		name    string
		call    func(*Record) (any, bool, error)
		want    any
		present bool
		field   string // of the error; "" for none
		msg     string
	}{
		{"number", num("n"), 1.5, true, "", ""},
		{"number of an integer", num("i"), 42.0, true, "", ""},
		{"number of -0", num("neg0"), 0.0, true, "", ""},
		{"number missing", num("missing"), 0.0, false, "", ""},
		{"number null", num("nul"), 0.0, false, "", ""},
		{"number of a string", num("s"), 0.0, false, "s", "got string, want number"},
		{"number of a bool", num("b"), 0.0, false, "b", "got bool, want number"},
		{"number of an object", num("obj"), 0.0, false, "obj", "got object, want number"},
		{"number of an array", num("arr"), 0.0, false, "arr", "got array, want number"},
		{"int", integer("i"), int64(42), true, "", ""},
		{"int 1e2", integer("ie"), int64(100), true, "", ""},
		{"int -0", integer("neg0"), int64(0), true, "", ""},
		{"int min", integer("imax"), int64(math.MinInt64), true, "", ""},
		{"int fraction", integer("if"), int64(0), false, "if", "got 1.5, want an integer"},
		{"int out of range", integer("ibig"), int64(0), false, "ibig", "9223372036854775808 is out of the range of a 64-bit integer"},
		{"int beyond 2^53", integer("ihuge"), int64(0), false, "ihuge", "got 1e300, want an integer"},
		{"int null", integer("nul"), int64(0), false, "", ""},
		{"int of a string", integer("s"), int64(0), false, "s", "got string, want integer"},
		{"string", str("s"), "xé", true, "", ""},
		{"empty string", str("e"), "", true, "", ""},
		{"string missing", str("missing"), "", false, "", ""},
		{"string null", str("nul"), "", false, "", ""},
		{"string of a number", str("i"), "", false, "i", "got number, want string"},
		{"string of an object", str("obj"), "", false, "obj", "got object, want string"},
		{"bool true", boolean("b"), true, true, "", ""},
		{"bool false", boolean("f"), false, true, "", ""},
		{"bool null", boolean("nul"), false, false, "", ""},
		{"bool of 0", boolean("z"), false, false, "z", "got number, want bool"},
		{"bool of a string", boolean("s"), false, false, "s", "got string, want bool"},
		{"01 true", b01("b"), 1.0, true, "", ""},
		{"01 false", b01("f"), 0.0, true, "", ""},
		{"01 0", b01("z"), 0.0, true, "", ""},
		{"01 -0", b01("neg0"), 0.0, true, "", ""},
		{"01 1.0", b01("one"), 1.0, true, "", ""},
		{"01 null", b01("nul"), 0.0, false, "", ""},
		{"01 missing", b01("missing"), 0.0, false, "", ""},
		{"01 0.5", b01("half"), 0.0, false, "half", "got 0.5, want true, false, 0 or 1"},
		{"01 2", b01("two"), 0.0, false, "two", "got 2, want true, false, 0 or 1"},
		{"01 of a string", b01("s"), 0.0, false, "s", "got string, want true, false, 0 or 1"},
		{"object", object("obj"), "a,b,n", true, "", ""},
		{"object null", object("nul"), nil, false, "", ""},
		{"object of an array", object("arr"), nil, false, "arr", "got array, want object"},
		{"object of a string", object("s"), nil, false, "s", "got string, want object"},
		{"nested number", nested("obj", "a"), 1.0, true, "", ""},
		{"nested null", nested("obj", "n"), 0.0, false, "", ""},
		{"nested type error", nested("obj", "b", "c"), 0.0, false, "obj.b.c", "got string, want number"},
		{"nested object of a number", nested("obj", "a", "x"), nil, false, "obj.a", "got number, want object"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, present, err := c.call(r)
			if c.field == "" {
				if err != nil {
					t.Fatalf("error %v", err)
				}
				if !reflect.DeepEqual(got, c.want) || present != c.present {
					t.Errorf("got %#v %v, want %#v %v", got, present, c.want, c.present)
				}
				if f, ok := got.(float64); ok && f == 0 && math.Signbit(f) != (c.name == "number of -0") {
					t.Errorf("got %v with sign bit %v", f, math.Signbit(f)) // -0 stays -0 as a number (as skyfall's reward), is 0 as a 0/1
				}
				return
			}
			if err == nil {
				t.Fatalf("got %#v %v, want an error", got, present)
			}
			de := asDataError(t, err)
			if de.URL != testURL || de.Line != 2 || de.Field != c.field || de.Msg != c.msg || present {
				t.Errorf("got %v (field %q, present %v), want line 2, field %q, %q", err, de.Field, present, c.field, c.msg)
			}
			if want := fmt.Sprintf("%s: line 2: %s: %s", testURL, c.field, c.msg); err.Error() != want {
				t.Errorf("message %q, want %q", err, want)
			}
		})
	}

	// Has, Raw, Keys.
	if !r.Has("n") || r.Has("nul") || r.Has("missing") {
		t.Error("Has")
	}
	if raw, ok := r.Raw("nul"); !ok || string(raw) != "null" {
		t.Errorf("Raw(nul) = %q %v", raw, ok)
	}
	if raw, ok := r.Raw("obj"); !ok || string(raw) != `{"a":1,"b":{"c":"d"},"n":null}` {
		t.Errorf("Raw(obj) = %q %v", raw, ok)
	}
	if _, ok := r.Raw("missing"); ok {
		t.Error("Raw(missing)")
	}
	if got := r.Keys(); len(got) != 19 || got[0] != "n" || got[18] != "e" {
		t.Errorf("Keys %q", got)
	}

	// Errors for the protocol's own checks.
	o, _, _ := r.Object("obj")
	b, _, _ := o.Object("b")
	for _, c := range []struct {
		err  *DataError
		want string
	}{
		{r.MissingError("return", "number"), testURL + ": line 2: return: missing (a number is required)"},
		{r.MissingError("nul", "number"), testURL + ": line 2: nul: got null, want number"},
		{r.MissingError("episode", "integer"), testURL + ": line 2: episode: missing (an integer is required)"},
		{b.MissingError("d", "string"), testURL + ": line 2: obj.b.d: missing (a string is required)"},
		{o.MissingError("n", "number"), testURL + ": line 2: obj.n: got null, want number"},
		{r.Errorf("success", "got %v, want 0 or 1", 0.5), testURL + ": line 2: success: got 0.5, want 0 or 1"},
		{b.Errorf("c", "unknown"), testURL + ": line 2: obj.b.c: unknown"},
	} {
		if c.err.Error() != c.want {
			t.Errorf("got %q, want %q", c.err, c.want)
		}
	}
}

// TestRecordManyFields: a record with many fields looks them up by index;
// a big nested object too.
func TestRecordManyFields(t *testing.T) {
	var sb strings.Builder
	sb.WriteString(`{"cfg":{`)
	for i := range 1000 {
		if i > 0 {
			sb.WriteByte(',')
		}
		fmt.Fprintf(&sb, `"k%d":%d`, i, i)
	}
	sb.WriteString(`}`)
	for i := range 40 {
		fmt.Fprintf(&sb, `,"f%d":"v%d"`, i, i)
	}
	sb.WriteString("}\n")
	obj, err := DecodeRecords(testURL, "x", strings.NewReader(sb.String()), RecordOptions{IdentityFields: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	r := allRecords(obj)[0]
	if s, ok, err := r.String("f37"); s != "v37" || !ok || err != nil {
		t.Errorf("f37 = %q %v %v", s, ok, err)
	}
	if r.Has("f40") {
		t.Error("f40")
	}
	cfg, _, err := r.Object("cfg")
	if err != nil {
		t.Fatal(err)
	}
	if n, ok, err := cfg.Int("k777"); n != 777 || !ok || err != nil {
		t.Errorf("k777 = %v %v %v", n, ok, err)
	}
	if len(cfg.Keys()) != 1000 {
		t.Errorf("%d keys", len(cfg.Keys()))
	}
	// Metadata over many fields.
	runs := mustDecodeRecords(t, RecordOptions{IdentityFields: []string{}}, object{"x", sb.String() + sb.String()})
	if len(runs[0].Meta) != 42 || runs[0].Meta["f0"] != "v0" {
		t.Errorf("meta %d", len(runs[0].Meta))
	}
}

// safecrlRows: two runs interleaved (the second with seed 1.0 = 1), an
// anonymous row, tasks revisited.
const safecrlRows = `{"run_id":"r1","seed":0,"algorithm_id":"ppo-lag","policy_id":"mlp","env":"safety-gym","task":"push","episode":0,"return":1.5,"cost":0,"success":false,"lr":0.001}
{"run_id":"r2","seed":1,"algorithm_id":"sac","policy_id":"mlp","env":"safety-gym","task":"goal","episode":0,"return":-2,"cost":1.25,"success":1}
{"run_id":"r1","seed":0,"algorithm_id":"ppo-lag","policy_id":"mlp","env":"safety-gym","task":"goal","episode":1,"return":2.5,"success":true,"lr":0.0005}
{"task":"push","episode":0,"return":0.25}
{"run_id":"r2","seed":1.0,"algorithm_id":"sac","policy_id":"mlp","env":"safety-gym","task":"goal","episode":1,"return":-1,"cost":null,"success":0}
{"run_id":"r1","seed":0,"algorithm_id":"ppo-lag","policy_id":"mlp","env":"safety-gym","task":"push","episode":2,"return":3,"cost":0.5,"success":true,"lr":0.0005}
`

// recordSummary renders runs for comparisons: key, metadata and each row as
// "line: canonical fields".
type recordSummary struct {
	Key  string
	Meta map[string]string
	Rows []string
}

func summarize(runs []*RecordRun) []recordSummary {
	out := make([]recordSummary, len(runs))
	for i, r := range runs {
		out[i] = recordSummary{Key: r.Key, Meta: r.Meta}
		for _, rec := range r.Rows {
			out[i].Rows = append(out[i].Rows, fmt.Sprintf("%d: %s", rec.Line(), reencodeRecord(rec)))
		}
	}
	return out
}

// reencodeRecord writes rec as compact JSON: its fields in line order, each
// value in canonical form.
func reencodeRecord(rec *Record) []byte {
	b := []byte{'{'}
	for i, f := range rec.fields {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendQuoted(b, []byte(rec.keys.names[f.key]))
		b = append(b, ':')
		if f.kind == kindNull {
			b = append(b, "null"...)
			continue
		}
		c := appendCanonical(nil, rec.raw(f), f.kind)
		if c[0] == tagString {
			b = appendQuoted(b, c[1:])
		} else {
			b = append(b, c[1:]...)
		}
	}
	return append(b, '}')
}

// TestRecordConformance: plain, gzip and zstd (also multi-member and
// multi-frame, also read one byte at a time) give identical records,
// whatever the name.
func TestRecordConformance(t *testing.T) {
	opts := recordOpts(t, "safecrl")
	half := strings.Index(safecrlRows, "\n{\"task\"") + 1
	cases := []struct {
		name   string
		format Format
		data   []byte
	}{
		{"x.jsonl", Plain, []byte(safecrlRows)},
		{"x.jsonl.gz", Gzip, gz(t, []byte(safecrlRows))},
		{"x.jsonl.zst", Zstd, zst(t, []byte(safecrlRows))},
		{"x.jsonl.zst", Plain, []byte(safecrlRows)},
		{"x.jsonl", Gzip, gz(t, []byte(safecrlRows))},
		{"x.jsonl.gz", Zstd, zst(t, []byte(safecrlRows))},
		{"x.bin", Gzip, append(gz(t, []byte(safecrlRows[:half])), gz(t, []byte(safecrlRows[half:]))...)},
		{"x.bin", Zstd, append(zst(t, []byte(safecrlRows[:half])), zst(t, []byte(safecrlRows[half:]))...)},
		{"x.crlf", Plain, []byte("\ufeff" + strings.ReplaceAll(safecrlRows, "\n", "\r\n"))},
	}
	want := []recordSummary{
		{"run_id=r1|seed=0|algorithm_id=ppo-lag|policy_id=mlp", map[string]string{
			"run_id": "r1", "seed": "0", "algorithm_id": "ppo-lag", "policy_id": "mlp", "env": "safety-gym", "source": "x"}, []string{
			`1: {"run_id":"r1","seed":0,"algorithm_id":"ppo-lag","policy_id":"mlp","env":"safety-gym","task":"push","episode":0,"return":1.5,"cost":0,"success":false,"lr":0.001}`,
			`3: {"run_id":"r1","seed":0,"algorithm_id":"ppo-lag","policy_id":"mlp","env":"safety-gym","task":"goal","episode":1,"return":2.5,"success":true,"lr":0.0005}`,
			`6: {"run_id":"r1","seed":0,"algorithm_id":"ppo-lag","policy_id":"mlp","env":"safety-gym","task":"push","episode":2,"return":3,"cost":0.5,"success":true,"lr":0.0005}`,
		}},
		{"run_id=r2|seed=1|algorithm_id=sac|policy_id=mlp", map[string]string{
			"run_id": "r2", "seed": "1", "algorithm_id": "sac", "policy_id": "mlp", "env": "safety-gym", "source": "x"}, []string{
			`2: {"run_id":"r2","seed":1,"algorithm_id":"sac","policy_id":"mlp","env":"safety-gym","task":"goal","episode":0,"return":-2,"cost":1.25,"success":1}`,
			`5: {"run_id":"r2","seed":1,"algorithm_id":"sac","policy_id":"mlp","env":"safety-gym","task":"goal","episode":1,"return":-1,"cost":null,"success":0}`,
		}},
		{"anonymous:x", map[string]string{"source": "x"}, []string{`4: {"task":"push","episode":0,"return":0.25}`}},
	}
	for i, c := range cases {
		t.Run(fmt.Sprintf("%d-%s-%s", i, c.name, c.format), func(t *testing.T) {
			for _, r := range []io.Reader{bytes.NewReader(c.data), iotest.OneByteReader(bytes.NewReader(c.data))} {
				o, err := DecodeRecords("mem://b/"+c.name, "x", r, opts)
				if err != nil {
					t.Fatal(err)
				}
				if o.Format != c.format || o.Rows != 6 || o.Lines != 6 || o.NumRuns() != 3 {
					t.Errorf("format %v rows %d lines %d runs %d, want %v 6 6 3", o.Format, o.Rows, o.Lines, o.NumRuns(), c.format)
				}
				if got := o.RunKeys(); !slices.Equal(got, []string{want[0].Key, want[1].Key, want[2].Key}) {
					t.Errorf("run keys %q", got)
				}
				if o.MemBytes() < int64(len(safecrlRows)) {
					t.Errorf("MemBytes %d", o.MemBytes())
				}
				runs, err := AssembleRecords([]*ObjectRecords{o}, opts)
				if err != nil {
					t.Fatal(err)
				}
				if got := summarize(runs); !reflect.DeepEqual(got, want) {
					t.Errorf("got\n%s\nwant\n%s", dump(got), dump(want))
				}
			}
		})
	}
}

// TestRecordCompressedCorruption and storage errors, as for DecodeObject.
func TestRecordCompressedCorruption(t *testing.T) {
	var sb strings.Builder
	for i := range 2000 {
		fmt.Fprintf(&sb, `{"run_id":"r","return":%d.%d,"task":"a","obs":"%08x"}`+"\n", i, i*7919%1000, int64(i)*2654435761)
	}
	rows := []byte(sb.String())
	g := gz(t, rows)
	z := zst(t, rows)
	zc := bytes.Clone(z)
	for i := len(zc) / 2; i < len(zc)/2+64; i++ {
		zc[i] ^= 0x5a
	}
	opts := recordOpts(t, "safecrl")
	for _, c := range []struct {
		name string
		data []byte
		msg  string
	}{
		{"truncated gzip", g[:len(g)/2], "corrupt gzip stream: unexpected EOF"},
		{"gzip without trailer", g[:len(g)-4], "corrupt gzip stream"},
		{"gzip header only", g[:5], "corrupt gzip stream"},
		{"gzip with trailing garbage", append(bytes.Clone(g), "garbage"...), "corrupt gzip stream"},
		{"truncated zstd", z[:len(z)/2], "corrupt zstd stream"},
		{"corrupt zstd", zc, "corrupt zstd stream"},
		{"zstd magic only", z[:4], "corrupt zstd stream"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := DecodeRecords(testURL, "x", bytes.NewReader(c.data), opts)
			if err == nil {
				t.Fatal("no error")
			}
			de := asDataError(t, err)
			if de.URL != testURL || de.Line < 1 || !strings.Contains(de.Msg, c.msg) ||
				!strings.HasPrefix(err.Error(), fmt.Sprintf("%s: line %d: ", testURL, de.Line)) {
				t.Errorf("got %v", err)
			}
		})
	}

	boom := errors.New("connection reset")
	for _, data := range [][]byte{[]byte(safecrlRows), gz(t, []byte(safecrlRows)), zst(t, []byte(safecrlRows))} {
		r := io.MultiReader(bytes.NewReader(data[:len(data)/2]), iotest.ErrReader(boom))
		_, err := DecodeRecords(testURL, "x", r, opts)
		var de *DataError
		if !errors.Is(err, boom) || errors.As(err, &de) || !strings.HasPrefix(err.Error(), testURL+": line ") {
			t.Errorf("got %v, want the reader's error wrapped, not a DataError", err)
		}
	}
	if _, err := DecodeRecords(testURL, "x", iotest.ErrReader(boom), opts); !errors.Is(err, boom) {
		t.Errorf("got %v", err)
	}
}

// TestRecordLimits: MaxLineBytes, MaxObjectBytes and MaxRuns as in
// DecodeObject.
func TestRecordLimits(t *testing.T) {
	opts := recordOpts(t, "safecrl")
	row := `{"task":"a","return":1}`
	for _, end := range []string{"\n", "\r\n"} {
		o := opts
		o.MaxLineBytes = len(row)
		if _, err := DecodeRecords(testURL, "x", iotest.HalfReader(strings.NewReader("\ufeff"+row+end+row+end)), o); err != nil {
			t.Errorf("end %q: %v", end, err)
		}
		_, err := DecodeRecords(testURL, "x", strings.NewReader(row+end+" "+row+end), o)
		if de := asDataError(t, err); de.Line != 2 || !errors.Is(err, ErrLimit) || !strings.Contains(de.Msg, "--max-line-bytes") {
			t.Errorf("end %q: got %v", end, err)
		}
	}

	bomb := bytes.Repeat([]byte(row+"\n"), 100000)
	for _, data := range [][]byte{bomb, gz(t, bomb), zst(t, bomb)} {
		o := opts
		o.MaxObjectBytes = 1 << 20
		_, err := DecodeRecords(testURL, "x", bytes.NewReader(data), o)
		if de := asDataError(t, err); !errors.Is(err, ErrLimit) || !strings.Contains(de.Msg, "--max-object-bytes") || de.Line < 20000 {
			t.Errorf("got %v", err)
		}
		o.MaxObjectBytes = int64(len(bomb))
		if _, err := DecodeRecords(testURL, "x", bytes.NewReader(data), o); err != nil {
			t.Errorf("at the limit: %v", err)
		}
	}

	var sb strings.Builder
	for i := range 5 {
		fmt.Fprintf(&sb, `{"run_id":"r%d","task":"a","return":1}`+"\n", i%2)
	}
	o := opts
	o.MaxRuns = 1
	_, err := decodeRecordsAll(t, o, object{"x", sb.String()})
	if de := asDataError(t, err); de.Line != 2 || !errors.Is(err, ErrLimit) || !strings.Contains(de.Msg, "--max-runs") {
		t.Errorf("got %v", err)
	}
	_, err = decodeRecordsAll(t, o, object{"a", `{"run_id":"a","task":"x","return":1}`}, object{"b", `{"run_id":"b","task":"x","return":1}`})
	if de := asDataError(t, err); de.URL != "mem://b/b" || de.Line != 1 || !errors.Is(err, ErrLimit) {
		t.Errorf("got %v", err)
	}
	o.MaxRuns = -1
	if runs := mustDecodeRecords(t, o, object{"x", sb.String()}); len(runs) != 2 {
		t.Errorf("%d runs", len(runs))
	}
}

func TestRecordOptions(t *testing.T) {
	safecrl := recordOpts(t, "safecrl")
	for _, c := range []struct {
		opts RecordOptions
		msg  string
	}{
		{RecordOptions{}, "IdentityFields is not set"},
		{RecordOptions{IdentityFields: []string{"run_id", "run_id"}}, `identity field "run_id" is named twice`},
		{RecordOptions{IdentityFields: []string{""}}, "identity field 1 is empty"},
		{RecordOptions{IdentityFields: []string{"task"}, SchemaFields: []string{"task"}}, `"task" is a row field of the protocol`},
		{RecordOptions{IdentityFields: []string{}, SchemaFields: []string{"a", "a"}}, `row field "a" is named twice`},
		{RecordOptions{IdentityFields: []string{}, SchemaFields: []string{""}}, "row field 1 is empty"},
		{RecordOptions{Protocol: "safecrl", IdentityFields: []string{"run_id", "task"}, SchemaFields: safecrl.SchemaFields}, `"task" is a row field of safecrl`},
	} {
		_, err := DecodeRecords(testURL, "x", strings.NewReader(`{}`), c.opts)
		if err == nil || errors.As(err, new(*DataError)) || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%+v: got %v, want a plain error with %q", c.opts, err, c.msg)
		}
		if _, err := AssembleRecords(nil, c.opts); err == nil {
			t.Errorf("%+v: AssembleRecords accepted", c.opts)
		}
	}
	// Fresh copies.
	a, b := recordOpts(t, "contilab"), recordOpts(t, "contilab")
	a.IdentityFields[0], a.SchemaFields[0] = "x", "y"
	if b.IdentityFields[0] != "run_id" || b.SchemaFields[0] != "kind" {
		t.Error("protocolRecordOptions shares its slices")
	}
	for _, p := range []string{"safecrl", "contilab", "skillshift"} {
		o := recordOpts(t, p)
		if o.Protocol != p {
			t.Errorf("%s: protocol %q", p, o.Protocol)
		}
		if _, err := o.normalize(); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
	if got := recordOpts(t, "skillshift").IdentityFields; !slices.Equal(got, []string{"method", "run_id", "seed", "algorithm_id", "policy_id"}) {
		t.Errorf("skillshift identity %q", got)
	}

	// AssembleRecords checks the order of the objects and the options they
	// were decoded with.
	o1, _ := DecodeRecords("u1", "b", strings.NewReader(`{"run_id":"r"}`), safecrl)
	o2, _ := DecodeRecords("u2", "a", strings.NewReader(`{"run_id":"r"}`), safecrl)
	if _, err := AssembleRecords([]*ObjectRecords{o1, o2}, safecrl); err == nil || !strings.Contains(err.Error(), "order") {
		t.Errorf("got %v", err)
	}
	if _, err := AssembleRecords([]*ObjectRecords{o2, o2}, safecrl); err == nil {
		t.Error("repeated key accepted")
	}
	if _, err := AssembleRecords([]*ObjectRecords{o1}, recordOpts(t, "skillshift")); err == nil || !strings.Contains(err.Error(), "decoded with") {
		t.Errorf("got %v", err)
	}
	// Assembling twice gives the same runs.
	x, _ := AssembleRecords([]*ObjectRecords{o2, o1}, safecrl)
	y, _ := AssembleRecords([]*ObjectRecords{o2, o1}, safecrl)
	if !reflect.DeepEqual(summarize(x), summarize(y)) || len(x) != 1 || len(x[0].Rows) != 2 {
		t.Errorf("got %s and %s", dump(summarize(x)), dump(summarize(y)))
	}
}

// TestRecordRuns: identity, anonymous rows, reassembly across objects and
// metadata, with each protocol's identity and row fields.
func TestRecordRuns(t *testing.T) {
	cases := []struct {
		name     string
		protocol string
		objs     []object
		want     []recordSummary // Rows as "key:line"
	}{
		{"safecrl: task is a row field, neither identity nor metadata", "safecrl", []object{{"a", lines(
			`{"run_id":"r","seed":1,"algorithm_id":"ppo","policy_id":"p","task":"push","episode":0,"return":1,"cost":0,"success":true,"env":"sg"}`,
			`{"run_id":"r","seed":1.0,"algorithm_id":"ppo","policy_id":"p","task":"push","episode":1,"return":1,"cost":0,"success":true,"env":"sg"}`,
			`{"run_id":"q","seed":1,"task":"goal","episode":0,"return":1,"cost":0,"success":true,"env":"sg"}`,
		)}}, []recordSummary{
			{"run_id=r|seed=1|algorithm_id=ppo|policy_id=p", map[string]string{"run_id": "r", "seed": "1", "algorithm_id": "ppo", "policy_id": "p", "env": "sg", "source": "a"}, []string{"a:1", "a:2"}},
			{"run_id=q|seed=1", map[string]string{"run_id": "q", "seed": "1", "env": "sg", "source": "a"}, []string{"a:3"}},
		}},
		{"contilab: kinds, scenario and benchmark metadata", "contilab", []object{{"m.jsonl", lines(
			`{"run_id":"r","seed":0,"algorithm_id":"ewc","scenario":"class-il","benchmark":"split-mnist","kind":"matrix","after_task":0,"eval_task":0,"acc":0.9}`,
			`{"run_id":"r","seed":0,"algorithm_id":"ewc","scenario":"class-il","benchmark":"split-mnist","kind":"matrix","after_task":1,"eval_task":0,"acc":0.5}`,
			`{"run_id":"r","seed":0,"algorithm_id":"ewc","scenario":"class-il","benchmark":"split-mnist","kind":"stream","step":10,"train_task":0,"eval_task":0,"acc":0.7}`,
			`{"run_id":"r","seed":0,"algorithm_id":"ewc","scenario":"class-il","benchmark":"split-mnist","kind":"diag","name":"effective_rank","task":0,"value":12}`,
			`{"run_id":"r","seed":0,"algorithm_id":"ewc","scenario":"class-il","benchmark":"split-mnist","kind":"curve","task":1,"batch":0,"acc":0.1}`,
			`{"run_id":"s","seed":0,"algorithm_id":"ewc","kind":"matrix","after_task":0,"eval_task":0,"acc":0.8,"name":"x","value":1,"task":0,"batch":0,"step":1,"train_task":0}`,
			`{"run_id":"s","seed":0,"algorithm_id":"ewc","kind":"matrix","after_task":0,"eval_task":0,"acc":0.8,"name":"x","value":1,"task":0,"batch":0,"step":1,"train_task":0}`,
		)}}, []recordSummary{
			{"run_id=r|seed=0|algorithm_id=ewc", map[string]string{"run_id": "r", "seed": "0", "algorithm_id": "ewc", "scenario": "class-il", "benchmark": "split-mnist", "source": "m.jsonl"},
				[]string{"m.jsonl:1", "m.jsonl:2", "m.jsonl:3", "m.jsonl:4", "m.jsonl:5"}},
			// Every row field constant over the run, and still no metadata.
			{"run_id=s|seed=0|algorithm_id=ewc", map[string]string{"run_id": "s", "seed": "0", "algorithm_id": "ewc", "source": "m.jsonl"}, []string{"m.jsonl:6", "m.jsonl:7"}},
		}},
		{"skillshift: method leads the key", "skillshift", []object{{"awm.jsonl", lines(
			`{"uid":1,"site":"gitlab","condition":"src","success":true,"steps":7,"method":"AWM","seed":0,"model":"gpt-4o"}`,
			`{"uid":2,"site":"gitlab","condition":"src","success":0,"steps":12,"skill_calls":3,"skill_failures":1,"seed":0,"method":"AWM","model":"gpt-4o"}`,
			`{"uid":1,"site":"gitlab","condition":"src","success":1,"steps":5,"method":"SkillWeaver","run_id":"r","seed":0,"model":"gpt-4o"}`,
		)}}, []recordSummary{
			{"method=AWM|seed=0", map[string]string{"method": "AWM", "seed": "0", "model": "gpt-4o", "source": "awm.jsonl"}, []string{"awm.jsonl:1", "awm.jsonl:2"}},
			{"method=SkillWeaver|run_id=r|seed=0", map[string]string{"method": "SkillWeaver", "run_id": "r", "seed": "0", "model": "gpt-4o", "source": "awm.jsonl"}, []string{"awm.jsonl:3"}},
		}},
		{"identity values compare as JSON values", "safecrl", []object{{"a", lines(
			`{"seed":1,"return":1}`, `{"seed":1.0,"return":1}`, `{"seed":1e0,"return":1}`, `{"seed":10e-1,"return":1}`,
			`{"seed":-0,"run_id":"\u00e9","return":1}`, `{"run_id":"é","seed":0,"return":1}`, `{"seed":-0.0,"run_id":"é","return":1}`,
			`{"seed":9007199254740993,"return":1}`, `{"seed":9007199254740992,"return":1}`, `{"seed":9007199254740992.0,"return":1}`,
			`{"run_id":true,"seed":1.0,"return":1}`, `{"seed":1,"run_id":true,"return":1}`,
		)}}, []recordSummary{
			{"seed=1", map[string]string{"seed": "1", "source": "a"}, nil},
			{"run_id=é|seed=0", map[string]string{"run_id": "é", "seed": "0", "source": "a"}, nil},
			{"seed=9007199254740993", map[string]string{"seed": "9007199254740993", "source": "a"}, nil},
			{"seed=9007199254740992", map[string]string{"seed": "9007199254740992", "source": "a"}, nil},
			{`run_id=true|seed=1`, map[string]string{"run_id": "true", "seed": "1", "source": "a"}, nil},
		}},
		{"null is absent; a missing field is another identity", "safecrl", []object{{"a", lines(
			`{"run_id":"r","return":1}`, `{"run_id":"r","seed":null,"return":1}`,
			`{"run_id":null,"seed":null,"return":1}`, `{"return":1}`, `{"run_id":"r","seed":1,"return":1}`,
		)}}, []recordSummary{
			{"run_id=r", map[string]string{"run_id": "r", "source": "a"}, []string{"a:1", "a:2"}},
			{"anonymous:a", map[string]string{"source": "a"}, []string{"a:3", "a:4"}},
			{"run_id=r|seed=1", map[string]string{"run_id": "r", "seed": "1", "source": "a"}, []string{"a:5"}},
		}},
		{"anonymous rows: one run per object, never merged", "contilab", []object{
			{"a", lines(`{"kind":"joint","eval_task":0,"acc":1}`, `{"run_id":"r","kind":"joint","eval_task":0,"acc":1}`, `{"kind":"joint","eval_task":1,"acc":1}`)},
			{"b", lines(`{"kind":"joint","eval_task":0,"acc":1}`)},
		}, []recordSummary{
			{"anonymous:a", map[string]string{"source": "a"}, []string{"a:1", "a:3"}},
			{"run_id=r", map[string]string{"run_id": "r", "source": "a"}, []string{"a:2"}},
			{"anonymous:b", map[string]string{"source": "b"}, []string{"b:1"}},
		}},
		{"split across objects: object order, then line order; source from the first", "safecrl", []object{
			{"runs/a.jsonl", lines(
				`{"run_id":"r2","episode":5,"task":"t","return":1,"k":1,"v":1,"only_a":1}`,
				`{"run_id":"r1","episode":0,"task":"t","return":1}`,
				`{"run_id":"r2","episode":4,"task":"t","return":1,"k":1,"v":1,"only_a":1}`,
			)},
			{"runs/b.jsonl.gz", lines(
				`{"run_id":"r0","episode":0,"task":"t","return":1}`,
				`{"run_id":"r2","episode":3,"task":"t","return":1,"k":1.0,"v":2}`,
				`{"run_id":"r1","episode":1,"task":"t","return":1,"source":"sim"}`,
			)},
			{"runs/c", lines(`{"run_id":"r2","episode":0,"task":"t","return":1,"k":1e0,"v":2}`)},
		}, []recordSummary{
			{"run_id=r2", map[string]string{"run_id": "r2", "k": "1", "source": "runs/a.jsonl"}, []string{"runs/a.jsonl:1", "runs/a.jsonl:3", "runs/b.jsonl.gz:2", "runs/c:1"}},
			{"run_id=r1", map[string]string{"run_id": "r1", "source": "runs/a.jsonl"}, []string{"runs/a.jsonl:2", "runs/b.jsonl.gz:3"}},
			{"run_id=r0", map[string]string{"run_id": "r0", "source": "runs/b.jsonl.gz"}, []string{"runs/b.jsonl.gz:1"}},
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			runs := mustDecodeRecords(t, recordOpts(t, c.protocol), c.objs...)
			var got []recordSummary
			for _, r := range runs {
				s := recordSummary{Key: r.Key, Meta: r.Meta}
				for _, rec := range r.Rows {
					s.Rows = append(s.Rows, strings.TrimPrefix(rec.URL(), "mem://b/")+":"+fmt.Sprint(rec.Line()))
				}
				got = append(got, s)
			}
			for i := range c.want {
				if c.want[i].Rows == nil && i < len(got) {
					got[i].Rows = nil // only keys and metadata checked
				}
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("got\n%s\nwant\n%s", dump(got), dump(c.want))
			}
		})
	}
}

// TestRecordMetadataRendering: metadata renders exactly as skyfall's.
func TestRecordMetadataRendering(t *testing.T) {
	row := `{"run_id":"r","s":"text with | and =","t":true,"f":false,"i":42,"neg":-7,"big":123456789012345678901234567890,` +
		`"fl":0.1,"one":1.0,"tiny":0.00001,"huge":1.5e6,"huger":1.5e16,"frac":1234567.5,"e21":1e21,"third":0.3333333333333333,` +
		`"o":{"b":[1.50,{"d":null,"c":"\u00e9\n"}],"a":1e0},"arr":[],"eo":{},"nul":null,"source":"sim","reward":1,"regime_id":"x"}`
	want := map[string]string{
		"run_id": "r", "s": "text with | and =", "t": "true", "f": "false", "i": "42", "neg": "-7",
		"big": "123456789012345678901234567890", "fl": "0.1", "one": "1", "tiny": "1e-05", "huge": "1500000", "huger": "1.5e+16", "frac": "1.2345675e+06",
		"e21": "1e+21", "third": "0.3333333333333333", "o": `{"a":1,"b":[1.5,{"c":"é\n","d":null}]}`,
		"arr": "[]", "eo": "{}", "source": "dir/a.jsonl",
	}
	runs := mustDecodeRecords(t, RecordOptions{IdentityFields: []string{"run_id"}, SchemaFields: []string{"reward", "regime_id"}}, object{"dir/a.jsonl", lines(row, row)})
	if !reflect.DeepEqual(runs[0].Meta, want) {
		t.Errorf("meta\n%v\nwant\n%v", runs[0].Meta, want)
	}
	traces := mustDecode(t, Options{IdentityFields: []string{"run_id"}}, object{"dir/a.jsonl", lines(row, row)})
	if !reflect.DeepEqual(traces[0].Meta, want) {
		t.Errorf("skyfall meta\n%v\nwant\n%v", traces[0].Meta, want)
	}
}

// TestRecordRunKeyCollision: distinct identities that render the same key
// stop the job with an error naming both.
func TestRecordRunKeyCollision(t *testing.T) {
	cases := []struct {
		name     string
		protocol string
		objs     []object
		msg      []string
	}{
		{"string and number, one object", "safecrl", []object{{"a", lines(
			`{"run_id":"1","return":1}`,
			`{"run_id":1,"return":1}`,
		)}}, []string{"mem://b/a: line 2: ", `run key "run_id=1"`, `run_id="1" (string)`, `run_id=1 (number)`, "mem://b/a line 1"}},
		{"string and number, two objects", "contilab", []object{
			{"a", lines(`{"run_id":"r","seed":"1","acc":1}`)},
			{"b", lines(`{"run_id":"q","acc":1}`, `{"run_id":"r","seed":1,"acc":1}`)},
		}, []string{"mem://b/b: line 2: ", `run key "run_id=r|seed=1"`, `seed="1" (string)`, `seed=1 (number)`, "mem://b/a line 1"}},
		{"separator inside a value", "skillshift", []object{{"a", lines(
			`{"method":"a|run_id=1","uid":1}`,
			`{"method":"a","run_id":1,"uid":2}`,
		)}}, []string{`method="a|run_id=1" (string)`, `method="a" (string), run_id=1 (number)`}},
		{"bool and string", "safecrl", []object{{"a", lines(
			`{"run_id":true,"return":1}`,
			`{"run_id":"true","return":1}`,
		)}}, []string{`run_id=true (bool)`, `run_id="true" (string)`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := decodeRecordsAll(t, recordOpts(t, c.protocol), c.objs...)
			if err == nil {
				t.Fatal("no error")
			}
			asDataError(t, err)
			for _, m := range c.msg {
				if !strings.Contains(err.Error(), m) {
					t.Errorf("%v\ndoes not name %s", err, m)
				}
			}
		})
	}
}

// TestRecordsMatchSkyfall: over random sweeps (genObjects: runs split across
// objects, anonymous rows, equal values written differently, run-key
// collisions, bad lines), the generic decoder with skyfall's identity and
// row fields forms the same runs as the skyfall reader: the same keys, the
// same metadata, the same rows, and the same errors.
func TestRecordsMatchSkyfall(t *testing.T) {
	errs := 0
	for seed := range uint64(300) {
		objs := genObjects(seed)
		traces, terr := decodeAll(t, Options{}, objs...)
		runs, rerr := decodeRecordsAll(t, skyfallRecordOpts, objs...)
		if rerr == nil {
		check:
			for _, r := range runs {
				for _, rec := range r.Rows {
					if rerr = skyfallRecordSchema(rec); rerr != nil {
						break check
					}
				}
			}
		}
		if (terr == nil) != (rerr == nil) {
			t.Fatalf("seed %d: skyfall: %v; records: %v", seed, terr, rerr)
		}
		if terr != nil {
			errs++
			td, rd := asDataError(t, terr), asDataError(t, rerr)
			if td.URL != rd.URL || td.Line != rd.Line || strings.Contains(td.Msg, "run key") && td.Error() != rd.Error() {
				t.Fatalf("seed %d:\nskyfall: %v\nrecords: %v", seed, terr, rerr)
			}
			continue
		}
		if len(traces) != len(runs) {
			t.Fatalf("seed %d: %d traces, %d runs", seed, len(traces), len(runs))
		}
		for i, tr := range traces {
			r := runs[i]
			if tr.Key != r.Key || !reflect.DeepEqual(tr.Meta, r.Meta) || tr.Len() != len(r.Rows) {
				t.Fatalf("seed %d run %d:\nskyfall %s %v (%d rows)\nrecords %s %v (%d rows)", seed, i, tr.Key, tr.Meta, tr.Len(), r.Key, r.Meta, len(r.Rows))
			}
			for j, rec := range r.Rows {
				reward, _, _ := rec.Number("reward")
				label, _, _ := rec.String("regime_id")
				if reward != tr.Rewards[j] || label != tr.LabelNames[tr.Labels[j]] {
					t.Fatalf("seed %d run %s row %d: %v %q, skyfall %v %q", seed, r.Key, j, reward, label, tr.Rewards[j], tr.LabelNames[tr.Labels[j]])
				}
			}
		}
	}
	if errs == 0 || errs == 300 {
		t.Errorf("%d of 300 sweeps failed: the sample misses a case", errs)
	}
}

// Two objects of a safecrl sweep: run r1 is split across them.
func ExampleAssembleRecords() {
	a := `{"run_id":"r1","seed":1,"algorithm_id":"ppo-lag","task":"push","episode":0,"return":1.5,"cost":0,"success":false,"env":"sg"}
{"run_id":"r1","seed":1,"algorithm_id":"ppo-lag","task":"goal","episode":1,"return":2.5,"success":true,"env":"sg"}
`
	b := `{"run_id":"r1","seed":1.0,"algorithm_id":"ppo-lag","task":"push","episode":2,"return":3,"cost":0.5,"success":1,"env":"sg"}
{"task":"push","episode":0,"return":"oops"}
`
	// A record protocol's options: its identity and its row fields.
	opts := RecordOptions{
		Protocol:       "safecrl",
		IdentityFields: []string{"run_id", "seed", "algorithm_id", "policy_id"},
		SchemaFields:   []string{"task", "episode", "return", "cost", "success"},
	}
	var objs []*ObjectRecords
	for _, o := range []struct{ key, data string }{{"2024/a.jsonl", a}, {"2024/b.jsonl.gz", b}} {
		obj, err := DecodeRecords("s3://bucket/runs/"+o.key, o.key, strings.NewReader(o.data), opts)
		if err != nil {
			fmt.Println(err)
			return
		}
		objs = append(objs, obj)
	}
	runs, err := AssembleRecords(objs, opts)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, r := range runs {
		fmt.Println(r.Key, r.Meta)
		for _, rec := range r.Rows {
			task, _, _ := rec.String("task")
			ret, ok, err := rec.Number("return")
			if err != nil {
				fmt.Println(" ", err)
				continue
			}
			success, hasSuccess, _ := rec.BoolOrNumber01("success")
			fmt.Println(" ", task, ret, ok, success, hasSuccess)
		}
	}
	// Output:
	// run_id=r1|seed=1|algorithm_id=ppo-lag map[algorithm_id:ppo-lag env:sg run_id:r1 seed:1 source:2024/a.jsonl]
	//   push 1.5 true 0 true
	//   goal 2.5 true 1 true
	//   push 3 true 1 true
	// anonymous:2024/b.jsonl.gz map[source:2024/b.jsonl.gz]
	//   s3://bucket/runs/2024/b.jsonl.gz: line 2: return: got string, want number
}

// The identity and row fields of the record protocols (PROTOCOLS 3, 4, 5),
// as their adapters in scoring/ declare them: test fixtures of this package.
var (
	recordIdentity           = []string{"run_id", "seed", "algorithm_id", "policy_id"}
	skillshiftRecordIdentity = []string{"method", "run_id", "seed", "algorithm_id", "policy_id"}

	safecrlRowFields    = []string{"task", "episode", "return", "cost", "success"}
	contilabRowFields   = []string{"kind", "after_task", "eval_task", "acc", "step", "train_task", "task", "batch", "name", "value"}
	skillshiftRowFields = []string{"uid", "site", "condition", "success", "steps", "skill_calls", "skill_failures"}
)

// protocolRecordOptions returns the RecordOptions of a record protocol,
// with default limits:
//
//	protocol     identity fields                                  row fields (never metadata)
//	safecrl      run_id, seed, algorithm_id, policy_id            task, episode, return, cost, success
//	contilab     run_id, seed, algorithm_id, policy_id            kind, after_task, eval_task, acc, step,
//	                                                              train_task, task, batch, name, value
//	skillshift   method, run_id, seed, algorithm_id, policy_id    uid, site, condition, success, steps,
//	                                                              skill_calls, skill_failures
//
// The slices are fresh copies; the caller may replace IdentityFields
// (--identity-fields) and set the limits.
func protocolRecordOptions(protocol string) (RecordOptions, error) {
	o := RecordOptions{Protocol: protocol}
	switch protocol {
	case "safecrl":
		o.IdentityFields, o.SchemaFields = recordIdentity, safecrlRowFields
	case "contilab":
		o.IdentityFields, o.SchemaFields = recordIdentity, contilabRowFields
	case "skillshift":
		o.IdentityFields, o.SchemaFields = skillshiftRecordIdentity, skillshiftRowFields
	default:
		return o, fmt.Errorf("readers: %q is not a record protocol (safecrl, contilab, skillshift)", protocol)
	}
	o.IdentityFields = slices.Clone(o.IdentityFields)
	o.SchemaFields = slices.Clone(o.SchemaFields)
	return o, nil
}
