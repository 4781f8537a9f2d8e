package pipeline

import "github.com/crlbatch/crlbatch/storage"

// The error types of the exit statuses live in storage; these names are
// the same types.
type (
	// UsageError is a bad flag, value or combination (exit status 2).
	UsageError = storage.UsageError
	// DataError is bad input data found after decoding (exit status 1).
	DataError = storage.DataError
	// StorageError is a failure of the blob store that persisted through
	// the retries (exit status 3).
	StorageError = storage.StorageError
)

// Usagef returns a *UsageError.
func Usagef(format string, args ...any) error { return storage.Usagef(format, args...) }

// IsStorage reports whether err is a storage error.
func IsStorage(err error) bool { return storage.IsStorage(err) }
