#!/usr/bin/env python3
"""The warm nightly rerun of bench/cache.sh, two builds side by side, timed to the microsecond.

    bench/warm_ab.py ROUNDS BASE_BINARY NEW_BINARY

Build both binaries as `make build` does, with the tags bench/buildtags.sh prints (go build
-tags "$(bench/buildtags.sh)"): without disable_grpc_modules package initialisation alone
takes ~7 ms more, as much as the changes this script is for. bench/cache.sh's binaries are.

/usr/bin/time reports wall time in steps of 10 ms, too coarse for a job of about 0.14 s
whose changes are worth a few milliseconds. This script times each job itself (wall:
time.perf_counter around the child; CPU: user + system from wait4's rusage) and runs the
two builds' warm jobs in ROUNDS alternating rounds, the order swapped every round. Each
build first scores the sweep cold into a cache of its own (its snapshot); each warm job
then starts from a fresh copy of its build's snapshot after 1 of the 20 objects
(der/der-s0.jsonl, 5 %) was replaced by the same object of the sweep generated with
another seed, as bench/cache.sh does. It prints each build's medians and the median of
the paired differences (base - new), with how many rounds went each way. Not run in CI.

Settings (environment): BENCH_DIR, the sweeps bench/cache.sh writes
(/tmp/crlbatch-bench-cache: jsonl/ and alt/; run bench/cache.sh once first);
BENCH_AB_DIR, where the work folder, caches and outputs go (/tmp/crlbatch-warm-ab).
"""
import os
import shutil
import statistics
import subprocess
import sys
import time

if len(sys.argv) != 4:
    sys.exit("usage: bench/warm_ab.py ROUNDS BASE_BINARY NEW_BINARY")
rounds = int(sys.argv[1])
bins = {"base": os.path.abspath(sys.argv[2]), "new": os.path.abspath(sys.argv[3])}
src = os.environ.get("BENCH_DIR", "/tmp/crlbatch-bench-cache")
work = os.environ.get("BENCH_AB_DIR", "/tmp/crlbatch-warm-ab")
changed = "der/der-s0.jsonl"
for d in ("jsonl", "alt"):
    if not os.path.isfile(os.path.join(src, d, changed)):
        sys.exit(f"warm_ab: {src}/{d}/{changed} is missing: run bench/cache.sh once first")
# The nightly job's settings (configs/nightly.yaml), as bench/cache.sh runs them.
flags = ("--quiet --overwrite --spec experiment --ceiling by_configuration --episode-end-from-spec "
         "--solve-component progress --group-by algorithm_id --baseline ppo --bootstrap-seed 0").split()

shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
subprocess.run(["cp", "-al", os.path.join(src, "jsonl"), os.path.join(work, "in")], check=True)


def job(build, cache):
    """One scoring job: wall seconds, CPU seconds, peak RSS in KiB."""
    out = os.path.join(work, "out-" + build)
    t = time.perf_counter()
    p = subprocess.Popen([bins[build], "score", os.path.join(work, "in"), "--out", out, "--cache", cache] + flags,
                         stdout=subprocess.DEVNULL)
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t
    if status != 0:
        sys.exit(f"warm_ab: {bins[build]} failed (wait status {status})")
    return wall, ru.ru_utime + ru.ru_stime, ru.ru_maxrss


for build in bins:
    job(build, os.path.join(work, "snapshot-" + build))
os.remove(os.path.join(work, "in", changed))
shutil.copy(os.path.join(src, "alt", changed), os.path.join(work, "in", changed))

print(f"load before: {open('/proc/loadavg').read().strip()}")
runs = {build: [] for build in bins}
for r in range(rounds):
    for build in (("base", "new") if r % 2 == 0 else ("new", "base")):
        cache = os.path.join(work, "cache")
        shutil.rmtree(cache, ignore_errors=True)
        shutil.copytree(os.path.join(work, "snapshot-" + build), cache)
        runs[build].append(job(build, cache))
print(f"load after:  {open('/proc/loadavg').read().strip()}")
for build in bins:
    wall, cpu, rss = (statistics.median(x[i] for x in runs[build]) for i in range(3))
    print(f"{build:<5} {bins[build]}: wall {wall:.4f} s, CPU {cpu:.4f} s, peak RSS {rss / 1024:.1f} MiB (medians of {rounds})")
dwall = [b[0] - n[0] for b, n in zip(runs["base"], runs["new"])]
dcpu = [b[1] - n[1] for b, n in zip(runs["base"], runs["new"])]
print(f"paired, base - new: wall {statistics.median(dwall) * 1e3:+.1f} ms ({sum(d > 0 for d in dwall)} of {rounds} rounds "
      f"new faster), CPU {statistics.median(dcpu) * 1e3:+.1f} ms ({sum(d > 0 for d in dcpu)} of {rounds} new less)")
shutil.rmtree(work, ignore_errors=True)
