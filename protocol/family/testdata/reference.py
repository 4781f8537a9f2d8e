#!/usr/bin/python3
# Independent Python reference for the family statistics of PROTOCOLS.md 1.6 at their
# edges, end to end: per-label and per-run skyfall metrics (1.4, 1.5), each run's seed
# values, and every family column that does not depend on the bootstrap's PRNG (n, mean,
# std, min, max, median, iqm, relative adaptation advantage, paired test, mean paired
# difference, probability of improvement, Benjamini-Hochberg), plus the null-ness of the
# bootstrap columns and their collapse onto the value when every seed value is equal.
#
# Written from PROTOCOLS.md alone, without reading the Go code. Plain float64, sums
# accumulated sequentially in row order; scipy only for the Wilcoxon test (as PROTOCOLS
# asks: scipy.stats.wilcoxon with SciPy 1.10.1's defaults).
#
#   /usr/bin/python3 protocol/family/testdata/reference.py           # writes edge_cases.json
#   /usr/bin/python3 protocol/family/testdata/reference.py --check   # recomputes, compares, writes nothing
#
# The cases are read by cmd/crlbatch/edgenumbers_test.go, which runs `crlbatch score` on
# each case's traces with the case's flags and compares every value to 1e-9 relative
# (1e-12 absolute), and every null.

import itertools
import json
import math
import os
import sys
sys.dont_write_bytecode = True  # no __pycache__ beside the shared module
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "testdata"))
import refcheck  # noqa: E402  (protocol/testdata/refcheck.py: write, or --check)

SEGMENT_ALPHA = 0.9
CEILING_ALPHA = 0.5
EPS_FRAC = 0.30
EPS_FLOOR = 0.005
TAIL = 0.2
ZS = 10
WINDOW = "segment"

PER_LABEL = ["per_configuration_reward", "adaptation_speed", "recovery_time", "forgetting",
             "stability_variance", "performance_gap", "zero_shot_reward", "settled_reward",
             "effective_rank"]
PER_RUN = ["return_discounted", "return_undiscounted", "invalid_action_rate", "solve_rate",
           "regret", "effective_rank_run", "n_steps", "n_intervals", "n_shifts", "n_labels"]
SEED_VALUES = PER_LABEL + ["settled_reward_policy"] + PER_RUN


def tail_count(length):
    return max(1, math.ceil(TAIL * length - 1e-9))


def ssum(xs):
    s = 0.0
    first = True
    for x in xs:
        if first:
            s = x
            first = False
        else:
            s = s + x
    return s


def mean(xs):
    xs = list(xs)
    if not xs:
        return None
    return ssum(xs) / len(xs)


def var(xs):
    xs = list(xs)
    if len(xs) < 2:
        return None
    m = ssum(xs) / len(xs)
    return ssum([(x - m) * (x - m) for x in xs]) / (len(xs) - 1)


def finite(v):
    return v is None or math.isfinite(v)


def running_means(w):
    out, s = [], 0.0
    for i, r in enumerate(w):
        s = r if i == 0 else s + r
        out.append(s / (i + 1))
    return out


# ------------------------------------------------------------------ one run (1.3-1.5)

