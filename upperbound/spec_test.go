package upperbound_test

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/crlbatch/crlbatch/configs"
	"github.com/crlbatch/crlbatch/upperbound"
)

func loadBundled(t testing.TB, name string) *upperbound.Spec {
	t.Helper()
	data, err := configs.RewardSpec(name)
	if err != nil {
		t.Fatal(err)
	}
	s, err := upperbound.ParseSpec(configs.RewardSpecPath(name), data)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestParseSpecBundled(t *testing.T) {
	unit := upperbound.Clip{Lo: 0, Hi: 1, HasLo: true, HasHi: true}
	penalty := upperbound.Clip{Lo: -1, Hi: 0, HasLo: true, HasHi: true}
	want := map[string]*upperbound.Spec{
		"paper": {Name: "paper", Components: []upperbound.Component{
			{Name: "collision", Weight: 1.0, Clip: penalty, Cadence: upperbound.CadenceStep},
			{Name: "success", Weight: 0.5, Clip: unit, Cadence: upperbound.CadenceEpisodeEnd},
		}},
		"experiment": {Name: "experiment", Components: []upperbound.Component{
			{Name: "progress", Weight: 0.3333333333333333, Clip: unit, Cadence: upperbound.CadenceStep},
			{Name: "collision", Weight: 1.0, Clip: penalty, Cadence: upperbound.CadenceStep},
			{Name: "success", Weight: 0.6666666666666667, Clip: unit, Cadence: upperbound.CadenceEpisodeEnd},
		}},
	}
	for name, w := range want {
		if got := loadBundled(t, name); !reflect.DeepEqual(got, w) {
			t.Errorf("%s:\n got %+v\nwant %+v", name, got, w)
		}
	}
}

func TestParseSpecOptionalParts(t *testing.T) {
	src := `
name: loose
components:
  - name: speed
    weight: 2
    clip: [null, 3]
    cadence: step
    gate: alive
  - name: cost
    weight: -0.5
    clip: [~, null]
    cadence: step
    gate: ~
`
	s, err := upperbound.ParseSpec("loose.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	want := &upperbound.Spec{Name: "loose", Components: []upperbound.Component{
		{Name: "speed", Weight: 2, Clip: upperbound.Clip{Hi: 3, HasHi: true}, Cadence: upperbound.CadenceStep, Gate: "alive"},
		{Name: "cost", Weight: -0.5, Cadence: upperbound.CadenceStep},
	}}
	if !reflect.DeepEqual(s, want) {
		t.Fatalf("got %+v\nwant %+v", s, want)
	}
	assertRoundTrip(t, s)
}

// badSpecs maps every file in testdata/*.bad.yaml to a substring its error
// must contain. A file without an entry fails the test, so none goes
// unchecked.
var badSpecs = map[string]string{
	"unknown_top_key.bad.yaml":        `unknown_top_key.bad.yaml: line 2: unknown key "descripton" in the reward spec`,
	"unknown_component_key.bad.yaml":  `line 6: component "progress": unknown key "cadance" in a component`,
	"clip_lo_above_hi.bad.yaml":       `line 5: component "progress": clip low end 1 exceeds high end 0`,
	"clip_end_not_number.bad.yaml":    `line 5: component "progress": clip high end must be a number, got the string "one"`,
	"clip_end_infinite.bad.yaml":      `component "progress": clip high end must be a finite number, got .inf`,
	"clip_one_end.bad.yaml":           `component "progress": clip must be a list of two ends [lo, hi]`,
	"clip_not_list.bad.yaml":          `component "progress": clip must be a list of two ends [lo, hi] (null for unbounded), got the number 1.0`,
	"unknown_cadence.bad.yaml":        `line 6: component "progress": unknown cadence "sometimes" (want step or episode_end)`,
	"cadence_wrong_case.bad.yaml":     `component "success": unknown cadence "EPISODE_END"`,
	"missing_weight.bad.yaml":         `line 3: component "progress": missing key weight`,
	"null_weight.bad.yaml":            `component "progress": weight must be a number, got null`,
	"weight_string.bad.yaml":          `component "progress": weight must be a number, got the string "0.5"`,
	"weight_nan.bad.yaml":             `component "progress": weight must be a finite number, got .nan`,
	"missing_component_name.bad.yaml": `line 7: component #2: missing key name`,
	"missing_cadence.bad.yaml":        `component "progress": missing key cadence`,
	"missing_clip.bad.yaml":           `component "progress": missing key clip`,
	"duplicate_component.bad.yaml":    `line 7: component "progress": name already used by the component on line 3`,
	"duplicate_key.bad.yaml":          `line 5: component "progress": key "weight" given twice`,
	"empty_components.bad.yaml":       `line 2: components is empty`,
	"missing_components.bad.yaml":     `missing key components`,
	"missing_spec_name.bad.yaml":      `line 1: missing key name`,
	"empty_spec_name.bad.yaml":        `line 1: name is empty`,
	"component_not_mapping.bad.yaml":  `component #1: a component must be a mapping, got the string "progress"`,
	"top_not_mapping.bad.yaml":        `the reward spec must be a mapping, got a list of 1`,
	"gate_mapping.bad.yaml":           `component "progress": gate must be a string or null, got a mapping`,
	"alias.bad.yaml":                  `line 9: component "success": aliases are not allowed`,
	"two_documents.bad.yaml":          `single YAML document`,
	"empty.bad.yaml":                  `empty.bad.yaml: empty reward spec`,
	"syntax.bad.yaml":                 `did not find expected ',' or ']'`,
}

