#!/usr/bin/env bash
# --cache and Parquet input side by side in one run (issue 15). Not run in CI.
#
#   bench/cache.sh                                 # 1 GB sweep, 3 rounds
#   BENCH_BYTES=200000000 BENCH_ROUNDS=5 bench/cache.sh
#   BENCH_BASE=main bench/cache.sh                 # and a build of main beside it
#   BENCH_CEILING=per_step bench/cache.sh          # a ceiling from the spec alone
#
# 1. Generates with `crlbatch synth` (fixed seed) a sweep of BENCH_BYTES of
#    JSONL under BENCH_DIR/jsonl (4 families x 5 seeds = 20 objects, per-step
#    extras), its Parquet form with `crlbatch convert` (BENCH_DIR/parquet),
#    and a copy in which 5 % of the objects (1 of 20) are replaced by the
#    same objects generated with another seed (BENCH_DIR/alt) between the
#    cold and the warm run.
# 2. In each of BENCH_ROUNDS rounds, from the page cache, alternating:
#      cold, no cache:   score work
#      cold, --cache:    score work --cache C (C emptied first: every
#                        object decoded and its entry written)
#      warm, --cache:    score work --cache C after 5 % of its objects
#                        changed (95 % of the objects from C)
#      parquet:          score parquet --pattern '*.parquet'
#      duckdb:           DuckDB's bare read_ndjson query over the JSONL
#                        (bin/duckdbq, as bench/compare.sh runs it: GROUP BY
#                        run_id, regime_id; count, avg and var_samp of
#                        reward), with SET threads equal to crlbatch's
#                        --concurrency (nproc); skipped when DUCKDBQ
#                        (default bin/duckdbq, `make bench-duckdbq`) is
#                        missing
#    each crlbatch job with the nightly job's flags (BENCH_CEILING replaces
#    its --ceiling by_configuration, whose per-label ceilings pool the rows
#    of every run, so that a changed object moves them and every run is
#    scored again), timed by /usr/bin/time (wall, user+sys CPU, peak RSS).
#    With BENCH_BASE (a git revision), the
#    binary built from it runs its own cold (--cache) and warm jobs in the
#    same rounds, with a cache of its own (base-cold-cache, base-warm-cache).
# 3. Prints the median of each, and the ratios: cold/warm, JSONL/Parquet
#    and DuckDB/Parquet, in wall and CPU time. The machine's load (uptime) is printed before and
#    after: on a shared machine wall times move, CPU times less so.
# 4. With BENCH_WARM_ROUNDS=N (and BENCH_BASE), then N more rounds of the
#    warm job alone, this build's and the base's alternating, each from a
#    copy of a cache its build filled cold once (so every warm job finds
#    the same entries): the warm job is a tenth of the cold one, and on a
#    shared machine the main rounds' few warm samples move more than the
#    builds differ. Prints each build's median and least warm CPU and the
#    median of the paired differences (base - this build). With
#    BENCH_PROFILE=1 each of those warm jobs also writes a CPU profile,
#    BENCH_DIR/profiles/{warm,base-warm}-R.pprof (`go tool pprof -top
#    BENCH_DIR/crlbatch BENCH_DIR/profiles/warm-*.pprof` sums them).
#    /usr/bin/time's wall time comes in steps of 10 ms: bench/warm_ab.py
#    times two builds' warm jobs to the microsecond, on this script's sweeps.
set -euo pipefail

BENCH_BYTES=${BENCH_BYTES:-1000000000}
BENCH_ROUNDS=${BENCH_ROUNDS:-3}
BENCH_DIR=${BENCH_DIR:-${TMPDIR:-/tmp}/crlbatch-bench-cache}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN=$BENCH_DIR/crlbatch
DUCKDBQ=${DUCKDBQ:-$ROOT/bin/duckdbq}
THREADS=$(nproc)

mkdir -p "$BENCH_DIR"
# Each binary run is a cp copy of what the linker wrote: a freshly linked
# binary peaks 10-17 MiB higher in RSS than a copy of it. Both builds with
# the tags of `make build` (bench/buildtags.sh).
TAGS=$("$ROOT/bench/buildtags.sh")
(cd "$ROOT" && go build -tags "$TAGS" -o "$BIN.link" ./cmd/crlbatch) && cp "$BIN.link" "$BIN"
BASE_BIN=
if [[ -n ${BENCH_BASE:-} ]]; then
	BASE_BIN=$BENCH_DIR/crlbatch-base
	rm -rf "$BENCH_DIR/base-src" && mkdir -p "$BENCH_DIR/base-src"
	git -C "$ROOT" archive "$BENCH_BASE" | tar -x -C "$BENCH_DIR/base-src"
	(cd "$BENCH_DIR/base-src" && go build -tags "$TAGS" -o "$BASE_BIN.link" ./cmd/crlbatch) && cp "$BASE_BIN.link" "$BASE_BIN"
	echo "base: $BENCH_BASE = $(git -C "$ROOT" rev-parse --short "$BENCH_BASE")"
fi

