#!/usr/bin/env bash
# Parquet input, two builds side by side in one run (issue 15). Not run in CI.
#
#   BENCH_BASE=main bench/parquet_ab.sh            # 5 rounds
#   BENCH_BASE=main BENCH_ROUNDS=3 bench/parquet_ab.sh
#
# The JSONL sweep is bench/cache.sh's (BENCH_JSONL, default
# ${TMPDIR:-/tmp}/crlbatch-bench-cache/jsonl: run bench/cache.sh once first).
# Each build (this tree's, and BENCH_BASE's when set) converts it with its
# own `crlbatch convert` (what convert writes is part of what is measured)
# into BENCH_DIR/pq-head and BENCH_DIR/pq-base, once per build. Then, in each
# of BENCH_ROUNDS rounds, from the page cache, alternating: the base build
# scoring its Parquet form, this build scoring its Parquet form, this build
# scoring the JSONL, and DuckDB's bare read_ndjson query on the JSONL
# (bin/duckdbq as bench/cache.sh runs it, SET threads = nproc; skipped when
# DUCKDBQ is missing), every crlbatch job with bench/cache.sh's nightly
# flags, timed by /usr/bin/time (wall, user+sys CPU, peak RSS). Prints each
# job's rounds and median, the ratios of CPU medians, and `uptime` before
# and after. Before timing, it checks that this build's Parquet outputs and
# report are byte-identical to its JSONL ones (the JSONL under the Parquet
# objects' names, at one path; the manifests differ in how objects were read).
# BENCH_COMPRESSION=CODEC makes this build's convert write that codec
# (`crlbatch convert --compression`; default: convert's default).
set -euo pipefail

BENCH_ROUNDS=${BENCH_ROUNDS:-5}
BENCH_DIR=${BENCH_DIR:-${TMPDIR:-/tmp}/crlbatch-bench-parquet}
BENCH_JSONL=${BENCH_JSONL:-${TMPDIR:-/tmp}/crlbatch-bench-cache/jsonl}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
DUCKDBQ=${DUCKDBQ:-$ROOT/bin/duckdbq}
THREADS=$(nproc)
[[ -d $BENCH_JSONL ]] || { echo "no JSONL sweep at $BENCH_JSONL: run bench/cache.sh first" >&2; exit 2; }

mkdir -p "$BENCH_DIR"
# The builds, side by side (bench/ab_builds.sh).
. "$ROOT/bench/ab_builds.sh"
ab_builds
CONVERT_HEAD=()
[[ -n ${BENCH_COMPRESSION:-} ]] && CONVERT_HEAD=(--compression "$BENCH_COMPRESSION")
for b in "${BUILDS[@]}"; do
	cargs=()
	[[ $b == head ]] && cargs=("${CONVERT_HEAD[@]}")
	# Converted again when the build's convert writes something else (the
	# stamp: the hash of a tiny object's Parquet form).
	rm -rf "$BENCH_DIR/tiny-$b" && mkdir -p "$BENCH_DIR/tiny-$b/in"
	head -n 2000 "$(find "$BENCH_JSONL" -name '*.jsonl' | sort | head -n 1)" >"$BENCH_DIR/tiny-$b/in/t.jsonl"
	"$BENCH_DIR/crlbatch-$b" convert "${cargs[@]}" --out "$BENCH_DIR/tiny-$b/out" "$BENCH_DIR/tiny-$b/in" >/dev/null
	stamp="$(du -sb "$BENCH_JSONL" | cut -f1) $(sha256sum <"$BENCH_DIR/tiny-$b/out/t.parquet" | cut -c1-16)"
	if [[ ! -f $BENCH_DIR/pq-$b.stamp || $(cat "$BENCH_DIR/pq-$b.stamp") != "$stamp" ]]; then
		rm -rf "$BENCH_DIR/pq-$b"
		"$BENCH_DIR/crlbatch-$b" convert "${cargs[@]}" --out "$BENCH_DIR/pq-$b" "$BENCH_JSONL" >/dev/null
		echo "$stamp" >"$BENCH_DIR/pq-$b.stamp"
	fi
done
mapfile -t jsonl_files < <(find "$BENCH_JSONL" -type f -name '*.jsonl' | sort)
find "$BENCH_JSONL" "$BENCH_DIR"/pq-* -type f -exec cat {} + >/dev/null

