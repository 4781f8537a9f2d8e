package fpmath

import (
	"encoding/binary"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
)

// ulps is the distance between a and b in units in the last place (0 when
// both are NaN or both the same infinity; MaxUint64 across signs).
func ulps(a, b float64) uint64 {
	if math.IsNaN(a) && math.IsNaN(b) || a == b {
		return 0
	}
	if math.IsNaN(a) || math.IsNaN(b) || math.Signbit(a) != math.Signbit(b) {
		return math.MaxUint64
	}
	x, y := math.Float64bits(a), math.Float64bits(b)
	if x > y {
		return x - y
	}
	return y - x
}

// inputs draws n arguments in [lo, hi]: uniform, and, where lo > 0 and
// hi/lo spans orders of magnitude, log-uniform (a uniform binary exponent, a uniform
// significand: no transcendental function, so every machine draws the same
// arguments).
func inputs(seed uint64, n int, lo, hi float64) []float64 {
	r := rand.New(rand.NewPCG(seed, 1))
	out := make([]float64, 0, 2*n)
	for range n {
		out = append(out, lo+float64((hi-lo)*r.Float64()))
	}
	if lo > 0 && hi > 16*lo {
		_, e0 := math.Frexp(lo)
		_, e1 := math.Frexp(hi)
		for len(out) < 2*n {
			x := math.Ldexp(1+r.Float64(), e0-1+r.IntN(e1-e0+1))
			if x >= lo && x <= hi {
				out = append(out, x)
			}
		}
	}
	return out
}

// TestAgainstGoMath compares each function with Go's math on many
// arguments. exact: on amd64 Go's function is pure Go (no assembly), which
// amd64 compiles without fusion, so the bits must be the same; otherwise
// within maxULP. Exp is 2: Go's amd64 assembly and its pure-Go algorithm
// are each within 1 ulp of e^x and can fall on either side (e^270.7182784021378
// is 3.727815934585564e+117; this package returns the float64 below it,
// the assembly the one above).
func TestAgainstGoMath(t *testing.T) {
	lg := func(x float64) float64 { v, _ := Lgamma(x); return v }
	mlg := func(x float64) float64 { v, _ := math.Lgamma(x); return v }
	sinOf := func(x float64) float64 { s, _ := Sincos(x); return s }
	cosOf := func(x float64) float64 { _, c := Sincos(x); return c }
	msin := func(x float64) float64 { s, _ := math.Sincos(x); return s }
	mcos := func(x float64) float64 { _, c := math.Sincos(x); return c }
	amd64 := runtime.GOARCH == "amd64"
	for _, c := range []struct {
		name     string
		f, g     func(float64) float64
		ranges   [][2]float64
		exact    bool   // bit for bit on amd64
		maxULP   uint64 // elsewhere, and for Exp and Log everywhere
		maxShare float64
	}{
		// Above about 709.5 and on subnormals Go's amd64 assembly is wrong (see
		// TestWhereGoAssemblyErrs), so the ranges stop short of them.
		{"Exp", Exp, math.Exp, [][2]float64{{-745, 709.4}, {-1, 1}, {-1e-6, 1e-6}, {1e-300, 1e-8}}, false, 2, 0},
		{"Log", Log, math.Log, [][2]float64{{0x1p-1022, 1e308}, {0.5, 2}, {1 - 1e-6, 1 + 1e-6}}, false, 1, 0},
		{"Log1p", Log1p, math.Log1p, [][2]float64{{-1 + 1e-15, 1e10}, {-0.3, 0.5}, {1e-300, 1e-8}, {1, 1e300}}, amd64, 1, 0},
		// Erfc multiplies two Exps, each up to 1 ulp from math's.
		{"Erfc", Erfc, math.Erfc, [][2]float64{{-6, 27}, {-1, 1}, {1e-300, 1e-8}, {0.84375, 6}}, false, 3, 0},
		{"Lgamma", lg, mlg, [][2]float64{{1e-300, 1e6}, {-50.5, 50.5}, {0.5, 10}, {2, 3}}, false, 2, 0},
		{"Sin", Sin, math.Sin, [][2]float64{{-10, 10}, {-1e9, 1e9}, {1e-300, 1e6}, {1e9, 1e300}}, amd64, 1, 0},
		{"Cos", Cos, math.Cos, [][2]float64{{-10, 10}, {-1e9, 1e9}, {1e-300, 1e6}, {1e9, 1e300}}, amd64, 1, 0},
		{"Sincos.sin", sinOf, msin, [][2]float64{{-10, 10}, {1e-300, 1e6}, {1e9, 1e300}}, amd64, 1, 0},
		{"Sincos.cos", cosOf, mcos, [][2]float64{{-10, 10}, {1e-300, 1e6}, {1e9, 1e300}}, amd64, 1, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			n, differ := 0, 0
			var worst uint64
			for i, r := range c.ranges {
				for _, x := range inputs(uint64(i+1), 20000, r[0], r[1]) {
					got, want := c.f(x), c.g(x)
					d := ulps(got, want)
					n++
					if d != 0 {
						differ++
					}
					worst = max(worst, d)
					if !amd64 {
						// Go's own math is what differs between
						// machines (TestSameBitsEverywhere checks
						// this package's bits): counted, not failed.
						continue
					}
					if c.exact && d != 0 {
						t.Fatalf("%s(%v) = %v, Go's pure-Go math %v", c.name, x, got, want)
					}
					if d > c.maxULP {
						t.Fatalf("%s(%v) = %v, math %v: %d ulp", c.name, x, got, want, d)
					}
				}
			}
			t.Logf("%d arguments, %d differ from math (at most %d ulp)", n, differ, worst)
		})
	}
}

