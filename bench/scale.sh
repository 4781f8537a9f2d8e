#!/usr/bin/env bash
# make bench-scale: does crlbatch's cost grow linearly in every dimension of a
# sweep (issue 16)? Each dimension grows by 10× twice while the others stay
# put; every step is scored once per round with the nightly job's full
# protocol and every output, and the script prints wall time, CPU time
# (user+sys) and peak RSS per step, and the ratio of each to the step before,
# as a Markdown table (docs/performance.md keeps the latest). Beside it,
# DuckDB's bare query on the same files, in this process (bin/duckdbq,
# read_ndjson(columns=…) + GROUP BY, threads = CONCURRENCY), alternating
# with crlbatch round by round: its wall time, peak RSS and crlbatch's wall
# time as a multiple of it. A step should cost at most about 12× the one
# before. Not run in CI.
#
#   runs      100 / 1,000 / 10,000 runs of 200 rows, 4 labels, in 10 objects,
#             then 20,000 (the size issue 16 names; "×" is then to 10,000)
#   labels    one run of 200,000 rows with 1,000 / 10,000 / 100,000 labels
#             (--max-labels is at its default, 100,000)
#   rows      8 runs of 2,000 / 20,000 / 200,000 rows, 4 labels, one object each
#   objects   20 runs of 20,000 rows (400,000 rows, ~95 MB) in
#             200 / 2,000 / 20,000 objects (10 / 100 / 1,000 parts per run)
#   intervals 8 runs of 40,000 rows, 4 labels, 100 / 1,000 / 10,000 intervals
#             per run, one object each
#   families  1,000 runs of 200 rows in 10 objects, 2 / 20 / 200 families
#             (500 / 50 / 5 runs each)
#   parts     20 runs of 20,000 rows in 10 / 100 / 1,000 parts each, the
#             parts dealt to 200 objects (1 / 10 / 100 parts per object)
#
# The inputs come from bench/scalegen (not `crlbatch synth`, whose runs are
# one object each) and are cached under SCALE_DIR. Outputs go to OUT_DIR
# (a tmpfs by default, so that the fsyncs of publishing do not time the disk).
# Settings (environment): SCALE_DIR, OUT_DIR, ROUNDS (default 1; the median
# is printed), DIMS (default "runs labels rows objects intervals families
# parts"), CRLBATCH (the
# binary, default bin/crlbatch), DUCKDBQ (default bin/duckdbq; make
# bench-duckdbq), CONCURRENCY (default 2), BASE (another crlbatch binary,
# e.g. main's build: measured in the same rounds, before crlbatch, and its
# outputs compared with crlbatch's byte for byte, manifest.json aside; the
# table then has its wall, CPU and peak RSS, and crlbatch's as a multiple
# of them). Copy both binaries the same way (cp): a binary just written by
# the linker peaks 8-10 MB higher than a copy of itself (file-backed pages).
set -euo pipefail
cd "$(dirname "$0")/.."

SCALE_DIR=${SCALE_DIR:-/tmp/crlbatch-scale}
OUT_DIR=${OUT_DIR:-$([ -d /dev/shm ] && echo /dev/shm/crlbatch-scale-out || echo /tmp/crlbatch-scale-out)}
ROUNDS=${ROUNDS:-1}
DIMS=${DIMS:-runs labels rows objects intervals families parts}
CRLBATCH=${CRLBATCH:-bin/crlbatch}
CONCURRENCY=${CONCURRENCY:-2}
DUCKDBQ=${DUCKDBQ:-bin/duckdbq}
TIME=/usr/bin/time
[ -x "$TIME" ] || { echo "bench-scale: needs GNU time at $TIME (apt-get install time)" >&2; exit 1; }
[ -x "$CRLBATCH" ] || { echo "bench-scale: no $CRLBATCH (make build)" >&2; exit 1; }
[ -x "$DUCKDBQ" ] || { echo "bench-scale: no $DUCKDBQ (make bench-duckdbq)" >&2; exit 1; }
BASE=${BASE:-}
[ -z "$BASE" ] || [ -x "$BASE" ] || { echo "bench-scale: no $BASE (BASE)" >&2; exit 1; }

