#!/usr/bin/python3
# Reference values for the Go package github.com/crlbatch/crlbatch/protocol/stats.
#
# Regenerate, from the repository root, with Debian's system interpreter (it has
# SciPy 1.10.1 and numpy 1.24; the pyenv python3 first on PATH does not):
#
#     /usr/bin/python3 protocol/stats/testdata/reference.py protocol/stats/testdata/reference.json
#
# Check, writing nothing (CI runs this through `make check-references`):
#
#     /usr/bin/python3 protocol/stats/testdata/reference.py --check
#
# recomputes everything in memory and compares it with the committed
# reference.json next to this script: the same keys, lengths, strings, integers
# and booleans, and every float within a relative 1e-12 (the file is expected
# to be byte-identical; the tolerance only keeps a last-bit change in a SciPy
# or BLAS build from being mistaken for a wrong reference). Exits 1 naming the
# first differences, or when SciPy, numpy or mpmath is missing.
#
# The output is deterministic: the inputs come from numpy generators with fixed
# seeds, and every float is written with repr (shortest round-trip text), so a
# rerun with the same SciPy and numpy reproduces the file byte for byte
# (TestReferenceRegenerates checks that when CRLBATCH_REGEN_CHECK=1).
#
# What is computed with SciPy/numpy (the independent implementation):
#   descriptive  numpy mean, var(ddof=1), std(ddof=1), median, min, max and
#                scipy.stats.trim_mean(x, 0.25) (rliable's IQM)
#   quantile     numpy.quantile, method "linear"
#   wilcoxon     scipy.stats.wilcoxon(d) with its defaults
#   friedman     scipy.stats.friedmanchisquare(*columns), scipy.stats.rankdata
#   chi2_sf      scipy.stats.chi2.sf;  norm_sf: scipy.stats.norm.sf
#   t_ppf        scipy.stats.t.ppf(p, df) at integer df (the curves' bands), and
#                the same quantile from mpmath.betainc (40 digits) solved with
#                mpmath.findroot: SciPy 1.10's t.ppf (cdflib's stdtrit) is only
#                about 1e-9 relative (at df = 1 it misses tan(0.475π) by 2e-11)
#   nemenyi      scipy.stats.studentized_range.ppf(1 - alpha, k, inf) / sqrt(2)
#   chi2_sf_mp   mpmath.gammainc (40 digits), to test ChiSquareSF's own accuracy
# What is re-implemented here in plain Python from its written definition:
#   sign_flip    enumeration of all sign patterns with itertools.product
#   bh           statsmodels' multipletests(method="fdr_bh") algorithm
#                (statsmodels is not installed), and R's formula as a check
#   prob_improvement  numpy broadcasting
#   bootstrap    the documented draw procedure (FNV-1a seed, Go's PCG-DXSM,
#                Lemire's bounded integers), with numpy.mean, trim_mean and
#                numpy.quantile for the statistics and the percentiles

import itertools
import json
import math
import os
import sys
import warnings

import numpy as np
import scipy
import scipy.stats as st

if scipy.__version__ != "1.10.1":
    sys.exit("need SciPy 1.10.1 (run /usr/bin/python3), have " + scipy.__version__)


def f(x):
    """A Python float from a numpy scalar."""
    return float(x)


def floats(xs):
    return [float(x) for x in xs]


# ---------------------------------------------------------------- descriptive

