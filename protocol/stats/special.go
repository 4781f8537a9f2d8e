package stats

import (
	"math"

	"github.com/crlbatch/crlbatch/internal/fpmath"
)

// sqrt1_2 is 1/√2 rounded to float64, as Cephes' NPY_SQRT1_2.
const sqrt1_2 = 0.70710678118654752440084436210484903928483593768847

// NormalSF is the survival function of the standard normal distribution,
// P(Z > z) = ½·erfc(z/√2). The argument is formed as z·(1/√2), the way
// SciPy's ndtr forms it, so that both evaluate erfc at the same float64.
func NormalSF(z float64) float64 {
	return float64(0.5 * fpmath.Erfc(z*sqrt1_2))
}

// ChiSquareSF is the survival function of the chi-square distribution with df
// degrees of freedom, P(X > x) = Q(df/2, x/2) with Q the regularized upper
// incomplete gamma function. Like scipy.stats.chi2.sf it is 1 for x ≤ 0.
// It returns NaN when x is NaN or df is not positive.
func ChiSquareSF(x, df float64) float64 {
	if math.IsNaN(x) || !(df > 0) {
		return math.NaN()
	}
	if x <= 0 {
		return 1
	}
	return gammaQ(df/2, x/2)
}

// gammaQ is the regularized upper incomplete gamma function
// Q(a, x) = Γ(a, x)/Γ(a) for a > 0, x ≥ 0. Below x = a+1 it sums the series of
// the lower function P and returns 1 − P (there P is at most about 0.9, so the
// subtraction loses no relative accuracy); from x = a+1 on it evaluates the
// continued fraction of Q with the modified Lentz method (Numerical Recipes,
// 3rd ed., §6.2).
func gammaQ(a, x float64) float64 {
	switch {
	case x == 0:
		return 1
	case math.IsInf(x, 1):
		return 0
	}
	if x < a+1 {
		return 1 - gammaPSeries(a, x)
	}
	return gammaQContinuedFraction(a, x)
}

// gammaPrefactor is x^a·e^(−x)/Γ(a). Written as exp(a·ln x − x − lnΓ(a)) it
// loses about ε·(a·ln x + x + lnΓ(a)) to rounding, most of it cancellation
// when x is near a. For a ≥ 10 it therefore uses Stirling's formula
// lnΓ(a) = (a−½)ln a − a + ½ln 2π + δ(a) to cancel the large terms
// analytically:
//
//	a·ln x − x − lnΓ(a) = a·(ln(1+t) − t) + ½·ln(a/2π) − δ(a),  t = (x−a)/a,
//
// whose rounding error is about ε times the size of the result. Against
// 40-digit values this keeps the relative error of Q below about
// 4e-15·max(1, |ln Q|) for every a.
func gammaPrefactor(a, x float64) float64 {
	if a < 10 {
		lg, _ := fpmath.Lgamma(a)
		return fpmath.Exp(float64(a*fpmath.Log(x)) - x - lg)
	}
	t := (x - a) / a
	return fpmath.Exp(float64(a*log1pmx(t)) + float64(0.5*fpmath.Log(a/(2*math.Pi))) - stirlingDelta(a))
}

// log1pmx is ln(1+t) − t, accurate also for small t.
func log1pmx(t float64) float64 {
	if math.Abs(t) > 0.25 {
		return fpmath.Log1p(t) - t
	}
	// −t²/2 + t³/3 − t⁴/4 + …; for |t| ≤ ¼ the terms fall by 4 each time.
	s := 0.0
	p := t
	for k := 2; k <= 32; k++ {
		p *= -t
		term := p / float64(k)
		s += term
		if math.Abs(term) < 1e-18*math.Abs(s) {
			break
		}
	}
	return s
}

// stirlingDelta is δ(a) = lnΓ(a) − ((a−½)ln a − a + ½ln 2π) for a ≥ 10, from
// its asymptotic series Σ B₂ₖ/(2k(2k−1)a²ᵏ⁻¹); at a = 10 the first omitted
// term is below 3e-17.
func stirlingDelta(a float64) float64 {
	// B₂ₖ/(2k(2k−1)) for k = 1 … 8.
	const (
		c1 = 1.0 / 12
		c2 = -1.0 / 360
		c3 = 1.0 / 1260
		c4 = -1.0 / 1680
		c5 = 1.0 / 1188
		c6 = -691.0 / 360360
		c7 = 1.0 / 156
		c8 = -3617.0 / 122400
	)
	r := 1 / a
	r2 := r * r
	s := c8
	for _, c := range [...]float64{c7, c6, c5, c4, c3, c2, c1} {
		s = c + float64(r2*s)
	}
	return float64(r * s)
}

// gammaEps stops the series once a term no longer changes the sum, and the
// continued fraction once a factor is 1 to within one ulp.
const gammaEps = 2.3e-16

func gammaPSeries(a, x float64) float64 {
	ap := a
	del := 1 / a
	s := del
	for i := 0; i < 100000; i++ {
		ap++
		del = float64(del * (x / ap))
		s += del
		if math.Abs(del) < math.Abs(s)*gammaEps/8 {
			break
		}
	}
	return s * gammaPrefactor(a, x)
}

func gammaQContinuedFraction(a, x float64) float64 {
	const tiny = 1e-300
	b := x + 1 - a
	c := 1 / tiny
	d := 1 / b
	h := d
	for i := 1; i < 100000; i++ {
		an := -float64(i) * (float64(i) - a)
		b += 2
		d = float64(an*d) + b
		if math.Abs(d) < tiny {
			d = tiny
		}
		c = b + an/c
		if math.Abs(c) < tiny {
			c = tiny
		}
		d = 1 / d
		del := float64(d * c)
		h *= del
		if math.Abs(del-1) <= gammaEps {
			break
		}
	}
	return gammaPrefactor(a, x) * h
}