mkdir -p "$SCALE_DIR"
GEN="$SCALE_DIR/scalegen"
go build -o "$GEN" ./bench/scalegen

FLAGS=(--spec experiment --ceiling by_configuration --episode-end-from-spec --solve-component progress
	--group-by algorithm_id --baseline ppo --bootstrap-seed 0 --concurrency "$CONCURRENCY" --quiet)

# input NAME ARGS…: the sweep written by scalegen ARGS, cached as NAME.
input() {
	local name=$1; shift
	local dir="$SCALE_DIR/$name"
	if [ ! -f "$dir.done" ] || [ "$(cat "$dir.done")" != "$*" ]; then
		rm -rf "$dir" "$dir.done"
		"$GEN" -out "$dir" "$@"
		echo "$*" >"$dir.done"
	fi
	echo "$dir"
}

# measure DIR: prints "wall cpu rssMB" of crlbatch's median round (by wall
# time) and "wall rssMB" of DuckDB's (the query on DIR/*.jsonl, a glob
# DuckDB expands), the two alternating round by round.
measure() {
	local dir=$1 r
	for r in $(seq "$ROUNDS"); do
		if [ -n "$BASE" ]; then
			rm -rf "$OUT_DIR.base"
			"$TIME" -f '%e %U %S %M' -o "$SCALE_DIR/time" "$BASE" score "$dir" --out "$OUT_DIR.base" "${FLAGS[@]}" >/dev/null
			awk '{ printf "b %.2f %.2f %.0f\n", $1, $2+$3, $4/1024 }' "$SCALE_DIR/time"
		fi
		rm -rf "$OUT_DIR"
		"$TIME" -f '%e %U %S %M' -o "$SCALE_DIR/time" "$CRLBATCH" score "$dir" --out "$OUT_DIR" "${FLAGS[@]}" >/dev/null
		awk '{ printf "c %.2f %.2f %.0f\n", $1, $2+$3, $4/1024 }' "$SCALE_DIR/time"
		if [ -n "$BASE" ]; then
			local f
			for f in "$OUT_DIR.base"/*; do
				[ "${f##*/}" = manifest.json ] || cmp -s "$f" "$OUT_DIR/${f##*/}" ||
					{ echo "bench-scale: ${f##*/} differs between $BASE and $CRLBATCH on $dir" >&2; exit 1; }
			done
			rm -rf "$OUT_DIR.base"
		fi
		"$TIME" -f '%e %U %S %M' -o "$SCALE_DIR/time" "$DUCKDBQ" -threads "$CONCURRENCY" "$dir/*.jsonl" >"$SCALE_DIR/duckdb.out"
		grep -q '"rows"' "$SCALE_DIR/duckdb.out" || { echo "bench-scale: DuckDB printed no result on $dir" >&2; exit 1; }
		awk '{ printf "d %.2f %.0f\n", $1, $4/1024 }' "$SCALE_DIR/time"
	done >"$SCALE_DIR/rounds"
	local c d b=""
	c=$(awk '$1 == "c" { print $2, $3, $4 }' "$SCALE_DIR/rounds" | sort -n | awk -v n="$ROUNDS" 'NR == int((n+1)/2)')
	[ -z "$BASE" ] || b=$(awk '$1 == "b" { print $2, $3, $4 }' "$SCALE_DIR/rounds" | sort -n | awk -v n="$ROUNDS" 'NR == int((n+1)/2)')
	d=$(awk '$1 == "d" { print $2, $3 }' "$SCALE_DIR/rounds" | sort -n | awk -v n="$ROUNDS" 'NR == int((n+1)/2)')
	echo "$c $d $b"
	rm -rf "$OUT_DIR"
}

