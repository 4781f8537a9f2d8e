package skyfall

import (
	"reflect"
	"testing"
)

// TestUncarried: which components no row carried goes from Row.Carried
// (and Columns.Carried) through Add, AddColumns, AppendRows, AddTrace,
// Reset and the binary encoding to Trace.Uncarried, and Score keeps those
// of its episode-end and solve components in RunResult.Uncarried. A
// component carried as 0 is carried.
func TestUncarried(t *testing.T) {
	comps := []string{"success", "goal", "progress"}
	bit := func(names ...string) uint64 {
		var m uint64
		for _, n := range names {
			for k, c := range comps {
				if c == n {
					m |= CarriedBit(k)
				}
			}
		}
		return m
	}
	cases := []struct {
		name    string
		carried []uint64 // per row
		want    []string
	}{
		{"none carried", []uint64{0, 0}, []string{"goal", "progress", "success"}},
		{"carried as 0", []uint64{bit("success"), 0}, []string{"goal", "progress"}},
		{"all carried over two rows", []uint64{bit("success", "goal"), bit("progress")}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			check := func(how string, tr *Trace) {
				t.Helper()
				if !reflect.DeepEqual(tr.Uncarried, c.want) {
					t.Errorf("%s: Uncarried %q, want %q", how, tr.Uncarried, c.want)
				}
			}
			b := NewBuilder("k", comps)
			b.Add(&Row{Reward: 1, Label: "x", Comps: []float64{0, 0, 0}, Carried: ^uint64(0)})
			b.Reset("k") // forgets what the rows before carried
			b.Add(&Row{Reward: 1, Label: "x", Comps: []float64{0, 0, 0}})
			for _, m := range c.carried {
				b.Add(&Row{Reward: 1, Label: "x", Comps: []float64{0, 0, 0}, Carried: m})
			}
			tr := b.Trace(nil)
			check("Add", tr)

			var or uint64
			for _, m := range c.carried {
				or |= m
			}
			cb := NewBuilder("k", comps)
			cb.AddColumns(&Columns{Rewards: []float64{1, 2}, Label: "x", Comps: [][]float64{{0, 0}, {0, 0}, {0, 0}}, Carried: or})
			check("AddColumns", cb.Trace(nil))

			// Another builder's components in another order, one more.
			other := append([]string{"extra"}, comps[2], comps[0], comps[1])
			ab := NewBuilder("k", other)
			ab.AppendRows(b, other, nil)
			tra := ab.Trace(nil)
			want := append([]string{"extra"}, c.want...)
			if !reflect.DeepEqual(tra.Uncarried, want) {
				t.Errorf("AppendRows: Uncarried %q, want %q", tra.Uncarried, want)
			}

			tb := NewBuilder("k", comps)
			tb.AddTrace(tr, comps, nil)
			check("AddTrace", tb.Trace(nil))

			data, err := tr.MarshalBinary()
			if err != nil {
				t.Fatal(err)
			}
			var back Trace
			if err := back.UnmarshalBinary(data); err != nil {
				t.Fatal(err)
			}
			check("binary", &back)

			p := DefaultParams()
			p.SolveComponent, p.EpisodeEnd = "goal", []string{"success", "goal"}
			res, err := Score(tr, &p, nil)
			if err != nil {
				t.Fatal(err)
			}
			var wantRes []string
			for _, n := range c.want {
				if n == "goal" || n == "success" {
					wantRes = append(wantRes, n)
				}
			}
			if !reflect.DeepEqual(res.Uncarried, wantRes) {
				t.Errorf("Score: Uncarried %q, want %q", res.Uncarried, wantRes)
			}
		})
	}
	// A hand-made trace says nothing: every component counts as carried.
	b := NewBuilder("k", comps)
	b.AddTrace(&Trace{Rewards: []float64{1}, Labels: []int32{0}, LabelNames: []string{"x"}, Origins: []string{"x"},
		Components: map[string][]float64{"success": {0}, "goal": {0}, "progress": {0}}}, comps, nil)
	if u := b.Trace(nil).Uncarried; u != nil {
		t.Errorf("a hand-made trace's rows: Uncarried %q", u)
	}
}
