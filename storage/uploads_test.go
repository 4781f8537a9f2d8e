package storage

import (
	"testing"

	"gocloud.dev/blob/memblob"
)

// TestS3Plain: the prefixes gocloud.dev's s3blob stores as they are, so
// that the keys S3 lists start with them.
func TestS3Plain(t *testing.T) {
	for key, want := range map[string]bool{
		"":                  true,
		"crlcache/":         true,
		"team a/ü+=/cache/": true,
		"a/../b/":           false,
		"tab\there/":        false,
		"x__0x2f__y/":       false,
		"..a/":              true,
	} {
		if got := S3Plain(key); got != want {
			t.Errorf("S3Plain(%q) = %v, want %v", key, got, want)
		}
	}
}

// TestS3UploadsOfNotS3: a bucket that is not S3's has no uploads to reach
// (GCS and Azure expire theirs, a folder has none). The S3 side is tested
// against a real S3 server in integration/.
func TestS3UploadsOfNotS3(t *testing.T) {
	b := memblob.OpenBucket(nil)
	defer b.Close()
	for _, l := range []Location{
		{BucketURL: "mem://"},
		{BucketURL: "s3://bucket", Local: true},
		{BucketURL: "file:///tmp/out", Local: true},
	} {
		if u, ok := S3UploadsOf(b, l); ok || u != nil {
			t.Errorf("S3UploadsOf(memblob, %+v) = %v, %v; want nil, false", l, u, ok)
		}
	}
	if u, ok := S3UploadsOf(nil, Location{BucketURL: "s3://bucket"}); ok || u != nil {
		t.Errorf("S3UploadsOf(nil bucket) = %v, %v; want nil, false", u, ok)
	}
}
