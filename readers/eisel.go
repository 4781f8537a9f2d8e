package readers

import (
	"math"
	"math/bits"
)

// The Eisel-Lemire algorithm (Lemire, "Number Parsing at a Gigabyte per
// Second", 2021), as Go's strconv implements it (BSD licence, The Go
// Authors). strconv.ParseFloat runs it too, but only after scanning the
// literal a second time; the row scanner already holds the decimal
// significand and exponent, so it calls it directly and falls back to
// strconv when it cannot decide (about one number in a million).

const (
	pow10Min = -348
	pow10Max = 347
)

// pow10Tab, the 128-bit mantissas of 10^e, is in eisel_table.go.

// eiselLemire64 returns man·10^exp10 correctly rounded, or ok=false when
// it cannot decide or the result is not a normal float64.
func eiselLemire64(man uint64, exp10 int, neg bool) (f float64, ok bool) {
	if man == 0 {
		if neg {
			f = math.Copysign(0, -1)
		}
		return f, true
	}
	if exp10 < pow10Min || exp10 > pow10Max {
		return 0, false
	}
	pow := pow10Tab[exp10-pow10Min]
	exp2 := 1 + (exp10*108853)>>15 // 1 + floor(exp10·log2(10))

	clz := bits.LeadingZeros64(man)
	man <<= uint(clz)
	retExp2 := uint64(exp2+63+1023) - uint64(clz)

	xHi, xLo := bits.Mul64(man, pow[0])
	if xHi&0x1FF == 0x1FF && xLo+man < man {
		yHi, yLo := bits.Mul64(man, pow[1])
		mergedHi, mergedLo := xHi, xLo+yHi
		if mergedLo < xLo {
			mergedHi++
		}
		if mergedHi&0x1FF == 0x1FF && mergedLo+1 == 0 && yLo+man < man {
			return 0, false
		}
		xHi, xLo = mergedHi, mergedLo
	}

	msb := xHi >> 63
	retMantissa := xHi >> (msb + 9)
	retExp2 -= 1 ^ msb

	if xLo == 0 && xHi&0x1FF == 0 && retMantissa&3 == 1 {
		return 0, false
	}

	retMantissa += retMantissa & 1
	retMantissa >>= 1
	if retMantissa>>53 > 0 {
		retMantissa >>= 1
		retExp2++
	}
	if retExp2-1 >= 0x7FF-1 {
		return 0, false
	}
	retBits := retExp2<<52 | retMantissa&(1<<52-1)
	if neg {
		retBits |= 1 << 63
	}
	return math.Float64frombits(retBits), true
}
