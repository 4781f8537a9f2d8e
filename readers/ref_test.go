package readers

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// refRow is a decoded row in a form both decoders can produce.
type refRow struct {
	Reward  float64
	Label   string
	Origin  *string
	Alias   *string
	Step    *int64
	Comps   []float64
	Invalid int8
	EffRank *float64
	Gamma   *float64
	Extras  []refExtra // sorted by key
}

type refExtra struct {
	Key, Raw, Canon string // Canon "" for null
}

func (r *refRow) String() string { b, _ := json.Marshal(r); return string(b) }

func (r *refRow) equal(o *refRow) bool {
	f := func(a, b float64) bool { return math.Float64bits(a) == math.Float64bits(b) }
	fp := func(a, b *float64) bool { return (a == nil) == (b == nil) && (a == nil || f(*a, *b)) }
	sp := func(a, b *string) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }
	return f(r.Reward, o.Reward) && r.Label == o.Label && sp(r.Origin, o.Origin) && sp(r.Alias, o.Alias) &&
		(r.Step == nil) == (o.Step == nil) && (r.Step == nil || *r.Step == *o.Step) &&
		slices.EqualFunc(r.Comps, o.Comps, f) && r.Invalid == o.Invalid && fp(r.EffRank, o.EffRank) &&
		fp(r.Gamma, o.Gamma) && slices.Equal(r.Extras, o.Extras)
}

// fastRow runs the hand-written scanner.
func fastRow(line []byte, comps []string) (*refRow, error) {
	d := newRowDecoder(comps)
	if err := d.decode(line); err != nil {
		return nil, err
	}
	out := decodedRow(d)
	slices.SortFunc(out.Extras, func(a, b refExtra) int { return strings.Compare(a.Key, b.Key) })
	return out, nil
}

// decodedRow is the row d decoded last, extras in the order of the line.
func decodedRow(d *rowDecoder) *refRow {
	r := d.row
	out := &refRow{Reward: r.Reward, Label: string(d.label), Comps: slices.Clone(r.Comps), Invalid: r.Invalid}
	if r.HasOrigin {
		s := string(d.origin)
		out.Origin = &s
	}
	if r.HasAliasOf {
		s := string(d.alias)
		out.Alias = &s
	}
	if r.HasStep {
		out.Step = &r.Step
	}
	if r.HasEffRank {
		out.EffRank = &r.EffRank
	}
	if r.HasGamma {
		out.Gamma = &r.Gamma
	}
	for i := range d.extras {
		e := &d.extras[i]
		x := refExtra{Key: string(d.exKey(e)), Raw: string(d.exVal(e))}
		if e.kind != kindNull {
			x.Canon = string(appendCanonical(nil, d.exVal(e), e.kind))
		}
		out.Extras = append(out.Extras, x)
	}
	return out
}

