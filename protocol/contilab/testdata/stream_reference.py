#!/usr/bin/python3
"""An independent reference of contilab's continual-evaluation metrics, its
recorded diagnostics, its family statistics and its statistics across
benchmarks at their edges, written from PROTOCOLS.md sections 1.6 and 4 (and
the seed's Continual evaluation table it adopts) alone.

Per run: min_acc, wc_acc, stability_gap, windowed_forgetting (rho, the
window Delta_k = 0.1 * length_k, the pairs m < n <= m + Delta_k, null when
the window is shorter than rho), aaa, lca, and each recorded diagnostic
averaged over its tasks (diag_<name>). The accuracy-matrix metrics come from
edge_reference.py beside this file (itself independent of the Go code).
Per family: 1.6's columns, from protocol/family/testdata/reference.py used
as a library. Across benchmarks: each family's mean of the rank metric per
benchmark, average ranks (1 = best, ties averaged), the Friedman statistic
and p (scipy.stats.friedmanchisquare, Debian's SciPy 1.10.1) and the
Nemenyi critical difference (Demsar 2006, Table 5(a), alpha = 0.05).

Edges: one stream step, equal steps, irregular step gaps, a window exactly
rho, steps above 2^52 (the window test n - m <= Delta_k, exact there), a task with one step, one task, all families tied, two families, two
benchmarks, a family missing on one benchmark, accuracies near 1e308, -0.

Where PROTOCOLS is silent this follows docs/decisions.md (contilab): a
family with no score anywhere leaves the ranking, then every benchmark some
ranked family lacks; Friedman needs three families, the critical difference
2 to 10. A per-task stream term that is undefined is not silently dropped:
the metric is null (the cases keep every task's term defined except where
the whole metric is undefined, so either reading of "averaged over k" gives
the same number).

    stream_reference.py           writes stream_cases.json beside this file
    stream_reference.py --check   recomputes and compares (make check-references)

cmd/crlbatch/recordfamilies_test.go scores each case end to end and compares
runs.parquet, families.parquet and benchmarks.parquet to 1e-9.
"""
import json
import math
import os
import sys
import warnings
sys.dont_write_bytecode = True  # no __pycache__ beside the shared module
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "testdata"))
import refcheck  # noqa: E402  (protocol/testdata/refcheck.py: write, or --check)
# The accuracy-matrix metrics (this folder) and the family statistics
# (protocol/family/testdata), each loaded by its file.
matrixref = refcheck.load("contilab_edge_reference", os.path.join(HERE, "edge_reference.py"))
famref = refcheck.load("family_reference", os.path.join(HERE, "..", "..", "family", "testdata", "reference.py"))

import numpy as np  # noqa: E402
import scipy.stats  # noqa: E402

OUT = os.path.join(HERE, "stream_cases.json")
MATRIX = ["acc", "aia", "bwt", "fwt", "forgetting", "relative_forgetting", "learning_acc",
          "intransigence"]
STREAM = ["min_acc", "wc_acc", "stability_gap", "windowed_forgetting", "aaa", "lca"]
# Demsar (2006), Table 5(a): q_0.05 of the Nemenyi test for k = 2..10 classifiers.
Q05 = {2: 1.960, 3: 2.343, 4: 2.569, 5: 2.728, 6: 2.850, 7: 2.949, 8: 3.031, 9: 3.102,
       10: 3.164}


def fin(x):
    return x if x is not None and math.isfinite(x) else None


def mean(xs):
    """Float64, summed in order; None when empty, when a term is None, or when
    the sum leaves float64."""
    xs = list(xs)
    if not xs or any(x is None for x in xs):
        return None
    s = 0.0
    for x in xs:
        s += x
    return fin(s / len(xs))


