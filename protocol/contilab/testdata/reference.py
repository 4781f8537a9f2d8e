#!/usr/bin/python3
# Independent Python reference for the contilab protocol (PROTOCOLS.md section 4 and the
# seed 003_*: the "Accuracy-matrix metrics" and "Continual evaluation" tables).
#
# Regenerate (deterministic, byte-identical output):
#   cd /work/main && /usr/bin/python3 protocol/contilab/testdata/reference.py
# which writes protocol/contilab/testdata/reference_cases.json next to this script.
#   /usr/bin/python3 protocol/contilab/testdata/reference.py --check
# recomputes everything, checks the hand-worked case and that the JSON on disk is what
# would be written, and writes nothing.
#
# Written from the specification text and the resolutions recorded in the package
# documentation (doc.go), not from the Go code: plain Python floats (IEEE float64), every
# sum a left-to-right loop in index order (tasks ascending, steps ascending), and the
# windowed forgetting by brute force over all pairs of points. Friedman and ranks come
# from SciPy (scipy.stats.friedmanchisquare, scipy.stats.rankdata); the Nemenyi q values
# are typed in from Demsar (2006), Table 5(a).
#
# Resolutions the spec leaves open, as this file implements them:
#  * repeated records (same matrix cell, initial/joint task, stream (step, eval_task),
#    curve (task, batch), diag (sanitized name, task)), negative or non-finite accuracies,
#    a stream step with two train tasks, records naming a task >= T, unknown scenarios:
#    the run is rejected ("error": true).
#  * T = 1 + max(after_task, eval_task) over matrix rows, else 1 + max(train_task,
#    eval_task) over stream rows, else unknown (n_tasks null).
#  * a metric is null when a cell it reads is missing; the reason names the first missing
#    cell in the formula's loop order ("accuracy-matrix cell missing: after_task i,
#    eval_task j"); fwt reads R_{j-1,j} before b_j, intransigence R_jj before a*_j.
#  * per-task stream terms are never dropped: a task k < T-1 whose term is undefined makes
#    the metric null (first such k in the reason).
#  * A(T-1, end) = the largest-step point of task T-1.
#  * windowed forgetting needs at least one pair inside the window per task; null otherwise.
#  * aaa skips steps without a row with eval_task <= train_task.
#  * lca needs the full grid tasks 0..T-1 x batches 0..beta (beta = largest batch);
#    the first missing point in (batch, task) order is named.
#  * benchmarks: a family with no score on any benchmark leaves the ranking; then every
#    benchmark lacking a score of a remaining family is dropped.

import json
import math
import os
import random
import re
import sys

import numpy as np
import scipy.stats

METRICS = ["acc", "aia", "bwt", "fwt", "forgetting", "relative_forgetting", "learning_acc",
           "intransigence", "min_acc", "wc_acc", "stability_gap", "windowed_forgetting",
           "aaa", "lca"]

R_NO_MATRIX = "no accuracy-matrix rows"
R_NO_STREAM = "no continual-evaluation stream rows"
R_NO_CURVE = "no learning-curve rows"
R_NO_TASKS = "no accuracy-matrix or stream rows to count tasks from"
R_FEW = "needs at least 2 tasks"
R_CLASS_IL = "undefined in Class-IL: a task's classes are masked out before it is learned"
R_NO_INITIAL = "no initial-accuracy rows"
R_NO_JOINT = "no joint-training rows"
R_CELL = "accuracy-matrix cell missing"
R_INITIAL = "initial accuracy missing"
R_JOINT = "joint accuracy missing"
R_ZERO_MAX = "every task's best accuracy is 0"
R_AFTER = "no stream point of the task after it was learned"
R_DURING = "no stream point of the task while it was trained"
R_NEXT = "no stream point of the task while the next task was trained"
R_LAST = "no stream point of the last task"
R_ONE_STEP = "the stream has a single step, so no sampling interval"
R_WINDOW = "the window is shorter than the stream's sampling interval"
R_PAIR = "no two stream points of the task after it was learned lie within one window"
R_SEEN = "no stream row evaluates a task already being trained"
R_CURVE = "learning-curve point missing"

