#!/usr/bin/env bash
# The row decoder's instructions per MB of JSONL, on both sweep shapes, at
# one or more git revisions (issue 16). Not run in CI.
#
#   bench/decode_ir.sh                    # HEAD
#   bench/decode_ir.sh ee630c9 HEAD       # before and after; benchstat compares them
#
# On a machine shared with other work, wall-clock and even CPU-time
# benchmarks swing by ±30-100 % (docs/performance-history.md, "The decoder,
# issue 16"); the number of
# instructions a run executes does not. For each revision this builds the
# readers test binary (git archive into a temporary folder) and runs
# BenchmarkDecodeFile once under valgrind's cachegrind (--cache-sim=no,
# GOGC=off so that the collector's share does not vary), on about 10 MB of
# each shape: the first objects of a `crlbatch synth --extras` sweep
# (regular) and of a bench/irregulargen sweep (irregular), written once
# under BENCH_IR_DIR. The binary's start (the same run on a one-line file)
# is subtracted. It prints benchstat's input format, one file per revision
# (BENCH_IR_DIR/<rev>.txt), and benchstat's comparison when it is
# installed. Instructions are a proxy: they miss cache misses and branch
# mispredictions, so confirm a change on a quiet machine's wall clock.
#
# Needs: valgrind, go; benchstat (golang.org/x/perf/cmd/benchstat) optional.
# Settings:
#   BENCH_IR_DIR     where inputs and results go (/tmp/crlbatch-decode-ir)
#   BENCH_IR_BYTES   bytes of JSONL per shape (10000000)
#   BENCH_IR_PGO     a CPU profile (pprof) to build the test binaries with
#                    (go test -pgo): what profile-guided optimisation would
#                    change; results go to BENCH_IR_DIR/<rev>-pgo.txt
set -euo pipefail

repo="$(cd "$(dirname "$0")/.." && pwd)"
DIR="${BENCH_IR_DIR:-/tmp/crlbatch-decode-ir}"
BYTES="${BENCH_IR_BYTES:-10000000}"
revs=("$@")
[ ${#revs[@]} -gt 0 ] || revs=(HEAD)
command -v valgrind >/dev/null || { echo "decode_ir: valgrind is not installed" >&2; exit 1; }
mkdir -p "$DIR"

# Inputs, from the working tree's generators (the same bytes for every revision).
if [ ! -s "$DIR/regular.jsonl" ] || [ ! -s "$DIR/irregular.jsonl" ]; then
	gen="$DIR/gen"
	rm -rf "$gen" && mkdir -p "$gen"
	(cd "$repo" && go build -o "$gen/crlbatch" ./cmd/crlbatch && go build -o "$gen/irregulargen" ./bench/irregulargen)
	"$gen/crlbatch" synth --out "$gen/reg" --family ppo --family sac --family ewc --family dqn --seeds 5 \
		--extras --seed 1 --target-bytes $((BYTES * 4)) >/dev/null
	"$gen/irregulargen" -out "$gen/irr" -target-bytes $((BYTES * 4)) -seed 1
	for shape in reg irr; do
		out=regular
		[ "$shape" = irr ] && out=irregular
		# Whole lines, about BYTES of them, from the first objects.
		cat "$gen/$shape"/*/*-s0.jsonl | head -c "$BYTES" | sed '$d' >"$DIR/$out.jsonl"
		head -n 1 "$DIR/$out.jsonl" >"$DIR/$out-1.jsonl"
	done
	rm -rf "$gen"
fi

# instructions BIN FILE: Ir of one BenchmarkDecodeFile pass over FILE.
instructions() {
	(cd "$repo/readers" && GOGC=off CRLBATCH_BENCH_FILE="$2" valgrind --tool=cachegrind --cache-sim=no \
		--cachegrind-out-file=/dev/null "$1" -test.run XXX -test.bench 'DecodeFile$' -test.cpu 1 \
		-test.benchtime 1x 2>&1 | awk '/I +refs/ { gsub(",", "", $4); print $4 }')
}

files=()
for rev in "${revs[@]}"; do
	sha=$(cd "$repo" && git rev-parse --short "$rev")
	src=$(mktemp -d)
	(cd "$repo" && git archive "$sha") | tar -x -C "$src"
	pgo=off tag=
	if [ -n "${BENCH_IR_PGO:-}" ]; then
		pgo="$(realpath "$BENCH_IR_PGO")" tag=-pgo
	fi
	(cd "$src" && go test -c -pgo="$pgo" -o "$DIR/readers-$sha$tag.test" ./readers)
	rm -rf "$src"
	out="$DIR/$sha$tag.txt"
	: >"$out"
	for shape in regular irregular; do
		file="$DIR/$shape.jsonl"
		mb=$(awk -v b="$(stat -c %s "$file")" 'BEGIN { print b / 1e6 }')
		all=$(instructions "$DIR/readers-$sha$tag.test" "$file")
		start=$(instructions "$DIR/readers-$sha$tag.test" "$DIR/$shape-1.jsonl")
		awk -v s="$shape" -v a="$all" -v z="$start" -v mb="$mb" \
			'BEGIN { printf "BenchmarkDecodeIr/%s 1 %.0f instructions/MB\n", s, (a - z) / mb }' >>"$out"
	done
	echo "== $rev ($sha$tag)"
	cat "$out"
	files+=("$out")
done
if [ ${#files[@]} -gt 1 ] && command -v benchstat >/dev/null; then
	benchstat "${files[@]}"
fi
