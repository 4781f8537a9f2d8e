#!/usr/bin/env bash
# crlbatch side by side with DuckDB and pandas on the same trace files
# (issues 7 and 16). `make bench-compare` runs it; not run in CI.
#
#   bench/compare.sh                                   # 1 GB sweep
#   BENCH_BYTES=4000000000 bench/compare.sh            # 4 GB, spilling (make bench-compare-4g)
#
# 1. Generates once, with `crlbatch synth` (fixed seed: byte-identical every
#    time), a sweep of BENCH_BYTES of JSONL: 4 families x 5 seeds = 20 runs,
#    one object each, rows with per-step extras and full-precision floats
#    (shortest round-trip digits, ~17 significant), in two copies, plain
#    (DIR/plain) and zstd (DIR/zstd), plus a slice of the first objects
#    holding about BENCH_SLICE_BYTES (hard links: DIR/slice-plain,
#    DIR/slice-zstd) for pandas. Kept under BENCH_DIR and reused by later
#    invocations while the generating command and generator are the same
#    (DIR/sweep.stamp: the flags, and the hash of a tiny sweep that the
#    binary's synth writes with them); BENCH_REGEN=1 generates again.
#    This is the "regular" shape: every row has the same keys in the same
#    order. The "irregular" shape (BENCH_SHAPES, both by default) is the
#    same 4 families x 5 seeds written by bench/irregulargen, rows as Python's
#    json.dumps prints them: key order varying row to row, optional keys on
#    a share of rows, components changing across intervals, integers of
#    varying width, long strings (bench/irregulargen/main.go says what
#    exactly), plain (DIR/irregular-plain) and zstd (DIR/irregular-zstd),
#    cached the same way (DIR/irregular.stamp).
# 2. Runs, alternating within each of BENCH_ROUNDS rounds (A B A B ...), from
#    the page cache (each run's input is read just before it, untimed):
#      crlbatch score DIR/{plain,zstd} --out DIR/out --quiet + the nightly
#        job's full-protocol flags (spec ceilings, solve component, families,
#        bootstrap): every output, report and manifest included;
#      DuckDB in this process (bin/duckdbq, bench/duckdbq: duckdb-go, no
#        Node, no runtime around it): read_ndjson over the same files,
#        GROUP BY (run_id, regime_id): count, avg(reward), var_samp(reward),
#        SET threads equal to crlbatch's --concurrency (BENCH_CONCURRENCY);
#        the bare query (columns given: the one issue 7 quotes) and, as a
#        researcher would type it, with schema auto-detection (regular shape);
#      with BENCH_DUCKDB_NODE=1, also the same bare query through Node
#        (bench/duckdb_query.mjs, @duckdb/node-api), on plain input, to see
#        what Node adds (start-up, RSS);
#      pandas (bench/pandas_query.py, Debian's /usr/bin/python3):
#        read_json(lines=True) + groupby count/mean/var on the slice, and
#        crlbatch on the same slice;
#      crlbatch --concurrency 1, and --concurrency 1 with GOMAXPROCS=1 (one
#        core), on the plain sweep;
#      with BENCH_ONE_OBJECT=1, crlbatch (and crlbatch --concurrency 1) and
#        DuckDB's bare query on the same sweep as one object
#        (DIR/one-plain/sweep.jsonl, DIR/one-zstd/sweep.jsonl.zst: the
#        objects concatenated, a sweep of one big file; for the irregular
#        shape DIR/irregular-one-*), where crlbatch decodes the object in
#        chunks on every core.
#    Each run is timed by /usr/bin/time (wall, user+sys CPU, peak RSS of the
#    process), the CPU time other processes took meanwhile is noted (from
#    /proc/stat, so that a shared machine shows), and its answer is checked:
#    crlbatch and DuckDB must count every row of the sweep, pandas every row
#    of the slice, and plain and zstd must give DuckDB the same sums.
# 3. Prints Markdown tables (bench/summarize.mjs): medians of wall time, CPU
#    time, MB/s, peak RSS; the ratios crlbatch/DuckDB and crlbatch/pandas;
#    zstd as a share of plain; the 1 -> 2 core speed-up; and, for a sweep
#    larger than 1 GB, crlbatch's peak RSS against the 1 GB run's.
#    They are also left in DIR/table.md, the raw timings in DIR/results.tsv.
#
# Settings (environment):
#   BENCH_BYTES         bytes of JSONL in the sweep (1000000000)
#   BENCH_DIR           where the sweep and results live (/tmp/crlbatch-bench-$BENCH_BYTES)
#   BENCH_ROUNDS        rounds (5 up to 1 GB, 3 above; at least 3)
#   BENCH_SLICE_BYTES   about this much JSONL for pandas (100000000)
#   BENCH_MEMORY_LIMIT  crlbatch --memory-limit; spill files go to DIR/spill.
#                       Default: none (crlbatch's own, half the machine's
#                       memory) up to 1 GB; 16MiB above (see
#                       docs/performance-history.md, "Memory, and why
#                       `--memory-limit 16MiB` at 4 GB")
#   BENCH_PANDAS        1 to run pandas (default 1 up to 1 GB, 0 above)
#   BENCH_ONECORE       1 to run the one-core crlbatch runs (default 1 up to 1 GB, 0 above)
#   BENCH_SHAPES        "regular irregular" (default), or one of them
#   BENCH_CONCURRENCY   crlbatch's --concurrency and DuckDB's threads (nproc)
#   BENCH_DUCKDB_AUTO   1 to also run DuckDB with schema auto-detection on the
#                       regular shape (default 1)
#   BENCH_DUCKDB_NODE   1 to also run the bare query through Node (default 0)
#   BENCH_ONE_OBJECT    1 to also run on the sweep as one object (default 1 up to 1 GB, 0 above)
#   BENCH_NOSPILL       1 to also run crlbatch without the limit (default 1 when a limit is set)
#   BENCH_BASELINE      results.tsv of the 1 GB run, for the memory comparison
#                       (default /tmp/crlbatch-bench-1000000000/results.tsv above 1 GB)
#   BENCH_WAIT_QUIET    on a shared machine: before each round, wait for other
#                       processes to use under 10 % of the cores, at most this
#                       many seconds in all (0)
#   CRLBATCH            the binary (bin/crlbatch; `make bench-compare` builds it)
#   DUCKDBQ             DuckDB's query (bin/duckdbq; `make bench-duckdbq` builds it);
#                       both binaries are copied to BENCH_BIN_DIR and run from there
#   BENCH_BIN_DIR       where the copies go (a fresh directory on /dev/shm, removed
#                       at the end; DIR/bin when /dev/shm is not writable)
#   BENCH_CRLBATCH_REV  what to call its version in the tables (default: the
#                       repo's commit, marked when Go files are uncommitted)
#   BENCH_PYTHON        Python with pandas (/usr/bin/python3, Debian's)
#
# Needs: /usr/bin/time (apt-get install time); bin/duckdbq (make
# bench-duckdbq: Go with cgo and a C compiler); node >= 18 (apt-get install
# nodejs) for the tables (bench/summarize.mjs), and with BENCH_DUCKDB_NODE=1
# the pinned @duckdb/node-api (npm ci --prefix integration);
# Debian's python3-pandas and python3-zstandard (apt-get install
# python3-pandas python3-zstandard). Disk: BENCH_BYTES x ~1.2 under BENCH_DIR,
# plus about a tenth of BENCH_BYTES for spill files under a memory limit.
set -euo pipefail