// TestSpecialValues: the special cases Go's math documents, and arguments
// at the edges (subnormals, the overflow and underflow thresholds).
func TestSpecialValues(t *testing.T) {
	inf, nan := math.Inf(1), math.NaN()
	negZero := math.Copysign(0, -1)
	sub := math.SmallestNonzeroFloat64
	type one struct {
		name string
		f    func(float64) float64
		x    float64
		want float64
	}
	lg := func(x float64) float64 { v, _ := Lgamma(x); return v }
	cases := []one{
		{"Exp", Exp, inf, inf}, {"Exp", Exp, -inf, 0}, {"Exp", Exp, nan, nan},
		{"Exp", Exp, 0, 1}, {"Exp", Exp, negZero, 1}, {"Exp", Exp, sub, 1},
		{"Exp", Exp, 7.097827128933841e+02, inf},
		{"Exp", Exp, 709.782712893384, 1.7976931348622732e+308}, // the largest finite result
		{"Exp", Exp, -7.451332191019412e+02, 0},
		{"Exp", Exp, -7.45133219101941108420e+02, 5e-324}, // arm64's assembly returns 0
		{"Exp", Exp, -740, 4.2e-322},                      // a subnormal result
		{"Log", Log, inf, inf}, {"Log", Log, 0, -inf}, {"Log", Log, negZero, -inf},
		{"Log", Log, -1, nan}, {"Log", Log, nan, nan}, {"Log", Log, 1, 0},
		{"Log", Log, sub, -744.4400719213812}, // −1074·ln 2
		{"Log", Log, 0x1p-1022, -708.3964185322641}, {"Log", Log, math.MaxFloat64, 709.782712893384},
		{"Log1p", Log1p, 0, 0}, {"Log1p", Log1p, negZero, negZero}, {"Log1p", Log1p, -1, -inf},
		{"Log1p", Log1p, -1.5, nan}, {"Log1p", Log1p, inf, inf}, {"Log1p", Log1p, -inf, nan},
		{"Log1p", Log1p, nan, nan}, {"Log1p", Log1p, sub, sub},
		{"Erfc", Erfc, inf, 0}, {"Erfc", Erfc, -inf, 2}, {"Erfc", Erfc, nan, nan},
		{"Erfc", Erfc, 0, 1}, {"Erfc", Erfc, 28, 0}, {"Erfc", Erfc, -7, 2}, {"Erfc", Erfc, sub, 1},
		{"Lgamma", lg, inf, inf}, {"Lgamma", lg, -inf, -inf}, {"Lgamma", lg, nan, nan},
		{"Lgamma", lg, 0, inf}, {"Lgamma", lg, -3, inf}, {"Lgamma", lg, 1, 0}, {"Lgamma", lg, 2, 0},
		{"Lgamma", lg, sub, 744.4400719213812},
		{"Sin", Sin, 0, 0}, {"Sin", Sin, negZero, negZero}, {"Sin", Sin, inf, nan},
		{"Sin", Sin, -inf, nan}, {"Sin", Sin, nan, nan}, {"Sin", Sin, sub, sub},
		{"Cos", Cos, inf, nan}, {"Cos", Cos, -inf, nan}, {"Cos", Cos, nan, nan},
		{"Cos", Cos, 0, 1}, {"Cos", Cos, negZero, 1},
	}
	for _, c := range cases {
		got := c.f(c.x)
		if math.Float64bits(got) != math.Float64bits(c.want) && !(math.IsNaN(got) && math.IsNaN(c.want)) {
			t.Errorf("%s(%v) = %v, want %v", c.name, c.x, got, c.want)
		}
	}
	if s, c := Sincos(negZero); math.Float64bits(s) != math.Float64bits(negZero) || c != 1 {
		t.Errorf("Sincos(-0) = %v, %v", s, c)
	}
	if s, c := Sincos(inf); !math.IsNaN(s) || !math.IsNaN(c) {
		t.Errorf("Sincos(+Inf) = %v, %v", s, c)
	}
	for _, x := range []float64{-0.5, -2.5, -1e-300} {
		_, sign := Lgamma(x)
		_, want := math.Lgamma(x)
		if sign != want {
			t.Errorf("Lgamma(%v) sign %d, want %d", x, sign, want)
		}
	}
}