def score_run(rows, ceiling, anchor, gamma_override, solve, episode_end=()):
    rewards = [r["reward"] for r in rows]

    def is_end(i):
        comps = rows[i].get("components") or {}
        return any(isinstance(comps.get(c), (int, float)) and comps.get(c) != 0
                   for c in episode_end)
    labels = [r["regime_id"] for r in rows]
    ivs = []  # (label, start, end)
    for i, z in enumerate(labels):
        if ivs and ivs[-1][0] == z:
            ivs[-1][2] = i + 1
        else:
            ivs.append([z, i, i + 1])
    order = []
    for z in labels:
        if z not in order:
            order.append(z)
    origin = {}
    for z in order:
        o = None
        for r in rows:
            if r["regime_id"] == z and r.get("regime_origin") is not None:
                o = r["regime_origin"]
                break
        if o is None:
            for r in rows:
                if r["regime_id"] == z and r.get("alias_of") is not None:
                    o = r["alias_of"]
                    break
        origin[z] = o if o is not None else z
    out = []
    for z in order:
        vals = [rewards[i] for i in range(len(rows)) if labels[i] == z]
        mine = [(j, iv) for j, iv in enumerate(ivs) if iv[0] == z]
        shifted = [(j, iv) for j, iv in mine if j > 0]
        ad, rc, zs = [], [], []
        for j, (_, s, e) in shifted:
            w = rewards[s:e] if WINDOW == "segment" else rewards[s:]
            rm = running_means(w)
            # A running mean past float64 (docs/decisions.md: absent) is no number to
            # compare: a τ is kept only when found at a finite running mean before it.
            fin = [math.isfinite(m) for m in rm]
            first_inf = fin.index(False) if False in fin else len(rm)
            ok = rm[:first_inf]
            if anchor == "segment":
                if first_inf == len(rm):
                    A = max(rm)
                    t = next((k + 1 for k, m in enumerate(rm) if m >= SEGMENT_ALPHA * A), len(w))
                    ad.append(t)
                n = tail_count(len(w))
                Aa = mean(w[-n:])
                if math.isfinite(Aa):
                    band = max(EPS_FRAC * abs(Aa), EPS_FLOOR)
                    t = next((k + 1 for k, m in enumerate(ok) if abs(m - Aa) <= band), None)
                    if t is not None:
                        rc.append(t)
            else:
                t = next((k + 1 for k, m in enumerate(ok) if m >= CEILING_ALPHA * ceiling), None)
                if t is not None:
                    ad.append(t)
                eps = 0.5 * ceiling
                t = next((k + 1 for k, m in enumerate(ok) if abs(m - ceiling) <= eps), None)
                if t is not None:
                    rc.append(t)
            zs.append(mean(w[:min(ZS, len(w))]))
        o = origin[z]
        enc = [iv for iv in ivs if origin[iv[0]] == o]
        forg = None
        if len(enc) >= 2:
            m1 = mean([rewards[i] for i in range(enc[0][1], enc[0][2]) if not is_end(i)])
            m2 = mean([rewards[i] for i in range(enc[1][1], enc[1][2]) if not is_end(i)])
            if m1 is not None and m2 is not None:
                forg = m1 - m2
        policy = []
        for _, (_, s, e) in mine:
            n = tail_count(e - s)
            policy.append(mean([rewards[i] for i in range(e - n, e) if not is_end(i)]))
        settled = []
        for _, (_, s, e) in mine:
            n = tail_count(e - s)
            settled.append(mean(rewards[e - n:e]))
        first = mine[0][1]
        n = tail_count(first[2] - first[1])
        gap = None if ceiling is None else ceiling - mean(rewards[first[2] - n:first[2]])
        ers = [rows[i]["effective_rank"] for i in range(len(rows))
               if labels[i] == z and rows[i].get("effective_rank") is not None]
        out.append({
            "regime_id": z,
            "regime_origin": origin[z],
            "per_configuration_reward": mean(vals),
            "adaptation_speed": mean(ad),
            "recovery_time": mean(rc),
            "forgetting": forg,
            "stability_variance": var(vals),
            "performance_gap": gap,
            "zero_shot_reward": mean(zs),
            "settled_reward": mean(settled),
            "settled_reward_policy": mean([x for x in policy if x is not None])
            if episode_end else None,
            "effective_rank": mean(ers),
        })
    # Values that leave float64 are absent (docs/decisions.md), before any mean over labels.
    for l in out:
        for k, v in l.items():
            if isinstance(v, float) and not math.isfinite(v):
                l[k] = None
    g = gamma_override
    if g is None:
        g = next((r["gamma"] for r in rows if isinstance(r.get("gamma"), (int, float))), 0.99)
    run = {
        "return_discounted": ssum([(g ** i) * r for i, r in enumerate(rewards)]),
        "return_undiscounted": ssum(rewards),
        "n_steps": len(rows), "n_intervals": len(ivs), "n_shifts": len(ivs) - 1,
        "n_labels": len(order),
    }
    carry = [r["invalid_action"] for r in rows if r.get("invalid_action") is not None]
    run["invalid_action_rate"] = (sum(1 for x in carry if x) / len(carry)) if carry else None
    run["solve_rate"] = None if solve is None else \
        sum(1 for r in rows if (r.get("components") or {}).get(solve, 0) > 0) / len(rows)
    ers = [r["effective_rank"] for r in rows if r.get("effective_rank") is not None]
    run["effective_rank_run"] = mean(ers)
    for m in PER_LABEL:
        run[m] = mean([l[m] for l in out if l[m] is not None])
    run["settled_reward_policy"] = mean([l["settled_reward_policy"] for l in out
                                         if l["settled_reward_policy"] is not None])
    run["regret"] = None                 # no reference trajectories
    for k, v in run.items():
        if isinstance(v, float) and not math.isfinite(v):
            run[k] = None
    return out, run


