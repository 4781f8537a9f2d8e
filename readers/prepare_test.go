package readers

import (
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/crlbatch/crlbatch/protocol/skyfall"
)

// planned is what a light pass learns of one run: its key, metadata, and
// its rows' rewards and label names, its pieces' columns in order.
type planned struct {
	key     string
	meta    map[string]string
	rewards []uint64
	labels  []string
	names   []string
}

func plannedOf(t *skyfall.Trace) planned {
	p := planned{key: t.Key, meta: t.Meta, names: t.LabelNames}
	for i, r := range t.Rewards {
		p.rewards = append(p.rewards, math.Float64bits(r))
		p.labels = append(p.labels, t.LabelNames[t.Labels[i]])
	}
	return p
}

// lightPass runs PlanRuns and each planned run's pieces (PartBuilder, materialised),
// stopping where CheckLabels fails: the runs it got to and the error.
func lightPass(t *testing.T, objs []*ObjectRuns, opts Options) ([]planned, bool, error) {
	t.Helper()
	runs, ok, err := PlanRuns(objs, opts)
	if err != nil || !ok {
		if len(runs) != 0 {
			t.Errorf("PlanRuns: %d runs with ok %v, err %v", len(runs), ok, err)
		}
		return []planned{}, ok, err
	}
	pool := &skyfall.TracePool{}
	got := []planned{}
	for _, r := range runs {
		p := planned{key: r.Key, meta: r.Meta()}
		for _, pc := range r.Pieces {
			tr := objs[pc.Object].PartBuilder(pc.Part).TraceFrom(pool, nil)
			q := plannedOf(tr)
			p.rewards = append(p.rewards, q.rewards...)
			p.labels = append(p.labels, q.labels...)
			for _, n := range q.names {
				if !slices.Contains(p.names, n) {
					p.names = append(p.names, n)
				}
			}
			pool.Put(tr)
		}
		if err := r.CheckLabels(len(p.names)); err != nil {
			return got, true, err
		}
		got = append(got, p)
	}
	return got, true, nil
}

// TestPlanRuns: the planned runs, their pieces' columns taken one by one,
// are AssembleEachKeep's runs (keys, metadata, rows, the order of the
// labels), and the light pass fails where AssembleEachKeep fails, after
// the same runs, with the same error: options, key order, run-key clash,
// --max-runs, --max-labels across objects. The objects are not modified:
// assembling after the light pass gives the same.
func TestPlanRuns(t *testing.T) {
	cases := append(slices.Clone(spillCases),
		struct {
			name string
			opts Options
			objs []object
		}{"invalid options", Options{IdentityFields: []string{"reward"}}, []object{{"a", lines(`{"reward":1,"regime_id":"x"}`)}}},
		struct {
			name string
			opts Options
			objs []object
		}{"max-labels, the later of two runs across objects", Options{MaxLabels: 2}, []object{
			{"a", lines(`{"run_id":"q","reward":1,"regime_id":"x"}`, `{"run_id":"q","reward":1,"regime_id":"y"}`, `{"run_id":"r","reward":1,"regime_id":"x"}`, `{"run_id":"r","reward":1,"regime_id":"y"}`)},
			{"b", lines(`{"run_id":"q","reward":1,"regime_id":"y"}`, `{"run_id":"r","reward":1,"regime_id":"z"}`)},
		}},
	)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dopts := c.opts
			if c.name == "invalid options" {
				dopts = Options{}
			}
			objs := decodeObjects(t, dopts, c.objs...)
			want := []planned{}
			werr := AssembleEachKeep(objs, c.opts, func(_ int, tr *skyfall.Trace) error {
				want = append(want, plannedOf(tr))
				return nil
			})
			failing := strings.Contains(c.name, "max-") || strings.Contains(c.name, "collision") || strings.Contains(c.name, "invalid")
			if failing != (werr != nil) {
				t.Fatalf("AssembleEachKeep: %v", werr)
			}
			if c.name == "max-labels, the later of two runs across objects" && (len(want) != 1 || !strings.Contains(werr.Error(), "run run_id=r has more than 2 labels")) {
				t.Fatalf("AssembleEachKeep: %d runs, then %v", len(want), werr)
			}
			for range 2 { // twice: the light pass modifies nothing
				got, ok, gerr := lightPass(t, objs, c.opts)
				if !ok && gerr == nil {
					t.Fatal("objects held in memory: not ok")
				}
				if (gerr == nil) != (werr == nil) || gerr != nil && gerr.Error() != werr.Error() {
					t.Fatalf("error %v, want %v", gerr, werr)
				}
				if werr != nil {
					var gde, wde *DataError
					if asDE(gerr, &gde) != asDE(werr, &wde) || gde != nil && (gde.URL != wde.URL || gde.Line != wde.Line) {
						t.Errorf("error %#v, want %#v", gerr, werr)
					}
				}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("light pass\n got %+v\nwant %+v", got, want)
				}
			}
			again := []planned{}
			AssembleEachKeep(objs, c.opts, func(_ int, tr *skyfall.Trace) error {
				again = append(again, plannedOf(tr))
				return nil
			})
			if !reflect.DeepEqual(again, want) {
				t.Errorf("assembled after the light pass\n got %+v\nwant %+v", again, want)
			}
		})
	}
}

func asDE(err error, de **DataError) bool {
	d, ok := err.(*DataError)
	*de = d
	return ok
}

// TestPlanRunsNotHeld: a spilled object, or a part read back from an
// encoding, leaves the caller to assemble (ok false, no error); an object
// whose rows were released fails as AssembleEachKeep fails.
func TestPlanRunsNotHeld(t *testing.T) {
	c := spillCases[0]
	objs := decodeObjects(t, c.opts, c.objs...)
	if err := objs[1].Spill(t.TempDir()); err != nil {
		t.Fatal(err)
	}
	if runs, ok, err := PlanRuns(objs, c.opts); ok || err != nil || runs != nil {
		t.Errorf("spilled: %d runs, ok %v, err %v", len(runs), ok, err)
	}
	objs = decodeObjects(t, c.opts, c.objs...)
	enc, err := objs[0].AppendEncoding(nil)
	if err != nil {
		t.Fatal(err)
	}
	if objs[0], err = DecodeEncodedObject(objs[0].URL, objs[0].Key, enc, c.opts); err != nil {
		t.Fatal(err)
	}
	if runs, ok, err := PlanRuns(objs, c.opts); ok || err != nil || runs != nil {
		t.Errorf("encoded: %d runs, ok %v, err %v", len(runs), ok, err)
	}
	objs = decodeObjects(t, c.opts, c.objs...)
	if err := objs[2].Release(); err != nil {
		t.Fatal(err)
	}
	werr := AssembleEachKeep(objs, c.opts, func(int, *skyfall.Trace) error { return nil })
	_, ok, gerr := PlanRuns(objs, c.opts)
	if werr == nil || gerr == nil || gerr.Error() != werr.Error() || ok {
		t.Errorf("released: %v (ok %v), want %v", gerr, ok, werr)
	}
	if !strings.Contains(gerr.Error(), "released") {
		t.Errorf("released: %v", gerr)
	}
}