NEMENYI_Q05 = {2: 1.960, 3: 2.343, 4: 2.569, 5: 2.728, 6: 2.850, 7: 2.949, 8: 3.031,
               9: 3.102, 10: 3.164}


class Reject(Exception):
    pass


class Null(Exception):
    def __init__(self, reason):
        super().__init__(reason)
        self.reason = reason


def cell_missing(i, j):
    return Null("%s: after_task %d, eval_task %d" % (R_CELL, i, j))


def for_task(reason, k):
    return Null("%s: task %d" % (reason, k))


def seqsum(xs):
    s = 0.0
    for x in xs:
        s += x
    return s


def snake(name):
    # ASCII-only camelCase split, then every run of other characters -> "_".
    s = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name)
    s = re.sub(r"([A-Z])([A-Z][a-z])", r"\1_\2", s)
    s = "".join(chr(ord(c) + 32) if "A" <= c <= "Z" else c for c in s)
    s = re.sub(r"[^a-z0-9]+", "_", s)
    return s.strip("_")


def scenario_of(text):
    if text is None:
        return ""
    s = text.strip().lower().replace("_", "-")
    if s not in ("", "task-il", "class-il", "domain-il"):
        raise Reject("scenario")
    return s


def finite_acc(x):
    if not isinstance(x, float) and not isinstance(x, int):
        raise Reject("acc type")
    if math.isnan(x) or math.isinf(x) or x < 0:
        raise Reject("acc")
    return float(x)


# ----------------------------------------------------------------------------- one run