# ------------------------------------------------------------------ statistics (1.6)

def median(xs):
    s = sorted(xs)
    n = len(s)
    return s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2


def iqm(xs):
    s = sorted(xs)
    k = int(math.floor(0.25 * len(s)))
    return mean(s[k:len(s) - k])


def prob_improvement(xs, ys):
    tot = 0.0
    for x in xs:
        for y in ys:
            tot += 1.0 if x > y else (0.5 if x == y else 0.0)
    return tot / (len(xs) * len(ys))


def sign_flip(d):
    n = len(d)
    obs = abs(ssum(d))
    tol = 1e-9 * max(1.0, ssum([abs(x) for x in d]))
    if not math.isfinite(tol):
        return None  # Σ|d| leaves float64: the slack is not a number the test can use
    hit = 0
    for signs in itertools.product((1, -1), repeat=n):
        if abs(ssum([s * x for s, x in zip(signs, d)])) >= obs - tol:
            hit += 1
    return hit / 2 ** n


def wilcoxon(d):
    if all(x == 0 for x in d):
        return None
    import warnings
    import scipy.stats
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(scipy.stats.wilcoxon(d).pvalue)


def bh(ps):
    idx = [i for i, p in enumerate(ps) if p is not None]
    m = len(idx)
    out = [None] * len(ps)
    srt = sorted(idx, key=lambda i: ps[i])
    prev = 1.0
    for rank in range(m, 0, -1):
        i = srt[rank - 1]
        prev = min(prev, ps[i] * m / rank)
        out[i] = min(1.0, prev)
    return out


