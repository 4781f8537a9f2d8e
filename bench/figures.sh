#!/usr/bin/env bash
# What rendering the figures adds to the 1 GB benchmark sweep (issue 14's
# target: under 10 % of its wall time). Not run in CI.
#
#   bench/figures.sh                       # 5 rounds
#   BENCH_ROUNDS=3 bench/figures.sh
#
# 1. Builds crlbatch once from this tree (DIR/crlbatch).
# 2. Generates once, with that binary's `crlbatch synth --family ppo --family
#    sac --family ewc --family dqn --seeds 5 --extras --seed 1 --target-bytes
#    BENCH_BYTES --compression none` (the sweep of bench/compare.sh and `make
#    bench-sweep`: 20 runs, 4 families), under DIR/plain, reused while the
#    flags and the bytes synth writes are the same (DIR/sweep.stamp: the
#    flags and the SHA-256 of a tiny sweep written with them);
#    BENCH_REGEN=1 generates again.
# 3. Reads the sweep once into the page cache, then runs, alternating in
#    each of BENCH_ROUNDS rounds (off, on, off, on, ...; the first round's
#    order is swapped every other round, so neither side always runs first):
#      off: crlbatch score DIR/plain --out DIR/out --quiet --figures=false
#      on:  crlbatch score DIR/plain --out DIR/out --quiet
#    each timed by /usr/bin/time (wall, user+sys CPU, peak RSS), with the
#    load average before and after. Each run's output is checked: "on"
#    must hold figure files, "off" none, and both the same Parquet files.
# 4. Prints the medians of each side, their ratio on/off and the median of
#    each round's ratio on/off (steadier when the machine's speed drifts), a
#    Markdown table
#    (also in DIR/table.md; raw timings in DIR/results.tsv).
#
# Settings (environment):
#   BENCH_BYTES        bytes of JSONL in the sweep (1000000000)
#   BENCH_DIR          where the binary, sweep and results live
#                      (/tmp/crlbatch-bench-figures-$BENCH_BYTES)
#   BENCH_ROUNDS       rounds (5)
#   BENCH_CONCURRENCY  crlbatch's --concurrency (default: crlbatch's own)
#
# Needs: go, /usr/bin/time (apt-get install time), sha256sum.
set -euo pipefail

die() { echo "bench/figures.sh: $*" >&2; exit 1; }
cd "$(dirname "$0")/.."

BYTES=${BENCH_BYTES:-1000000000}
DIR=${BENCH_DIR:-/tmp/crlbatch-bench-figures-$BYTES}
ROUNDS=${BENCH_ROUNDS:-5}
[ "$ROUNDS" -ge 1 ] || die "BENCH_ROUNDS=$ROUNDS: at least 1"
[ -x /usr/bin/time ] || die "/usr/bin/time is missing (GNU time): apt-get install time"
conc=()
[ -n "${BENCH_CONCURRENCY:-}" ] && conc=(--concurrency "$BENCH_CONCURRENCY")

mkdir -p "$DIR"
CRLBATCH=$DIR/crlbatch
rev="$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- . 2>/dev/null || echo -dirty)"
echo "building crlbatch ($rev)" >&2
go build -tags "$(bench/buildtags.sh)" -o "$CRLBATCH" ./cmd/crlbatch

synth_flags=(--family ppo --family sac --family ewc --family dqn --seeds 5 --extras --seed 1)
fp_dir=$(mktemp -d)
trap 'rm -rf "$fp_dir"' EXIT
"$CRLBATCH" synth --out "$fp_dir/s" "${synth_flags[@]}" --target-bytes 200000 --compression none >/dev/null
fingerprint=$(cd "$fp_dir/s" && find . -type f | LC_ALL=C sort | xargs sha256sum | sha256sum | cut -c1-16)
stamp="synth ${synth_flags[*]} --target-bytes $BYTES --compression none generator $fingerprint"
if [ "${BENCH_REGEN:-0}" = 1 ] || [ ! -f "$DIR/sweep.stamp" ] || [ "$(cat "$DIR/sweep.stamp")" != "$stamp" ]; then
	echo "generating $BYTES bytes of JSONL under $DIR/plain" >&2
	rm -rf "$DIR/sweep.stamp" "$DIR/plain" "$DIR/plain.tmp"
	"$CRLBATCH" synth --out "$DIR/plain.tmp" "${synth_flags[@]}" --target-bytes "$BYTES" --compression none >&2
	mv "$DIR/plain.tmp" "$DIR/plain"
	echo "$stamp" >"$DIR/sweep.stamp"
