#!/usr/bin/python3
"""Independent reference for curves.parquet (skyfall's per-family reward curves).

Written from docs/decisions.md ("Figures and the HTML report (issue 14)": the
downsampling rule, "Curves are reduced while runs are scored", "Flat memory"),
the README's curves.parquet columns and PROTOCOLS.md (runs, canonical order,
labels, --min-steps), never from the Go code. It writes curves_cases.json: each
case's runs (one object per run) and flags, and the rows curves.parquet must
hold; cmd/crlbatch/curvesref_test.go scores each case and compares.

The rule, as read here:
* a run of n steps (rows in canonical order; `step` is never used) is cut into
  buckets of the smallest power-of-two width W with ceil(n/W) <= 2000;
* a family's line is read at the widest W of its runs (runs --min-steps
  excludes are not in it); bucket b is [b*W, (b+1)*W), its step_end cut at the
  longest run's length;
* per bucket and label (the row's regime_id, an alias being a label of its
  own): runs = runs with a reward of that label there; each such run's mean
  (its float64 sum in row order over its count); mean = the sum of those means
  in run order over runs (float64, PROTOCOLS' sequential sums); band = mean -+
  t(0.975, runs-1)*sd/sqrt(runs), sd the sample standard deviation of the runs'
  means (computed exactly, with fractions, and t with mpmath; scipy's t.ppf is
  a second check), null under two runs ("fewer than two runs"); min and max of
  every reward of every run there; a value that leaves float64 is null with
  "the value overflows float64";
* rows: families in order of their first run, then buckets by step, then
  labels in order of first appearance over the family's runs (in run order),
  whatever their order inside the bucket (docs/decisions.md: the README's
  "family x label x step bucket" names the grain, not the order).

Run with Debian's /usr/bin/python3 (scipy, numpy, mpmath); --check recomputes
and compares with the committed file (`make check-references`).
"""
import functools
import json
import math
import os
import sys
from fractions import Fraction

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "protocol", "testdata"))
import refcheck  # noqa: E402

import mpmath  # noqa: E402
from scipy import stats  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "curves_cases.json")
MAXB = 2000
FEWER = "fewer than two runs"
OVERFLOW = "the value overflows float64"


