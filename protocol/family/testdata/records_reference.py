#!/usr/bin/python3
"""An independent reference of the family statistics of PROTOCOLS.md 1.6
applied to the record protocols safecrl (section 3) and skillshift (section
5), end to end: each run's values (safecrl: each metric averaged over the
run's tasks; skillshift: each metric's O/A, the unweighted mean of the run's
cells), then per family n, mean, std, min, max, median, IQM, the paired test
against the baseline, the mean paired difference, the probability of
improvement and the Benjamini-Hochberg adjusted p, plus the null-ness of the
bootstrap intervals and their collapse onto the value. (contilab's families
are in protocol/contilab/testdata/stream_reference.py.)

Written from PROTOCOLS.md alone. The per-run values come from the edge
references protocol/safecrl/testdata/edge_reference.py and
protocol/skillshift/testdata/edge_reference.py, the family statistics from
reference.py beside this file, each loaded by its file; all three are
independent of the Go code.

Edges: one seed, a family with no value for a metric (n = 0), seeds paired
and not, a repeated seed, all seed values equal, zero paired differences,
six and more pairs (Wilcoxon), values near 1e308 whose family sum leaves
float64, -0 against 0, runs lacking the group-by field (the family ""), a
skillshift method without skill calls.

    records_reference.py           writes records_cases.json beside this file
    records_reference.py --check   recomputes and compares (make check-references)

cmd/crlbatch/recordfamilies_test.go scores each case end to end and compares
every column of families.parquet to 1e-9 and every null with its reason.
"""
import json
import math
import os
import sys
sys.dont_write_bytecode = True  # no __pycache__ beside the shared module
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "testdata"))
import refcheck  # noqa: E402  (protocol/testdata/refcheck.py: write, or --check)

famref = refcheck.load("family_reference", os.path.join(HERE, "reference.py"))
safe = refcheck.load("safecrl_edge_reference",
                     os.path.join(HERE, "..", "..", "safecrl", "testdata", "edge_reference.py"))
skill = refcheck.load("skillshift_edge_reference",
                      os.path.join(HERE, "..", "..", "skillshift", "testdata", "edge_reference.py"))

OUT = os.path.join(HERE, "records_cases.json")


def fin(x):
    return x if x is not None and math.isfinite(x) else None


def group_of(row, field):
    v = row.get(field)
    return "" if v is None else str(v)


def safecrl_runs(rows, W, group_by):
    _, runs = safe.score(rows, W)
    first = {}
    for r in rows:
        first.setdefault(r["run_id"], r)
    out = []
    for run in runs:
        r0 = first[run["run_id"]]
        vals = {k: run[k] for k in safe.METRICS}
        vals["n_tasks"] = run["n_tasks"]
        vals["n_episodes"] = run["n_episodes"]
        out.append({"family": group_of(r0, group_by), "seed": r0.get("seed"), "seed_values": vals})
    return out


SKILL_METRICS = ["SR", "AS", "ASC", "SFR"]


def skillshift_runs(rows, group_by):
    order, by = [], {}
    for r in rows:
        key = (r["method"], r.get("run_id"), r.get("seed"))
        if key not in by:
            by[key] = []
            order.append(key)
        by[key].append(r)
    out = []
    for key in order:
        _, table = skill.score(by[key])
        vals = {}
        for m in SKILL_METRICS:
            vals[m] = next(t["value"] for t in table if t["metric"] == m and t["scope"] == "overall")
        vals["n_tasks"] = len(by[key])
        r0 = by[key][0]
        out.append({"family": group_of(r0, group_by), "seed": r0.get("seed"), "seed_values": vals})
    return out


