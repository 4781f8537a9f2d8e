#!/usr/bin/python3
# Independent Python reference for the skyfall per-trace metrics (PROTOCOLS.md 1.3-1.5).
#
# Regenerate (deterministic, byte-identical output):
#   cd /work/main && /usr/bin/python3 protocol/skyfall/testdata/reference.py
# which writes protocol/skyfall/testdata/reference_cases.json next to this script.
#   /usr/bin/python3 protocol/skyfall/testdata/reference.py --check
# recomputes everything, asserts the worked example of PROTOCOLS 1.4 and that the JSON on
# disk is identical to what would be written, and writes nothing.
#
# Written from PROTOCOLS.md ("Two rules", 1.3, 1.4, 1.5) and seeds/000_* only, without
# looking at the Go implementation. Plain float64 arithmetic, sums accumulated sequentially
# in row order, no numpy.
#
# Resolved choices (see also the README-style notes in the report):
#  * interval `index` = 0-based position of the interval in the trace; `encounter_index` =
#    0-based position among the encounters (intervals) of the interval's origin;
#    `occurrence` = 0-based position among the intervals of the same label.
#  * origin of a label = first non-null `regime_origin` over its rows in time order, else
#    first non-null `alias_of` over its rows, else the label (not transitive).
#  * `epsilon` (absolute tolerance) is used only by the ceiling anchor; the segment anchor
#    uses `epsilon_fraction` and `epsilon_abs_floor`. The ceiling band has no floor.
#  * ceiling-anchor recovery tolerance default is 0.5*R_ub,k computed literally (no abs).
#  * the generator never combines anchor=ceiling with no ceiling (behaviour unspecified).
#  * label-level adaptation_speed / recovery_time / zero_shot_reward / settled_reward(_policy)
#    are means (floats) of the non-null per-interval values, in interval time order.
#  * `gamma`: params.gamma if not null, else the first row whose `gamma` is a number, else 0.99.
#  * regret: Σ (ref_t − r_t), each difference computed then added sequentially.

import json
import math
import os
import random
import sys

DEFAULTS = {
    "anchor": "segment",
    "window": "segment",
    "alpha": None,
    "epsilon": None,
    "epsilon_fraction": 0.30,
    "epsilon_abs_floor": 0.005,
    "tail_fraction": 0.2,
    "zero_shot_window": 10,
    "gamma": None,
    "ceiling": None,
    "episode_end_components": [],
    "solve_component": None,
}


# ----------------------------------------------------------------------------- arithmetic

def tail_count(x, length):
    return max(1, math.ceil(x * length - 1e-9))


def fsum_seq(xs):
    s = 0.0
    for x in xs:
        s += x
    return s


def mean(xs):
    if len(xs) == 0:
        return None
    return fsum_seq(xs) / len(xs)


def mean_non_null(xs):
    return mean([x for x in xs if x is not None])


def sample_variance(xs):
    n = len(xs)
    if n < 2:
        return None
    m = fsum_seq(xs) / n
    s = 0.0
    for x in xs:
        d = x - m
        s += d * d
    return s / (n - 1)


def running_means(rs):
    out = []
    s = 0.0
    for i, r in enumerate(rs):
        s += r
        out.append(s / (i + 1))
    return out


def is_number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


# ----------------------------------------------------------------------------- the metrics

def ceiling_of(params, label):
    c = params["ceiling"]
    if c is None:
        return None
    if isinstance(c, dict):
        if label not in c:
            raise ValueError("ceiling map misses label %r" % label)
        return float(c[label])
    return float(c)


def adaptation(window, params, rub):
    rbar = running_means(window)
    if params["anchor"] == "segment":
        alpha = 0.9 if params["alpha"] is None else params["alpha"]
        a = max(rbar)
        thr = alpha * a
        for t, m in enumerate(rbar, start=1):
            if m >= thr:
                return t
        return len(window)
    alpha = 0.5 if params["alpha"] is None else params["alpha"]
    if rub is None:
        return None
    thr = alpha * rub
    for t, m in enumerate(rbar, start=1):
        if m >= thr:
            return t
    return None


