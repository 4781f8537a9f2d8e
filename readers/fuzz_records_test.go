package readers

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// refRecordLine reports whether the reference (encoding/json plus the
// checks it does not make: UTF-8, repeated keys, overflow) accepts line as
// one JSON object.
func refRecordLine(line []byte) bool {
	if !utf8.Valid(line) || !json.Valid(line) || refCheck(line) != nil {
		return false
	}
	return bytes.TrimLeft(line, " \t\r\n")[0] == '{'
}

// refFirstBadLine splits a plain object as PROTOCOLS 1.1 says (a BOM at the
// start skipped, '\n' ends, a '\r' before it dropped, blank lines skipped)
// and returns the 1-based number of the first line the reference rejects,
// or 0.
func refFirstBadLine(data []byte, identity []string) int {
	data = bytes.TrimPrefix(data, bom)
	for i, line := range bytes.Split(data, []byte("\n")) {
		line = bytes.TrimSuffix(line, []byte("\r"))
		if len(bytes.Trim(line, " \t\r")) == 0 {
			continue
		}
		if !refRecordLine(line) || !refScalarIdentity(line, identity) {
			return i + 1
		}
	}
	return 0
}

// refScalarIdentity reports whether every identity field of a valid line is
// a scalar or null (PROTOCOLS 1.1: identities are scalars).
func refScalarIdentity(line []byte, identity []string) bool {
	var m map[string]any
	if err := json.Unmarshal(line, &m); err != nil {
		return false
	}
	for _, f := range identity {
		switch m[f].(type) {
		case map[string]any, []any:
			return false
		}
	}
	return true
}

// sameRecord compares two records field by field: the same names (in the
// same order when ordered; nested objects are re-encoded with sorted keys),
// each value equal as a JSON value (canonical forms), and every accessor
// giving the same value, presence and failure.
func sameRecord(a, b *Record, ordered bool) error {
	ka, kb := a.Keys(), b.Keys()
	if !ordered {
		slices.Sort(ka)
		slices.Sort(kb)
	}
	if !slices.Equal(ka, kb) {
		return fmt.Errorf("keys %q and %q", a.Keys(), b.Keys())
	}
	for _, k := range ka {
		fa, fb := a.fields[a.find(k)], b.fields[b.find(k)]
		if fa.kind != fb.kind {
			return fmt.Errorf("%s: kinds %c and %c", k, fa.kind, fb.kind)
		}
		if fa.kind != kindNull {
			ca, cb := appendCanonical(nil, a.raw(fa), fa.kind), appendCanonical(nil, b.raw(fb), fb.kind)
			if !bytes.Equal(ca, cb) {
				return fmt.Errorf("%s: %q and %q", k, ca, cb)
			}
		}
		if a.Has(k) != b.Has(k) {
			return fmt.Errorf("%s: Has differs", k)
		}
		type result struct {
			V       any
			Present bool
			Err     bool
		}
		accessors := []func(r *Record) result{
			func(r *Record) result { v, ok, err := r.Number(k); return result{v, ok, err != nil} },
			func(r *Record) result { v, ok, err := r.Int(k); return result{v, ok, err != nil} },
			func(r *Record) result { v, ok, err := r.String(k); return result{v, ok, err != nil} },
			func(r *Record) result { v, ok, err := r.Bool(k); return result{v, ok, err != nil} },
			func(r *Record) result { v, ok, err := r.BoolOrNumber01(k); return result{v, ok, err != nil} },
		}
		for j, acc := range accessors {
			ra, rb := acc(a), acc(b)
			if fa, ok := ra.V.(float64); ok && fa == 0 {
				ra.V = math.Abs(fa) // "-0" is canonically 0
				rb.V = math.Abs(rb.V.(float64))
			}
			if !reflect.DeepEqual(ra, rb) {
				return fmt.Errorf("%s: accessor %d: %+v and %+v", k, j, ra, rb)
			}
		}
		oa, okA, errA := a.Object(k)
		ob, okB, errB := b.Object(k)
		if okA != okB || (errA == nil) != (errB == nil) {
			return fmt.Errorf("%s: Object differs", k)
		}
		if okA {
			if err := sameRecord(oa, ob, false); err != nil {
				return fmt.Errorf("%s.%w", k, err)
			}
		}
	}
	return nil
}

