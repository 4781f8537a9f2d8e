package readers

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// stretchLines returns n rows of three runs written in blocks of 1–40 rows
// of one run, each run's labels in stretches of 1–60 rows. step,
// invalid_action, effective_rank, components, regime_origin, alias_of and
// gamma are on some stretches only, or on some of their rows; one row in
// about 300 is bad. Chunks and objects cut such rows into parts with long
// stretches of one label, which Assemble appends to the part before
// (skyfall.Builder.AppendRows, or AddTrace for a part read back).
func stretchLines(seed uint64, n int) []string {
	rng := rand.New(rand.NewPCG(seed, seed^0x51ed27))
	type runState struct {
		id           string
		step         int
		label        string
		left         int // rows left in the label's stretch
		steps        int // 0 never, 1 always, 2 on some rows
		inv, rank    int // the same
		comps, extra bool
	}
	runs := []*runState{{id: "r1"}, {id: "r2"}, {id: "r3"}}
	labels := []string{"calm", "storm", "fog", `we\u0069rd`}
	var lines []string
	for len(lines) < n {
		r := runs[rng.IntN(len(runs))]
		for range 1 + rng.IntN(40) {
			if r.left == 0 {
				r.label, r.left = labels[rng.IntN(len(labels))], 1+rng.IntN(60)
				r.steps, r.inv, r.rank = rng.IntN(3), rng.IntN(3), rng.IntN(3)
				r.comps, r.extra = rng.IntN(3) > 0, rng.IntN(2) == 0
			}
			r.left--
			r.step++
			if rng.IntN(300) == 0 {
				lines = append(lines, fmt.Sprintf(`{"run_id":%q,"reward":"x","regime_id":"calm"}`, r.id))
				continue
			}
			f := []string{fmt.Sprintf(`"run_id":%q`, r.id), fmt.Sprintf(`"reward":%g`, rng.NormFloat64()), fmt.Sprintf(`"regime_id":"%s"`, r.label)}
			if r.steps == 1 || r.steps == 2 && rng.IntN(2) == 0 {
				f = append(f, fmt.Sprintf(`"step":%d`, r.step))
			}
			if r.inv == 1 || r.inv == 2 && rng.IntN(2) == 0 {
				f = append(f, fmt.Sprintf(`"invalid_action":%s`, []string{"true", "false", "null"}[rng.IntN(3)]))
			}
			if r.rank == 1 || r.rank == 2 && rng.IntN(2) == 0 {
				f = append(f, fmt.Sprintf(`"effective_rank":%s`, []string{"3.5", "null", "0", "12"}[rng.IntN(4)]))
			}
			if r.comps {
				p := []string{"0", "0.25", "-1e-3", "7"}[rng.IntN(4)]
				f = append(f, fmt.Sprintf(`"components":{"progress":%s,"other":%d}`, p, rng.IntN(2)))
			}
			if rng.IntN(50) == 0 {
				f = append(f, fmt.Sprintf(`"regime_origin":%s`, []string{`"calm"`, `"storm"`, "null"}[rng.IntN(3)]))
			}
			if rng.IntN(70) == 0 {
				f = append(f, fmt.Sprintf(`"alias_of":%s`, []string{`"fog"`, "null"}[rng.IntN(2)]))
			}
			if rng.IntN(40) == 0 {
				f = append(f, fmt.Sprintf(`"gamma":%s`, []string{"0.99", "0.9", "null"}[rng.IntN(3)]))
			}
			if r.extra {
				f = append(f, `"algo":"ppo"`)
			}
			rng.Shuffle(len(f)-1, func(i, j int) { f[i+1], f[j+1] = f[j+1], f[i+1] })
			lines = append(lines, "{"+strings.Join(f, ",")+"}")
		}
	}
	return lines[:n]
}

// TestChunksLongStretches: a run's rows cut into chunks whose parts hold
// long stretches of one label, merged, are exactly the rows decoded whole
// (the builder's columns and size included: sameObject).
func TestChunksLongStretches(t *testing.T) {
	opts := Options{Components: []string{"progress", "other"}}
	for seed := range uint64(6) {
		data := []byte(strings.Join(stretchLines(seed, 3000), "\n") + "\n")
		for _, size := range []int{700, 5000, 40000} {
			for _, parallel := range []bool{false, true} {
				checkChunked(t, data, opts, size, 1, 0, parallel)
			}
		}
	}
}

// TestAssembleLongStretches: the same rows in one object and cut into
// several give every run the same trace (but its metadata, which names
// the objects), through Assemble's appending of a run's pieces.
func TestAssembleLongStretches(t *testing.T) {
	opts := Options{Components: []string{"progress", "other"}, OnBadRow: func(*DataError) error { return nil }}
	for seed := range uint64(6) {
		lines := stretchLines(seed, 3000)
		whole, err := DecodeObject("mem://b/whole", "whole", strings.NewReader(strings.Join(lines, "\n")), opts)
		if err != nil {
			t.Fatal(err)
		}
		want, err := Assemble([]*ObjectRuns{whole}, opts)
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(seed, 7))
		var objs []*ObjectRuns
		for i, at := 0, 0; at < len(lines); i++ {
			end := min(len(lines), at+1+rng.IntN(400))
			key := fmt.Sprintf("part-%03d", i)
			o, err := DecodeObject("mem://b/"+key, key, bytes.NewReader([]byte(strings.Join(lines[at:end], "\n"))), opts)
			if err != nil {
				t.Fatal(err)
			}
			objs, at = append(objs, o), end
		}
		got, err := Assemble(objs, opts)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) {
			t.Fatalf("seed %d: %d runs, want %d", seed, len(got), len(want))
		}
		for i := range got {
			g, w := *got[i], *want[i]
			g.Meta, w.Meta = nil, nil
			if !reflect.DeepEqual(g, w) {
				t.Fatalf("seed %d, run %s: cut into %d objects\n%+v\nwhole\n%+v", seed, w.Key, len(objs), g, w)
			}
		}
	}
}
