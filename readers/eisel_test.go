package readers

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"testing"
)

// TestEiselLemire compares the direct Eisel-Lemire path with
// strconv.ParseFloat on random significands and exponents, including the
// edges of the float64 range.
func TestEiselLemire(t *testing.T) {
	// Spot checks of the generated table against Go's (pow10tab.go).
	for _, c := range []struct {
		e      int
		hi, lo uint64
	}{
		{0, 0x8000000000000000, 0},
		{1, 0xa000000000000000, 0},
		{-1, 0xcccccccccccccccc, 0xcccccccccccccccc},
		{-348, 0xfa8fd5a0081c0288, 0x1732c869cd60e453},
		{347, 0xd13eb46469447567, 0x4b7195f2d2d1a9fb},
	} {
		if got := pow10Tab[c.e-pow10Min]; got != [2]uint64{c.hi, c.lo} {
			t.Errorf("10^%d: %#x, want %#x %#x", c.e, got, c.hi, c.lo)
		}
	}
	rng := rand.New(rand.NewPCG(7, 8))
	n := 500_000
	if testing.Short() {
		n = 100_000
	}
	decided := 0
	for i := range n {
		var man uint64
		switch i % 4 {
		case 0:
			man = rng.Uint64N(10_000_000_000_000_000_000)
		case 1:
			man = rng.Uint64N(1 << 53)
		case 2:
			man = rng.Uint64N(1000)
		default:
			man = rng.Uint64()
		}
		e := rng.IntN(700) - 350
		if i%8 == 0 {
			e = rng.IntN(40) + 290 // near overflow
		} else if i%8 == 1 {
			e = -rng.IntN(40) - 305 // near underflow
		}
		neg := i%3 == 0
		s := strconv.FormatUint(man, 10) + "e" + strconv.Itoa(e)
		if neg {
			s = "-" + s
		}
		want, err := strconv.ParseFloat(s, 64)
		got, ok := eiselLemire64(man, e, neg)
		if !ok {
			continue
		}
		decided++
		if err != nil || math.Float64bits(got) != math.Float64bits(want) {
			t.Fatalf("%s: got %v (%#x), strconv %v (%#x) %v", s, got, math.Float64bits(got), want, math.Float64bits(want), err)
		}
	}
	if decided < n/2 {
		t.Errorf("decided only %d of %d", decided, n)
	}
}

// TestScanDigits: scanDigits finds where a run of digits ends and converts
// it (after a prefix m) as strconv does, whatever follows the run (a byte
// of the number's grammar, the line's end) and wherever it ends in a word.
func TestScanDigits(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	for range 100_000 {
		pre := uint64(rng.IntN(1000))
		n := 1 + rng.IntN(16)
		b := make([]byte, n, n+9)
		for i := range b {
			b[i] = byte('0' + rng.IntN(10))
		}
		want, err := strconv.ParseUint(fmt.Sprint(pre)+string(b), 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		for _, tail := range []string{"", ".", "e", ",", "}", " ", "/", ":", "\x00", "\xff", ".5e-3,\"x\":1}"} {
			line := append(append([]byte("x"), b...), tail...)
			if pos, got := scanDigits(line, 1, pre); pos != 1+n || got != want {
				t.Fatalf("%q after %d: got %d at %d, want %d at %d", line, pre, got, pos, want, 1+n)
			}
		}
	}
}
