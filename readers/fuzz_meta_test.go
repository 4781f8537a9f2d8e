package readers

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// genLongObjects makes objects of long runs, as real sweeps have: tens to
// hundreds of rows, runs interleaved in stretches, metadata values that
// repeat for many rows and then change (to an equal value written another
// way, or to another value, perhaps the one another run's rows carry), go
// missing or turn null now and then, per-step
// values that change on every row, and on some objects more keys than a
// key table holds. It exercises what the decoder does over many rows of an
// object (the value cache, the candidates' comparisons and the rows that
// skip them: objectDecoder.add), which genObjects' short objects rarely
// reach.
func genLongObjects(seed uint64) []object {
	rng := rand.New(rand.NewPCG(seed, seed^0x5851f42d4c957f2d))
	pools := []struct {
		name string
		vals []string
	}{
		{"lr", []string{"3e-4", "0.0003", "3E-4", "0.001"}},
		{"host", []string{`"a"`, `"\u0061"`, `"b"`}},
		{"cfg", []string{`{"b":1,"a":[1,2]}`, `{"a":[1,2.0],"b":1}`, `{"a":[2,1],"b":1}`}},
		{"gamma", []string{"0.99", "99e-2", "0.9"}},
		{"opt", []string{"true", "false", "1"}},
	}
	var objs []object
	for o := range 1 + rng.IntN(2) {
		wide := rng.IntN(4) == 0
		type runState struct {
			id   string
			vals []string
		}
		var runs []*runState
		for i := range 1 + rng.IntN(3) {
			// Runs told apart by run_id, or by a seed that only some of
			// them have: then a row of one run repeats every identity value
			// cached by a row of the other.
			r := &runState{id: fmt.Sprintf(`"r%d"`, i)}
			if i > 0 && rng.IntN(2) == 0 {
				r.id = `"r0","seed":1`
			}
			for _, p := range pools {
				r.vals = append(r.vals, p.vals[rng.IntN(len(p.vals))])
			}
			runs = append(runs, r)
		}
		cur := runs[0]
		var sb strings.Builder
		for step := range 20 + rng.IntN(280) {
			if rng.IntN(8) == 0 {
				cur = runs[rng.IntN(len(runs))]
			}
			f := []string{`"run_id":` + cur.id, fmt.Sprintf(`"step":%d`, step), `"reward":0.5`, `"regime_id":"a"`}
			for i, p := range pools {
				if rng.IntN(60) == 0 {
					cur.vals[i] = p.vals[rng.IntN(len(p.vals))]
				}
				switch rng.IntN(200) {
				case 0: // missing on this row
				case 1:
					f = append(f, fmt.Sprintf("%q:null", p.name))
				default:
					f = append(f, fmt.Sprintf("%q:%s", p.name, cur.vals[i]))
				}
			}
			f = append(f, fmt.Sprintf(`"logp":%d.%d`, rng.IntN(3), rng.IntN(1000)))
			if wide {
				for k := range 70 {
					f = append(f, fmt.Sprintf(`"k%02d":%d`, k, k%3))
				}
			}
			if rng.IntN(10) == 0 {
				rng.Shuffle(len(f), func(a, b int) { f[a], f[b] = f[b], f[a] })
			}
			sb.WriteString("{" + strings.Join(f, ",") + "}\n")
		}
		objs = append(objs, object{key: fmt.Sprintf("runs/%02d.jsonl", o), data: sb.String()})
	}
	return objs
}

