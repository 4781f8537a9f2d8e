package readers

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/crlbatch/crlbatch/protocol/skyfall"
)

// genObjects makes a small random sweep: a few objects of rows whose
// identities, labels and extras come from small pools, so that runs split
// across objects, anonymous rows, equal-but-differently-written values,
// run-key collisions and the odd bad line all turn up.
func genObjects(seed uint64) []object {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	pick := func(xs ...string) string { return xs[rng.IntN(len(xs))] }
	nObj := 1 + rng.IntN(4)
	var objs []object
	for i := range nObj {
		var sb strings.Builder
		if rng.IntN(8) == 0 {
			sb.WriteString("\ufeff")
		}
		for range rng.IntN(8) {
			var f []string
			for _, id := range []struct{ name, vals string }{
				{"run_id", `"r1","r2","1",1,null,1.0,"r1"`},
				{"seed", `0,1,1.0,"1",null,-0,10e-1`},
				{"task", `"t","u",true,{"a":1},[1,"x"]`},
			} {
				if rng.IntN(3) > 0 {
					vals := strings.Split(id.vals, ",")
					f = append(f, fmt.Sprintf("%q:%s", id.name, vals[rng.IntN(len(vals))]))
				}
			}
			f = append(f, fmt.Sprintf(`"reward":%s`, pick("1", "-0.5", "0.1", "1e-3", "2.5e1", "-0", "123456789.123456789")))
			f = append(f, fmt.Sprintf(`"regime_id":%s`, pick(`"a"`, `"b"`, `"a_again"`, `"\u0061"`)))
			if rng.IntN(3) == 0 {
				f = append(f, fmt.Sprintf(`"regime_origin":%s`, pick(`"a"`, `null`, `"b"`)))
			}
			if rng.IntN(4) == 0 {
				f = append(f, fmt.Sprintf(`"alias_of":%s`, pick(`"a"`, `null`)))
			}
			if rng.IntN(2) == 0 {
				f = append(f, fmt.Sprintf(`"step":%d`, rng.IntN(5)))
			}
			if rng.IntN(2) == 0 {
				f = append(f, fmt.Sprintf(`"components":{"progress":%s,"other":1}`, pick("0", "0.5", "1e0")))
			}
			if rng.IntN(3) == 0 {
				f = append(f, fmt.Sprintf(`"invalid_action":%s`, pick("true", "false", "null")))
			}
			if rng.IntN(3) == 0 {
				f = append(f, fmt.Sprintf(`"effective_rank":%s`, pick("1", "null", "2.5")))
			}
			if rng.IntN(2) == 0 {
				f = append(f, fmt.Sprintf(`"gamma":%s`, pick("0.99", "0.9", "null", "99e-2")))
			}
			for _, x := range []struct{ name, vals string }{
				{"algo", `"ppo"|"sac"|"ppo"`},
				{"lr", `3e-4|0.0003|"3e-4"`},
				{"cfg", `{"b":1,"a":[1,2]}|{"a":[1,2.0],"b":1}|{"a":[2,1],"b":1}`},
				{"obs", `1|2|3|"x"`},
				{"source", `"sim"`},
			} {
				if rng.IntN(4) > 0 {
					vals := strings.Split(x.vals, "|")
					f = append(f, fmt.Sprintf("%q:%s", x.name, vals[rng.IntN(len(vals))]))
				}
			}
			rng.Shuffle(len(f), func(a, b int) { f[a], f[b] = f[b], f[a] })
			line := "{" + strings.Join(f, ",") + "}"
			if rng.IntN(40) == 0 {
				line = line[:rng.IntN(len(line))]
			}
			sb.WriteString(line)
			sb.WriteString(pick("\n", "\r\n", "\n\n", "\n  \n"))
		}
		objs = append(objs, object{key: fmt.Sprintf("runs/%02d.jsonl", i), data: sb.String()})
	}
	return objs
}

