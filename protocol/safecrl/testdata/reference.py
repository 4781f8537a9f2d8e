#!/usr/bin/python3
# Independent Python reference for the safecrl per-task and per-run metrics
# (PROTOCOLS.md section 3, with the two rules at the top of that file).
#
# Regenerate (deterministic, byte-identical output):
#   cd /work/main && /usr/bin/python3 protocol/safecrl/testdata/reference.py
# which writes protocol/safecrl/testdata/reference_cases.json next to this script.
#   /usr/bin/python3 protocol/safecrl/testdata/reference.py --check
# recomputes everything, asserts the small hand-checked cases below, verifies that the
# JSON on disk is identical to what would be written, and writes nothing.
#
# Written from the text of PROTOCOLS.md section 3 alone: it shares no code with the Go
# package and is organised differently (filter the rows, then slice lists). Plain float64
# arithmetic, sums accumulated one value at a time in row order, no numpy, no math.fsum.
#
# Where the specification is silent this script makes the choices documented in the Go
# package's doc.go (they were settled before either implementation was written):
#  * tasks are listed in order of first appearance; a visit is a maximal run of
#    consecutive rows with the same task.
#  * a row "carries" cost/success when the key is present and not null. success may be a
#    bool or a 0/1 number; it is normalised to 0.0/1.0.
#  * total_cost divides the sum of the recorded costs by the number of the task's visits
#    that contain at least one recorded cost (a visit with no recorded cost would
#    otherwise count as a visit that cost nothing).
#  * success_rate: the last W of the task's episodes that record success (filter first,
#    then take the window), like the seed's successes[-20:].
#  * forgetting_success: for each revisit, the last W recorded successes of the previous
#    visit against the first W recorded successes of the revisit; a revisit where either
#    side records no success contributes no term; the terms that exist are averaged.
#    Reasons, first that applies: no success recorded, task never revisited, no revisit
#    has success recorded on both sides.
#  * normalized_forgetting: reasons, first that applies: task never revisited (or the
#    reason forgetting is absent), the reward range is zero. The denominator is
#    |final_task_reward - initial_reward| with the subtraction done first.
#  * a number that would leave float64 (a sum that overflows) is absent with the reason
#    "the value overflows float64"; a quantity built from an absent one is absent.
#  * run seed values: mean over the tasks that have a value, in task order; when no task
#    has one, the reason is "no task has a value: " + the first task's reason, or
#    "no task has a value: the run has no task" for an empty run.

import json
import math
import os
import random
import sys

W_DEFAULT = 20

R_NEVER_REVISITED = "task never revisited"
R_ZERO_RANGE = "the reward range is zero"
R_NO_COST = "no cost recorded"
R_NO_SUCCESS = "no success recorded"
R_NO_SUCCESS_PAIR = "no revisit has success recorded on both sides"
R_OVERFLOW = "the value overflows float64"
R_NO_TASK_VALUE = "no task has a value"
R_NO_TASK = "the run has no task"

TASK_METRICS = [
    "final_task_reward",
    "total_cost",
    "mean_episode_cost",
    "forgetting",
    "normalized_forgetting",
    "success_rate",
    "forgetting_success",
]


# ----------------------------------------------------------------------------- arithmetic

def seq_sum(xs):
    s = 0.0
    for x in xs:
        s += x
    return s


def mean(xs):
    assert len(xs) > 0
    return seq_sum(xs) / len(xs)


class Absent:
    def __init__(self, reason):
        self.reason = reason


def checked(x):
    """A float that left the finite range becomes absent."""
    if isinstance(x, Absent):
        return x
    if math.isnan(x) or math.isinf(x):
        return Absent(R_OVERFLOW)
    return x


def first(xs, w):
    return xs[:w]


def last(xs, w):
    return xs[max(0, len(xs) - w):]


# ----------------------------------------------------------------------------- rows

def carried(row, key):
    return key in row and row[key] is not None


def success_of(row):
    s = row["success"]
    if isinstance(s, bool):
        return 1.0 if s else 0.0
    return float(s)


def split_visits(rows):
    """[(task, [row, ...]), ...] in row order."""
    out = []
    for r in rows:
        if out and out[-1][0] == r["task"]:
            out[-1][1].append(r)
        else:
            out.append((r["task"], [r]))
    return out


# ----------------------------------------------------------------------------- metrics

def forgetting_over(visit_lists, w):
    """visit_lists: one list of values per visit of the task, in order. Terms whose
    sides are empty are skipped. Returns (value or Absent, number of terms)."""
    terms = []
    for v in range(len(visit_lists) - 1):
        before, after = visit_lists[v], visit_lists[v + 1]
        if len(before) == 0 or len(after) == 0:
            continue
        terms.append(mean(last(before, w)) - mean(first(after, w)))
    if not terms:
        return None, 0
    return checked(mean(terms)), len(terms)


