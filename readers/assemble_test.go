package readers

import (
	"reflect"
	"strings"
	"testing"

	"github.com/crlbatch/crlbatch/protocol/skyfall"
)

func keys(traces []*skyfall.Trace) []string {
	var out []string
	for _, t := range traces {
		out = append(out, t.Key)
	}
	return out
}

func lines(rows ...string) string { return strings.Join(rows, "\n") + "\n" }

func TestIdentity(t *testing.T) {
	cases := []struct {
		name string
		objs []object
		keys []string
		rows []int // rows per run
	}{
		{"1 = 1.0 = 1e0 = 10e-1", []object{{"a", lines(
			`{"seed":1,"reward":1,"regime_id":"x"}`,
			`{"seed":1.0,"reward":1,"regime_id":"x"}`,
			`{"seed":1e0,"reward":1,"regime_id":"x"}`,
			`{"seed":10e-1,"reward":1,"regime_id":"x"}`,
		)}}, []string{"seed=1"}, []int{4}},
		{"-0 = 0", []object{{"a", lines(
			`{"seed":0,"reward":1,"regime_id":"x"}`,
			`{"seed":-0,"reward":1,"regime_id":"x"}`,
			`{"seed":-0.0,"reward":1,"regime_id":"x"}`,
		)}}, []string{"seed=0"}, []int{3}},
		{"escapes compare decoded", []object{{"a", lines(
			`{"run_id":"é","reward":1,"regime_id":"x"}`,
			`{"run_id":"\u00e9","reward":1,"regime_id":"x"}`,
		)}}, []string{"run_id=é"}, []int{2}},
		{"large integers stay exact", []object{{"a", lines(
			`{"seed":9007199254740993,"reward":1,"regime_id":"x"}`,
			`{"seed":9007199254740992,"reward":1,"regime_id":"x"}`,
			`{"seed":9007199254740992.0,"reward":1,"regime_id":"x"}`,
		)}}, []string{"seed=9007199254740993", "seed=9007199254740992"}, []int{1, 2}},
		{"null is absent", []object{{"a", lines(
			`{"run_id":"r","reward":1,"regime_id":"x"}`,
			`{"run_id":"r","seed":null,"reward":1,"regime_id":"x"}`,
			`{"run_id":null,"seed":null,"reward":1,"regime_id":"x"}`,
			`{"reward":1,"regime_id":"x"}`,
		)}}, []string{"run_id=r", "anonymous:a"}, []int{2, 2}},
		{"tuples in identity-field order, whatever the row's order", []object{{"a", lines(
			`{"task":"t","policy_id":"p","algorithm_id":"g","seed":3,"run_id":"r","reward":1,"regime_id":"x"}`,
			`{"run_id":"r","seed":3,"algorithm_id":"g","policy_id":"p","task":"t","reward":1,"regime_id":"x"}`,
		)}}, []string{"run_id=r|seed=3|algorithm_id=g|policy_id=p|task=t"}, []int{2}},
		{"a missing field is a different identity", []object{{"a", lines(
			`{"run_id":"r","seed":1,"reward":1,"regime_id":"x"}`,
			`{"run_id":"r","reward":1,"regime_id":"x"}`,
		)}}, []string{"run_id=r|seed=1", "run_id=r"}, []int{1, 1}},
		{"bool identities", []object{{"a", lines(
			`{"run_id":true,"seed":1.0,"reward":1,"regime_id":"x"}`,
			`{"run_id":true,"seed":1,"reward":1,"regime_id":"x"}`,
		)}}, []string{`run_id=true|seed=1`}, []int{2}},
		{"anonymous rows: one run per object, never merged", []object{
			{"a", lines(`{"reward":1,"regime_id":"x"}`, `{"run_id":"r","reward":1,"regime_id":"x"}`, `{"reward":2,"regime_id":"x"}`)},
			{"b", lines(`{"reward":3,"regime_id":"x"}`)},
		}, []string{"anonymous:a", "run_id=r", "anonymous:b"}, []int{2, 1, 1}},
		{"runs in order of first row, across objects", []object{
			{"a", lines(`{"run_id":"r2","reward":1,"regime_id":"x"}`, `{"run_id":"r1","reward":1,"regime_id":"x"}`)},
			{"b", lines(`{"run_id":"r0","reward":1,"regime_id":"x"}`, `{"run_id":"r1","reward":1,"regime_id":"x"}`, `{"run_id":"r2","reward":1,"regime_id":"x"}`)},
		}, []string{"run_id=r2", "run_id=r1", "run_id=r0"}, []int{2, 2, 1}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			traces := mustDecode(t, Options{}, c.objs...)
			if got := keys(traces); !reflect.DeepEqual(got, c.keys) {
				t.Fatalf("keys %q, want %q", got, c.keys)
			}
			for i, tr := range traces {
				if tr.Len() != c.rows[i] {
					t.Errorf("%s: %d rows, want %d", tr.Key, tr.Len(), c.rows[i])
				}
			}
		})
	}
}