def recovery(window, params, rub):
    rbar = running_means(window)
    if params["anchor"] == "segment":
        n = tail_count(params["tail_fraction"], len(window))
        a = mean(window[len(window) - n:])
        band = max(params["epsilon_fraction"] * abs(a), params["epsilon_abs_floor"])
        for t, m in enumerate(rbar, start=1):
            if abs(m - a) <= band:
                return t
        return None
    if rub is None:
        return None
    eps = 0.5 * rub if params["epsilon"] is None else params["epsilon"]
    for t, m in enumerate(rbar, start=1):
        if abs(m - rub) <= eps:
            return t
    return None


def compute(rows, params_in, reference):
    params = dict(DEFAULTS)
    params.update(params_in)
    L = len(rows)
    assert L >= 1
    rewards = [float(r["reward"]) for r in rows]
    zs = [r["regime_id"] for r in rows]
    ee = list(params["episode_end_components"] or [])

    def ee_row(i):
        comps = rows[i].get("components") or {}
        for c in ee:
            v = comps.get(c)
            if is_number(v) and v != 0:
                return True
        return False

    # labels in order of first appearance, and origins
    labels = []
    for z in zs:
        if z not in labels:
            labels.append(z)
    origin = {}
    for k in labels:
        idx = [i for i in range(L) if zs[i] == k]
        o = None
        for i in idx:
            v = rows[i].get("regime_origin")
            if v is not None:
                o = v
                break
        if o is None:
            for i in idx:
                v = rows[i].get("alias_of")
                if v is not None:
                    o = v
                    break
        origin[k] = k if o is None else o

    # intervals
    bounds = []
    s = 0
    for i in range(1, L + 1):
        if i == L or zs[i] != zs[s]:
            bounds.append((s, i))
            s = i
    enc_count = {}
    occ_count = {}
    intervals = []
    for j, (a, b) in enumerate(bounds):
        k = zs[a]
        o = origin[k]
        own = rewards[a:b]
        rub = ceiling_of(params, k)
        n_tail = tail_count(params["tail_fraction"], b - a)
        tail_idx = list(range(b - n_tail, b))
        tail_mean = mean([rewards[i] for i in tail_idx])
        if ee:
            tail_pol = mean([rewards[i] for i in tail_idx if not ee_row(i)])
        else:
            tail_pol = None
        iv = {
            "label": k,
            "origin": o,
            "index": j,
            "encounter_index": enc_count.get(o, 0),
            "occurrence": occ_count.get(k, 0),
            "start_row": a,
            "end_row": b,
            "n_steps": b - a,
            "mean": mean(own),
            "variance": sample_variance(own),
            "n_tail": n_tail,
            "tail_mean": tail_mean,
            "tail_policy_mean": tail_pol,
            "adaptation_speed": None,
            "recovery_time": None,
            "zero_shot_reward": None,
            "window_end_row": None,
        }
        enc_count[o] = enc_count.get(o, 0) + 1
        occ_count[k] = occ_count.get(k, 0) + 1
        if j > 0:
            wend = b if params["window"] == "segment" else L
            if params["window"] not in ("segment", "post_shift"):
                raise ValueError("bad window")
            window = rewards[a:wend]
            iv["window_end_row"] = wend
            iv["adaptation_speed"] = adaptation(window, params, rub)
            iv["recovery_time"] = recovery(window, params, rub)
            d = min(params["zero_shot_window"], len(window))
            iv["zero_shot_reward"] = mean(window[:d])
        intervals.append(iv)

    # forgetting per origin
    forgetting = {}
    for o in dict.fromkeys(origin[k] for k in labels):
        encs = [iv for iv in intervals if iv["origin"] == o]
        if len(encs) < 2:
            forgetting[o] = None
            continue
        ms = []
        for iv in encs[:2]:
            ms.append(mean([rewards[i] for i in range(iv["start_row"], iv["end_row"]) if not ee_row(i)]))
        if ms[0] is None or ms[1] is None:
            forgetting[o] = None
        else:
            forgetting[o] = ms[0] - ms[1]

    out_labels = []
    for k in labels:
        ivs = [iv for iv in intervals if iv["label"] == k]
        shifted = [iv for iv in ivs if iv["index"] > 0]
        rows_k = [i for i in range(L) if zs[i] == k]
        rk = [rewards[i] for i in rows_k]
        rub = ceiling_of(params, k)
        er = [rows[i].get("effective_rank") for i in rows_k]
        out_labels.append({
            "label": k,
            "origin": origin[k],
            "n_steps": len(rk),
            "n_intervals": len(ivs),
            "per_configuration_reward": mean(rk),
            "adaptation_speed": mean_non_null([iv["adaptation_speed"] for iv in shifted]),
            "recovery_time": mean_non_null([iv["recovery_time"] for iv in shifted]),
            "forgetting": forgetting[origin[k]],
            "stability_variance": sample_variance(rk),
            "stability_variance_per_interval": [iv["variance"] for iv in ivs],
            "performance_gap": None if rub is None else rub - ivs[0]["tail_mean"],
            "zero_shot_reward": mean_non_null([iv["zero_shot_reward"] for iv in shifted]),
            "settled_reward": mean([iv["tail_mean"] for iv in ivs]),
            "settled_reward_policy": mean_non_null([iv["tail_policy_mean"] for iv in ivs]) if ee else None,
            "effective_rank": mean([float(v) for v in er if is_number(v)]),
            "upper_bound": rub,
        })

    # per run
    if params["gamma"] is not None:
        gamma = float(params["gamma"])
    else:
        gamma = 0.99
        for r in rows:
            if is_number(r.get("gamma")):
                gamma = float(r["gamma"])
                break
    disc = 0.0
    for i, r in enumerate(rewards):
        disc += (gamma ** i) * r
    carrying = [r["invalid_action"] for r in rows if "invalid_action" in r and r["invalid_action"] is not None]
    inval = None if not carrying else sum(1 for v in carrying if v is True) / len(carrying)
    sc = params["solve_component"]
    if sc is None:
        solve = None
    else:
        solved = 0
        for r in rows:
            v = (r.get("components") or {}).get(sc)
            if is_number(v) and v > 0:
                solved += 1
        solve = solved / L
    if reference is None:
        regret = None
    else:
        regret = 0.0
        for t in range(min(len(reference), L)):
            regret += float(reference[t]) - rewards[t]
    run = {
        "return_discounted": disc,
        "return_undiscounted": fsum_seq(rewards),
        "gamma_used": gamma,
        "invalid_action_rate": inval,
        "solve_rate": solve,
        "regret": regret,
        "reference_length_mismatch": None if reference is None else len(reference) != L,
        "effective_rank_run": mean([float(r["effective_rank"]) for r in rows if is_number(r.get("effective_rank"))]),
        "n_steps": L,
        "n_intervals": len(intervals),
        "n_shifts": len(intervals) - 1,
        "n_labels": len(labels),
        "labels": labels,
    }
    return {"labels": out_labels, "intervals": intervals, "run": run}


