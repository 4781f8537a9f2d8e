#!/usr/bin/python3
"""An independent reference of safecrl at its edges, written from PROTOCOLS.md
section 3 (and the safecrl entries of docs/decisions.md) alone.

It builds edge inputs (one episode, one task, windows of 1, a task revisited
with and without cost or success on either side, a normalised forgetting over
a zero, a subnormal and an overflowing range, returns near +-1e308 whose sums
leave float64, subnormal returns, -0, success as booleans and as 0/1) and
computes every column of runs.parquet (run x task) and run_summary.parquet
(run) that PROTOCOLS defines. A value that is not defined, or whose sequential
float64 arithmetic leaves the finite numbers, is None (PROTOCOLS: "absent is
never zero"; an Inf never stands in for a number).

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
BIG = 1e308
TINY = 5e-324  # the smallest subnormal


def fin(x):
    return x if x is not None and math.isfinite(x) else None


def mean(xs):
    """Sequential float64 sum in row order, divided by the count; None when
    empty or when the sum leaves float64."""
    if not xs:
        return None
    s = 0.0
    for x in xs:
        s += x
    return fin(s / len(xs))


def visits(rows):
    """Maximal runs of consecutive rows with one task: [(task, [rows])]."""
    out = []
    for r in rows:
        if out and out[-1][0] == r["task"]:
            out[-1][1].append(r)
        else:
            out.append((r["task"], [r]))
    return out


def succ(r):
    s = r.get("success")
    if s is None:
        return None
    return 1.0 if s in (True, 1) else 0.0


def forgetting_over(vs, field, W):
    """Mean over revisits of mean(last W of visit v) - mean(first W of
    visit v+1), on the rows that carry field; a revisit with nothing on
    either side is skipped."""
    terms = []
    for a, b in zip(vs, vs[1:]):
        xa = [r[field] if field != "success" else succ(r) for r in a if r.get(field) is not None]
        xb = [r[field] if field != "success" else succ(r) for r in b if r.get(field) is not None]
        if not xa or not xb:
            continue
        ma, mb = mean(xa[-W:]), mean(xb[:W])
        if ma is None or mb is None:
            return None  # a term that is not a number: the average is none
        d = fin(ma - mb)
        if d is None:
            return None
        terms.append(d)
    return mean(terms)


def task_metrics(task, task_visits, W):
    eps = [r for v in task_visits for r in v]
    rets = [r["return"] for r in eps]
    m = {"task": task, "n_visits": len(task_visits), "n_episodes": len(eps)}
    m["final_task_reward"] = mean(rets[-W:])
    costs = [r["cost"] for r in eps if r.get("cost") is not None]
    cost_visits = sum(1 for v in task_visits if any(r.get("cost") is not None for r in v))
    if costs:
        s = 0.0
        for c in costs:
            s += c
        m["total_cost"] = fin(s / cost_visits) if math.isfinite(s) else None
        m["mean_episode_cost"] = mean(costs)
    else:
        m["total_cost"] = m["mean_episode_cost"] = None
    if len(task_visits) < 2:
        m["forgetting"] = m["normalized_forgetting"] = m["forgetting_success"] = None
    else:
        f = forgetting_over(task_visits, "return", W)
        m["forgetting"] = f
        initial = mean([r["return"] for r in task_visits[0]][:W])
        nf = None
        if f is not None and initial is not None and m["final_task_reward"] is not None:
            rng = fin(abs(m["final_task_reward"] - initial))
            if rng is not None and rng != 0.0:
                nf = fin(f / rng)
        m["normalized_forgetting"] = nf
        m["forgetting_success"] = forgetting_over(task_visits, "success", W)
    ss = [succ(r) for r in eps if r.get("success") is not None]
    m["success_rate"] = mean(ss[-W:]) if ss else None
    return m


METRICS = ["final_task_reward", "total_cost", "mean_episode_cost", "forgetting",
           "normalized_forgetting", "success_rate", "forgetting_success"]


def score(rows, W):
    runs = []
    by_run = {}
    for r in rows:
        if r["run_id"] not in by_run:
            by_run[r["run_id"]] = []
            runs.append(r["run_id"])
        by_run[r["run_id"]].append(r)
    tasks_out, runs_out = [], []
    for rid in runs:
        vs = visits(by_run[rid])
        order, per = [], {}
        for t, v in vs:
            if t not in per:
                per[t] = []
                order.append(t)
            per[t].append(v)
        tm = [task_metrics(t, per[t], W) for t in order]
        for m in tm:
            row = {"run_id": rid}
            row.update(m)
            tasks_out.append(row)
        run = {"run_id": rid, "n_tasks": len(order), "n_episodes": len(by_run[rid])}
        for k in METRICS:
            run[k] = mean([m[k] for m in tm if m[k] is not None])
        runs_out.append(run)
    return tasks_out, runs_out


def row(rid, task, ret, cost=None, success=None, seed=0, alg="a", ep=None):
    r = {"run_id": rid, "seed": seed, "algorithm_id": alg, "task": task, "return": ret}
    if ep is not None:
        r["episode"] = ep
    if cost is not None:
        r["cost"] = cost
    if success is not None:
        r["success"] = success
    return r


def seq(rid, spec, **kw):
    """spec: [(task, return, cost, success)] in training order."""
    return [row(rid, t, x, c, s, ep=i, **kw) for i, (t, x, c, s) in enumerate(spec)]


def cases():
    cs = []

    def add(name, rows, W=20):
        cs.append((name, rows, W))

    add("one_episode", seq("r", [("A", 3.5, 1.25, True)]))
    add("one_episode_nothing_optional", seq("r", [("A", -2.0, None, None)]))
    add("one_episode_window_1", seq("r", [("A", 7.0, 0.0, 0)]), W=1)
    add("two_visits_window_1", seq("r", [("A", 1.0, 1.0, 1), ("A", 4.0, 2.0, 0),
                                         ("B", 9.0, 3.0, 1), ("A", 2.0, 5.0, 1)]), W=1)
    add("revisit_zero_range", seq("r", [("A", 5.0, None, None), ("B", 1.0, None, None),
                                        ("A", 5.0, None, None)]))
    add("revisit_zero_range_window_1", seq("r", [("A", 2.0, 1.0, 1), ("A", 8.0, 1.0, 0),
                                                 ("B", 0.0, 1.0, 1), ("A", 6.0, 1.0, 1),
                                                 ("A", 2.0, 1.0, 0)]), W=1)
    add("normalized_over_subnormal_range",
        seq("r", [("A", 0.0, None, None), ("A", 1.0, None, None), ("B", 0.0, None, None),
                  ("A", TINY, None, None)]), W=1)
    add("normalized_overflows",
        seq("r", [("A", 0.0, None, None), ("A", 1e300, None, None), ("B", 0.0, None, None),
                  ("A", TINY, None, None)]), W=1)
    add("huge_returns_sum_overflows",
        seq("r", [("A", BIG, BIG, 1), ("A", BIG, BIG, 1), ("B", 1.0, 0.5, 0),
                  ("A", -BIG, -BIG, 0)]))
    add("huge_returns_difference_overflows",
        seq("r", [("A", BIG, 1.0, 1), ("B", 1.0, 1.0, 1), ("A", -BIG, 1.0, 1)]), W=1)
    add("huge_returns_finite_means",
        seq("r", [("A", BIG, BIG, None), ("A", -BIG, -BIG, None), ("B", 1.7e308, 1.0, None),
                  ("A", 1.0, 1.0, None)]))
    add("subnormal_returns",
        seq("r", [("A", TINY, TINY, 1), ("A", TINY, TINY, 1), ("B", -TINY, 0.0, 0),
                  ("A", 2 * TINY, TINY, 1)]))
    add("negative_zero",
        seq("r", [("A", -0.0, -0.0, False), ("B", -0.0, -0.0, True), ("A", -0.0, -0.0, False)]))
    add("cost_only_on_some_visits",
        seq("r", [("A", 1.0, 2.0, None), ("A", 2.0, None, None), ("B", 3.0, None, None),
                  ("A", 4.0, None, None), ("B", 5.0, 1.0, None), ("A", 6.0, 4.0, None)]))
    add("success_on_one_side_only",
        seq("r", [("A", 1.0, None, 1), ("B", 2.0, None, None), ("A", 3.0, None, None),
                  ("B", 4.0, None, 0), ("A", 5.0, None, 0)]))
    add("success_never_both_sides",
        seq("r", [("A", 1.0, None, 1), ("B", 2.0, None, None), ("A", 3.0, None, None)]))
    add("window_larger_than_visits",
        seq("r", [("A", float(i), 0.1 * i, i % 2) for i in range(5)] +
            [("B", 10.0, 1.0, 1)] + [("A", 20.0 + i, 0.2, 1) for i in range(3)]), W=50)
    add("window_3_long_visits",
        seq("r", [("A", float(i * i % 7), 0.3, i % 3 == 0) for i in range(11)] +
            [("B", float(i), None, None) for i in range(4)] +
            [("A", float(10 - i), 0.7, i % 2 == 0) for i in range(8)] +
            [("B", -float(i), 1.0, True) for i in range(2)]), W=3)
    add("many_short_visits_window_2",
        seq("r", [("A" if i % 2 == 0 else "B", math.sin(i) * 10, abs(math.cos(i)), i % 3 == 0)
                  for i in range(21)]), W=2)
    add("two_runs_tasks_out_of_order",
        seq("r1", [("C", 1.0, 1.0, 1), ("A", 2.0, 1.0, 0), ("C", 0.5, 1.0, 0)], seed=0) +
        seq("r2", [("A", 3.0, 2.0, 1), ("A", 1.0, 2.0, 1), ("B", 4.0, 0.0, 0),
                   ("A", 2.5, 1.0, 0)], seed=1), W=1)
    add("all_tasks_null_forgetting",
        seq("r", [("A", 1.0, None, None), ("B", 2.0, None, None), ("C", 3.0, None, None)]))
    return cs


def build():
    out = []
    for name, rows, W in cases():
        tasks, runs = score(rows, W)
        out.append({"name": name, "window": W, "rows": rows,
                    "expected": {"tasks": tasks, "runs": runs}})
    return {"cases": out}


def main():
    refcheck.main(OUT, build, lambda d: "ok: %d safecrl edge cases" % len(d["cases"]),
                  wrote=lambda d: "wrote %d cases to %s" % (len(d["cases"]), OUT))


if __name__ == "__main__":
    main()
