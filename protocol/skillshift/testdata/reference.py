#!/usr/bin/python3
# Independent Python reference for the skillshift numbers (PROTOCOLS.md section 5).
#
# Regenerate (deterministic, byte-identical output):
#   cd /work/main && /usr/bin/python3 protocol/skillshift/testdata/reference.py
# which writes protocol/skillshift/testdata/reference_cases.json next to this script.
#   /usr/bin/python3 protocol/skillshift/testdata/reference.py --check
# recomputes everything, asserts the published AWM row passes the identity check, and that
# the JSON on disk is identical to what would be written; it writes nothing.
#
# Written from PROTOCOLS.md section 5 and the package documentation of
# protocol/skillshift (the orders of summation), with the standard library only. Plain
# float64 arithmetic with sums accumulated one term at a time; the rounding of the
# identity check uses the decimal module on repr(x), Python's shortest round-trip form.
#
# Rules as implemented here:
#  * grid = sites in order of first appearance x conditions in order of first appearance;
#    cells site-major.
#  * per cell: SR = (100*successes)/tasks; AS = (sum of steps)/tasks; ASC = (sum of
#    skill_calls)/k over the k tasks carrying skill_calls; SFR = (100*sum failures)/(sum
#    calls) over those tasks, null when the sum of calls is 0 or when a task with calls > 0
#    lacks skill_failures; ASC/SFR null for the whole run when no task carries skill_calls.
#  * a marginal = (sequential sum of its present cell values)/count: website over
#    conditions in order, condition over sites in order, overall over all cells site-major.
#    Expected sites/conditions absent from the data get a null marginal.
#  * SFR invocations of a marginal = sum of the invocations of the cells it averages;
#    unstable = present and invocations < 30.
#  * identity: only with a complete grid and no null cell; means of the grid's website
#    marginals and condition marginals (sequential sums), and O/A; each rounded
#    ROUND_HALF_UP to 0.01 on Decimal(repr(x)); fail when two differ by more than 0.01.

import json
import os
import random
import sys
from decimal import Decimal, ROUND_HALF_UP

EXPECTED_SITES = ["gitlab", "magento", "wordpress"]
EXPECTED_CONDITIONS = ["src", "src-perc", "src-exec", "tgt", "tgt-perc", "tgt-exec"]
METRICS = ["SR", "AS", "ASC", "SFR"]
MIN_STABLE = 30


def hundredths(x):
    q = Decimal(repr(float(x))).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)
    return int(q.scaleb(2))


def seq_mean(xs):
    s = 0.0
    for x in xs:
        s += x
    return s / len(xs)


