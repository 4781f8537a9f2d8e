#!/usr/bin/env python3
"""Nightly reruns over logs that grow: every object of the sweep appended to, side by side.

    bench/append.py ROUNDS BINARY [BASE_BINARY]

The sweep of bench/cache.sh (BENCH_DIR/jsonl: 20 objects, 1 GB; run bench/cache.sh once
first) stands for a sweep whose runs are still training: the first night each growing
object (all of them, or the first BENCH_GROWING in key order) holds its lines up to the
first line end past (1 - BENCH_SHARE) of its bytes (0.05 by default), and by the next
night the rest has been appended to it (opened for appending and written: the same file, a
new size and modification time); the other objects are the same both nights. Each of ROUNDS rounds, from the page
cache:

  1. writes yesterday's objects and scores them into an empty cache (not timed);
  2. appends the rest to every object, then, in an order that alternates round to round:
       warm:        the job with yesterday's cache (every object "appended": its earlier
                    bytes checked against the cache and its new lines decoded);
       cold-cache:  the job into an empty cache (every object decoded, its entry written);
       cold:        the job without a cache;
       base-warm:   with BASE_BINARY, its job with a cache it filled itself the night
                    before (a build without appended objects decodes each grown one
                    whole);
     each with the nightly job's flags, timed here (wall: perf_counter around the child;
     CPU: user + system from wait4; peak RSS).
The warm jobs' result files are compared with the cold job's byte for byte, and the warm
job's manifest must say "appended" for every growing object and "cache" for the others, every
round. Prints the medians and the
ratios cold / warm (and base-warm / warm). Not run in CI.

Settings (environment): BENCH_DIR (/tmp/crlbatch-bench-cache), BENCH_APPEND_DIR, where the
work folder, caches and outputs go (/tmp/crlbatch-append); BENCH_PROFILE=1: each warm job
also writes a CPU profile, BENCH_APPEND_DIR/warm-R.pprof (`go tool pprof -top BINARY
BENCH_APPEND_DIR/warm-*.pprof` sums them).
"""
import filecmp
import json
import os
import shutil
import statistics
import subprocess
import sys
import time

if len(sys.argv) not in (3, 4):
    sys.exit("usage: bench/append.py ROUNDS BINARY [BASE_BINARY]")
rounds = int(sys.argv[1])
binary = os.path.abspath(sys.argv[2])
base = os.path.abspath(sys.argv[3]) if len(sys.argv) == 4 else None
share = float(os.environ.get("BENCH_SHARE", "0.05"))
src = os.path.join(os.environ.get("BENCH_DIR", "/tmp/crlbatch-bench-cache"), "jsonl")
work = os.environ.get("BENCH_APPEND_DIR", "/tmp/crlbatch-append")
if not os.path.isdir(src):
    sys.exit(f"append: {src} is missing: run bench/cache.sh once first")
# The nightly job's settings (configs/nightly.yaml), as bench/cache.sh runs them.
flags = ("--quiet --overwrite --spec experiment --ceiling by_configuration --episode-end-from-spec "
         "--solve-component progress --group-by algorithm_id --baseline ppo --bootstrap-seed 0").split()
results = ["runs.parquet", "intervals.parquet", "run_summary.parquet", "families.parquet", "curves.parquet",
           "report.md", "report.html"]

objects = []  # (relative path, its length yesterday, its length today); read from src when written
for root, _, names in os.walk(src):
    for n in sorted(names):
        path = os.path.join(root, n)
        objects.append([os.path.relpath(path, src), 0, os.path.getsize(path)])
objects.sort()
if not objects:
    sys.exit(f"append: no objects in {src}")
growing = int(os.environ.get("BENCH_GROWING", len(objects)))
for k, o in enumerate(objects):
    o[1] = o[2]
    if k < growing:
        with open(os.path.join(src, o[0]), "rb") as f:
            data = f.read()  # not kept: the jobs' peak RSS would count it (fork)
        o[1] = data.index(b"\n", int(len(data) * (1 - share))) + 1

