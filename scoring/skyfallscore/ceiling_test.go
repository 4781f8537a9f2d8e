package skyfallscore

import (
	"reflect"
	"strings"
	"testing"

	"github.com/crlbatch/crlbatch/protocol/skyfall"
	"github.com/crlbatch/crlbatch/scoring"
)

// lightObjects decodes the objects of a small sweep whose runs r and q
// span both objects, with the job's decoder.
func lightObjects(t *testing.T, j *job) []scoring.Object {
	t.Helper()
	objs := []string{
		`{"run_id":"r","reward":1,"regime_id":"x"}` + "\n" +
			`{"run_id":"q","reward":2,"regime_id":"y","components":{"success":1}}` + "\n" +
			`{"run_id":"r","reward":3,"regime_id":"y","components":{"success":1}}` + "\n",
		`{"run_id":"r","reward":4,"regime_id":"z"}` + "\n" +
			`{"run_id":"q","reward":5,"regime_id":"x"}` + "\n" +
			`{"run_id":"s","reward":6,"regime_id":"x","components":{"success":-0.0}}` + "\n",
	}
	var out []scoring.Object
	for i, data := range objs {
		key := string(rune('a'+i)) + ".jsonl"
		o, err := j.dec.Decode("mem://b/"+key, key, strings.NewReader(data), nil)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, o)
	}
	return out
}

// TestPrepareLight: Prepare's by_configuration pass over the decoder's
// light runs (each part counted on its own) gives the ceilings of the
// pass over assembled runs, and hands over the same runs (keys, metadata,
// rows, labels); the decoder has no light runs outside that pass, nor for
// data_relative.
func TestPrepareLight(t *testing.T) {
	spec, err := LoadSpec("experiment")
	if err != nil {
		t.Fatal(err)
	}
	newJob := func(mode string) *job {
		sj, err := NewJob(Config{Params: skyfall.DefaultParams(), Spec: spec, SpecName: "experiment", CeilingMode: mode}, scoring.Env{Concurrency: 2})
		if err != nil {
			t.Fatal(err)
		}
		return sj.(*job)
	}
	type seen struct {
		key          string
		meta         map[string]string
		rows, labels int
	}
	prepare := func(j *job, light bool) ([]seen, *ceilingInfo) {
		objs := lightObjects(t, j)
		var runs []seen
		err := j.Prepare(func(fn func(*scoring.Run) error) error {
			each := func(r *scoring.Run) error {
				runs = append(runs, seen{r.Key, r.Meta, r.Rows, r.Labels})
				defer j.dec.Done(r)
				return fn(r)
			}
			if light {
				ok, err := j.dec.AssembleLight(objs, func(r *scoring.Run) error {
					if _, counted := r.Data.(*countedRun); !counted {
						t.Errorf("run %s: light run of %T", r.Key, r.Data)
					}
					return each(r)
				})
				if !ok {
					t.Error("no light runs in the by_configuration pass")
				}
				return err
			}
			return j.dec.Assemble(objs, each)
		})
		if err != nil {
			t.Fatal(err)
		}
		return runs, j.info
	}
	wantRuns, want := prepare(newJob(CeilingByConfiguration), false)
	gotRuns, got := prepare(newJob(CeilingByConfiguration), true)
	if !reflect.DeepEqual(got, want) || len(want.Values) != 3 {
		t.Errorf("light: %+v\n want %+v", got, want)
	}
	if !reflect.DeepEqual(gotRuns, wantRuns) || len(wantRuns) != 3 {
		t.Errorf("light runs %+v\n want %+v", gotRuns, wantRuns)
	}
	j := newJob(CeilingByConfiguration)
	if ok, err := j.dec.AssembleLight(lightObjects(t, j), nil); ok || err != nil {
		t.Errorf("outside Prepare: ok %v, err %v", ok, err)
	}
	j = newJob(CeilingDataRelative)
	objs := lightObjects(t, j)
	err = j.Prepare(func(fn func(*scoring.Run) error) error {
		if ok, err := j.dec.AssembleLight(objs, fn); ok || err != nil {
			t.Errorf("data_relative: ok %v, err %v", ok, err)
		}
		return j.dec.Assemble(objs, fn)
	})
	if err != nil {
		t.Fatal(err)
	}
}
