#!/usr/bin/env bash
# Prints the build tags `make build` builds crlbatch with: BUILDTAGS from
# the environment when it is set (as `make build BUILDTAGS=...` takes it),
# else the Makefile's default for this system. The benchmark scripts that
# build their own binaries build them so: without disable_grpc_modules the
# process spends ~7 ms more initialising packages before main, ~8 % of the
# warm nightly job (docs/performance.md, "Cache and Parquet input"), and
# without netgo and osusergo (Linux) it is linked dynamically, 4-9 ms more
# before main (docs/decisions.md, "A statically linked binary").
set -euo pipefail
if [[ -n ${BUILDTAGS+x} ]]; then
	echo "$BUILDTAGS"
	exit 0
fi
make -s --no-print-directory -C "$(dirname "$0")/.." print-buildtags
