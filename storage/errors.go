package storage

import (
	"errors"
	"fmt"
)

// UsageError is a bad flag, value or combination (exit status 2).
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

// Usagef returns a *UsageError.
func Usagef(format string, args ...any) error {
	return &UsageError{Err: fmt.Errorf(format, args...)}
}

// DataError is bad input data found after decoding (two identities with one
// run key, a run-level conflict), exit status 1. Row-level errors are
// *readers.DataError.
type DataError struct{ Err error }

func (e *DataError) Error() string { return e.Err.Error() }
func (e *DataError) Unwrap() error { return e.Err }

// StorageError is a listing, reading or writing failure of the blob store
// that persisted through the retries (exit status 3). URL names the object or
// prefix.
type StorageError struct {
	Op  string // "list", "read", "write", "delete", "open"
	URL string
	Err error
}

func (e *StorageError) Error() string {
	return fmt.Sprintf("%s %s: %v", e.Op, e.URL, e.Err)
}
func (e *StorageError) Unwrap() error { return e.Err }

// IsStorage reports whether err is a storage error.
func IsStorage(err error) bool {
	var s *StorageError
	return errors.As(err, &s)
}