repo="$(cd "$(dirname "$0")/.." && pwd)"
bench="$repo/bench"

BYTES="${BENCH_BYTES:-1000000000}"
case "$BYTES" in '' | *[!0-9]*)
	echo "bench-compare: BENCH_BYTES=$BYTES: want a whole number of bytes (4000000000, not 4e9)" >&2
	exit 1
	;;
esac
DIR="${BENCH_DIR:-/tmp/crlbatch-bench-$BYTES}"
ROUNDS="${BENCH_ROUNDS:-$([ "$BYTES" -gt 1000000000 ] && echo 3 || echo 5)}"
SLICE_BYTES="${BENCH_SLICE_BYTES:-100000000}"
CRLBATCH="${CRLBATCH:-$repo/bin/crlbatch}"
DUCKDBQ="${DUCKDBQ:-$repo/bin/duckdbq}"
SHAPES="${BENCH_SHAPES:-regular irregular}"
CONC="${BENCH_CONCURRENCY:-$(nproc)}"
DUCKDB_NODE="${BENCH_DUCKDB_NODE:-0}"
IRREGULARGEN="${IRREGULARGEN:-$repo/bin/irregulargen}"
PYTHON="${BENCH_PYTHON:-/usr/bin/python3}"
NODE="${BENCH_NODE:-node}"
big=0
[ "$BYTES" -gt 1000000000 ] && big=1
if [ "$big" = 1 ]; then
	MEMLIMIT="${BENCH_MEMORY_LIMIT-16MiB}"
	PANDAS="${BENCH_PANDAS:-0}"
	ONECORE="${BENCH_ONECORE:-0}"
	ONE_OBJECT="${BENCH_ONE_OBJECT:-0}"
	BASELINE="${BENCH_BASELINE-/tmp/crlbatch-bench-1000000000/results.tsv}"