def descriptive_cases():
    rng = np.random.default_rng(11)
    cases = []
    sizes = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 15, 16, 17, 20, 25, 31, 64, 100]
    for n in sizes:
        cases.append(("normal_%d" % n, rng.normal(0.3, 2.0, n)))
    for n in [4, 7, 10, 12, 21]:
        cases.append(("ties_%d" % n, rng.integers(-3, 4, n).astype(float)))
    for n in [5, 10, 40]:
        cases.append(("offset_%d" % n, 1e6 + rng.normal(0, 1e-3, n)))
    for n in [6, 9]:
        cases.append(("mixed_scale_%d" % n, rng.normal(0, 1, n) * 10.0 ** rng.integers(-8, 9, n)))
    cases.append(("all_equal", np.full(9, 0.1)))
    cases.append(("negative", -np.abs(rng.normal(5, 1, 11))))
    out = []
    for name, x in cases:
        x = np.asarray(x, dtype=float)
        n = len(x)
        out.append({
            "name": name,
            "x": floats(x),
            "mean": f(np.mean(x)),
            "var": f(np.var(x, ddof=1)) if n >= 2 else None,
            "std": f(np.std(x, ddof=1)) if n >= 2 else None,
            "median": f(np.median(x)),
            "iqm": f(st.trim_mean(x, 0.25)),
            "min": f(np.min(x)),
            "max": f(np.max(x)),
        })
    return out


def quantile_cases():
    rng = np.random.default_rng(12)
    qs = [0.0, 1.0, 0.5, 0.25, 0.75, 0.1, 0.9, 1 / 3, 2 / 3, 0.025, 0.975,
          (1 - 0.95) / 2, (1 + 0.95) / 2, (1 - 0.9) / 2, (1 + 0.9) / 2, 0.999, 1e-9]
    qs += floats(rng.random(5))
    out = []
    for n in [1, 2, 3, 5, 10, 11, 100, 2001]:
        x = np.sort(rng.normal(1, 3, n))
        out.append({"sorted": floats(x), "q": qs, "want": floats(np.quantile(x, qs))})
    x = np.sort(rng.integers(0, 4, 50).astype(float))  # ties: interpolation between equal values
    out.append({"sorted": floats(x), "q": qs, "want": floats(np.quantile(x, qs))})
    return out


# ------------------------------------------------------------------- wilcoxon

def wilcoxon_cases():
    rng = np.random.default_rng(13)
    cases = []
    for n in range(6, 61):  # continuous, distinct |d|
        cases.append(("continuous_%d" % n, rng.normal(0.25, 1.0, n)))
    for n in range(6, 61, 3):  # ties in |d|, no zeros
        d = np.round(rng.normal(0.3, 1.5, n) * 2) / 2
        d[d == 0] = 0.5
        cases.append(("ties_%d" % n, d))
    for n in range(6, 61, 3):  # ties and zeros
        d = np.round(rng.normal(0.2, 1.5, n))
        if not np.any(d == 0):
            d[0] = 0.0
        cases.append(("zeros_%d" % n, d))
    for n in [6, 7, 10, 20, 50, 51, 60]:
        cases.append(("all_positive_%d" % n, np.abs(rng.normal(0, 1, n)) + 0.01))
        cases.append(("all_negative_%d" % n, -np.abs(rng.normal(0, 1, n)) - 0.01))
    for n in [6, 7, 8, 9, 10, 11, 12, 25, 49, 50, 51, 55]:
        cases.append(("equal_magnitudes_%d" % n, rng.choice([-1.0, 1.0], n) * 0.7))
    # Exactly at the centre of the null distribution: R+ = floor(n(n+1)/4).
    cases.append(("centre_6", np.array([-1, -2, -3, 4, -5, 6], dtype=float)))  # R+ = 10
    cases.append(("centre_7", np.array([1, 2, -3, 4, -5, -6, 7], dtype=float)))  # R+ = 14
    cases.append(("centre_8", np.array([-1, -2, 3, -4, -5, -6, 7, 8], dtype=float)))  # R+ = 18
    cases.append(("next_to_centre_6", np.array([-1, -2, -3, -4, 5, 6], dtype=float)))  # R+ = 11
    # Ties that make R+ a half-integer: SciPy truncates it, so d and -d differ.
    # R+ = R- = 10.5, truncated to the centre 10.
    cases.append(("half_rank_centre_6", np.array([1, -2, -3, 4, 5, -5], dtype=float)))
    # R+ = 36.5 -> 36, p = 2 P(R >= 36); mirrored R+ = 8.5 -> 8, p = 2 P(R <= 8) = 2 P(R >= 37).
    cases.append(("half_rank_9", np.array([1, -1, 2, 3, 4, 5, -6, 7, 8], dtype=float)))
    cases.append(("half_rank_9_mirror", -np.array([1, -1, 2, 3, 4, 5, -6, 7, 8], dtype=float)))
    # Zeros: forced normal approximation, even with one difference left.
    cases.append(("one_left_after_zeros", np.array([0, 0, 0, 0, 0, 3.0])))
    cases.append(("two_left_after_zeros", np.array([0, -0.0, 0, 2.0, 0, -1.0])))
    cases.append(("negative_zero", np.array([-0.0, 1, 2, -3, 4, 5, 6])))
    cases.append(("one_zero_51", np.concatenate([[0.0], rng.normal(0.1, 1, 50)])))
    # SciPy's docstring example (Wilcoxon 1945, corn heights), exact p 0.041259765625.
    cases.append(("corn_15", np.array([6, 8, 14, 16, 23, 24, 28, 29, 41, -48, 49, 56, 60, -67, 75], dtype=float)))
    cases.append(("tiny_scale_12", rng.normal(1e-9, 1e-9, 12)))
    cases.append(("huge_scale_12", rng.normal(1e8, 1e9, 12)))
    cases.append(("ties_zeros_60", np.round(rng.normal(0, 1, 60))))
    out = []
    for name, d in cases:
        d = np.asarray(d, dtype=float)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = st.wilcoxon(d)
        out.append({
            "name": name,
            "d": floats(d),
            "statistic": f(r.statistic),
            "pvalue": f(r.pvalue),
            "exact": bool(len(d) <= 50 and not np.any(d == 0)),
        })
    # All differences zero: SciPy raises; the Go side reports absence.
    d = np.zeros(7)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            st.wilcoxon(d)
        raise SystemExit("expected SciPy to refuse all-zero differences")
    except ValueError as e:
        out.append({"name": "all_zero_7", "d": floats(d), "error": str(e)})
    return out


