#!/usr/bin/python3
"""Ceilings of hostile but valid bounds, computed exactly (rationals) from
PROTOCOLS 2.2 and rounded once to float64:

    for_interval(L, contains_final) = ((L-1)*per_step + final_step)/L
    bounds_by_configuration          = ((L_k - m_k)*per_step + m_k*final_step)/L_k

Both are weighted means of per_step and final_step, so they are finite
whenever the two are, even where the formula's float64 products leave float64
(a per step or final step at the largest float64). Cases: the largest float64
on either side and both, the most negative, subnormal steps, zero, -0,
intervals of one step, all or no rows final.

    ceiling_reference.py           writes ceiling_cases.json beside this file
    ceiling_reference.py --check   recomputes and compares (make check-references)

upperbound/ceilingedges_test.go compares ForInterval and Finish with it.
"""
import os
import sys
from fractions import Fraction
sys.dont_write_bytecode = True  # no __pycache__ beside the shared module
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "protocol", "testdata"))
import refcheck  # noqa: E402  (protocol/testdata/refcheck.py: write, or --check)

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "ceiling_cases.json")
MAX = 1.7976931348623157e308
TINY = 5e-324


def exact(per, fin, L, m):
    return float((Fraction(L - m) * Fraction(per) + Fraction(m) * Fraction(fin)) / L)


def cases():
    bounds = [
        ("max_per_step", MAX, MAX),
        ("max_final_step", 1.0, MAX),
        ("max_per_step_small_final", MAX, 0.0),
        ("most_negative_per_step", -MAX, 0.0),
        ("opposite_extremes", -MAX, MAX),
        ("subnormal", TINY, 2 * TINY),
        ("zero", 0.0, 0.0),
        ("negative_zero", -0.0, -0.0),
        ("experiment", 0.3333333333333333, 1.0),
        ("paper", 0.0, 0.5),
    ]
    counts = [(1, 0), (1, 1), (2, 1), (3, 1), (60, 1), (7, 7), (1000003, 999)]
    out = []
    for name, per, fin in bounds:
        for L, m in counts:
            out.append({"name": "%s_L%d_m%d" % (name, L, m), "per_step": per, "final_step": fin,
                        "rows": L, "final_rows": m, "ceiling": exact(per, fin, L, m)})
    return out


def main():
    refcheck.main(OUT, lambda: {"cases": cases()}, lambda d: "ok: %d ceiling cases" % len(d["cases"]),
                  wrote=lambda d: "wrote %d cases to %s" % (len(d["cases"]), OUT))


if __name__ == "__main__":
    main()