def stream_metrics(rows, T):
    pts = [(r["step"], r["train_task"], r["eval_task"], r["acc"]) for r in rows
           if r["kind"] == "stream"]
    curves = [(r["task"], r["batch"], r["acc"]) for r in rows if r["kind"] == "curve"]
    m = {}
    if T >= 2 and pts:
        # A(k, n) after task k was learned: train_task > k.
        mins = []
        for k in range(T - 1):
            after = [a for n, t, e, a in pts if e == k and t > k]
            mins.append(min(after) if after else None)
        m["min_acc"] = mean(mins)
        last = max((n, a) for n, t, e, a in pts if e == T - 1)[1] \
            if any(e == T - 1 for n, t, e, a in pts) else None
        if m["min_acc"] is None or last is None:
            m["wc_acc"] = None
        else:
            m["wc_acc"] = fin((1.0 / T) * last + (1.0 - 1.0 / T) * m["min_acc"])
        gaps = []
        for k in range(T - 1):
            own = [(n, a) for n, t, e, a in pts if e == k and t == k]
            nxt = [a for n, t, e, a in pts if e == k and t == k + 1]
            gaps.append(fin(max(own)[1] - min(nxt)) if own and nxt else None)
        m["stability_gap"] = mean(gaps)
        steps = sorted(set(n for n, t, e, a in pts))
        rho = min(b - a for a, b in zip(steps, steps[1:])) if len(steps) > 1 else None
        wfs = []
        for k in range(T - 1):
            if rho is None:
                wfs.append(None)
                continue
            length = len(set(n for n, t, e, a in pts if t == k)) * rho
            delta = 0.1 * length
            seq = sorted((n, a) for n, t, e, a in pts if e == k and t > k)
            best = None
            for i, (mm, am) in enumerate(seq):
                for nn, an in seq[i + 1:]:
                    # m < n <= m + Delta_k, as n - m <= Delta_k: steps are whole numbers
                    # up to 2^53, so n - m is exact, where m + Delta_k in float64 rounds
                    # to a whole number above 2^52 (a pair 2 apart inside a window of 1.5).
                    if 0 < nn - mm <= delta:
                        d = am - an
                        best = d if best is None else max(best, d)
            wfs.append(None if best is None else fin(max(0.0, best)))
        m["windowed_forgetting"] = mean(wfs)
    else:
        for k in ("min_acc", "wc_acc", "stability_gap", "windowed_forgetting"):
            m[k] = None
    per_step = []
    for n in sorted(set(p[0] for p in pts)):
        seen = [a for nn, t, e, a in pts if nn == n and e <= t]
        if seen:
            per_step.append(mean(seen))
    m["aaa"] = mean(per_step)
    if curves:
        # Z_b = (1/T) sum over the T tasks of a_{k,b} (Chaudhry et al. 2019): a task
        # without batch b leaves Z_b, and so lca, undefined.
        beta = max(b for _, b, _ in curves)
        grid = {(k, b): a for k, b, a in curves}
        zs = [mean([grid.get((k, b)) for k in range(T)]) for b in range(beta + 1)]
        m["lca"] = mean(zs)
    else:
        m["lca"] = None
    names = []
    for r in rows:
        if r["kind"] == "diag" and r["name"] not in names:
            names.append(r["name"])
    for name in names:
        m["diag_" + name] = mean([r["value"] for r in rows if r["kind"] == "diag" and r["name"] == name])
    return m


def run_metrics(rows):
    scen = next((r["scenario"] for r in rows if "scenario" in r), None)
    if any(r["kind"] == "matrix" for r in rows):
        m = matrixref.metrics(rows, scen)
        T = m["n_tasks"]
    else:
        T = 1 + max(max(r["train_task"], r["eval_task"]) for r in rows if r["kind"] == "stream")
        m = {"n_tasks": T}
        for k in MATRIX:
            m[k] = None
    m.update(stream_metrics(rows, T))
    return m


# Which way is better (PROTOCOLS 1.6: forgetting is lower-is-better; the accuracies,
# transfers and learning measures higher; so is effective rank).
LOWER_BETTER = {"forgetting", "relative_forgetting", "intransigence", "stability_gap",
                "windowed_forgetting"}


def ranks_of(values, metric):
    """1 = the best value, ties averaged."""
    sign = 1.0 if metric in LOWER_BETTER else -1.0
    return list(scipy.stats.rankdata([sign * v for v in values], method="average"))