else
	MEMLIMIT="${BENCH_MEMORY_LIMIT:-}"
	PANDAS="${BENCH_PANDAS:-1}"
	ONECORE="${BENCH_ONECORE:-1}"
	ONE_OBJECT="${BENCH_ONE_OBJECT:-1}"
	BASELINE="${BENCH_BASELINE:-}"
fi
DUCKDB_AUTO="${BENCH_DUCKDB_AUTO:-1}"
case " $SHAPES " in *" regular "*) ;; *) PANDAS=0 ONECORE=0 ;; esac
NOSPILL="${BENCH_NOSPILL:-$([ -n "$MEMLIMIT" ] && echo 1 || echo 0)}"

# The nightly job's settings (configs/nightly.yaml) without input and out:
# the full skyfall protocol with spec ceilings, as a lab runs it.
CRL_FLAGS=(--quiet --spec experiment --ceiling by_configuration --episode-end-from-spec
	--solve-component progress --group-by algorithm_id --baseline ppo --bootstrap-seed 0)

die() {
	echo "bench-compare: $*" >&2
	exit 1
}

# ---- tools: fail loudly, say how to install --------------------------------
[ "$ROUNDS" -ge 3 ] 2>/dev/null || die "BENCH_ROUNDS=$ROUNDS: want at least 3"
[ -x /usr/bin/time ] || die "/usr/bin/time is missing (GNU time): apt-get install time"
[ -x "$CRLBATCH" ] || die "$CRLBATCH is missing: run 'make build' (make bench-compare does it)"
[ -x "$DUCKDBQ" ] || die "$DUCKDBQ is missing: run 'make bench-duckdbq' (make bench-compare does it)"
command -v "$NODE" >/dev/null || die "node is missing: apt-get install nodejs (Node >= 18)"
if [ "$DUCKDB_NODE" = 1 ]; then
	[ -d "$repo/integration/node_modules/@duckdb/node-api" ] ||
		die "@duckdb/node-api is not installed: npm ci --prefix integration (the version pinned in integration/package-lock.json)"
fi
case " $SHAPES " in *" regular "* | *" irregular "*) ;; *) die "BENCH_SHAPES=$SHAPES: want regular, irregular or both" ;; esac
case "$CONC" in '' | *[!0-9]* | 0) die "BENCH_CONCURRENCY=$CONC: want a whole number of threads, at least 1" ;; esac
if [ "$PANDAS" = 1 ]; then
	[ -x "$PYTHON" ] || die "$PYTHON is missing: apt-get install python3 python3-pandas python3-zstandard"
	"$PYTHON" -c 'import pandas' 2>/dev/null || die "pandas is missing for $PYTHON: apt-get install python3-pandas"
	"$PYTHON" -c 'import zstandard' 2>/dev/null ||
		die "zstandard is missing for $PYTHON (pandas reads .zst through it): apt-get install python3-zstandard"
fi
for t in find sort awk sed ln stat df getconf sha256sum; do
	command -v $t >/dev/null || die "$t is missing: apt-get install coreutils findutils gawk sed libc-bin"
done
case "$BYTES$SLICE_BYTES$ROUNDS" in *[!0-9]*) die "BENCH_BYTES, BENCH_SLICE_BYTES and BENCH_ROUNDS must be whole numbers" ;; esac

mkdir -p "$DIR"
# Both tools run from copies (cp) of their binaries on a tmpfs (BENCH_BIN_DIR,
# /dev/shm when writable, else DIR/bin). A binary's text and read-only data
# pages count in its RSS, and how many of them a run maps depends on how the
# file sits in the page cache, not on its bytes: a file the linker has just
# written is partly held in 2 MiB folios, which the kernel maps whole (the
# same crlbatch bytes peaked 13 MiB higher run from the linker's output than
# from a cp copy), and on this machine a copy on disk changes too (pages
# unused for a minute are paged out, and read(2) brings them back in 2 MiB
# folios). A tmpfs copy has 4 KiB pages (shmem THP off, as here) that stay
# in memory: the same bytes give the same peak (docs/performance.md, "How it
# is measured"). The copies are made afresh on every run.
BIN_DIR="${BENCH_BIN_DIR:-}"
if [ -z "$BIN_DIR" ]; then
	if [ -d /dev/shm ] && [ -w /dev/shm ]; then
		BIN_DIR=$(mktemp -d /dev/shm/crlbatch-bench-bin.XXXXXX)
		trap 'rm -rf "$BIN_DIR"' EXIT
	else
		BIN_DIR="$DIR/bin"
	fi