def families(runs, baseline_name):
    fams = []
    for r in runs:
        if r["family"] not in fams:
            fams.append(r["family"])
    base = baseline_name if baseline_name in fams else ("ppo" if "ppo" in fams else fams[0])
    metrics = SEED_VALUES
    rows = []
    for f in fams:
        mine = [r for r in runs if r["family"] == f]
        theirs = [r for r in runs if r["family"] == base]
        frows = []
        for m in metrics:
            xs = [r["seed_values"][m] for r in mine if r["seed_values"][m] is not None]
            ys = [r["seed_values"][m] for r in theirs if r["seed_values"][m] is not None]
            row = {"family": f, "metric": m, "n": len(xs), "baseline": base}
            # Counts are seed values too (PROTOCOLS 1.6: "null for counts" is their direction).
            xs = [float(x) for x in xs]
            ys = [float(y) for y in ys]
            if xs:
                row.update(mean=mean(xs), std=math.sqrt(var(xs)) if len(xs) >= 2 else None,
                           min=min(xs), max=max(xs), median=median(xs), iqm=iqm(xs))
            else:
                row.update(mean=None, std=None, min=None, max=None, median=None, iqm=None)
            row["ci_null"] = len(xs) < 2
            row["ci_collapses"] = len(xs) >= 2 and len(set(xs)) == 1
            if m == "adaptation_speed":
                mb = mean(ys)
                row["relative_adaptation_advantage"] = None if (mb is None or row["mean"] is None) \
                    else mb - row["mean"]
            # pairs by seed: first run per seed on each side, both values present
            def first_by_seed(rs):
                out = {}
                for r in rs:
                    if r["seed"] is not None and r["seed"] not in out:
                        out[r["seed"]] = r
                return out
            fa, fb = first_by_seed(mine), first_by_seed(theirs)
            d = []
            for s, r in fa.items():
                if s in fb and r["seed_values"][m] is not None and fb[s]["seed_values"][m] is not None:
                    d.append(r["seed_values"][m] - fb[s]["seed_values"][m])
            row["n_pairs"] = len(d)
            row["diff_mean"] = mean(d)
            if len(d) >= 6:
                row["test"] = "wilcoxon"
                row["p_value"] = wilcoxon(d)
                row["min_p"] = None
            elif d:
                row["test"] = "sign_flip"
                row["p_value"] = sign_flip(d)
                row["min_p"] = 2 / 2 ** len(d)
            else:
                row["test"] = None
                row["p_value"] = None
                row["min_p"] = None
            row["prob_improvement"] = prob_improvement(xs, ys) if xs and ys else None
            # A statistic that leaves float64 (a spread of values near 1e308) is absent.
            for k, v in list(row.items()):
                if isinstance(v, float) and not math.isfinite(v):
                    row[k] = None
            frows.append(row)
        adj = bh([r["p_value"] for r in frows])
        for r, a in zip(frows, adj):
            r["p_value_adjusted"] = a
        rows.extend(frows)
    return rows


# ------------------------------------------------------------------ the cases

def trace(run_id, seed, algo, pairs, **extra):
    rows = []
    for i, (z, r) in enumerate(pairs):
        row = {"run_id": run_id, "seed": seed, "algorithm_id": algo, "step": i,
               "regime_id": z, "reward": r}
        row.update(extra)
        rows.append(row)
    return rows


def shifty(k, base=0.5):
    """A small three-interval trace whose numbers depend on k."""
    return [("a", base + 0.1 * k), ("a", base), ("b", 0.1 * k), ("b", 0.3), ("b", 0.2 + 0.05 * k),
            ("a", base - 0.1), ("a", base + 0.2 * k)]


