package scoring

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/crlbatch/crlbatch/protocol"
)

// ScoredCodec is implemented by jobs whose scored runs can be written to
// bytes and read back exactly, for an engine that scores runs on one
// worker and reduces them on another (Apache Beam). The engine encodes
// Scored's own fields (AppendScored); the job encodes what only it knows
// the type of: Result and Figure.
type ScoredCodec interface {
	// EncodeResult encodes s.Result and s.Figure (nil for a nil value).
	EncodeResult(s *Scored) (result, figure []byte, err error)
	// DecodeResult sets s.Result and s.Figure from what EncodeResult gave.
	DecodeResult(result, figure []byte, s *Scored) error
}

// scoredMagic starts every encoding of a scored run; raise its digit when
// the encoding changes. Version 2: the exact binary encoding (AppendExact),
// not JSON.
const scoredMagic = "crlbatch-scored-2\n"

// scoredWire is the encoding of a scored run, written by AppendExact:
// every float64 to the bit (-0 as -0), nil apart from empty, and read
// back without a parser (JSON's was most of a warm rerun's reading of its
// scored runs back, issue 15). Result and Figure are what the job's
// ScoredCodec made of them.
type scoredWire struct {
	Key       string
	Meta      map[string]string
	Rows      int
	Values    map[string]protocol.Value
	Remarks   []string
	DataNotes []string
	Notes     []string
	Result    []byte
	Figure    []byte
}

// AppendScored appends the encoding of s, a run job scored, to buf. A job
// that is not a ScoredCodec can encode only runs without Result and
// Figure.
func AppendScored(job Job, buf []byte, s *Scored) ([]byte, error) {
	w := scoredWire{Key: s.Key, Meta: s.Meta, Rows: s.Rows, Values: s.Values, Remarks: s.Remarks, DataNotes: s.DataNotes, Notes: s.Notes}
	if c, ok := job.(ScoredCodec); ok {
		res, fig, err := c.EncodeResult(s)
		if err != nil {
			return buf, fmt.Errorf("scoring: encoding scored run %s: %w", s.Key, err)
		}
		w.Result, w.Figure = res, fig
	} else if s.Result != nil || s.Figure != nil {
		return buf, fmt.Errorf("scoring: the job (%T) cannot encode its scored runs (no ScoredCodec)", job)
	}
	out, err := AppendExact(append(buf, scoredMagic...), &w)
	if err != nil {
		return buf, fmt.Errorf("scoring: encoding scored run %s: %w", s.Key, err)
	}
	return out, nil
}

// DecodeScored reads back what AppendScored wrote with the same job.
func DecodeScored(job Job, data []byte) (*Scored, error) {
	if len(data) < len(scoredMagic) || string(data[:len(scoredMagic)]) != scoredMagic {
		return nil, errors.New("scoring: not an encoding of a scored run (or of another version)")
	}
	var w scoredWire
	if err := DecodeExact(data[len(scoredMagic):], &w); err != nil {
		return nil, fmt.Errorf("scoring: decoding a scored run: %w", err)
	}
	s := &Scored{Key: w.Key, Meta: w.Meta, Rows: w.Rows, Values: w.Values, Remarks: w.Remarks, DataNotes: w.DataNotes, Notes: w.Notes}
	if w.Result != nil || w.Figure != nil {
		c, ok := job.(ScoredCodec)
		if !ok {
			return nil, fmt.Errorf("scoring: the job (%T) cannot decode its scored runs (no ScoredCodec)", job)
		}
		if err := c.DecodeResult(w.Result, w.Figure, s); err != nil {
			return nil, fmt.Errorf("scoring: decoding scored run %s: %w", w.Key, err)
		}
	}
	return s, nil
}

// EncodeJSON and DecodeJSON are an encoding of a Result or Figure that a
// ScoredCodec may use: JSON keeps every finite float64 to the bit
// (shortest round-tripping decimal, -0 as -0) and refuses NaN and ±Inf
// loudly. nil encodes as nil, and DecodeJSON of nil leaves *v as it is.
func EncodeJSON(v any) ([]byte, error) {
	if v == nil {
		return nil, nil
	}
	return json.Marshal(v)
}

// DecodeJSON decodes data into v (a pointer), unless data is nil.
func DecodeJSON(data []byte, v any) error {
	if data == nil {
		return nil
	}
	return json.Unmarshal(data, v)
}

// EncodeResultOf and DecodeResultOf are a ScoredCodec for a protocol
// whose runs' Result is a *T (or nil) encoded as JSON and which draws no
// per-run Figure; protocol names the protocol in errors.
func EncodeResultOf[T any](protocol string, s *Scored) (result, figure []byte, err error) {
	if s.Result != nil {
		if _, ok := s.Result.(*T); !ok {
			return nil, nil, fmt.Errorf("%s: cannot encode a result %T", protocol, s.Result)
		}
	}
	if s.Figure != nil {
		return nil, nil, fmt.Errorf("%s: cannot encode a figure %T", protocol, s.Figure)
	}
	result, err = EncodeJSON(s.Result)
	return result, nil, err
}

// DecodeResultOf reads back what EncodeResultOf[T] wrote.
func DecodeResultOf[T any](protocol string, result, figure []byte, s *Scored) error {
	if figure != nil {
		return fmt.Errorf("%s: a scored run with a figure", protocol)
	}
	if result != nil {
		r := new(T)
		if err := DecodeJSON(result, r); err != nil {
			return err
		}
		s.Result = r
	}
	return nil
}

// Contributor is implemented by Preparers whose pass over the runs can be
// replayed from what each run contributes to it, so that an engine that
// keeps scored runs between jobs (--cache) need not assemble an unchanged
// run again to prepare. PrepareFrom over the contributions of the runs
// kept, in canonical order, prepares exactly as Prepare over the runs.
type Contributor interface {
	Preparer
	// Contribution encodes what run adds to the preparation; nil when the
	// preparation looks at no run (then PrepareFrom calls no each either).
	Contribution(run *Run) ([]byte, error)
	// PrepareFrom prepares from the contributions each hands over.
	PrepareFrom(each func(fn func(contribution []byte) error) error) error
	// PreparedFor encodes the part of what the preparation produced that
	// the score of the run with this contribution depends on (the ceilings
	// of its labels): a scored run kept from an earlier job stands for
	// Score only if this is the same.
	PreparedFor(contribution []byte) ([]byte, error)
}

// Reapplier is implemented by Contributors whose scored runs depend on
// the preparation through values the scored run itself lets them
// recompute (skyfall: a label's ceiling moves its performance gap, the
// tail mean it subtracts from is in the result), so that a scored run
// kept from an earlier job, prepared otherwise, need not be assembled and
// scored again when only the preparation moved.
type Reapplier interface {
	Contributor
	// Reapply brings s, which Score gave for the run with this
	// contribution under an earlier preparation, to exactly what Score
	// gives under the current one (the same float64 operations in the
	// same order), in place. It reports false, s untouched, when it
	// cannot (a value needs the rows): the engine then scores the run
	// again. It may be called for several runs at once.
	Reapply(s *Scored, contribution []byte) (bool, error)
}
