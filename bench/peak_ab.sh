#!/usr/bin/env bash
# Peak RSS and CPU of two crlbatch builds beside DuckDB, alternating within
# each round on the same files (issue 16, memory). Not run in CI.
#
#   BASE=/tmp/base-crlbatch NEW=bin/crlbatch bench/peak_ab.sh
#
# For each of ROUNDS rounds and each input, runs BASE, NEW and DuckDB's
# bare query (DUCKDBQ, threads = CONCURRENCY), in that order in odd rounds
# and the reverse in even ones, each under /usr/bin/time, and prints a
# Markdown table of medians: CPU seconds (user+sys) and peak RSS in MiB
# (with the range over the rounds), NEW's peak as a multiple of DuckDB's,
# and NEW − BASE paired round by round (the median of the differences, and
# in how many rounds NEW was lower), for CPU and peak: on a machine whose
# speed moves between runs, the paired figures say more than the medians. crlbatch runs with bench/compare.sh's
# nightly flags and --concurrency CONCURRENCY. Inputs are folders of
# BENCH_DIR as bench/compare.sh leaves them (plain, zstd, one-plain,
# one-zstd, irregular-plain, irregular-zstd, irregular-one-plain,
# irregular-one-zstd; `make bench-compare` generates them) or, with a
# leading "scale:", bench/scale.sh's inputs under SCALE_DIR
# (scale:labels-100000). The input "startup" runs `crlbatch version` on
# both builds (no DuckDB): what package initialisation alone keeps resident
# (issue 16, docs/performance-history.md, "Peak RSS against DuckDB,
# start-up round"). The raw timings go to OUT (a TSV).
#
# Settings (environment): BASE, NEW (binaries; NEW defaults to
# bin/crlbatch), DUCKDBQ (bin/duckdbq), BENCH_DIR
# (/tmp/crlbatch-bench-1000000000), SCALE_DIR (/tmp/crlbatch-scale),
# INPUTS (startup and the eight 1 GB inputs), ROUNDS (3), CONCURRENCY (2), OUT
# (/tmp/crlbatch-peak-ab.tsv).
#
# The three binaries are run from copies on a tmpfs (/dev/shm when writable,
# else the work directory), made at the start: a binary's text and read-only
# data count in its RSS, and how much of them a run maps depends on how the
# file sits in the page cache (a file just written by the linker measured
# 10-17 MiB above a copy of itself on the same input), not on its bytes
# (docs/performance.md, "How it is measured").
set -euo pipefail
cd "$(dirname "$0")/.."
BASE=${BASE:?set BASE to the crlbatch binary to compare against}
NEW=${NEW:-bin/crlbatch}
DUCKDBQ=${DUCKDBQ:-bin/duckdbq}
BENCH_DIR=${BENCH_DIR:-/tmp/crlbatch-bench-1000000000}
SCALE_DIR=${SCALE_DIR:-/tmp/crlbatch-scale}
INPUTS=${INPUTS:-startup plain zstd one-plain one-zstd irregular-plain irregular-zstd irregular-one-plain irregular-one-zstd}
ROUNDS=${ROUNDS:-3}
CONCURRENCY=${CONCURRENCY:-2}
OUT=${OUT:-/tmp/crlbatch-peak-ab.tsv}
TIME=/usr/bin/time
[ -x "$TIME" ] || { echo "peak_ab: needs GNU time at $TIME (apt-get install time)" >&2; exit 1; }
for b in "$BASE" "$NEW" "$DUCKDBQ"; do
	[ -x "$b" ] || { echo "peak_ab: no $b (make build, make bench-duckdbq)" >&2; exit 1; }
done
FLAGS=(--quiet --spec experiment --ceiling by_configuration --episode-end-from-spec --solve-component progress
	--group-by algorithm_id --baseline ppo --bootstrap-seed 0 --concurrency "$CONCURRENCY")
work=$(mktemp -d)
bins=$work
if [ -d /dev/shm ] && [ -w /dev/shm ]; then bins=$(mktemp -d /dev/shm/crlbatch-peak-ab.XXXXXX); fi
trap 'rm -rf "$work" "$bins"' EXIT
cp "$BASE" "$bins/base" && cp "$NEW" "$bins/new" && cp "$DUCKDBQ" "$bins/duckdbq"
BASE=$bins/base NEW=$bins/new DUCKDBQ=$bins/duckdbq

# dir_of INPUT, files_of INPUT: the folder crlbatch reads, the files DuckDB reads.
dir_of() { case $1 in scale:*) echo "$SCALE_DIR/${1#scale:}" ;; *) echo "$BENCH_DIR/$1" ;; esac; }
files_of() {
	local d
	d=$(dir_of "$1")
	case $1 in scale:*) ls "$d"/*.jsonl ;; *one-*) ls "$d"/sweep.jsonl* ;; *) ls "$d"/*/*.jsonl* ;; esac
}