fi
cat "$DIR"/plain/*/*.jsonl >/dev/null # into the page cache
mb=$(($(cat "$DIR"/plain/*/*.jsonl | wc -c) / 1000000))

results=$DIR/results.tsv
printf 'round\tside\twall_s\tcpu_s\trss_kb\tload_before\tload_after\n' >"$results"
run() { # run ROUND SIDE
	local round=$1 side=$2 flags=() load0 load1 wall user sys rss cpu
	[ "$side" = off ] && flags=(--figures=false)
	rm -rf "$DIR/out"
	load0=$(cut -d' ' -f1 /proc/loadavg)
	/usr/bin/time -f '%e %U %S %M' -o "$DIR/time.txt" \
		"$CRLBATCH" score "$DIR/plain" --out "$DIR/out" --quiet "${conc[@]}" "${flags[@]}" >/dev/null
	load1=$(cut -d' ' -f1 /proc/loadavg)
	read -r wall user sys rss <"$DIR/time.txt"
	cpu=$(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%.2f", u + s }')
	local figs
	figs=$(find "$DIR/out" -name 'figure-*' | wc -l)
	case $side in
	on) [ "$figs" -gt 0 ] || die "round $round: figures on wrote no figure" ;;
	off) [ "$figs" = 0 ] || die "round $round: --figures=false wrote $figs figure files" ;;
	esac
	(cd "$DIR/out" && sha256sum ./*.parquet) >"$DIR/parquet.$side.sha256"
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$round" "$side" "$wall" "$cpu" "$rss" "$load0" "$load1" >>"$results"
	echo "round $round $side: wall ${wall}s, cpu ${cpu}s, rss ${rss}KB, load $load0 -> $load1" >&2
}
for round in $(seq 1 "$ROUNDS"); do
	if [ $((round % 2)) = 1 ]; then
		run "$round" off
		run "$round" on
	else
		run "$round" on
		run "$round" off
	fi
	cmp -s "$DIR/parquet.off.sha256" "$DIR/parquet.on.sha256" || die "round $round: the Parquet files differ with and without figures"
done
rm -rf "$DIR/out"

median() { # median COLUMN SIDE
	awk -F'\t' -v c="$1" -v s="$2" 'NR > 1 && $2 == s { print $c }' "$results" | LC_ALL=C sort -g |
		awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.3f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", a / b }'; }
woff=$(median 3 off) won=$(median 3 on)
coff=$(median 4 off) con=$(median 4 on)
roff=$(median 5 off) ron=$(median 5 on)
paired() { # paired COLUMN: the median over rounds of on / off
	awk -F'\t' -v c="$1" 'NR > 1 { v[$1 "," $2] = $c; r[$1] = 1 } END { for (k in r) printf "%.4f\n", v[k ",on"] / v[k ",off"] }' "$results" |
		LC_ALL=C sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) printf "%.3f", v[(NR + 1) / 2]; else printf "%.3f", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
loads=$(awk -F'\t' 'NR > 1 { print $6; print $7 }' "$results" | LC_ALL=C sort -g | awk 'NR == 1 { lo = $1 } { hi = $1 } END { print lo "–" hi }')
{
	echo "### ${mb} MB of JSONL (20 runs, 4 families), $ROUNDS alternating rounds, medians; load average $loads; $(nproc) cores; $rev"
	echo
	echo "| ${mb} MB sweep | figures off | figures on | on / off (medians) | on / off (median of each round's) |"
	echo "|---|---|---|---|---|"
	echo "| wall | ${woff} s | ${won} s | $(ratio "$won" "$woff") | $(paired 3) |"
	echo "| user + sys CPU | ${coff} s | ${con} s | $(ratio "$con" "$coff") | $(paired 4) |"
	echo "| peak RSS | $(awk -v k="$roff" 'BEGIN { printf "%.0f", k / 1024 }') MiB | $(awk -v k="$ron" 'BEGIN { printf "%.0f", k / 1024 }') MiB | $(ratio "$ron" "$roff") | $(paired 5) |"
} | tee "$DIR/table.md"
