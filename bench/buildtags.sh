#!/usr/bin/env bash
# Prints the build tags `make build` builds crlbatch with: BUILDTAGS from
# the environment when it is set (as `make build BUILDTAGS=...` takes it),
# else the Makefile's default. The benchmark scripts that build their own
# binaries build them so: without disable_grpc_modules the process spends
# ~7 ms more initialising packages before main, ~8 % of the warm nightly
# job (docs/performance.md, "Cache and Parquet input").
set -euo pipefail
if [[ -n ${BUILDTAGS+x} ]]; then
	echo "$BUILDTAGS"
	exit 0
fi
sed -n 's/^BUILDTAGS[[:space:]]*?=[[:space:]]*//p' "$(dirname "$0")/../Makefile"