// refDecode is the reference decoder: encoding/json, plus the checks it
// does not make (UTF-8, repeated keys, overflow), plus PROTOCOLS 1.1 written
// out plainly.
func refDecode(line []byte, comps []string) (*refRow, error) {
	if !utf8.Valid(line) {
		return nil, errors.New("invalid UTF-8")
	}
	if !json.Valid(line) {
		return nil, errors.New("invalid JSON")
	}
	if err := refCheck(line); err != nil {
		return nil, err
	}
	if t := bytes.TrimLeft(line, " \t\r\n"); t[0] != '{' {
		return nil, errors.New("not an object")
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(line, &top); err != nil {
		return nil, err
	}
	isNull := func(raw json.RawMessage) bool { return string(raw) == "null" }
	isNum := func(raw json.RawMessage) bool { return raw[0] == '-' || raw[0] >= '0' && raw[0] <= '9' }
	isStr := func(raw json.RawMessage) bool { return raw[0] == '"' }
	num := func(raw json.RawMessage) float64 {
		var f float64
		if err := json.Unmarshal(raw, &f); err != nil {
			panic(err)
		}
		return f
	}
	str := func(raw json.RawMessage) *string {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			panic(err)
		}
		return &s
	}
	out := &refRow{Comps: make([]float64, len(comps)), Invalid: -1}
	raw, ok := top["reward"]
	if !ok || !isNum(raw) {
		return nil, errors.New("reward")
	}
	out.Reward = num(raw)
	raw, ok = top["regime_id"]
	if !ok || !isStr(raw) {
		return nil, errors.New("regime_id")
	}
	out.Label = *str(raw)
	for _, f := range []struct {
		name string
		dst  **string
	}{{"regime_origin", &out.Origin}, {"alias_of", &out.Alias}} {
		if raw, ok := top[f.name]; ok && !isNull(raw) {
			if !isStr(raw) {
				return nil, errors.New(f.name)
			}
			*f.dst = str(raw)
		}
	}
	if raw, ok := top["step"]; ok && !isNull(raw) {
		if !isNum(raw) {
			return nil, errors.New("step")
		}
		var n int64
		if bytes.ContainsAny(raw, ".eE") {
			f := num(raw)
			if f != math.Trunc(f) || math.Abs(f) > 1<<53 {
				return nil, errors.New("step")
			}
			n = int64(f)
		} else {
			var err error
			if n, err = strconv.ParseInt(string(raw), 10, 64); err != nil {
				return nil, errors.New("step")
			}
		}
		out.Step = &n
	}
	if raw, ok := top["components"]; ok && !isNull(raw) {
		if raw[0] != '{' {
			return nil, errors.New("components")
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(raw, &m); err != nil {
			panic(err)
		}
		for k, v := range m {
			if !isNum(v) {
				return nil, errors.New("components." + k)
			}
			if i := slices.Index(comps, k); i >= 0 {
				out.Comps[i] = num(v)
			}
		}
	}
	if raw, ok := top["invalid_action"]; ok && !isNull(raw) {
		switch string(raw) {
		case "true":
			out.Invalid = 1
		case "false":
			out.Invalid = 0
		default:
			return nil, errors.New("invalid_action")
		}
	}
	if raw, ok := top["effective_rank"]; ok && !isNull(raw) {
		if !isNum(raw) {
			return nil, errors.New("effective_rank")
		}
		f := num(raw)
		out.EffRank = &f
	}
	if raw, ok := top["gamma"]; ok && !isNull(raw) {
		if !isNum(raw) {
			return nil, errors.New("gamma")
		}
		f := num(raw)
		out.Gamma = &f
	}
	for k, raw := range top {
		if slices.Contains(schemaFields, k) {
			continue
		}
		x := refExtra{Key: k, Raw: string(raw)}
		if !isNull(raw) {
			x.Canon = refCanon(raw)
		}
		out.Extras = append(out.Extras, x)
	}
	slices.SortFunc(out.Extras, func(a, b refExtra) int { return strings.Compare(a.Key, b.Key) })
	return out, nil
}

// refCheck walks the tokens: no object repeats a key, no number overflows,
// no string holds a lone surrogate.
func refCheck(line []byte) error {
	if err := refLoneSurrogate(line); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	type frame struct {
		keys   map[string]bool
		object bool
		expKey bool
	}
	var stack []*frame
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if top != nil && top.object && top.expKey {
			if d, ok := tok.(json.Delim); ok && d == '}' {
				stack = stack[:len(stack)-1]
				continue
			}
			k := tok.(string)
			if top.keys[k] {
				return fmt.Errorf("repeated key %q", k)
			}
			top.keys[k] = true
			top.expKey = false
			continue
		}
		if top != nil && top.object {
			top.expKey = true
		}
		switch t := tok.(type) {
		case json.Delim:
			switch t {
			case '{':
				stack = append(stack, &frame{keys: map[string]bool{}, object: true, expKey: true})
			case '[':
				stack = append(stack, &frame{})
			default:
				stack = stack[:len(stack)-1]
			}
		case json.Number:
			if _, err := strconv.ParseFloat(string(t), 64); err != nil {
				return fmt.Errorf("number %s: %w", t, err)
			}
		}
	}
}

