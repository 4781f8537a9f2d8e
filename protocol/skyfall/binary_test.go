package skyfall

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// binaryCases are traces covering every column state: nil and empty
// slices and maps, absent and present optional columns, multi-byte label
// indices and steps, long columns (past the WriteTo buffer) and the float
// values whose bits matter.
func binaryCases() map[string]*Trace {
	cases := map[string]*Trace{
		"zero":  {},
		"empty": {Key: "k", Meta: map[string]string{}, Rewards: []float64{}, Labels: []int32{}, LabelNames: []string{}, Origins: []string{}, Components: map[string][]float64{}},
		"one row, nothing optional": {Key: "run_id=a", Rewards: []float64{1}, Labels: []int32{0},
			LabelNames: []string{"x"}, Origins: []string{"x"}},
		"nil component column": {Components: map[string][]float64{"c": nil}},
		"empty optional columns": {Steps: []int64{}, HasStep: []bool{}, Invalid: []int8{},
			EffRank: []float64{}, HasEffRank: []bool{}, Components: map[string][]float64{"c": {}}},
		"odd values": {Key: "κ|\x00", Meta: map[string]string{"": "", "gamma": "0.99", "é": "\xff"},
			Rewards: []float64{math.Copysign(0, -1), math.Inf(1), math.Inf(-1), math.SmallestNonzeroFloat64, math.MaxFloat64, -1.5},
			Labels:  []int32{0, 1, 0, 1, 1, 0}, LabelNames: []string{"", "b"}, Origins: []string{"a", ""},
			Steps:   []int64{math.MinInt64, math.MaxInt64, 0, -1, 1 << 40, math.MinInt64},
			HasStep: []bool{true, true, false, true, true, true},
			Invalid: []int8{-1, 0, 1, 127, -128, 5},
			EffRank: []float64{0, math.Copysign(0, -1), 3, 0, 1e-300, 0}, HasEffRank: []bool{false, false, true, true, true, false},
			Components: map[string][]float64{"b": {1, 2, 3, 4, 5, 6}, "a": {0, 0, 0, 0, 0, math.Copysign(0, -1)}, "": {-1, -2, -3, -4, -5, -6}},
			Gamma:      -0.5, HasGamma: false},
	}
	// Many labels (multi-byte indices), long columns, gamma.
	b := NewBuilder("long", []string{"success", "progress"})
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 200_000 {
		r := Row{Reward: rng.NormFloat64(), Label: fmt.Sprintf("L%d", (i/7)%300), Step: int64(i * 3), HasStep: i%5 != 0,
			Comps: []float64{float64(i % 2), rng.Float64()}, Invalid: int8(i%3) - 1, EffRank: rng.Float64(), HasEffRank: i%11 == 0}
		if i%13 == 0 {
			r.Origin, r.HasOrigin = "o", true
		}
		if i == 5 {
			r.Gamma, r.HasGamma = 0.99, true
		}
		b.Add(&r)
	}
	cases["long"] = b.Trace(map[string]string{"source": "x/y.jsonl"})
	for i := range 20 {
		cases[fmt.Sprintf("random %d", i)] = randomTrace(rand.New(rand.NewPCG(uint64(i), 7)))
	}
	return cases
}

func TestBinaryRoundTrip(t *testing.T) {
	for name, tr := range binaryCases() {
		t.Run(name, func(t *testing.T) {
			data, err := tr.MarshalBinary()
			if err != nil {
				t.Fatal(err)
			}
			var got Trace
			got.Key = "junk"
			got.Steps = []int64{1}
			if err := got.UnmarshalBinary(data); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(&got, tr) {
				t.Fatalf("round trip differs:\n got %#v\nwant %#v", got, *tr)
			}
			// Float bits, -0 included (DeepEqual finds -0 == 0).
			sameBits(t, "rewards", got.Rewards, tr.Rewards)
			sameBits(t, "effective_rank", got.EffRank, tr.EffRank)
			for k, c := range tr.Components {
				sameBits(t, "component "+k, got.Components[k], c)
			}
			if math.Float64bits(got.Gamma) != math.Float64bits(tr.Gamma) {
				t.Errorf("gamma %v, want %v", got.Gamma, tr.Gamma)
			}

			// AppendBinary keeps the prefix; WriteTo writes the same bytes.
			pre := []byte("prefix")
			app, err := tr.AppendBinary(pre)
			if err != nil || !bytes.Equal(app[:6], []byte("prefix")) || !bytes.Equal(app[6:], data) {
				t.Errorf("AppendBinary differs from MarshalBinary (%v)", err)
			}
			var buf bytes.Buffer
			n, err := tr.WriteTo(&buf)
			if err != nil || n != int64(len(data)) || !bytes.Equal(buf.Bytes(), data) {
				t.Errorf("WriteTo wrote %d bytes (%v), differing from MarshalBinary's %d", n, err, len(data))
			}
			// Deterministic: encoding again gives the same bytes (maps
			// are written in sorted order).
			again, _ := got.MarshalBinary()
			if !bytes.Equal(again, data) {
				t.Error("re-encoding differs")
			}
		})
	}
}

