// Package stats holds the statistics that crlbatch reports about families of
// runs: descriptive summaries of seed values, seeded percentile-bootstrap
// confidence intervals, paired tests against a baseline with a multiplicity
// correction, the probability of improvement, and rank statistics across
// benchmarks (average ranks, the Friedman test, the Nemenyi critical
// difference), and Student's t quantile of the curves' bands.
//
// # Contract
//
// Every function is pure: it reads its arguments, returns values, and does no
// I/O, starts no goroutine, reads no clock and keeps no state between calls.
// Inputs are never modified, except by the functions whose name ends in
// InPlace. Two calls with equal arguments return bit-identical results. A
// product that is then added is converted to float64 explicitly, which keeps
// the compiler from fusing the two into one FMA instruction (the arm64
// compiler's listing, go build -gcflags=-S, shows no fused instruction in
// this package), and the transcendental functions behind the p values (Erfc,
// Exp, Log, Log1p, Lgamma) are internal/fpmath's pure-Go copies of Go's, not
// Go's math (whose Exp and Log are assembly on amd64, Exp using FMA when the
// CPU has it); so the results are also bit-identical across architectures
// and CPUs. StudentTQuantile (the curves' bands) uses only fpmath's Sin and
// Cos besides + − × ÷ √. Bootstrap intervals of Mean and IQMInPlace are
// identical everywhere.
//
// Arithmetic is float64. Sums are accumulated left to right in slice order in
// one accumulator (no pairwise or compensated summation), as PROTOCOLS.md
// requires. Where a result is defined as "what SciPy returns", the function
// follows SciPy 1.10.1 (Debian 12's python3-scipy) and numpy 1.24, and the
// tests compare against values that SciPy computed (testdata/reference.py);
// agreement is 1e-12 relative or better, and exact for the Wilcoxon exact p
// values, the Friedman statistic, ranks, sign-flip p values and the
// probability of improvement. numpy sums pairwise and trim_mean sums a
// partitioned array, so means of more than eight values can differ from
// numpy's in the last bits; that is far inside the 1e-9 of PROTOCOLS.md.
//
// Absent is never zero. A reduction of an empty sample (Mean, Median, IQM,
// Min, Max, Quantile, BootstrapCI, ProbImprovement) panics: the caller must
// have turned "no values" into an absent metric with a reason before asking.
// A sample variance of fewer than two values reports ok = false. The tests
// return an error, or a PairedResult with a nil P and a Reason, where SciPy
// would fail or return NaN (all differences zero, every benchmark tied). NaN
// and infinities are not data: the descriptive functions do not check for
// them (the result is then unspecified), the bootstrap panics on them, and
// the tests return ErrNonFinite or an error (the sign-flip test ErrOverflow
// when its sums of finite differences leave float64). BenjaminiHochberg is the one
// function that accepts NaN, as the marker of an absent p value.
//
// # Descriptive statistics
//
// Mean = Σx/n. SampleVariance is two-pass: m = Σx/n, then Σ(x−m)²/(n−1).
// Median is the middle order statistic, or (a+b)/2 of the two middle ones.
// IQM is rliable's interquartile mean, scipy.stats.trim_mean(x, 0.25): drop
// ⌊n/4⌋ values from each end of the sorted sample and average the rest,
// summed in ascending order. Quantile interpolates linearly between order
// statistics as numpy.quantile's default method "linear" does.
//
// # Bootstrap
//
// The percentile bootstrap is specified completely here, so that another
// implementation can reproduce every draw.
//
//  1. Seed. seed = SeedFor(base, names...), the 64-bit FNV-1a hash (offset
//     basis 14695981039346656037, prime 1099511628211; for each byte b:
//     h ^= b, h *= prime, mod 2⁶⁴) of the base seed written in decimal
//     followed, for each name, by a NUL byte and the name's UTF-8 bytes. The
//     skyfall protocol uses names (family, metric), so the draws of a family
//     and metric do not depend on which other families exist or on the order
//     of the work.
//  2. Generator. Go's math/rand/v2 PCG seeded with rand.NewPCG(seed, 0): a
//     128-bit state s = seed·2⁶⁴ + 0; each output first advances
//     s ← s·M + C mod 2¹²⁸ with M = 2549297995355413924·2⁶⁴ +
//     4865540595714422341 and C = 6364136223846793005·2⁶⁴ +
//     1442695040888963407, then returns the DXSM mix of the new state's high
//     word hi and low word lo: hi ^= hi>>32; hi *= 0xda942042e4dd58b5;
//     hi ^= hi>>48; hi *= lo|1 (all mod 2⁶⁴).
//  3. Index. A uniform index in [0, n) is drawn as (*rand.Rand).IntN(n) does
//     on 64-bit platforms: if n is a power of two, the output's low bits
//     (u & (n−1)); otherwise Lemire's method: (hi, lo) = u·n as a 128-bit
//     product; if lo < n, then while lo < (2⁶⁴ − n) mod n, draw a new u and
//     recompute; the index is hi. The package implements the generator and
//     this draw itself, so that 32-bit builds draw the same indices and the
//     resampling loop keeps the generator's state in registers; tests check
//     both against math/rand/v2. Where the CPU has AVX-512 (amd64), the
//     generator runs ahead instead: 32 lanes, lane k at step t+k, each
//     moved on by the LCG's 32-step map (M³², C₃₂), eight to a vector
//     register, fill a buffer of 512 outputs that the draws then read in
//     order; the outputs, and so the indices, are the same (tests compare
//     both generators and every bootstrap result by either path). There,
//     the probability of improvement's interval also computes Lemire's
//     products eight at a time from two 32×32-bit products (n < 2³²),
//     handing any group that holds a low word below n to the loop above.
//  4. Resamples. For b = 1 … B, draw n indices i₁ … iₙ in order and form the
//     resample (x[i₁], …, x[iₙ]); apply the statistic to it. StatMean sums
//     the resample in draw order and divides by n; StatIQM sorts it
//     ascending, drops ⌊n/4⌋ values at each end and sums the rest in
//     ascending order. Nothing else consumes draws, so resample b uses the
//     outputs that follow those of resample b−1, and the indices do not
//     depend on the statistic. For at most six values with the AVX-512
//     generator, the package draws 16 resamples at a time, sums four of
//     them side by side (each still in its own draw order), and takes each
//     resample's IQM from a table holding it for every multiset of the
//     values' sorted positions (126 at five values, 462 at six), computed
//     the same way; the results are the same, bit for bit.
//  5. Interval. Sort the B statistics ascending and take Quantile at
//     q_lo = (1−level)/2 and q_hi = (1+level)/2, computed in float64 just so
//     ((1−0.95)/2 is 0.025000000000000022, not 0.025; the difference moves
//     a 10,000-resample interval by about 1e-13 of its width). The package
//     finds the needed order statistics by selection rather than sorting;
//     the result is the same. When every value is equal and the statistics
//     are StatMean and StatIQM, every resample is the same whatever the
//     draws, and the package computes its statistic once without drawing;
//     the result is again the same, bit for bit. So does the probability of
//     improvement's interval when every x lies above every y (1), below (0),
//     or all values are one (½).
//
// BootstrapCIs evaluates several statistics on the same resamples; each
// result equals a BootstrapCI call with the same seed. The skyfall family
// table therefore gets the CIs of the mean and of the IQM of one metric from
// the same resamples.
//
// ProbImprovementCI is the interval of ProbImprovement by a stratified
// bootstrap (rliable's): each resample draws the family's values and the
// baseline's independently, with replacement, from one PRNG (the family's
// indices first, then the baseline's), and the interval is step 5 above.
//
// # Paired tests
//
// Wilcoxon reproduces scipy.stats.wilcoxon(d) (see its documentation for the
// rules, including SciPy's truncation of a half-integer rank sum in the exact
// test); SignFlip is the exact sign-flip permutation test; Paired chooses
// between them as PROTOCOLS.md 1.6 says (Wilcoxon from 6 pairs, zeros
// counted). BenjaminiHochberg adjusts p values for the false discovery rate.
//
// # Across benchmarks
//
// AverageRanks, Friedman (scipy.stats.friedmanchisquare) and NemenyiCD
// (Demšar 2006, Table 5, α = 0.05 or 0.10) serve the contilab protocol.
// ChiSquareSF and NormalSF are the distribution tails they need; they are
// implemented here (series and continued fraction for the incomplete gamma
// function) and are accurate to a few ulps times max(1, |ln p|), which is
// within 2.5e-13 of SciPy's Cephes over the range tested, Cephes itself
// being the less accurate of the two in places.
//
// # Student's t
//
// StudentTQuantile is the quantile of Student's t at an integer df, from the
// closed form of its distribution function (Abramowitz and Stegun 26.7.3/4)
// inverted by bisection: within 1e-13 of mpmath's (5e-13 at df 10000) and
// 1e-12 of gonum's; SciPy 1.10's t.ppf is itself only about 1e-9 accurate.
// figures' curves take their 95 % bands from it.
package stats
