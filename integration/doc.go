// Package integration runs the built crlbatch binary end to end against real
// servers that speak each cloud's object-store protocol, all on 127.0.0.1:
// versitygw (S3), fake-gcs-server (GCS) and Azurite (Azure Blob), pinned in
// .ci/install-services and ../shared/design/SERVICES.md. DuckDB (npm
// @duckdb/node-api, run by node from duckdb.mjs) stands for the notebook
// that reads the Parquet outputs.
//
// The tests start and stop the servers themselves on free loopback ports, so
// one command runs them:
//
//	.ci/install-services && go test ./integration/
//
// A missing server skips the tests that need it, with a message naming the
// install script; with CRLBATCH_REQUIRE_INTEGRATION=1 (set by CI) such a skip
// is a failure. Binaries are looked up in $CRLBATCH_TOOLS/bin (default
// <repo>/.tools/bin), integration/node_modules/.bin, then PATH.
//
// FaultProxy, a small loopback HTTP proxy, sits in front of the S3 server and
// injects the faults object stores really produce (503 SlowDown, 500,
// connection resets, slow and stalled responses, truncated bodies), chosen
// per request by count or by a seeded probability; it also records every
// request, which is how measure.sh counts requests per object.
//
// Nothing here is imported by the program: the package holds the servers'
// launchers, the proxy and the tests.
package integration