func sameBits(t *testing.T, what string, got, want []float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	for i := range got {
		if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
			t.Fatalf("%s[%d]: %v (%#x), want %v (%#x)", what, i, got[i], math.Float64bits(got[i]), want[i], math.Float64bits(want[i]))
		}
	}
}

// TestBinaryNaN: NaN payloads survive bit for bit.
func TestBinaryNaN(t *testing.T) {
	nan := math.Float64frombits(0x7ff8_0000_dead_beef)
	tr := &Trace{Rewards: []float64{nan, math.NaN()}, Labels: []int32{0, 0}, LabelNames: []string{"a"}, Origins: []string{"a"},
		Gamma: nan, HasGamma: true, Components: map[string][]float64{"c": {nan, 1}}}
	data, err := tr.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var got Trace
	if err := got.UnmarshalBinary(data); err != nil {
		t.Fatal(err)
	}
	sameBits(t, "rewards", got.Rewards, tr.Rewards)
	sameBits(t, "component", got.Components["c"], tr.Components["c"])
	if math.Float64bits(got.Gamma) != math.Float64bits(nan) || !got.HasGamma {
		t.Errorf("gamma %#x", math.Float64bits(got.Gamma))
	}
}

// TestBinaryRefusesInvalid: only valid traces are encoded.
func TestBinaryRefusesInvalid(t *testing.T) {
	for name, tr := range map[string]*Trace{
		"label out of range":  {Rewards: []float64{1}, Labels: []int32{1}, LabelNames: []string{"a"}, Origins: []string{"a"}},
		"short labels":        {Rewards: []float64{1}},
		"steps without flags": {Steps: []int64{}},
		"flags without steps": {HasStep: []bool{}},
		"rank without flags":  {EffRank: []float64{}},
		"flags without rank":  {HasEffRank: []bool{false}},
		"component length":    {Components: map[string][]float64{"c": {1}}},
		"negative label":      {Rewards: []float64{1}, Labels: []int32{-1}, LabelNames: []string{"a"}, Origins: []string{"a"}},
		"short origins":       {LabelNames: []string{"a"}},
		"short invalid":       {Rewards: []float64{1}, Labels: []int32{0}, LabelNames: []string{"a"}, Origins: []string{"a"}, Invalid: []int8{}},
		"short flags":         {Rewards: []float64{1}, Labels: []int32{0}, LabelNames: []string{"a"}, Origins: []string{"a"}, Steps: []int64{1}, HasStep: []bool{}},
	} {
		if _, err := tr.MarshalBinary(); err == nil {
			t.Errorf("%s: encoded", name)
		}
		if b, err := tr.AppendBinary([]byte("x")); err == nil || string(b) != "x" {
			t.Errorf("%s: appended", name)
		}
		var buf bytes.Buffer
		if n, err := tr.WriteTo(&buf); err == nil || n != 0 || buf.Len() != 0 {
			t.Errorf("%s: written", name)
		}
	}
}

// fixCRC recomputes the trailing checksum so that a mutation reaches the
// parser.
func fixCRC(data []byte) []byte {
	if len(data) < binaryHeader+binaryTrailer {
		return data
	}
	out := bytes.Clone(data)
	binary.LittleEndian.PutUint32(out[len(out)-4:], crc32.Checksum(out[:len(out)-4], castagnoli))
	return out
}