def benchmarks(runs, metric):
    fams, benches, score = [], [], {}
    for r in runs:
        if r["family"] not in fams:
            fams.append(r["family"])
        if r["benchmark"] not in benches:
            benches.append(r["benchmark"])
    for f in fams:
        for b in benches:
            score[(f, b)] = mean([r["m"][metric] for r in runs if r["family"] == f
                                  and r["benchmark"] == b and r["m"][metric] is not None])
    ranked = [f for f in fams if any(score[(f, b)] is not None for b in benches)]
    used = [b for b in benches if all(score[(f, b)] is not None for f in ranked)]
    k, N = len(ranked), len(used)
    ranks = {f: [] for f in ranked}
    for b in used:
        for f, rk in zip(ranked, ranks_of([score[(f, b)] for f in ranked], metric)):
            ranks[f].append(float(rk))
    stat = p = None
    # scipy.stats.friedmanchisquare needs three groups; one block (one benchmark
    # ranked) is a statistic it computes, and so is this.
    if k >= 3 and N >= 1:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = scipy.stats.friedmanchisquare(*[np.array([score[(f, b)] for b in used])
                                                 for f in ranked])
        stat, p = fin(float(res.statistic)), fin(float(res.pvalue))
        if stat is None:
            p = None
    cd = Q05[k] * math.sqrt(k * (k + 1) / (6.0 * N)) if 2 <= k <= 10 and N >= 1 else None
    out = []
    for f in fams:
        out.append({"family": f,
                    "average_rank": mean(ranks[f]) if f in ranks and ranks[f] else None,
                    "n_benchmarks": len(ranks.get(f, [])),
                    "friedman_statistic": stat, "friedman_p_value": p,
                    "critical_difference": cd})
    return {"scores": [[f, b, score[(f, b)]] for f in fams for b in benches], "table": out}


# ------------------------------------------------------------------ inputs

def run_rows(rid, seed, algo, M=None, stream=(), curve=None, diag=None, benchmark=None,
             scenario=None):
    base = {"run_id": rid, "seed": seed, "algorithm_id": algo}
    if benchmark is not None:
        base["benchmark"] = benchmark
    if scenario is not None:
        base["scenario"] = scenario
    rows = []
    for i, row in enumerate(M or []):
        for j, x in enumerate(row):
            rows.append(dict(base, kind="matrix", after_task=i, eval_task=j, acc=x))
    for step, train, accs in stream:
        for k, a in enumerate(accs):
            if a is not None:
                rows.append(dict(base, kind="stream", step=step, train_task=train, eval_task=k, acc=a))
    for t, zs in enumerate(curve or []):
        for b, z in enumerate(zs):
            rows.append(dict(base, kind="curve", task=t, batch=b, acc=z))
    for name, vals in (diag or {}).items():
        for t, v in enumerate(vals):
            rows.append(dict(base, kind="diag", name=name, task=t, value=v))
    return rows


def stream_of(train_steps, accs):
    """train_steps: per task, its steps; accs(step, k) the accuracy of task k."""
    out = []
    T = len(train_steps)
    for t, steps in enumerate(train_steps):
        for n in steps:
            out.append((n, t, [accs(n, k) for k in range(T)]))
    return out


M2 = [[0.9, 0.2], [0.6, 0.8]]
M3 = [[0.9, 0.1, 0.2], [0.7, 0.8, 0.15], [0.6, 0.75, 0.85]]


def wave(n, k):
    # A deterministic, irregular accuracy in [0, 1] from the step and the task.
    return round(0.5 + 0.4 * math.sin(0.7 * n + 1.3 * k) * math.cos(0.11 * n * (k + 1)), 6)


