package skillshift

import (
	"encoding/json"
	"fmt"
	"math/big"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/crlbatch/crlbatch/protocol"
)

// The cases in testdata/reference_cases.json were computed by
// testdata/reference.py, a Python implementation of PROTOCOLS 5 using the
// decimal module for the identity rounding. The arithmetic follows the same
// documented orders, so every value must be bit-identical (stronger than the
// protocol's 1e-9 agreement), every null null, every status equal.

type refMarginal struct {
	Key         string   `json:"key"`
	Value       *float64 `json:"value"`
	Invocations *float64 `json:"invocations"`
	Unstable    bool     `json:"unstable"`
	Cells       int      `json:"cells"`
}

type refCase struct {
	Name  string                       `json:"name"`
	Tasks []map[string]json.RawMessage `json:"tasks"`
	Exp   struct {
		Sites           []string    `json:"sites"`
		Conditions      []string    `json:"conditions"`
		Complete        bool        `json:"complete"`
		MissingCells    [][2]string `json:"missing_cells"`
		MissingExpected [][2]string `json:"missing_expected"`
		Cells           []struct {
			Site        string   `json:"site"`
			Condition   string   `json:"condition"`
			Tasks       int      `json:"tasks"`
			Successes   int      `json:"successes"`
			SR          *float64 `json:"SR"`
			AS          *float64 `json:"AS"`
			ASC         *float64 `json:"ASC"`
			SFR         *float64 `json:"SFR"`
			Invocations *float64 `json:"invocations"`
			Unstable    bool     `json:"sfr_unstable"`
		} `json:"cells"`
		Metrics map[string]struct {
			Null       bool          `json:"null"`
			Websites   []refMarginal `json:"websites"`
			Conditions []refMarginal `json:"conditions"`
			Overall    refMarginal   `json:"overall"`
			Identity   struct {
				Status     string         `json:"status"`
				Websites   float64        `json:"websites"`
				Conditions float64        `json:"conditions"`
				Overall    float64        `json:"overall"`
				Hundredths []*json.Number `json:"hundredths"`
			} `json:"identity"`
		} `json:"metrics"`
		ReasonKeys []string `json:"reason_keys"`
	} `json:"expected"`
}

func loadReference(t *testing.T) ([]refCase, []struct {
	X          float64     `json:"x"`
	Hundredths json.Number `json:"hundredths"`
}) {
	data, err := os.ReadFile("testdata/reference_cases.json")
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		Cases    []refCase `json:"cases"`
		Rounding []struct {
			X          float64     `json:"x"`
			Hundredths json.Number `json:"hundredths"`
		} `json:"rounding"`
	}
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.UseNumber()
	if err := dec.Decode(&file); err != nil {
		t.Fatal(err)
	}
	return file.Cases, file.Rounding
}

func TestIndependentReference(t *testing.T) {
	cases, _ := loadReference(t)
	if len(cases) < 20 {
		t.Fatalf("only %d reference cases", len(cases))
	}
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) { checkRefCase(t, &c) })
	}
}

func refTasks(t *testing.T, rows []map[string]json.RawMessage) []Task {
	var out []Task
	for i, raw := range rows {
		var tk Task
		get := func(key string, dst any) bool {
			v, ok := raw[key]
			if !ok || string(v) == "null" {
				return false
			}
			if err := json.Unmarshal(v, dst); err != nil {
				t.Fatalf("task %d %s: %v", i, key, err)
			}
			return true
		}
		get("uid", &tk.UID)
		get("site", &tk.Site)
		get("condition", &tk.Condition)
		get("success", &tk.Success)
		get("steps", &tk.Steps)
		tk.HasSkillCalls = get("skill_calls", &tk.SkillCalls)
		tk.HasSkillFailures = get("skill_failures", &tk.SkillFailures)
		out = append(out, tk)
	}
	return out
}

