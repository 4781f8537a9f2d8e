#!/usr/bin/python3
"""An independent reference of contilab's accuracy-matrix metrics at their
edges, written from PROTOCOLS.md section 4 (and the formulas it adopts from
the seed's accuracy-matrix table) alone: acc, aia, bwt, fwt, forgetting,
relative_forgetting, learning_acc, intransigence.

Edges: one task (T = 1), two tasks, accuracies of 0 (a relative-forgetting
term whose max is 0 is dropped), Class-IL (fwt undefined), no joint or
initial rows, a missing cell (blanks only the metrics that read it),
subnormal accuracies and accuracies near 1e308 whose sums leave float64.
Sums are float64 in index order; a value not defined, or leaving float64, is
None. The stream metrics are not covered here (no stream rows: their values
must be null with a reason).

    edge_reference.py           writes edge_cases.json beside this file
    edge_reference.py --check   recomputes and compares with edge_cases.json
                                (`make check-references` runs it)

cmd/crlbatch/recordedges_test.go scores each case end to end and compares.
"""
import math
import os
import sys
sys.dont_write_bytecode = True  # no __pycache__ beside the shared module
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "testdata"))
import refcheck  # noqa: E402  (protocol/testdata/refcheck.py: write, or --check)

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "edge_cases.json")
TINY = 5e-324
STREAM = ["min_acc", "wc_acc", "stability_gap", "windowed_forgetting", "aaa", "lca"]


def fin(x):
    return x if x is not None and math.isfinite(x) else None


def mean(xs):
    if not xs or any(x is None for x in xs):
        return None
    s = 0.0
    for x in xs:
        s += x
    return fin(s / len(xs))


def metrics(rows, scenario):
    R, b, a = {}, {}, {}
    for r in rows:
        if r["kind"] == "matrix":
            R[(r["after_task"], r["eval_task"])] = r["acc"]
        elif r["kind"] == "initial":
            b[r["eval_task"]] = r["acc"]
        elif r["kind"] == "joint":
            a[r["eval_task"]] = r["acc"]
    T = 1 + max(max(i, j) for i, j in R)
    g = lambda i, j: R.get((i, j))

    def diff(x, y):
        return None if x is None or y is None else fin(x - y)

    m = {"n_tasks": T}
    m["acc"] = mean([g(T - 1, j) for j in range(T)])
    m["aia"] = mean([mean([g(i, j) for j in range(i + 1)]) for i in range(T)])
    m["learning_acc"] = mean([g(j, j) for j in range(T)])
    m["intransigence"] = mean([diff(a.get(j), g(j, j)) for j in range(T)]) if a else None
    if T < 2:
        for k in ("bwt", "fwt", "forgetting", "relative_forgetting"):
            m[k] = None
        return m
    m["bwt"] = mean([diff(g(T - 1, j), g(j, j)) for j in range(T - 1)])
    if scenario == "class-il" or not b:
        m["fwt"] = None
    else:
        m["fwt"] = mean([diff(g(j - 1, j), b.get(j)) for j in range(1, T)])
    fs, rel = [], []
    for j in range(T - 1):
        col = [g(l, j) for l in range(j, T - 1)]
        if any(x is None for x in col) or g(T - 1, j) is None:
            fs.append(None)
            rel.append(None)
            continue
        mx = max(col)
        f = diff(mx, g(T - 1, j))
        fs.append(f)
        if mx != 0:
            rel.append(None if f is None else fin(f / mx))
    m["forgetting"] = mean(fs)
    m["relative_forgetting"] = mean(rel) if rel else None
    return m


def matrix(rid, M, initial=None, joint=None, seed=0, scenario=None, skip=()):
    out = []
    base = {"run_id": rid, "seed": seed, "algorithm_id": "a"}
    if scenario:
        base["scenario"] = scenario
    for i, row in enumerate(M):
        for j, x in enumerate(row):
            if (i, j) in skip or x is None:
                continue
            out.append(dict(base, kind="matrix", after_task=i, eval_task=j, acc=x))
    for j, x in enumerate(initial or []):
        out.append(dict(base, kind="initial", eval_task=j, acc=x))
    for j, x in enumerate(joint or []):
        out.append(dict(base, kind="joint", eval_task=j, acc=x))
    return out


def cases():
    M3 = [[0.9, 0.1, 0.2], [0.7, 0.8, 0.15], [0.6, 0.75, 0.85]]
    return [
        ("one_task", matrix("r", [[0.5]], [0.1], [0.7])),
        ("one_task_no_joint", matrix("r", [[0.5]])),
        ("two_tasks", matrix("r", [[0.9, 0.2], [0.4, 0.8]], [0.1, 0.05], [0.95, 0.9])),
        ("three_tasks", matrix("r", M3, [0.1, 0.1, 0.1], [1.0, 1.0, 1.0])),
        ("class_il", matrix("r", M3, [0.1, 0.1, 0.1], None, scenario="class-il")),
        ("zero_accuracies", matrix("r", [[0.0, 0.0, 0.0], [0.0, 0.5, 0.0], [0.0, 0.25, 0.0]], [0.0, 0.0, 0.0])),
        ("all_zero", matrix("r", [[0.0, 0.0], [0.0, 0.0]], [0.0, 0.0], [0.0, 0.0])),
        ("missing_upper_cell", matrix("r", M3, [0.1, 0.1, 0.1], None, skip={(0, 2)})),
        ("missing_final_row_cell", matrix("r", M3, [0.1, 0.1, 0.1], None, skip={(2, 0)})),
        ("subnormal", matrix("r", [[TINY, 0.0], [0.0, TINY]], [0.0, 0.0], [TINY, TINY])),
        ("huge", matrix("r", [[1e308, 1e308], [1e308, 1.7e308]], [0.0, 0.0], [1e308, 1e308])),
        ("huge_difference_finite", matrix("r", [[1.7e308, 1.0], [1.0, 1.7e308]], [0.0, 0.0])),
        ("perfect_no_forgetting", matrix("r", [[1.0, 0.0, 0.0], [1.0, 1.0, 0.0], [1.0, 1.0, 1.0]], [0.0, 0.0, 0.0])),
    ]


def build():
    out = []
    for name, rows in cases():
        scen = next((r["scenario"] for r in rows if "scenario" in r), None)
        m = metrics(rows, scen)
        m["run_id"] = "r"
        for k in STREAM:
            m[k] = None
        out.append({"name": name, "rows": rows, "expected": m})
    return {"cases": out}


def main():
    refcheck.main(OUT, build, lambda d: "ok: %d contilab edge cases" % len(d["cases"]),
                  wrote=lambda d: "wrote %d cases to %s" % (len(d["cases"]), OUT))


if __name__ == "__main__":
    main()