// FuzzDecodeRecords: any bytes as one object. DecodeRecords never panics;
// on plain input it accepts exactly what the reference accepts and fails at
// the first line the reference rejects; an accepted object, written again
// from its records (canonical values, no blank lines), decodes to equal
// records and assembles to the same runs.
func FuzzDecodeRecords(f *testing.F) {
	f.Add([]byte(safecrlRows))
	f.Add([]byte(rows0))
	f.Add(gz(f, []byte(safecrlRows)))
	f.Add(zst(f, []byte(rows0)))
	f.Add([]byte("\ufeff" + strings.ReplaceAll(safecrlRows, "\n", "\r\n\n  \n")))
	for _, c := range rowErrorCases {
		f.Add([]byte(okRow + "\n" + c.row + "\n"))
	}
	for _, s := range []string{
		`{}`, ` `, `[1]`, `{"run_id":1,"seed":"1"}` + "\n" + `{"run_id":"1","seed":1}`,
		`{"seed":-0,"x":-1e-400,"y":123456789012345678901234567890,"z":1.5e300,"b":[true,null,{"a":"\ud800"}]}`,
		`{"run_id":"a|seed=1"}` + "\n" + `{"run_id":"a","seed":1}`,
		`{"v":{"a":1,"b":{"c":[1,2,{"d":0.1}]}},"k\u0065y":"\u00e9\n\t\u0001"}`,
	} {
		f.Add([]byte(s))
	}
	opts := RecordOptions{IdentityFields: []string{"run_id", "seed"}, SchemaFields: []string{"v", "x"}}
	f.Fuzz(func(t *testing.T, data []byte) {
		obj, err := DecodeRecords(testURL, "k", bytes.NewReader(data), opts)
		if !bytes.HasPrefix(data, gzipMagic) && !bytes.HasPrefix(data, zstdMagic) {
			bad := refFirstBadLine(data, opts.IdentityFields)
			switch {
			case bad == 0 && err != nil:
				t.Fatalf("%q: %v; the reference accepts it", data, err)
			case bad != 0 && err == nil:
				t.Fatalf("%q: accepted; the reference rejects line %d", data, bad)
			case bad != 0 && asDataError(t, err).Line != bad:
				t.Fatalf("%q: %v; the reference rejects line %d", data, err, bad)
			}
		}
		if err != nil {
			if de := asDataError(t, err); de.URL != testURL || de.Line < 1 {
				t.Fatalf("%q: %v", data, err)
			}
			return
		}
		recs := allRecords(obj)
		if len(recs) != obj.Rows {
			t.Fatalf("%d records, %d rows", len(recs), obj.Rows)
		}
		var enc []byte
		for _, r := range recs {
			enc = append(append(enc, reencodeRecord(r)...), '\n')
		}
		obj2, err := DecodeRecords(testURL, "k", bytes.NewReader(enc), opts)
		if err != nil {
			t.Fatalf("%q re-encoded as %q: %v", data, enc, err)
		}
		recs2 := allRecords(obj2)
		if len(recs2) != len(recs) {
			t.Fatalf("%d records, %d after re-encoding", len(recs), len(recs2))
		}
		for i := range recs {
			if err := sameRecord(recs[i], recs2[i], true); err != nil {
				t.Fatalf("%q re-encoded as %q: row %d: %v", data, enc, i+1, err)
			}
		}
		runs, err := AssembleRecords([]*ObjectRecords{obj}, opts)
		runs2, err2 := AssembleRecords([]*ObjectRecords{obj2}, opts)
		if (err == nil) != (err2 == nil) {
			t.Fatalf("%q: assembly %v, after re-encoding %v", data, err, err2)
		}
		if err != nil {
			asDataError(t, err)
			return
		}
		if len(runs) != len(runs2) {
			t.Fatalf("%d runs, %d after re-encoding", len(runs), len(runs2))
		}
		for i, r := range runs {
			r2 := runs2[i]
			if r.Key != r2.Key || !reflect.DeepEqual(r.Meta, r2.Meta) || len(r.Rows) != len(r2.Rows) {
				t.Fatalf("run %d: %s %v (%d rows), after re-encoding %s %v (%d rows)", i, r.Key, r.Meta, len(r.Rows), r2.Key, r2.Meta, len(r2.Rows))
			}
			for j := range r.Rows {
				if !bytes.Equal(reencodeRecord(r.Rows[j]), reencodeRecord(r2.Rows[j])) {
					t.Fatalf("run %s row %d differs after re-encoding", r.Key, j)
				}
			}
		}
	})
}