func checkRefCase(t *testing.T, c *refCase) {
	r, err := Score(&Run{Key: c.Name, Tasks: refTasks(t, c.Tasks)})
	if err != nil {
		t.Fatal(err)
	}
	e := &c.Exp
	if fmt.Sprint(r.Sites) != fmt.Sprint(e.Sites) || fmt.Sprint(r.Conditions) != fmt.Sprint(e.Conditions) {
		t.Fatalf("grid %v × %v, want %v × %v", r.Sites, r.Conditions, e.Sites, e.Conditions)
	}
	if r.Complete() != e.Complete {
		t.Errorf("complete %v", r.Complete())
	}
	keys := func(ks []CellKey) string {
		var s []string
		for _, k := range ks {
			s = append(s, k.Site+" "+k.Condition)
		}
		return fmt.Sprint(s)
	}
	pairs := func(ps [][2]string) string {
		var s []string
		for _, p := range ps {
			s = append(s, p[0]+" "+p[1])
		}
		return fmt.Sprint(s)
	}
	if keys(r.MissingCells) != pairs(e.MissingCells) || keys(r.MissingExpected) != pairs(e.MissingExpected) {
		t.Errorf("missing %v / %v, want %v / %v", r.MissingCells, r.MissingExpected, e.MissingCells, e.MissingExpected)
	}
	if len(r.Cells) != len(e.Cells) {
		t.Fatalf("%d cells, want %d", len(r.Cells), len(e.Cells))
	}
	for i, w := range e.Cells {
		g := &r.Cells[i]
		what := g.Key().String()
		if g.Site != w.Site || g.Condition != w.Condition || g.Tasks != w.Tasks || g.Successes != w.Successes {
			t.Errorf("cell %d: %s %d/%d, want %s/%s %d/%d", i, what, g.Successes, g.Tasks, w.Site, w.Condition, w.Successes, w.Tasks)
		}
		exact(t, what+" SR", g.SR, w.SR)
		exact(t, what+" AS", g.AS, w.AS)
		exact(t, what+" ASC", g.ASC, w.ASC)
		exact(t, what+" SFR", g.SFR, w.SFR)
		exact(t, what+" invocations", g.Invocations, w.Invocations)
		if g.SFRUnstable != w.Unstable {
			t.Errorf("%s unstable %v", what, g.SFRUnstable)
		}
	}
	for _, name := range Metrics {
		w, ok := e.Metrics[name]
		if !ok {
			t.Fatalf("reference lacks %s", name)
		}
		mr := r.Metric(name)
		if (mr.Reason != "") != w.Null {
			t.Errorf("%s null %v, reason %q", name, w.Null, mr.Reason)
		}
		margs := func(what string, got []Marginal, want []refMarginal) {
			if len(got) != len(want) {
				t.Errorf("%s %s: %d marginals, want %d", name, what, len(got), len(want))
				return
			}
			for i := range want {
				checkMarginal(t, name, got[i], want[i])
			}
		}
		margs("websites", mr.Websites, w.Websites)
		margs("conditions", mr.Conditions, w.Conditions)
		checkMarginal(t, name, mr.Overall, w.Overall)
		id := mr.Identity
		if string(id.Status) != w.Identity.Status {
			t.Errorf("%s identity %s, want %s", name, id.Summary(), w.Identity.Status)
			continue
		}
		if id.Status == StatusSkipped {
			continue
		}
		for i, pair := range []struct {
			got     protocol.Value
			rounded string
			want    float64
		}{{id.Websites, id.WebsitesRounded, w.Identity.Websites}, {id.Conditions, id.ConditionsRounded, w.Identity.Conditions}, {id.Overall, id.OverallRounded, w.Identity.Overall}} {
			exact(t, fmt.Sprintf("%s identity mean %d", name, i), pair.got, &pair.want)
			h, _ := new(big.Int).SetString(w.Identity.Hundredths[i].String(), 10)
			if pair.rounded != formatHundredths(h) {
				t.Errorf("%s identity mean %d rounded %s, want %s", name, i, pair.rounded, formatHundredths(h))
			}
		}
	}
	var got []string
	for k := range r.Reasons {
		got = append(got, k)
	}
	sort.Strings(got)
	if fmt.Sprint(got) != fmt.Sprint(e.ReasonKeys) {
		t.Errorf("reason keys\n got %v\nwant %v", got, e.ReasonKeys)
	}
}

func checkMarginal(t *testing.T, metric string, g Marginal, w refMarginal) {
	t.Helper()
	what := metric + " " + string(g.Scope) + " " + g.Key
	if g.Key != w.Key {
		t.Errorf("%s: key, want %s", what, w.Key)
		return
	}
	exact(t, what, g.Value, w.Value)
	exact(t, what+" invocations", g.Invocations, w.Invocations)
	if g.Unstable != w.Unstable || g.Cells != w.Cells {
		t.Errorf("%s: unstable %v cells %d, want %v %d", what, g.Unstable, g.Cells, w.Unstable, w.Cells)
	}
}

func exact(t *testing.T, what string, got protocol.Value, want *float64) {
	t.Helper()
	if want == nil {
		if got.OK {
			t.Errorf("%s = %.17g, want null", what, got.V)
		} else if got.Reason == "" {
			t.Errorf("%s: null without a reason", what)
		}
		return
	}
	if !got.OK {
		t.Errorf("%s: null (%s), want %.17g", what, got.Reason, *want)
		return
	}
	if got.V != *want {
		t.Errorf("%s = %.17g, want %.17g (bit-identical)", what, got.V, *want)
	}
}

func TestReferenceRounding(t *testing.T) {
	_, cases := loadReference(t)
	if len(cases) < 100 {
		t.Fatalf("only %d rounding cases", len(cases))
	}
	for _, c := range cases {
		want, ok := new(big.Int).SetString(c.Hundredths.String(), 10)
		if !ok {
			t.Fatalf("bad hundredths %s", c.Hundredths)
		}
		if got := hundredths(c.X); got.Cmp(want) != 0 {
			t.Errorf("hundredths(%v) = %s, Python's decimal gives %s", c.X, got, want)
		}
	}
}
