#!/usr/bin/env python3
"""Builds of crlbatch (and DuckDB's bare query) side by side on one input, paired.

    /usr/bin/python3 bench/score_ab.py ROUNDS INPUT BIN[,BIN...]

Each BIN is a crlbatch binary (build them with
`go build -trimpath -buildvcs=false -tags "$(bench/buildtags.sh)"` and copy them to
/dev/shm, as bench/peak_ab.sh does), or `duckdb` for bin/duckdbq (DUCKDBQ) over the
JSON Lines objects under INPUT with as many threads as crlbatch's --concurrency
(nproc). A BIN may end in `+env:NAME=VALUE` to run it with that environment
variable set (`/dev/shm/cb+env:GODEBUG=cpu.avx512f=off`).

In each of ROUNDS rounds every BIN scores INPUT once, from the page cache, with the
nightly job's flags (as bench/compare.sh), the order reversed every other round so
that no build always runs first. Wall time is taken around the child
(time.perf_counter), CPU time (user + sys) and peak RSS from its rusage, so there
is no /usr/bin/time and its 10 ms steps. Prints each BIN's medians, and for every
BIN after the first the median of its paired differences from the first (round by
round) and in how many rounds it was lower: on a machine whose speed moves
between runs (docs/performance.md, "The Intel Xeon again"), the paired figures
are the ones to read. Each job must exit 0. Not run in CI.
"""
import glob
import os
import resource
import statistics
import subprocess
import sys
import time

FLAGS = ("--quiet --spec experiment --ceiling by_configuration --episode-end-from-spec "
         "--solve-component progress --group-by algorithm_id --baseline ppo "
         "--bootstrap-seed 0").split()
# BENCH_EXTRA: more crlbatch flags, split at spaces (`--pattern *.parquet` for
# a Parquet sweep); DuckDB's query reads the JSON Lines objects only.
EXTRA = os.environ.get("BENCH_EXTRA", "").split()
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def command(spec, inp, out):
    """The command line and environment of BIN spec."""
    path, _, env_part = spec.partition("+env:")
    env = dict(os.environ)
    if env_part:
        name, _, value = env_part.partition("=")
        env[name] = value
    threads = str(os.cpu_count())
    if path == "duckdb":
        files = sorted(glob.glob(os.path.join(inp, "**", "*.jsonl*"), recursive=True))
        if not files:
            sys.exit(f"score_ab: no JSON Lines objects under {inp}")
        dq = os.environ.get("DUCKDBQ", os.path.join(ROOT, "bin", "duckdbq"))
        return [dq, "-threads", threads] + files, env
    return [path, "score", inp, "--out", out, "--concurrency", threads] + FLAGS + EXTRA, env


def warm(files):
    """Reads files into the page cache, untimed: the machine may reclaim some of
    their pages between rounds (docs/decisions.md, round 51)."""
    for f in files:
        with open(f, "rb") as fh:
            while fh.read(1 << 20):
                pass


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__.split("\n\n")[1])
    rounds, inp, bins = int(sys.argv[1]), sys.argv[2], sys.argv[3].split(",")
    out = os.path.join(os.environ.get("TMPDIR", "/tmp"), "crlbatch-score-ab-out")
    res = {b: [] for b in bins}
    objects = sorted(f for f in glob.glob(os.path.join(inp, "**", "*"), recursive=True) if os.path.isfile(f))
    for r in range(rounds):
        for b in bins if r % 2 == 0 else bins[::-1]:
            subprocess.run(["rm", "-rf", out], check=True)
            warm(objects)
            cmd, env = command(b, inp, out)
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            t0 = time.perf_counter()
            p = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            wall = time.perf_counter() - t0
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            if p.returncode != 0:
                sys.exit(f"score_ab: {b} exited {p.returncode}: {p.stderr.decode()[-2000:]}")
            cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
            # ru_maxrss of RUSAGE_CHILDREN is the largest child's so far: the
            # job's own peak only when it is the largest yet, so it is not shown.
            res[b].append((wall, cpu))
    subprocess.run(["rm", "-rf", out], check=True)
    base = bins[0]
    print(f"{rounds} rounds on {inp}, order reversed every other round; medians")
    for b in bins:
        walls = [w for w, _ in res[b]]
        cpus = [c for _, c in res[b]]
        line = f"{b:40s} wall {statistics.median(walls):7.3f} s  CPU {statistics.median(cpus):7.3f} s"
        if b != base:
            dc = [res[b][i][1] - res[base][i][1] for i in range(rounds)]
            dw = [res[b][i][0] - res[base][i][0] for i in range(rounds)]
            line += (f"  paired vs {base}: CPU {statistics.median(dc):+.3f} s "
                     f"({sum(d < 0 for d in dc)}/{rounds} lower), wall {statistics.median(dw):+.3f} s "
                     f"({sum(d < 0 for d in dw)}/{rounds} lower)")
        print(line)


if __name__ == "__main__":
    main()