// refLoneSurrogate finds an escaped UTF-16 surrogate that is not half of a
// pair in the strings of a valid JSON text (encoding/json turns it into
// U+FFFD; PROTOCOLS wants text, so it is an error).
func refLoneSurrogate(line []byte) error {
	hex := func(b []byte) (rune, bool) {
		n, err := strconv.ParseUint(string(b), 16, 32)
		return rune(n), err == nil && len(b) == 4
	}
	in := false
	for i := 0; i < len(line); i++ {
		switch c := line[i]; {
		case c == '"':
			in = !in
		case c == '\\' && in:
			if line[i+1] != 'u' {
				i++
				continue
			}
			r, _ := hex(line[i+2 : i+6])
			if r >= 0xdc00 && r <= 0xdfff {
				return fmt.Errorf("lone surrogate %s", line[i:i+6])
			}
			if r >= 0xd800 && r < 0xdc00 {
				if i+12 > len(line) || line[i+6] != '\\' || line[i+7] != 'u' {
					return fmt.Errorf("lone surrogate %s", line[i:i+6])
				}
				if r2, ok := hex(line[i+8 : i+12]); !ok || r2 < 0xdc00 || r2 > 0xdfff {
					return fmt.Errorf("lone surrogate %s", line[i:i+6])
				}
				i += 6
			}
			i += 5
		}
	}
	return nil
}

// refCanon is the canonical form per the rules in canon.go, computed from
// encoding/json's generic decoding.
func refCanon(raw []byte) string {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		panic(err)
	}
	switch v := v.(type) {
	case string:
		return "s" + v
	case json.Number:
		return "n" + refNumber(string(v))
	case bool:
		return "b" + strconv.FormatBool(v)
	}
	return "j" + refJSON(v)
}

func refNumber(s string) string {
	if !strings.ContainsAny(s, ".eE") {
		if s == "-0" {
			return "0"
		}
		return s
	}
	f, _ := strconv.ParseFloat(s, 64)
	if f == math.Trunc(f) && math.Abs(f) <= 1<<53 {
		return strconv.FormatInt(int64(f), 10)
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

func refJSON(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case string:
		return refQuote(v)
	case json.Number:
		return refNumber(string(v))
	case bool:
		return strconv.FormatBool(v)
	case []any:
		parts := make([]string, len(v))
		for i, x := range v {
			parts[i] = refJSON(x)
		}
		return "[" + strings.Join(parts, ",") + "]"
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = refQuote(k) + ":" + refJSON(v[k])
		}
		return "{" + strings.Join(parts, ",") + "}"
	}
	panic(fmt.Sprintf("%T", v))
}

func refQuote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			if r < 0x20 {
				fmt.Fprintf(&b, `\u%04x`, r)
			} else {
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}

var fuzzComps = []string{"progress", "success", "c"}

// FuzzDecodeRow feeds the same bytes to the hand-written scanner and to the
// reference decoder on encoding/json: both must fail, or both must give the
// same row.
func FuzzDecodeRow(f *testing.F) {
	for _, l := range strings.Split(rows0, "\n") {
		f.Add([]byte(l))
	}
	for _, s := range []string{
		okRow, `{"reward":1e999,"regime_id":"a"}`, `{"reward":-0,"regime_id":""}`, `{"reward":1,"regime_id":"a","x":[{"a":1,"b":{"a":2}},"\u00e9\ud800"]}`,
		`{"reward":1,"regime_id":"a","x":{"a":1,"a":2}}`, `{"reward":1.7976931348623158e308,"regime_id":"a"}`,
		`{"reward":123456789012345678901234567890e-10,"regime_id":"a","step":1e2}`, "{\"reward\":1,\"regime_id\":\"\xff\"}",
		`{"reward":0.1e1,"regime_id":"a\"\\\/\b\f\n\r\t","components":{"c":1,"d":"x"}}`, `[1,2]`, `{}`, ` `,
		`{"reward":1,"regime_id":"a","gamma":null,"step":-0,"invalid_action":true,"effective_rank":-1e-400}`,
		`{"reward":1,"regime_id":"a","k":` + strings.Repeat(`{"k":`, 40) + `1` + strings.Repeat(`}`, 40) + `}`,
	} {
		f.Add([]byte(s))
	}
	irregularSeeds(f, true)
	for _, s := range inPlaceEdges {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		checkRowInPlace(t, line)
		got, gerr := fastRow(line, fuzzComps)
		want, werr := refDecode(line, fuzzComps)
		switch {
		case gerr != nil && werr != nil:
		case gerr != nil:
			t.Fatalf("%q: scanner: %v; reference: %v", line, gerr, want)
		case werr != nil:
			t.Fatalf("%q: scanner: %v; reference: %v", line, got, werr)
		case !got.equal(want):
			t.Fatalf("%q:\nscanner   %v\nreference %v", line, got, want)
		}
	})
}

