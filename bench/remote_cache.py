#!/usr/bin/env python3
"""The nightly job with its --cache on S3 a round trip away, two builds side by side.

    bench/remote_cache.py ROUNDS BASE_BINARY NEW_BINARY

bench/cache.sh measures the cache on a local folder, where an entry's read or write is CPU
work. On S3 each is a request: this script puts the cache on versitygw (S3, the pinned
server of .ci/install-services, .tools/bin/versitygw) behind bench/latencyproxy, which
holds every request for a fixed delay before forwarding it, and times each build's three
nightly jobs with that cache, from the page cache and with the input on the local disk (so
that only the cache is remote):

  cold      an empty cache prefix: every object decoded and its entries written
  warm      the same prefix after 1 of the 20 objects (5 %) was replaced by the same
            object of bench/cache.sh's other sweep
  nochange  the same prefix again, nothing changed

With BENCH_REMOTE_INPUT=1 the input is on the same S3 server too (its files hard-linked into
versitygw's bucket folder, the changed object replaced there), so that the jobs also read the
objects' attributes (one HEAD each, to key their entries) and the changed object through
the proxy.

For each delay of BENCH_DELAYS (default "0ms 20ms 50ms"; tens of milliseconds is what a
request to S3 takes from a machine in the same region), ROUNDS rounds, the builds' order
swapped every round, each build on a prefix of its own. With BENCH_CONNECT_RTTS=N the
first request on each new connection waits N delays more (the proxy's -connect-delay: 2
for a TCP and a TLS handshake; default 0). Wall time by time.perf_counter around the
child, CPU from wait4's rusage, requests and the connections that carried them as the
proxy counted them. Prints medians. Build both binaries as `make build` does (go build -tags "$(bench/buildtags.sh)").

Settings (environment): BENCH_DIR, bench/cache.sh's sweeps (/tmp/crlbatch-bench-cache:
jsonl/ and alt/; run bench/cache.sh once first); BENCH_AB_DIR, the work folder
(/tmp/crlbatch-remote-cache); VERSITYGW (.tools/bin/versitygw). Not run in CI.
"""
import os
import resource
import shutil
import socket
import statistics
import subprocess
import sys
import time
import urllib.error
import urllib.request

if len(sys.argv) != 4:
    sys.exit("usage: bench/remote_cache.py ROUNDS BASE_BINARY NEW_BINARY")
rounds = int(sys.argv[1])
bins = {"base": os.path.abspath(sys.argv[2]), "new": os.path.abspath(sys.argv[3])}
root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
src = os.environ.get("BENCH_DIR", "/tmp/crlbatch-bench-cache")
work = os.environ.get("BENCH_AB_DIR", "/tmp/crlbatch-remote-cache")
gw = os.environ.get("VERSITYGW", os.path.join(root, ".tools", "bin", "versitygw"))
delays = os.environ.get("BENCH_DELAYS", "0ms 20ms 50ms").split()
connect_rtts = int(os.environ.get("BENCH_CONNECT_RTTS", "0"))
remote_input = os.environ.get("BENCH_REMOTE_INPUT") == "1"
changed = "der/der-s0.jsonl"
for d in ("jsonl", "alt"):
    if not os.path.isfile(os.path.join(src, d, changed)):
        sys.exit(f"remote_cache: {src}/{d}/{changed} is missing: run bench/cache.sh once first")
if not os.access(gw, os.X_OK):
    sys.exit(f"remote_cache: {gw} is missing: run .ci/install-services")

# The nightly job's settings (configs/nightly.yaml) without input and out, as bench/cache.sh.
FLAGS = ["--quiet", "--spec", "experiment", "--ceiling", "by_configuration", "--episode-end-from-spec",
         "--solve-component", "progress", "--group-by", "algorithm_id", "--baseline", "ppo", "--bootstrap-seed", "0"]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


shutil.rmtree(work, ignore_errors=True)
os.makedirs(os.path.join(work, "s3", "bench"))
proxy_bin = os.path.join(work, "latencyproxy")
subprocess.run(["go", "build", "-o", proxy_bin, "./bench/latencyproxy"], cwd=root, check=True)
gw_port = free_port()
env = dict(os.environ, AWS_ACCESS_KEY_ID="testkey", AWS_SECRET_ACCESS_KEY="testsecret123",
           AWS_REGION="us-east-1", AWS_EC2_METADATA_DISABLED="true")