# ----------------------------------------------------------------------------- hand-built cases

def rows_from(rewards, labels, **per_row):
    rows = []
    for i, (r, z) in enumerate(zip(rewards, labels)):
        row = {"reward": r, "regime_id": z}
        for key, f in per_row.items():
            v = f(i)
            if v is not _ABSENT:
                row[key] = v
        rows.append(row)
    return rows


_ABSENT = object()


def worked_rows():
    rewards = [0.8] * 10 + [0.1, 0.9, 0.9] + [0.6] * 7 + [0.5] * 10
    labels = ["a"] * 10 + ["b"] * 10 + ["a_again"] * 10
    return rows_from(rewards, labels,
                     regime_origin=lambda i: "a" if labels[i] == "a_again" else None)


def hand_cases():
    cases = []

    def add(name, rows, params=None, reference=None, note=""):
        cases.append({"name": name, "note": note, "rows": rows,
                      "params": params or {}, "reference": reference})

    add("worked_example", worked_rows(), note="PROTOCOLS 1.4 worked example, default params")
    add("worked_example_post_shift", worked_rows(), {"window": "post_shift"})
    add("worked_example_ceiling_map", worked_rows(),
        {"anchor": "ceiling", "ceiling": {"a": 1.0, "b": 0.7, "a_again": 0.9}})
    add("worked_example_ceiling_scalar_eps", worked_rows(),
        {"anchor": "ceiling", "ceiling": 1.0, "epsilon": 0.45, "alpha": 0.6, "gamma": 0.9},
        reference=[0.8] * 30)

    neg = [-1.0, -2.0, -3.0, -3.5, -4.25] + [-0.5, -0.75, -1.125, -1.5, -2.0625, -2.5, -3.0]
    negl = ["p"] * 5 + ["q"] * 7
    add("negative_never_crosses_segment", rows_from(neg, negl),
        note="running mean decreasing and negative: segment adaptation = window length")
    add("negative_never_crosses_ceiling", rows_from(neg, negl),
        {"anchor": "ceiling", "ceiling": 0.5}, reference=[0.0] * 5,
        note="ceiling never reached: adaptation and recovery null")

    sr = [0.3, -0.2, 0.7, 0.7, 0.0, -0.4, 1.25, 0.05]
    sl = ["a", "b", "a", "c", "a", "b", "d", "a"]
    add("single_row_intervals", rows_from(sr, sl, effective_rank=lambda i: [None, 3.5, _ABSENT, 2.0, 4.0, None, _ABSENT, 1.5][i]),
        note="one-row intervals: per-interval variance null")
    add("single_row_intervals_post_shift_tail1", rows_from(sr, sl),
        {"window": "post_shift", "tail_fraction": 1.0, "zero_shot_window": 3})
    add("single_row_trace", [{"reward": 0.42, "regime_id": "only", "gamma": 0.5,
                              "invalid_action": False, "effective_rank": None}],
        {"solve_component": "work", "episode_end_components": ["bonus"], "ceiling": 1.0},
        reference=[1.0, 2.0])

    # aliases: regime_origin, alias_of, regime_origin wins over alias_of, first non-null
    # regime_origin wins, not transitive.
    al_r = [0.9, 0.8, 0.85, 0.4, 0.45, 0.5, 0.7, 0.72, 0.3, 0.35, 0.6, 0.65, 0.2, 0.25]
    al_l = ["a", "a", "a", "b", "b", "b", "a2", "a2", "b2", "b2", "c", "c", "c2", "c2"]

    def al_origin(i):
        z = al_l[i]
        if z == "a2":
            return [None, "a"][i - 6]
        if z == "c":
            return "zz" if i == 11 else None
        return _ABSENT

    def al_alias(i):
        z = al_l[i]
        if z == "b2":
            return "b"
        if z == "c":
            return "b"  # overridden by regime_origin zz
        if z == "c2":
            return "b2"  # not transitive: origin b2, not b
        return _ABSENT
    add("aliases", rows_from(al_r, al_l, regime_origin=al_origin, alias_of=al_alias),
        note="a2 via regime_origin on its 2nd row; b2 via alias_of; c via regime_origin zz "
             "(beats alias_of b); c2 alias_of b2 (origin b2, not b)")

    # a label recurring three times
    rr = ([0.5, 0.6, 0.7, 0.75, 0.8] + [0.1, 0.2] + [0.6, 0.65, 0.7] +
          [0.0, 0.05, 0.1, 0.15] + [0.55, 0.6, 0.9])
    rl = ["a"] * 5 + ["b"] * 2 + ["a"] * 3 + ["c"] * 4 + ["a"] * 3
    add("label_recurring_three_times", rows_from(rr, rl), {"tail_fraction": 0.28})

    # episode-end components emptying an encounter and a tail
    er = [0.2, 0.3, 1.0, 0.1, 0.15, 0.9, 0.25, 0.3, 1.2, 0.4, 0.45, 0.5]
    el = ["a"] * 3 + ["b"] * 3 + ["a2"] * 3 + ["b"] * 3
    comps = [
        {"goal": 1.0}, {"goal": 2.0, "work": 0.5}, {"timeout": -1.0},   # a: all rows episode-end
        {"goal": 0.0, "work": 1.0}, {}, {"goal": 0.0, "timeout": 0.0},  # b1: clean
        {"work": 0.0}, {"goal": 0}, {"timeout": 3.5, "work": 2.0},     # a2: tail emptied (n=1)
        {"timeout": 0.0}, {"goal": -0.5}, {"goal": 0.0, "work": -1.0},
    ]
    eer = rows_from(er, el, components=lambda i: comps[i],
                    alias_of=lambda i: "a" if el[i] == "a2" else _ABSENT,
                    invalid_action=lambda i: [True, False, _ABSENT][i % 3])
    add("episode_end_empties", eer,
        {"episode_end_components": ["goal", "timeout"], "solve_component": "work",
         "ceiling": {"a": 1.0, "b": 1.0, "a2": 1.0}},
        note="first encounter of origin a is all episode-end rows: forgetting null; a2's tail "
             "is emptied: contributes null to settled_reward_policy")
    add("episode_end_one_component", eer,
        {"episode_end_components": ["timeout"], "solve_component": "goal", "window": "post_shift"})

    # 0.28 * 25 = 7.000000000000001 must give n = 7
    t25 = [round(0.01 * ((i * 7) % 25), 2) for i in range(25)]
    add("tail_0_28_of_25", rows_from([0.1] * 4 + t25, ["x"] * 4 + ["y"] * 25),
        {"tail_fraction": 0.28}, note="n = 7 not 8")

    # constant rewards where r̄ may differ from r by an ulp; explicit alpha 1.0
    cr = [0.1] * 10 + [0.7] * 9 + [0.1] * 6
    add("constant_alpha_one", rows_from(cr, ["u"] * 10 + ["v"] * 9 + ["u"] * 6),
        {"alpha": 1.0, "epsilon_fraction": 0.0, "epsilon_abs_floor": 0.0})

    # gamma: first numeric gamma on the rows (the first rows carry null)
    gr = rows_from([1.0, 0.5, -0.25, 2.0, 1.5], ["g", "g", "h", "h", "g"],
                   gamma=lambda i: [None, _ABSENT, 0.8, 0.5, 0.8][i])
    add("gamma_first_numeric", gr, reference=[1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0])
    add("gamma_override", gr, {"gamma": 0.95}, reference=[2.0, 0.0])
    return cases


