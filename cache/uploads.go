package cache

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/crlbatch/crlbatch/storage"
)

// An S3 entry over the transfer manager's threshold (16 MiB) is uploaded
// in parts; a job killed during the upload leaves an incomplete multipart
// upload, which S3 keeps, and bills, until it is aborted. Stats counts
// those of the cache's entries and Prune aborts those initiated over
// TempGrace ago. GCS and Azure expire uncommitted uploads themselves.
// Listing and aborting are storage's (storage.S3Uploads).

// upload is one incomplete multipart upload of an entry's key.
type upload struct {
	key, id   string
	initiated time.Time
	size      int64
	sized     bool // size is known (its parts were listed)
}

// s3Uploads is the cache's bucket's uploads, ok false when the cache is
// not on S3.
func (c *Cache) s3Uploads() (*storage.S3Uploads, bool) {
	return storage.S3UploadsOf(c.b, c.loc)
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

// uploads lists the incomplete multipart uploads of the cache's entries
// (none when the cache is not on S3), paged to the end, and the bytes of
// the parts of those sized says (ListParts, paged: an upload left by a
// kill has a few parts). Uploads under the prefix whose key is not an
// entry's are not listed. An upload whose parts cannot be listed is
// returned unsized; one gone meanwhile (NoSuchUpload) is left out. err is
// the listing's failure, which callers report as a warning.
func (c *Cache) uploads(ctx context.Context, sized func(upload) bool) ([]upload, error) {
	s3u, ok := c.s3Uploads()
	if !ok {
		return nil, nil
	}
	var listed []storage.Upload
	err := c.maintain(ctx, func(ctx context.Context, _ func()) error {
		var err error
		listed, err = s3u.List(ctx, c.loc.Prefix)
		return err
	})
	if err != nil {
		return nil, err
	}
	var ups []upload
	for _, u := range listed {
		if isEntryName(strings.TrimPrefix(u.Key, c.loc.Prefix)) {
			ups = append(ups, upload{key: u.Key, id: u.ID, initiated: u.Initiated})
		}
	}
	for i := range ups {
		if sized != nil && !sized(ups[i]) {
			continue
		}
		var size int64
		err := c.maintain(ctx, func(ctx context.Context, _ func()) error {
			var err error
			size, err = s3u.PartBytes(ctx, storage.Upload{Key: ups[i].key, ID: ups[i].id})
			return err
		})
		switch {
		case err == nil:
			ups[i].size, ups[i].sized = size, true
		case storage.NoSuchUpload(err):
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

// abort aborts u; one already gone (another prune aborted it, or its job
// completed it) is no error, and gone says so.
func (c *Cache) abort(ctx context.Context, u upload) (gone bool, err error) {
	s3u, ok := c.s3Uploads()
	if !ok {
		return false, errors.New("not an S3 bucket")
	}
	err = c.maintain(ctx, func(ctx context.Context, _ func()) error {
		var err error
		gone, err = s3u.Abort(ctx, storage.Upload{Key: u.key, ID: u.id})
		return err
	})
	return gone, err
}