: >"$OUT"
for round in $(seq "$ROUNDS"); do
	for in in $INPUTS; do
		if [ "$in" = startup ]; then
			order="base new"
			[ $((round % 2)) = 0 ] && order="new base"
			for tool in $order; do
				case $tool in
				base) "$TIME" -f '%U %S %M' -o "$work/t" "$BASE" version >/dev/null ;;
				new) "$TIME" -f '%U %S %M' -o "$work/t" "$NEW" version >/dev/null ;;
				esac
				awk -v r="$round" -v i="$in" -v t="$tool" -v l="$(cut -d' ' -f1 /proc/loadavg)" \
					'{ printf "%s\t%s\t%s\t%.2f\t%d\t%s\n", r, i, t, $1+$2, $3/1024, l }' "$work/t" >>"$OUT"
			done
			continue
		fi
		dir=$(dir_of "$in")
		[ -d "$dir" ] || { echo "peak_ab: no $dir (make bench-compare, or bench/scale.sh, makes it)" >&2; exit 1; }
		mapfile -t files < <(files_of "$in")
		cat "${files[@]}" >/dev/null # into the page cache
		# The order alternates round by round, so that neither build always
		# runs right after DuckDB (or first).
		order="base new duckdb"
		[ $((round % 2)) = 0 ] && order="duckdb new base"
		for tool in $order; do
			rm -rf "$work/out"
			case $tool in
			base) "$TIME" -f '%U %S %M' -o "$work/t" "$BASE" score "$dir" --out "$work/out" "${FLAGS[@]}" >/dev/null ;;
			new) "$TIME" -f '%U %S %M' -o "$work/t" "$NEW" score "$dir" --out "$work/out" "${FLAGS[@]}" >/dev/null ;;
			duckdb) "$TIME" -f '%U %S %M' -o "$work/t" "$DUCKDBQ" -threads "$CONCURRENCY" "${files[@]}" >/dev/null ;;
			esac
			awk -v r="$round" -v i="$in" -v t="$tool" -v l="$(cut -d' ' -f1 /proc/loadavg)" \
				'{ printf "%s\t%s\t%s\t%.2f\t%d\t%s\n", r, i, t, $1+$2, $3/1024, l }' "$work/t" >>"$OUT"
		done
	done
	echo "peak_ab: round $round of $ROUNDS done" >&2
done

# The table: medians over the rounds, the RSS range beside.
awk -F'\t' -v inputs="$INPUTS" '
function median(s,    a, n, i, j, t) {
	n = split(s, a, " ")
	for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j-1] + 0 > a[j] + 0; j--) { t = a[j]; a[j] = a[j-1]; a[j-1] = t }
	return n % 2 ? a[(n+1)/2] : (a[n/2] + a[n/2+1]) / 2
}
function lo(s,    a, n, i, m) { n = split(s, a, " "); m = a[1]; for (i = 2; i <= n; i++) if (a[i] + 0 < m + 0) m = a[i]; return m }
function hi(s,    a, n, i, m) { n = split(s, a, " "); m = a[1]; for (i = 2; i <= n; i++) if (a[i] + 0 > m + 0) m = a[i]; return m }
{ cpu[$2, $3] = cpu[$2, $3] " " $4; rss[$2, $3] = rss[$2, $3] " " $5; load = load " " $6
  c[$1, $2, $3] = $4; m[$1, $2, $3] = $5; if ($1 > rounds) rounds = $1 }
# paired INPUT ARR: the median of new − base round by round, and in how
# many rounds new was lower ("d (k of n)").
function paired(i, arr,    r, d, k, n, v) {
	d = ""; k = 0; n = 0
	for (r = 1; r <= rounds; r++) {
		if (!((r, i, "new") in arr) || !((r, i, "base") in arr)) continue
		v = arr[r, i, "new"] - arr[r, i, "base"]
		d = d " " v; n++
		if (v < 0) k++
	}
	return sprintf("%+.2f (%d of %d)", median(d), k, n)
}
END {
	print "| input | CPU s, base | CPU s, new | CPU s, DuckDB | peak RSS MiB, base | peak RSS MiB, new | peak RSS MiB, DuckDB | RSS, new / DuckDB | CPU s, new − base, paired (rounds new lower) | peak MiB, new − base, paired (rounds new lower) |"
	print "| :-- | --: | --: | --: | --: | --: | --: | --: | --: | --: |"
	n = split(inputs, ins, " ")
	for (k = 1; k <= n; k++) {
		i = ins[k]
		if (rss[i, "duckdb"] == "") { # startup: no DuckDB
			printf "| %s | %.2f | %.2f | – | %d (%d–%d) | %d (%d–%d) | – | – | %s | %s |\n", i,
				median(cpu[i, "base"]), median(cpu[i, "new"]),
				median(rss[i, "base"]), lo(rss[i, "base"]), hi(rss[i, "base"]),
				median(rss[i, "new"]), lo(rss[i, "new"]), hi(rss[i, "new"]),
				paired(i, c), paired(i, m)
			continue
		}
		printf "| %s | %.2f | %.2f | %.2f | %d (%d–%d) | %d (%d–%d) | %d (%d–%d) | %.2f× | %s | %s |\n", i,
			median(cpu[i, "base"]), median(cpu[i, "new"]), median(cpu[i, "duckdb"]),
			median(rss[i, "base"]), lo(rss[i, "base"]), hi(rss[i, "base"]),
			median(rss[i, "new"]), lo(rss[i, "new"]), hi(rss[i, "new"]),
			median(rss[i, "duckdb"]), lo(rss[i, "duckdb"]), hi(rss[i, "duckdb"]),
			median(rss[i, "new"]) / median(rss[i, "duckdb"]), paired(i, c), paired(i, m)
	}
	printf "\nload average (1 min) during the runs: %.2f–%.2f\n", lo(load), hi(load)
}' "$OUT"