def score(tasks):
    sites, conds = [], []
    for t in tasks:
        if t["site"] not in sites:
            sites.append(t["site"])
        if t["condition"] not in conds:
            conds.append(t["condition"])
    any_calls = any(t.get("skill_calls") is not None for t in tasks)
    cells = []
    missing = []
    for s in sites:
        for c in conds:
            rows = [t for t in tasks if t["site"] == s and t["condition"] == c]
            cell = {"site": s, "condition": c, "tasks": len(rows),
                    "successes": sum(1 for t in rows if t["success"])}
            if not rows:
                missing.append([s, c])
                for m in METRICS:
                    cell[m] = None
                cell["invocations"] = None
                cell["sfr_unstable"] = False
                cells.append(cell)
                continue
            cell["SR"] = 100.0 * cell["successes"] / len(rows)
            steps = 0.0
            for t in rows:
                steps += float(t["steps"])
            cell["AS"] = steps / len(rows)
            carrying = [t for t in rows if t.get("skill_calls") is not None]
            cell["sfr_unstable"] = False
            if not any_calls or not carrying:
                cell["ASC"] = cell["SFR"] = cell["invocations"] = None
            else:
                calls = 0.0
                fails = 0.0
                fail_missing = False
                for t in carrying:
                    calls += float(t["skill_calls"])
                    if t.get("skill_failures") is not None:
                        fails += float(t["skill_failures"])
                    elif t["skill_calls"] > 0:
                        fail_missing = True
                cell["ASC"] = calls / len(carrying)
                cell["invocations"] = calls
                if calls == 0 or fail_missing:
                    cell["SFR"] = None
                else:
                    cell["SFR"] = 100.0 * fails / calls
                    cell["sfr_unstable"] = calls < MIN_STABLE
            cells.append(cell)
    nc = len(conds)
    complete = not missing
    missing_expected = []
    for s in EXPECTED_SITES:
        for c in EXPECTED_CONDITIONS:
            if not any(t["site"] == s and t["condition"] == c for t in tasks):
                missing_expected.append([s, c])

    metrics = {}
    reason_keys = set()
    for m in METRICS:
        if m in ("ASC", "SFR") and not any_calls:
            reason_keys.add(m)
            nulls = lambda keys: [{"key": k, "value": None, "invocations": None, "unstable": False, "cells": 0} for k in keys]
            metrics[m] = {
                "null": True,
                "websites": nulls(sites + [s for s in EXPECTED_SITES if s not in sites]),
                "conditions": nulls(conds + [c for c in EXPECTED_CONDITIONS if c not in conds]),
                "overall": nulls(["overall"])[0],
                "identity": {"status": "skipped"},
            }
            continue
        for cell in cells:
            if cell[m] is None:
                reason_keys.add("%s.cells.%s.%s" % (m, cell["site"], cell["condition"]))

        def marg(key, group, section):
            vals = [c[m] for c in group if c[m] is not None]
            out = {"key": key, "cells": len(vals), "unstable": False, "invocations": None}
            if not vals:
                out["value"] = None
                reason_keys.add("%s.%s" % (m, section) if section == "overall" else "%s.%s.%s" % (m, section, key))
                return out
            out["value"] = seq_mean(vals)
            if m == "SFR":
                inv = 0.0
                for c in group:
                    if c[m] is not None:
                        inv += c["invocations"]
                out["invocations"] = inv
                out["unstable"] = inv < MIN_STABLE
            return out

        def absent(key, section):
            reason_keys.add("%s.%s.%s" % (m, section, key))
            return {"key": key, "value": None, "invocations": None, "unstable": False, "cells": 0}

        ws = [marg(s, cells[i * nc:(i + 1) * nc], "websites") for i, s in enumerate(sites)]
        ws += [absent(s, "websites") for s in EXPECTED_SITES if s not in sites]
        cs = [marg(c, [cells[i * nc + j] for i in range(len(sites))], "conditions") for j, c in enumerate(conds)]
        cs += [absent(c, "conditions") for c in EXPECTED_CONDITIONS if c not in conds]
        ov = marg("overall", cells, "overall")
        if not complete or any(c[m] is None for c in cells):
            identity = {"status": "skipped"}
        else:
            means = [seq_mean([w["value"] for w in ws[:len(sites)]]),
                     seq_mean([c["value"] for c in cs[:len(conds)]]),
                     ov["value"]]
            h = [hundredths(x) for x in means]
            ok = all(abs(h[i] - h[j]) <= 1 for i in range(3) for j in range(i + 1, 3))
            identity = {"status": "pass" if ok else "fail",
                        "websites": means[0], "conditions": means[1], "overall": means[2],
                        "hundredths": h}
        metrics[m] = {"null": False, "websites": ws, "conditions": cs, "overall": ov, "identity": identity}
    return {
        "sites": sites,
        "conditions": conds,
        "complete": complete,
        "missing_cells": missing,
        "missing_expected": missing_expected,
        "cells": cells,
        "metrics": metrics,
        "reason_keys": sorted(reason_keys),
    }


# ----------------------------------------------------------------------------- generator

def gen_case(rng, i):
    sites = list(EXPECTED_SITES)
    conds = list(EXPECTED_CONDITIONS)
    if rng.random() < 0.2:
        sites.append("reddit")
    if rng.random() < 0.15:
        conds.append("mixed")
    if rng.random() < 0.15:
        sites.remove(rng.choice(sites))
    if rng.random() < 0.15:
        conds.remove(rng.choice(conds))
    skill_mode = rng.choice(["all", "all", "some", "none", "failmissing", "heavy"])
    hole_p = rng.choice([0.0, 0.0, 0.0, 0.08])
    fractional_steps = rng.random() < 0.3
    tasks = []
    for s in sites:
        for c in conds:
            if rng.random() < hole_p:
                continue
            for k in range(rng.randint(1, 9)):
                t = {"uid": "%s.%s.%d" % (s, c, k), "site": s, "condition": c,
                     "success": rng.random() < 0.4}
                if fractional_steps:
                    t["steps"] = round(rng.uniform(0, 25), rng.choice([1, 2, 3]))
                else:
                    t["steps"] = rng.randint(0, 30)
                carry = skill_mode in ("all", "heavy", "failmissing") or (skill_mode == "some" and rng.random() < 0.5)
                if carry:
                    if skill_mode == "heavy":
                        calls = rng.randint(0, 12)
                    else:
                        calls = rng.choice([0, 0, 0, 1, 1, 2, 3])
                    t["skill_calls"] = calls
                    if skill_mode == "failmissing" and calls > 0 and rng.random() < 0.1:
                        pass
                    else:
                        t["skill_failures"] = rng.randint(0, calls)
                tasks.append(t)
    rng.shuffle(tasks)
    return {"name": "random_%02d_%s" % (i, skill_mode), "tasks": tasks}


