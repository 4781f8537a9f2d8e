package readers

import (
	"fmt"
	"strings"
	"testing"
)

// TestPrefixReplay decodes sequences of rows through a decoder that takes
// prefixes over and one that never does (samePrefixState after every
// line), and checks which rows took a prefix over.
func TestPrefixReplay(t *testing.T) {
	const head = `{"run_id":"r1","seed":3,"task":"nav",`
	cases := []struct {
		name  string
		lines []string
		used  int // rows that took a prefix over
	}{
		{"steady", []string{
			head + `"step":0,"reward":1,"regime_id":"a"}`,
			head + `"step":1,"reward":2,"regime_id":"a"}`, // values cached now: records
			head + `"step":2,"reward":3,"regime_id":"a"}`,
			head + `"step":3,"reward":4,"regime_id":"a","x":1}`,
		}, 2},
		{"more whitespace after the prefix", []string{
			head + `"step":0,"reward":1,"regime_id":"a"}`,
			head + `"step":1,"reward":1,"regime_id":"a"}`,
			head + "  \t\"step\":2,\"reward\":1,\"regime_id\":\"a\"}",
			head + ` }`,
			head + ` ,"reward":1}`,
		}, 3},
		{"the line ends with the prefix, or after it", []string{
			head + `"reward":1,"regime_id":"a"}`,
			head + `"reward":1,"regime_id":"a"}`,
			head,
			head + ` `,
			head + `"`,
			head + `"reward":1,"regime_id":"a"}`,
		}, 0},
		{"a member of the prefix repeated after it", []string{
			head + `"reward":1,"regime_id":"a"}`,
			head + `"reward":1,"regime_id":"a"}`,
			head + `"seed":3,"reward":1,"regime_id":"a"}`,
			head + `"seed":4,"reward":1,"regime_id":"a"}`,
			head + `"reward":1,"regime_id":"a"}`,
		}, 3},
		{"a cached value changes, then comes back", []string{
			head + `"reward":1,"regime_id":"a"}`,
			head + `"reward":1,"regime_id":"a"}`,
			`{"run_id":"r1","seed":4,"task":"nav","reward":1,"regime_id":"a"}`, // records run_id
			head + `"reward":1,"regime_id":"a"}`,                               // takes run_id over
			head + `"reward":1,"regime_id":"a"}`,                               // takes run_id over, records seed and task after it
			head + `"reward":1,"regime_id":"a"}`,                               // takes all three over
		}, 3},
		{"a bad row changes a cached value after the prefix", []string{
			head + `"reward":1,"regime_id":"a","policy_id":"p"}`,
			head + `"reward":1,"regime_id":"a","policy_id":"p"}`,
			head + `"reward":1,"regime_id":"a","policy_id":"q","reward":2}`,
			head + `"reward":1,"regime_id":"a","policy_id":"q"}`,
			head + `"reward":1,"regime_id":"a","policy_id":"p"}`,
		}, 3},
		{"a bad row in the prefix", []string{
			head + `"reward":1,"regime_id":"a"}`,
			head + `"reward":1,"regime_id":"a"}`,
			`{"run_id":"r1","seed":3,"task":"nav",,"reward":1,"regime_id":"a"}`,
			`{"run_id":"r1","seed":3,"task":"nav"x,"reward":1,"regime_id":"a"}`,
			head + `"reward":1,"regime_id":"a"}`,
			head + `"reward":1,"regime_id":"a"}`,
		}, 3},
		{"gamma and schema fields end it", []string{
			`{"gamma":0.9,"run_id":"r","reward":1,"regime_id":"a"}`,
			`{"gamma":0.9,"run_id":"r","reward":1,"regime_id":"a"}`,
			`{"run_id":"r","gamma":0.9,"reward":1,"regime_id":"a"}`,
			`{"run_id":"r","gamma":0.9,"reward":1,"regime_id":"a"}`,
			`{"run_id":"r","gamma":0.9,"reward":1,"regime_id":"a"}`,
		}, 2},
		{"a member of the prefix last in the row", []string{
			`{"reward":1,"regime_id":"a","run_id":"r"}`,
			`{"run_id":"r","seed":1}`,
			`{"run_id":"r","seed":1}`,
			`{"run_id":"r","seed":1}`,
			`{"run_id":"r","seed":1,"reward":1,"regime_id":"a"}`,
		}, 3},
		{"keys in another order", []string{
			head + `"reward":1,"regime_id":"a"}`,
			head + `"reward":1,"regime_id":"a"}`,
			`{"task":"nav","seed":3,"run_id":"r1","reward":1,"regime_id":"a"}`,
			`{"seed":3,"task":"nav","run_id":"r1","reward":1,"regime_id":"a"}`,
			head + `"reward":1,"regime_id":"a"}`,
		}, 0},
		{"a key with escapes", []string{
			`{"run_\u0069d":"r1","seed":3,"reward":1,"regime_id":"a"}`,
			`{"run_\u0069d":"r1","seed":3,"reward":1,"regime_id":"a"}`,
			`{"run_\u0069d":"r1","seed":3,"reward":1,"regime_id":"a"}`,
		}, 1},
	}
	// Many rows take the prefix over, then its key changes on every row:
	// the key's cache stays on (its hits count the rows that took it over).
	var long []string
	for i := range 100 {
		long = append(long, fmt.Sprintf(`{"k":1,"reward":%d,"regime_id":"a"}`, i))
	}
	for i := range 40 {
		long = append(long, fmt.Sprintf(`{"k":%d,"reward":1,"regime_id":"a"}`, i+2))
	}
	cases = append(cases, struct {
		name  string
		lines []string
		used  int
	}{"its key's value changes on every row after many", long, 98})
	// Each case also with the key tables in find-first mode (the irregular
	// shape's), where the prediction is tried first all the same
	// (keyTable.predicted) and every key counts a try.
	for _, c := range cases {
		for _, findFirst := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/findFirst=%v", c.name, findFirst), func(t *testing.T) {
				seq, plain := newRowDecoder(fuzzComps), newRowDecoder(fuzzComps)
				plain.noPrefix = true
				for n, line := range c.lines {
					if findFirst {
						for _, d := range []*rowDecoder{seq, plain} {
							d.top.findFirst, d.compKeys.findFirst = true, true
						}
					}
					samePrefixState(t, n+1, []byte(line), seq, seq.decode([]byte(line)), plain, plain.decode([]byte(line)))
				}
				if k := seq.top.lookup("k"); k != noKey && seq.top.keys[k].off {
					t.Fatalf("the cache of k is off (%d hits, %d misses)", seq.top.keys[k].hits, seq.top.keys[k].misses)
				}
				if seq.pfx.used != c.used || plain.pfx.used != 0 {
					t.Fatalf("%d rows took a prefix over, want %d (%d without prefixes)", seq.pfx.used, c.used, plain.pfx.used)
				}
			})
		}
	}
}

// TestPrefixOfBenchRows: on rows shaped like the nightly sweeps', every
// row after the first two takes the identity and metadata over.
func TestPrefixOfBenchRows(t *testing.T) {
	data := benchRows(300)
	seq, plain := newRowDecoder(benchComps), newRowDecoder(benchComps)
	plain.noPrefix = true
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	for n, line := range lines {
		samePrefixState(t, n+1, []byte(line), seq, seq.decode([]byte(line)), plain, plain.decode([]byte(line)))
	}
	if want := len(lines) - 2; seq.pfx.used != want {
		t.Fatalf("%d rows took a prefix over, want %d", seq.pfx.used, want)
	}
	if got, want := string(seq.pfx.raw), `{"run_id":"sweep-0412/ppo/s3","seed":3,"algorithm_id":"ppo","policy_id":"mlp-256","task":"nav-v2",`; got != want {
		t.Fatalf("prefix %q, want %q", got, want)
	}
}
