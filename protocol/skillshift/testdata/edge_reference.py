#!/usr/bin/python3
"""An independent reference of skillshift at its edges, written from
PROTOCOLS.md section 5 alone.

It builds edge inputs (one task in one cell, a grid of one cell, a grid with
missing cells, a cell without skill calls, a method without any, zero calls in
one cell, failures equal to calls, invocations at the 30 boundary, steps near
1e308 whose sums leave float64, subnormal and -0 steps, success as booleans and
as 0/1) and computes every cell of cells.parquet and every marginal of
table.parquet. A value that is not defined, or whose sequential float64
arithmetic leaves the finite numbers, is None (PROTOCOLS: "absent is never
zero").

    edge_reference.py           writes edge_cases.json beside this file
    edge_reference.py --check   recomputes and compares with edge_cases.json
                                (`make check-references` runs it)

cmd/crlbatch/recordedges_test.go scores each case end to end and compares.
"""
import decimal
import math
import os
import sys
sys.dont_write_bytecode = True  # no __pycache__ beside the shared module
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "testdata"))
import refcheck  # noqa: E402  (protocol/testdata/refcheck.py: write, or --check)

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "edge_cases.json")
BIG = 1e308
TINY = 5e-324


def fin(x):
    return x if x is not None and math.isfinite(x) else None


def total(xs):
    s = 0.0
    for x in xs:
        s += x
    return s


def mean(xs):
    if not xs:
        return None
    return fin(total(xs) / len(xs))


def ok(r):
    return 1 if r["success"] in (True, 1) else 0


def score(rows):
    methods, by = [], {}
    for r in rows:
        if r["method"] not in by:
            by[r["method"]] = []
            methods.append(r["method"])
        by[r["method"]].append(r)
    cells_out, table_out = [], []
    for m in methods:
        rs = by[m]
        any_calls = any(r.get("skill_calls") is not None for r in rs)
        order, cells = [], {}
        sites, conds = [], []
        for r in rs:
            k = (r["site"], r["condition"])
            if k not in cells:
                cells[k] = []
                order.append(k)
            cells[k].append(r)
            if r["site"] not in sites:
                sites.append(r["site"])
            if r["condition"] not in conds:
                conds.append(r["condition"])
        vals = {}
        for k in order:
            c = cells[k]
            succ = sum(ok(r) for r in c)
            calls_rows = [r for r in c if r.get("skill_calls") is not None]
            calls = total([r["skill_calls"] for r in calls_rows])
            fails = total([r.get("skill_failures") or 0.0 for r in calls_rows])
            v = {
                "SR": fin(100.0 * succ / len(c)),
                "AS": mean([r["steps"] for r in c]),
                "ASC": mean([r["skill_calls"] for r in calls_rows]) if any_calls else None,
                "SFR": fin(100.0 * fails / calls) if calls != 0 and math.isfinite(calls) else None,
            }
            vals[k] = (v, calls)
            cell = {"method": m, "site": k[0], "condition": k[1], "tasks": len(c), "successes": succ,
                    "sr": v["SR"], "as": v["AS"], "asc": v["ASC"], "sfr": v["SFR"]}
            if v["SFR"] is not None:
                cell["skill_calls"] = calls
                cell["sfr_unstable"] = calls < 30
            cells_out.append(cell)

        def marg(metric, scope, key, ks):
            xs = [vals[k][0][metric] for k in ks if vals[k][0][metric] is not None]
            row = {"method": m, "metric": metric, "scope": scope, "key": key, "value": mean(xs)}
            if metric == "SFR" and row["value"] is not None:
                inv = total([vals[k][1] for k in ks])
                if math.isfinite(inv):  # a count that leaves float64 is not asserted
                    row["invocations"] = inv
                    row["unstable"] = inv < 30
            table_out.append(row)

        for metric in ("SR", "AS", "ASC", "SFR"):
            for s in sites:
                marg(metric, "website", s, [k for k in order if k[0] == s])
            for c in conds:
                marg(metric, "condition", c, [k for k in order if k[1] == c])
            marg(metric, "overall", "overall", order)
    return cells_out, table_out