fi
mkdir -p "$BIN_DIR"
cp "$CRLBATCH" "$BIN_DIR/crlbatch.tmp" && mv "$BIN_DIR/crlbatch.tmp" "$BIN_DIR/crlbatch"
cp "$DUCKDBQ" "$BIN_DIR/duckdbq.tmp" && mv "$BIN_DIR/duckdbq.tmp" "$BIN_DIR/duckdbq"
CRLBATCH="$BIN_DIR/crlbatch"
DUCKDBQ="$BIN_DIR/duckdbq"
DIR="$(cd "$DIR" && pwd)"

# has_shape SHAPE: SHAPE is measured.
has_shape() { case " $SHAPES " in *" $1 "*) return 0 ;; esac; return 1; }

# ---- the sweep, generated once -------------------------------------------
rows=0 raw_bytes=0 objects=0
plain_files=() zstd_files=() slice_plain_files=() slice_zstd_files=()
if has_shape regular; then
	synth_flags=(--family ppo --family sac --family ewc --family dqn --seeds 5 --extras --seed 1)
	synth_args=("${synth_flags[@]}" --target-bytes "$BYTES")
	# The generator's fingerprint: a tiny sweep with the same flags, hashed, so
	# that a crlbatch whose synth writes other bytes generates the sweep again.
	fp_dir=$(mktemp -d)
	"$CRLBATCH" synth --out "$fp_dir/s" "${synth_flags[@]}" --target-bytes 200000 >/dev/null
	fingerprint=$(cd "$fp_dir/s" && find . -type f | LC_ALL=C sort | xargs cat | sha256sum | cut -c1-16)
	rm -rf "$fp_dir"
	stamp="synth ${synth_args[*]} (plain, zstd) slice $SLICE_BYTES generator $fingerprint"
	if [ "${BENCH_REGEN:-0}" = 1 ] || [ ! -f "$DIR/sweep.stamp" ] || [ "$(cat "$DIR/sweep.stamp")" != "$stamp" ]; then
		echo "bench-compare: generating the sweep in $DIR (once; later runs reuse it)" >&2
		rm -rf "$DIR/sweep.stamp" "$DIR/plain" "$DIR/zstd" "$DIR/slice-plain" "$DIR/slice-zstd" "$DIR/one-plain" "$DIR/one-zstd" "$DIR"/*.tmp
		"$CRLBATCH" synth --out "$DIR/plain.tmp" "${synth_args[@]}" --compression none >&2
		"$CRLBATCH" synth --out "$DIR/zstd.tmp" "${synth_args[@]}" --compression zstd >&2
		mv "$DIR/plain.tmp" "$DIR/plain"
		mv "$DIR/zstd.tmp" "$DIR/zstd"
		# The slice: the first whole objects (whole runs, so that crlbatch can
		# score them too) holding about SLICE_BYTES.
		mapfile -t objs < <(cd "$DIR/plain" && find . -type f -name '*.jsonl' | sed 's|^\./||' | LC_ALL=C sort)
		[ "${#objs[@]}" -gt 0 ] || die "synth wrote no objects under $DIR/plain"
		per=$(stat -c %s "$DIR/plain/${objs[0]}")
		k=$(awk -v s="$SLICE_BYTES" -v p="$per" 'BEGIN { k = int(s / p + 0.5); print (k < 1 ? 1 : k) }')
		for o in "${objs[@]:0:$k}"; do
			mkdir -p "$DIR/slice-plain/$(dirname "$o")" "$DIR/slice-zstd/$(dirname "$o")"
			ln "$DIR/plain/$o" "$DIR/slice-plain/$o"
			ln "$DIR/zstd/$o.zst" "$DIR/slice-zstd/$o.zst"
		done
		{
			echo "objects=${#objs[@]}"
			echo "raw_bytes=$(cat "$DIR"/plain/*/*.jsonl | wc -c)"
			echo "rows=$(cat "$DIR"/plain/*/*.jsonl | wc -l)"
			echo "zstd_bytes=$(cat "$DIR"/zstd/*/*.zst | wc -c)"
			echo "slice_objects=$k"
			echo "slice_bytes=$(cat "$DIR"/slice-plain/*/*.jsonl | wc -c)"
			echo "slice_rows=$(cat "$DIR"/slice-plain/*/*.jsonl | wc -l)"
		} >"$DIR/sweep.env"
		echo "$stamp" >"$DIR/sweep.stamp"
	fi
	# shellcheck source=/dev/null
	. "$DIR/sweep.env"
	plain_files=("$DIR"/plain/*/*.jsonl)
	zstd_files=("$DIR"/zstd/*/*.jsonl.zst)
	slice_plain_files=("$DIR"/slice-plain/*/*.jsonl)
	slice_zstd_files=("$DIR"/slice-zstd/*/*.jsonl.zst)
	[ "${#plain_files[@]}" = "$objects" ] && [ "${#zstd_files[@]}" = "$objects" ] ||
		die "$DIR holds ${#plain_files[@]} plain and ${#zstd_files[@]} zstd objects, want $objects each: BENCH_REGEN=1 to generate again"
	# The sweep as one object: the objects one after the other (zstd frames
	# concatenated make one valid zstd stream).
	if [ "$ONE_OBJECT" = 1 ] && { [ ! -f "$DIR/one-plain/sweep.jsonl" ] || [ ! -f "$DIR/one-zstd/sweep.jsonl.zst" ]; }; then
		rm -rf "$DIR/one-plain" "$DIR/one-zstd"
		mkdir -p "$DIR/one-plain.tmp" "$DIR/one-zstd.tmp"
		cat "${plain_files[@]}" >"$DIR/one-plain.tmp/sweep.jsonl"
		cat "${zstd_files[@]}" >"$DIR/one-zstd.tmp/sweep.jsonl.zst"
		mv "$DIR/one-plain.tmp" "$DIR/one-plain"
		mv "$DIR/one-zstd.tmp" "$DIR/one-zstd"
	fi