SYNTH=(--family ppo --family sac --family ewc --family der --seeds 5 --extras --target-bytes "$BENCH_BYTES")
# The sweep is regenerated when the generator's or convert's output
# changes: the stamp holds the hash of a tiny sweep from it and of its
# Parquet form (not the binary's, which changes with every build).
rm -rf "$BENCH_DIR/tiny" "$BENCH_DIR/tiny-pq" && "$BIN" synth --out "$BENCH_DIR/tiny" "${SYNTH[@]:0:10}" --extras --target-bytes 200000 --seed 0 >/dev/null
"$BIN" convert --out "$BENCH_DIR/tiny-pq" "$BENCH_DIR/tiny" >/dev/null
stamp="$BENCH_BYTES $(cd "$BENCH_DIR" && find tiny tiny-pq -type f | sort | xargs sha256sum | sha256sum | cut -c1-16)"
if [[ ! -f $BENCH_DIR/sweep.stamp || $(cat "$BENCH_DIR/sweep.stamp") != "$stamp" ]]; then
	rm -rf "$BENCH_DIR"/{jsonl,alt,work,parquet,sweep.stamp}
	"$BIN" synth --out "$BENCH_DIR/jsonl" "${SYNTH[@]}" --seed 0 >/dev/null
	"$BIN" synth --out "$BENCH_DIR/alt" "${SYNTH[@]}" --seed 1 >/dev/null
	"$BIN" convert --out "$BENCH_DIR/parquet" "$BENCH_DIR/jsonl" >/dev/null
	echo "$stamp" >"$BENCH_DIR/sweep.stamp"