// FuzzDecodeSequence checks the fast path for rows shaped like the ones
// before (keys.go) against the general path: every line of the input goes
// through one decoder that has seen the lines before it, and through a
// fresh decoder that has seen nothing. Both must give the same row, extras
// in the same order, or the same error, field and message alike. The
// lookups of identity and metadata fields by key ID must find what a
// search by name finds. A third decoder sees the lines before too but
// never takes a row's prefix over (prefix.go): it must end every line in
// the same state as the first (samePrefixState). A fourth decodes the rows
// in place, as the line reader offers them (decodeInPlace on the bytes from
// a line's start on, the line alone where that fails): each line must give
// what the fresh decoder gives it.
func FuzzDecodeSequence(f *testing.F) {
	f.Add([]byte(rows0))
	f.Add(benchRows(40))
	f.Add([]byte(okRow + "\n" + okRow + "\n" + strings.Replace(okRow, `"run_id"`, `"run_\u0069d"`, 1)))
	for _, s := range []string{
		// A cached value continued: "3" then "35", "a" then "a"x.
		"{\"reward\":1,\"regime_id\":\"a\",\"seed\":3}\n{\"reward\":1,\"regime_id\":\"a\",\"seed\":35}\n{\"reward\":1,\"regime_id\":\"a\",\"seed\":3.5}\n{\"reward\":1,\"regime_id\":\"a\",\"seed\":3e1}",
		"{\"reward\":1,\"regime_id\":\"a\",\"t\":\"x\"}\n{\"reward\":1,\"regime_id\":\"a\"x,\"t\":\"x\"}\n{\"reward\":1,\"regime_id\":\"a\",\"t\":\"x\"y}",
		// Repeated keys, predicted and not; keys out of the usual order.
		"{\"reward\":1,\"regime_id\":\"a\",\"k\":1}\n{\"reward\":1,\"regime_id\":\"a\",\"k\":1,\"k\":1}\n{\"regime_id\":\"a\",\"k\":1,\"reward\":1,\"reward\":2}",
		"{\"reward\":1,\"regime_id\":\"a\",\"components\":{\"progress\":1,\"c\":2}}\n{\"reward\":1,\"regime_id\":\"a\",\"components\":{\"progress\":1,\"progress\":2}}\n{\"reward\":1,\"regime_id\":\"a\",\"components\":{\"c\":1 ,\"progress\":\"x\"}}",
		// gamma cached, then of another type; labels with escapes.
		"{\"reward\":1,\"regime_id\":\"a\\u0062\",\"gamma\":0.99}\n{\"reward\":1,\"regime_id\":\"a\\u0062\",\"gamma\":0.99}\n{\"reward\":1,\"regime_id\":\"ab\",\"gamma\":\"0.99\"}\n{\"reward\":1,\"regime_id\":\"ab\",\"gamma\":null}",
		// Lines that end where a value should start.
		"{\"reward\":1,\"regime_id\":\"a\",\"x\":1}\n{\"reward\":1,\"regime_id\":\"a\",\"x\":\n{\"reward\":1,\"regime_id\":\"a\",\"x\": \n{\"reward\":1,\"regime_id\":\"a\",\"x\":-",
		// Whitespace around the punctuation of a predicted key.
		"{\"reward\":1,\"regime_id\":\"a\"}\n{ \"reward\" : 1 , \"regime_id\" :\"a\" }\n{\"reward\"\t:1,\"regime_id\":\"a\"\n",
		// A key's follower changing from row to row (keyTable.after), to
		// a key written with escapes and back, and a key whose colon form is
		// over 16 bytes.
		"{\"reward\":1,\"regime_id\":\"a\",\"x\":1,\"invalid_action\":false}\n{\"reward\":1,\"regime_id\":\"a\",\"y\":2,\"x\":1}\n{\"reward\":1,\"regime_id\":\"a\",\"\\u0078x\":1,\"x\":1}\n{\"reward\":1,\"regime_id\":\"a\",\"x\":1,\"invalid_action\":false}\n{\"reward\":1,\"regime_id\":\"a\",\"x\":1,\"invalid_action\": true}",
		// Another colon form than the first row's, and whitespace after it.
		"{\"reward\": 1, \"regime_id\": \"a\", \"components\": {\"progress\": 1}}\n{\"reward\":1,\"regime_id\":  \"a\",\"components\":{\"progress\":\t1}}\n{\"reward\": \t1, \"regime_id\":\"a\", \"components\": {\"progress\":  }}\n{\"reward\": 1, \"regime_id\": \"a\", \"components\": {\"progress\": 2}}",
	} {
		f.Add([]byte(s))
	}
	// More keys than a keyTable holds, at the top level and in components;
	// then the same rows with a key repeated past the table's end.
	var many, manyComps strings.Builder
	for i := range maxKeys + 10 {
		fmt.Fprintf(&many, `,"k%d":%d`, i, i)
		fmt.Fprintf(&manyComps, `,"c%d":%d`, i, i)
	}
	wide := `{"reward":1,"regime_id":"a"` + many.String() + `,"components":{"progress":2` + manyComps.String() + `}}`
	f.Add([]byte(wide + "\n" + wide + "\n" + strings.Replace(wide, `}}`, `,"c70":1}}`, 1) + "\n" + strings.Replace(wide, `,"components"`, `,"k71":1,"components"`, 1)))
	irregularSeeds(f, false)
	for _, s := range inPlaceEdges {
		f.Add([]byte(s))
	}
	idents := DefaultIdentityFields
	f.Fuzz(func(t *testing.T, data []byte) {
		inPlaceSequence(t, data)
		seq := newRowDecoder(fuzzComps)
		plain := newRowDecoder(fuzzComps) // the same, never taking a prefix over
		plain.noPrefix = true
		var ids []uint8
		for _, name := range idents {
			ids = append(ids, seq.top.intern([]byte(name), -1))
			plain.top.intern([]byte(name), -1)
		}
		for n, line := range bytes.Split(data, []byte("\n")) {
			fresh := newRowDecoder(fuzzComps)
			gerr, werr := seq.decode(line), fresh.decode(line)
			samePrefixState(t, n+1, line, seq, gerr, plain, plain.decode(line))
			switch {
			case gerr != nil && werr != nil:
				if *gerr != *werr {
					t.Fatalf("line %d %q:\nafter the lines before: %v\nalone:                  %v", n+1, line, gerr, werr)
				}
				continue
			case gerr != nil || werr != nil:
				t.Fatalf("line %d %q:\nafter the lines before: %v\nalone:                  %v", n+1, line, gerr, werr)
			}
			got, want := decodedRow(seq), decodedRow(fresh)
			if !got.equal(want) {
				t.Fatalf("line %d %q:\nafter the lines before: %v\nalone:                  %v", n+1, line, got, want)
			}
			for i, name := range idents {
				j, k := seq.extraAt(ids[i], name, 0), fresh.findExtra(name, 0)
				if (j < 0) != (k < 0) || j >= 0 && !bytes.Equal(seq.exVal(&seq.extras[j]), fresh.exVal(&fresh.extras[k])) {
					t.Fatalf("line %d %q: field %s found at %d by ID, %d by name", n+1, line, name, j, k)
				}
			}
		}
	})
}