fi

# ---- the irregular sweep, generated once ----------------------------------
irr_rows=0 irr_raw_bytes=0
if has_shape irregular; then
	[ -x "$IRREGULARGEN" ] || die "$IRREGULARGEN is missing: run 'make bench-irregulargen' (make bench-compare does it)"
	fp_dir=$(mktemp -d)
	"$IRREGULARGEN" -out "$fp_dir/s" -target-bytes 200000 >/dev/null
	ifingerprint=$(cd "$fp_dir/s" && find . -type f | LC_ALL=C sort | xargs cat | sha256sum | cut -c1-16)
	rm -rf "$fp_dir"
	irr_args=(-target-bytes "$BYTES" -seed 1)
	istamp="irregulargen ${irr_args[*]} (plain, zstd) generator $ifingerprint"
	if [ "${BENCH_REGEN:-0}" = 1 ] || [ ! -f "$DIR/irregular.stamp" ] || [ "$(cat "$DIR/irregular.stamp")" != "$istamp" ]; then
		echo "bench-compare: generating the irregular sweep in $DIR (once; later runs reuse it)" >&2
		rm -rf "$DIR/irregular.stamp" "$DIR"/irregular-* "$DIR"/*.tmp
		"$IRREGULARGEN" -out "$DIR/irregular-plain.tmp" "${irr_args[@]}" -compression none
		"$IRREGULARGEN" -out "$DIR/irregular-zstd.tmp" "${irr_args[@]}" -compression zstd
		mv "$DIR/irregular-plain.tmp" "$DIR/irregular-plain"
		mv "$DIR/irregular-zstd.tmp" "$DIR/irregular-zstd"
		{
			echo "irr_objects=$(find "$DIR/irregular-plain" -type f -name '*.jsonl' | wc -l)"
			echo "irr_raw_bytes=$(cat "$DIR"/irregular-plain/*/*.jsonl | wc -c)"
			echo "irr_rows=$(cat "$DIR"/irregular-plain/*/*.jsonl | wc -l)"
			echo "irr_zstd_bytes=$(cat "$DIR"/irregular-zstd/*/*.zst | wc -c)"
		} >"$DIR/irregular.env"
		echo "$istamp" >"$DIR/irregular.stamp"
	fi
	# shellcheck source=/dev/null
	. "$DIR/irregular.env"
	irr_plain_files=("$DIR"/irregular-plain/*/*.jsonl)
	irr_zstd_files=("$DIR"/irregular-zstd/*/*.jsonl.zst)
	[ "${#irr_plain_files[@]}" = "$irr_objects" ] && [ "${#irr_zstd_files[@]}" = "$irr_objects" ] ||
		die "$DIR holds ${#irr_plain_files[@]} plain and ${#irr_zstd_files[@]} zstd irregular objects, want $irr_objects each: BENCH_REGEN=1"
	if [ "$ONE_OBJECT" = 1 ] && { [ ! -f "$DIR/irregular-one-plain/sweep.jsonl" ] || [ ! -f "$DIR/irregular-one-zstd/sweep.jsonl.zst" ]; }; then
		rm -rf "$DIR/irregular-one-plain" "$DIR/irregular-one-zstd"
		mkdir -p "$DIR/irregular-one-plain.tmp" "$DIR/irregular-one-zstd.tmp"
		cat "${irr_plain_files[@]}" >"$DIR/irregular-one-plain.tmp/sweep.jsonl"
		cat "${irr_zstd_files[@]}" >"$DIR/irregular-one-zstd.tmp/sweep.jsonl.zst"
		mv "$DIR/irregular-one-plain.tmp" "$DIR/irregular-one-plain"
		mv "$DIR/irregular-one-zstd.tmp" "$DIR/irregular-one-zstd"
	fi