# step DIM VALUE MB ARGS…: one row of the table.
prev_wall="" prev_cpu="" prev_rss="" prev_dim=""
step() {
	local dim=$1 value=$2; shift 2
	local dir mb wall cpu rss dwall drss
	dir=$(input "$dim-$value" "$@")
	mb=$(du -sbL "$dir" | awk '{ printf "%.0f", $1/1e6 }')
	local bwall bcpu brss
	read -r wall cpu rss dwall drss bwall bcpu brss < <(measure "$dir")
	[ -n "$drss" ] || exit 1 # measure said why
	local rw="" rc="" rr=""
	if [ "$prev_dim" = "$dim" ]; then
		rw=$(awk -v a="$wall" -v b="$prev_wall" 'BEGIN { printf "%.1f×", a/b }')
		rc=$(awk -v a="$cpu" -v b="$prev_cpu" 'BEGIN { printf "%.1f×", a/b }')
		rr=$(awk -v a="$rss" -v b="$prev_rss" 'BEGIN { printf "%.1f×", a/b }')
	fi
	local vs
	vs=$(awk -v a="$wall" -v b="$dwall" 'BEGIN { printf "%.1f×", a/b }')
	local base=""
	if [ -n "$BASE" ]; then
		base=$(awk -v w="$wall" -v c="$cpu" -v r="$rss" -v bw="$bwall" -v bc="$bcpu" -v br="$brss" \
			'BEGIN { printf " %s | %s | %s | %.2f× | %.2f× | %.2f× |", bw, bc, br, w/bw, c/bc, r/br }')
	fi
	printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |%s\n' "$dim" "$value" "$mb" "$wall" "$rw" "$cpu" "$rc" "$rss" "$rr" "$dwall" "$drss" "$vs" "$base"
	prev_dim=$dim prev_wall=$wall prev_cpu=$cpu prev_rss=$rss
}

echo "crlbatch $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- . ':!docs' || echo '+changes'), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg), --concurrency $CONCURRENCY, $ROUNDS round(s), median"
echo
if [ -n "$BASE" ]; then
	echo "BASE: $BASE"
	echo
	echo '| dimension | size | MB | wall s | × | CPU s | × | peak RSS MB | × | DuckDB wall s | DuckDB peak RSS MB | wall, crlbatch / DuckDB | BASE wall s | BASE CPU s | BASE peak RSS MB | wall / BASE | CPU / BASE | peak / BASE |'
	echo '| :-- | --: | --: | --: | --: | --: | --: | --: | --: | --: | --: | --: | --: | --: | --: | --: | --: | --: |'
else
	echo '| dimension | size | MB | wall s | × | CPU s | × | peak RSS MB | × | DuckDB wall s | DuckDB peak RSS MB | wall, crlbatch / DuckDB |'
	echo '| :-- | --: | --: | --: | --: | --: | --: | --: | --: | --: | --: | --: |'
fi
for dim in $DIMS; do
	case $dim in
	runs)
		for n in 100 1000 10000 20000; do step runs "$n" -runs "$n" -rows 200 -labels 4 -objects 10; done ;;
	labels)
		for n in 1000 10000 100000; do step labels "$n" -runs 1 -rows 200000 -labels "$n" -objects 1; done ;;
	rows)
		for n in 2000 20000 200000; do step rows "$n" -runs 8 -rows "$n" -labels 4 -objects 8; done ;;
	objects)
		for n in 200 2000 20000; do step objects "$n" -runs 20 -rows 20000 -labels 4 -objects "$n"; done ;;
	intervals)
		for n in 100 1000 10000; do step intervals "$n" -runs 8 -rows 40000 -labels 4 -intervals "$n" -objects 8; done ;;
	families)
		for n in 2 20 200; do step families "$n" -runs 1000 -rows 200 -labels 4 -families "$n" -objects 10; done ;;
	parts)
		for n in 10 100 1000; do step parts "$n" -runs 20 -rows 20000 -labels 4 -parts "$n" -objects 200; done ;;
	*)
		echo "bench-scale: unknown dimension $dim" >&2; exit 2 ;;
	esac
done
echo
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