func TestCustomIdentityFields(t *testing.T) {
	data := lines(
		`{"run_id":"r1","experiment":"e","worker":2,"reward":1,"regime_id":"x"}`,
		`{"run_id":"r2","experiment":"e","worker":2,"reward":2,"regime_id":"x"}`,
		`{"run_id":"r2","experiment":"e","worker":3,"reward":3,"regime_id":"x"}`,
	)
	traces := mustDecode(t, Options{IdentityFields: []string{"worker", "experiment"}}, object{"a", data})
	if got, want := keys(traces), []string{"worker=2|experiment=e", "worker=3|experiment=e"}; !reflect.DeepEqual(got, want) {
		t.Errorf("keys %q, want %q", got, want)
	}
	traces = mustDecode(t, Options{IdentityFields: []string{}}, object{"a", data}, object{"b", data})
	if got, want := keys(traces), []string{"anonymous:a", "anonymous:b"}; !reflect.DeepEqual(got, want) {
		t.Errorf("keys %q, want %q", got, want)
	}
}

// TestReassembly: a run split across objects keeps object order, then line
// order (never step order), and takes its source from its first object.
func TestReassembly(t *testing.T) {
	opts := Options{Components: []string{"c"}}
	a := lines(
		`{"run_id":"r","step":5,"reward":1,"regime_id":"x","components":{"c":1}}`,
		`{"run_id":"q","step":0,"reward":9,"regime_id":"y","gamma":0.5}`,
		`{"run_id":"r","step":4,"reward":2,"regime_id":"a_again","alias_of":"a"}`,
	)
	b := lines(
		`{"run_id":"q","step":1,"reward":8,"regime_id":"y","invalid_action":true}`,
		`{"run_id":"r","step":3,"reward":3,"regime_id":"a_again","regime_origin":"x","gamma":0.9}`,
		`{"run_id":"r","step":2,"reward":4,"regime_id":"x","effective_rank":2,"gamma":0.8,"components":{"c":4}}`,
	)
	c := lines(`{"run_id":"r","reward":5,"regime_id":"z"}`)
	traces := mustDecode(t, opts, object{"runs/a.jsonl", a}, object{"runs/b.jsonl.gz", b}, object{"runs/c", c})
	want := []*skyfall.Trace{
		{
			Key:        "run_id=r",
			Meta:       map[string]string{"run_id": "r", "source": "runs/a.jsonl"},
			Rewards:    []float64{1, 2, 3, 4, 5},
			Labels:     []int32{0, 1, 1, 0, 2},
			LabelNames: []string{"x", "a_again", "z"},
			Origins:    []string{"x", "x", "z"}, // regime_origin (object b) beats alias_of (object a)
			Steps:      []int64{5, 4, 3, 2, 0},
			HasStep:    []bool{true, true, true, true, false},
			Components: map[string][]float64{"c": {1, 0, 0, 4, 0}},
			EffRank:    []float64{0, 0, 0, 2, 0},
			HasEffRank: []bool{false, false, false, true, false},
			Gamma:      0.9, HasGamma: true,
		},
		{
			Key:        "run_id=q",
			Meta:       map[string]string{"run_id": "q", "source": "runs/a.jsonl"},
			Rewards:    []float64{9, 8},
			Labels:     []int32{0, 0},
			LabelNames: []string{"y"},
			Origins:    []string{"y"},
			Steps:      []int64{0, 1},
			HasStep:    []bool{true, true},
			Components: map[string][]float64{"c": {0, 0}},
			Uncarried:  []string{"c"},
			Invalid:    []int8{-1, 1},
			Gamma:      0.5, HasGamma: true,
		},
	}
	if !reflect.DeepEqual(traces, want) {
		t.Errorf("got\n%s\nwant\n%s", dump(traces), dump(want))
	}
}

