package main

import (
	"net/http"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// idleConnsPerHost is how many idle connections to one store the S3 and
// GCS clients keep for the next requests. A job has up to thirty-two cache
// lookups or sixteen writes in flight on a remote cache (pipeline's
// remoteReads and remoteWrites), beside the objects it reads and the files
// it writes; the clients kept 10 (the
// AWS SDK's default) and 2 (Go's http.DefaultTransport, GCS's), so that
// every round of requests closed the connections beyond those and the
// next opened them again: a TCP and a TLS handshake each, two round trips
// to a store tens of milliseconds away. Azure's SDK keeps 10 and cannot
// be told otherwise through gocloud.dev's URL opener.
const idleConnsPerHost = 64

// keepConnections raises Go's default transport's idle connections per
// host, which gocloud.dev's gcsblob uses under its credentials. Called once,
// first thing in main, before any request.
func keepConnections() {
	if t, ok := http.DefaultTransport.(*http.Transport); ok {
		t.MaxIdleConnsPerHost = max(t.MaxIdleConnsPerHost, idleConnsPerHost)
	}
}

// keepS3Connections is keepConnections for an S3 client's own transport
// (the AWS SDK's, unless the configuration gave another client, which is
// left as it is).
func keepS3Connections(c s3.HTTPClient) s3.HTTPClient {
	bc, ok := c.(*awshttp.BuildableClient)
	if !ok {
		return c
	}
	return bc.WithTransportOptions(func(t *http.Transport) {
		t.MaxIdleConnsPerHost = max(t.MaxIdleConnsPerHost, idleConnsPerHost)
	})
}