// TestBinaryCorrupt: every truncation, every flipped bit, and every
// flipped bit behind a correct checksum, fail cleanly (or, for the last,
// decode to a valid trace).
func TestBinaryCorrupt(t *testing.T) {
	tr := binaryCases()["odd values"]
	data, err := tr.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var got Trace
	for n := range len(data) {
		if err := got.UnmarshalBinary(data[:n]); !errors.Is(err, ErrBinaryFormat) {
			t.Fatalf("truncated to %d: %v", n, err)
		}
	}
	if err := got.UnmarshalBinary(append(bytes.Clone(data), 0)); !errors.Is(err, ErrBinaryFormat) {
		t.Fatalf("trailing byte: %v", err)
	}
	for i := range data {
		for bit := range 8 {
			bad := bytes.Clone(data)
			bad[i] ^= 1 << bit
			if err := got.UnmarshalBinary(bad); !errors.Is(err, ErrBinaryFormat) {
				t.Fatalf("byte %d bit %d flipped: %v", i, bit, err)
			}
			checkDecoded(t, fixCRC(bad))
		}
	}
	// Trailing bytes behind a correct checksum.
	body := append(bytes.Clone(data[:len(data)-4]), 0, 0, 0, 0, 0)
	if err := got.UnmarshalBinary(fixCRC(body)); err == nil || !strings.Contains(err.Error(), "after the last column") {
		t.Errorf("trailing bytes: %v", err)
	}
	// Another version.
	v2 := bytes.Clone(data)
	v2[4] = 1 // the version before Uncarried
	if err := got.UnmarshalBinary(fixCRC(v2)); err == nil || !strings.Contains(err.Error(), "version 1") {
		t.Errorf("version 1: %v", err)
	}
	// A failed decode leaves the trace alone.
	got = Trace{Key: "kept"}
	if err := got.UnmarshalBinary(fixCRC(v2)); err == nil || got.Key != "kept" {
		t.Error("trace changed on error")
	}
}

// checkDecoded is the fuzz property: data decodes to an error wrapping
// ErrBinaryFormat, or to a valid trace that encodes back to bytes that
// decode to the same trace.
func checkDecoded(t *testing.T, data []byte) {
	t.Helper()
	var tr Trace
	err := tr.UnmarshalBinary(data)
	if err != nil {
		if !errors.Is(err, ErrBinaryFormat) {
			t.Fatalf("error %v does not wrap ErrBinaryFormat", err)
		}
		return
	}
	if err := tr.checkBinary(); err != nil {
		t.Fatalf("decoded an invalid trace: %v", err)
	}
	e1, err := tr.MarshalBinary()
	if err != nil {
		t.Fatalf("decoded trace does not encode: %v", err)
	}
	var tr2 Trace
	if err := tr2.UnmarshalBinary(e1); err != nil {
		t.Fatalf("re-encoding does not decode: %v", err)
	}
	if e2, _ := tr2.MarshalBinary(); !bytes.Equal(e1, e2) {
		t.Fatal("re-encoding is not stable")
	}
}

func FuzzUnmarshalBinary(f *testing.F) {
	for name, tr := range binaryCases() {
		if name == "long" {
			continue
		}
		data, err := tr.MarshalBinary()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte("SKYT"))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		checkDecoded(t, data)
		// Behind a correct checksum, so that mutations reach the parser.
		checkDecoded(t, fixCRC(data))
	})
}

// TestBinarySize: the encoding is compact (the readers bench row shape:
// reward, step, four components, invalid_action, effective_rank).
func TestBinarySize(t *testing.T) {
	tr := benchLikeTrace(100_000)
	data, err := tr.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	per := float64(len(data)) / float64(tr.Len())
	t.Logf("%.1f bytes a row encoded", per)
	if per > 54 {
		t.Errorf("%.1f bytes a row", per)
	}
}

func benchLikeTrace(n int) *Trace {
	rng := rand.New(rand.NewPCG(3, 4))
	b := NewBuilder("k", []string{"success", "progress", "episode_end", "bonus"})
	r := Row{Comps: make([]float64, 4), HasStep: true, HasEffRank: true, HasGamma: true, Gamma: 0.99}
	for i := range n {
		r.Reward = rng.NormFloat64()
		r.Label = fmt.Sprintf("task-%d", i/5000%8)
		r.Step = int64(i)
		r.Comps[0], r.Comps[1], r.Comps[2], r.Comps[3] = float64(i%2), rng.Float64(), float64(i%100/99), rng.NormFloat64()
		r.Invalid = int8(i % 2)
		r.EffRank = 10 * rng.Float64()
		b.Add(&r)
	}
	return b.Trace(nil)
}

