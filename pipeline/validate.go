package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"

	"gocloud.dev/blob"

	"github.com/crlbatch/crlbatch/readers"
	"github.com/crlbatch/crlbatch/scoring"
)

// Kinds of Problem.
const (
	// ProblemBadRow is a line that is not a valid row: score fails on it,
	// or skips it under --max-bad-rows.
	ProblemBadRow = "bad row"
	// ProblemObject is an error of a whole object (a corrupt or truncated
	// stream, a limit): score fails on it.
	ProblemObject = "object"
	// ProblemRuns is an error found when the objects' rows are assembled
	// into runs (two identities with one run key, too many runs or labels),
	// or, for the record protocols, when a run is scored (rows that
	// contradict each other).
	ProblemRuns = "runs"
	// ProblemInput is an error of the input as a whole (no object, or no
	// row in any object).
	ProblemInput = "input"
)

// ProblemKinds lists the kinds of Problem in the order reports count them.
var ProblemKinds = []string{ProblemBadRow, ProblemObject, ProblemRuns, ProblemInput}

// Problem is one problem found by Validate.
type Problem struct {
	Kind   string // ProblemBadRow, ProblemObject, ProblemRuns or ProblemInput
	Object string // object URL; "" for a problem of the whole input
	Line   int    // 1-based line; 0 when the problem concerns no line
	Err    error  // the message names the object and line
}

// ValidateReport is what Validate found.
type ValidateReport struct {
	Objects int
	Rows    int64 // rows decoded, the bad rows left out
	BadRows int   // bad rows found, each a Problem of kind ProblemBadRow
	// MaxBadRows is Config.MaxBadRows: as many bad rows as this (and no
	// other problem) would be skipped by score, so they fail nothing.
	MaxBadRows int
	// Runs are the assembled runs; nil when the runs could not be
	// assembled (a ProblemRuns).
	Runs []RunInfo
	// Problems in canonical order: object by object in key order (its bad
	// rows in line order, then its own error), then the problems of the
	// runs and of the input.
	Problems []Problem
	// Notes say what is read but may not be meant to be, as score's report
	// notes it: objects under names dataset readers leave out.
	Notes []string
}

// Failed reports whether score would fail on the input with the same
// configuration: any problem but a bad row, or more bad rows than
// MaxBadRows.
func (r *ValidateReport) Failed() bool {
	return r.BadRows > r.MaxBadRows || len(r.Problems) > r.BadRows
}

// Count returns the number of problems of each kind.
func (r *ValidateReport) Count() map[string]int {
	m := make(map[string]int, len(ProblemKinds))
	for _, p := range r.Problems {
		m[p.Kind]++
	}
	return m
}

// RunInfo describes one assembled run.
type RunInfo struct {
	Key    string
	Source string
	Rows   int
	Labels int // distinct labels (skyfall); 0 for the other protocols
}