def cases():
    cs = []

    def add(name, runs, flags=(), metric="acc"):
        cs.append({"name": name, "runs": runs, "flags": list(flags), "_metric": metric})

    # One stream step: rho undefined (no gap between distinct steps) -> null; a learning
    # curve for task 0 only (lca needs every task's).
    add("one_stream_step", [run_rows("r", 0, "a", M2, [(0, 1, [0.5, 0.6])], curve=[[0.1, 0.3]])])
    # Equal steps of 1, ten per task: Delta = 0.1 * 10 = 1.0 = rho, the window holds
    # adjacent points only (inclusive: not shorter than rho).
    eq = stream_of([range(0, 10), range(10, 20), range(20, 30)], wave)
    add("equal_steps_window_rho", [run_rows("r", 0, "a", M3, eq, curve=[[0.2, 0.4, 0.5]] * 3)])
    # Equal steps of 5, nine per task: Delta = 0.1 * 45 = 4.5 < rho = 5 -> null.
    short = stream_of([range(0, 45, 5), range(45, 90, 5), range(90, 135, 5)], wave)
    add("window_shorter_than_rho", [run_rows("r", 0, "a", M3, short)])
    # Irregular gaps: rho = 1 (the smallest), tasks of 30, 35 and 30 distinct steps:
    # Delta_0 = 0.1 * 30 = 3.0000000000000004 holds the later gaps of 2 and 3, Delta_1 =
    # 3.5 the gaps of 3, the last gap of 14 no window.
    irr = stream_of([[0, 1, 3, 7, 8, 13, 21, 22, 24, 30, 33, 40] + list(range(41, 59)),
                     [60 + 2 * i for i in range(35)],
                     [130 + 3 * i for i in range(29)] + [230]], wave)
    add("irregular_gaps", [run_rows("r", 0, "a", M3, irr,
                                    curve=[[0.1, 0.5, 0.7, 0.9], [0.2, 0.6, 0.65, 0.95], [0.0, 0.3, 0.3, 0.8]],
                                    diag={"effective_rank": [12.5, 10.25, 9.0],
                                          "dormant_ratio": [0.0, 0.125, 0.5]})])
    # A task with one step: length rho, Delta = 0.1 rho < rho -> windowed forgetting
    # null; the other metrics are defined.
    one = stream_of([[0], range(1, 40), range(40, 80)], wave)
    add("task_with_one_step", [run_rows("r", 0, "a", M3, one)])
    # Steps just above 2^52 (float64's spacing is 1 there): tasks of 15 steps, Delta =
    # 1.5000000000000002; accuracies 0.9, 0.5, 0.1, 0.5, ... drop 0.4 a step and 0.8 over
    # two steps, which the window does not hold (m + Delta rounds to m + 2 in float64).
    hi = []
    for t in range(2):
        for i in range(15):
            hi.append((2 ** 52 + 7 + 15 * t + i, t, [[0.9, 0.5, 0.1, 0.5][i % 4], 0.5]))
    add("steps_above_2_pow_52", [run_rows("r", 0, "a", M2, hi)])
    # Task 0 not evaluated while task 1 trains (only while task 2 does): its stability-gap
    # term is undefined, and so is the average (a term is never silently dropped);
    # min_acc and windowed forgetting still see task 0 after it was learned.
    gap = [(n, t, [None if (t == 1 and k == 0) else a for k, a in enumerate(accs)])
           for n, t, accs in stream_of([range(0, 10), range(10, 20), range(20, 30)], wave)]
    add("task_not_evaluated_while_next_trains", [run_rows("r", 0, "a", M3, gap)])
    # One task: the metrics needing two tasks are null; aaa and lca defined.
    add("one_task_stream", [run_rows("r", 0, "a", [[0.7]], stream_of([range(0, 20)], wave),
                                     curve=[[0.3, 0.6]], diag={"effective_rank": [7.0]})])
    # Stream only (no matrix): T from the stream, the matrix metrics null.
    add("stream_only", [run_rows("r", 0, "a", None, stream_of([range(0, 20), range(20, 40)], wave))])
    # -0 accuracies and diagnostics, zero-width drops.
    z = stream_of([range(0, 10), range(10, 20)], lambda n, k: -0.0 if (n + k) % 3 else 0.25)
    add("negative_zero", [run_rows("r", 0, "a", [[-0.0, -0.0], [-0.0, 0.25]], z,
                                   curve=[[-0.0, -0.0], [0.25, -0.0]],
                                   diag={"dormant_ratio": [-0.0, -0.0]})])
    # Accuracies near 1e308: sums leave float64 -> absent; maxima and differences stay.
    big = stream_of([range(0, 10), range(10, 20)], lambda n, k: 1e308 if (n + k) % 2 else 1.5e308)
    add("near_max_float", [run_rows("r", 0, "a", [[1e308, 1e308], [1.5e308, 1e308]], big,
                                    curve=[[1e308, 1.7e308], [1.7e308, 1e308]],
                                    diag={"effective_rank": [1.7e308, 1.7e308]})])

    # Families and benchmarks.
    def fam_runs(spec, T=2):
        """spec: [(run_id, seed, algo, benchmark, shift)]: a small matrix and stream per run."""
        out = []
        for rid, seed, algo, bench, s in spec:
            M = [[0.9 - s, 0.1], [0.6 - s / 2, 0.8 - s]] if T == 2 else \
                [[0.9 - s, 0.1, 0.1], [0.6, 0.8 - s, 0.1], [0.5 - s, 0.7, 0.85 - s]]
            st = stream_of([range(0, 10), range(10, 20)] if T == 2 else
                           [range(0, 10), range(10, 20), range(20, 30)],
                           lambda n, k, s=s: round(wave(n, k) * (1 - s), 6))
            out.append(run_rows(rid, seed, algo, M, st, benchmark=bench,
                                diag={"effective_rank": [10.0 - 10 * s, 9.0]}))
        return out

    # Two benchmarks, three families (Friedman defined), ppo the baseline.
    add("two_benchmarks_three_families", fam_runs(
        [("p%d%s" % (s, b), s, "ppo", b, 0.01 * s) for b in ("b1", "b2") for s in range(3)] +
        [("s%d%s" % (s, b), s, "sac", b, 0.05 + 0.02 * s) for b in ("b1", "b2") for s in range(3)] +
        [("d%d%s" % (s, b), s, "dqn", b, (0.1 if b == "b1" else -0.03) + 0.01 * s) for b in ("b1", "b2") for s in range(3)]))
    # Two families: ranks and the critical difference; no Friedman.
    add("two_families", fam_runs(
        [("p%d%s" % (s, b), s, "ppo", b, 0.01 * s) for b in ("b1", "b2", "b3") for s in range(2)] +
        [("s%d%s" % (s, b), s, "sac", b, 0.04 * s - 0.02) for b in ("b1", "b2", "b3") for s in range(2)]))
    # All families tied on every benchmark: every rank 2, Friedman undefined (0/0).
    add("all_families_tied", fam_runs(
        [("%s%d%s" % (a, s, b), s, a, b, 0.1) for a in ("ppo", "sac", "dqn") for b in ("b1", "b2", "b3")
         for s in range(2)]))
    # A family missing on one benchmark: that benchmark leaves the ranking.
    add("family_missing_on_a_benchmark", fam_runs(
        [("p%d%s" % (s, b), s, "ppo", b, 0.02 * s + (0.01 if b == "b2" else 0.0)) for b in ("b1", "b2", "b3") for s in range(2)] +
        [("s%d%s" % (s, b), s, "sac", b, 0.03 - 0.01 * s + (0.05 if b == "b3" else 0.0)) for b in ("b1", "b2", "b3") for s in range(2)] +
        [("d%d%s" % (s, b), s, "dqn", b, 0.015 * s) for b in ("b1", "b3") for s in range(2)] +
        [("x%d%s" % (s, b), s, "xyz", b, 0.2 - 0.1 * s) for b in ("b1", "b2", "b3") for s in range(2)]))
    # Ties inside one benchmark, several benchmarks, rank metric forgetting (lower is
    # better? the rank runs on the family means as they are: see the expected table).
    add("ties_within_a_benchmark", fam_runs(
        [("%s%d%s" % (a, s, b), s, a, b, sh) for b, shifts in
         (("b1", {"ppo": 0.1, "sac": 0.1, "dqn": 0.0, "xyz": 0.2}),
          ("b2", {"ppo": 0.05, "sac": 0.0, "dqn": 0.05, "xyz": 0.05}),
          ("b3", {"ppo": 0.0, "sac": 0.2, "dqn": 0.1, "xyz": 0.3}))
         for a, sh in shifts.items() for s in range(2)], T=3))
    # A family's mean on one benchmark leaves float64 (two runs near 1.7e308): that score
    # is absent, so the benchmark leaves the ranking; -0 and 0 tie on another.
    def acc_run(rid, seed, algo, bench, last):
        return run_rows(rid, seed, algo, [[0.5, 0.1], [0.25, last]], benchmark=bench)
    add("benchmark_score_overflows_and_negative_zero", [
        acc_run("p0", 0, "ppo", "b1", 0.5), acc_run("p1", 1, "ppo", "b1", 0.7),
        acc_run("s0", 0, "sac", "b1", 1.7e308), acc_run("s1", 1, "sac", "b1", 1.7e308),
        acc_run("d0", 0, "dqn", "b1", 0.1), acc_run("d1", 1, "dqn", "b1", 0.3),
        acc_run("p0b2", 0, "ppo", "b2", -0.0), acc_run("s0b2", 0, "sac", "b2", 0.0),
        acc_run("d0b2", 0, "dqn", "b2", 0.5),
        acc_run("p0b3", 0, "ppo", "b3", 0.2), acc_run("s0b3", 0, "sac", "b3", 0.1),
        acc_run("d0b3", 0, "dqn", "b3", 0.3),
        acc_run("p0b4", 0, "ppo", "b4", 1e308), acc_run("s0b4", 0, "sac", "b4", 1.5e308),
        acc_run("d0b4", 0, "dqn", "b4", 1.5e308)])
    # One task a run, accuracies of 1.7e308: sac's two runs on b1 have finite values whose
    # sum leaves float64, so its mean there is absent and b1 leaves the ranking.
    add("benchmark_mean_overflows", [
        run_rows("p1", 0, "ppo", [[0.5]], benchmark="b1"), run_rows("p2", 1, "ppo", [[0.6]], benchmark="b1"),
        run_rows("s1", 0, "sac", [[1.7e308]], benchmark="b1"), run_rows("s2", 1, "sac", [[1.7e308]], benchmark="b1"),
        run_rows("d1", 0, "dqn", [[0.7]], benchmark="b1"),
        run_rows("p3", 0, "ppo", [[0.5]], benchmark="b2"), run_rows("s3", 0, "sac", [[0.4]], benchmark="b2"),
        run_rows("d3", 0, "dqn", [[0.3]], benchmark="b2"),
        run_rows("p4", 0, "ppo", [[0.1]], benchmark="b3"), run_rows("s4", 0, "sac", [[1.7e308]], benchmark="b3"),
        run_rows("d4", 0, "dqn", [[0.3]], benchmark="b3")])
    # Ranked by forgetting (lower is better: 1 = the least forgetting), with ties.
    add("rank_metric_forgetting", fam_runs(
        [("%s%d%s" % (a, s, b), s, a, b, sh) for b, shifts in
         (("b1", {"ppo": 0.1, "sac": 0.0, "dqn": 0.05}),
          ("b2", {"ppo": 0.0, "sac": 0.1, "dqn": 0.0}))
         for a, sh in shifts.items() for s in range(2)]),
        flags=["--rank-metric", "forgetting"], metric="forgetting")
    # A family missing on the second of two benchmarks: one benchmark stays ranked,
    # and Friedman over one block is what SciPy computes.
    add("one_benchmark_left", fam_runs(
        [("p%d%s" % (s, b), s, "ppo", b, 0.01 * s) for b in ("b1", "b2") for s in range(2)] +
        [("s%d%s" % (s, b), s, "sac", b, 0.05 + 0.01 * s) for b in ("b1", "b2") for s in range(2)] +
        [("d%d" % s, s, "dqn", "b1", 0.1 + 0.01 * s) for s in range(2)]))
    # Eleven families: past the Nemenyi table (2 to 10), the critical difference is null.
    add("eleven_families", [acc_run("f%d%s" % (i, b), 0, "f%02d" % i, b, 0.05 * i + (0.01 if b == "b2" and i % 3 == 0 else 0.0))
                            for b in ("b1", "b2") for i in range(11)])
    # Ten families in the same order on forty benchmarks: Friedman's statistic 360 on 9
    # degrees of freedom, p about 1e-72 (agreement is relative: the tail must be right).
    add("friedman_tiny_p", [acc_run("f%d_%d" % (i, b), 0, "f%02d" % i, "b%02d" % b, 0.05 * i + 0.001 * b)
                            for b in range(40) for i in range(10)])
    # Six families, one of them reversed on half of twelve benchmarks.
    add("friedman_six_by_twelve", [acc_run("f%d_%d" % (i, b), 0, "f%d" % i, "b%02d" % b,
                                           0.05 * ((5 - i) if (i == 2 and b % 2) else i) + 0.002 * b)
                                   for b in range(12) for i in range(6)])
    # Seven seeds, one benchmark: the family statistics with a Wilcoxon test, no
    # benchmarks table.
    add("seven_seeds_wilcoxon", fam_runs(
        [("p%d" % s, s, "ppo", None, 0.013 * s) for s in range(7)] +
        [("s%d" % s, s, "sac", None, 0.021 * ((s * 5) % 7) - 0.05) for s in range(7)]))
    return cs


