package decodecand

import (
	"encoding/binary"
	"math/bits"
	"testing"
)

const (
	lsb = 0x0101010101010101
	low = 0x7f7f7f7f7f7f7f7f
)

// eq flags (bit 7 of each byte) the bytes of w equal to c, exactly.
func eq(w uint64, c byte) uint64 {
	x := w ^ (lsb * uint64(c))
	return ^((x&low + low) | x | low)
}

// movemask gathers bit 7 of each byte of m into the low 8 bits, byte i to
// bit i.
func movemask(m uint64) uint64 {
	return ((m >> 7) * 0x0102040810204080) >> 56
}

// structuralIndex appends to idx the position of every structural
// character of data outside strings, every opening quote, and the first
// byte of every scalar: the index simdjson's stage 1 makes, with 8-byte
// words for its vectors.
func structuralIndex(data []byte, idx []uint32) []uint32 {
	var prevOddBS, prevInside, prevPseudo uint64
	var block [64]byte
	for base := 0; base < len(data); base += 64 {
		in := data[base:]
		if len(in) < 64 {
			for i := range block {
				block[i] = ' '
			}
			copy(block[:], in)
			in = block[:]
		}
		var quote, bs, structural, ws uint64
		for i := 0; i < 8; i++ {
			w := binary.LittleEndian.Uint64(in[i*8:])
			quote |= movemask(eq(w, '"')) << (8 * i)
			bs |= movemask(eq(w, '\\')) << (8 * i)
			structural |= movemask(eq(w, ',')|eq(w, ':')|eq(w, '{')|eq(w, '}')|eq(w, '[')|eq(w, ']')) << (8 * i)
			ws |= movemask(eq(w, ' ')|eq(w, '\n')|eq(w, '\t')|eq(w, '\r')) << (8 * i)
		}
		// Backslash sequences of odd length escape the byte after them.
		const even = 0x5555555555555555
		starts := bs &^ (bs << 1)
		evenStartMask := even ^ prevOddBS
		evenStarts := starts & evenStartMask
		oddStarts := starts &^ evenStartMask
		evenCarries := bs + evenStarts
		oddCarries, carry := bits.Add64(bs, oddStarts, 0)
		oddCarries |= prevOddBS
		prevOddBS = carry
		oddEnds := (evenCarries&^bs)&^even | (oddCarries&^bs)&even
		quoteBits := quote &^ oddEnds
		// Inside strings: the prefix XOR of the unescaped quotes.
		qm := quoteBits
		qm ^= qm << 1
		qm ^= qm << 2
		qm ^= qm << 4
		qm ^= qm << 8
		qm ^= qm << 16
		qm ^= qm << 32
		qm ^= prevInside
		prevInside = uint64(int64(qm) >> 63)
		s := structural&^qm | quoteBits
		pred := s | ws
		shifted := pred<<1 | prevPseudo
		prevPseudo = pred >> 63
		s |= shifted &^ ws &^ qm
		s &^= quoteBits &^ qm
		for s != 0 {
			idx = append(idx, uint32(base+bits.TrailingZeros64(s)))
			s &= s - 1
		}
	}
	return idx
}

// TestStructuralIndex checks the index against the bytes, one at a time.
func TestStructuralIndex(t *testing.T) {
	line := []byte(`{"a\"b": [1, -2.5e3, "x\\", true], "c":{"d":null}, "e" : "q,:{"}` + "\n")
	var data []byte
	for len(data) < 300 {
		data = append(data, line...)
	}
	got := structuralIndex(data, nil)
	var want []uint32
	inStr, esc, prevStructOrWS := false, false, true
	for i, c := range data {
		switch {
		case inStr:
			switch {
			case esc:
				esc = false
			case c == '\\':
				esc = true
			case c == '"':
				inStr = false
			}
			prevStructOrWS = false
			continue
		case c == '"':
			want = append(want, uint32(i))
			inStr = true
			prevStructOrWS = false
			continue
		}
		isWS := c == ' ' || c == '\n' || c == '\t' || c == '\r'
		isStruct := c == ',' || c == ':' || c == '{' || c == '}' || c == '[' || c == ']'
		if isStruct || !isWS && prevStructOrWS {
			want = append(want, uint32(i))
		}
		prevStructOrWS = isWS || isStruct
	}
	if len(got) != len(want) {
		t.Fatalf("%d structurals, want %d", len(got), len(want))
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("structural %d at %d, want %d", i, got[i], want[i])
		}
	}
}
