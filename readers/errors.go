package readers

import (
	"errors"
	"strconv"
	"strings"
)

// ErrLimit is wrapped by every error caused by one of the limits of Options
// (MaxLineBytes, MaxObjectBytes, MaxLabels, MaxRuns):
// errors.Is(err, ErrLimit) tells a limit from malformed data.
var ErrLimit = errors.New("limit exceeded")

// ErrRunKeyClash is wrapped by the error of two distinct identities that
// render one run key (Assemble, RunKeyConflicts): errors.Is tells it from
// the errors of assembling a run's rows.
var ErrRunKeyClash = errors.New("two identities with one run key")

// DataError is an error in the data of an object: a line that is not valid
// JSON, a field of the wrong type, a missing required field, a corrupt
// compressed stream, an exceeded limit. The pipeline maps it to exit status 1
// with errors.As; any other error of this package is either a storage error
// (the underlying reader failed; it is returned wrapped, never as a
// DataError) or a usage error (invalid Options).
type DataError struct {
	URL   string // the object URL, as handed to DecodeObject
	Line  int    // 1-based line number; 0 when the error concerns no line
	Row   bool   // Line counts the rows of a Parquet object: rendered "row N"
	Field string // the field concerned ("reward", "components.progress"); "" when none
	Msg   string // what is wrong, lower case
	Err   error  // the cause, if any (ErrLimit, a decompressor's error); may be nil
}

// Error renders "URL: line N: field: msg", leaving out the parts that are
// empty.
func (e *DataError) Error() string {
	var b strings.Builder
	b.WriteString(e.URL)
	if e.Line > 0 {
		if b.Len() > 0 {
			b.WriteString(": ")
		}
		if e.Row {
			b.WriteString("row ")
		} else {
			b.WriteString("line ")
		}
		b.WriteString(strconv.Itoa(e.Line))
	}
	if e.Field != "" {
		if b.Len() > 0 {
			b.WriteString(": ")
		}
		b.WriteString(e.Field)
	}
	if b.Len() > 0 {
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Unwrap returns the cause.
func (e *DataError) Unwrap() error { return e.Err }

// rowError is what the row decoder reports; DecodeObject adds the URL and
// the line.
type rowError struct {
	field string
	msg   string
	err   error
}

func (e *rowError) Error() string {
	if e.field == "" {
		return e.msg
	}
	return e.field + ": " + e.msg
}

// at is the *DataError of e at line of the object url.
func (e *rowError) at(url string, line int) *DataError {
	return &DataError{URL: url, Line: line, Field: e.field, Msg: e.msg, Err: e.err}
}