# ------------------------------------------------------------------ sign flip

def sign_flip_ref(d):
    n = len(d)
    obs = 0.0
    abs_sum = 0.0
    for v in d:
        obs += v
        abs_sum += abs(v)
    thr = abs(obs) - 1e-9 * max(1.0, abs_sum)
    hits = 0
    for signs in itertools.product((1.0, -1.0), repeat=n):
        s = 0.0
        for sg, v in zip(signs, d):
            s += sg * v
        if abs(s) >= thr:
            hits += 1
    return hits / 2 ** n, 2 / 2 ** n


def sign_flip_cases():
    rng = np.random.default_rng(14)
    cases = []
    for n in range(1, 6):
        for _ in range(3):
            cases.append(rng.normal(0.5, 1, n))
    cases.append(np.array([1.0, 2.0, 3.0]))
    cases.append(np.array([1.0, -1.0, 1.0, -1.0]))
    cases.append(np.array([0.0, 0.0, 2.0]))
    cases.append(np.array([0.1, 0.2, -0.3]))  # Σd is 5.55e-17, not 0: the slack matters
    cases.append(np.array([0.0, 0.0, 0.0, 0.0]))
    cases.append(np.round(rng.normal(0, 2, 5)))
    cases.append(rng.normal(0, 1, 10))
    out = []
    for d in cases:
        p, minp = sign_flip_ref(floats(d))
        out.append({"d": floats(d), "p": p, "min_p": minp})
    return out


# ------------------------------------------------------ Benjamini–Hochberg

def bh_statsmodels(p):
    # statsmodels.stats.multitest.multipletests(p, method="fdr_bh")[1], as written there.
    p = np.asarray(p, dtype=float)
    order = np.argsort(p)
    ps = np.take(p, order)
    nobs = len(ps)
    ecdffactor = np.arange(1, nobs + 1) / float(nobs)
    raw = ps / ecdffactor
    corrected = np.minimum.accumulate(raw[::-1])[::-1]
    corrected[corrected > 1] = 1
    out = np.empty_like(corrected)
    out[order] = corrected
    return out