def score_task(task, visits, w):
    res = {"task": task}
    eps = [r for v in visits for r in v]
    res["n_visits"] = len(visits)
    res["n_episodes"] = len(eps)
    returns = [float(r["return"]) for r in eps]

    final = checked(mean(last(returns, w)))
    res["final_task_reward"] = final

    cost_visits = [[float(r["cost"]) for r in v if carried(r, "cost")] for v in visits]
    costs = [c for cv in cost_visits for c in cv]
    if costs:
        total = seq_sum(costs)
        with_cost = len([cv for cv in cost_visits if cv])
        res["total_cost"] = checked(total / with_cost)
        res["mean_episode_cost"] = checked(total / len(costs))
    else:
        res["total_cost"] = Absent(R_NO_COST)
        res["mean_episode_cost"] = Absent(R_NO_COST)

    if len(visits) < 2:
        forg = Absent(R_NEVER_REVISITED)
    else:
        ret_visits = [[float(r["return"]) for r in v] for v in visits]
        forg, _ = forgetting_over(ret_visits, w)
        # every visit is non-empty, so a revisited task always has a term
    res["forgetting"] = forg

    if isinstance(forg, Absent):
        res["normalized_forgetting"] = Absent(forg.reason)
    elif isinstance(final, Absent):
        res["normalized_forgetting"] = Absent(final.reason)
    else:
        initial = checked(mean(first([float(r["return"]) for r in visits[0]], w)))
        if isinstance(initial, Absent):
            res["normalized_forgetting"] = initial
        else:
            rng = checked(final - initial)
            if isinstance(rng, Absent):
                res["normalized_forgetting"] = rng
            elif rng == 0.0:
                res["normalized_forgetting"] = Absent(R_ZERO_RANGE)
            else:
                res["normalized_forgetting"] = checked(forg / abs(rng))

    succ_visits = [[success_of(r) for r in v if carried(r, "success")] for v in visits]
    succ = [s for sv in succ_visits for s in sv]
    if not succ:
        res["success_rate"] = Absent(R_NO_SUCCESS)
        res["forgetting_success"] = Absent(R_NO_SUCCESS)
    else:
        res["success_rate"] = checked(mean(last(succ, w)))
        if len(visits) < 2:
            res["forgetting_success"] = Absent(R_NEVER_REVISITED)
        else:
            fs, n = forgetting_over(succ_visits, w)
            res["forgetting_success"] = Absent(R_NO_SUCCESS_PAIR) if n == 0 else fs
    return res


def score_run(rows, w):
    visits = split_visits(rows)
    order = []
    by_task = {}
    for task, v in visits:
        if task not in by_task:
            by_task[task] = []
            order.append(task)
        by_task[task].append(v)
    tasks = [score_task(t, by_task[t], w) for t in order]
    run = {"n_tasks": len(tasks), "n_episodes": len(rows)}
    for m in TASK_METRICS:
        vals = [t[m] for t in tasks if not isinstance(t[m], Absent)]
        if vals:
            run[m] = checked(mean(vals))
        else:
            why = tasks[0][m].reason if tasks else R_NO_TASK
            run[m] = Absent(R_NO_TASK_VALUE + ": " + why)
    return tasks, run


def to_json(d):
    out, reasons = {}, {}
    for k, v in d.items():
        if isinstance(v, Absent):
            out[k] = None
            reasons[k] = v.reason
        else:
            out[k] = v
    out["reasons"] = reasons
    return out


# ----------------------------------------------------------------------------- cases

def random_case(rng, idx):
    n_tasks = rng.choice([1, 2, 2, 3, 4])
    names = ["reach", "push", "door-open", "peg", "window"][:n_tasks]
    n_visits = rng.randint(1, 9)
    w = rng.choice([1, 2, 3, 5, 7, 20, 20, 50])
    p_cost = rng.choice([1.0, 1.0, 0.8, 0.3, 0.0])
    p_succ = rng.choice([1.0, 0.6, 0.2, 0.0])
    style = rng.choice(["gauss", "grid", "big", "int"])
    succ_as_bool = rng.random() < 0.5
    null_not_missing = rng.random() < 0.3
    with_episode = rng.random() < 0.7
    rows = []
    ep = 0
    prev = None
    for _ in range(n_visits):
        task = rng.choice(names)
        # mostly switch task, sometimes repeat it (two blocks then merge into one visit)
        if task == prev and n_tasks > 1 and rng.random() < 0.8:
            task = rng.choice([t for t in names if t != prev])
        prev = task
        length = rng.choice([1, 2, 3, rng.randint(1, 30), rng.randint(15, 60)])
        for _ in range(length):
            if style == "gauss":
                ret = rng.gauss(100.0, 40.0)
            elif style == "grid":
                ret = rng.randint(-50, 50) * 0.1
            elif style == "big":
                ret = rng.gauss(0.0, 1.0) * 1e6 + 1e-3 * rng.random()
            else:
                ret = rng.randint(0, 3)
            row = {"task": task, "return": ret}
            if with_episode:
                row["episode"] = ep
            ep += 1
            if rng.random() < p_cost:
                row["cost"] = rng.choice([0.0, 0.0, rng.random() * 25.0, float(rng.randint(0, 9))])
            elif null_not_missing:
                row["cost"] = None
            if rng.random() < p_succ:
                s = rng.random() < 0.5
                row["success"] = s if succ_as_bool else (1 if s else 0)
            elif null_not_missing:
                row["success"] = None
            rows.append(row)
    return "random_%02d" % idx, rows, w