def cases():
    cs = []

    def add(name, objects, flags=None, baseline=None, bound=None, anchor="segment", gamma=None,
            solve=None, exclude=None, episode_end=(), params=None):
        params = params or {}
        for k, flag in (("alpha", "--alpha"), ("epsilon_fraction", "--epsilon-fraction"),
                        ("epsilon_abs_floor", "--epsilon-abs-floor"),
                        ("tail_fraction", "--tail-fraction"),
                        ("zero_shot_window", "--zero-shot-window"), ("window", "--window")):
            if k in params:
                flags = (flags or []) + [flag, str(params[k])]
        cs.append({"name": name, "objects": objects, "flags": flags or [],
                   "_baseline": baseline, "_bound": bound, "_anchor": anchor, "_gamma": gamma,
                   "_solve": solve, "_exclude": exclude or [], "_episode_end": list(episode_end),
                   "_params": params})

    # one seed per family, baseline with two seeds
    add("one_seed_family", {
        "p0.jsonl": trace("p0", 0, "ppo", shifty(0)),
        "p1.jsonl": trace("p1", 1, "ppo", shifty(1)),
        "s0.jsonl": trace("s0", 0, "sac", shifty(2)),
    })
    # the baseline has one seed
    add("baseline_one_seed", {
        "p0.jsonl": trace("p0", 0, "ppo", shifty(0)),
        "s0.jsonl": trace("s0", 0, "sac", shifty(1)),
        "s1.jsonl": trace("s1", 1, "sac", shifty(2)),
        "s2.jsonl": trace("s2", 2, "sac", shifty(3)),
    })
    # all seeds equal: std 0 (a value), CIs collapse, p of zero differences
    add("all_seeds_equal", {
        "p%d.jsonl" % s: trace("p%d" % s, s, "ppo", shifty(1)) for s in range(4)
    } | {"d%d.jsonl" % s: trace("d%d" % s, s, "dqn", shifty(1)) for s in range(4)})
    # IQM with counts not divisible by 4 and ties; 5, 6 and 7 seeds
    for n in (5, 6, 7):
        objs = {}
        for s in range(n):
            k = [0, 1, 1, 2, 2, 2, 3][s]
            objs["p%d.jsonl" % s] = trace("p%d" % s, s, "ppo", shifty(k))
            objs["x%d.jsonl" % s] = trace("x%d" % s, s, "xyz", shifty([1, 1, 0, 3, 2, 2, 0][s]))
        # γ = 1: the discounted return is then the plain sum, so ties among the paired
        # differences are exact in both implementations (with γ^i they hang on the last bit,
        # and the Wilcoxon p-value jumps with them).
        add("iqm_ties_%d_seeds" % n, objs, flags=["--gamma", "1"], gamma=1.0)
    # Wilcoxon: 7 pairs, one zero difference (normal approximation), and 8 pairs with ties
    objs = {}
    for s in range(8):
        objs["p%d.jsonl" % s] = trace("p%d" % s, s, "ppo", shifty(s % 3))
        objs["q%d.jsonl" % s] = trace("q%d" % s, s, "qqq", shifty([0, 2, 2, 1, 0, 3, 1, 4][s]))
    add("wilcoxon_ties_zeros", objs, flags=["--gamma", "1"], gamma=1.0)
    # pairing by seed: a repeated seed pairs its first run; a run without a seed
    # (null: not carried) pairs with nothing but still counts in the family
    add("seed_repeated_or_missing", {
        "p0a.jsonl": trace("p0a", 0, "ppo", shifty(0)),
        "p0b.jsonl": trace("p0b", 0, "ppo", shifty(3)),
        "p1.jsonl": trace("p1", 1, "ppo", shifty(1)),
        "s0.jsonl": trace("s0", 0, "sac", shifty(2)),
        "s1a.jsonl": trace("s1a", 1, "sac", shifty(1)),
        "s1b.jsonl": trace("s1b", 1, "sac", shifty(4)),
        "sx.jsonl": trace("sx", None, "sac", shifty(5)),
    })
    # episode-end rows: dropped from forgetting and the policy's settled reward; an
    # encounter made only of episode ends (forgetting null), a tail made only of episode
    # ends (that interval null), a run whose episode never ended (nothing dropped)
    def ends(pairs, flags):
        rows = trace("x", 0, "x", pairs)
        for r, f in zip(rows, flags):
            r["components"] = {"success": f, "progress": 0.1}
        return rows
    e0 = ends([("a", 0.2), ("a", 1.0), ("b", 0.4), ("b", 0.5), ("b", 1.0), ("a", 1.0),
               ("a", 0.1), ("a", 1.0)], [0, 1, 0, 0, 1, 1, 0, 1])
    e1 = ends([("a", 0.3), ("b", 1.0), ("a", 0.6), ("a", 0.7)], [0, 1, 0, 0])
    e2 = ends([("a", 0.5), ("b", 0.25), ("a", 0.75)], [0, 0, 0])
    for rid, seed, rows in (("e0", 0, e0), ("e1", 1, e1), ("e2", 2, e2)):
        for r in rows:
            r["run_id"], r["seed"], r["algorithm_id"] = rid, seed, "ppo"
    add("episode_ends", {"e0.jsonl": e0, "e1.jsonl": e1, "e2.jsonl": e2},
        flags=["--episode-end", "success"], episode_end=["success"])
    # the window to the end of the run, one-row intervals, and the knobs at their edges
    knobs = {
        "p0.jsonl": trace("p0", 0, "ppo", [("a", 0.5), ("b", 0.1), ("c", 0.9), ("b", 0.3),
                                          ("b", 0.2), ("a", -0.4), ("a", 0.8)]),
        "p1.jsonl": trace("p1", 1, "ppo", shifty(2)),
        "p2.jsonl": trace("p2", 2, "ppo", [("a", -0.5), ("b", -0.25), ("b", -0.75),
                                          ("b", -0.5), ("a", -1.0)]),
    }
    add("post_shift", knobs, params={"window": "post_shift"})
    add("post_shift_tail1_zs1", knobs, params={"window": "post_shift", "tail_fraction": 1.0,
                                                 "zero_shot_window": 1})
    add("alpha1_floor0_frac0", knobs, params={"alpha": 1.0, "epsilon_abs_floor": 0.0,
                                                "epsilon_fraction": 0.0})
    add("tail_0.28_zs_100", knobs, params={"tail_fraction": 0.28, "zero_shot_window": 100})
    add("ceiling_zero", knobs, flags=["--bound", "0", "--anchor", "ceiling"], bound=0.0,
        anchor="ceiling")
    add("ceiling_negative", knobs, flags=["--bound", "-0.5", "--anchor", "ceiling"], bound=-0.5,
        anchor="ceiling")
    # Wilcoxon without zero differences but with tied |d| (exact distribution, SciPy's
    # truncated rank sum), and past 50 pairs (normal approximation)
    objs = {}
    for s_ in range(8):
        objs["p%d.jsonl" % s_] = trace("p%d" % s_, s_, "ppo", shifty(2))
        objs["q%d.jsonl" % s_] = trace("q%d" % s_, s_, "qqq", shifty([0, 4, 1, 3, 0, 4, 3, 1][s_]))
    add("wilcoxon_exact_tied", objs, flags=["--gamma", "1"], gamma=1.0)
    objs = {}
    for s_ in range(51):
        objs["p%02d.jsonl" % s_] = trace("p%d" % s_, s_, "ppo", shifty(s_ % 5))
        objs["q%02d.jsonl" % s_] = trace("q%d" % s_, s_, "qqq", shifty((s_ * 7 + 3) % 6))
    add("wilcoxon_51_pairs", objs, flags=["--gamma", "1"], gamma=1.0)
    # origins: regime_origin set on a later row only, alias_of, both (regime_origin wins),
    # an origin shared by three labels (forgetting = first − second encounter, reported
    # by each), and a label that names itself
    rows = trace("o0", 0, "ppo", [("a", 0.9), ("a", 0.8), ("b", 0.1), ("a2", 0.4), ("a2", 0.5),
                                  ("b2", 0.3), ("b2", 0.2), ("a3", 0.7), ("c", 0.6), ("b", 0.0)])
    rows[4]["regime_origin"] = "a"       # a2: origin on its second row only
    rows[5]["alias_of"] = "b"            # b2: alias_of
    rows[7]["alias_of"] = "zzz"          # a3: regime_origin wins over alias_of
    rows[7]["regime_origin"] = "a"
    rows[8]["regime_origin"] = "c"       # c names itself
    rows2 = trace("o1", 1, "ppo", [("a", 0.2), ("b", 0.4), ("a2", 0.6), ("b", 0.8)])
    rows2[2]["alias_of"] = "a"
    add("origins_and_aliases", {"o0.jsonl": rows, "o1.jsonl": rows2})
    # one-step runs; one-interval runs; one row per label
    add("one_step_runs", {
        "p0.jsonl": trace("p0", 0, "ppo", [("a", 0.5)]),
        "p1.jsonl": trace("p1", 1, "ppo", [("a", 0.25)]),
        "s0.jsonl": trace("s0", 0, "sac", [("a", 0.5), ("b", 1.0)]),
        "s1.jsonl": trace("s1", 1, "sac", [("b", 1.0), ("a", -1.0), ("c", 0.0)]),
    })
    # negative rewards: the segment anchor's A < 0; rewards all equal; all zero
    add("negative_and_flat", {
        "p0.jsonl": trace("p0", 0, "ppo", [("a", -1.0), ("a", -2.0), ("b", -3.0), ("b", -1.0),
                                          ("b", -2.5), ("a", -0.5)]),
        "p1.jsonl": trace("p1", 1, "ppo", [("a", 0.0)] * 3 + [("b", 0.0)] * 3),
        "s0.jsonl": trace("s0", 0, "sac", [("a", 1.0)] * 3 + [("b", 1.0)] * 4 + [("a", 1.0)]),
        "s1.jsonl": trace("s1", 1, "sac", [("a", -0.0)] * 2 + [("b", -0.0)] * 2),
    })
    # a ceiling equal to every reward: performance gap 0, the ceiling anchor
    add("ceiling_equal_rewards", {
        "p0.jsonl": trace("p0", 0, "ppo", [("a", 1.0)] * 3 + [("b", 1.0)] * 3 + [("a", 1.0)] * 2),
        "p1.jsonl": trace("p1", 1, "ppo", [("a", 0.0)] * 3 + [("b", 1.0)] * 3 + [("a", 0.5)] * 2),
    }, flags=["--bound", "1", "--anchor", "ceiling"], bound=1.0, anchor="ceiling")
    # huge and tiny rewards
    add("huge_tiny", {
        "p0.jsonl": trace("p0", 0, "ppo", [("a", 1e300), ("a", 1e300), ("b", -1e300), ("b", 1e-300)]),
        "p1.jsonl": trace("p1", 1, "ppo", [("a", 1e-300), ("a", 2e-300), ("b", 5e-324), ("b", 0.0)]),
    })
    # sums past float64: absent, and the other labels' values still count
    add("overflow", {
        "p0.jsonl": trace("p0", 0, "ppo", [("a", 1.5e308), ("a", 1.5e308), ("b", 1.0), ("b", 0.5)]),
        "p1.jsonl": trace("p1", 1, "ppo", [("a", 1.0), ("a", 0.0), ("b", 1.0), ("b", 0.25)]),
    })
    # the tail of a's first interval overflows: no performance gap (never R_ub - 0)
    add("overflow_gap", {
        "p0.jsonl": trace("p0", 0, "ppo", [("a", 1.5e308)] * 10 + [("b", 0.5)] * 3),
        "p1.jsonl": trace("p1", 1, "ppo", [("a", 1.0)] * 10 + [("b", 0.5)] * 3),
    }, flags=["--bound", "1"], bound=1.0)
    # running means past float64 in a shift-preceded interval: c's adaptation and
    # recovery are absent (they were τ = 2 and 1 found at +Inf); d recovers at τ = 1,
    # before its running sum overflows
    add("overflow_running_mean", {
        "p0.jsonl": trace("p0", 0, "ppo", [("b", 0.5)] * 3 + [("c", 1.5e308)] * 10
                          + [("d", 1.5e308)] * 4),
        "p1.jsonl": trace("p1", 1, "ppo", [("b", 0.5)] * 3 + [("c", 0.25)] * 10
                          + [("d", 0.75)] * 4),
    })
    # steps out of order and repeated; gamma 0 and 1
    rows = trace("p0", 0, "ppo", shifty(1))
    for r, s in zip(rows, [5, 5, 3, 9, 0, 0, 100]):
        r["step"] = s
    add("steps_disorder", {"p0.jsonl": rows, "p1.jsonl": trace("p1", 1, "ppo", shifty(2))})
    add("gamma0", {"p0.jsonl": trace("p0", 0, "ppo", shifty(1)),
                   "p1.jsonl": trace("p1", 1, "ppo", shifty(2))},
        flags=["--gamma", "0"], gamma=0.0)
    add("gamma1", {"p0.jsonl": trace("p0", 0, "ppo", shifty(1)),
                   "p1.jsonl": trace("p1", 1, "ppo", shifty(2))},
        flags=["--gamma", "1"], gamma=1.0)
    # recorded gammas 0 and 1
    add("recorded_gamma", {"p0.jsonl": trace("p0", 0, "ppo", shifty(1), gamma=0),
                           "p1.jsonl": trace("p1", 1, "ppo", shifty(2), gamma=1)})
    # --min-steps empties a family (sac): it has no seeds left
    add("min_steps_empties_family", {
        "p0.jsonl": trace("p0", 0, "ppo", shifty(0)),
        "p1.jsonl": trace("p1", 1, "ppo", shifty(1)),
        "s0.jsonl": trace("s0", 0, "sac", [("a", 1.0), ("b", 0.5)]),
        "s1.jsonl": trace("s1", 1, "sac", [("a", 0.0), ("b", 0.25)]),
    }, flags=["--min-steps", "3"], exclude=["s0", "s1"])
    # --min-steps empties the baseline family
    add("min_steps_empties_baseline", {
        "p0.jsonl": trace("p0", 0, "ppo", [("a", 1.0), ("b", 0.5)]),
        "s0.jsonl": trace("s0", 0, "sac", shifty(0)),
        "s1.jsonl": trace("s1", 1, "sac", shifty(1)),
    }, flags=["--min-steps", "3"], exclude=["p0"])
    # solve rate and invalid actions on degenerate rows
    rows = trace("p0", 0, "ppo", shifty(1))
    for i, r in enumerate(rows):
        r["components"] = {"progress": [0, 1, -1, 0.5, 0, 0, 2][i]}
        if i % 3 == 0:
            r["invalid_action"] = i == 3
    rows2 = trace("p1", 1, "ppo", shifty(2))
    add("solve_invalid", {"p0.jsonl": rows, "p1.jsonl": rows2},
        flags=["--solve-component", "progress"], solve="progress")
    return cs


