package storage

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"gocloud.dev/blob"
	"gocloud.dev/gcerrors"
)

// CreateExclusive writes data to key only if no object of that name exists:
// it reports false, with no error, when one does. Two callers creating the
// same key at once, in one process or in two, on one machine or on two,
// never both get true.
//
// A bucket object is written with blob.WriterOptions.IfNotExist (S3
// If-None-Match: *, a GCS DoesNotExist precondition, an Azure If-None-Match
// on *); a store that ignores the condition gives no exclusion, which is
// why the integration tests check the S3 server's. A local file (file is
// its path, non-empty for a local location) is created with O_CREATE|O_EXCL
// and fsynced, as is its folder: fileblob's own IfNotExist only excludes
// writers within one process (a mutex around a stat and a rename). A
// reader may see such a file before its bytes are written; its callers
// treat a claim they cannot parse as held.
func CreateExclusive(ctx context.Context, b *blob.Bucket, key, file string, data []byte) (bool, error) {
	if file != "" {
		return createLocal(file, data)
	}
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	w, err := b.NewWriter(wctx, key, &blob.WriterOptions{IfNotExist: true, ContentType: "application/json"})
	if err != nil {
		return false, err
	}
	if _, err := w.Write(data); err != nil {
		cancel()
		w.Close()
		return false, err
	}
	if err := w.Close(); err != nil {
		if gcerrors.Code(err) == gcerrors.FailedPrecondition || gcerrors.Code(err) == gcerrors.AlreadyExists {
			return false, nil
		}
		return false, err
	}
	return true, nil
}

func createLocal(file string, data []byte) (bool, error) {
	dir := filepath.Dir(file)
	var f *os.File
	var err error
	for try := 0; try < 3; try++ {
		if err = os.MkdirAll(dir, 0o755); err != nil {
			return false, err
		}
		f, err = os.OpenFile(file, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		// Another job may remove an empty folder between the two calls.
		if !errors.Is(err, fs.ErrNotExist) {
			break
		}
	}
	if errors.Is(err, fs.ErrExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(file)
		return false, err
	}
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
	return true, nil
}