# ----------------------------------------------------------------------------- random cases

def rnd_reward(rng, level, t, ramp, sd, prev):
    u = rng.random()
    if prev is not None and u < 0.12:
        return prev                                   # repeated value
    v = level * (1.0 - math.exp(-(t + 1) / ramp)) + rng.gauss(0.0, sd)
    if u < 0.22:
        v = round(v, rng.choice([1, 2, 3]))
    if v == 0.0:
        v = 0.0                                       # never -0.0
    return v


def random_case(seed):
    rng = random.Random(seed)
    size_mode = rng.random()
    if size_mode < 0.15:
        n_rows = rng.randint(1, 6)
    elif size_mode < 0.6:
        n_rows = rng.randint(7, 60)
    else:
        n_rows = rng.randint(61, 300)
    n_labels = rng.randint(1, 5)
    base = ["r%d" % i for i in range(n_labels)]

    # alias labels: some labels point at an earlier one (alias_of or regime_origin)
    alias_kind = {}
    alias_target = {}
    for i, k in enumerate(base):
        if i > 0 and rng.random() < 0.45:
            alias_kind[k] = rng.choice(["alias_of", "regime_origin", "regime_origin_late", "both"])
            alias_target[k] = rng.choice(base[:i] + ["ghost"])

    # interval sequence
    if n_labels == 1:
        m = 1
    else:
        m = rng.randint(1, min(n_rows, 14))
    seq = []
    for j in range(m):
        choices = [k for k in base if not seq or k != seq[-1]]
        # bias towards recurrences
        if seq and rng.random() < 0.4:
            rec = [k for k in dict.fromkeys(seq) if k != seq[-1]]
            if rec:
                choices = rec
        seq.append(rng.choice(choices))
    # lengths: positive, summing to n_rows
    cuts = sorted(rng.sample(range(1, n_rows), m - 1)) if m > 1 else []
    lens = [b - a for a, b in zip([0] + cuts, cuts + [n_rows])]

    levels = {k: rng.uniform(-0.6, 1.4) for k in base}
    ee_names = rng.choice([[], [], ["goal"], ["goal", "timeout"], ["timeout"]])
    solve = rng.choice([None, "work", "goal"])
    inv_mode = rng.choice(["absent", "absent", "some"])
    er_mode = rng.choice(["absent", "absent", "some", "all"])
    gamma_mode = rng.choice(["none", "none", "all", "late"])
    row_gamma = rng.choice([0.9, 0.95, 0.999, 0.5])
    comp_rate = rng.choice([0.0, 0.05, 0.15, 0.4])

    rows = []
    t_global = 0
    for k, ln in zip(seq, lens):
        level = levels[k] + rng.gauss(0.0, 0.15)
        ramp = rng.choice([0.5, 1.0, 3.0, 10.0])
        sd = rng.choice([0.0, 0.01, 0.1, 0.3])
        prev = None
        for t in range(ln):
            r = rnd_reward(rng, level, t, ramp, sd, prev)
            prev = r
            row = {"reward": r, "regime_id": k}
            kind = alias_kind.get(k)
            if kind == "alias_of":
                row["alias_of"] = alias_target[k]
            elif kind == "regime_origin":
                row["regime_origin"] = alias_target[k]
            elif kind == "regime_origin_late":
                row["regime_origin"] = alias_target[k] if rng.random() < 0.5 else None
            elif kind == "both":
                row["alias_of"] = "r0"
                row["regime_origin"] = alias_target[k]
            elif rng.random() < 0.1:
                row["regime_origin"] = None
            if comp_rate > 0 or solve is not None:
                comps = {}
                for c in ["goal", "timeout", "work", "other"]:
                    u = rng.random()
                    if u < comp_rate:
                        comps[c] = rng.choice([1.0, -1.0, 0.5, 2.25, round(rng.uniform(-1, 2), 6)])
                    elif u < 0.6:
                        comps[c] = 0.0
                if comps or rng.random() < 0.5:
                    row["components"] = comps
            if inv_mode == "some" and rng.random() < 0.7:
                row["invalid_action"] = rng.random() < 0.2
            if er_mode == "all":
                row["effective_rank"] = round(rng.uniform(1.0, 64.0), 4)
            elif er_mode == "some":
                u = rng.random()
                if u < 0.3:
                    row["effective_rank"] = rng.uniform(1.0, 64.0)
                elif u < 0.5:
                    row["effective_rank"] = None
            if gamma_mode == "all":
                row["gamma"] = row_gamma
            elif gamma_mode == "late" and t_global >= n_rows // 2:
                row["gamma"] = row_gamma if t_global > n_rows // 2 else None
            rows.append(row)
            t_global += 1

    labels = list(dict.fromkeys(seq))
    anchor = "ceiling" if rng.random() < 0.35 else "segment"
    cmode = rng.choice(["none", "scalar", "map"]) if anchor == "segment" else rng.choice(["scalar", "map"])
    if cmode == "none":
        ceiling = None
    elif cmode == "scalar":
        ceiling = round(rng.uniform(0.05, 1.6), rng.choice([2, 6, 12]))
    else:
        ceiling = {k: rng.uniform(0.05, 1.6) for k in labels}
    params = {
        "anchor": anchor,
        "window": rng.choice(["segment", "segment", "post_shift"]),
        "alpha": rng.choice([None, None, 0.5, 0.8, 0.95, 1.0]),
        "epsilon": (rng.choice([None, None, 0.05, 0.2]) if anchor == "ceiling" else None),
        "epsilon_fraction": rng.choice([0.30, 0.30, 0.30, 0.1, 0.5]),
        "epsilon_abs_floor": rng.choice([0.005, 0.005, 0.005, 0.0, 0.05]),
        "tail_fraction": rng.choice([0.2, 0.2, 0.28, 0.1, 1.0]),
        "zero_shot_window": rng.choice([10, 10, 3]),
        "gamma": rng.choice([None, None, 0.9, 0.97]),
        "ceiling": ceiling,
        "episode_end_components": ee_names,
        "solve_component": solve,
    }
    refmode = rng.choice(["none", "shorter", "equal", "longer"])
    if refmode == "none":
        reference = None
    else:
        rl = {"shorter": rng.randint(1, n_rows), "equal": n_rows,
              "longer": n_rows + rng.randint(1, 20)}[refmode]
        if refmode == "shorter" and n_rows > 1:
            rl = rng.randint(1, n_rows - 1)
        reference = [rng.uniform(-0.5, 1.5) for _ in range(rl)]
    return {"name": "random_%03d" % seed, "note": "random.Random(%d)" % seed,
            "rows": rows, "params": params, "reference": reference}