def score(case):
    rows = case["rows"]
    wf = case["window_fraction"]
    scen = scenario_of(case.get("scenario"))
    meta_scen = scenario_of(case.get("meta", {}).get("scenario"))
    if scen == "":
        scen = meta_scen
    elif meta_scen != "" and meta_scen != scen:
        raise Reject("scenario conflict")

    R, b, astar, curve = {}, {}, {}, {}
    stream = {}  # (step, eval) -> (train, acc)
    step_train = {}
    diags, diag_order = {}, []
    for row in rows:
        kind = row["kind"]
        if kind == "matrix":
            key = (row["after_task"], row["eval_task"])
            if min(key) < 0 or key in R:
                raise Reject("matrix")
            R[key] = finite_acc(row["acc"])
        elif kind in ("initial", "joint"):
            tbl = b if kind == "initial" else astar
            j = row["eval_task"]
            if j < 0 or j in tbl:
                raise Reject(kind)
            tbl[j] = finite_acc(row["acc"])
        elif kind == "stream":
            n, t, k = row["step"], row["train_task"], row["eval_task"]
            if n < 0 or t < 0 or k < 0 or (n, k) in stream:
                raise Reject("stream")
            if n in step_train and step_train[n] != t:
                raise Reject("two train tasks")
            step_train[n] = t
            stream[(n, k)] = (t, finite_acc(row["acc"]))
        elif kind == "curve":
            key = (row["task"], row["batch"])
            if min(key) < 0 or key in curve:
                raise Reject("curve")
            curve[key] = finite_acc(row["acc"])
        elif kind == "diag":
            name = snake(row["name"])
            if name == "" or row["task"] < 0:
                raise Reject("diag")
            v = float(row["value"])
            if math.isnan(v) or math.isinf(v):
                raise Reject("diag value")
            if name not in diags:
                diags[name] = {}
                diag_order.append(name)
            if row["task"] in diags[name]:
                raise Reject("diag twice")
            diags[name][row["task"]] = v
        else:
            raise ValueError(kind)

    if R:
        T = 1 + max(max(i, j) for (i, j) in R)
    elif stream:
        T = 1 + max(max(stream[key][0], key[1]) for key in stream)
    else:
        T = None
    if T is not None:
        for j in list(b) + list(astar):
            if j >= T:
                raise Reject("beyond T")
        for (n, k), (t, _) in stream.items():
            if k >= T or t >= T:
                raise Reject("beyond T")
        for (t, _) in curve:
            if t >= T:
                raise Reject("beyond T")

    out = {}

    def put(name, fn):
        try:
            out[name] = (fn(), None)
        except Null as e:
            out[name] = (None, e.reason)

    # -------------------------------------------------- accuracy matrix
    def r(i, j):
        if (i, j) not in R:
            raise cell_missing(i, j)
        return R[(i, j)]

    def need_matrix(min_tasks=1):
        if not R:
            raise Null(R_NO_MATRIX)
        if T < min_tasks:
            raise Null(R_FEW)

    def acc():
        need_matrix()
        return seqsum([r(T - 1, j) for j in range(T)]) / T

    def aia():
        need_matrix()
        total = 0.0
        for i in range(T):
            total += seqsum([r(i, j) for j in range(i + 1)]) / (i + 1)
        return total / T

    def bwt():
        need_matrix(2)
        terms = []
        for j in range(T - 1):
            last = r(T - 1, j)
            terms.append(last - r(j, j))
        return seqsum(terms) / (T - 1)

    def fwt():
        need_matrix(2)
        if scen == "class-il":
            raise Null(R_CLASS_IL)
        if not b:
            raise Null(R_NO_INITIAL)
        terms = []
        for j in range(1, T):
            x = r(j - 1, j)
            if j not in b:
                raise for_task(R_INITIAL, j)
            terms.append(x - b[j])
        return seqsum(terms) / (T - 1)

    def forgetting_terms():
        need_matrix(2)
        f, m = [], []
        for j in range(T - 1):
            best = max([r(l, j) for l in range(j, T - 1)])
            f.append(best - r(T - 1, j))
            m.append(best)
        return f, m

    def forgetting():
        f, _ = forgetting_terms()
        return seqsum(f) / (T - 1)

    def relative_forgetting():
        f, m = forgetting_terms()
        ratios = [fj / mj for fj, mj in zip(f, m) if mj != 0]
        if not ratios:
            raise Null(R_ZERO_MAX)
        return seqsum(ratios) / len(ratios)

    def learning_acc():
        need_matrix()
        return seqsum([r(j, j) for j in range(T)]) / T

    def intransigence():
        need_matrix()
        if not astar:
            raise Null(R_NO_JOINT)
        terms = []
        for j in range(T):
            x = r(j, j)
            if j not in astar:
                raise for_task(R_JOINT, j)
            terms.append(astar[j] - x)
        return seqsum(terms) / T

    # -------------------------------------------------- stream
    steps = sorted(step_train)

    def points(k, pred):
        # (step, acc) of task k in step order, for the points whose train task satisfies pred
        return [(n, stream[(n, k)][1]) for n in steps if (n, k) in stream and pred(stream[(n, k)][0])]

    def need_stream(min_tasks=2):
        if not stream:
            raise Null(R_NO_STREAM)
        if T < min_tasks:
            raise Null(R_FEW)

    def min_acc():
        need_stream()
        mins = []
        for k in range(T - 1):
            after = points(k, lambda t: t > k)
            if not after:
                raise for_task(R_AFTER, k)
            mins.append(min(a for _, a in after))
        return seqsum(mins) / (T - 1)

    def wc_acc():
        m = min_acc()
        last = points(T - 1, lambda t: True)
        if not last:
            raise for_task(R_LAST, T - 1)
        end = last[-1][1]
        return (1.0 / T) * end + (1.0 - 1.0 / T) * m

    def stability_gap():
        need_stream()
        gaps = []
        for k in range(T - 1):
            during = points(k, lambda t: t == k)
            if not during:
                raise for_task(R_DURING, k)
            nxt = points(k, lambda t: t == k + 1)
            if not nxt:
                raise for_task(R_NEXT, k)
            gaps.append(during[-1][1] - min(a for _, a in nxt))
        return seqsum(gaps) / (T - 1)

    def rho():
        gaps = [steps[i + 1] - steps[i] for i in range(len(steps) - 1)]
        return min(gaps) if gaps else None

    def windowed_forgetting():
        need_stream()
        p = rho()
        if p is None:
            raise Null(R_ONE_STEP)
        wfs = []
        for k in range(T - 1):
            length = float(sum(1 for n in steps if step_train[n] == k)) * float(p)
            delta = wf * length
            if delta < p:
                raise for_task(R_WINDOW, k)
            after = points(k, lambda t: t > k)
            if not after:
                raise for_task(R_AFTER, k)
            drops = [am - an for (m, am) in after for (n, an) in after if m < n and n - m <= delta]
            if not drops:
                raise for_task(R_PAIR, k)
            wfs.append(max(0.0, max(drops)))
        return seqsum(wfs) / (T - 1)

    def aaa():
        need_stream(1)
        means = []
        for n in steps:
            seen = [stream[(n, k)][1] for k in sorted(k for (m, k) in stream if m == n)
                    if k <= stream[(n, k)][0]]
            if seen:
                means.append(seqsum(seen) / len(seen))
        if not means:
            raise Null(R_SEEN)
        return seqsum(means) / len(means)

    def lca():
        if not curve:
            raise Null(R_NO_CURVE)
        tasks = T if T is not None else 1 + max(t for (t, _) in curve)
        beta = max(bb for (_, bb) in curve)
        z = []
        for bb in range(beta + 1):
            col = []
            for t in range(tasks):
                if (t, bb) not in curve:
                    raise Null("%s: task %d, batch %d" % (R_CURVE, t, bb))
                col.append(curve[(t, bb)])
            z.append(seqsum(col) / tasks)
        return seqsum(z) / (beta + 1)

    for name, fn in [("acc", acc), ("aia", aia), ("bwt", bwt), ("fwt", fwt),
                     ("forgetting", forgetting), ("relative_forgetting", relative_forgetting),
                     ("learning_acc", learning_acc), ("intransigence", intransigence),
                     ("min_acc", min_acc), ("wc_acc", wc_acc), ("stability_gap", stability_gap),
                     ("windowed_forgetting", windowed_forgetting), ("aaa", aaa), ("lca", lca)]:
        put(name, fn)

    diag_out = []
    for name in diag_order:
        vals = [diags[name][t] for t in sorted(diags[name])]
        diag_out.append({"column": "diag_" + name, "value": seqsum(vals) / len(vals), "n": len(vals)})

    p = rho()
    return {
        "error": False,
        "n_tasks": T,
        "scenario": scen,
        "rho": p if p is not None else 0,
        "metrics": {k: v for k, (v, _) in out.items()},
        "reasons": {k: why for k, (_, why) in out.items() if why is not None},
        "diags": diag_out,
        "matrix": [[i, j, R[(i, j)]] for (i, j) in sorted(R)],
    }