def fixed_cases():
    out = []
    # Unequal task counts per cell: macro and task-weighted overall differ.
    tasks = []
    for s in EXPECTED_SITES:
        for j, c in enumerate(EXPECTED_CONDITIONS):
            n = 1 + (j + len(s)) % 5
            for k in range(n):
                tasks.append({"uid": "%s.%d" % (s, k), "site": s, "condition": c,
                              "success": (k + j) % 3 == 0, "steps": k + j,
                              "skill_calls": k % 2, "skill_failures": 0})
    out.append({"name": "fixed_unequal_counts", "tasks": tasks})
    # One task only.
    out.append({"name": "fixed_one_task", "tasks": [
        {"uid": "a", "site": "gitlab", "condition": "tgt-exec", "success": False, "steps": 10,
         "skill_calls": 1, "skill_failures": 1}]})
    # No skill calls anywhere.
    out.append({"name": "fixed_no_skill_calls", "tasks": [
        {"uid": "a", "site": "gitlab", "condition": "src", "success": True, "steps": 4},
        {"uid": "b", "site": "magento", "condition": "src", "success": False, "steps": 7}]})
    return out


def rounding_cases(rng):
    xs = [0.125, 2.675, 1.005, 0.005, 0.015, 0.045, 35.285, 35.28666666666667, 16.9, 0.0,
          -0.125, -0.001, -2.675, 1e22, 1e-7, 5e-324, 123456.785, 99.995, 100.0,
          0.1 + 0.2, 1.0 / 3.0, 2.0 / 3.0, 8.345, 1.115]
    for _ in range(200):
        k = rng.randint(0, 10 ** 6)
        xs.append(k / 1000.0)
        xs.append(k / 1000.0 + 0.0005)
        a, b = rng.randint(0, 10 ** 5), rng.randint(1, 999)
        xs.append(a / b)
    return [{"x": x, "hundredths": hundredths(x)} for x in xs]


def build():
    rng = random.Random(20260502)
    cases = fixed_cases() + [gen_case(rng, i) for i in range(20)]
    for c in cases:
        c["expected"] = score(c["tasks"])
    return {"cases": cases, "rounding": rounding_cases(rng)}


def self_check():
    # The published AWM SR row: the three means round to 35.29, 35.28, 35.29.
    ws = [17.71, 25.49, 62.66]
    cs = [50.07, 43.35, 22.45, 41.28, 37.65, 16.90]
    h = [hundredths(seq_mean(ws)), hundredths(seq_mean(cs)), hundredths(35.29)]
    assert h == [3529, 3528, 3529], h
    assert hundredths(2.675) == 268 and hundredths(0.125) == 13 and hundredths(-0.125) == -13


def render(doc):
    # One case and one rounding case per line, so that a regenerated file reviews as a diff.
    dump = lambda x: json.dumps(x, separators=(",", ":"))
    lines = ['{"cases": [']
    lines += [dump(c) + ("," if i < len(doc["cases"]) - 1 else "") for i, c in enumerate(doc["cases"])]
    lines.append('], "rounding": [')
    lines += [dump(r) + ("," if i < len(doc["rounding"]) - 1 else "") for i, r in enumerate(doc["rounding"])]
    lines.append("]}")
    return "\n".join(lines) + "\n"


def main():
    self_check()
    here = os.path.dirname(os.path.abspath(__file__))
    path = os.path.join(here, "reference_cases.json")
    text = render(build())
    if "--check" in sys.argv[1:]:
        with open(path) as f:
            if f.read() != text:
                sys.exit("reference_cases.json differs from what reference.py computes")
        print("ok")
        return
    with open(path, "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
