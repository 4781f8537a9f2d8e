#!/usr/bin/env bash
# The benchmark that decides between crlbatch's JSON row decoder and the
# candidates issue 16 names for it (bench/decodecand): bytes of JSONL per
# CPU second on one core (GOMAXPROCS=1, -cpu 1), on both sweep shapes,
# the candidates alternating round by round. Not run in CI.
#
#   bench/decode_candidates.sh                 # 5 rounds
#   BENCH_CAND_ROUNDS=9 bench/decode_candidates.sh
#
# Candidates (bench/decodecand/cand_test.go says exactly what each does):
#   decoder         readers.DecodeObject: everything crlbatch does per object
#   simdjson_tape   simdjson-go v0.4.5's ParseND on 1 MiB blocks, the tape
#                   only (the least a simdjson path costs)
#   simdjson_rows   that, and the tape read into the same rows and builder
#   simdjson_lines  simdjson-go's Parse line by line (buffers reused), and
#                   the tape read into the rows
#   stage1_swar     a structural index of our own in pure Go (simdjson's
#                   stage 1 with 8-byte words): the index alone
# The simdjson candidates make fewer checks than the decoder (no repeated
# keys, no lone surrogates, no raw bytes kept for the metadata), so they
# are lower bounds of what such a path would cost.
#
# Inputs: about BENCH_CAND_BYTES (10000000) of whole lines of each shape,
# from the first objects of a `crlbatch synth --extras` sweep (regular) and
# of a bench/irregulargen sweep (irregular), written once under
# BENCH_CAND_DIR (/tmp/crlbatch-decode-cand). The median "cpuMB/s" of each
# candidate and its ratio to the decoder's are printed; every round's raw
# benchmark lines are in BENCH_CAND_DIR/rounds.txt.
#
# Needs: go; the simdjson candidates need a CPU with AVX2 and CLMUL
# (simdjson.SupportedCPU), else only decoder and stage1_swar run.
set -euo pipefail

repo="$(cd "$(dirname "$0")/.." && pwd)"
DIR="${BENCH_CAND_DIR:-/tmp/crlbatch-decode-cand}"
BYTES="${BENCH_CAND_BYTES:-10000000}"
ROUNDS="${BENCH_CAND_ROUNDS:-5}"
cands=(decoder simdjson_tape simdjson_rows simdjson_lines stage1_swar)
mkdir -p "$DIR"

if [ ! -s "$DIR/regular.jsonl" ] || [ ! -s "$DIR/irregular.jsonl" ]; then
	gen="$DIR/gen"
	rm -rf "$gen" && mkdir -p "$gen"
	(cd "$repo" && go build -o "$gen/crlbatch" ./cmd/crlbatch && go build -o "$gen/irregulargen" ./bench/irregulargen)
	"$gen/crlbatch" synth --out "$gen/reg" --family ppo --family sac --family ewc --family dqn --seeds 5 \
		--extras --seed 1 --target-bytes $((BYTES * 4)) >/dev/null
	"$gen/irregulargen" -out "$gen/irr" -target-bytes $((BYTES * 4)) -seed 1
	cat "$gen/reg"/*/*-s0.jsonl | head -c "$BYTES" | sed '$d' >"$DIR/regular.jsonl"
	cat "$gen/irr"/*/*-s0.jsonl | head -c "$BYTES" | sed '$d' >"$DIR/irregular.jsonl"
	rm -rf "$gen"
fi

(cd "$repo/bench/decodecand" && go test -c -o "$DIR/decodecand.test" .)
export CRLBATCH_CAND_REGULAR="$DIR/regular.jsonl" CRLBATCH_CAND_IRREGULAR="$DIR/irregular.jsonl"
: >"$DIR/rounds.txt"
for r in $(seq "$ROUNDS"); do
	for shape in regular irregular; do
		for c in "${cands[@]}"; do
			(cd "$repo/bench/decodecand" && GOMAXPROCS=1 "$DIR/decodecand.test" -test.run XXX \
				-test.bench "^BenchmarkCandidates\$/^$shape\$/^$c\$" -test.cpu 1 -test.benchtime 1s) |
				grep '^BenchmarkCandidates' >>"$DIR/rounds.txt" || true
		done
	done
	echo "round $r of $ROUNDS done, load average $(cut -d' ' -f1-3 /proc/loadavg)" >&2
done

# Median cpuMB/s per shape and candidate, and the ratio to the decoder's.
awk '
	{
		split($1, p, "/"); shape = p[2]; c = p[3]; sub(/-[0-9]+$/, "", c)
		for (i = 2; i < NF; i++) if ($(i + 1) == "cpuMB/s") v[shape, c] = v[shape, c] " " $i
		seen[shape, c] = 1
	}
	function median(s,   a, n, i, j, t) {
		n = split(s, a, " ")
		for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
		return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
	}
	END {
		printf "| shape | candidate | cpuMB/s (median) | × the decoder | rounds (cpuMB/s) |\n| :-- | :-- | --: | --: | :-- |\n"
		split("regular irregular", shapes, " ")
		split("decoder simdjson_tape simdjson_rows simdjson_lines stage1_swar", cs, " ")
		for (s = 1; s <= 2; s++) {
			base = median(v[shapes[s], "decoder"])
			for (i = 1; i <= 5; i++) {
				if (!seen[shapes[s], cs[i]]) continue
				m = median(v[shapes[s], cs[i]])
				printf "| %s | %s | %.0f | %.2f | %s |\n", shapes[s], cs[i], m, m / base, v[shapes[s], cs[i]]
			}
		}
	}' "$DIR/rounds.txt"