FLAGS=(--quiet --spec experiment --ceiling by_configuration --episode-end-from-spec
	--solve-component progress --group-by algorithm_id --baseline ppo --bootstrap-seed 0)

# The outputs of this build's Parquet form against its JSONL's, at one path.
rm -rf "$BENCH_DIR/same" && mkdir -p "$BENCH_DIR/same/json"
(cd "$BENCH_JSONL" && find . -name '*.jsonl') | while read -r f; do
	mkdir -p "$BENCH_DIR/same/json/$(dirname "$f")"
	ln -s "$BENCH_JSONL/$f" "$BENCH_DIR/same/json/${f%.jsonl}.parquet"
done
ln -s json "$BENCH_DIR/same/in"
"$BENCH_DIR/crlbatch-head" score "$BENCH_DIR/same/in" --pattern '*.parquet' --out "$BENCH_DIR/same/oj" "${FLAGS[@]}" >/dev/null
rm "$BENCH_DIR/same/in" && ln -s "$BENCH_DIR/pq-head" "$BENCH_DIR/same/in"
"$BENCH_DIR/crlbatch-head" score "$BENCH_DIR/same/in" --pattern '*.parquet' --out "$BENCH_DIR/same/op" "${FLAGS[@]}" >/dev/null
if ! diff -r -q -x manifest.json "$BENCH_DIR/same/oj" "$BENCH_DIR/same/op"; then
	echo "the Parquet form's outputs differ from the JSONL's" >&2
	exit 1
fi
echo "outputs: the Parquet form's Parquet files and report byte-identical to the JSONL's"

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
	for b in "${BUILDS[@]}"; do
		rm -rf "$BENCH_DIR/out"
		timed "parquet-$b" "$BENCH_DIR/crlbatch-$b" score "$BENCH_DIR/pq-$b" --pattern '*.parquet' --out "$BENCH_DIR/out" "${FLAGS[@]}"
	done
	rm -rf "$BENCH_DIR/out"
	timed jsonl "$BENCH_DIR/crlbatch-head" score "$BENCH_JSONL" --out "$BENCH_DIR/out" "${FLAGS[@]}"
	[[ -x $DUCKDBQ ]] && timed duckdb "$DUCKDBQ" -threads "$THREADS" "${jsonl_files[@]}"
done
echo "load after:  $(uptime)"

med() { sort -n | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
col() { awk -v c="$2" '{print $c}' "$T/$1" | med; }
JOBS=()
for b in "${BUILDS[@]}"; do JOBS+=("parquet-$b"); done
JOBS+=(jsonl)
[[ -s $T/duckdb ]] && JOBS+=(duckdb)
echo
echo "JSONL $(du -sb "$BENCH_JSONL" | cut -f1) bytes; Parquet forms: $(for b in "${BUILDS[@]}"; do echo -n "$b $(du -sb "$BENCH_DIR/pq-$b" | cut -f1) bytes; "; done)$BENCH_ROUNDS rounds"
printf '%-16s %8s %8s %8s   %s\n' job wall_s cpu_s rss_MB "CPU s, round by round"
for j in "${JOBS[@]}"; do
	printf '%-16s %8s %8s %8d   %s\n' "$j" "$(col "$j" 1)" "$(col "$j" 2)" $(($(col "$j" 3) / 1024)) "$(awk '{printf "%s ", $2}' "$T/$j")"
done
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {if (b > 0) printf "%.2f", a / b; else print "n/a"}'; }
echo
for b in "${BUILDS[@]}"; do
	echo "JSONL / Parquet ($b), CPU: $(ratio "$(col jsonl 2)" "$(col "parquet-$b" 2)")x  (above 1: Parquet faster)"
	[[ -s $T/duckdb ]] && echo "DuckDB / Parquet ($b), CPU: $(ratio "$(col duckdb 2)" "$(col "parquet-$b" 2)")x"
done
[[ -n ${BENCH_BASE:-} ]] && echo "base / head, Parquet CPU: $(ratio "$(col parquet-base 2)" "$(col parquet-head 2)")x, peak RSS: $(ratio "$(col parquet-base 3)" "$(col parquet-head 3)")x"
exit 0
