package pipeline

import (
	"context"
	"errors"

	"github.com/crlbatch/crlbatch/readers"
)

// Failures carried as data. Another engine's workers decode objects and
// score runs in an order of their own; the local job reports the failure
// of the first object in key order that fails, and after reading, the
// first run in canonical order that fails (docs/decisions.md, "The first
// failure in key order, at any --concurrency"). So Engine's steps do not
// fail on the data or the store: DecodeObject puts an object's failure in
// its summary and ScoreRun a run's in a record at the run's place, and
// Finish, which sees them all, reports the one the local job would.

// A failure is an object's or a run's error as it travels between
// workers: its text, the kind that sets the exit status, and the row error
// it is or names (a *readers.DataError: its line places it among the bad
// rows of its object, its field earns the message's pointer to the trace
// format).
type failure struct {
	Text string
	Kind string  // "data", "usage" or "storage"
	Row  *badRow `json:",omitempty"`
	// The storage error's parts (Kind "storage").
	Op, URL, Err string `json:",omitempty"`
}

// carriable reports whether err is the data's or the store's (carried to
// Finish) rather than a bug's or a cancelled job's (failing the step).
func carriable(ctx context.Context, err error) bool {
	var ie *InternalError
	return err != nil && ctx.Err() == nil && !errors.As(err, &ie) && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded)
}

func carry(err error) *failure {
	f := &failure{Text: err.Error(), Kind: "data"}
	var (
		ue *UsageError
		se *StorageError
		de *readers.DataError
	)
	switch {
	case errors.As(err, &ue):
		f.Kind = "usage"
	case errors.As(err, &se):
		f.Kind, f.Op, f.URL = "storage", se.Op, se.URL
		if se.Err != nil {
			f.Err = se.Err.Error()
		}
	}
	if errors.As(err, &de) {
		r := toBadRow(de)
		f.Row = &r
	}
	return f
}

// err is the failure as an error: its text as it was, unwrapping to an
// error of its kind (and to its row error), so that the exit status and
// the message are those of the error it was.
func (f *failure) err() error {
	var typed error
	if f.Row != nil {
		typed = f.Row.dataError()
	}
	switch f.Kind {
	case "usage":
		typed = &UsageError{Err: orText(typed, f.Text)}
	case "storage":
		typed = &StorageError{Op: f.Op, URL: f.URL, Err: orText(typed, f.Err)}
	}
	return &carriedError{text: f.Text, typed: orText(typed, f.Text)}
}

func orText(err error, text string) error {
	if err != nil {
		return err
	}
	return errors.New(text)
}

// carriedError is a failure rebuilt: the text it had, and the typed error
// underneath.
type carriedError struct {
	text  string
	typed error
}

func (e *carriedError) Error() string { return e.text }
func (e *carriedError) Unwrap() error { return e.typed }