fi
# The cache keys an object by its URL, so the cold and the warm run read one
# folder, BENCH_DIR/work: hard links to jsonl/, of which 5 % of the objects
# are replaced by alt/'s between the cold and the warm run (a new file, a
# new modification time), and linked back after.
rm -rf "$BENCH_DIR/work"
cp -al "$BENCH_DIR/jsonl" "$BENCH_DIR/work"
mapfile -t objs < <(cd "$BENCH_DIR/jsonl" && find . -type f -name '*.jsonl' | sort)
mapfile -t jsonl_files < <(find "$BENCH_DIR/jsonl" -type f -name '*.jsonl' | sort)
nobj=${#objs[@]}
nchanged=$(((nobj * 5 + 99) / 100))
change() { for f in "${objs[@]:0:$nchanged}"; do rm "$BENCH_DIR/work/$f" && cp "$BENCH_DIR/alt/$f" "$BENCH_DIR/work/$f"; done; }
restore() { for f in "${objs[@]:0:$nchanged}"; do rm "$BENCH_DIR/work/$f" && ln "$BENCH_DIR/jsonl/$f" "$BENCH_DIR/work/$f"; done; }
# Read every file once so that all runs start from the page cache.
find "$BENCH_DIR"/{jsonl,alt,parquet} -type f -exec cat {} + >/dev/null

# The nightly job's settings (configs/nightly.yaml) without input and out.
FLAGS=(--quiet --spec experiment --ceiling "${BENCH_CEILING:-by_configuration}" --episode-end-from-spec
	--solve-component progress --group-by algorithm_id --baseline ppo --bootstrap-seed 0)

T=$BENCH_DIR/times
rm -rf "$T" && mkdir -p "$T"
# run NAME ARGS...: one timed job, appended to $T/NAME as "wall cpu rssKB"
# (NAME base-*: the base binary's).
run() {
	local name=$1 bin=$BIN
	shift
	[[ $name == base-* ]] && bin=$BASE_BIN
	rm -rf "$BENCH_DIR/out"
	/usr/bin/time -o "$T/one" -f "%e %U %S %M" "$bin" score "$@" --out "$BENCH_DIR/out" "${FLAGS[@]}" >"$T/$name.log" 2>"$T/$name.err" || { cat "$T/$name.err" >&2; exit 1; }
	awk '{printf "%s %.2f %s\n", $1, $2 + $3, $4}' "$T/one" >>"$T/$name"
}

echo "load before: $(uptime)"
for r in $(seq "$BENCH_ROUNDS"); do
	run cold-nocache "$BENCH_DIR/work"
	rm -rf "$BENCH_DIR/c" "$BENCH_DIR/cb"
	run cold-cache "$BENCH_DIR/work" --cache "$BENCH_DIR/c"
	[[ -n $BASE_BIN ]] && run base-cold-cache "$BENCH_DIR/work" --cache "$BENCH_DIR/cb"
	change
	run warm-cache "$BENCH_DIR/work" --cache "$BENCH_DIR/c" --log-level info
	[[ -n $BASE_BIN ]] && run base-warm-cache "$BENCH_DIR/work" --cache "$BENCH_DIR/cb"
	restore
	run parquet "$BENCH_DIR/parquet" --pattern '*.parquet'
	if [[ -x $DUCKDBQ ]]; then
		/usr/bin/time -o "$T/one" -f "%e %U %S %M" "$DUCKDBQ" -threads "$THREADS" "${jsonl_files[@]}" >"$T/duckdb.log"
		awk '{printf "%s %.2f %s\n", $1, $2 + $3, $4}' "$T/one" >>"$T/duckdb"
	fi
done
echo "load after:  $(uptime)"

med() { sort -n | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
col() { awk -v c="$2" '{print $c}' "$T/$1" | med; }
echo
echo "sweep: $(du -sb "$BENCH_DIR/jsonl" | cut -f1) bytes of JSONL in $nobj objects; Parquet form $(du -sb "$BENCH_DIR/parquet" | cut -f1) bytes; $nchanged objects changed for the warm run; $BENCH_ROUNDS rounds, medians"
JOBS=(cold-nocache cold-cache warm-cache parquet)
[[ -n $BASE_BIN ]] && JOBS+=(base-cold-cache base-warm-cache)
[[ -s $T/duckdb ]] && JOBS+=(duckdb)
printf '%-28s %9s %9s %10s\n' job wall_s cpu_s rss_MB
for j in "${JOBS[@]}"; do
	printf '%-28s %9s %9s %10d\n' "$j" "$(col $j 1)" "$(col $j 2)" $(($(col $j 3) / 1024))
done
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {if (b > 0) printf "%.2f", a / b; else print "n/a"}'; }
echo
echo "cold (no cache) / warm:  wall $(ratio "$(col cold-nocache 1)" "$(col warm-cache 1)")x  cpu $(ratio "$(col cold-nocache 2)" "$(col warm-cache 2)")x"
echo "cold (--cache) / warm:   wall $(ratio "$(col cold-cache 1)" "$(col warm-cache 1)")x  cpu $(ratio "$(col cold-cache 2)" "$(col warm-cache 2)")x"
[[ -n $BASE_BIN ]] && echo "cold (no cache) / base warm: wall $(ratio "$(col cold-nocache 1)" "$(col base-warm-cache 1)")x  cpu $(ratio "$(col cold-nocache 2)" "$(col base-warm-cache 2)")x"
echo "JSONL / Parquet:         wall $(ratio "$(col cold-nocache 1)" "$(col parquet 1)")x  cpu $(ratio "$(col cold-nocache 2)" "$(col parquet 2)")x  (above 1: Parquet faster)"
[[ -s $T/duckdb ]] && echo "DuckDB (JSONL) / Parquet: wall $(ratio "$(col duckdb 1)" "$(col parquet 1)")x  cpu $(ratio "$(col duckdb 2)" "$(col parquet 2)")x  (DuckDB's bare query, $THREADS threads)"
echo
echo "what each job said:"
for j in "${JOBS[@]}"; do
	[[ $j == duckdb ]] && { echo "  $j: $(head -n 1 "$T/$j.log")"; continue; }
	echo "  $j: $(grep -m1 '^scored' "$T/$j.log" || echo '(no summary line)')"
done
echo "  warm-cache's runs: $( (grep -m1 -o 'runs from the cache.*' "$T/warm-cache.err" || echo '(no run-level entries)') | tr -d '"')"

if [[ ${BENCH_WARM_ROUNDS:-0} -gt 0 && -n $BASE_BIN ]]; then
	echo
	echo "warm job alone, $BENCH_WARM_ROUNDS alternating rounds; load before: $(uptime)"
	rm -rf "$BENCH_DIR/profiles" && mkdir -p "$BENCH_DIR/profiles"
	rm -rf "$BENCH_DIR/snap" "$BENCH_DIR/snap-base"
	run snap-cold "$BENCH_DIR/work" --cache "$BENCH_DIR/snap"
	run base-snap-cold "$BENCH_DIR/work" --cache "$BENCH_DIR/snap-base"
	for r in $(seq "$BENCH_WARM_ROUNDS"); do
		for name in warm-alone base-warm-alone; do
			snap=$BENCH_DIR/snap
			[[ $name == base-* ]] && snap=$BENCH_DIR/snap-base
			rm -rf "$BENCH_DIR/wc" && cp -a "$snap" "$BENCH_DIR/wc"
			change
			prof=()
			[[ -n ${BENCH_PROFILE:-} ]] && prof=(--cpuprofile "$BENCH_DIR/profiles/${name%-alone}-$r.pprof")
			run "$name" "$BENCH_DIR/work" --cache "$BENCH_DIR/wc" "${prof[@]}"
			restore
		done
	done
	echo "load after:  $(uptime)"
	printf '%-28s %9s %9s %9s\n' job wall_s cpu_s least_cpu
	for j in warm-alone base-warm-alone; do
		printf '%-28s %9s %9s %9s\n' "$j" "$(col $j 1)" "$(col $j 2)" "$(awk '{print $2}' "$T/$j" | sort -n | head -n 1)"
	done
	echo "paired CPU difference (base - this build), median: $(paste -d ' ' <(awk '{print $2}' "$T/base-warm-alone") <(awk '{print $2}' "$T/warm-alone") | awk '{print $1 - $2}' | med) s"
	echo "cold (no cache) / warm alone, CPU: this build $(ratio "$(col cold-nocache 2)" "$(col warm-alone 2)")x, base $(ratio "$(col cold-nocache 2)" "$(col base-warm-alone 2)")x"
fi
