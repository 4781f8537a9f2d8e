# Sourced by the side-by-side benchmark scripts (bench/parquet_ab.sh,
# bench/convert_ab.sh): ab_builds builds this tree's crlbatch, and
# BENCH_BASE's when it is set, into $BENCH_DIR/crlbatch-head and
# $BENCH_DIR/crlbatch-base, with the tags of `make build`
# (bench/buildtags.sh); sets BUILDS to (head) or (base head) and says which
# commits they are. Each build is linked to a .link file and run from a cp
# copy: a freshly linked binary peaks 10-17 MiB higher in RSS than a copy of
# it. Needs ROOT (the repository) and BENCH_DIR.
ab_builds() {
	local tags
	tags=$("$ROOT/bench/buildtags.sh")
	(cd "$ROOT" && go build -tags "$tags" -o "$BENCH_DIR/crlbatch-head.link" ./cmd/crlbatch)
	cp "$BENCH_DIR/crlbatch-head.link" "$BENCH_DIR/crlbatch-head"
	BUILDS=(head)
	if [[ -n ${BENCH_BASE:-} ]]; then
		rm -rf "$BENCH_DIR/base-src" && mkdir -p "$BENCH_DIR/base-src"
		git -C "$ROOT" archive "$BENCH_BASE" | tar -x -C "$BENCH_DIR/base-src"
		(cd "$BENCH_DIR/base-src" && go build -tags "$tags" -o "$BENCH_DIR/crlbatch-base.link" ./cmd/crlbatch)
		cp "$BENCH_DIR/crlbatch-base.link" "$BENCH_DIR/crlbatch-base"
		echo "base: $BENCH_BASE = $(git -C "$ROOT" rev-parse --short "$BENCH_BASE")"
		BUILDS=(base head)
	fi
	echo "head: $(git -C "$ROOT" rev-parse --short HEAD)$(git -C "$ROOT" diff --quiet || echo ' (with uncommitted changes)')"
}