func TestMetadata(t *testing.T) {
	cases := []struct {
		name string
		objs []object
		want map[string]string
	}{
		{"rendering", []object{{"a", lines(
			`{"run_id":"r","s":"text with | and =","t":true,"f":false,"i":42,"neg":-7,"big":123456789012345678901234567890,` +
				`"fl":0.1,"one":1.0,"tiny":0.00001,"huge":1.5e6,"huger":1.5e16,"frac":1234567.5,"e21":1e21,"third":0.3333333333333333,` +
				`"o":{"b":[1.50,{"d":null,"c":"\u00e9\n"}],"a":1e0},"arr":[],"eo":{},"reward":1,"regime_id":"x"}`,
		)}}, map[string]string{
			"run_id": "r", "s": "text with | and =", "t": "true", "f": "false", "i": "42", "neg": "-7",
			"big": "123456789012345678901234567890", "fl": "0.1", "one": "1", "tiny": "1e-05", "huge": "1500000", "huger": "1.5e+16", "frac": "1.2345675e+06",
			"e21": "1e+21", "third": "0.3333333333333333", "o": `{"a":1,"b":[1.5,{"c":"é\n","d":null}]}`,
			"arr": "[]", "eo": "{}", "source": "a",
		}},
		{"constant, varying, missing, null", []object{{"a", lines(
			`{"run_id":"r","algo":"ppo","lr":3e-4,"obs_hash":"a1","sometimes":1,"nul":null,"gamma":0.99,"reward":1,"regime_id":"x","step":0}`,
			`{"run_id":"r","algo":"ppo","lr":0.0003,"obs_hash":"b2","nul":null,"gamma":0.99,"reward":1,"regime_id":"y","step":1}`,
			`{"run_id":"r","algo":"ppo","lr":0.00030,"obs_hash":"c3","sometimes":1,"nul":null,"gamma":0.99,"reward":1,"regime_id":"x","step":2}`,
		)}}, map[string]string{"run_id": "r", "algo": "ppo", "lr": "0.0003", "gamma": "0.99", "source": "a"}},
		{"across objects", []object{
			{"a", lines(`{"run_id":"r","k":1,"v":1,"only_a":1,"reward":1,"regime_id":"x"}`, `{"run_id":"r","k":1,"v":1,"only_a":1,"reward":1,"regime_id":"x"}`)},
			{"b", lines(`{"run_id":"r","k":1.0,"v":2,"reward":1,"regime_id":"x"}`)},
		}, map[string]string{"run_id": "r", "k": "1", "source": "a"}},
		{"string 1 and number 1 differ", []object{{"a", lines(
			`{"run_id":"r","k":1,"reward":1,"regime_id":"x"}`,
			`{"run_id":"r","k":"1","reward":1,"regime_id":"x"}`,
		)}}, map[string]string{"run_id": "r", "source": "a"}},
		{"a recorded source is replaced", []object{{"dir/a.jsonl", lines(
			`{"run_id":"r","source":"sim","reward":1,"regime_id":"x"}`,
		)}}, map[string]string{"run_id": "r", "source": "dir/a.jsonl"}},
		{"schema fields are never metadata", []object{{"a", lines(
			`{"run_id":"r","reward":1,"regime_id":"x","regime_origin":"x","alias_of":"x","step":1,"components":{},"invalid_action":false,"effective_rank":1}`,
			`{"run_id":"r","reward":1,"regime_id":"x","regime_origin":"x","alias_of":"x","step":1,"components":{},"invalid_action":false,"effective_rank":1}`,
		)}}, map[string]string{"run_id": "r", "source": "a"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			traces := mustDecode(t, Options{}, c.objs...)
			if !reflect.DeepEqual(traces[0].Meta, c.want) {
				t.Errorf("meta\n%v\nwant\n%v", traces[0].Meta, c.want)
			}
		})
	}
}

// TestRunKeyCollision: distinct identities that render the same key stop
// the job with an error naming both.
func TestRunKeyCollision(t *testing.T) {
	cases := []struct {
		name string
		objs []object
		msg  []string
	}{
		{"string and number, one object", []object{{"a", lines(
			`{"run_id":"1","reward":1,"regime_id":"x"}`,
			`{"run_id":1,"reward":1,"regime_id":"x"}`,
		)}}, []string{`run_id="1" (string)`, `run_id=1 (number)`, "mem://b/a line 1"}},
		{"string and number, two objects", []object{
			{"a", lines(`{"run_id":"r","seed":"1","reward":1,"regime_id":"x"}`)},
			{"b", lines(`{"run_id":"q","reward":1,"regime_id":"x"}`, `{"run_id":"r","seed":1,"reward":1,"regime_id":"x"}`)},
		}, []string{`run key "run_id=r|seed=1"`, `seed="1" (string)`, `seed=1 (number)`, "mem://b/a line 1"}},
		{"separator inside a value", []object{{"a", lines(
			`{"run_id":"a|seed=1","reward":1,"regime_id":"x"}`,
			`{"run_id":"a","seed":1,"reward":1,"regime_id":"x"}`,
		)}}, []string{`run_id="a|seed=1" (string)`, `run_id="a" (string), seed=1 (number)`}},
		{"bool and string", []object{{"a", lines(
			`{"run_id":true,"reward":1,"regime_id":"x"}`,
			`{"run_id":"true","reward":1,"regime_id":"x"}`,
		)}}, []string{`run_id=true (bool)`, `run_id="true" (string)`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := decodeAll(t, Options{}, c.objs...)
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

func TestAssembleOrder(t *testing.T) {
	o1, _ := DecodeObject("u1", "b", strings.NewReader(okRow), Options{})
	o2, _ := DecodeObject("u2", "a", strings.NewReader(okRow), Options{})
	if _, err := Assemble([]*ObjectRuns{o1, o2}, Options{}); err == nil || !strings.Contains(err.Error(), "order") {
		t.Errorf("got %v", err)
	}
	if _, err := Assemble([]*ObjectRuns{o1, o1}, Options{}); err == nil {
		t.Error("repeated key accepted")
	}
	if _, err := Assemble([]*ObjectRuns{o1}, Options{Components: []string{"c"}}); err == nil {
		t.Error("components mismatch accepted")
	}
	// Assembling twice gives the same traces.
	a, _ := Assemble([]*ObjectRuns{o2, o1}, Options{})
	b, _ := Assemble([]*ObjectRuns{o2, o1}, Options{})
	if !reflect.DeepEqual(a, b) || len(a) != 1 || a[0].Len() != 2 {
		t.Errorf("got %s and %s", dump(a), dump(b))
	}
}