// inPlaceSequence decodes the lines of data with one decoder as
// DecodeObject does, each row in place from its line's start on and, where
// that fails, its line alone (a '\r' at its end dropped, as
// lineReader.finish drops it), and requires of every line what a fresh
// decoder gives on it alone: the same row, or the same error (never a row
// in place where the line alone fails).
func inPlaceSequence(t *testing.T, data []byte) {
	t.Helper()
	d := newRowDecoder(fuzzComps)
	for n, rest := 1, data; ; n++ {
		line, after, more := bytes.Cut(rest, []byte("\n"))
		line = bytes.TrimSuffix(line, []byte("\r"))
		fresh := newRowDecoder(fuzzComps)
		werr := fresh.decode(line)
		if end, ok := d.decodeInPlace(rest); ok {
			if werr != nil || end != bytes.IndexByte(rest, '\n') {
				t.Fatalf("line %d %q: a row in place, ending at %d; alone: %v", n, line, end, werr)
			}
		} else if gerr := d.decode(line); (gerr == nil) != (werr == nil) || gerr != nil && *gerr != *werr {
			t.Fatalf("line %d %q: after a try in place %v; alone: %v", n, line, gerr, werr)
		}
		if werr == nil && !decodedRow(d).equal(decodedRow(fresh)) {
			t.Fatalf("line %d %q:\nin place %v\nalone    %v", n, line, decodedRow(d), decodedRow(fresh))
		}
		if !more {
			return
		}
		rest = after
	}
}