func BenchmarkBinary(b *testing.B) {
	tr := benchLikeTrace(100_000)
	data, _ := tr.MarshalBinary()
	b.Run("Append", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		var buf []byte
		for b.Loop() {
			buf, _ = tr.AppendBinary(buf[:0])
		}
	})
	b.Run("WriteTo", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		var buf bytes.Buffer
		for b.Loop() {
			buf.Reset()
			if _, err := tr.WriteTo(&buf); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Unmarshal", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			var t Trace
			if err := t.UnmarshalBinary(data); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// failWriter accepts n bytes, then fails.
type failWriter struct{ n int }

func (w *failWriter) Write(p []byte) (int, error) {
	if len(p) <= w.n {
		w.n -= len(p)
		return len(p), nil
	}
	m := w.n
	w.n = 0
	return m, errors.New("disk full")
}

// TestBinaryWriteToError: a writer's error is returned with the bytes it
// took.
func TestBinaryWriteToError(t *testing.T) {
	tr := binaryCases()["long"]
	for _, limit := range []int{0, 10, 100_000, 1 << 20} {
		n, err := tr.WriteTo(&failWriter{n: limit})
		if err == nil || err.Error() != "disk full" || n != int64(limit) {
			t.Errorf("limit %d: wrote %d, %v", limit, n, err)
		}
	}
}

// checkBuilderEncoding fails t unless BinarySize is the length of the
// encoding of the trace b builds (MarshalBinary's, WriteTo's) and
// WriteBinaryTo writes exactly those bytes, saying how many, without
// building it; and the bytes read back.
func checkBuilderEncoding(t *testing.T, what string, b *Builder, meta map[string]string) {
	t.Helper()
	data, err := b.Trace(meta).MarshalBinary()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if got := b.BinarySize(meta); got != int64(len(data)) {
		t.Fatalf("%s (meta %v): BinarySize %d, encoding %d bytes", what, meta, got, len(data))
	}
	var w bytes.Buffer
	if n, err := b.TraceFrom(nil, meta).WriteTo(&w); err != nil || n != int64(len(data)) || !bytes.Equal(w.Bytes(), data) {
		t.Fatalf("%s: WriteTo wrote %d bytes (%v), not MarshalBinary's", what, n, err)
	}
	var got bytes.Buffer
	n, err := b.WriteBinaryTo(&got, meta)
	if err != nil {
		t.Fatalf("%s: WriteBinaryTo: %v", what, err)
	}
	if n != int64(len(data)) || !bytes.Equal(got.Bytes(), data) {
		at := 0
		for at < min(got.Len(), len(data)) && got.Bytes()[at] == data[at] {
			at++
		}
		t.Fatalf("%s (meta %v): WriteBinaryTo wrote %d bytes (said %d), the encoding is %d; first difference at byte %d", what, meta, got.Len(), n, len(data), at)
	}
	var back Trace
	if err := back.UnmarshalBinary(got.Bytes()); err != nil {
		t.Fatalf("%s: read back: %v", what, err)
	}
}

// TestBuilderBinarySize: BinarySize is the length of the encoding of the
// trace the builder builds, and WriteBinaryTo writes that encoding, both
// without building it (checkBuilderEncoding): over the grid's random rows
// (labels and steps held as runs and turned dense, label indices of
// several bytes, steps near the int64 edges and absent, a component named
// twice, components carried by some rows or none), midway and at the end,
// under every kind of meta, for a builder appended to another's rows and
// for one reset and filled again.
func TestBuilderBinarySize(t *testing.T) {
	check := func(what string, b *Builder, meta map[string]string) {
		t.Helper()
		checkBuilderEncoding(t, what, b, meta)
	}
	metas := []map[string]string{nil, {}, {"source": "x/y.jsonl", "": "é", "long": strings.Repeat("v", 200)}}
	sizes := []int{0, 1, 2, 63, 64, 65, 127, 128, 129, 200, chunkLen - 1, chunkLen + 1, 3*chunkLen + 17, 40_000}
	cases := eachGridCase(sizes, 500, 11, func(c *gridCase) {
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
	// Label indices of two bytes while the labels are held as runs (the
	// grid's many labels change too often to stay runs), and dense.
	for _, stretch := range []int{1, 3, 7, 1000} {
		b := NewBuilder("k", nil)
		for i := range 300 * stretch {
			b.Add(&Row{Label: fmt.Sprintf("L%d", i/stretch), Invalid: -1, Step: int64(i / 2), HasStep: i%stretch == 0})
		}
		check(fmt.Sprintf("300 labels, %d rows each", stretch), b, nil)
	}
}