SITES = ["gitlab", "magento", "wordpress"]
CONDS = ["src", "src-perc", "src-exec", "tgt", "tgt-perc", "tgt-exec"]


def r(m, site, cond, success, steps, calls=None, fails=None, uid=None):
    x = {"method": m, "site": site, "condition": cond, "success": success, "steps": steps}
    if uid is not None:
        x["uid"] = uid
    if calls is not None:
        x["skill_calls"] = calls
        x["skill_failures"] = fails if fails is not None else 0
    return x


def full_grid(m, f):
    out = []
    i = 0
    for s in SITES:
        for c in CONDS:
            out.extend(f(m, s, c, i))
            i += 1
    return out


def cases():
    cs = []
    cs.append(("one_task_one_cell", [r("M", "gitlab", "src", True, 3, 2, 1)]))
    cs.append(("one_task_no_calls", [r("M", "gitlab", "src", 0, 0)]))
    cs.append(("zero_calls_everywhere", [r("M", "gitlab", "src", 1, 4, 0, 0),
                                         r("M", "magento", "tgt", 0, 2, 0, 0)]))
    cs.append(("calls_in_one_cell_only", [r("M", "gitlab", "src", 1, 4, 3, 3),
                                          r("M", "gitlab", "tgt", 0, 2),
                                          r("M", "magento", "src", 1, 6, 0, 0),
                                          r("M", "magento", "tgt", False, 1)]))
    cs.append(("invocations_at_30", [r("M", "gitlab", "src", 1, 4, 15, 1),
                                     r("M", "gitlab", "src", 1, 4, 14, 2),
                                     r("M", "gitlab", "tgt", 0, 2, 1, 1),
                                     r("M", "magento", "src", 1, 6, 30, 0)]))
    cs.append(("missing_cells", [r("M", s, c, (i % 3) == 0, 1 + i, i % 4, i % 2)
                                 for i, (s, c) in enumerate([("gitlab", "src"), ("gitlab", "tgt-exec"),
                                                             ("magento", "src"), ("wordpress", "tgt"),
                                                             ("wordpress", "tgt"), ("gitlab", "src")])]))
    cs.append(("full_grid_uneven", full_grid("M", lambda m, s, c, i: [
        r(m, s, c, (i * j) % 3 == 0, (i + 1) * (j + 2) / 3, (i + j) % 5, ((i + j) % 5) // 2)
        for j in range(1 + i % 4)])))
    cs.append(("huge_steps", [r("M", "gitlab", "src", 1, BIG, 1, 0), r("M", "gitlab", "src", 1, BIG, 1, 0),
                              r("M", "gitlab", "tgt", 0, BIG, 1, 1), r("M", "magento", "src", 1, 1.0, 1, 0),
                              r("M", "magento", "tgt", 1, 1.7e308, 1, 0)]))
    cs.append(("huge_calls", [r("M", "gitlab", "src", 1, 1, BIG, BIG), r("M", "gitlab", "src", 1, 1, BIG, 0),
                              r("M", "gitlab", "tgt", 0, 1, 1.7e308, 1e308), r("M", "magento", "src", 1, 1, 2, 1)]))
    cs.append(("subnormal_and_negative_zero_steps", [r("M", "gitlab", "src", 1, TINY, TINY, 0),
                                                     r("M", "gitlab", "src", 0, -0.0, 0, 0),
                                                     r("M", "magento", "src", 1, -0.0, -0.0, 0)]))
    cs.append(("two_methods", [r("A", "gitlab", "src", 1, 3, 40, 4), r("B", "gitlab", "src", 0, 5),
                               r("A", "magento", "src", 0, 7, 1, 1), r("B", "magento", "tgt", 1, 2, 2, 0)]))
    cs.append(("all_failures", [r("M", "gitlab", "src", False, 9, 7, 7), r("M", "gitlab", "src", 0, 9, 3, 3)]))
    return cs


def hundredths(x):
    """Half-up (ties away from zero) to two decimals in decimal arithmetic on
    the shortest representation of the float, as an integer of hundredths."""
    with decimal.localcontext() as ctx:
        ctx.prec = 1000
        return int(decimal.Decimal(repr(x)).quantize(decimal.Decimal("0.01"),
                                                     rounding=decimal.ROUND_HALF_UP) * 100)


def fmt_hundredths(h):
    sign = "-" if h < 0 else ""
    d = str(abs(h)).rjust(3, "0")
    return sign + d[:-2] + "." + d[-2:]


def identity(entry):
    """PROTOCOLS 5: the three means (a sequential float64 sum over the three
    websites, over the six conditions; the O/A as given), each formed only
    when all its numbers are present and its sum stays in float64; fewer than
    two means is a skip; two rounded means differing by more than one
    hundredth fail."""
    ws = [entry["websites"][k] for k in SITES]
    cs = [entry["conditions"][k] for k in CONDS]
    means = []
    for xs in (ws, cs):
        means.append(None if any(x is None for x in xs) else mean(xs))
    means.append(entry["overall"])
    hs = [hundredths(m) if m is not None else None for m in means]
    present = [h for h in hs if h is not None]
    if len(present) < 2:
        status = "skipped"
    elif any(abs(a - b) > 1 for i, a in enumerate(present) for b in present[i + 1:]):
        status = "fail"
    else:
        status = "pass"
    return {"status": status, "rounded": [fmt_hundredths(h) if h is not None else "" for h in hs]}


def ent(ws, cs, o):
    return {"websites": dict(zip(SITES, ws)), "conditions": dict(zip(CONDS, cs)), "overall": o}


def entries():
    """Transcribed entries at the boundary of the tolerance and of float64,
    one metric each (AS: a count, with no upper bound)."""
    return [
        ("one_hundredth_apart", ent([1, 1, 1.01], [1.01] * 6, 1.0)),
        ("two_hundredths_apart", ent([1, 1, 1.0], [1.02] * 6, 1.0)),
        ("mean_just_below_a_tie", ent([2.675] * 3, [2.67] * 6, 2.66)),
        ("tie_rounds_up", ent([0.125] * 3, [0.12] * 6, 0.14)),
        ("tie_rounds_up_passes", ent([0.125] * 3, [0.13] * 6, 0.14)),
        ("conditions_tie", ent([0.0] * 3, [0.005] * 6, 0.0)),
        ("negative_zero", ent([-0.0] * 3, [0.0] * 6, -0.0)),
        ("subnormal", ent([TINY] * 3, [TINY] * 6, 0.0)),
        ("largest_finite_overall", ent([1.0] * 3, [1.0] * 6, 1.7976931348623157e308)),
        ("sums_leave_float64", ent([1e308] * 3, [1e308] * 6, 1e308)),
        ("website_sum_leaves_float64", ent([1e308] * 3, [1e307] * 6, 1e307)),
        ("overall_null", ent([1, 2, 3], [2] * 6, None)),
    ]


def build():
    out = []
    for name, rows in cases():
        cells, table = score(rows)
        out.append({"name": name, "rows": rows, "expected": {"cells": cells, "table": table}})
    ents = []
    for name, e in entries():
        reasons = {"AS.overall": "not published"} if e["overall"] is None else {}
        ents.append({"name": name, "entry": {"AS": e, "reasons": reasons}, "expected": identity(e)})
    return {"cases": out, "entries": ents}


def main():
    refcheck.main(OUT, build, lambda d: "ok: %d skillshift edge cases, %d entries" % (len(d["cases"]), len(d["entries"])),
                  wrote=lambda d: "wrote %d cases to %s" % (len(d["cases"]), OUT))


if __name__ == "__main__":
    main()