def expected(case):
    try:
        return score(case)
    except Reject as e:
        return {"error": True, "why": str(e)}


# ----------------------------------------------------------------------------- benchmarks

def benchmarks(case):
    runs = case["runs"]
    hib = case["higher_is_better"]
    fams, benches = [], []
    sums = {}
    for r in runs:
        if r["family"] not in fams:
            fams.append(r["family"])
        if r["benchmark"] not in benches:
            benches.append(r["benchmark"])
        key = (r["family"], r["benchmark"])
        if r["value"] is not None:
            s, n = sums.get(key, (0.0, 0))
            sums[key] = (s + r["value"], n + 1)
    score = {key: s / n for key, (s, n) in sums.items()}

    def nm(s):
        return "(none)" if s == "" else s
    notes = []
    ranked = []
    for f in fams:
        if any((f, bb) in score for bb in benches):
            ranked.append(f)
        else:
            notes.append("family %s has no score on any benchmark and is left out of the ranking" % nm(f))
    used = []
    for bb in benches:
        missing = [nm(f) for f in ranked if (f, bb) not in score]
        if missing:
            notes.append("benchmark %s is left out of the ranking: no score for %s" % (nm(bb), ", ".join(missing)))
        else:
            used.append(bb)
    out = {"families": fams, "benchmarks": benches, "ranked": used, "notes": None,
           "average_rank": {}, "n_benchmarks": {}, "reasons": {}}
    for f in fams:
        out["average_rank"][f] = None
        out["n_benchmarks"][f] = 0
    stat = p = cd = None
    if not ranked:
        why = "no family has a score on any benchmark"
        out["reasons"] = {"friedman_statistic": why, "friedman_p_value": why, "critical_difference": why}
    elif not used:
        why = "no benchmark has a score for every ranked family"
        out["reasons"] = {"friedman_statistic": why, "friedman_p_value": why, "critical_difference": why}
    else:
        if len(used) == 1:
            notes.append("only one benchmark is ranked")
        table = np.array([[score[(f, bb)] for f in ranked] for bb in used], dtype=float)
        ranks = np.array([scipy.stats.rankdata(-row if hib else row) for row in table])
        for col, f in enumerate(ranked):
            out["average_rank"][f] = float(ranks[:, col].sum() / len(used))
            out["n_benchmarks"][f] = len(used)
        k, n = len(ranked), len(used)
        if k < 3:
            why = "the Friedman test needs at least 3 families"
            out["reasons"]["friedman_statistic"] = why
            out["reasons"]["friedman_p_value"] = why
        else:
            with np.errstate(all="ignore"):
                res = scipy.stats.friedmanchisquare(*[table[:, c] for c in range(k)])
            if math.isnan(res.statistic):
                why = "every benchmark ties all families"
                out["reasons"]["friedman_statistic"] = why
                out["reasons"]["friedman_p_value"] = why
            else:
                stat, p = float(res.statistic), float(res.pvalue)
        if 2 <= k <= 10:
            cd = NEMENYI_Q05[k] * math.sqrt(k * (k + 1) / (6.0 * n))
        else:
            out["reasons"]["critical_difference"] = "the Nemenyi table covers 2 to 10 families"
    for f in fams:
        if out["average_rank"][f] is None and f not in ranked:
            out["reasons"]["average_rank:" + f] = "the family has no score on any benchmark"
        elif out["average_rank"][f] is None:
            out["reasons"]["average_rank:" + f] = "no benchmark has a score for every ranked family"
    out["friedman_statistic"] = stat
    out["friedman_p_value"] = p
    out["critical_difference"] = cd
    out["notes"] = notes
    return out


