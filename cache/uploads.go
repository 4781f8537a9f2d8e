package cache

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"

	"github.com/crlbatch/crlbatch/storage"
)

// An S3 entry over the transfer manager's threshold (16 MiB) is uploaded
// in parts; a job killed during the upload leaves an incomplete multipart
// upload, which S3 keeps, and bills, until it is aborted. Stats counts
// those of the cache's entries and Prune aborts those initiated over
// TempGrace ago. GCS and Azure expire uncommitted uploads themselves.

// upload is one incomplete multipart upload of an entry's key.
type upload struct {
	key, id   string
	initiated time.Time
	size      int64
	sized     bool // size is known (its parts were listed)
}

// s3Bucket is the cache's S3 client and bucket name, ok false when the
// cache is not on S3 (gocloud.dev's s3blob gives its *s3.Client to As).
func (c *Cache) s3Bucket() (client *s3.Client, bucket string, ok bool) {
	if c.loc.Local || !c.b.As(&client) || client == nil {
		return nil, "", false
	}
	u, err := url.Parse(c.loc.BucketURL)
	if err != nil || u.Host == "" {
		return nil, "", false
	}
	return client, u.Host, true
}

// s3Plain reports whether gocloud.dev's s3blob stores key as it is: it
// escapes control characters, the slash of "../" and anything that reads
// as its own escapes ("__0x…__"), and the keys S3 lists are the escaped
// ones.
func s3Plain(key string) bool {
	for i := 0; i < len(key); i++ {
		if key[i] < 32 {
			return false
		}
	}
	return !strings.Contains(key, "../") && !strings.Contains(key, "__0x")
}

// isEntryName reports whether rel (a key with the cache's prefix cut off)
// is an entry's name: v<version>/<folder>/<64 hex>.crlc, the folder being
// the key's first two hex digits or a Kind's.
func isEntryName(rel string) bool {
	name, ok := strings.CutSuffix(rel, EntrySuffix)
	if !ok {
		return false
	}
	parts := strings.Split(name, "/")
	if len(parts) != 3 || len(parts[0]) < 2 || parts[0][0] != 'v' || parts[1] == "" || len(parts[2]) != 64 {
		return false
	}
	for _, r := range parts[0][1:] {
		if r < '0' || r > '9' {
			return false
		}
	}
	for _, r := range parts[2] {
		if !('0' <= r && r <= '9' || 'a' <= r && r <= 'f') {
			return false
		}
	}
	return true
}

// uploadPage is how many uploads one ListMultipartUploads asks for (S3's
// most).
const uploadPage = 1000

// uploads lists the incomplete multipart uploads of the cache's entries
// (none when the cache is not on S3), paged to the end, and the bytes of
// the parts of those sized says (ListParts, paged: an upload left by a
// kill has a few parts). Uploads under the prefix whose key is not an
// entry's are not listed. An upload whose parts cannot be listed is
// returned unsized; one gone meanwhile (NoSuchUpload) is left out. err is
// the listing's failure, which callers report as a warning.
func (c *Cache) uploads(ctx context.Context, sized func(upload) bool) ([]upload, error) {
	client, bucket, ok := c.s3Bucket()
	if !ok {
		return nil, nil
	}
	if !s3Plain(c.loc.Prefix) {
		return nil, fmt.Errorf("the prefix %q holds characters gocloud.dev escapes in S3 keys", c.loc.Prefix)
	}
	var ups []upload
	p := s3.NewListMultipartUploadsPaginator(client, &s3.ListMultipartUploadsInput{
		Bucket: &bucket, Prefix: &c.loc.Prefix, MaxUploads: ptr(int32(uploadPage)),
	})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, storage.RedactErr(err)
		}
		for _, u := range page.Uploads {
			if u.Key == nil || u.UploadId == nil || !strings.HasPrefix(*u.Key, c.loc.Prefix) || !isEntryName(strings.TrimPrefix(*u.Key, c.loc.Prefix)) {
				continue
			}
			up := upload{key: *u.Key, id: *u.UploadId}
			if u.Initiated != nil {
				up.initiated = *u.Initiated
			}
			ups = append(ups, up)
		}
	}
	for i := range ups {
		if sized != nil && !sized(ups[i]) {
			continue
		}
		size, err := c.partBytes(ctx, client, bucket, ups[i])
		switch {
		case err == nil:
			ups[i].size, ups[i].sized = size, true
		case noSuchUpload(err):
			ups[i].id = "" // gone: completed or aborted meanwhile
		}
	}
	kept := ups[:0]
	for _, u := range ups {
		if u.id != "" {
			kept = append(kept, u)
		}
	}
	return kept, nil
}

// partBytes is the bytes of the parts uploaded so far of u.
func (c *Cache) partBytes(ctx context.Context, client *s3.Client, bucket string, u upload) (int64, error) {
	var n int64
	p := s3.NewListPartsPaginator(client, &s3.ListPartsInput{Bucket: &bucket, Key: &u.key, UploadId: &u.id})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return 0, err
		}
		for _, part := range page.Parts {
			if part.Size != nil {
				n += *part.Size
			}
		}
	}
	return n, nil
}

// abort aborts u; one already gone (another prune aborted it, or its job
// completed it) is no error, and gone says so.
func (c *Cache) abort(ctx context.Context, u upload) (gone bool, err error) {
	client, bucket, ok := c.s3Bucket()
	if !ok {
		return false, errors.New("not an S3 bucket")
	}
	_, err = client.AbortMultipartUpload(ctx, &s3.AbortMultipartUploadInput{Bucket: &bucket, Key: &u.key, UploadId: &u.id})
	if noSuchUpload(err) {
		return true, nil
	}
	return false, storage.RedactErr(err)
}

// noSuchUpload reports whether err is S3's NoSuchUpload (the upload was
// completed or aborted).
func noSuchUpload(err error) bool {
	var ae smithy.APIError
	return errors.As(err, &ae) && ae.ErrorCode() == "NoSuchUpload"
}

func ptr[T any](v T) *T { return &v }