fi

# Enough disk for spill files and outputs?
avail=$(df -P -B1 "$DIR" | awk 'NR == 2 { print $4 }')
[ "$avail" -gt $(((raw_bytes + irr_raw_bytes) / 2)) ] || die "only $((avail / 1000000)) MB free under $DIR"

# ---- measuring -------------------------------------------------------------
results="$DIR/results.tsv"
logs="$DIR/logs"
rm -rf "$logs" "$DIR/out" "$DIR/spill"
mkdir -p "$logs"
: >"$results"
spill_args=()
if [ -n "$MEMLIMIT" ]; then
	mkdir -p "$DIR/spill"
	spill_args=(--memory-limit "$MEMLIMIT" --spill-dir "$DIR/spill")
fi

# busy_ticks: the machine's busy CPU time so far, in clock ticks (/proc/stat:
# user nice system irq softirq steal).
CLK_TCK=$(getconf CLK_TCK)
NPROC=$(nproc)
busy_ticks() { awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 + $9; exit }' /proc/stat; }

# measure TOOL INPUT ROUND BYTES CMD...: times CMD, appends a line to
# results.tsv, keeps its output in logs/TOOL.INPUT.ROUND.
last_log=
measure() {
	local tool=$1 input=$2 round=$3 bytes=$4
	shift 4
	last_log="$logs/$tool.$input.$round"
	rm -rf "$DIR/out"
	warm "$input"
	local busy0
	busy0=$(busy_ticks)
	if ! /usr/bin/time -f '%e %U %S %M' -o "$logs/time" "$@" >"$last_log" 2>&1; then
		echo "bench-compare: FAILED: $tool on $input (round $round): $*" >&2
		tail -n 20 "$last_log" >&2
		tail -n 2 "$logs/time" >&2
		exit 1
	fi
	local busy1 wall user sys rss others
	busy1=$(busy_ticks)
	read -r wall user sys rss < <(tail -n 1 "$logs/time")
	# CPU seconds that other processes used meanwhile (the machine's busy
	# time less this run's), as a share of the machine over the run.
	others=$(awk -v b="$((busy1 - busy0))" -v hz="$CLK_TCK" -v u="$user" -v s="$sys" -v w="$wall" -v n="$NPROC" \
		'BEGIN { o = b / hz - u - s; if (o < 0) o = 0; printf "%.3f", (w > 0 ? o / (w * n) : 0) }')
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$tool" "$input" "$round" "$bytes" "$wall" "$user" "$sys" "$rss" "$others" >>"$results"
	printf '  %-16s %-12s %6.2f s wall %6.2f s CPU %7.0f MiB   others used %3.0f %% of the machine\n' "$tool" "$input" "$wall" \
		"$(awk -v u="$user" -v s="$sys" 'BEGIN { print u + s }')" "$(awk -v r="$rss" 'BEGIN { print r / 1024 }')" \
		"$(awk -v o="$others" 'BEGIN { print 100 * o }')" >&2
}

# check_crl ROWS: the last crlbatch run scored every row.
check_crl() {
	local got
	got=$(sed -n 's/^scored .* objects (\([0-9]*\) rows).*$/\1/p' "$last_log")
	[ "$got" = "$1" ] || die "crlbatch scored '${got}' rows, want $1 (log: $last_log)"
	[ -f "$DIR/out/manifest.json" ] || die "crlbatch wrote no manifest.json (log: $last_log)"
}
# check_query ROWS: the last DuckDB or pandas run counted every row; prints
# its reward sum.
check_query() {
	local line got
	line=$(tail -n 1 "$last_log")
	got=$(sed -n 's/.*"rows": *\([0-9]*\).*/\1/p' <<<"$line")
	[ "$got" = "$1" ] || die "the query counted '${got}' rows, want $1 (log: $last_log)"
	sed -n 's/.*"reward_sum": *"\([^"]*\)".*/\1/p' <<<"$line"
}