# ----------------------------------------------------------------------------- cases

def hand_case():
    # The 3-task example of the Go worked-example test.
    m = [[0.75, 0.25, 0.125], [0.5, 0.875, 0.25], [0.625, 0.5, 1.0]]
    rows = [{"kind": "matrix", "after_task": i, "eval_task": j, "acc": m[i][j]}
            for i in range(3) for j in range(3)]
    rows += [{"kind": "initial", "eval_task": j, "acc": x} for j, x in enumerate([0.125, 0.125, 0.0])]
    rows += [{"kind": "joint", "eval_task": j, "acc": 1.0} for j in range(3)]
    pts = [(10, 0, 0, 0.5), (10, 0, 1, 0.125), (20, 0, 0, 0.75),
           (30, 1, 0, 0.25), (30, 1, 1, 0.5), (40, 1, 0, 0.625), (40, 1, 1, 0.875),
           (50, 2, 0, 0.5), (50, 2, 1, 0.5), (50, 2, 2, 0.25),
           (60, 2, 0, 0.375), (60, 2, 1, 0.75), (60, 2, 2, 0.875)]
    rows += [{"kind": "stream", "step": n, "train_task": t, "eval_task": k, "acc": a} for n, t, k, a in pts]
    z = [[0.25, 0.5, 0.75], [0.5, 0.5, 1.0], [0.0, 0.25, 0.5]]
    rows += [{"kind": "curve", "task": t, "batch": bb, "acc": z[t][bb]} for t in range(3) for bb in range(3)]
    rows += [{"kind": "diag", "name": "effective_rank", "task": t, "value": v} for t, v in enumerate([10.0, 12.0, 14.0])]
    rows += [{"kind": "diag", "name": "dormantRatio", "task": 0, "value": 0.25},
             {"kind": "diag", "name": "dormant ratio", "task": 1, "value": 0.75}]
    return {"name": "worked_example", "rows": rows, "scenario": "task-il", "meta": {}, "window_fraction": 0.5}


def rnd_acc(rng):
    u = rng.random()
    if u < 0.05:
        return 0.0
    if u < 0.1:
        return 1.0
    if u < 0.25:
        return round(rng.random(), 2)
    return rng.random()