// Validate lists and reads the input and assembles runs, as score does
// under Config's protocol and reader options, and reports every problem it
// meets, writing nothing: every bad row of every object (read on past
// them, with no limit, as --max-bad-rows would skip them), the error of
// every object that fails as a whole, every run-key conflict, and every
// problem the rows of one run have together (scoring.Job.Check, with the
// protocol's parameters). It returns an error only when the job cannot
// proceed at all (usage, storage, cancellation); bad data goes into the
// report. The report is the same at any concurrency.
func Validate(ctx context.Context, cfg Config) (*ValidateReport, error) {
	if cfg.Output == "" {
		cfg.Output = "mem://"
	}
	if err := cfg.Check(); err != nil {
		return nil, err
	}
	j, err := newJob(&cfg)
	if err != nil {
		return nil, err
	}
	dec := j.proto.dec
	if err := dec.Check(); err != nil {
		return nil, err
	}
	j.prog = newProgress(cfg.Progress, cfg.Terminal)
	defer j.prog.stop()
	b, closeFn, err := openBucket(ctx, cfg.Opener, j.in)
	if err != nil {
		return nil, err
	}
	defer closeFn()
	objs, err := list(ctx, b, j.in, cfg.Patterns, cfg.Retry)
	if err != nil {
		return nil, err
	}
	rep := &ValidateReport{Objects: len(objs), MaxBadRows: cfg.MaxBadRows}
	if len(objs) == 0 {
		rep.Problems = append(rep.Problems, Problem{Kind: ProblemInput, Err: noObjectMatches(ctx, b, j.in, cfg.Patterns, true, cfg.Retry)})
		return rep, nil
	}
	rep.Notes = j.hiddenObjects(objs)
	j.prog.setTotal(len(objs), sumSizes(objs))
	bad := newBadRows(len(objs), -1)
	split := j.splitObjects(objs)
	decoded, errs, err := validateObjects(ctx, j, b, objs, bad, func(i int, url, rel string, r io.Reader) (scoring.Object, error) {
		o, _, err := j.decodeAny(ctx, b, split[i], objs[i], url, rel, r, bad.hook(i))
		return o, err
	})
	defer func() {
		for _, o := range decoded {
			if o != nil {
				o.Release()
			}
		}
	}()
	if err != nil {
		return nil, err
	}
	good := rep.collect(j, objs, bad, errs, func(i int) int64 { return int64(decoded[i].Rows()) })
	if rep.Rows == 0 && len(good) == len(objs) && rep.BadRows <= cfg.MaxBadRows {
		// Every object read, none holds a row to score (blank lines, empty
		// objects, bad rows --max-bad-rows skips): score, which got this
		// far, fails here with this error.
		rep.Problems = append(rep.Problems, Problem{Kind: ProblemInput,
			Err: &DataError{Err: fmt.Errorf("%s: no rows in the %d object(s) read: nothing to score", j.in, len(objs))}})
	}
	var ok []scoring.Object
	for _, i := range good {
		ok = append(ok, decoded[i])
	}
	if rep.runProblems(dataErrors(dec.Conflicts(ok))...) {
		return rep, nil
	}
	// One run at a time, as score assembles them.
	runs := []RunInfo{}
	var checks []error
	err = dec.Assemble(ok, func(r *scoring.Run) error {
		runs = append(runs, RunInfo{Key: r.Key, Source: r.Source(), Rows: r.Rows, Labels: r.Labels})
		if err := j.proto.job.Check(r); err != nil {
			checks = append(checks, fmt.Errorf("run %s (from %s): %w", r.Key, r.Source(), err))
		}
		dec.Done(r)
		return nil
	})
	dec.Close()
	if err != nil {
		rep.runProblems(err)
		return rep, nil
	}
	rep.runProblems(checks...)
	rep.Runs = runs
	return rep, nil
}

// collect adds the objects' bad rows and errors to the report, object by
// object, and returns the indices of the objects that decoded.
func (rep *ValidateReport) collect(j *job, objs []object, bad *badRows, errs []error, rows func(i int) int64) []int {
	var good []int
	for i, e := range errs {
		url := j.in.ObjectURL(objs[i].Key)
		for _, de := range bad.of(i) {
			rep.Problems = append(rep.Problems, Problem{Kind: ProblemBadRow, Object: url, Line: de.Line, Err: de})
			rep.BadRows++
		}
		if e != nil {
			p := Problem{Kind: ProblemObject, Object: url, Err: e}
			var de *readers.DataError
			if errors.As(e, &de) {
				p.Line = de.Line
			}
			rep.Problems = append(rep.Problems, p)
			continue
		}
		rep.Rows += rows(i)
		good = append(good, i)
	}
	return good
}

func dataErrors(des []*readers.DataError) []error {
	out := make([]error, len(des))
	for i, de := range des {
		out[i] = de
	}
	return out
}

// runProblems adds problems of the runs; it reports whether there were any.
func (rep *ValidateReport) runProblems(errs ...error) bool {
	for _, e := range errs {
		p := Problem{Kind: ProblemRuns, Err: e}
		var de *readers.DataError
		if errors.As(e, &de) {
			p.Object, p.Line = de.URL, de.Line
		}
		rep.Problems = append(rep.Problems, p)
	}
	return len(errs) > 0
}

// validateObjects decodes every object as readObjects does, but an object
// that fails with bad data does not stop the others: its error goes into
// errs. Storage errors and cancellation still end the whole validation:
// the first object in key order whose read fails so (ordered).
func validateObjects[T any](ctx context.Context, j *job, b *blob.Bucket, objs []object, bad *badRows, decode func(i int, url, rel string, r io.Reader) (T, error)) ([]T, []error, error) {
	out := make([]T, len(objs))
	errs := make([]error, len(objs)) // each task writes its own slot
	_, err := ordered(ctx, len(objs), j.cfg.Concurrency, func(gctx context.Context, i int) error {
		one, err := readObjects(gctx, j, b, objs[i:i+1], nil, func(_ int, url, rel string, r io.Reader) (T, error) {
			return decode(i, url, rel, r)
		})
		if err != nil {
			if IsStorage(err) || gctx.Err() != nil {
				return err
			}
			errs[i] = err
			return nil
		}
		out[i] = one[0]
		return nil
	})
	if err != nil {
		return out, nil, err
	}
	return out, errs, nil
}
