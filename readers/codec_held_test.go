package readers

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"github.com/crlbatch/crlbatch/protocol/skyfall"
)

// readBack decodes objs with opts, and reads each back from its encoding.
func readBack(t *testing.T, objs []object, opts Options) (direct, back []*ObjectRuns) {
	t.Helper()
	for _, o := range objs {
		url := "mem://b/" + o.key
		d, err := DecodeObject(url, o.key, strings.NewReader(o.data), opts)
		if err != nil {
			continue
		}
		enc, err := d.AppendEncoding(nil)
		if err != nil {
			t.Fatal(err)
		}
		r, err := DecodeEncodedObject(url, o.key, enc, opts)
		if err != nil {
			t.Fatalf("%s: %v", o.key, err)
		}
		direct, back = append(direct, d), append(back, r)
	}
	return direct, back
}

// TestCodecReadBackKeepsTheTraces: an object read back holds each part's
// rows as their skyfall binary trace (no builder rebuilt row by row), and
// its runs are those of the object decoded when assembled twice without
// consuming it (a preparing pass, then the scoring pass), after Spill, and
// with a trace pool lending the columns; its memory is counted, and
// Release drops it.
func TestCodecReadBackKeepsTheTraces(t *testing.T) {
	runs := 0
	defer func() {
		if runs == 0 {
			t.Error("no run assembled")
		}
	}()
	for seed := range uint64(60) {
		objs := genObjects(seed)
		opts := Options{Components: []string{"progress"}}
		direct, back := readBack(t, objs, opts)
		for _, o := range back {
			for _, p := range o.parts {
				if p.b != nil || p.enc == nil {
					t.Fatalf("seed %d: %s: a part read back has a builder (%v) or no trace (%v)", seed, o.URL, p.b != nil, p.enc == nil)
				}
			}
			if o.MemBytes() <= int64(len(o.parts))*partOverhead {
				t.Fatalf("seed %d: %s: MemBytes %d does not count the traces", seed, o.URL, o.MemBytes())
			}
		}
		want, werr := Assemble(direct, opts)
		runs += len(want)
		collect := func(objs []*ObjectRuns, opts Options) ([]*skyfall.Trace, error) {
			var got []*skyfall.Trace
			err := AssembleEachKeep(objs, opts, func(_ int, tr *skyfall.Trace) error {
				got = append(got, tr)
				return nil
			})
			return got, err
		}
		check := func(what string, got []*skyfall.Trace, gerr error) {
			t.Helper()
			if (werr == nil) != (gerr == nil) || (werr != nil && werr.Error() != gerr.Error()) {
				t.Fatalf("seed %d, %s: assembling: %v, read back: %v", seed, what, werr, gerr)
			}
			if werr != nil {
				return
			}
			if len(got) != len(want) {
				t.Fatalf("seed %d, %s: %d runs, want %d", seed, what, len(got), len(want))
			}
			for i := range want {
				if !reflect.DeepEqual(got[i], want[i]) {
					t.Fatalf("seed %d, %s: run %d differs", seed, what, i)
				}
			}
		}
		for pass := range 2 {
			got, gerr := collect(back, opts)
			check([]string{"first pass", "second pass"}[pass], got, gerr)
		}
		pooled := opts
		pooled.Traces = new(skyfall.TracePool)
		var got []*skyfall.Trace
		gerr := AssembleEachKeep(back, pooled, func(_ int, tr *skyfall.Trace) error {
			c := *tr // what a run's scorer reads, before the columns go back
			c.Rewards = append([]float64(nil), tr.Rewards...)
			got = append(got, &c)
			pooled.Traces.Put(tr)
			return nil
		})
		if werr == nil && gerr == nil {
			for i := range want {
				if got[i].Key != want[i].Key || !reflect.DeepEqual(got[i].Rewards, want[i].Rewards) {
					t.Fatalf("seed %d: pooled run %d differs", seed, i)
				}
			}
		} else if (werr == nil) != (gerr == nil) {
			t.Fatalf("seed %d: pooled: %v, want %v", seed, gerr, werr)
		}
		dir := t.TempDir()
		for _, o := range back {
			if err := o.Spill(dir); err != nil {
				t.Fatal(err)
			}
			if again, err := o.AppendEncoding(nil); err == nil {
				t.Fatalf("seed %d: a spilled object encoded: %d bytes", seed, len(again))
			}
		}
		spilled, serr := Assemble(back, opts)
		check("spilled", spilled, serr)
		for _, o := range back {
			o.Release()
			for _, p := range o.parts {
				if p.enc != nil || p.b != nil {
					t.Fatalf("seed %d: released but rows kept", seed)
				}
			}
		}
	}
}

// TestCodecReadBackDamagedTrace: a trace damaged inside an encoding that
// is otherwise whole fails when its run is built, naming the object, and
// never yields a run.
func TestCodecReadBackDamagedTrace(t *testing.T) {
	objs := exampleObjects(t, "../configs/example-sweep")
	_, back := readBack(t, objs[:1], Options{})
	p := back[0].parts[0]
	p.enc = bytes.Clone(p.enc)
	p.enc[len(p.enc)/2] ^= 0x40
	_, err := Assemble(back, Options{})
	if err == nil || !strings.Contains(err.Error(), back[0].URL) || !strings.Contains(err.Error(), "checksum") {
		t.Fatalf("damaged trace: %v", err)
	}
}