// assembleConcurrently decodes every object in its own goroutine, as the
// pipeline does, then assembles in key order.
func assembleConcurrently(objs []object, opts Options) ([]*skyfall.Trace, error) {
	decoded := make([]*ObjectRuns, len(objs))
	errs := make([]error, len(objs))
	var wg sync.WaitGroup
	for i, o := range objs {
		wg.Go(func() {
			decoded[i], errs[i] = DecodeObject("mem://b/"+o.key, o.key, strings.NewReader(o.data), opts)
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return Assemble(decoded, opts)
}

// refRun is a run as the reference assembly sees it.
type refRun struct {
	Key     string
	Rewards []float64
	Labels  []string
	Meta    map[string]string
}

// refAssemble is PROTOCOLS 1.2 written out plainly over refDecode.
func refAssemble(objs []object, idFields []string) ([]refRun, error) {
	var runs []*refRun
	byIdent := map[string]*refRun{}
	identOf := map[string]string{} // run key → identity
	type metaState struct {
		vals map[string]string
		rows int
	}
	state := map[*refRun]*metaState{}
	for _, o := range objs {
		data := strings.TrimPrefix(o.data, "\ufeff")
		var anon *refRun
		for _, line := range strings.Split(data, "\n") {
			line = strings.TrimSuffix(line, "\r")
			if strings.Trim(line, " \t\r") == "" {
				continue
			}
			row, err := refDecode([]byte(line), nil)
			if err != nil {
				return nil, err
			}
			extras := map[string]refExtra{}
			for _, e := range row.Extras {
				extras[e.Key] = e
			}
			var ident, key []string
			for _, f := range idFields {
				if e, ok := extras[f]; ok && e.Canon != "" {
					if e.Canon[0] == 'j' { // an object or array: identities are scalars
						return nil, fmt.Errorf("identity field %s is not a scalar", f)
					}
					ident = append(ident, f+"\x00"+e.Canon)
					key = append(key, f+"="+e.Canon[1:])
				}
			}
			var r *refRun
			if len(ident) == 0 {
				if anon == nil {
					anon = &refRun{Key: "anonymous:" + o.key}
					runs = append(runs, anon)
				}
				r = anon
			} else {
				id := strings.Join(ident, "\x01")
				r = byIdent[id]
				if r == nil {
					r = &refRun{Key: strings.Join(key, "|")}
					if prev, ok := identOf[r.Key]; ok && prev != id {
						return nil, fmt.Errorf("collision on %s", r.Key)
					}
					identOf[r.Key] = id
					byIdent[id] = r
					runs = append(runs, r)
				}
			}
			r.Rewards = append(r.Rewards, row.Reward)
			r.Labels = append(r.Labels, row.Label)
			st := state[r]
			if st == nil {
				st = &metaState{vals: map[string]string{}}
				for k, e := range extras {
					if e.Canon != "" {
						st.vals[k] = e.Canon
					}
				}
				st.vals["source"] = "s" + o.key
				state[r] = st
			} else {
				for k, v := range st.vals {
					if k != "source" && extras[k].Canon != v {
						delete(st.vals, k)
					}
				}
			}
		}
	}
	out := make([]refRun, len(runs))
	for i, r := range runs {
		r.Meta = map[string]string{}
		for k, v := range state[r].vals {
			r.Meta[k] = v[1:]
		}
		out[i] = *r
	}
	return out, nil
}

func FuzzAssemble(f *testing.F) {
	for s := range uint64(16) {
		f.Add(s, []byte(nil))
	}
	f.Add(uint64(3), []byte(rows0))
	f.Add(uint64(4), []byte(`{"run_id":"r1","reward":1,"regime_id":"x"}`))
	f.Fuzz(func(t *testing.T, seed uint64, raw []byte) {
		objs := genObjects(seed)
		if len(raw) > 0 {
			objs = append(objs, object{key: "runs/99-raw", data: string(raw)})
		}
		opts := Options{Components: []string{"progress"}}
		got, err := decodeAll(t, opts, objs...)
		again, err2 := assembleConcurrently(objs, opts)
		if (err == nil) != (err2 == nil) || err != nil && err.Error() != err2.Error() {
			t.Fatalf("two runs disagree: %v / %v", err, err2)
		}
		if !reflect.DeepEqual(got, again) {
			t.Fatalf("two runs disagree:\n%s\n%s", dump(got), dump(again))
		}
		want, werr := refAssemble(objs, DefaultIdentityFields)
		if (err == nil) != (werr == nil) {
			t.Fatalf("reader: %v; reference: %v", err, werr)
		}
		if err != nil {
			asDataError(t, err)
			return
		}
		var gotRuns []refRun
		for _, tr := range got {
			if err := tr.Validate(); err != nil {
				t.Fatal(err)
			}
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
