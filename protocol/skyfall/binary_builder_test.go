package skyfall

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestBuilderWriteBinaryTo: WriteBinaryTo writes the bytes of the trace
// the builder builds (checkBuilderEncoding; TestBuilderBinarySize runs it
// over the builder grid) for labels of two bytes held as runs and dense
// with origins, steps with gaps, every invalid_action, effective_rank on
// some rows, a component and gamma; through a writer that takes a few
// bytes at a time, and into one that fails.
func TestBuilderWriteBinaryTo(t *testing.T) {
	// Label indices of two bytes held as runs and dense; steps as runs with
	// gaps; origins.
	for _, stretch := range []int{1, 3, 7, 1000} {
		b := NewBuilder("k", []string{"p"})
		for i := range 300 * stretch {
			b.Add(&Row{Gamma: 0.97, HasGamma: i == 9, Label: fmt.Sprintf("L%d", i/stretch), Origin: "o", HasOrigin: i%5 == 0, Invalid: int8(i%3) - 1, Step: int64(i / 2), HasStep: i%stretch == 0, EffRank: 2, HasEffRank: i%4 == 0, Comps: []float64{float64(i % 2)}})
		}
		checkBuilderEncoding(t, fmt.Sprintf("300 labels, %d rows each", stretch), b, map[string]string{"k": "v"})
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