shutil.rmtree(work, ignore_errors=True)
indir = os.path.join(work, "in")


def yesterday():
    for rel, cut, _ in objects:
        path = os.path.join(indir, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(os.path.join(src, rel), "rb") as s, open(path, "wb") as f:
            f.write(s.read(cut))


def grow():
    for rel, cut, size in objects:
        if cut < size:
            with open(os.path.join(src, rel), "rb") as s, open(os.path.join(indir, rel), "ab") as f:
                s.seek(cut)
                f.write(s.read())


def job(name, cache):
    """One scoring job into work/out-NAME: wall seconds, CPU seconds, peak RSS in MiB."""
    out = os.path.join(work, "out-" + name)
    args = [base if name.startswith("base-") else binary, "score", indir, "--out", out] + flags
    if name == "warm" and os.environ.get("BENCH_PROFILE") == "1":
        args += ["--cpuprofile", os.path.join(work, f"warm-{len(times['warm']) + 1}.pprof")]
    if cache:
        if name not in ("warm", "base-warm"):
            shutil.rmtree(cache, ignore_errors=True)  # an empty cache
        args += ["--cache", cache]
    t = time.perf_counter()
    p = subprocess.Popen(args, stdout=subprocess.DEVNULL)
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t
    if status != 0:
        sys.exit(f"append: the {name} job failed (wait status {status})")
    return wall, ru.ru_utime + ru.ru_stime, ru.ru_maxrss / 1024


times = {"warm": [], "cold-cache": [], "cold": [], "base-warm": []}
grown = sum(size - cut for _, cut, size in objects)
total = sum(size for _, _, size in objects)
print(f"{len(objects)} objects, {total / 1e6:.0f} MB; {min(growing, len(objects))} of them grow, {grown / 1e6:.1f} MB "
      f"({100 * grown / total:.1f} % of the sweep) appended by the second night; {rounds} rounds")
subprocess.run(["uptime"])
for r in range(rounds):
    yesterday()
    job("yesterday", os.path.join(work, "cache-yesterday"))
    if base:
        job("base-yesterday", os.path.join(work, "cache-base-yesterday"))
    grow()
    order = ["warm", "base-warm", "cold-cache", "cold"]
    if not base:
        order.remove("base-warm")
    if r % 2:
        order.reverse()
    for name in order:
        cache = {"warm": "cache-yesterday", "base-warm": "cache-base-yesterday", "cold-cache": "cache-cold", "cold": ""}[name]
        times[name].append(job(name, os.path.join(work, cache) if cache else ""))
    for w in order:
        for f in results if w.endswith("warm") else []:
            if not filecmp.cmp(os.path.join(work, "out-" + w, f), os.path.join(work, "out-cold", f), shallow=False):
                sys.exit(f"append: round {r + 1}: the {w} job's {f} differs from the cold job's")
    reads = [o["read"] for o in json.load(open(os.path.join(work, "out-warm", "manifest.json")))["objects"]]
    want = ["appended" if cut < size else "cache" for _, cut, size in objects]
    if reads != want:
        sys.exit(f"append: round {r + 1}: the warm job read its objects as {reads}, want {want}")
subprocess.run(["uptime"])


def med(name, i):
    return statistics.median(t[i] for t in times[name])


print(f"{'job (medians)':<40} {'wall s':>8} {'CPU s':>8} {'peak MiB':>9}")
for name, what in (("cold", "cold, no cache"), ("cold-cache", "cold, --cache (fills it)"),
                   ("base-warm", "base: warm, grown objects decoded whole"),
                   ("warm", "warm: the growing objects appended to")):
    if times[name]:
        print(f"{what:<40} {med(name, 0):8.3f} {med(name, 1):8.3f} {med(name, 2):9.0f}")
for name in ("cold-cache", "cold", "base-warm") if base else ("cold-cache", "cold"):
    print(f"{name} / warm: {med(name, 0) / med('warm', 0):.2f}x wall, {med(name, 1) / med('warm', 1):.2f}x CPU")
print("the warm job's result files equal the cold job's, and each object read as it should be, every round")