def expected(c):
    runs = []
    flat = []
    for rows in c["runs"]:
        m = run_metrics(rows)
        r0 = rows[0]
        runs.append({"run_id": r0["run_id"], "family": r0["algorithm_id"], "seed": r0["seed"],
                     "benchmark": r0.get("benchmark"), "m": m})
        flat.extend(rows)
    # n_tasks is a per-run count and a seed value like any other (PROTOCOLS 1.6: counts
    # have no direction); it counts among the family's metrics for Benjamini-Hochberg.
    metrics = MATRIX + STREAM + sorted({k for r in runs for k in r["m"] if k.startswith("diag_")}) \
        + ["n_tasks"]
    famref.SEED_VALUES = metrics
    fams = famref.families([{"family": r["family"], "seed": r["seed"],
                             "seed_values": {k: r["m"].get(k) for k in metrics}} for r in runs],
                           None)
    for f in fams:
        # The bootstrap's largest resampled mean (n copies of the largest |x|) or IQM (its
        # kept middle) can leave float64 while the seed values do not: that bound of the
        # interval is then not a float64, absent with a reason (the lower one may stand).
        xs = [r["m"][f["metric"]] for r in runs if r["family"] == f["family"]
              and r["m"].get(f["metric"]) is not None]
        big = max((abs(float(x)) for x in xs), default=0.0)
        kept = len(xs) - 2 * (len(xs) // 4)
        f["ci_overflow"] = len(xs) >= 2 and fin(famref.ssum([big] * len(xs)) / len(xs)) is None
        f["iqm_ci_overflow"] = len(xs) >= 2 and fin(famref.ssum([big] * kept) / kept) is None
    out = {"name": c["name"], "flags": c["flags"], "rows": flat,
           "expected": {"runs": [dict(r["m"], run_id=r["run_id"]) for r in runs],
                        "families": fams}}
    benches = {r["benchmark"] for r in runs}
    if len(benches) > 1:
        b = benchmarks(runs, c["_metric"])
        out["expected"]["benchmarks"] = b["table"]
        out["expected"]["benchmark_scores"] = b["scores"]
    else:
        out["expected"]["benchmarks"] = None
    return out


def build():
    return {"cases": [expected(c) for c in cases()]}


def text(doc):
    # One case a line: a diff names the case that changed.
    return '{"cases": [\n' + ",\n".join(
        json.dumps(c, sort_keys=True, separators=(",", ":"), allow_nan=False)
        for c in doc["cases"]) + "\n]}\n"


def main():
    refcheck.main(OUT, build, text=text,
                  ok=lambda d: "ok: %d contilab stream, family and benchmark cases" % len(d["cases"]),
                  wrote=lambda d: "wrote %d cases to %s" % (len(d["cases"]), OUT))


if __name__ == "__main__":
    main()
