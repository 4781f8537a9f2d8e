package readers

import (
	"strings"
	"testing"
)

// The reading faults of issue 13 (findings 9 and 11).

// TestLoneSurrogates (issue 13, finding 9): an escaped lone UTF-16
// surrogate denotes no Unicode character, so a string holding one is not
// text (PROTOCOLS 1.1: rows are UTF-8; RFC 7493 forbids them). It is a bad
// row naming the field, never U+FFFD: "A\ud800" and "A\udfff" were one
// label.
func TestLoneSurrogates(t *testing.T) {
	cases := []struct {
		name, row, field, msg string
	}{
		{"high in a label", `{"reward":1,"regime_id":"A\ud800"}`, "regime_id", `lone surrogate \ud800 at column 27`},
		{"low in a label", `{"reward":1,"regime_id":"A\udfff"}`, "regime_id", `lone surrogate \udfff`},
		{"high before a non-surrogate escape", `{"reward":1,"regime_id":"\ud800\u0041"}`, "regime_id", `lone surrogate \ud800`},
		{"high then high", `{"reward":1,"regime_id":"\ud800\ud800"}`, "regime_id", `lone surrogate \ud800`},
		{"high at the end", `{"reward":1,"regime_id":"x\uDBFF"}`, "regime_id", `lone surrogate \uDBFF`},
		{"in an origin", `{"reward":1,"regime_id":"a","regime_origin":"\udc00"}`, "regime_origin", "lone surrogate"},
		{"in an alias", `{"reward":1,"regime_id":"a","alias_of":"\udc00"}`, "alias_of", "lone surrogate"},
		{"in an identity field", `{"run_id":"r\ud800","reward":1,"regime_id":"a"}`, "run_id", "lone surrogate"},
		{"deep in an extra", `{"reward":1,"regime_id":"a","x":[{"a":1,"b":{"a":"\ud800"}}]}`, "x", "lone surrogate"},
		{"in a key", `{"reward":1,"regime_id":"a","k\ud800":1}`, "", `lone surrogate \ud800 in a key`},
		{"in a components key", `{"reward":1,"regime_id":"a","components":{"c":1,"\udfffc":2}}`, "components", "lone surrogate \\udfff in a key"},
		{"in a nested key", `{"reward":1,"regime_id":"a","x":{"\ud800":1}}`, "x", "lone surrogate \\ud800 in a key"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			data := okRow + "\n" + c.row + "\n"
			_, err := decodeAll(t, Options{Components: []string{"c"}}, object{"runs/x.jsonl", data})
			if err == nil {
				t.Fatal("accepted")
			}
			de := asDataError(t, err)
			if de.Line != 2 || de.Field != c.field || !strings.Contains(de.Msg, c.msg) || !strings.HasPrefix(de.Msg, "invalid text: ") {
				t.Errorf("got %v\nwant line 2, field %q, message containing %q", err, c.field, c.msg)
			}
			// The record protocols read rows with the same lexer.
			_, err = decodeRecordsAll(t, RecordOptions{IdentityFields: []string{"run_id"}}, object{"runs/x.jsonl", data})
			if err == nil || !strings.Contains(err.Error(), "lone surrogate") || asDataError(t, err).Line != 2 {
				t.Errorf("records: %v", err)
			}
		})
	}

	// The two labels of the finding no longer merge into one: both rows are
	// bad, and with --max-bad-rows both are skipped and named.
	data := `{"reward":1,"regime_id":"A\ud800"}` + "\n" + `{"reward":2,"regime_id":"A\udfff"}` + "\n" + `{"reward":3,"regime_id":"B"}` + "\n"
	var bad []*DataError
	obj, err := DecodeObject(testURL, "x", strings.NewReader(data), Options{OnBadRow: func(de *DataError) error {
		bad = append(bad, de)
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	if obj.Skipped != 2 || obj.Rows != 1 || len(bad) != 2 || bad[0].Line != 1 || bad[1].Line != 2 {
		t.Fatalf("skipped %d rows %d bad %v", obj.Skipped, obj.Rows, bad)
	}
	if got, want := bad[0].Error(), testURL+`: line 1: regime_id: invalid text: lone surrogate \ud800 at column 27 (a string must be Unicode text)`; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}

	// Valid pairs are text, as they always were.
	tr := mustDecode(t, Options{}, object{"x", `{"reward":1,"regime_id":"\ud83d\ude00\uD800\uDC00"}`})
	if got := tr[0].LabelNames[0]; got != "😀\U00010000" {
		t.Errorf("label %q", got)
	}
}

// TestKeyErrors (issue 13, finding 11): an error inside a key is said of the
// key, not of the field before it ("regime_id" was blamed for invalid UTF-8
// in the next key).
func TestKeyErrors(t *testing.T) {
	cases := []struct {
		name, row, field, msg string
	}{
		{"invalid UTF-8 in a key", "{\"reward\":1,\"regime_id\":\"a\",\"k\xff\":1}", "", "invalid UTF-8 in a key at column 31"},
		{"invalid UTF-8 in the first key", "{\"k\xff\":1,\"reward\":1,\"regime_id\":\"a\"}", "", "invalid UTF-8 in a key at column 4"},
		{"control character in a key", "{\"regime_id\":\"a\",\"k\x01\":1,\"reward\":1}", "", "control character 0x01 in a key"},
		{"bad escape in a key", `{"reward":1,"regime_id":"a","k\q":1}`, "", `invalid escape "\\q" in a key`},
		{"invalid UTF-8 in a components key", "{\"reward\":1,\"regime_id\":\"a\",\"components\":{\"c\":1,\"d\xff\":2}}", "components", "invalid UTF-8 in a key"},
		{"invalid UTF-8 in a nested key", "{\"reward\":1,\"regime_id\":\"a\",\"x\":{\"d\xff\":2}}", "x", "invalid UTF-8 in a key"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			data := okRow + "\n" + c.row + "\n"
			_, err := decodeAll(t, Options{Components: []string{"c"}}, object{"runs/x.jsonl", data})
			if err == nil {
				t.Fatal("accepted")
			}
			de := asDataError(t, err)
			if de.Line != 2 || de.Field != c.field || !strings.Contains(de.Msg, c.msg) {
				t.Errorf("got %v\nwant line 2, field %q, message containing %q", err, c.field, c.msg)
			}
			if c.field != "components" {
				_, err = decodeRecordsAll(t, RecordOptions{IdentityFields: []string{}}, object{"runs/x.jsonl", data})
				if err == nil {
					t.Fatal("records: accepted")
				}
				de := asDataError(t, err)
				if de.Line != 2 || de.Field != c.field || !strings.Contains(de.Msg, c.msg) {
					t.Errorf("records: got %v\nwant line 2, field %q, message containing %q", err, c.field, c.msg)
				}
			}
		})
	}
}
