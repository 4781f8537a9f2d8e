#!/usr/bin/env bash
# Full `crlbatch score` (the nightly job's flags, as bench/compare.sh runs it)
# at two git revisions, alternating (in turn first) round by round on the 1 GB sweeps of
# bench/compare.sh (plain JSONL, both shapes): CPU seconds (user+sys), wall
# seconds and peak RSS of each run, and a check that both revisions write
# the same runs.parquet, families.parquet and report.md. For a decoder change
# (issue 16): the change end to end, on the machine as it is. Not run in CI.
#
#   bench/decode_ab.sh OLD NEW
#
# Settings:
#   BENCH_DIR        the sweeps of bench/compare.sh (/tmp/crlbatch-bench-1000000000;
#                    run `make bench-compare` once to write them)
#   BENCH_AB_ROUNDS  rounds (3)
#   BENCH_AB_OUT     where binaries, outputs and results go (/tmp/crlbatch-decode-ab)
#   BENCH_CONCURRENCY  --concurrency (nproc)
set -euo pipefail

repo="$(cd "$(dirname "$0")/.." && pwd)"
[ $# -eq 2 ] || { echo "usage: bench/decode_ab.sh OLD NEW" >&2; exit 1; }
DIR="${BENCH_DIR:-/tmp/crlbatch-bench-1000000000}"
ROUNDS="${BENCH_AB_ROUNDS:-3}"
OUT="${BENCH_AB_OUT:-/tmp/crlbatch-decode-ab}"
CONC="${BENCH_CONCURRENCY:-$(nproc)}"
CRL_FLAGS=(--quiet --spec experiment --ceiling by_configuration --episode-end-from-spec
	--solve-component progress --group-by algorithm_id --baseline ppo --bootstrap-seed 0)
for s in plain irregular-plain; do
	[ -d "$DIR/$s" ] || { echo "decode_ab: $DIR/$s is missing: run make bench-compare first" >&2; exit 1; }
done
[ -x /usr/bin/time ] || { echo "decode_ab: /usr/bin/time is missing (apt-get install time)" >&2; exit 1; }
mkdir -p "$OUT"

# Both built with the tags of `make build` (bench/buildtags.sh), kept apart
# by them in OUT.
tags=$("$repo/bench/buildtags.sh")
revs=()
for rev in "$1" "$2"; do
	sha=$(cd "$repo" && git rev-parse --short "$rev")
	id=$sha${tags:+-${tags//[ ,]/+}}
	if [ ! -x "$OUT/crlbatch-$id" ]; then
		src=$(mktemp -d)
		(cd "$repo" && git archive "$sha") | tar -x -C "$src"
		# A cp copy of what the linker wrote: a freshly linked binary
		# peaks 10-17 MiB higher in RSS.
		(cd "$src" && CGO_ENABLED=0 go build -tags "$tags" -o "$OUT/crlbatch-$id.link" ./cmd/crlbatch)
		cp "$OUT/crlbatch-$id.link" "$OUT/crlbatch-$id" && rm "$OUT/crlbatch-$id.link"
		rm -rf "$src"
	fi
	revs+=("$id")
done

# Every round reads from the page cache: the first would pay the disk.
find "$DIR/plain" "$DIR/irregular-plain" -type f -exec cat {} + >/dev/null

res="$OUT/results.tsv"
printf 'round\trev\tsweep\tcpu_s\twall_s\tpeak_mib\n' >"$res"
for r in $(seq "$ROUNDS"); do
	# The order of the two revisions swaps every round: a run that warms
	# or loads the machine for the next does it to each in turn.
	order=("${revs[@]}")
	((r % 2 == 0)) && order=("${revs[1]}" "${revs[0]}")
	for s in plain irregular-plain; do
		for sha in "${order[@]}"; do
			out="$OUT/out-$sha-$s"
			rm -rf "$out"
			/usr/bin/time -f '%U %S %e %M' -o "$OUT/time" "$OUT/crlbatch-$sha" score "$DIR/$s" --out "$out" \
				--concurrency "$CONC" "${CRL_FLAGS[@]}" >"$OUT/log"
			read -r u sy e m <"$OUT/time"
			awk -v r="$r" -v v="$sha" -v s="$s" -v u="$u" -v sy="$sy" -v e="$e" -v m="$m" \
				'BEGIN { printf "%s\t%s\t%s\t%.2f\t%.2f\t%.0f\n", r, v, s, u + sy, e, m / 1024 }' >>"$res"
		done
		for f in runs.parquet families.parquet report.md; do
			cmp -s "$OUT/out-${revs[0]}-$s/$f" "$OUT/out-${revs[1]}-$s/$f" ||
				{ echo "decode_ab: $s: $f differs between ${revs[0]} and ${revs[1]}" >&2; exit 1; }
		done
	done
	echo "round $r of $ROUNDS done, load average $(cut -d' ' -f1-3 /proc/loadavg)" >&2
done

# Medians per sweep and revision.
awk -F'\t' -v a="${revs[0]}" -v b="${revs[1]}" '
	NR > 1 { k = $3 SUBSEP $2; cpu[k] = cpu[k] " " $4; wall[k] = wall[k] " " $5; rss[k] = rss[k] " " $6; sw[$3] = 1 }
	function median(s,   x, n, i, j, t) {
		n = split(s, x, " ")
		for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (x[j] + 0 < x[i] + 0) { t = x[i]; x[i] = x[j]; x[j] = t }
		return n % 2 ? x[(n + 1) / 2] : (x[n / 2] + x[n / 2 + 1]) / 2
	}
	END {
		printf "| sweep | CPU s, %s → %s (medians) | wall s | peak RSS MiB | CPU s, every round |\n| :-- | :-- | :-- | :-- | :-- |\n", a, b
		for (s in sw) {
			ca = median(cpu[s, a]); cb = median(cpu[s, b])
			printf "| %s | %.2f → %.2f (%+.1f %%) | %.2f → %.2f | %.0f → %.0f | %s /%s |\n", s, ca, cb, (cb / ca - 1) * 100,
				median(wall[s, a]), median(wall[s, b]), median(rss[s, a]), median(rss[s, b]), cpu[s, a], cpu[s, b]
		}
	}' "$res"
