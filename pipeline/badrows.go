package pipeline

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/crlbatch/crlbatch/readers"
	"github.com/crlbatch/crlbatch/writers"
)

// Bad rows (--max-bad-rows). The readers hand every bad row of an object
// to Options.OnBadRow; badRows is the pipeline's side: it counts the rows
// of all objects under a mutex and decides, the same way whatever the
// concurrency, which row breaks the limit.
//
// The bad rows of the sweep, in canonical order (objects in key order, then
// lines), are r1, r2, …; with the limit N, the job fails on r(N+1), the row
// that breaks it, and names that row. Objects are decoded concurrently, so
// the rows arrive in any order; each object's in line order. Once the rows
// found in objects 0…k already exceed N, r(N+1) lies in one of those
// objects, so objects after k no longer matter: their decoding is
// abandoned (errAbandoned, not a failure) and those not yet started are
// not read. Objects up to k are decoded to their end (or to their own
// excess), so that r(N+1) is the same at any --concurrency.

// errAbandoned stops the decoding of an object that no longer matters: the
// bad rows of the objects before it already exceed --max-bad-rows.
var errAbandoned = errors.New("abandoned: the bad rows before this object already exceed --max-bad-rows")

// badRows collects the bad rows of one job.
type badRows struct {
	max   int // rows that may be skipped; negative: any number (validate)
	mu    sync.Mutex
	rows  [][]*readers.DataError // per object, in line order
	total int
	cut   int // objects from cut on no longer matter
}

func newBadRows(objects, max int) *badRows {
	return &badRows{max: max, rows: make([][]*readers.DataError, objects), cut: objects}
}

// hook is the readers' OnBadRow for object i.
func (b *badRows) hook(i int) readers.BadRowFunc {
	return func(de *readers.DataError) error { return b.add(i, de) }
}

func (b *badRows) add(i int, de *readers.DataError) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if i >= b.cut {
		return errAbandoned
	}
	rs := b.rows[i]
	if n := len(rs); n > 0 && de.Line <= rs[n-1].Line {
		return nil // a retried read of the object meets its rows again
	}
	b.rows[i] = append(rs, de)
	b.total++
	if b.max < 0 || b.total <= b.max {
		return nil
	}
	// Over the limit: find the first object by which the rows found so far
	// exceed it. Rows are only ever added, so the cut only moves back.
	n := 0
	for k := 0; k < b.cut; k++ {
		if n += len(b.rows[k]); n > b.max {
			b.cut = k
			break
		}
	}
	if i >= b.cut {
		return errAbandoned
	}
	return nil
}

// skip reports whether object i no longer matters, so need not be read.
func (b *badRows) skip(i int) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return i >= b.cut
}

// place sets the cut for rows that did not come through add (Engine's
// Finish puts every object's in at once): the first object by which they
// exceed --max-bad-rows.
func (b *badRows) place() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.max < 0 || b.total <= b.max {
		return
	}
	n := 0
	for k, rs := range b.rows {
		if n += len(rs); n > b.max {
			b.cut = k
			return
		}
	}
}

// stopRow is the row at which the decode of object i stopped with
// errAbandoned, for an object that changed while it was read: nil when
// the bad rows of the objects before it already exceed --max-bad-rows (the
// object no longer matters, changed or not: the job fails on an earlier
// object's row), else the last of the object's own rows found (rows are
// added in line order, the decode stops at the one that breaks the limit,
// and a row cut by the change is the object's last).
func (b *badRows) stopRow(i int) *readers.DataError {
	b.mu.Lock()
	defer b.mu.Unlock()
	if rs := b.rows[i]; b.cut == i && len(rs) > 0 {
		return rs[len(rs)-1]
	}
	return nil
}

// breaksBefore reports whether the row that breaks --max-bad-rows comes
// before err, the failure of object failed, in canonical order (objects in
// key order, then lines): in an earlier object, or in the same one at an
// earlier line than a failure naming its line (the row can break the limit
// after the failure, when rows of objects before it arrive later). A
// failure of the object naming no line (storage, or the object changed
// while read, which names the row itself) is the object's, as before.
func (b *badRows) breaksBefore(failed int, err error) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.max < 0 || b.total <= b.max || b.cut > failed {
		return false
	}
	if b.cut < failed {
		return true
	}
	n := 0
	for _, rs := range b.rows[:b.cut] {
		n += len(rs)
	}
	row := b.rows[b.cut][b.max-n]
	var de *readers.DataError
	return errors.As(err, &de) && de.Line > 0 && row.Line < de.Line
}

// count is the number of bad rows found.
func (b *badRows) count() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.total
}

// all lists the bad rows found, objects in key order, then lines.
func (b *badRows) all() []*readers.DataError {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]*readers.DataError, 0, b.total)
	for _, rs := range b.rows {
		out = append(out, rs...)
	}
	return out
}

// of lists the bad rows found in object i, in line order.
func (b *badRows) of(i int) []*readers.DataError {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.rows[i]
}

// err is the job's error once every object that matters is decoded: nil
// within the limit, else a data error naming the row that broke it. With
// the default limit, 0, it is that row's own error, as without skipping.
func (b *badRows) err() error {
	if b.max < 0 {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.total <= b.max {
		return nil
	}
	n := 0
	for _, rs := range b.rows {
		if n+len(rs) > b.max {
			de := rs[b.max-n]
			if b.max == 0 {
				return de
			}
			return &DataError{Err: fmt.Errorf("%w (bad row %d, past --max-bad-rows %d)", de, b.max+1, b.max)}
		}
		n += len(rs)
	}
	panic("unreachable")
}

// reason is a bad row's error without its object and line: the field and
// the message.
func reason(de *readers.DataError) string {
	c := *de
	c.URL, c.Line = "", 0
	return c.Error()
}

// skippedRows lists the bad rows for the manifest.
func skippedRows(rows []*readers.DataError) []writers.SkippedRow {
	out := make([]writers.SkippedRow, len(rows))
	for i, de := range rows {
		out[i] = writers.SkippedRow{Object: de.URL, Line: int64(de.Line), Reason: reason(de)}
	}
	return out
}

// notedBadRows is how many skipped rows the report's notes name; the
// manifest lists them all.
const notedBadRows = 5

// badRowNotes are the report's notes on skipped rows: the count, then the
// first few.
func badRowNotes(rows []*readers.DataError, max int) []string {
	if len(rows) == 0 {
		return nil
	}
	noun := "rows"
	if len(rows) == 1 {
		noun = "row"
	}
	notes := []string{fmt.Sprintf("%d bad %s skipped under --max-bad-rows %d; manifest.json lists every one under `skipped`", len(rows), noun, max)}
	for _, de := range rows[:min(len(rows), notedBadRows)] {
		notes = append(notes, "skipped "+describeRow(de))
	}
	if n := len(rows) - notedBadRows; n > 0 {
		notes = append(notes, fmt.Sprintf("… and %d more skipped rows", n))
	}
	return notes
}

// describeRow renders a bad row for the notes: `object` line N: reason.
func describeRow(de *readers.DataError) string {
	var b strings.Builder
	b.WriteString("`" + strings.ReplaceAll(de.URL, "`", "'") + "` line ")
	b.WriteString(strconv.Itoa(de.Line))
	b.WriteString(": ")
	b.WriteString(reason(de))
	return b.String()
}