def bh_r(p):
    # R: i <- lp:1; o <- order(p, decreasing=TRUE); ro <- order(o)
    #    pmin(1, cummin(n/i * p[o]))[ro]
    p = np.asarray(p, dtype=float)
    n = len(p)
    o = np.argsort(-p, kind="stable")
    i = np.arange(n, 0, -1)
    adj = np.minimum(1, np.minimum.accumulate(n / i * p[o]))
    out = np.empty(n)
    out[o] = adj
    return out


def bh_cases():
    rng = np.random.default_rng(15)
    cases = [[0.01], [0.5, 0.5], [0.01, 0.04, 0.03, 0.2], [1.0, 1.0, 0.9],
             [0.0, 0.05, 0.05, 0.05, 0.5], [1e-300, 1e-10, 0.2, 0.99]]
    for m in [3, 5, 8, 13, 20, 25]:
        cases.append(floats(rng.random(m) ** 3))
    for m in [6, 12]:
        cases.append(floats(np.round(rng.random(m), 2)))  # ties
    out = []
    for p in cases:
        sm = bh_statsmodels(p)
        r = bh_r(p)
        assert np.allclose(sm, r, rtol=1e-14, atol=0), (p, sm, r)
        out.append({"p": floats(p), "adjusted": floats(sm)})
    return out


# ------------------------------------------------- probability of improvement

def prob_improvement_cases():
    rng = np.random.default_rng(16)
    cases = [([1.0, 2.0, 3.0], [2.0, 2.0]), ([0.0], [0.0]), ([1.0, 1.0], [0.0, 2.0, 1.0])]
    for nx, ny in [(5, 5), (10, 7), (3, 12)]:
        cases.append((floats(rng.normal(0.2, 1, nx)), floats(rng.normal(0, 1, ny))))
    for nx, ny in [(6, 6), (9, 4)]:
        cases.append((floats(rng.integers(0, 4, nx)), floats(rng.integers(0, 4, ny))))
    out = []
    for x, y in cases:
        X = np.asarray(x)[:, None]
        Y = np.asarray(y)[None, :]
        pi = (np.sum(X > Y) + 0.5 * np.sum(X == Y)) / (len(x) * len(y))
        out.append({"x": x, "y": y, "p": f(pi)})
    return out


# ------------------------------------------------------- Friedman and ranks

def friedman_cases():
    rng = np.random.default_rng(17)
    cases = []
    for k in range(3, 9):
        for n in [2, 5, 12, 25]:
            cases.append(("continuous_k%d_n%d" % (k, n), rng.normal(0, 1, (n, k)) + np.arange(k) * 0.2))
    for k in [3, 4, 6]:
        for n in [4, 10, 30]:
            cases.append(("ties_k%d_n%d" % (k, n), rng.integers(0, 3, (n, k)).astype(float)))
    s = rng.normal(0, 1, (6, 4))
    s[2, :] = 0.5  # one benchmark ties all families
    cases.append(("one_row_all_tied", s))
    cases.append(("one_benchmark", np.array([[0.3, 0.1, 0.2, 0.9]])))
    cases.append(("perfect_order_k5_n20", np.tile(np.arange(5, dtype=float), (20, 1))))
    cases.append(("many_families_k15_n8", rng.normal(0, 1, (8, 15))))
    out = []
    for name, scores in cases:
        cols = [scores[:, j] for j in range(scores.shape[1])]
        r = st.friedmanchisquare(*cols)
        ranks_low = np.mean([st.rankdata(row) for row in scores], axis=0)
        ranks_high = np.mean([st.rankdata(-row) for row in scores], axis=0)
        out.append({
            "name": name,
            "scores": [floats(row) for row in scores],
            "statistic": f(r.statistic),
            "pvalue": f(r.pvalue),
            "avg_ranks_lower_better": floats(ranks_low),
            "avg_ranks_higher_better": floats(ranks_high),
        })
    scores = np.tile(np.array([[1.0, 1.0, 1.0]]), (4, 1))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = st.friedmanchisquare(*[scores[:, j] for j in range(3)])
    assert math.isnan(r.statistic)
    out.append({"name": "all_tied", "scores": [floats(row) for row in scores], "error": "nan"})
    return out