def random_case(seed):
    rng = random.Random(seed)
    T = rng.choice([1, 2, 2, 3, 3, 4, 4, 5, 6])
    rows = []
    shape = rng.choice(["full", "full", "full", "lower+super", "holes", "none"])
    for i in range(T):
        for j in range(T):
            if shape == "none":
                continue
            if shape == "lower+super" and j > i + 1:
                continue
            if shape == "holes" and rng.random() < 0.12:
                continue
            rows.append({"kind": "matrix", "after_task": i, "eval_task": j, "acc": rnd_acc(rng)})
    if shape == "full" and rng.random() < 0.2:
        # a column that is zero until the end: relative forgetting drops it
        for row in rows:
            if row["eval_task"] == 0 and row["after_task"] < T - 1:
                row["acc"] = 0.0
    imode = rng.choice(["all", "all", "none", "some"])
    for j in range(T):
        if imode == "all" or (imode == "some" and rng.random() < 0.6):
            rows.append({"kind": "initial", "eval_task": j, "acc": rnd_acc(rng) * 0.2})
    jmode = rng.choice(["all", "all", "none", "some"])
    for j in range(T):
        if jmode == "all" or (jmode == "some" and rng.random() < 0.7):
            rows.append({"kind": "joint", "eval_task": j, "acc": 0.5 + 0.5 * rng.random()})

    smode = rng.choice(["regular", "regular", "regular", "jitter", "sparse", "one", "none"])
    if smode != "none":
        g = rng.choice([1, 5, 10, 50, 100])
        step = rng.choice([0, g, 7 * g])
        for t in range(T):
            n_steps = rng.choice([1, 3, 5, 10, 10, 12, 20, 20]) if smode != "one" else 1
            if smode == "one" and t > 0:
                break
            for _ in range(n_steps):
                for k in range(T):
                    if smode == "sparse" and rng.random() < 0.4:
                        continue
                    if k > t and rng.random() < 0.7:
                        continue
                    base = 0.9 if k == t else (0.6 if k < t else 0.1)
                    rows.append({"kind": "stream", "step": step, "train_task": t, "eval_task": k,
                                 "acc": min(1.0, max(0.0, base + rng.gauss(0, 0.15)))})
                step += g if (smode != "jitter" or rng.random() < 0.7) else g * rng.choice([2, 3])

    cmode = rng.choice(["full", "full", "hole", "none"])
    if cmode != "none":
        beta = rng.choice([0, 1, 4, 9])
        for t in range(T):
            for bb in range(beta + 1):
                if cmode == "hole" and rng.random() < 0.1:
                    continue
                rows.append({"kind": "curve", "task": t, "batch": bb, "acc": rnd_acc(rng)})
    for name in rng.sample(["effective_rank", "dormantRatio", "ECE per task", "srank", "weight-norm"], rng.randint(0, 3)):
        for t in range(T):
            if rng.random() < 0.8:
                rows.append({"kind": "diag", "name": name, "task": t, "value": rng.uniform(-2, 50)})

    rng.shuffle(rows)
    scen = rng.choice([None, None, "task-il", "task-il", "class-il", "domain-il", "Class-IL"])
    meta = {}
    if scen is None and rng.random() < 0.5:
        meta = {"scenario": rng.choice(["class-il", "task_il"])}
    return {"name": "random_%03d" % seed, "rows": rows, "scenario": scen, "meta": meta,
            "window_fraction": rng.choice([0.1, 0.1, 0.25, 0.5, 0.5, 1.0])}


def error_cases():
    base = [{"kind": "matrix", "after_task": i, "eval_task": j, "acc": 0.5} for i in range(2) for j in range(2)]
    out = []

    def add(name, extra, scenario=None, meta=None):
        out.append({"name": name, "rows": base + extra, "scenario": scenario, "meta": meta or {},
                    "window_fraction": 0.1})
    add("error_duplicate_cell", [{"kind": "matrix", "after_task": 1, "eval_task": 1, "acc": 0.5}])
    add("error_negative_acc", [{"kind": "initial", "eval_task": 0, "acc": -0.1}])
    add("error_two_train_tasks", [{"kind": "stream", "step": 5, "train_task": 0, "eval_task": 0, "acc": 0.5},
                                  {"kind": "stream", "step": 5, "train_task": 1, "eval_task": 1, "acc": 0.5}])
    add("error_joint_beyond_t", [{"kind": "joint", "eval_task": 2, "acc": 0.9}])
    add("error_scenario_conflict", [], scenario="task-il", meta={"scenario": "class-il"})
    add("error_duplicate_diag", [{"kind": "diag", "name": "effectiveRank", "task": 0, "value": 1.0},
                                 {"kind": "diag", "name": "effective rank", "task": 0, "value": 2.0}])
    return out


