#!/usr/bin/env bash
# Scores one ~200 MB synthetic sweep from a local folder, versitygw (S3),
# fake-gcs-server (GCS) and Azurite (Azure Blob), each started on a free
# loopback port, and prints the times side by side with the requests the job
# made per object (counted by a proxy in front of each server), so that a
# regression in request count shows.
#
#   integration/measure.sh            # 200 MB
#   CRLBATCH_MEASURE_MB=50 integration/measure.sh
#
# Needs the servers: .ci/install-services.
set -euo pipefail
cd "$(dirname "$0")"
CRLBATCH_MEASURE=1 exec go test -count=1 -run '^TestMeasure$' -timeout 30m -v . "$@"
