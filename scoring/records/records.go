// Package records holds what the record protocols (safecrl, contilab,
// skillshift) share on the scoring seam: a scoring.Decoder over the
// readers' generic records (readers.DecodeRecords, AssembleRecords,
// RecordRunKeyConflicts), the report header built from crlbatch.params,
// and small helpers for their metrics and tables.
//
// A record protocol's adapter declares its row fields and identity once
// (scoring.Description), reads a row through the typed accessors of
// readers.Record in a RecordOptions.Check (so that a bad field is a bad row
// naming its object and line), and scores the *readers.RecordRun that
// scoring.Run.Data holds.
package records

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/crlbatch/crlbatch/readers"
	"github.com/crlbatch/crlbatch/scoring"
)

// FieldNames lists the names of fields, in order: a protocol's row fields
// (RecordOptions.SchemaFields) from its Description.Rows.
func FieldNames(fields []scoring.Field) []string {
	out := make([]string, len(fields))
	for i, f := range fields {
		out[i] = f.Name
	}
	return out
}

// Options returns the reader options of a record protocol: its name, its
// row fields (never run metadata), its row check, the identity fields and
// limits of env.Reader. identity is the protocol's default identity, used
// when env.Reader.IdentityFields is nil (the engine resolves it before
// calling a protocol, so this is for callers that do not).
func Options(name string, d scoring.Description, env scoring.Env, check func(*readers.Record) error) readers.RecordOptions {
	ident := env.Reader.IdentityFields
	if ident == nil {
		ident = d.Identity
	}
	return readers.RecordOptions{
		Protocol:       name,
		IdentityFields: slices.Clone(ident),
		SchemaFields:   FieldNames(d.Rows),
		MaxLineBytes:   env.Reader.MaxLineBytes,
		MaxObjectBytes: env.Reader.MaxObjectBytes,
		MaxRuns:        env.Reader.MaxRuns,
		Check:          check,
	}
}

// Decoder is the scoring.Decoder of the record protocols. Its objects are
// *Object; the runs it assembles hold a *readers.RecordRun in Run.Data,
// whose Records stay valid as long as the objects are not released.
type Decoder struct {
	opts readers.RecordOptions
}

// NewDecoder returns a Decoder reading with opts (OnBadRow is set per
// object by Decode).
func NewDecoder(opts readers.RecordOptions) *Decoder {
	opts.OnBadRow = nil
	return &Decoder{opts: opts}
}

// Options returns the decoder's reader options.
func (d *Decoder) Options() readers.RecordOptions { return d.opts }

// Check reports invalid reader options (identity fields, limits) as a
// usage error, before anything is read.
func (d *Decoder) Check() error {
	if _, err := readers.DecodeRecords("", "", strings.NewReader(""), d.opts); err != nil {
		return &scoring.UsageError{Err: err}
	}
	return nil
}

// Decode decodes one object with readers.DecodeRecords; its errors are
// returned as they are.
func (d *Decoder) Decode(url, key string, r io.Reader, onBad readers.BadRowFunc) (scoring.Object, error) {
	opts := d.opts
	opts.OnBadRow = onBad
	recs, err := readers.DecodeRecords(url, key, r, opts)
	if err != nil {
		return nil, err
	}
	return &Object{recs: recs, rows: recs.Rows, runs: recs.NumRuns()}, nil
}

// Conflicts lists the run keys two identities share among objs.
func (d *Decoder) Conflicts(objs []scoring.Object) []*readers.DataError {
	recs, err := unwrap(objs)
	if err != nil {
		panic(err) // the engine's mistake, not the data's
	}
	return readers.RecordRunKeyConflicts(recs)
}

// Assemble merges the objects' rows into runs (readers.AssembleRecords)
// and hands them to fn in canonical order: Key, Meta, Rows (the run's row
// count) and Data, the *readers.RecordRun. An error of fn is returned as
// it is; an assembly error (a readers.DataError: a run-key clash, too many
// runs) too.
func (d *Decoder) Assemble(objs []scoring.Object, fn func(*scoring.Run) error) error {
	recs, err := unwrap(objs)
	if err != nil {
		return err
	}
	runs, err := readers.AssembleRecords(recs, d.opts)
	if err != nil {
		return err
	}
	for _, rr := range runs {
		if err := fn(&scoring.Run{Key: rr.Key, Meta: rr.Meta, Rows: len(rr.Rows), Data: rr}); err != nil {
			return err
		}
	}
	return nil
}

// Done does nothing: a record run holds nothing to reuse.
func (d *Decoder) Done(*scoring.Run) {}

// Close does nothing.
func (d *Decoder) Close() {}

func unwrap(objs []scoring.Object) ([]*readers.ObjectRecords, error) {
	recs := make([]*readers.ObjectRecords, len(objs))
	for i, o := range objs {
		ro, ok := o.(*Object)
		if !ok {
			return nil, fmt.Errorf("records: object %d is a %T, not decoded by a records.Decoder", i, o)
		}
		if ro.recs == nil {
			return nil, errors.New("records: an object was used after Release")
		}
		recs[i] = ro.recs
	}
	return recs, nil
}

// Object is one decoded object of a record protocol.
type Object struct {
	recs       *readers.ObjectRecords
	rows, runs int
}

// Records returns the decoded object (nil once released).
func (o *Object) Records() *readers.ObjectRecords { return o.recs }

// Rows is the number of rows read, bad rows skipped not counted.
func (o *Object) Rows() int { return o.rows }

// NumRuns is the number of runs with rows in the object.
func (o *Object) NumRuns() int { return o.runs }

// MemBytes estimates the memory the object's rows hold.
func (o *Object) MemBytes() int64 {
	if o.recs == nil {
		return 0
	}
	return o.recs.MemBytes()
}

// Release drops the object's rows.
func (o *Object) Release() error {
	o.recs = nil
	return nil
}

// Read returns the assembled run a Decoder put in run.Data, and its rows
// read into the protocol's own run by read: what a record protocol's Score
// and Check both start with. read's errors (a row's, naming its object and
// line) are returned as they are.
func Read[R any](run *scoring.Run, read func(*readers.RecordRun) (R, error)) (*readers.RecordRun, R, error) {
	var zero R
	rr, err := RecordRun(run)
	if err != nil {
		return nil, zero, err
	}
	r, err := read(rr)
	if err != nil {
		return nil, zero, err
	}
	return rr, r, nil
}

// RecordRun returns the assembled run a Decoder put in run.Data.
func RecordRun(run *scoring.Run) (*readers.RecordRun, error) {
	rr, ok := run.Data.(*readers.RecordRun)
	if !ok {
		return nil, fmt.Errorf("records: run %s holds a %T, not a *readers.RecordRun", run.Key, run.Data)
	}
	return rr, nil
}
