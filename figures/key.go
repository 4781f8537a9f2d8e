package figures

import (
	"crypto/sha256"
	"encoding/binary"
	"hash"
	"math"

	"gonum.org/v1/plot"

	"github.com/crlbatch/crlbatch/protocol"
)

// KeyVersion is part of every input key (Figure.Key): raise it with any
// change to what a figure draws from its inputs (this package's drawing
// code, its style, fonts or sizes, gonum/plot's version), so that a figure
// rendered by an older drawing is not served for a newer one. (The engine's
// --cache entries are also keyed by the build; the in-process memo is not.)
const KeyVersion = 1

// Figure kinds, the first part of an input key.
const (
	kindReward      = "reward"
	kindHeatmap     = "heatmap"
	kindTradeoff    = "tradeoff"
	kindCD          = "critical-difference"
	kindIntervals   = "interval-estimates"
	kindImprovement = "probability-of-improvement"
)

// keyer writes a figure's inputs into its input key: each value
// length-prefixed or of fixed width, each float by its bits, so that two
// lists of inputs never write the same bytes. The bytes go through buf
// into a SHA-256 as they are written, keyChunk at a time: a reward
// figure's line wrote about 0.3 MB into one growing buffer before it was
// hashed (the key is the same: TestInputKeysUnchanged).
type keyer struct {
	h   hash.Hash
	buf []byte
}

// keyChunk is how many bytes a keyer gathers before hashing them.
const keyChunk = 4 << 10

func newKeyer(kind string) *keyer {
	k := &keyer{h: sha256.New(), buf: make([]byte, 0, keyChunk+64)}
	k.int(KeyVersion)
	k.str(kind)
	return k
}

// written hashes buf once it holds keyChunk bytes.
func (k *keyer) written() {
	if len(k.buf) >= keyChunk {
		k.h.Write(k.buf)
		k.buf = k.buf[:0]
	}
}

// sum is the SHA-256 of every byte written.
func (k *keyer) sum() [sha256.Size]byte {
	k.h.Write(k.buf)
	k.buf = k.buf[:0]
	var s [sha256.Size]byte
	k.h.Sum(s[:0])
	return s
}

func (k *keyer) str(s string) {
	k.buf = binary.AppendUvarint(k.buf, uint64(len(s)))
	k.buf = append(k.buf, s...)
	k.written()
}

func (k *keyer) int(n int64) {
	k.buf = binary.AppendVarint(k.buf, n)
	k.written()
}

func (k *keyer) float(x float64) {
	k.buf = binary.LittleEndian.AppendUint64(k.buf, math.Float64bits(x))
	k.written()
}

func (k *keyer) bool(b bool) {
	if b {
		k.buf = append(k.buf, 1)
	} else {
		k.buf = append(k.buf, 0)
	}
	k.written()
}

// value writes every field of v, its number and reason whether or not it
// is there.
func (k *keyer) value(v protocol.Value) {
	k.bool(v.OK)
	k.float(v.V)
	k.str(v.Reason)
}

func (k *keyer) strs(ss []string) {
	k.int(int64(len(ss)))
	for _, s := range ss {
		k.str(s)
	}
}

func (k *keyer) line(ln Line) {
	k.int(ln.Width)
	k.int(int64(len(ln.Points)))
	for i := range ln.Points {
		p := &ln.Points[i]
		k.str(p.Label)
		k.int(p.Start)
		k.int(p.End)
		k.int(int64(p.Runs))
		k.float(p.Mean)
		k.value(p.BandLow)
		k.value(p.BandHigh)
		k.float(p.Min)
		k.float(p.Max)
	}
}

// keyHeadlines writes each headline and what a figure draws of it
// (per[i], of hs[i]), each item by each.
func keyHeadlines[T any](k *keyer, hs []Headline, per [][]T, each func(T)) {
	k.int(int64(len(hs)))
	for i, h := range hs {
		k.str(h.Metric)
		k.str(h.Label)
		k.int(int64(len(per[i])))
		for _, e := range per[i] {
			each(e)
		}
	}
}

func (k *keyer) estimate(e Estimate) {
	k.str(e.Family)
	k.int(int64(e.Index))
	k.value(e.IQM)
	k.value(e.Low)
	k.value(e.High)
}

func (k *keyer) improvement(e Improvement) {
	k.str(e.Family)
	k.int(int64(e.Index))
	k.value(e.P)
	k.value(e.Low)
	k.value(e.High)
	k.bool(e.Flipped)
}

// keyed sets f's input key from k (the figure's kind and every input its
// constructor drew it from), and remembers the panels it was drawn into:
// Key falls back to the drawing key when they were replaced since.
func (f *Figure) keyed(k *keyer) {
	f.inputKey = k.sum()
	f.keyedPanels = append([]*plot.Plot(nil), f.Panels...)
}

// Key is the key Memoize and the engine's --cache keep a figure's SVG and
// PNG under. For a figure made by this package's constructors (Reward,
// Heatmap, Tradeoff, CriticalDifference, Intervals, ProbImprovement) it is
// computed without drawing: a SHA-256 of KeyVersion, the figure's kind,
// every input the constructor drew it from (each float by its bits; not
// its Name, which is not drawn), and its size and the PNG's resolution.
// Each constructor draws from those inputs alone (Intervals and
// ProbImprovement from what they take of the reduction: its number of
// families, the estimates, the baseline's name), so two figures with one
// key render to the same bytes (with one build of this package;
// TestInputKeyDrawsEqualBytes). A figure built otherwise, or whose Panels
// were replaced after its constructor returned, gets its DrawingKey; a
// panel changed in place is not seen, so change none of a figure meant
// to be keyed.
func (f *Figure) Key() ([sha256.Size]byte, error) {
	if len(f.Panels) == 0 {
		return [sha256.Size]byte{}, errNoPanel(f)
	}
	if f.keyedPanels == nil || len(f.keyedPanels) != len(f.Panels) {
		return f.drawingKey()
	}
	for i, p := range f.Panels {
		if p != f.keyedPanels[i] {
			return f.drawingKey()
		}
	}
	w, h := f.size()
	var buf [sha256.Size + 3*8 + 1]byte
	b := append(buf[:0], f.inputKey[:]...)
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(float64(w)))
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(float64(h)))
	b = binary.LittleEndian.AppendUint64(b, PNGDPI)
	b = append(b, 'I') // an input key, never equal to a drawing key's bytes
	return sha256.Sum256(b), nil
}
