package storage

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"
	"gocloud.dev/blob"
)

// On S3 an object over the transfer manager's threshold (16 MiB) is
// uploaded in parts; a job killed during the upload leaves an incomplete
// multipart upload, which S3 keeps, and bills, until it is aborted. GCS
// and Azure expire uncommitted uploads themselves, and a local folder has
// none. S3Uploads lists and aborts them; who may abort which is its
// callers' business (the cache's prune, a job's tidying of its OUTPUT).

// S3Uploads reaches the incomplete multipart uploads of one S3 bucket.
type S3Uploads struct {
	client *s3.Client
	bucket string
}

// Upload is one incomplete multipart upload.
type Upload struct {
	Key, ID   string
	Initiated time.Time // zero when S3 does not list it
}

// S3UploadsOf is the S3 client (gocloud.dev's s3blob gives its *s3.Client
// to As) and bucket name of b, opened from l; ok false when l is not on
// S3.
func S3UploadsOf(b *blob.Bucket, l Location) (u *S3Uploads, ok bool) {
	var client *s3.Client
	if l.Local || b == nil || !b.As(&client) || client == nil {
		return nil, false
	}
	p, err := url.Parse(l.BucketURL)
	if err != nil || p.Host == "" {
		return nil, false
	}
	return &S3Uploads{client: client, bucket: p.Host}, true
}

// S3Plain reports whether gocloud.dev's s3blob stores key as it is: it
// escapes control characters, the slash of "../" and anything that reads
// as its own escapes ("__0x…__"), and the keys S3 lists are the escaped
// ones.
func S3Plain(key string) bool {
	for i := 0; i < len(key); i++ {
		if key[i] < 32 {
			return false
		}
	}
	return !strings.Contains(key, "../") && !strings.Contains(key, "__0x")
}

// uploadPage is how many uploads one ListMultipartUploads asks for (S3's
// most).
const uploadPage = 1000

// List lists the incomplete multipart uploads whose keys start with
// prefix, paged to the end. A prefix gocloud.dev would escape (S3Plain)
// is an error: the keys S3 lists would not start with it. Errors are
// redacted.
func (u *S3Uploads) List(ctx context.Context, prefix string) ([]Upload, error) {
	if !S3Plain(prefix) {
		return nil, fmt.Errorf("the prefix %q holds characters gocloud.dev escapes in S3 keys", prefix)
	}
	var ups []Upload
	size := int32(uploadPage)
	p := s3.NewListMultipartUploadsPaginator(u.client, &s3.ListMultipartUploadsInput{
		Bucket: &u.bucket, Prefix: &prefix, MaxUploads: &size,
	})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, RedactErr(err)
		}
		for _, l := range page.Uploads {
			if l.Key == nil || l.UploadId == nil || !strings.HasPrefix(*l.Key, prefix) {
				continue
			}
			up := Upload{Key: *l.Key, ID: *l.UploadId}
			if l.Initiated != nil {
				up.Initiated = *l.Initiated
			}
			ups = append(ups, up)
		}
	}
	return ups, nil
}

// PartBytes is the bytes of the parts of up uploaded so far (ListParts,
// paged). An upload gone meanwhile is an error NoSuchUpload recognizes.
func (u *S3Uploads) PartBytes(ctx context.Context, up Upload) (int64, error) {
	var n int64
	p := s3.NewListPartsPaginator(u.client, &s3.ListPartsInput{Bucket: &u.bucket, Key: &up.Key, UploadId: &up.ID})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return 0, RedactErr(err)
		}
		for _, part := range page.Parts {
			if part.Size != nil {
				n += *part.Size
			}
		}
	}
	return n, nil
}

// Abort aborts up; one already gone (aborted by another, or completed by
// its job) is no error, and gone says so. Errors are redacted.
func (u *S3Uploads) Abort(ctx context.Context, up Upload) (gone bool, err error) {
	_, err = u.client.AbortMultipartUpload(ctx, &s3.AbortMultipartUploadInput{Bucket: &u.bucket, Key: &up.Key, UploadId: &up.ID})
	if NoSuchUpload(err) {
		return true, nil
	}
	return false, RedactErr(err)
}

// NoSuchUpload reports whether err is S3's NoSuchUpload (the upload was
// completed or aborted).
func NoSuchUpload(err error) bool {
	var ae smithy.APIError
	return errors.As(err, &ae) && ae.ErrorCode() == "NoSuchUpload"
}