# check_sum TOOL SUM: every run of TOOL (plain or zstd, any schema) found
# the same reward sum.
declare -A sums
check_sum() {
	[ -z "${sums[$1]:-}" ] || [ "${sums[$1]}" = "$2" ] ||
		die "$1's reward sum differs between runs: ${sums[$1]} and $2 (plain and zstd hold the same rows)"
	sums[$1]=$2
}
# others_share: the share of the machine that other processes use, over 3 s
# of our idling.
others_share() {
	local b0 b1
	b0=$(busy_ticks)
	sleep 3
	b1=$(busy_ticks)
	awk -v b="$((b1 - b0))" -v hz="$CLK_TCK" -v n="$NPROC" 'BEGIN { printf "%.2f", b / hz / (3 * n) }'
}
# wait_quiet: on a shared machine, wait (BENCH_WAIT_QUIET seconds at most,
# over the whole invocation) for a 3-second window in which other processes
# use under 10 % of the machine.
wait_left="${BENCH_WAIT_QUIET:-0}"
wait_quiet() {
	local share
	while [ "$wait_left" -gt 0 ]; do
		share=$(others_share)
		wait_left=$((wait_left - 3))
		awk -v s="$share" 'BEGIN { exit !(s < 0.10) }' && return 0
		echo "bench-compare: others use $(awk -v s="$share" 'BEGIN { print 100 * s }') % of the machine; waiting (${wait_left} s left)" >&2
	done
}

load_before=$(cut -d' ' -f1-3 /proc/loadavg)
share=$(others_share)
echo "bench-compare: load average before: $load_before ($NPROC cores); other processes use $(awk -v s="$share" 'BEGIN { print 100 * s }') % of the machine" >&2
awk -v s="$share" 'BEGIN { exit !(s >= 0.10) }' &&
	echo "bench-compare: WARNING: the machine is busy: the times below include the competition (BENCH_WAIT_QUIET=600 waits for calm before each round)" >&2