def chi2_sf_cases():
    out = []
    dfs = list(range(1, 31)) + [35, 40, 50, 60, 80, 100]
    for df in dfs:
        xs = [1e-12, 1e-6, 0.01, 0.1, 0.5, 1.0, 2.0, df / 2, df - 1, df - 0.3, df, df + 0.7, df + 1,
              df + 2, 1.5 * df, 2 * df, 3 * df, 5 * df, 50.0, 100.0, 200.0, 500.0, 1000.0, 1400.0]
        for x in sorted(set(float(x) for x in xs if x >= 0)):
            p = f(st.chi2.sf(x, df))
            if p > 1e-290:
                out.append({"x": x, "df": float(df), "p": p})
    for x in [0.0, -1.0, -1e-15]:
        out.append({"x": x, "df": 3.0, "p": f(st.chi2.sf(x, 3))})
    return out


def chi2_sf_mp_cases():
    # The chi-square tail to full double precision with mpmath (40 digits),
    # to test the accuracy of ChiSquareSF itself rather than agreement with
    # Cephes (which is itself off by up to ~1e-13 in places).
    import mpmath
    mpmath.mp.dps = 40
    out = []
    for df in [1, 2, 3, 5, 9, 10, 19, 20, 21, 30, 41, 60, 100, 200, 401]:
        xs = [0.01, 0.3, 1.0, 5.0, 300.0, 1000.0]
        xs += [df * r for r in (0.5, 0.7, 0.8, 0.9, 0.95, 0.99, 1.0, 1.01, 1.05, 1.1, 1.2, 1.4, 1.5, 2.0, 4.0)]
        for x in sorted(set(float(x) for x in xs)):
            q = mpmath.gammainc(mpmath.mpf(df) / 2, mpmath.mpf(x) / 2, mpmath.inf, regularized=True)
            p = float(q)
            if p > 1e-290:
                out.append({"x": x, "df": float(df), "p": p})
    return out


def norm_sf_cases():
    zs = [0.0, 1e-10, 0.1, 0.5, 0.7, 0.70710678, 1.0, 1.5, 1.959963984540054, 2.0, 3.0, 4.5,
          6.0, 8.0, 10.0, 15.0, 20.0, 30.0, 37.0, -0.3, -1.0, -2.5, -8.0]
    return [{"z": z, "p": f(st.norm.sf(z))} for z in zs]


def t_ppf_mp(p, df):
    import mpmath
    with mpmath.workdps(40):
        if p == 0.5:
            return 0.0
        if p < 0.5:
            return -t_ppf_mp(1 - p, df)
        a = mpmath.mpf(df) / 2
        half = mpmath.mpf(1) / 2

        def g(t):
            x = df / (df + t * t)
            return 1 - mpmath.betainc(a, half, 0, x, regularized=True) / 2 - mpmath.mpf(p)
        return float(mpmath.findroot(g, mpmath.mpf(st.t.ppf(p, df))))


def t_ppf_cases():
    dfs = list(range(1, 101)) + [127, 128, 200, 255, 500, 999, 1000, 4999, 10000]
    cases = [(0.975, df) for df in dfs]
    for p in [0.5, 0.6, 0.9, 0.95, 0.995, 0.025, 0.1]:
        for df in [1, 2, 3, 4, 5, 7, 10, 30, 59, 100]:
            cases.append((p, df))
    return [{"p": p, "df": df, "scipy": f(st.t.ppf(p, df)), "mp": f(t_ppf_mp(p, df))}
            for p, df in cases]


def nemenyi_cases():
    out = []
    for alpha in [0.05, 0.10]:
        for k in range(2, 11):
            q = st.studentized_range.ppf(1 - alpha, k, np.inf) / math.sqrt(2)
            out.append({"alpha": alpha, "k": k, "q": f(q)})
    return out


# ------------------------------------------------------------------ bootstrap

