package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestNumbersForAPerson: bound and check-entry print their numbers with the
// report's rule (writers.FormatScaled: four decimals, scientific notation
// from 1e6 up and for what would print as 0.0000), never a ceiling near
// MaxFloat64 as its 309 digits. check-entry's AS and ASC are unbounded.
func TestNumbersForAPerson(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	spec := func(name, step, final string) string {
		return write(name+".yaml", "name: "+name+"\ncomponents:\n"+
			"  - name: progress\n    weight: "+step+"\n    clip: [0.0, 1.0]\n    cadence: step\n"+
			"  - name: success\n    weight: "+final+"\n    clip: [0.0, 1.0]\n    cadence: episode_end\n")
	}
	entry := func(name, v string) string {
		return write(name+".json", `{"AS": {"websites": {"gitlab": `+v+`, "magento": `+v+`, "wordpress": `+v+`}, `+
			`"conditions": {"src": `+v+`, "src-perc": `+v+`, "src-exec": `+v+`, "tgt": `+v+`, "tgt-perc": `+v+`, "tgt-exec": `+v+`}, "overall": `+v+`}}`)
	}
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"bound at the largest float", []string{"bound", spec("maxfinal", "1.0", "1.7976931348623157e308"), "--interval", "3", "--contains-final"},
			"maxfinal     per step 1.0000   final step 1.7976931348623157e+308\ninterval of 3 holding the final step: 5.9923e+307\n"},
		{"bound of a million", []string{"bound", spec("million", "1.0", "1e6")},
			"million      per step 1.0000   final step 1.0000e+06\n"},
		{"bound tiny", []string{"bound", spec("tiny", "2e-9", "1e-9"), "--interval", "3"},
			"tiny         per step 2.0000e-09   final step 3.0000e-09\ninterval of 3 not holding the final step: 2.0000e-09\n"},
		{"bound ordinary", []string{"bound", "experiment", "--interval", "60", "--contains-final"},
			"experiment   per step 0.3333   final step 1.0000\ninterval of 60 holding the final step: 0.3444\n"},
		{"check-entry huge AS", []string{"check-entry", entry("huge", "1e300")},
			"AS   pass  mean(websites) 1.0000e+300  mean(conditions) 1.0000e+300  overall 1.0000e+300\n"},
		{"check-entry just below a million", []string{"check-entry", entry("below", "999999.994")},
			"AS   pass  mean(websites) 999999.99  mean(conditions) 999999.99  overall 999999.99\n"},
		{"check-entry ordinary", []string{"check-entry", entry("ordinary", "35.285")},
			"AS   pass  mean(websites) 35.29  mean(conditions) 35.29  overall 35.29\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, out, stderr := crl(t, c.args...)
			if code != exitOK || out != c.want {
				t.Errorf("%s: exit %d, stdout\n%s\nwant exit 0 and\n%s\nstderr: %s", strings.Join(c.args, " "), code, out, c.want, stderr)
			}
		})
	}
}