// FuzzAssembleLongRuns: the runs and metadata of long objects are what the
// reference assembly (refAssemble, on encoding/json) gives.
func FuzzAssembleLongRuns(f *testing.F) {
	for s := range uint64(24) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, seed uint64) {
		objs := genLongObjects(seed)
		opts := Options{Components: []string{"progress"}}
		got, err := decodeAll(t, opts, objs...)
		if err != nil {
			t.Fatal(err)
		}
		want, err := refAssemble(objs, DefaultIdentityFields)
		if err != nil {
			t.Fatal(err)
		}
		var gotRuns []refRun
		for _, tr := range got {
			r := refRun{Key: tr.Key, Rewards: tr.Rewards, Meta: tr.Meta}
			for _, l := range tr.Labels {
				r.Labels = append(r.Labels, tr.LabelNames[l])
			}
			gotRuns = append(gotRuns, r)
		}
		if !slices.EqualFunc(gotRuns, want, func(a, b refRun) bool {
			return a.Key == b.Key && slices.Equal(a.Rewards, b.Rewards) && slices.Equal(a.Labels, b.Labels) && reflect.DeepEqual(a.Meta, b.Meta)
		}) {
			g, _ := json.MarshalIndent(gotRuns, "", " ")
			w, _ := json.MarshalIndent(want, "", " ")
			t.Fatalf("reader:\n%s\nreference:\n%s", g, w)
		}
	})
}

// TestLongRunsKeepMetadata: the generator makes runs whose metadata
// survives their rows and runs whose metadata does not, so that the fuzz
// test above compares both.
func TestLongRunsKeepMetadata(t *testing.T) {
	kept, lost := 0, 0
	for s := range uint64(24) {
		runs, err := refAssemble(genLongObjects(s), DefaultIdentityFields)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range runs {
			for _, k := range []string{"lr", "host", "cfg", "gamma", "opt"} {
				if _, ok := r.Meta[k]; ok {
					kept++
				} else {
					lost++
				}
			}
		}
	}
	if kept == 0 || lost == 0 {
		t.Errorf("metadata kept %d times, lost %d times", kept, lost)
	}
	t.Logf("metadata kept %d times, lost %d times", kept, lost)
}

// TestCandidatesAfterAnotherRunsValue: a run's row whose every identity
// value is cached, and whose metadata value is the one a row of another run
// just cached, is compared, not taken as unchanged (objectDecoder.add's
// skip requires no cached value to have changed since its run's last row).
func TestCandidatesAfterAnotherRunsValue(t *testing.T) {
	data := `{"run_id":"r1","reward":1,"regime_id":"a","host":"a"}
{"run_id":"r1","reward":1,"regime_id":"a","host":"a"}
{"run_id":"r1","reward":1,"regime_id":"a","host":"a"}
{"run_id":"r1","seed":1,"reward":1,"regime_id":"a","host":"b"}
{"run_id":"r1","reward":1,"regime_id":"a","host":"b"}
`
	traces := mustDecode(t, Options{}, object{"x", data})
	if len(traces) != 2 {
		t.Fatalf("%d runs, want 2", len(traces))
	}
	for _, tr := range traces {
		_, has := tr.Meta["host"]
		if want := tr.Key != "run_id=r1"; has != want {
			t.Errorf("run %s: host in metadata %v, want %v (%v)", tr.Key, has, want, tr.Meta)
		}
	}
}

// TestSkippedRowChangesCachedValues: a bad row that OnBadRow skips may
// still have cached its values (the run_id of another run, a new host)
// before its error; the rows after it that repeat those values are
// compared, not taken for the run and the metadata of the rows before.
func TestSkippedRowChangesCachedValues(t *testing.T) {
	data := `{"run_id":"r1","reward":1,"regime_id":"a","host":"a"}
{"run_id":"r1","reward":1,"regime_id":"a","host":"a"}
{"run_id":"r1","reward":1,"regime_id":"a","host":"a"}
{"run_id":"r2","host":"b","reward":1,"regime_id":"a","bad":}
{"run_id":"r2","reward":1,"regime_id":"a","host":"b"}
{"run_id":"r1","host":"b","reward":1,"regime_id":"a","bad":}
{"run_id":"r1","reward":1,"regime_id":"a","host":"b"}
`
	opts := Options{OnBadRow: func(*DataError) error { return nil }}
	traces := mustDecode(t, opts, object{"x", data})
	got := map[string]string{}
	for _, tr := range traces {
		got[tr.Key] = fmt.Sprintf("%d rows, host %q", tr.Len(), tr.Meta["host"])
	}
	want := map[string]string{"run_id=r1": `4 rows, host ""`, "run_id=r2": `1 rows, host "b"`}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}
