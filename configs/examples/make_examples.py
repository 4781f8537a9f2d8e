#!/usr/bin/python3
"""Writes the small bundled examples of the record protocols.

Regenerate with:  /usr/bin/python3 configs/examples/make_examples.py
(from the repository root; deterministic: the same bytes every time).
"""
import json, os, random

HERE = os.path.dirname(os.path.abspath(__file__))


def write(path, rows):
    path = os.path.join(HERE, path)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        for r in rows:
            f.write(json.dumps(r, separators=(",", ":")) + "\n")


def safecrl():
    rng = random.Random(4)
    for fam, drop in (("ppo_lag", 0.25), ("cpo", 0.1)):
        for seed in range(3):
            rows, ep = [], 0
            level = {"reach": 0.0, "push": 0.0, "pick": 0.0}
            for task in ("reach", "push", "pick", "reach", "push"):
                if level[task] > 0:
                    level[task] *= 1 - drop
                for i in range(30):
                    level[task] += (1 - level[task]) * 0.08
                    ret = round(100 * level[task] + rng.gauss(0, 3), 3)
                    cost = round(max(0.0, rng.gauss(5 * (1 - level[task]), 1)), 3)
                    row = {"run_id": f"{fam}-s{seed}", "seed": seed, "algorithm_id": fam, "task": task,
                           "episode": ep, "return": ret, "cost": cost, "success": rng.random() < level[task]}
                    rows.append(row)
                    ep += 1
            write(f"safecrl/{fam}/{fam}-s{seed}.jsonl", rows)


def contilab():
    rng = random.Random(3)
    T = 3
    for bench in ("split_cifar", "perm_mnist"):
        for fam, keep in (("ewc", 0.8), ("er", 0.9), ("finetune", 0.5)):
            for seed in range(2):
                rid = f"{bench}-{fam}-s{seed}"
                base = {"run_id": rid, "seed": seed, "algorithm_id": fam, "benchmark": bench, "scenario": "task-il"}
                rows = []
                for j in range(T):
                    rows.append(dict(base, kind="initial", eval_task=j, acc=round(0.1 + rng.random() * 0.02, 4)))
                    rows.append(dict(base, kind="joint", eval_task=j, acc=round(0.95 - 0.02 * j, 4)))
                for i in range(T):
                    for j in range(T):
                        if j <= i:
                            acc = 0.9 * keep ** (i - j) + rng.gauss(0, 0.01)
                        else:
                            acc = 0.1 + rng.random() * 0.05
                        rows.append(dict(base, kind="matrix", after_task=i, eval_task=j, acc=round(acc, 4)))
                step = 0
                for t in range(T):
                    for s in range(10):
                        for k in range(T):
                            if k < t:
                                acc = 0.9 * keep ** ((s + 1) / 10) * keep ** (t - k - 1)
                            elif k == t:
                                acc = 0.1 + 0.8 * (s + 1) / 10
                            else:
                                acc = 0.1
                            rows.append(dict(base, kind="stream", step=step, train_task=t, eval_task=k,
                                             acc=round(acc + rng.gauss(0, 0.005), 4)))
                        step += 100
                for t in range(T):
                    for b in range(5):
                        rows.append(dict(base, kind="curve", task=t, batch=b, acc=round(0.1 + 0.15 * b + rng.gauss(0, 0.01), 4)))
                    rows.append(dict(base, kind="diag", name="effective_rank", task=t, value=round(40 - 3 * t * (1 - keep) + rng.random(), 3)))
                write(f"contilab/{bench}/{fam}-s{seed}.jsonl", rows)


def skillshift():
    rng = random.Random(2)
    sites = ("gitlab", "magento", "wordpress")
    conds = ("src", "src-perc", "src-exec", "tgt", "tgt-perc", "tgt-exec")
    for method, skill in (("AWM", True), ("ReAct", False)):
        rows, uid = [], 0
        for site in sites:
            for cond in conds:
                n = 4 + (uid % 5)
                for _ in range(n):
                    p = 0.5 - 0.05 * conds.index(cond) + (0.15 if site == "wordpress" else 0)
                    row = {"method": method, "uid": f"{site}-{uid}", "site": site, "condition": cond,
                           "success": rng.random() < p, "steps": rng.randint(3, 25)}
                    if skill:
                        calls = rng.randint(0, 6)
                        row["skill_calls"] = calls
                        row["skill_failures"] = rng.randint(0, calls)
                    rows.append(row)
                    uid += 1
        write(f"skillshift/{method}.jsonl", rows)


safecrl()
contilab()
skillshift()
