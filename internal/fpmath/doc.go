// Package fpmath is the part of Go's math package that crlbatch's published
// numbers and figures go through (Exp, Log, Log1p, Erfc, Lgamma, Sin, Cos,
// Sincos), in pure Go and with the same results on every machine.
//
// Go's math package does not promise that: Exp and Log are assembly on
// amd64 (Exp uses a fused multiply-add when the CPU has one), Exp is
// assembly on arm64, and the pure-Go functions are compiled with fused
// multiply-adds on arm64 (and ppc64le, s390x, riscv64) but not on amd64,
// each a possible difference in the last bit. Here each function is Go's
// own pure-Go algorithm (the files keep Go's copyright notice and BSD
// licence; the arch dispatch and Erf, Exp2 are left out), with every
// floating-point product that is then added, subtracted, returned, stored
// or passed on converted to float64 explicitly, which the Go specification
// says forbids fusing it, and no assembly. The functions Go's math
// package implements exactly on every machine (Abs, Floor, Frexp, Ldexp,
// Mod, Sqrt…) are called from it.
//
// On amd64, which never fuses, every function returns the bits of Go's
// pure-Go version: Log1p, Erfc's polynomials, Lgamma, Sin, Cos and Sincos
// equal math's bit for bit (the tests check it); Exp and Log are within one
// ulp of math's assembly (and equal to it on most inputs). The check that
// nothing fuses is the arm64 compiler's listing:
// GOARCH=arm64 go build -gcflags='github.com/crlbatch/crlbatch/internal/fpmath=-S'
// lists no FMADDD, FMSUBD, FNMADDD or FNMSUBD (TestNoFusedInstructions runs
// it).
package fpmath