server = subprocess.Popen([gw, "--port", f"127.0.0.1:{gw_port}", "--access", "testkey", "--secret", "testsecret123",
                           "--region", "us-east-1", "--quiet", "posix", os.path.join(work, "s3")],
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
procs = [server]


def stop():
    for p in procs:
        p.kill()
        p.wait()


def count(addr, what="count"):
    with urllib.request.urlopen(f"http://{addr}/__latencyproxy/{what}") as r:
        return int(r.read())


def run(binary, inp, out, cache_url):
    shutil.rmtree(out, ignore_errors=True)
    t = time.perf_counter()
    p = subprocess.Popen([binary, "score", inp, "--out", out, "--cache", cache_url] + FLAGS, env=env,
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, err = p.communicate()
    wall = time.perf_counter() - t
    if p.returncode != 0:
        stop()
        sys.exit(f"remote_cache: {binary} score failed: {err.decode()}")
    return wall


def timed(binary, inp, out, cache_url, addr):
    """One job: wall seconds, CPU seconds (the children's rusage before and after), requests,
    connections."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    count(addr)
    count(addr, "conns")
    wall = run(binary, inp, out, cache_url)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, count(addr), count(addr, "conns")


try:
    for _ in range(100):
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{gw_port}/")
        except urllib.error.HTTPError:
            break  # 403: up
        except OSError:
            time.sleep(0.05)
    subprocess.run(["find", src + "/jsonl", src + "/alt", "-type", "f", "-exec", "cat", "{}", "+"],
                   stdout=subprocess.DEVNULL, check=True)
    print(f"load before: {os.getloadavg()}; input {'on S3' if remote_input else 'local'}; "
          f"a new connection's first request waits {connect_rtts} delays more")
    print(f"{'delay':>6} {'job':9} {'build':5} {'wall s':>7} {'CPU s':>6} {'requests':>8} {'conns':>5}")
    for delay in delays:
        connect = "%dms" % (connect_rtts * int(delay.removesuffix("ms")))
        proxy = subprocess.Popen([proxy_bin, "-upstream", f"http://127.0.0.1:{gw_port}", "-delay", delay,
                                  "-connect-delay", connect],
                                 stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        procs.append(proxy)
        addr = proxy.stdout.readline().strip()
        res = {}
        for r in range(rounds):
            order = ["base", "new"] if r % 2 == 0 else ["new", "base"]
            for name in order:
                q = (f"?endpoint=http://{addr}&use_path_style=true&region=us-east-1"
                     "&request_checksum_calculation=when_required&response_checksum_validation=when_required")
                inp = os.path.join(work, f"in-{name}")
                if remote_input:
                    inp = os.path.join(work, "s3", "bench", f"in-{name}")
                shutil.rmtree(inp, ignore_errors=True)
                shutil.copytree(os.path.join(src, "jsonl"), inp, copy_function=os.link)
                cache_url = f"s3://bench/{name}-{delay}-{r}" + q
                out = os.path.join(work, "out")
                job_in = f"s3://bench/in-{name}" + q if remote_input else inp
                res.setdefault((name, "cold"), []).append(timed(bins[name], job_in, out, cache_url, addr))
                os.remove(os.path.join(inp, changed))
                shutil.copyfile(os.path.join(src, "alt", changed), os.path.join(inp, changed))
                res.setdefault((name, "warm"), []).append(timed(bins[name], job_in, out, cache_url, addr))
                res.setdefault((name, "nochange"), []).append(timed(bins[name], job_in, out, cache_url, addr))
        for job in ("cold", "warm", "nochange"):
            for name in ("base", "new"):
                xs = res[(name, job)]
                print(f"{delay:>6} {job:9} {name:5} {statistics.median(x[0] for x in xs):7.3f} "
                      f"{statistics.median(x[1] for x in xs):6.2f} {statistics.median(x[2] for x in xs):8.0f} "
                      f"{statistics.median(x[3] for x in xs):5.0f}")
        proxy.kill()
        proxy.wait()
        procs.remove(proxy)
    print(f"load after: {os.getloadavg()}")
finally:
    stop()
