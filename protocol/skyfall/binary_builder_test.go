package skyfall

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestBuilderWriteBinaryTo: WriteBinaryTo writes the bytes of the trace
// the builder builds (TraceFrom then WriteTo, and MarshalBinary), and says
// how many: over the grid's random rows (labels held as runs and dense,
// indices of several bytes, steps absent, as runs and dense, near the
// int64 edges, a component named twice, components carried by some rows
// or none, effective_rank on some rows), midway and at the end, under
// every kind of meta, for a builder appended to another's rows, one reset
// and filled again, and one of no rows; each through a writer that takes
// a few bytes at a time, and into one that fails.
func TestBuilderWriteBinaryTo(t *testing.T) {
	check := func(what string, b *Builder, meta map[string]string) {
		t.Helper()
		var want bytes.Buffer
		wn, err := b.TraceFrom(nil, meta).WriteTo(&want)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if m, err := b.Trace(meta).MarshalBinary(); err != nil || !bytes.Equal(m, want.Bytes()) {
			t.Fatalf("%s: WriteTo and MarshalBinary differ (%v)", what, err)
		}
		var got bytes.Buffer
		n, err := b.WriteBinaryTo(&got, meta)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if n != wn || !bytes.Equal(got.Bytes(), want.Bytes()) {
			at := 0
			for at < min(got.Len(), want.Len()) && got.Bytes()[at] == want.Bytes()[at] {
				at++
			}
			t.Fatalf("%s (meta %v): WriteBinaryTo wrote %d bytes (said %d), WriteTo %d; first difference at byte %d", what, meta, got.Len(), n, want.Len(), at)
		}
		var back Trace
		if err := back.UnmarshalBinary(got.Bytes()); err != nil {
			t.Fatalf("%s: read back: %v", what, err)
		}
	}
	metas := []map[string]string{nil, {}, {"source": "x/y.jsonl", "": "é", "long": strings.Repeat("v", 200)}}
	sizes := []int{0, 1, 2, 63, 64, 65, 127, 128, 129, chunkLen - 1, chunkLen + 1, 3*chunkLen + 17, 40_000}
	cases := eachGridCase(sizes, 900, 13, func(c *gridCase) {
		fill := func(b *Builder, n int, mid func()) {
			var r Row
			for i := range n {
				if i == n/2 && mid != nil {
					mid()
				}
				c.gen.next(&r)
				if c.rng.IntN(50) == 0 {
					r.Carried = c.rng.Uint64() & (1<<len(c.comps) - 1)
				}
				b.Add(&r)
			}
		}
		b := NewBuilder(c.what, c.comps)
		fill(b, c.n, func() { check(c.what+", midway", b, metas[c.rng.IntN(len(metas))]) })
		for _, m := range metas {
			check(c.what, b, m)
		}
		a := NewBuilder(c.what, c.comps)
		fill(a, c.rng.IntN(300), nil)
		a.AppendRows(b, c.comps, nil)
		check(c.what+", appended", a, nil)
		b.Reset("again")
		fill(b, c.n, nil)
		check(c.what+", reset", b, metas[2])
	})
	t.Logf("%d cases", cases)
	// Label indices of two bytes held as runs and dense; steps as runs with
	// gaps; origins and aliases.
	for _, stretch := range []int{1, 3, 7, 1000} {
		b := NewBuilder("k", []string{"p"})
		for i := range 300 * stretch {
			b.Add(&Row{Gamma: 0.97, HasGamma: i == 9, Label: fmt.Sprintf("L%d", i/stretch), Origin: "o", HasOrigin: i%5 == 0, Invalid: int8(i%3) - 1, Step: int64(i / 2), HasStep: i%stretch == 0, EffRank: 2, HasEffRank: i%4 == 0, Comps: []float64{float64(i % 2)}})
		}
		check(fmt.Sprintf("300 labels, %d rows each", stretch), b, nil)
	}

	// Through a writer that takes a few bytes a call, and one that fails.
	b := NewBuilder("k", []string{"a", "b"})
	gen := &rowGen{rng: rand.New(rand.NewPCG(5, 6)), nComps: 2, labels: 40}
	var r Row
	for range 3*chunkLen + 5 {
		gen.next(&r)
		b.Add(&r)
	}
	var want bytes.Buffer
	if _, err := b.Trace(nil).WriteTo(&want); err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	if _, err := b.WriteBinaryTo(&smallWrites{w: &got}, nil); err != nil || !bytes.Equal(got.Bytes(), want.Bytes()) {
		t.Fatalf("through small writes: %v, equal %v", err, bytes.Equal(got.Bytes(), want.Bytes()))
	}
	boom := errors.New("boom")
	if n, err := b.WriteBinaryTo(&failAfter{left: 1000, err: boom}, nil); !errors.Is(err, boom) || n > 1000 {
		t.Fatalf("a failing writer: %d bytes, %v", n, err)
	}
}

// smallWrites takes at most 7 bytes a Write, as a writer may (io.Writer
// asks it to say so: here by an error, io.ErrShortWrite, never returned as
// every byte is taken by looping).
type smallWrites struct{ w *bytes.Buffer }

func (s *smallWrites) Write(p []byte) (int, error) {
	for i := 0; i < len(p); i += 7 {
		s.w.Write(p[i:min(i+7, len(p))])
	}
	return len(p), nil
}

// failAfter takes left bytes, then fails with err.
type failAfter struct {
	left int
	err  error
}

func (f *failAfter) Write(p []byte) (int, error) {
	if len(p) > f.left {
		n := f.left
		f.left = 0
		return n, f.err
	}
	f.left -= len(p)
	return len(p), nil
}
