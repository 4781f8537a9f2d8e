#!/usr/bin/env bash
# `crlbatch convert`, two builds side by side in one run. Not run in CI.
#
#   BENCH_BASE=main bench/convert_ab.sh             # 3 rounds
#   BENCH_BASE=20f4cd8 BENCH_ROUNDS=5 bench/convert_ab.sh
#   BENCH_ONE_BYTES=0 bench/convert_ab.sh           # the sweep alone
#
# Two inputs, generated once by this tree's `crlbatch synth` (fixed seed) and
# kept in BENCH_DIR (default ${TMPDIR:-/tmp}/crlbatch-bench-convert): the
# sweep, 20 plain JSONL objects of about 50 MB (4 families x 5 seeds,
# --extras, BENCH_BYTES in all, default 1 GB: bench/cache.sh's sweep); and
# one object of BENCH_ONE_BYTES (default 500 MB; 0 leaves it out). In each
# of BENCH_ROUNDS rounds, from the page cache, alternating builds: each
# build converts the sweep (--concurrency = nproc) and then the one object,
# into a fresh OUTPUT, timed by /usr/bin/time (wall, user+sys CPU, peak
# RSS). Before timing, it checks that both builds write byte-identical
# Parquet objects (when the base's convert writes something else, it says
# so and times them all the same). Prints each job's rounds and medians,
# the ratios, and `uptime` before and after.
set -euo pipefail

BENCH_ROUNDS=${BENCH_ROUNDS:-3}
BENCH_BYTES=${BENCH_BYTES:-1000000000}
BENCH_ONE_BYTES=${BENCH_ONE_BYTES:-500000000}
BENCH_DIR=${BENCH_DIR:-${TMPDIR:-/tmp}/crlbatch-bench-convert}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
THREADS=$(nproc)

mkdir -p "$BENCH_DIR"
# The builds, side by side (bench/ab_builds.sh).
. "$ROOT/bench/ab_builds.sh"
ab_builds

# The inputs, generated again when their settings change.
gen() {
	local dir=$1 stamp=$2
	shift 2
	if [[ ! -f $dir.stamp || $(cat "$dir.stamp") != "$stamp" ]]; then
		rm -rf "$dir"
		"$BENCH_DIR/crlbatch-head" synth --out "$dir" "$@" --extras --seed 0 >/dev/null
		echo "$stamp" >"$dir.stamp"
	fi
}
gen "$BENCH_DIR/sweep" "$BENCH_BYTES" --family ppo --family sac --family ewc --family mer --seeds 5 --target-bytes "$BENCH_BYTES"
INPUTS=(sweep)
if ((BENCH_ONE_BYTES > 0)); then
	gen "$BENCH_DIR/one" "$BENCH_ONE_BYTES" --family ppo --seeds 1 --target-bytes "$BENCH_ONE_BYTES"
	INPUTS+=(one)
fi
find "${INPUTS[@]/#/$BENCH_DIR/}" -type f -exec cat {} + >/dev/null

T=$BENCH_DIR/times
rm -rf "$T" && mkdir -p "$T"
timed() {
	local name=$1
	shift
	/usr/bin/time -o "$T/one" -f "%e %U %S %M" "$@" >"$T/$name.log" 2>"$T/$name.err" || { cat "$T/$name.err" >&2; exit 1; }
	awk '{printf "%s %.2f %s\n", $1, $2 + $3, $4}' "$T/one" >>"$T/$name"
}
echo "load before: $(uptime)"
for r in $(seq "$BENCH_ROUNDS"); do
	for in in "${INPUTS[@]}"; do
		for b in "${BUILDS[@]}"; do
			rm -rf "$BENCH_DIR/out-$b"
			timed "$in-$b" "$BENCH_DIR/crlbatch-$b" convert "$BENCH_DIR/$in" --out "$BENCH_DIR/out-$b" --concurrency "$THREADS"
		done
		if [[ $r == 1 && ${#BUILDS[@]} == 2 ]]; then
			if diff -r -q "$BENCH_DIR/out-base" "$BENCH_DIR/out-head" >/dev/null; then
				echo "$in: both builds wrote byte-identical Parquet objects"
			else
				echo "$in: the builds' Parquet objects DIFFER"
			fi
		fi
	done
done
rm -rf "$BENCH_DIR"/out-*
echo "load after:  $(uptime)"

med() { sort -n | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
col() { awk -v c="$2" '{print $c}' "$T/$1" | med; }
echo
echo "sweep: $(find "$BENCH_DIR/sweep" -type f | wc -l) objects, $(du -sb "$BENCH_DIR/sweep" | cut -f1) bytes$( ((BENCH_ONE_BYTES > 0)) && echo "; one: $(du -sb "$BENCH_DIR/one" | cut -f1) bytes"); $BENCH_ROUNDS rounds; --concurrency $THREADS"
printf '%-12s %8s %8s %8s   %s\n' job wall_s cpu_s rss_MB "CPU s, round by round"
for in in "${INPUTS[@]}"; do
	for b in "${BUILDS[@]}"; do
		j=$in-$b
		printf '%-12s %8s %8s %8d   %s\n' "$j" "$(col "$j" 1)" "$(col "$j" 2)" $(($(col "$j" 3) / 1024)) "$(awk '{printf "%s ", $2}' "$T/$j")"
	done
done
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {if (b > 0) printf "%.2f", a / b; else print "n/a"}'; }
if [[ ${#BUILDS[@]} == 2 ]]; then
	echo
	for in in "${INPUTS[@]}"; do
		echo "$in: base / head: wall $(ratio "$(col "$in-base" 1)" "$(col "$in-head" 1)")x, CPU $(ratio "$(col "$in-base" 2)" "$(col "$in-head" 2)")x, peak RSS $(ratio "$(col "$in-base" 3)" "$(col "$in-head" 3)")x"
	done
fi
exit 0