def benchmark_case(seed):
    rng = random.Random(1000 + seed)
    k = rng.choice([2, 3, 4, 5, 6, 8, 11])
    n = rng.choice([1, 2, 4, 6, 8])
    fams = ["fam%d" % i for i in range(k)]
    if rng.random() < 0.3:
        fams[0] = ""
    benches = ["bench%d" % i for i in range(n)]
    tie_mode = rng.choice(["none", "none", "coarse", "coarse", "all"])
    runs = []
    for bb in benches:
        for f in fams:
            if rng.random() < 0.08:
                continue
            for s in range(rng.choice([1, 3])):
                if tie_mode == "all":
                    v = 0.5
                elif tie_mode == "coarse":
                    v = round(rng.random(), 1)
                else:
                    v = rng.random()
                if rng.random() < 0.05:
                    v = None
                runs.append({"family": f, "benchmark": bb, "value": v})
    if rng.random() < 0.2:
        runs.append({"family": "ghost", "benchmark": benches[0], "value": None})
    return {"name": "bench_%03d" % seed, "runs": runs, "higher_is_better": rng.random() < 0.7}


def hand_benchmark_case():
    # 3 families x 4 benchmarks with a tie, plus a benchmark that family c lacks.
    vals = {"b1": [0.9, 0.8, 0.7], "b2": [0.6, 0.6, 0.5], "b3": [0.7, 0.9, 0.8], "b4": [0.55, 0.5, 0.45],
            "b5": [0.3, 0.2, None]}
    runs = []
    for bb, vs in vals.items():
        for f, v in zip(["a", "b", "c"], vs):
            if v is not None:
                runs.append({"family": f, "benchmark": bb, "value": v})
    return {"name": "bench_hand", "runs": runs, "higher_is_better": True}


def build():
    runs = [hand_case()] + [random_case(s) for s in range(34)] + error_cases()
    run_out = [{"name": c["name"], "input": c, "expected": expected(c)} for c in runs]
    bcases = [hand_benchmark_case()] + [benchmark_case(s) for s in range(14)]
    bench_out = [{"name": c["name"], "input": c, "expected": benchmarks(c)} for c in bcases]
    return {
        "generator": "protocol/contilab/testdata/reference.py",
        "tolerance": {"relative": 1e-9, "absolute": 1e-12},
        "runs": run_out,
        "benchmarks": bench_out,
    }


def check_hand(doc):
    e = doc["runs"][0]["expected"]["metrics"]
    assert e["bwt"] == -0.25 and e["fwt"] == 0.1875 and e["forgetting"] == 0.25, e
    assert e["learning_acc"] == 0.875 and e["intransigence"] == 0.125, e
    assert e["min_acc"] == 0.375 and e["stability_gap"] == 0.4375, e
    assert e["windowed_forgetting"] == 0.0625, e
    h = doc["benchmarks"][0]["expected"]
    assert h["ranked"] == ["b1", "b2", "b3", "b4"], h
    assert h["average_rank"] == {"a": 1.625, "b": 1.625, "c": 2.75}, h


def dumps(doc):
    return json.dumps(doc, sort_keys=True, indent=1, allow_nan=False) + "\n"


def main():
    doc = build()
    check_hand(doc)
    text = dumps(doc)
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "reference_cases.json")
    if "--check" in sys.argv[1:]:
        with open(path) as fh:
            if fh.read() != text:
                print("reference_cases.json is stale", file=sys.stderr)
                sys.exit(1)
        print("ok: %d runs, %d benchmark cases" % (len(doc["runs"]), len(doc["benchmarks"])), file=sys.stderr)
        return
    if len(sys.argv) > 1 and not sys.argv[1].startswith("-"):
        path = sys.argv[1]
    with open(path, "w") as fh:
        fh.write(text)
    print("wrote %s (%d runs, %d benchmark cases)" % (path, len(doc["runs"]), len(doc["benchmarks"])), file=sys.stderr)


if __name__ == "__main__":
    main()