def width(n):
    w = 1
    while -(-n // w) > MAXB:
        w *= 2
    return w


@functools.lru_cache(maxsize=None)
def t975(df):
    """t(0.975, df) to 40 digits: the root of the CDF by mpmath, checked
    against scipy."""
    mpmath.mp.dps = 40
    df = mpmath.mpf(df)

    def upper(x):  # P(T > x) for x > 0
        return mpmath.betainc(df / 2, mpmath.mpf(1) / 2, 0, df / (df + x * x),
                              regularized=True) / 2

    x = mpmath.findroot(lambda x: upper(x) - mpmath.mpf(1) / 40, 2)
    sp = stats.t.ppf(0.975, float(df))
    # scipy is a second opinion at the agreement tolerance: at df = 1 it is
    # 2e-11 from tan(0.475*pi), which mpmath matches to every digit.
    assert abs(float(x) - sp) <= 1e-9 * sp, (df, x, sp)
    return x


def fsum_seq(xs):
    """float64 sum in order, as PROTOCOLS says (an overflow stays inf)."""
    s = 0.0
    for x in xs:
        s += x
    return s


def finite(x):
    return x is not None and math.isfinite(x)


def curves(runs, min_steps):
    """The curves.parquet rows of runs (each {"meta", "segments"}) in order."""
    fams = []
    byfam = {}
    for r in runs:
        rows = [(lab, rew) for lab, _origin, rews in r["segments"] for rew in rews]
        fam = r["meta"].get("algorithm_id")
        if fam not in byfam:
            byfam[fam] = []
            fams.append(fam)
        if min_steps and len(rows) < min_steps:
            continue
        byfam[fam].append(rows)
    out = []
    for fam in fams:
        frs = byfam[fam]
        if not frs:
            continue
        w = max(width(len(rows)) for rows in frs)
        longest = max(len(rows) for rows in frs)
        labels = []
        for rows in frs:
            for lab, _ in rows:
                if lab not in labels:
                    labels.append(lab)
        nb = -(-longest // w)
        for b in range(nb):
            for lab in labels:
                means, lo, hi = [], None, None
                for rows in frs:
                    rs = [rew for i, (l, rew) in enumerate(rows[b * w:(b + 1) * w]) if l == lab]
                    if not rs:
                        continue
                    means.append(fsum_seq(rs) / len(rs))
                    lo = min(rs + ([lo] if lo is not None else []))
                    hi = max(rs + ([hi] if hi is not None else []))
                if not means:
                    continue
                row = {"family": fam, "label": lab, "step_start": b * w,
                       "step_end": min((b + 1) * w, longest), "runs": len(means),
                       "min": lo, "max": hi, "reasons": {}}
                mean = fsum_seq(means) / len(means)
                row["mean"] = mean if finite(mean) else None
                if row["mean"] is None:
                    row["reasons"]["mean"] = OVERFLOW
                if len(means) < 2:
                    row["band_low"] = row["band_high"] = None
                    row["reasons"]["band_low"] = row["reasons"]["band_high"] = FEWER
                elif row["mean"] is None or not all(map(finite, means)):
                    row["band_low"] = row["band_high"] = None
                    row["reasons"]["band_low"] = row["reasons"]["band_high"] = OVERFLOW
                else:
                    fm = [Fraction(m) for m in means]
                    n = len(fm)
                    mu = sum(fm) / n
                    var = sum((m - mu) ** 2 for m in fm) / (n - 1)
                    mpmath.mp.dps = 40
                    half = t975(n - 1) * mpmath.sqrt(mpmath.mpf(var.numerator) / var.denominator) \
                        / mpmath.sqrt(n)
                    for col, v in (("band_low", mpmath.mpf(mean) - half),
                                   ("band_high", mpmath.mpf(mean) + half)):
                        f = float(v) if abs(v) < mpmath.mpf(sys.float_info.max) * (1 + mpmath.mpf(2) ** -54) else math.inf
                        row[col] = f if math.isfinite(f) else None
                        if row[col] is None:
                            row["reasons"][col] = OVERFLOW
                out.append(row)
    return out


def run(name, algo, segments):
    return {"meta": {"run_id": name, "algorithm_id": algo}, "segments": segments}


def seq(n, f):
    return [f(i) for i in range(n)]


def cases():
    """Small deterministic cases; rewards are short decimals so the file stays small."""
    c = []

    def add(name, runs, flags=None):
        c.append({"name": name, "runs": runs, "flags": flags or []})

    add("one_step_one_run", [run("r1", "solo", [["a", None, [0.5]]])])
    add("two_steps_two_runs", [run("r1", "pair", [["a", None, [1.0, 2.0]]]),
                               run("r2", "pair", [["a", None, [3.0, -1.5]]])])
    # 1999 and 2000 steps: width 1 (2,000 buckets); 2001: width 2, nesting a 1-step run.
    add("steps_1999_2000", [
        run("r1999", "w1", [["a", None, seq(1999, lambda i: float(i % 7))]]),
        run("r2000", "w1", [["a", None, seq(2000, lambda i: float((3 * i) % 11) - 5)]])])
    add("steps_2001_nests_1", [
        run("r2001", "w2", [["a", None, seq(2001, lambda i: (i % 13) / 4)]]),
        run("r0001", "w2", [["a", None, [7.25]]])])
    # 4097 steps: width 4 (1,025 buckets); a 3-step run and a 300-step run folded in.
    add("steps_4097_unequal_lengths", [
        run("long", "w4", [["a", None, seq(2048, lambda i: float(i % 5))],
                           ["b", None, seq(2049, lambda i: -float(i % 3))]]),
        run("short", "w4", [["a", None, [1.0, 2.0, 4.0]]]),
        run("mid", "w4", [["a", None, seq(150, lambda i: float(i % 9) / 2)],
                          ["b", None, seq(150, lambda i: float(i % 4))]])])
    # A shift inside a bucket (width 2 at 2,002 steps: the shift after row 1001,
    # inside bucket [1000, 1002)), an alias of a, a label only one run has.
    add("shift_in_bucket_alias_partial_label", [
        run("r1", "mix", [["a", None, seq(1001, lambda i: 1.0 + (i % 3))],
                          ["b", None, seq(500, lambda i: -2.0)],
                          ["a_again", "a", seq(501, lambda i: 0.5 * (i % 5))]]),
        run("r2", "mix", [["a", None, seq(1001, lambda i: 2.0 - (i % 4))],
                          ["a_again", "a", seq(1001, lambda i: 0.25 * (i % 3))]])])
    # Labels meet in another order inside bucket 1 (b before a) than over the runs (a, b).
    add("label_order_in_bucket", [run("o1", "order", [["a", None, [1.0]], ["b", None, [2.0]]]),
                                  run("o2", "order", [["b", None, [3.0]], ["a", None, [4.0]]])])
    add("huge_and_subnormal", [
        run("h1", "huge", [["a", None, [1e308, 1e308, -1e308, 5e-324]]]),
        run("h2", "huge", [["a", None, [1e308, 1.7976931348623157e308, -1e308, -5e-324]]]),
        run("s1", "tiny", [["a", None, [5e-324, 1e-310, -0.0, 0.0]]]),
        run("s2", "tiny", [["a", None, [1e-320, 2.5e-308, -0.0, -0.0]]])])
    add("constant_reward", [run("c%d" % k, "flat", [["a", None, [0.75] * 5]]) for k in range(3)])
    add("many_runs", [run("m%03d" % k, "many", [["a", None, [((k * 37 + i * 11) % 101) / 8 for i in range(4)]]])
                      for k in range(120)])
    add("min_steps_excludes", [
        run("e1", "kept", [["a", None, [1.0, 2.0, 3.0, 4.0, 5.0]]]),
        run("e2", "kept", [["a", None, [1.0, 2.0, 3.0]]]),
        run("e3", "kept", [["a", None, [9.0, 8.0, 7.0, 6.0, 5.0, 4.0]]]),
        run("e4", "gone", [["a", None, [1.0]]])], ["--min-steps", "5"])
    for k in c:
        ms = int(k["flags"][1]) if k["flags"][:1] == ["--min-steps"] else 0
        k["expected"] = curves(k["runs"], ms)
    return c


COLUMNS = ["family", "label", "step_start", "step_end", "runs", "mean",
           "band_low", "band_high", "min", "max", "reasons"]


def build():
    cs = cases()
    for c in cs:  # a row as a list in COLUMNS' order keeps the file a third smaller
        c["expected"] = [[r[k] for k in COLUMNS] for r in c["expected"]]
    return {"generator": "figures/testdata/curves_reference.py", "columns": COLUMNS, "cases": cs}


def text(data):
    """One case a block, one run and one expected row a line: the file is data, not prose."""
    lines = ['{"generator": %s, "columns": %s, "cases": [' % (json.dumps(data["generator"]), json.dumps(data["columns"]))]
    for i, c in enumerate(data["cases"]):
        lines.append(' {"name": %s, "flags": %s,' % (json.dumps(c["name"]), json.dumps(c["flags"])))
        lines.append('  "runs": [')
        lines.append(",\n".join("   " + json.dumps(r, sort_keys=True, allow_nan=False) for r in c["runs"]))
        lines.append('  ],')
        lines.append('  "expected": [')
        lines.append(",\n".join("   " + json.dumps(r, sort_keys=True, allow_nan=False, separators=(",", ":")) for r in c["expected"]))
        lines.append('  ]}' + ("," if i + 1 < len(data["cases"]) else ""))
    lines.append("]}")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    refcheck.main(OUT, build, text=text,
                  ok=lambda d: "ok: %d curves cases" % len(d["cases"]),
                  wrote=lambda d: "wrote %d curves cases, %d rows" % (
                      len(d["cases"]), sum(len(c["expected"]) for c in d["cases"])))