# warm INPUT: reads INPUT's objects into the page cache, untimed, so that
# every run (measure) reads from memory, none from disk: the page cache
# holds all the inputs at 1 GB (about 4.5 GB with both shapes), but the
# machine may reclaim some of their pages over a run of several minutes
# (docs/decisions.md, round 51).
warm() { files_of "$1" | xargs cat >/dev/null; }
# dir_of INPUT: the folder of an input (irr-X: the irregular shape's).
dir_of() { case $1 in irr-*) echo "$DIR/irregular-${1#irr-}" ;; *) echo "$DIR/$1" ;; esac; }
# files_of INPUT: its objects, one a line.
files_of() {
	local d
	d=$(dir_of "$1")
	case $1 in *one-*) ls "$d"/sweep.jsonl* ;; *) ls "$d"/*/*.jsonl* ;; esac
}

# crl TOOL INPUT ROWS BYTES: crlbatch score on INPUT, checked; at
# --concurrency BENCH_CONCURRENCY, or 1 for crlbatch-c1; crlbatch-nospill
# without --memory-limit.
crl() {
	local tool=$1 input=$2 n=$3 bytes=$4
	local extra=(--concurrency "$CONC" "${spill_args[@]}")
	case $tool in
	crlbatch-c1) extra=(--concurrency 1 "${spill_args[@]}") ;;
	crlbatch-nospill) extra=(--concurrency "$CONC") ;;
	esac
	# The slice holds the first families only (dqn), not the baseline.
	case $input in slice-*) extra+=(--allow-missing-baseline) ;; esac
	measure "$tool" "$input" "$round" "$bytes" "$CRLBATCH" score "$(dir_of "$input")" --out "$DIR/out" "${CRL_FLAGS[@]}" "${extra[@]}"
	check_crl "$n"
}
# duck TOOL INPUT ROWS BYTES [FLAG...]: DuckDB's query on INPUT's objects,
# in this process (duckdbq) or through Node (TOOL duckdb-node), checked.
duck() {
	local tool=$1 input=$2 n=$3 bytes=$4 shape=regular
	shift 4
	local files
	mapfile -t files < <(files_of "$input")
	case $input in irr-*) shape=irregular ;; esac
	if [ "$tool" = duckdb-node ]; then
		measure "$tool" "$input" "$round" "$bytes" env BENCH_DUCKDB_THREADS="$CONC" "$NODE" "$bench/duckdb_query.mjs" "$@" "${files[@]}"
	else
		measure "$tool" "$input" "$round" "$bytes" "$DUCKDBQ" -threads "$CONC" "$@" "${files[@]}"
	fi
	# (Node prints the sum with toPrecision's trailing zeros: a sum of its own.)
	check_sum "$([ "$tool" = duckdb-node ] && echo duckdb-node || echo duckdb)-$shape" "$(check_query "$n")"
}

for round in $(seq 1 "$ROUNDS"); do
	wait_quiet
	echo "bench-compare: round $round of $ROUNDS" >&2
	for shape in $SHAPES; do
		if [ "$shape" = regular ]; then pre="" n=$rows bytes=$raw_bytes; else pre="irr-" n=$irr_rows bytes=$irr_raw_bytes; fi
		for kind in plain zstd; do
			input=$pre$kind
			crl crlbatch "$input" "$n" "$bytes"
			duck duckdb "$input" "$n" "$bytes"
			if [ "$DUCKDB_AUTO" = 1 ] && [ "$shape" = regular ]; then
				duck duckdb-auto "$input" "$n" "$bytes" -auto
			fi
			if [ "$DUCKDB_NODE" = 1 ] && [ "$kind" = plain ]; then
				duck duckdb-node "$input" "$n" "$bytes"
			fi
			if [ "$NOSPILL" = 1 ]; then
				crl crlbatch-nospill "$input" "$n" "$bytes"
			fi
		done
		if [ "$ONE_OBJECT" = 1 ]; then
			for kind in one-plain one-zstd; do
				crl crlbatch "$pre$kind" "$n" "$bytes"
				duck duckdb "$pre$kind" "$n" "$bytes"
			done
			crl crlbatch-c1 "${pre}one-plain" "$n" "$bytes"
		fi
	done
	if [ "$PANDAS" = 1 ]; then
		for input in slice-plain slice-zstd; do
			mapfile -t files < <(files_of "$input")
			measure pandas "$input" "$round" "$slice_bytes" "$PYTHON" "$bench/pandas_query.py" "${files[@]}"
			check_sum pandas "$(check_query "$slice_rows")"
			crl crlbatch "$input" "$slice_rows" "$slice_bytes"
		done
	fi
	if [ "$ONECORE" = 1 ]; then
		crl crlbatch-c1 plain "$rows" "$raw_bytes"
		measure crlbatch-1core plain "$round" "$raw_bytes" env GOMAXPROCS=1 "$CRLBATCH" score "$DIR/plain" \
			--out "$DIR/out" "${CRL_FLAGS[@]}" --concurrency 1 "${spill_args[@]}"
		check_crl "$rows"
	fi
done
rm -rf "$DIR/out"
if [ -n "$MEMLIMIT" ] && [ -d "$DIR/spill" ]; then
	[ -z "$(ls -A "$DIR/spill")" ] || die "crlbatch left spill files behind in $DIR/spill"
fi
load_after=$(cut -d' ' -f1-3 /proc/loadavg)
echo "bench-compare: load average after: $load_after" >&2

# ---- the tables ------------------------------------------------------------
engine() { sed -n 's/.*"engine": *"\([^"]*\)".*/\1/p' "$logs/$1.$2.1" 2>/dev/null; }
{
	echo "date=$(date -u '+%Y-%m-%d %H:%M UTC')"
	echo "load_before=$load_before"
	echo "load_after=$load_after"
	echo "nproc=$(nproc)"
	echo "cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)"
	echo "mem_gib=$(awk '/^MemTotal:/ { printf "%.0f", $2 / 1048576 }' /proc/meminfo)"
	echo "go=$(go version 2>/dev/null | sed 's/^go version //' || echo 'go: not on PATH')"
	echo "node=node $("$NODE" --version)"
	echo "python=$([ "$PANDAS" = 1 ] && "$PYTHON" --version 2>&1 || echo 'python not run')"
	echo "crlbatch_rev=${BENCH_CRLBATCH_REV:-$(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo '?')$(git -C "$repo" diff --quiet HEAD -- '*.go' 2>/dev/null || echo ' + uncommitted Go changes')}"
	echo "duckdb_engine=$({ engine duckdb plain; engine duckdb irr-plain; } | head -n 1)"
	echo "duckdb_threads=$CONC"
	echo "shapes=$SHAPES"
	echo "pandas_engine=$([ "$PANDAS" = 1 ] && engine pandas slice-plain)"
	echo "crlbatch_flags=crlbatch score INPUT --out OUT ${CRL_FLAGS[*]} --concurrency $CONC"
	echo "memory_limit=$MEMLIMIT"
	echo "rounds=$ROUNDS"
	if has_shape regular; then cat "$DIR/sweep.env"; fi
	if has_shape irregular; then cat "$DIR/irregular.env"; fi
} >"$DIR/run.env"
base_args=()
if [ -n "$BASELINE" ]; then
	if [ -s "$BASELINE" ]; then
		base_args=("$BASELINE")
	else
		echo "bench-compare: no 1 GB results at $BASELINE: run 'make bench-compare' first for the memory comparison" >&2
	fi
fi
"$NODE" "$bench/summarize.mjs" "$results" "$DIR/run.env" "${base_args[@]}" | tee "$DIR/table.md"