M64 = (1 << 64) - 1
M128 = (1 << 128) - 1
PCG_MUL = (2549297995355413924 << 64) | 4865540595714422341
PCG_INC = (6364136223846793005 << 64) | 1442695040888963407


def seed_for(base, parts):
    h = 14695981039346656037
    data = str(base).encode()
    for p in parts:
        data += b"\x00" + p.encode()
    for c in data:
        h ^= c
        h = (h * 1099511628211) & M64
    return h


class PCG:
    """Go's math/rand/v2 PCG: a 128-bit LCG with the DXSM output function."""

    def __init__(self, hi, lo):
        self.state = (hi << 64) | lo

    def uint64(self):
        self.state = (self.state * PCG_MUL + PCG_INC) & M128
        hi, lo = self.state >> 64, self.state & M64
        hi ^= hi >> 32
        hi = (hi * 0xDA942042E4DD58B5) & M64
        hi ^= hi >> 48
        hi = (hi * (lo | 1)) & M64
        return hi

    def intn(self, n):
        if n & (n - 1) == 0:
            return self.uint64() & (n - 1)
        prod = self.uint64() * n
        hi, lo = prod >> 64, prod & M64
        if lo < n:
            thresh = ((1 << 64) - n) % n
            while lo < thresh:
                prod = self.uint64() * n
                hi, lo = prod >> 64, prod & M64
        return hi


def bootstrap_ref(xs, resamples, seed, level):
    rng = PCG(seed, 0)
    n = len(xs)
    means, iqms = [], []
    for _ in range(resamples):
        sample = np.array([xs[rng.intn(n)] for _ in range(n)])
        means.append(np.mean(sample))
        iqms.append(st.trim_mean(sample, 0.25))
    q = [(1 - level) / 2, (1 + level) / 2]
    return floats(np.quantile(means, q)), floats(np.quantile(iqms, q))


def bootstrap_cases():
    rng = np.random.default_rng(18)
    out = {"seed_for": [], "pcg": [], "intn": [], "ci": []}
    for base, parts in [(0, []), (0, ["ppo"]), (0, ["ppo", "forgetting"]), (1, ["ppo", "forgetting"]),
                        (18446744073709551615, ["", ""]), (42, ["fam\u00e9", "m\u00e9tric", "x"]),
                        (7, ["a\x00b"]), (7, ["a", "b"])]:
        out["seed_for"].append({"base": base, "parts": parts, "seed": seed_for(base, parts)})
    for seed in [0, 1, 12345678901234567890]:
        g = PCG(seed, 0)
        out["pcg"].append({"seed": seed, "uint64": [g.uint64() for _ in range(6)]})
    for seed, n in [(3, 10), (3, 8), (3, 1), (9, 3), (9, 7), (5, 1000003), (5, (1 << 63) + 5)]:
        g = PCG(seed, 0)
        out["intn"].append({"seed": seed, "n": n, "draws": [g.intn(n) for _ in range(12)]})
    specs = [
        ("ppo", "final_reward", 0, rng.normal(10, 3, 10), 2000, 0.95),
        ("sac", "forgetting", 0, rng.normal(0.2, 0.1, 5), 2000, 0.95),
        ("dqn", "tau_adapt", 17, rng.integers(1, 50, 12).astype(float), 2000, 0.95),
        ("", "recovery", 3, rng.normal(-1, 1, 2), 1000, 0.95),
        ("ppo", "regret", 5, rng.normal(100, 30, 7), 1500, 0.9),
        ("a2c", "effective_rank", 0, rng.normal(5, 1, 10), 10000, 0.95),
    ]
    for family, metric, base, xs, resamples, level in specs:
        seed = seed_for(base, [family, metric])
        mean_ci, iqm_ci = bootstrap_ref(floats(xs), resamples, seed, level)
        out["ci"].append({"family": family, "metric": metric, "base": base, "seed": seed,
                          "x": floats(xs), "resamples": resamples, "level": level,
                          "mean_ci": mean_ci, "iqm_ci": iqm_ci})
    return out