def rows_of(spec):
    """spec: list of (task, return, cost or None, success or None)."""
    out = []
    for i, (task, ret, cost, succ) in enumerate(spec):
        r = {"task": task, "episode": i, "return": ret}
        if cost is not None:
            r["cost"] = cost
        if succ is not None:
            r["success"] = succ
        out.append(r)
    return out


def fixed_cases():
    cases = []
    # one task, one visit: every forgetting absent
    cases.append(("one_task", rows_of([("a", float(i), 1.0, 1) for i in range(5)]), 3))
    # constant returns on a revisited task: zero range
    cases.append(("zero_range", rows_of([("a", 2.0, 0.5, None)] * 3 + [("b", 1.0, 0.5, None)] * 2
                                        + [("a", 2.0, 0.5, None)] * 3), 2))
    # no cost and no success anywhere
    cases.append(("nothing_recorded", rows_of([("a", 1.0, None, None), ("b", 2.0, None, None),
                                               ("a", 3.0, None, None)]), 20))
    # a visit with no recorded success between two that have it
    cases.append(("success_gap", rows_of([("a", 1.0, 1.0, True), ("a", 1.0, 1.0, False),
                                          ("b", 0.0, 0.0, True),
                                          ("a", 2.0, None, None), ("a", 2.0, None, None),
                                          ("b", 0.0, 0.0, False),
                                          ("a", 3.0, 2.0, True)]), 1))
    # success only on the first visit: no pair
    cases.append(("success_no_pair", rows_of([("a", 1.0, 1.0, 1), ("b", 0.0, 0.0, 0),
                                              ("a", 2.0, 1.0, None)]), 5))
    # sums that leave float64
    cases.append(("overflow", rows_of([("a", 1.7e308, 1.7e308, 1), ("a", 1.7e308, 1.7e308, 1),
                                       ("b", 1.7e308, 0.0, 0), ("a", -1.7e308, 0.0, 0),
                                       ("c", 1.7e308, 1.0, 1), ("d", 1.7e308, 1.0, 1)]), 3))
    # the empty run
    cases.append(("empty", [], 20))
    # W longer than everything, many short visits
    cases.append(("short_visits", rows_of([("a", 0.5, 0.1, 1), ("b", 0.25, 0.2, 0),
                                           ("a", 0.125, None, 0), ("b", 0.0625, 0.3, 1),
                                           ("a", 1.0, 0.4, None)]), 1000))
    return cases


def build():
    rng = random.Random(20260501)
    cases = fixed_cases()
    for i in range(34):
        cases.append(random_case(rng, i))
    out = []
    for name, rows, w in cases:
        tasks, run = score_run(rows, w)
        out.append({
            "name": name,
            "input": {"params": {"window_episodes": w}, "rows": rows},
            "expected": {"tasks": [to_json(t) for t in tasks], "run": to_json(run)},
        })
    return {"generator": "protocol/safecrl/testdata/reference.py", "cases": out}


def self_check():
    # W = 2; rows a:[1,3,5] b:[0] a:[2,6]
    rows = rows_of([("a", 1.0, 1.0, 1), ("a", 3.0, 2.0, 0), ("a", 5.0, None, 1),
                    ("b", 0.0, 4.0, None), ("a", 2.0, 6.0, 1), ("a", 6.0, 3.0, 1)])
    tasks, run = score_run(rows, 2)
    a, b = tasks
    assert a["n_visits"] == 2 and a["n_episodes"] == 5
    assert a["final_task_reward"] == (2.0 + 6.0) / 2
    assert a["total_cost"] == (1.0 + 2.0 + 6.0 + 3.0) / 2
    assert a["mean_episode_cost"] == 12.0 / 4
    assert a["forgetting"] == (3.0 + 5.0) / 2 - (2.0 + 6.0) / 2            # 0
    assert a["normalized_forgetting"] == 0.0 / abs(4.0 - 2.0)
    assert a["success_rate"] == 1.0
    assert a["forgetting_success"] == (0.0 + 1.0) / 2 - 1.0
    assert isinstance(b["forgetting"], Absent) and b["forgetting"].reason == R_NEVER_REVISITED
    assert run["final_task_reward"] == (4.0 + 0.0) / 2
    assert run["forgetting"] == 0.0
    assert run["success_rate"] == 1.0


def main():
    self_check()
    doc = build()
    text = json.dumps(doc, indent=1, sort_keys=True, allow_nan=False) + "\n"
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "reference_cases.json")
    if "--check" in sys.argv[1:]:
        with open(path, encoding="utf-8") as f:
            if f.read() != text:
                print("reference_cases.json is stale: rerun without --check", file=sys.stderr)
                sys.exit(1)
        print("ok: %d cases" % len(doc["cases"]))
        return
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    print("wrote %d cases to %s" % (len(doc["cases"]), path))


if __name__ == "__main__":
    main()
