package protocoltest

import (
	"strings"
	"testing"

	"github.com/crlbatch/crlbatch/readers"
	"github.com/crlbatch/crlbatch/scoring"
)

// Job binds the registered protocol name to flags (nil: its defaults) and
// its default identity, as the engine would, and checks its decoder's
// options: for a protocol's own tests of its steps.
func Job(t *testing.T, name string, flags scoring.Flags) scoring.Job {
	t.Helper()
	p, err := scoring.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	if flags == nil {
		flags = scoring.DefaultValues(p)
	}
	j, err := p.New(flags, scoring.Env{Reader: readers.Options{IdentityFields: p.Describe().Identity}})
	if err != nil {
		t.Fatal(err)
	}
	if err := j.Decoder().Check(); err != nil {
		t.Fatal(err)
	}
	return j
}

// Runs decodes objects (key, lines, key, lines, …, keys in bytewise order)
// with j's decoder and assembles them, as the engine does on one goroutine.
func Runs(j scoring.Job, objects ...string) ([]*scoring.Run, error) {
	dec := j.Decoder()
	var objs []scoring.Object
	for i := 0; i+1 < len(objects); i += 2 {
		o, err := dec.Decode("mem://in/"+objects[i], objects[i], strings.NewReader(objects[i+1]), nil)
		if err != nil {
			return nil, err
		}
		objs = append(objs, o)
	}
	var out []*scoring.Run
	err := dec.Assemble(objs, func(r *scoring.Run) error { out = append(out, r); return nil })
	return out, err
}