def build():
    return {
        "generator": "protocol/stats/testdata/reference.py",
        "versions": {"scipy": scipy.__version__, "numpy": np.__version__},
        "descriptive": descriptive_cases(),
        "quantile": quantile_cases(),
        "wilcoxon": wilcoxon_cases(),
        "sign_flip": sign_flip_cases(),
        "bh": bh_cases(),
        "prob_improvement": prob_improvement_cases(),
        "friedman": friedman_cases(),
        "chi2_sf": chi2_sf_cases(),
        "chi2_sf_mp": chi2_sf_mp_cases(),
        "norm_sf": norm_sf_cases(),
        "nemenyi": nemenyi_cases(),
        "t_ppf": t_ppf_cases(),
        "bootstrap": bootstrap_cases(),
    }


def render(doc):
    # One case per line, keys sorted, floats as repr: stable and diffable.
    lines = ["{"]
    keys = sorted(doc)
    for i, key in enumerate(keys):
        val = doc[key]
        end = "," if i < len(keys) - 1 else ""
        if isinstance(val, list):
            lines.append(" %s: [" % json.dumps(key))
            for j, item in enumerate(val):
                sep = "," if j < len(val) - 1 else ""
                lines.append("  " + json.dumps(item, sort_keys=True, allow_nan=False) + sep)
            lines.append(" ]" + end)
        else:
            lines.append(" %s: %s%s" % (json.dumps(key), json.dumps(val, sort_keys=True, allow_nan=False), end))
    lines.append("}")
    return "\n".join(lines) + "\n"


REL_TOL = 1e-12


def differences(want, got, path="$"):
    """Yields one line per difference between two parsed JSON values."""
    if isinstance(want, float) and isinstance(got, float):
        if not (want == got or math.isclose(want, got, rel_tol=REL_TOL, abs_tol=0.0)):
            yield "%s: committed %r, recomputed %r" % (path, want, got)
    elif type(want) is not type(got):
        yield "%s: committed %s %r, recomputed %s %r" % (path, type(want).__name__, want, type(got).__name__, got)
    elif isinstance(want, dict):
        for k in sorted(set(want) | set(got)):
            if k not in got:
                yield "%s.%s: in the committed file only" % (path, k)
            elif k not in want:
                yield "%s.%s: recomputed only" % (path, k)
            else:
                yield from differences(want[k], got[k], "%s.%s" % (path, k))
    elif isinstance(want, list):
        if len(want) != len(got):
            yield "%s: committed %d items, recomputed %d" % (path, len(want), len(got))
        for i, (w, g) in enumerate(zip(want, got)):
            yield from differences(w, g, "%s[%d]" % (path, i))
    elif want != got:
        yield "%s: committed %r, recomputed %r" % (path, want, got)


def check(path):
    text = render(build())
    with open(path, encoding="utf-8") as fh:
        committed = fh.read()
    if text == committed:
        print("ok: %s is reproduced byte for byte" % path)
        return
    diffs = list(itertools.islice(differences(json.loads(committed), json.loads(text)), 11))
    if diffs:
        print("%s differs from what reference.py computes now:" % path, file=sys.stderr)
        for d in diffs[:10]:
            print("  " + d, file=sys.stderr)
        if len(diffs) > 10:
            print("  ...", file=sys.stderr)
        print("regenerate it (see the top of reference.py) and review the diff", file=sys.stderr)
        sys.exit(1)
    print("ok: %s agrees (floats within %g; not byte-identical: regenerate it to refresh the text)" % (path, REL_TOL))


def main():
    args = sys.argv[1:]
    if args[:1] == ["--check"] and len(args) <= 2:
        default = os.path.join(os.path.dirname(os.path.abspath(__file__)), "reference.json")
        check(args[1] if len(args) == 2 else default)
        return
    if len(args) != 1 or args[0].startswith("-"):
        sys.exit("usage: reference.py OUTPUT.json | reference.py --check [REFERENCE.json]")
    with open(args[0], "w", encoding="utf-8") as fh:
        fh.write(render(build()))


if __name__ == "__main__":
    main()