// TestWhereGoAssemblyErrs records where Go's math.Exp and math.Log (amd64
// assembly) give another result than their pure-Go algorithm, which this
// package has: e^x for x from about 709.5 to 709.78 is finite (the
// assembly returns +Inf), and ln of a subnormal (the assembly's is off by up to 35). The
// correct values are checked here through identities of exact arithmetic.
func TestWhereGoAssemblyErrs(t *testing.T) {
	for _, x := range []float64{709.56, 709.66, 709.7, 709.78} {
		// e^x = e^(x−1)·e, and e^(x−1) is far from the threshold.
		got, want := Exp(x), Exp(x-1)*math.E
		if math.IsInf(got, 0) || ulps(got, want) > 2 {
			t.Errorf("Exp(%v) = %v, want about %v", x, got, want)
		}
	}
	for _, x := range []float64{0x1p-1074, 0x1.8p-1060, 1.9568034838883150e-308} {
		// ln x = ln(x·2^60) − 60·ln 2, with x·2^60 normal and exact.
		got, want := Log(x), Log(x*0x1p60)-60*math.Ln2
		if ulps(got, want) > 2 {
			t.Errorf("Log(%v) = %v, want about %v", x, got, want)
		}
	}
}

// fused matches the arm64 fused multiply-add instructions in a listing,
// float64 (D) and float32 (S).
var fused = regexp.MustCompile(`\b(FMADD|FMSUB|FNMADD|FNMSUB)[DS]\b`)

// TestNoFusedInstructions builds this package and every package whose
// arithmetic makes published numbers or figure pixels for arm64 with the
// compiler's listing (-gcflags=-S) and fails on any fused multiply-add in
// them: the rule of docs/decisions.md "Identical on every machine".
func TestNoFusedInstructions(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: runs the arm64 compiler")
	}
	gobin := filepath.Join(runtime.GOROOT(), "bin", "go")
	root := "../.."
	pkgs := []string{"./internal/fpmath", "./protocol/...", "./figures/...", "./upperbound/...", "./scoring/...", "./writers/..."}
	args := []string{"build", "-o", os.DevNull, "-tags", "disable_grpc_modules",
		"-gcflags=github.com/crlbatch/crlbatch/internal/fpmath=-S",
		"-gcflags=github.com/crlbatch/crlbatch/protocol/...=-S",
		"-gcflags=github.com/crlbatch/crlbatch/figures/...=-S",
		"-gcflags=github.com/crlbatch/crlbatch/upperbound/...=-S",
		"-gcflags=github.com/crlbatch/crlbatch/scoring/...=-S",
		"-gcflags=github.com/crlbatch/crlbatch/writers/...=-S"}
	cmd := exec.Command(gobin, append(args, pkgs...)...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "GOOS=linux", "GOARCH=arm64", "CGO_ENABLED=0")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("GOARCH=arm64 go build -gcflags=-S: %v: %s", err, out)
	}
	if !strings.Contains(string(out), "STEXT") {
		t.Fatal("no listing in the build's output (the build cache? -gcflags=-S prints only what it compiles)")
	}
	for _, line := range strings.Split(string(out), "\n") {
		if fused.MatchString(line) {
			t.Errorf("fused multiply-add: %s", strings.TrimSpace(line))
		}
	}
}

// TestSameBitsEverywhere hashes every function's results on the arguments
// of TestAgainstGoMath and compares the hash with the one computed on
// linux/amd64: the same on every machine. Run it under qemu-aarch64
// (GOARCH=arm64 go test -c) and with GODEBUG=cpu.fma=off to see it.
func TestSameBitsEverywhere(t *testing.T) {
	h := fnv.New64a()
	put := func(v float64) {
		var b [8]byte
		binary.LittleEndian.PutUint64(b[:], math.Float64bits(v))
		h.Write(b[:])
	}
	for i, r := range [][2]float64{{-745, 709.78}, {-1, 1}, {1e-300, 1e-8}, {0x1p-1074, 0x1p-1022}, {1e-308, 1e308}, {-50.5, 50.5}, {1e9, 1e300}} {
		for _, x := range inputs(uint64(100+i), 5000, r[0], r[1]) {
			put(Exp(x))
			put(Log(x))
			put(Log1p(x))
			put(Erfc(x))
			lg, sign := Lgamma(x)
			put(lg)
			put(float64(sign))
			put(Sin(x))
			put(Cos(x))
			s, c := Sincos(x)
			put(s)
			put(c)
		}
	}
	const want = 0x89a56807fa66c312
	if got := h.Sum64(); got != want {
		t.Errorf("hash of the results %#x, on linux/amd64 %#x", got, uint64(want))
	}
}
