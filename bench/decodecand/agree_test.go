package decodecand

import (
	"bytes"
	"os"
	"reflect"
	"testing"

	"github.com/crlbatch/crlbatch/protocol/skyfall"
	"github.com/crlbatch/crlbatch/readers"
	"github.com/minio/simdjson-go"
)

// TestCandidatesAgree keeps the benchmark honest: the simdjson candidates
// read the same rows as the decoder, value for value, on a run of each
// shape (300 rows of `crlbatch synth --extras`, and readers' irregular
// sample), and the structural index finds what a byte-at-a-time scan finds
// (TestStructuralIndex).
func TestCandidatesAgree(t *testing.T) {
	if !simdjson.SupportedCPU() {
		t.Skip("simdjson-go needs AVX2 and CLMUL")
	}
	for _, name := range []string{"testdata/regular.jsonl", "../../readers/testdata/irregular.jsonl"} {
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		opts := readers.Options{Components: comps}
		o, err := readers.DecodeObject(name, name, bytes.NewReader(data), opts)
		if err != nil {
			t.Fatal(err)
		}
		traces, err := readers.Assemble([]*readers.ObjectRuns{o}, opts)
		if err != nil {
			t.Fatal(err)
		}
		if len(traces) != 1 {
			t.Fatalf("%s: %d runs, want 1", name, len(traces))
		}
		want := traces[0]

		for _, mode := range []string{"nd", "lines"} {
			w := newTapeWalker()
			w.builder = skyfall.NewBuilder(want.Key, comps)
			var pj *simdjson.ParsedJson
			if mode == "nd" {
				for _, blk := range blocks(data) {
					if pj, err = simdjson.ParseND(blk, pj, simdjson.WithCopyStrings(false)); err != nil {
						t.Fatal(err)
					}
					if err := pj.ForEach(w.row); err != nil {
						t.Fatal(err)
					}
				}
			} else {
				for line := range bytes.Lines(data) {
					if pj, err = simdjson.Parse(line, pj, simdjson.WithCopyStrings(false)); err != nil {
						t.Fatal(err)
					}
					if err := pj.ForEach(w.row); err != nil {
						t.Fatal(err)
					}
				}
			}
			got := w.builder.Trace(nil)
			if got.Len() != want.Len() {
				t.Fatalf("%s %s: %d rows, want %d", name, mode, got.Len(), want.Len())
			}
			for _, c := range []struct {
				what      string
				got, want any
			}{
				{"rewards", got.Rewards, want.Rewards},
				{"labels", got.Labels, want.Labels},
				{"label names", got.LabelNames, want.LabelNames},
				{"steps", got.Steps, want.Steps},
				{"has step", got.HasStep, want.HasStep},
				{"components", got.Components, want.Components},
				{"invalid", got.Invalid, want.Invalid},
				{"effective rank", got.EffRank, want.EffRank},
				{"has effective rank", got.HasEffRank, want.HasEffRank},
				{"gamma", [2]any{got.Gamma, got.HasGamma}, [2]any{want.Gamma, want.HasGamma}},
			} {
				if !reflect.DeepEqual(c.got, c.want) {
					t.Errorf("%s %s: %s differ", name, mode, c.what)
				}
			}
		}
	}
}
