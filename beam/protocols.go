package crlbeam

import (
	// The protocols, as in cmd/crlbatch/protocols.go: each registers
	// itself with scoring.Register.
	_ "github.com/crlbatch/crlbatch/scoring/contilabscore"
	_ "github.com/crlbatch/crlbatch/scoring/safecrlscore"
	_ "github.com/crlbatch/crlbatch/scoring/skillshiftscore"
	_ "github.com/crlbatch/crlbatch/scoring/skyfallscore"

	// Blob drivers, as in cmd/crlbatch/main.go.
	_ "gocloud.dev/blob/azureblob"
	_ "gocloud.dev/blob/fileblob"
	_ "gocloud.dev/blob/gcsblob"
	_ "gocloud.dev/blob/memblob"
	_ "gocloud.dev/blob/s3blob"
)