def overflow_flags(fams, runs):
    for f in fams:
        xs = [r["seed_values"][f["metric"]] for r in runs if r["family"] == f["family"]
              and r["seed_values"].get(f["metric"]) is not None]
        big = max((abs(float(x)) for x in xs), default=0.0)
        kept = len(xs) - 2 * (len(xs) // 4)
        f["ci_overflow"] = len(xs) >= 2 and fin(famref.ssum([big] * len(xs)) / len(xs)) is None
        f["iqm_ci_overflow"] = len(xs) >= 2 and fin(famref.ssum([big] * kept) / kept) is None


# ------------------------------------------------------------------ inputs

def safe_run(rid, seed, alg, k, tasks=("t0", "t1", "t0", "t1"), per=3, extra=None):
    """A run visiting tasks in order, per episodes a visit; returns, costs and
    success depending on k (deterministic)."""
    rows = []
    ep = 0
    for v, t in enumerate(tasks):
        for i in range(per):
            ret = round(1.0 + 0.5 * v + 0.1 * i - 0.07 * k * (v % 2) + 0.01 * ((i * 7 + k * 3) % 5), 6)
            r = {"run_id": rid, "algorithm_id": alg, "task": t, "episode": ep, "return": ret,
                 "cost": round(0.2 * ((i + k + v) % 3), 6), "success": (i + k + v) % 2 == 0}
            if seed is not None:
                r["seed"] = seed
            r.update(extra or {})
            rows.append(r)
            ep += 1
    return rows


def skill_run(method, rid, seed, k, calls=True):
    rows = []
    for site in ("gitlab", "magento"):
        for cond in ("src", "tgt", "tgt-exec"):
            for i in range(3):
                r = {"uid": "%s-%s-%d" % (site, cond, i), "site": site, "condition": cond,
                     "success": (i + k + len(site) + len(cond)) % 3 == 0,
                     "steps": 2 + (i * k + len(cond)) % 7, "method": method, "run_id": rid,
                     "seed": seed}
                if calls:
                    r["skill_calls"] = 1 + (i + k) % 4
                    r["skill_failures"] = (i * k) % 2
                rows.append(r)
    return rows


def cases():
    cs = []

    def add(protocol, name, rows, flags=(), W=20, group_by=None):
        cs.append({"protocol": protocol, "name": name, "rows": rows, "flags": list(flags),
                   "_W": W, "_group": group_by})

    W3 = ["--window-episodes", "3"]
    # safecrl: three seeds a family, ppo the baseline (sign-flip, min p 0.25).
    add("safecrl", "three_seeds", [x for s in range(3) for x in safe_run("p%d" % s, s, "ppo", s)] +
        [x for s in range(3) for x in safe_run("q%d" % s, s, "qqq", s + 2)], W3, 3)
    # one seed against two; a seed the baseline lacks; a repeated seed (first run pairs).
    add("safecrl", "one_seed_unpaired_repeated",
        safe_run("p0", 0, "ppo", 0) + safe_run("p1", 1, "ppo", 1) +
        safe_run("s5", 5, "sac", 3) +
        safe_run("d0", 0, "dqn", 2) + safe_run("d0b", 0, "dqn", 4) + safe_run("d1", 1, "dqn", 1),
        W3, 3)
    # seven seeds: Wilcoxon, with zero differences (the normal approximation) and ties.
    add("safecrl", "seven_seeds_wilcoxon",
        [x for s in range(7) for x in safe_run("p%d" % s, s, "ppo", s % 3)] +
        [x for s in range(7) for x in safe_run("x%d" % s, s, "xyz", [0, 2, 2, 1, 4, 3, 5][s])], W3, 3)
    # never revisited: forgetting and normalised forgetting have no value (n = 0); all
    # seeds equal in a family (std 0, intervals collapse, every difference zero).
    add("safecrl", "never_revisited_all_equal",
        [x for s in range(3) for x in safe_run("p%d" % s, s, "ppo", 1, tasks=("t0", "t1"))] +
        [x for s in range(3) for x in safe_run("e%d" % s, s, "eee", 1, tasks=("t0", "t1"))], W3, 3)
    # returns near 1e308: a family's sum leaves float64 (mean absent with a reason).
    big = []
    for s in range(3):  # one episode a run: the run's values are finite
        big.append({"run_id": "b%d" % s, "seed": s, "algorithm_id": "big", "task": "t0",
                    "episode": 0, "return": 1.5e308 if s else 1e308, "cost": 1.7e308, "success": True})
    add("safecrl", "near_max_float",
        [x for s in range(3) for x in safe_run("p%d" % s, s, "ppo", s)] + big, W3, 3)
    # runs without seed metadata pair with nothing: no test, no paired difference.
    add("safecrl", "seeds_missing",
        [x for s in range(3) for x in safe_run("p%d" % s, s, "ppo", s)] +
        [x for s in range(3) for x in safe_run("u%d" % s, None, "unseeded", s + 1)], W3, 3)
    # -0 against 0 returns: equal values, P(improvement) 1/2 and zero differences.
    z = []
    for alg, v in (("ppo", 0.0), ("neg", -0.0)):
        for s in range(2):
            for i in range(2):
                z.append({"run_id": "%s%d" % (alg, s), "seed": s, "algorithm_id": alg, "task": "t0",
                          "episode": i, "return": v, "cost": v, "success": False})
    add("safecrl", "negative_zero", z, W3, 3)
    # runs lacking the group-by field form the family "" (here the baseline: first).
    add("safecrl", "group_by_missing_field",
        safe_run("n0", 0, "ppo", 0) + safe_run("n1", 1, "ppo", 1) +
        safe_run("g0", 0, "ppo", 2, extra={"policy_id": "pi"}) +
        safe_run("g1", 1, "ppo", 4, extra={"policy_id": "pi"}),
        W3 + ["--group-by", "policy_id"], 3, group_by="policy_id")

    # skillshift: three seeds a method.
    add("skillshift", "three_seeds",
        [x for s in range(3) for x in skill_run("awm", "a%d" % s, s, s)] +
        [x for s in range(3) for x in skill_run("base", "b%d" % s, s, s + 3)])
    # a method without skill calls: ASC and SFR have no value (n = 0).
    add("skillshift", "method_without_calls",
        [x for s in range(2) for x in skill_run("awm", "a%d" % s, s, s)] +
        [x for s in range(2) for x in skill_run("nocall", "n%d" % s, s, s + 1, calls=False)])
    # six seeds: Wilcoxon.
    add("skillshift", "six_seeds_wilcoxon",
        [x for s in range(6) for x in skill_run("awm", "a%d" % s, s, s)] +
        [x for s in range(6) for x in skill_run("base", "b%d" % s, s, (5 * s + 2) % 7)])
    return cs


def expected(c):
    if c["protocol"] == "safecrl":
        runs = safecrl_runs(c["rows"], c["_W"], c["_group"] or "algorithm_id")
        famref.SEED_VALUES = safe.METRICS + ["n_tasks", "n_episodes"]
    else:
        runs = skillshift_runs(c["rows"], c["_group"] or "method")
        famref.SEED_VALUES = SKILL_METRICS + ["n_tasks"]
    fams = famref.families(runs, None)
    overflow_flags(fams, runs)
    return {"protocol": c["protocol"], "name": c["name"], "flags": c["flags"], "rows": c["rows"],
            "expected": {"families": fams}}


def text(doc):
    # One case a line: a diff names the case that changed.
    return '{"cases": [\n' + ",\n".join(
        json.dumps(c, sort_keys=True, separators=(",", ":"), allow_nan=False)
        for c in doc["cases"]) + "\n]}\n"


def main():
    refcheck.main(OUT, lambda: {"cases": [expected(c) for c in cases()]}, text=text,
                  ok=lambda d: "ok: %d record-protocol family cases" % len(d["cases"]),
                  wrote=lambda d: "wrote %d cases to %s" % (len(d["cases"]), OUT))


if __name__ == "__main__":
    main()
