package records_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/crlbatch/crlbatch/readers"
	"github.com/crlbatch/crlbatch/scoring"
	"github.com/crlbatch/crlbatch/scoring/records"
)

var desc = scoring.Description{
	Rows:     []scoring.Field{{Name: "x", Type: "number", Required: true}},
	Identity: []string{"run_id", "seed"},
}

func check(r *readers.Record) error {
	if _, ok, err := r.Number("x"); err != nil {
		return err
	} else if !ok {
		return r.MissingError("x", "number")
	}
	return nil
}

func decoder(t *testing.T, env scoring.Env) *records.Decoder {
	t.Helper()
	d := records.NewDecoder(records.Options("toy", desc, env, check))
	if err := d.Check(); err != nil {
		t.Fatal(err)
	}
	return d
}

func TestDecoder(t *testing.T) {
	d := decoder(t, scoring.Env{}) // identity: the description's
	if o := d.Options(); strings.Join(o.IdentityFields, ",") != "run_id,seed" || strings.Join(o.SchemaFields, ",") != "x" {
		t.Fatalf("options %+v", o)
	}
	var bad []*readers.DataError
	onBad := func(e *readers.DataError) error { bad = append(bad, e); return nil }
	a, err := d.Decode("mem://in/a.jsonl", "a.jsonl", strings.NewReader(`{"run_id":"r","seed":1,"x":1,"lr":0.1}
{"run_id":"r","seed":1,"x":"no"}
{"run_id":"q","seed":2,"x":3,"lr":0.1}
`), onBad)
	if err != nil {
		t.Fatal(err)
	}
	b, err := d.Decode("mem://in/b.jsonl", "b.jsonl", strings.NewReader(`{"run_id":"r","seed":1,"x":2,"lr":0.1}`+"\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if a.Rows() != 2 || a.NumRuns() != 2 || b.Rows() != 1 || b.NumRuns() != 1 {
		t.Errorf("a: %d rows, %d runs; b: %d rows, %d runs", a.Rows(), a.NumRuns(), b.Rows(), b.NumRuns())
	}
	if len(bad) != 1 || !strings.HasPrefix(bad[0].Error(), "mem://in/a.jsonl: line 2: x: ") {
		t.Errorf("bad rows %v", bad)
	}
	objs := []scoring.Object{a, b}
	if cs := d.Conflicts(objs); len(cs) != 0 {
		t.Errorf("conflicts %v", cs)
	}
	var got []string
	err = d.Assemble(objs, func(r *scoring.Run) error {
		rr, err := records.RecordRun(r)
		if err != nil {
			return err
		}
		if r.Rows != len(rr.Rows) || r.Key != rr.Key || r.Labels != 0 {
			t.Errorf("run %+v", r)
		}
		got = append(got, r.Key+" "+r.Source()+" "+r.Meta["lr"]+" "+string(rune('0'+r.Rows)))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := "run_id=r|seed=1 a.jsonl 0.1 2,run_id=q|seed=2 a.jsonl 0.1 1"; strings.Join(got, ",") != want {
		t.Errorf("runs %q, want %q", got, want)
	}
	stop := errors.New("stop")
	if err := d.Assemble(objs, func(*scoring.Run) error { return stop }); err != stop {
		t.Errorf("fn's error came back as %v", err)
	}
	for _, o := range objs {
		if err := o.Release(); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.Assemble(objs, func(*scoring.Run) error { return nil }); err == nil {
		t.Error("assembled released objects")
	}
}

func TestDecoderCheck(t *testing.T) {
	for _, ids := range [][]string{{"x"}, {"run_id", "run_id"}, {""}} {
		d := records.NewDecoder(records.Options("toy", desc, scoring.Env{Reader: readers.Options{IdentityFields: ids}}, check))
		var ue *scoring.UsageError
		if err := d.Check(); !errors.As(err, &ue) {
			t.Errorf("identity %q: %v, want a usage error", ids, err)
		}
	}
	// A non-nil empty identity: one anonymous run per object.
	d := decoder(t, scoring.Env{Reader: readers.Options{IdentityFields: []string{}}})
	o, err := d.Decode("mem://in/a.jsonl", "a.jsonl", strings.NewReader(`{"run_id":"r","x":1}`+"\n"+`{"run_id":"q","x":1}`+"\n"), nil)
	if err != nil || o.NumRuns() != 1 {
		t.Fatalf("%v, %v", o, err)
	}
	// --max-runs reaches the decoder.
	d = decoder(t, scoring.Env{Reader: readers.Options{IdentityFields: []string{"run_id"}, MaxRuns: 1}})
	_, err = d.Decode("mem://in/a.jsonl", "a.jsonl", strings.NewReader(`{"run_id":"r","x":1}`+"\n"+`{"run_id":"q","x":1}`+"\n"), nil)
	var de *readers.DataError
	if !errors.As(err, &de) || de.Line != 2 {
		t.Errorf("two runs under --max-runs 1: %v", err)
	}
}

func TestConflicts(t *testing.T) {
	d := decoder(t, scoring.Env{Reader: readers.Options{IdentityFields: []string{"run_id"}}})
	a, err := d.Decode("mem://in/a.jsonl", "a.jsonl", strings.NewReader(`{"run_id":"1","x":1}`+"\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := d.Decode("mem://in/b.jsonl", "b.jsonl", strings.NewReader(`{"run_id":1,"x":1}`+"\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if cs := d.Conflicts([]scoring.Object{a, b}); len(cs) != 1 {
		t.Errorf("conflicts %v, want one", cs)
	}
	err = d.Assemble([]scoring.Object{a, b}, func(*scoring.Run) error { return nil })
	var de *readers.DataError
	if !errors.As(err, &de) {
		t.Errorf("assembling a clash: %v", err)
	}
}

type toyParams struct {
	Protocol string  `json:"protocol"`
	Window   float64 `json:"window"`
	Rank     string  `json:"rank,omitempty"`
	scoring.Common
}

// The header lists crlbatch.params in their JSON order, "protocol" left
// out, each value as JSON; where is [] as the engine gives it without a filter. Numbers go
// through float64, as they always have: a bootstrap seed above 2^53 is
// shown rounded (crlbatch.params itself keeps it exact).
func TestHeader(t *testing.T) {
	b := "x"
	res := &scoring.Results{Input: "file:///in", Version: "v1"}
	p := toyParams{Protocol: "toy", Window: 0.2, Common: scoring.Common{
		GroupBy: []string{"algorithm_id"}, Baseline: &b, Where: []scoring.Filter{}, IdentityFields: []string{}, BootstrapResamples: 10, BootstrapSeed: 1 << 60, ConfidenceLevel: 0.95,
	}}
	h, err := records.Header("toy", p, res)
	if err != nil {
		t.Fatal(err)
	}
	var kv []string
	for _, x := range h.Params {
		kv = append(kv, x.Key+"="+x.Value)
	}
	want := `window=0.2 group_by=["algorithm_id"] baseline="x" min_steps=0 where=[] identity_fields=[] patterns=null bootstrap_resamples=10 bootstrap_seed=1152921504606847000 confidence_level=0.95`
	if strings.Join(kv, " ") != want {
		t.Errorf("params\n%s\nwant\n%s", strings.Join(kv, " "), want)
	}
	if h.Title != "crlbatch report: toy" || h.Protocol != "toy" || h.Input != "file:///in" || h.Version != "v1" || h.Bound != "" {
		t.Errorf("header %+v", h)
	}
}

func TestMetrics(t *testing.T) {
	ms := records.Metrics(func(m string) (bool, bool) { return true, m == "up" }, []string{"up"}, []string{"count"})
	if len(ms) != 2 || ms[0].HigherIsBetter == nil || !*ms[0].HigherIsBetter || ms[1].HigherIsBetter != nil {
		t.Errorf("metrics %+v", ms)
	}
	if !ms[0].PerKey || ms[1].PerKey || ms[0].Name != "up" || ms[1].Name != "count" {
		t.Errorf("metrics %+v: want up per key, then count per run", ms)
	}
}

func TestRead(t *testing.T) {
	rr := &readers.RecordRun{Key: "k"}
	got, n, err := records.Read(&scoring.Run{Key: "k", Data: rr}, func(r *readers.RecordRun) (int, error) { return 7, nil })
	if err != nil || got != rr || n != 7 {
		t.Errorf("Read = %v, %d, %v", got, n, err)
	}
	bad := errors.New("row 3 is bad")
	if _, _, err := records.Read(&scoring.Run{Key: "k", Data: rr}, func(*readers.RecordRun) (int, error) { return 0, bad }); err != bad {
		t.Errorf("a read error comes back as %v, want it as it is", err)
	}
	if _, _, err := records.Read(&scoring.Run{Key: "k", Data: "not a run"}, func(*readers.RecordRun) (int, error) { return 0, nil }); err == nil {
		t.Error("a run from another decoder is read")
	}
}
