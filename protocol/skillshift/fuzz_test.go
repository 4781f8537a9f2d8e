package skillshift

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
)

// FuzzParseEntry: any input is an error or an entry, never a panic; an
// accepted entry checks without panicking, its canonical form reads back to
// an equal entry, and every null it holds carries a reason.
func FuzzParseEntry(f *testing.F) {
	for _, s := range []string{
		awmSR,
		awmFull,
		`{"SR": ` + strings.Replace(awmSR, "62.66", "null", 1) + `, "reasons": {"SR.websites.wordpress": "x"}}`,
		`{"SFR": ` + awmSR + `, "reasons": {"SFR.cells.gitlab.src": "no skill was invoked"}}`,
		`{"SR": null, "reasons": {"SR": "n/a"}}`,
		`{"SR": 1e999}`,
		`{"SR": {"websites": {"gitlab": 1, "gitlab": 2}}}`,
		"\xef\xbb\xbf{}",
		`[[[[[[]]]]]]`,
		`{"reasons": {"SR": "x"}, "websites": null}`,
		``,
		`{`,
	} {
		f.Add([]byte(s), "")
	}
	f.Add([]byte(awmSR), "SFR")
	f.Add([]byte(awmSR), "nope")
	f.Fuzz(func(t *testing.T, data []byte, metric string) {
		e, err := ParseEntry(data, metric)
		if err != nil {
			return
		}
		res := e.Check()
		if len(res.Checks) != len(e.Metrics) || len(res.Checks) == 0 {
			t.Fatalf("%d checks for %d metrics", len(res.Checks), len(e.Metrics))
		}
		for _, c := range res.Checks {
			switch c.Identity.Status {
			case StatusPass, StatusFail, StatusSkipped:
			default:
				t.Fatalf("status %q", c.Identity.Status)
			}
			_ = c.Line()
		}
		for _, m := range e.Metrics {
			vals := append(append(m.Websites[:], m.Conditions[:]...), m.Overall)
			for _, v := range vals {
				if err := v.Validate(); err != nil {
					t.Fatalf("%s: %v", m.Metric, err)
				}
			}
		}
		again, err := ParseEntry(e.JSON(), "")
		if err != nil {
			t.Fatalf("canonical form rejected: %v\n%s", err, e.JSON())
		}
		if !reflect.DeepEqual(e, again) {
			t.Fatalf("round trip differs\n%+v\n%+v", e, again)
		}
		if !bytes.Equal(e.JSON(), again.JSON()) {
			t.Fatal("canonical form is not stable")
		}
	})
}