// samePrefixState fails t unless seq, which takes prefixes over, and plain,
// which never does, decoded line (line n of a sequence both decoded) to the
// same error, the same extras and the same state of the value cache.
func samePrefixState(t *testing.T, n int, line []byte, seq *rowDecoder, serr *rowError, plain *rowDecoder, perr *rowError) {
	t.Helper()
	if (serr == nil) != (perr == nil) || serr != nil && *serr != *perr {
		t.Fatalf("line %d %q: with prefixes %v, without %v", n, line, serr, perr)
	}
	if serr == nil {
		if !slices.Equal(seq.extras, plain.extras) || seq.exSeen != plain.exSeen || seq.exHits != plain.exHits {
			t.Fatalf("line %d %q: with prefixes extras %v (seen %x, hits %x), without %v (%x, %x)", n, line,
				seq.extras, seq.exSeen, seq.exHits, plain.extras, plain.exSeen, plain.exHits)
		}
		for m := seq.exSeen; m != 0; m &= m - 1 {
			if id := bits.TrailingZeros64(m); seq.exAt[id] != plain.exAt[id] {
				t.Fatalf("line %d %q: key %d at extra %d with prefixes, %d without", n, line, id, seq.exAt[id], plain.exAt[id])
			}
		}
		if !decodedRow(seq).equal(decodedRow(plain)) {
			t.Fatalf("line %d %q: with prefixes %v, without %v", n, line, decodedRow(seq), decodedRow(plain))
		}
	}
	if seq.cacheGen != plain.cacheGen || len(seq.top.keys) != len(plain.top.keys) {
		t.Fatalf("line %d %q: cache generation %d with prefixes, %d without; keys %d, %d", n, line,
			seq.cacheGen, plain.cacheGen, len(seq.top.keys), len(plain.top.keys))
	}
	// What the key table records of the keys read (predictions, their
	// tries and misses): as reading them one by one would.
	st, pt := seq.top, plain.top
	if st.first != pt.first || st.firstAlt != pt.firstAlt || st.after != pt.after || st.nKeys != pt.nKeys ||
		st.nMisses != pt.nMisses || st.findFirst != pt.findFirst || st.windows != pt.windows {
		t.Fatalf("line %d %q: key table first %d/%d, %d tries, %d misses, find first %v (%d) with prefixes; %d/%d, %d, %d, %v (%d) without",
			n, line, st.first, st.firstAlt, st.nKeys, st.nMisses, st.findFirst, st.windows,
			pt.first, pt.firstAlt, pt.nKeys, pt.nMisses, pt.findFirst, pt.windows)
	}
	for i := range seq.top.keys {
		a, b := &seq.top.keys[i], &plain.top.keys[i]
		if a.next != b.next || a.alt != b.alt {
			t.Fatalf("line %d %q: key %q followed by %d, %d with prefixes, by %d, %d without", n, line, a.name, a.next, a.alt, b.next, b.alt)
		}
		hits := a.hits // and the rows that took the prefix over since its hits were added
		if seq.pfx.ids&(1<<i) != 0 {
			hits += seq.pfx.credit
		}
		if !bytes.Equal(a.name, b.name) || !bytes.Equal(a.last, b.last) || a.gen != b.gen || a.off != b.off || hits != b.hits || a.misses != b.misses {
			t.Fatalf("line %d %q: key %q cached %q (gen %d, off %v, %d hits, %d misses) with prefixes, key %q %q (%d, %v, %d, %d) without",
				n, line, a.name, a.last, a.gen, a.off, hits, a.misses, b.name, b.last, b.gen, b.off, b.hits, b.misses)
		}
	}
}
