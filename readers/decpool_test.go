package readers

import (
	"bytes"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/crlbatch/crlbatch/protocol/skyfall"
)

// recycleObjects are objects of every shape the row decoder learns from:
// the regular and irregular shapes, keys in varying order, cached values
// that change, more keys than a key table holds (at the top level and in
// components), escaped keys, bad rows.
func recycleObjects(t *testing.T) []string {
	t.Helper()
	irregular, err := os.ReadFile("testdata/irregular.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	var many, manyComps strings.Builder
	for i := range maxKeys + 10 {
		fmt.Fprintf(&many, `,"k%d":%d`, i, i)
		fmt.Fprintf(&manyComps, `,"c%d":%d`, i, i)
	}
	wide := `{"run_id":"w","reward":1,"regime_id":"a"` + many.String() + `,"components":{"progress":1` + manyComps.String() + `}}`
	return []string{
		rows0,
		string(benchRows(40)),
		string(irregular),
		wide + "\n" + wide + "\n" + strings.Replace(wide, `"k3":3`, `"k3":3,"k3":4`, 1),
		"{\"reward\":1,\"regime_id\":\"a\",\"seed\":3}\n{\"reward\":1,\"regime_id\":\"a\",\"seed\":35}\n{\"reward\":1,\"regime_id\":\"a\",\"seed\":3.5}",
		"{\"reward\":1,\"regime_id\":\"a\\u0062\",\"gamma\":0.99}\n{\"reward\":1,\"regime_id\":\"ab\",\"gamma\":\"0.99\"}\n{\"reward\":1,\"regime_id\":\"ab\",\"gamma\":null}",
		"{\"reward\":1,\"regime_id\":\"a\",\"x\":1,\"invalid_action\":false}\n{\"reward\":1,\"regime_id\":\"a\",\"y\":2,\"x\":1}\n{\"reward\":1,\"regime_id\":\"a\",\"\\u0078x\":1,\"x\":1}",
		"{\"reward\": 1, \"regime_id\": \"a\", \"components\": {\"progress\": 1}}\n{\"reward\":1,\"regime_id\":  \"a\",\"components\":{\"progress\":\t1}}\n{\"reward\": \t1, \"regime_id\":\"a\", \"components\": {\"progress\":  }}",
		okRow + "\n{\"run_id\":\"r\",\"reward\":1,\"regime_id\":\"a\",\"reward\":2}\n" + okRow,
		rows0,
	}
}

// TestRecycledDecoderIsFresh: a row decoder that decoded any rows is,
// once recycled, what a new one is, field for field; and objects decoded
// one after another through DecodeObject's recycled decoders give what
// each gives with a new decoder of its own: runs, rows, skipped rows and
// errors.
func TestRecycledDecoderIsFresh(t *testing.T) {
	objs := recycleObjects(t)
	many := make([]string, 12)
	for i := range many {
		many[i] = fmt.Sprintf("c%d", i) // more than eight: the components' index map
	}
	for _, comps := range [][]string{nil, {"progress"}, {"progress", "success"}, many} {
		opts, err := Options{Components: comps}.normalize()
		if err != nil {
			t.Fatal(err)
		}
		p := rowDecoderPoolFor(opts.Components, opts.IdentityFields)
		d := newShapeDecoder(opts.Components, opts.IdentityFields)
		for _, o := range objs {
			// As DecodeObject decodes them: in place, a line alone where
			// that fails.
			for rest := []byte(o); len(rest) > 0; {
				if end, ok := d.decodeInPlace(rest); ok {
					rest = rest[end+1:]
					continue
				}
				line, after, _ := bytes.Cut(rest, []byte("\n"))
				d.decode(line)
				rest = after
			}
		}
		if len(d.top.keys) <= len(p.top.keys) || len(d.compKeys.keys) <= len(p.comp.keys) {
			t.Fatalf("components %q: the rows added no keys to the tables (%d, %d): the test tests nothing", comps, len(d.top.keys), len(d.compKeys.keys))
		}
		d.recycle(p.top, p.comp)
		for _, kt := range []*keyTable{d.top, d.compKeys} {
			if len(kt.keys) == 0 {
				kt.keys = nil // emptied, it keeps its room; a new table has none
			}
		}
		if fresh := newShapeDecoder(opts.Components, opts.IdentityFields); !reflect.DeepEqual(d, fresh) {
			t.Errorf("components %q: a recycled decoder differs from a new one:\n%+v\n%+v", comps, *d, *fresh)
		}
	}

	for _, skip := range []bool{false, true} {
		opts := Options{Components: []string{"progress", "success"}}
		var bad []string
		if skip {
			opts.OnBadRow = func(de *DataError) error {
				bad = append(bad, de.Error())
				return nil
			}
		}
		for round := range 2 { // the second round's decoders are the first round's
			for i, o := range objs {
				key := fmt.Sprintf("o%d.jsonl", i)
				bad = nil
				got, gotErr := DecodeObject("mem://b/"+key, key, strings.NewReader(o), opts)
				gotBad := bad

				bad = nil
				nopts, err := opts.normalize()
				if err != nil {
					t.Fatal(err)
				}
				od := newObjectDecoder(&ObjectRuns{ObjectInfo: ObjectInfo{URL: "mem://b/" + key, Key: key}, comps: nopts.Components}, nopts)
				od.release()
				// A decoder of its own, never recycled (its identity
				// fields' IDs are the pooled one's: the same interning).
				od.dec = newShapeDecoder(nopts.Components, nopts.IdentityFields)
				wantErr := readLines(&od.obj.ObjectInfo, strings.NewReader(o), nopts.MaxObjectBytes, nopts.MaxLineBytes, nil, od.line)
				want := od.obj
				if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) || !reflect.DeepEqual(gotBad, bad) {
					t.Fatalf("round %d, object %d, skipping %v: error %v, bad rows %q; with a new decoder %v, %q", round, i, skip, gotErr, gotBad, wantErr, bad)
				}
				if gotErr != nil {
					continue
				}
				if got.Rows != want.Rows || got.Skipped != want.Skipped {
					t.Fatalf("round %d, object %d: %d rows, %d skipped; with a new decoder %d, %d", round, i, got.Rows, got.Skipped, want.Rows, want.Skipped)
				}
				gt, err := Assemble([]*ObjectRuns{got}, nopts)
				if err != nil {
					t.Fatal(err)
				}
				wt, err := Assemble([]*ObjectRuns{want}, nopts)
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(traceDump(gt), traceDump(wt)) {
					t.Fatalf("round %d, object %d: runs differ from a new decoder's:\n%v\n%v", round, i, traceDump(gt), traceDump(wt))
				}
			}
		}
	}
}

// traceDump is what a test compares of assembled traces.
func traceDump(trs []*skyfall.Trace) []string {
	var out []string
	for _, tr := range trs {
		out = append(out, fmt.Sprintf("%+v", *tr))
	}
	return out
}