func TestParseSpecBad(t *testing.T) {
	files, err := filepath.Glob("testdata/*.bad.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != len(badSpecs) {
		t.Errorf("%d files in testdata, %d expectations", len(files), len(badSpecs))
	}
	for _, path := range files {
		base := filepath.Base(path)
		t.Run(base, func(t *testing.T) {
			want, ok := badSpecs[base]
			if !ok {
				t.Fatalf("no expected error for %s", base)
			}
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			s, err := upperbound.ParseSpec(path, data)
			if err == nil {
				t.Fatalf("accepted: %+v", s)
			}
			if !strings.HasPrefix(err.Error(), path+":") {
				t.Errorf("error %q does not start with the file name", err)
			}
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error %q\nlacks %q", err, want)
			}
		})
	}
}

func TestSpecErrorFields(t *testing.T) {
	data, err := os.ReadFile("testdata/unknown_component_key.bad.yaml")
	if err != nil {
		t.Fatal(err)
	}
	_, err = upperbound.ParseSpec("x.yaml", data)
	var se *upperbound.SpecError
	if !errors.As(err, &se) {
		t.Fatalf("%v is not a *SpecError", err)
	}
	if se.Path != "x.yaml" || se.Line != 6 || se.Index != 1 || se.Component != "progress" {
		t.Errorf("got %+v", se)
	}
}

func TestSpecValidate(t *testing.T) {
	good := upperbound.Component{Name: "a", Weight: 1, Cadence: upperbound.CadenceStep}
	cases := []struct {
		name string
		spec *upperbound.Spec
		want string
	}{
		{"nil", nil, "nil"},
		{"no name", &upperbound.Spec{Components: []upperbound.Component{good}}, "no name"},
		{"no components", &upperbound.Spec{Name: "s"}, "no components"},
		{"dup", &upperbound.Spec{Name: "s", Components: []upperbound.Component{good, good}}, `component "a" is defined twice`},
		{"cadence", &upperbound.Spec{Name: "s", Components: []upperbound.Component{{Name: "a", Weight: 1}}}, "unknown cadence"},
		{"lo>hi", &upperbound.Spec{Name: "s", Components: []upperbound.Component{{Name: "a", Weight: 1, Cadence: upperbound.CadenceStep,
			Clip: upperbound.Clip{Lo: 2, Hi: 1, HasLo: true, HasHi: true}}}}, "exceeds"},
	}
	for _, c := range cases {
		err := c.spec.Validate()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want %q", c.name, err, c.want)
		}
	}
}

func TestEpisodeEndComponents(t *testing.T) {
	if got := upperbound.EpisodeEndComponents(loadBundled(t, "experiment")); !reflect.DeepEqual(got, []string{"success"}) {
		t.Errorf("experiment: %v", got)
	}
	if got := upperbound.EpisodeEndComponents(nil); got != nil {
		t.Errorf("nil spec: %v", got)
	}
}

func assertRoundTrip(t testing.TB, s *upperbound.Spec) {
	t.Helper()
	enc, err := s.Encode()
	if err != nil {
		t.Fatalf("encode %+v: %v", s, err)
	}
	back, err := upperbound.ParseSpec("reencoded.yaml", enc)
	if err != nil {
		t.Fatalf("re-parse of\n%s: %v", enc, err)
	}
	if !reflect.DeepEqual(s, back) {
		t.Fatalf("round trip changed the spec:\n got %+v\nwant %+v\nYAML:\n%s", back, s, enc)
	}
}

func FuzzParseSpec(f *testing.F) {
	for _, name := range configs.RewardSpecNames() {
		data, err := configs.RewardSpec(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	files, _ := filepath.Glob("testdata/*.yaml")
	for _, path := range files {
		data, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte("name: n\ncomponents:\n  - {name: a, weight: -0, clip: [null, ~], cadence: step, gate: g}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := upperbound.ParseSpec("fuzz.yaml", data)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz.yaml:") {
				t.Fatalf("error without the file name: %v", err)
			}
			return
		}
		if err := s.Validate(); err != nil {
			t.Fatalf("accepted a spec that does not validate: %v", err)
		}
		assertRoundTrip(t, s)
		// Deriving must not panic either; unbounded specs fail cleanly.
		if b, err := upperbound.Analytic(s); err == nil {
			if err := b.Validate(); err != nil {
				t.Fatalf("analytic bound of an accepted spec: %v", err)
			}
		}
	})
}