def expected(c):
    global SEGMENT_ALPHA, CEILING_ALPHA, EPS_FRAC, EPS_FLOOR, TAIL, ZS, WINDOW
    saved = (SEGMENT_ALPHA, CEILING_ALPHA, EPS_FRAC, EPS_FLOOR, TAIL, ZS, WINDOW)
    pm = c["_params"]
    SEGMENT_ALPHA = pm.get("alpha", SEGMENT_ALPHA)
    CEILING_ALPHA = pm.get("alpha", CEILING_ALPHA)
    EPS_FRAC = pm.get("epsilon_fraction", EPS_FRAC)
    EPS_FLOOR = pm.get("epsilon_abs_floor", EPS_FLOOR)
    TAIL = pm.get("tail_fraction", TAIL)
    ZS = pm.get("zero_shot_window", ZS)
    WINDOW = pm.get("window", WINDOW)
    try:
        return expected_with(c)
    finally:
        SEGMENT_ALPHA, CEILING_ALPHA, EPS_FRAC, EPS_FLOOR, TAIL, ZS, WINDOW = saved


def expected_with(c):
    runs = []
    labels = []
    for key in sorted(c["objects"]):
        rows = c["objects"][key]
        out, run = score_run(rows, c["_bound"], c["_anchor"], c["_gamma"], c["_solve"],
                             c["_episode_end"])
        rid = rows[0]["run_id"]
        for l in out:
            labels.append(dict(l, run_id=rid))
        run["run_id"] = rid
        run["excluded"] = rid in c["_exclude"]
        runs.append(run)
        runs[-1]["_agg"] = {"family": rows[0]["algorithm_id"], "seed": rows[0]["seed"],
                            "seed_values": {m: None if run["excluded"] else run[m]
                                            for m in SEED_VALUES}}
    agg = [r.pop("_agg") for r in runs if "_agg" in r]
    fams = families(agg, c["_baseline"]) if agg else []
    case = {k: v for k, v in c.items() if not k.startswith("_")}
    case["expected"] = {"labels": labels, "runs": runs, "families": fams}
    return case


def text(doc):
    # One case a line: small, and a diff names the case that changed.
    return '{"cases": [\n' + ",\n".join(
        json.dumps(c, sort_keys=True, separators=(",", ":")) for c in doc["cases"]) + "\n]}\n"


def main():
    refcheck.main(os.path.join(os.path.dirname(os.path.abspath(__file__)), "edge_cases.json"),
                  lambda: {"cases": [expected(c) for c in cases()]},
                  lambda d: "ok: %d cases" % len(d["cases"]), text=text)


if __name__ == "__main__":
    main()
