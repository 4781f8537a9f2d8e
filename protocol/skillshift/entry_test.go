package skillshift

import (
	"bytes"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// awmSR is the published AWM SR row of seed 002, as INTERFACE.md shows it.
const awmSR = `{"websites": {"gitlab": 17.71, "magento": 25.49, "wordpress": 62.66},
 "conditions": {"src": 50.07, "src-perc": 43.35, "src-exec": 22.45, "tgt": 41.28, "tgt-perc": 37.65, "tgt-exec": 16.90},
 "overall": 35.29}`

func checkOne(t *testing.T, entry, metric string) MetricCheck {
	t.Helper()
	res, err := CheckEntry([]byte(entry), metric)
	if err != nil {
		t.Fatalf("%v\n%s", err, entry)
	}
	if len(res.Checks) != 1 {
		t.Fatalf("%d checks", len(res.Checks))
	}
	return res.Checks[0]
}

func TestAWMRowPasses(t *testing.T) {
	// mean(websites) = (17.71+25.49+62.66)/3 = 105.86/3 = 35.2867 → 35.29;
	// mean(conditions) = 211.70/6 = 35.2833 → 35.28; O/A 35.29. The three
	// differ by at most one hundredth.
	for _, entry := range []string{awmSR, `{"SR": ` + awmSR + `}`} {
		c := checkOne(t, entry, "")
		id := c.Identity
		if c.Metric != SR || id.Status != StatusPass {
			t.Fatalf("%s", c.Line())
		}
		if id.WebsitesRounded != "35.29" || id.ConditionsRounded != "35.28" || id.OverallRounded != "35.29" {
			t.Errorf("means %s", c.Line())
		}
		wantValue(t, "mean(websites)", id.Websites, 105.86/3)
		if want := "SR   pass  mean(websites) 35.29  mean(conditions) 35.28  overall 35.29"; c.Line() != want {
			t.Errorf("line %q, want %q", c.Line(), want)
		}
	}
}

func TestAWMRowMistypedFails(t *testing.T) {
	cases := map[string][2]string{
		"site digits swapped":      {"62.66", "26.66"},   // mean(websites) 69.86/3 = 23.29
		"condition digits swapped": {"16.90", "19.60"},   // mean(conditions) 214.40/6 = 35.73
		"overall mistyped":         {"35.29}", "32.59}"}, // O/A 32.59
		"decimal point shifted":    {"43.35", "4.335"},
	}
	for name, sub := range cases {
		entry := strings.Replace(awmSR, sub[0], sub[1], 1)
		if entry == awmSR {
			t.Fatalf("%s: nothing replaced", name)
		}
		c := checkOne(t, entry, "")
		if c.Identity.Status != StatusFail {
			t.Errorf("%s: %s", name, c.Line())
		}
		if !strings.Contains(c.Line(), "fail") || !strings.Contains(c.Line(), "mean(conditions)") {
			t.Errorf("%s: line %q", name, c.Line())
		}
	}
	res, _ := CheckEntry([]byte(strings.Replace(awmSR, "62.66", "26.66", 1)), "")
	if !res.Failed() {
		t.Error("Failed() is false")
	}
	if got := res.Checks[0].Identity.WebsitesRounded; got != "23.29" {
		t.Errorf("mean(websites) %s", got)
	}
}

// The published AWM entry with ASC and SFR null: the method has no
// executable skills.
const awmFull = `{"SR": ` + awmSR + `,
 "AS": {"websites": {"gitlab": 7.0, "magento": 8.0, "wordpress": 9.0},
        "conditions": {"src": 8, "src-perc": 8, "src-exec": 8, "tgt": 8, "tgt-perc": 8, "tgt-exec": 8}, "overall": 8},
 "ASC": null, "SFR": null,
 "reasons": {"ASC": "no executable skill library", "SFR": "no executable skill library"}}`

func TestNullMetricsAreSkipped(t *testing.T) {
	res, err := CheckEntry([]byte(awmFull), "")
	if err != nil {
		t.Fatal(err)
	}
	got := res.Lines()
	want := []string{
		"SR   pass  mean(websites) 35.29  mean(conditions) 35.28  overall 35.29",
		"AS   pass  mean(websites) 8.00  mean(conditions) 8.00  overall 8.00",
		"ASC  skipped: ASC is null: no executable skill library",
		"SFR  skipped: SFR is null: no executable skill library",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("lines\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if res.Failed() {
		t.Error("failed")
	}
}

func TestPartialCheck(t *testing.T) {
	// wordpress is null: mean(websites) cannot be formed; the conditions'
	// mean (211.70/6 → 35.28) is checked against O/A (35.29).
	entry := `{"SR": ` + strings.Replace(awmSR, "62.66", "null", 1) + `, "reasons": {"SR.websites.wordpress": "not evaluated"}}`
	c := checkOne(t, entry, "")
	if c.Identity.Status != StatusPass || !strings.Contains(c.Identity.Reason, "websites.wordpress is null (not evaluated)") {
		t.Errorf("%s", c.Line())
	}
	// The same with a mistyped condition fails on what can be checked.
	entry = strings.Replace(entry, "16.90", "19.60", 1)
	if c := checkOne(t, entry, ""); c.Identity.Status != StatusFail {
		t.Errorf("%s", c.Line())
	}
	// Overall and a condition null: only one mean remains, skipped. A
	// metric-level reason covers every null of the metric.
	entry = `{"SR": ` + strings.NewReplacer("62.66", "null", "35.29", "null").Replace(awmSR) + `, "reasons": {"SR": "partial run"}}`
	if c := checkOne(t, entry, ""); c.Identity.Status != StatusSkipped || !strings.Contains(c.Identity.Reason, "overall is null (partial run)") {
		t.Errorf("%s", c.Line())
	}
	// A declared absent grid cell makes the marginals average different
	// cells: skipped even with all ten numbers present.
	entry = `{"SFR": ` + awmSR + `, "reasons": {"SFR.cells.gitlab.src": "no skill was invoked"}}`
	if c := checkOne(t, entry, ""); c.Identity.Status != StatusSkipped || !strings.Contains(c.Identity.Reason, "SFR.cells.gitlab.src") {
		t.Errorf("%s", c.Line())
	}
}

func TestBareMetricName(t *testing.T) {
	c := checkOne(t, awmSR, AS)
	if c.Metric != AS {
		t.Errorf("metric %s", c.Metric)
	}
	if _, err := CheckEntry([]byte(awmSR), "XX"); err == nil {
		t.Error("unknown --metric accepted")
	}
	// A bare object carries its reasons keyed by the metric it is named.
	entry := strings.Replace(awmSR, "35.29}", `null, "reasons": {"ASC.overall": "x"}}`, 1)
	if c := checkOne(t, entry, ASC); c.Identity.Status != StatusPass || c.Identity.Overall.OK {
		t.Errorf("%s", c.Line())
	}
}

func TestEntryErrors(t *testing.T) {
	sr := func(s string) string { return `{"SR": ` + s + `}` }
	cases := map[string]string{
		"null without reason":    sr(strings.Replace(awmSR, "62.66", "null", 1)),
		"metric null no reason":  `{"SR": null}`,
		"duplicate metric":       `{"SR": ` + awmSR + `, "SR": ` + awmSR + `}`,
		"duplicate site":         sr(strings.Replace(awmSR, `"magento": 25.49`, `"gitlab": 25.49`, 1)),
		"duplicate reason":       `{"SR": ` + awmSR + `, "reasons": {"SR": "a", "SR": "b"}}`,
		"unknown metric":         `{"SR": ` + awmSR + `, "XR": ` + awmSR + `}`,
		"unknown site":           sr(strings.Replace(awmSR, "magento", "Magento", 1)),
		"unknown condition":      sr(strings.Replace(awmSR, `"tgt-exec"`, `"tgt-exe"`, 1)),
		"missing site":           sr(strings.Replace(awmSR, `"magento": 25.49, `, ``, 1)),
		"missing overall":        sr(awmSR[:strings.Index(awmSR, `, "tgt-exec": 16.90}`)+len(`, "tgt-exec": 16.90}`)] + `}`),
		"unknown section":        sr(strings.Replace(awmSR, `"overall"`, `"total": 1, "overall"`, 1)),
		"string number":          sr(strings.Replace(awmSR, "17.71", `"17.71"`, 1)),
		"negative":               sr(strings.Replace(awmSR, "17.71", "-17.71", 1)),
		"percent above 100":      sr(strings.Replace(awmSR, "62.66", "162.66", 1)),
		"overflow":               sr(strings.Replace(awmSR, "17.71", "1e999", 1)),
		"reason for present":     `{"SR": ` + awmSR + `, "reasons": {"SR.websites.gitlab": "x"}}`,
		"reason names nothing":   `{"SR": ` + awmSR + `, "reasons": {"SR.websites.reddit": "x"}}`,
		"reason other metric":    `{"SR": ` + awmSR + `, "reasons": {"AS": "x"}}`,
		"empty reason":           `{"SR": null, "reasons": {"SR": ""}}`,
		"reason not a string":    `{"SR": null, "reasons": {"SR": 1}}`,
		"reasons not an object":  `{"SR": ` + awmSR + `, "reasons": []}`,
		"no metric":              `{"reasons": {}}`,
		"empty object":           `{}`,
		"array":                  `[` + awmSR + `]`,
		"trailing data":          awmSR + ` {}`,
		"trailing brace":         awmSR + `}`,
		"truncated":              awmSR[:40],
		"bare beside metric":     strings.Replace(awmSR, `"overall"`, `"SR": 1, "overall"`, 1),
		"metric not an object":   `{"SR": 35.29}`,
		"section not an object":  sr(strings.Replace(awmSR, `{"gitlab": 17.71, "magento": 25.49, "wordpress": 62.66}`, `[17.71, 25.49, 62.66]`, 1)),
		"invalid utf-8":          `{"SR": null, "reasons": {"SR": "` + "\xff" + `"}}`,
		"reasons key in wrapped": sr(strings.Replace(awmSR, `"overall"`, `"reasons": {}, "overall"`, 1)),
		"deep nesting":           strings.Repeat("[", 100) + strings.Repeat("]", 100),
	}
	for name, entry := range cases {
		_, err := CheckEntry([]byte(entry), "")
		if err == nil {
			t.Errorf("%s: accepted\n%s", name, entry)
			continue
		}
		t.Logf("%-24s %v", name, err)
	}
}

func TestEntryAcceptsBOM(t *testing.T) {
	if c := checkOne(t, "\xef\xbb\xbf"+awmSR, ""); c.Identity.Status != StatusPass {
		t.Error(c.Line())
	}
}

func TestEntryRoundTrip(t *testing.T) {
	for _, entry := range []string{awmSR, awmFull, `{"SFR": ` + awmSR + `, "reasons": {"SFR.cells.gitlab.src": "no skill was invoked"}}`} {
		e, err := ParseEntry([]byte(entry), "")
		if err != nil {
			t.Fatal(err)
		}
		again, err := ParseEntry(e.JSON(), "")
		if err != nil {
			t.Fatalf("%v\n%s", err, e.JSON())
		}
		if !reflect.DeepEqual(e, again) {
			t.Errorf("round trip\n%+v\n%+v", e, again)
		}
		if !bytes.Equal(e.JSON(), again.JSON()) {
			t.Errorf("canonical form differs")
		}
	}
}

func TestRunEntryPasses(t *testing.T) {
	// A scored run on the full expected grid, turned into an entry, passes
	// CheckEntry exactly as a transcribed one does. SFR carries declared
	// absent cells and is skipped.
	tasks := fullGrid(func(site, cond string, s, c int) []Task {
		var out []Task
		for k := 0; k <= (s+2*c)%4; k++ {
			calls := float64((k + c) % 3)
			if s == 1 && c == 2 {
				calls = 0 // magento/src-exec: no invocation, SFR absent
			}
			out = append(out, task(site, cond, (k+s+c)%3 == 0, float64(3+k*c), calls, 0))
		}
		return out
	})
	r := score(t, tasks...)
	e, err := r.Entry()
	if err != nil {
		t.Fatal(err)
	}
	res, err := CheckEntry(e.JSON(), "")
	if err != nil {
		t.Fatalf("%v\n%s", err, e.JSON())
	}
	for i, c := range res.Checks {
		want := r.Metrics[i].Identity.Status
		if c.Identity.Status != want {
			t.Errorf("%s: entry %s, run %s", c.Metric, c.Line(), want)
		}
	}
	if res.Checks[3].Identity.Status != StatusSkipped || res.Checks[0].Identity.Status != StatusPass {
		t.Errorf("%q", res.Lines())
	}
	// A run on another grid has no ten-number entry.
	r = score(t, task("reddit", "src", true, 1, -1, -1))
	if _, err := r.Entry(); err == nil {
		t.Error("entry of a run outside the expected grid")
	}
}

func ExampleCheckEntry() {
	entry := `{"SR": {"websites": {"gitlab": 17.71, "magento": 25.49, "wordpress": 62.66},
  "conditions": {"src": 50.07, "src-perc": 43.35, "src-exec": 22.45, "tgt": 41.28, "tgt-perc": 37.65, "tgt-exec": 16.90},
  "overall": 35.29},
 "ASC": null, "reasons": {"ASC": "no executable skills"}}`
	res, err := CheckEntry([]byte(entry), "")
	if err != nil {
		panic(err)
	}
	for _, line := range res.Lines() {
		fmt.Println(line)
	}
	fmt.Println("failed:", res.Failed())
	// Output:
	// SR   pass  mean(websites) 35.29  mean(conditions) 35.28  overall 35.29
	// ASC  skipped: ASC is null: no executable skills
	// failed: false
}