# ----------------------------------------------------------------------------- driver

def build():
    cases = hand_cases() + [random_case(s) for s in range(60)]
    out = []
    for c in cases:
        params = dict(DEFAULTS)
        params.update(c["params"])
        out.append({
            "name": c["name"],
            "note": c["note"],
            "input": {"rows": c["rows"], "params": params, "reference": c["reference"]},
            "expected": compute(c["rows"], params, c["reference"]),
        })
    return {
        "generator": "protocol/skyfall/testdata/reference.py",
        "tolerance": {"relative": 1e-9, "absolute": 1e-12},
        "cases": out,
    }


def check_worked(doc):
    case = next(c for c in doc["cases"] if c["name"] == "worked_example")
    lab = {x["label"]: x for x in case["expected"]["labels"]}

    def f(v, spec):
        return "--" if v is None else format(v, spec)
    lines = []
    for k in ("a", "b", "a_again"):
        r = lab[k]
        lines.append(f"{k:<8} J = {f(r['per_configuration_reward'], '.4f')}"
                     f"   adapt = {f(r['adaptation_speed'], '.0f')}"
                     f"   recover = {f(r['recovery_time'], '.0f')}"
                     f"   forget = {f(r['forgetting'], '+.4f')}"
                     f"   variance = {f(r['stability_variance'], '.4f')}")
    want = [
        "a        J = 0.8000   adapt = --   recover = --   forget = +0.3000   variance = 0.0000",
        "b        J = 0.6100   adapt = 3   recover = 2   forget = --   variance = 0.0477",
        "a_again  J = 0.5000   adapt = 1   recover = 1   forget = +0.3000   variance = 0.0000",
    ]
    assert lines == want, "\n".join(lines)
    return lines


def dumps(doc):
    return json.dumps(doc, sort_keys=True, indent=1, allow_nan=False) + "\n"


def main():
    doc = build()
    for line in check_worked(doc):
        print(line, file=sys.stderr)
    text = dumps(doc)
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "reference_cases.json")
    if "--check" in sys.argv[1:]:
        with open(path) as fh:
            on_disk = fh.read()
        if on_disk != text:
            print("reference_cases.json is stale", file=sys.stderr)
            sys.exit(1)
        print("ok: %d cases" % len(doc["cases"]), file=sys.stderr)
        return
    with open(path, "w") as fh:
        fh.write(text)
    print("wrote %s (%d cases)" % (path, len(doc["cases"])), file=sys.stderr)


if __name__ == "__main__":
    main()
