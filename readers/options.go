package readers

import (
	"fmt"
	"slices"

	"github.com/crlbatch/crlbatch/protocol/skyfall"
)

// Defaults of Options. A zero field of Options takes its default.
const (
	DefaultMaxLineBytes   = 256 << 20 // 256 MiB, --max-line-bytes
	DefaultMaxObjectBytes = 64 << 30  // 64 GiB decompressed, --max-object-bytes
	DefaultMaxLabels      = 100_000   // distinct regime_id values per run, --max-labels
	DefaultMaxRuns        = 100_000   // runs per job, --max-runs
)

// DefaultIdentityFields are the skyfall run identity fields (PROTOCOLS 1.2).
// Read-only.
var DefaultIdentityFields = []string{"run_id", "seed", "algorithm_id", "policy_id", "task"}

// schemaFields are the row fields of PROTOCOLS 1.1 that are never run
// metadata (gamma is not among them: it is a metadata candidate).
var schemaFields = []string{"reward", "regime_id", "regime_origin", "alias_of", "step", "components", "invalid_action", "effective_rank"}

// Options configure decoding and assembly. The zero value is valid and means
// every default.
type Options struct {
	// Protocol names the protocol in messages ("skyfall"); optional, as
	// RecordOptions.Protocol.
	Protocol string
	// IdentityFields are the run identity fields, in run-key order. nil means
	// DefaultIdentityFields; a non-nil empty slice means none, so that every
	// object's rows form one anonymous run. A schema field of PROTOCOLS 1.1
	// (reward, regime_id, ...) cannot be an identity field.
	IdentityFields []string
	// Components names the reward components kept in Trace.Components
	// (episode-end, solve and spec components). Other components are still
	// validated as numbers, then dropped.
	Components []string
	// MaxLineBytes caps one line (without its line end). 0 means
	// DefaultMaxLineBytes; negative means no limit.
	MaxLineBytes int
	// MaxObjectBytes caps the decompressed bytes of one object. 0 means
	// DefaultMaxObjectBytes; negative means no limit.
	MaxObjectBytes int64
	// MaxLabels caps the distinct labels of one run. 0 means
	// DefaultMaxLabels; negative means no limit.
	MaxLabels int
	// MaxRuns caps the runs of one object (in DecodeObject) and of the whole
	// job (in Assemble). 0 means DefaultMaxRuns; negative means no limit.
	MaxRuns int
	// OnBadRow, when set, lets DecodeObject skip bad rows instead of failing
	// on the first one; see BadRowFunc. nil (the default) means nothing is
	// skipped. Assemble and the spilling functions ignore it.
	OnBadRow BadRowFunc
	// Traces, when set, lends Assemble, AssembleEach and AssembleEachKeep
	// the row columns of the traces they hand over (see skyfall.TracePool):
	// a caller that is done with a trace puts it back, and a later run
	// fills the same columns. DecodeObject ignores it.
	Traces *skyfall.TracePool
}

// BadRowFunc decides what happens to a bad row, a line that is not a valid
// row of its protocol: invalid JSON or UTF-8, not an object, a repeated
// key, a number that is not valid JSON or overflows float64, a field of the
// wrong type, a missing required field (reward, regime_id; for the record
// protocols, whatever RecordOptions.Check rejects). It is called with the
// row's *DataError (URL, 1-based line, field, message), once per bad row, in
// line order, from the goroutine calling DecodeObject (or Chunks.Merge, for
// an object decoded in chunks); it may keep the
// error. Returning nil skips the line: it still counts in Lines and now in
// Skipped, never in Rows, and nothing of it reaches the runs (no identity,
// label, metadata candidate or column). Returning an error stops the
// decode, which returns that error as it is.
//
// Problems of the object as a whole are never bad rows and always fail it:
// a corrupt or truncated compressed stream (invalid UTF-8 that breaks the
// framing of a gzip or zstd stream is one), a line over MaxLineBytes, an
// object over MaxObjectBytes, a run over MaxLabels, an object over
// MaxRuns, and errors of the underlying reader.
type BadRowFunc func(row *DataError) error

// normalize validates o and returns it with the defaults filled in and the
// "no limit" values replaced by the largest ones.
func (o Options) normalize() (Options, error) {
	if o.IdentityFields == nil {
		o.IdentityFields = DefaultIdentityFields
	}
	if err := checkIdentityFields(o.IdentityFields, schemaFields, protocolName(o.Protocol)); err != nil {
		return o, err
	}
	if err := checkNames(o.Components, "component name", "component", nil); err != nil {
		return o, err
	}
	o.MaxLineBytes = normalizeLimit(o.MaxLineBytes, DefaultMaxLineBytes, maxInt-8)
	o.MaxObjectBytes = normalizeLimit(o.MaxObjectBytes, DefaultMaxObjectBytes, 1<<63-1)
	o.MaxLabels = normalizeLimit(o.MaxLabels, DefaultMaxLabels, maxInt)
	o.MaxRuns = normalizeLimit(o.MaxRuns, DefaultMaxRuns, maxInt)
	return o, nil
}

const maxInt = int(^uint(0) >> 1)

// normalizeLimit returns def for 0 (the default) and none for a negative v
// (no limit), else v.
func normalizeLimit[T int | int64](v, def, none T) T {
	switch {
	case v == 0:
		return def
	case v < 0:
		return none
	}
	return v
}

// protocolName is how messages name a protocol: its name, or "the
// protocol" when the caller gave none.
func protocolName(protocol string) string {
	if protocol == "" {
		return "the protocol"
	}
	return protocol
}

// checkIdentityFields validates identity fields: none empty, none named
// twice, none a row field of the protocol (schema).
func checkIdentityFields(idents, schema []string, protocol string) error {
	return checkNames(idents, "identity field", "identity field", func(f string) error {
		if slices.Contains(schema, f) {
			return fmt.Errorf("readers: %q is a row field of %s and cannot be an identity field", f, protocol)
		}
		return nil
	})
}

// checkNames checks a list of names, in order: none empty (nth names the
// i-th in the message), each passing check when it is set, none named
// twice.
func checkNames(names []string, nth, what string, check func(string) error) error {
	for i, n := range names {
		if n == "" {
			return fmt.Errorf("readers: %s %d is empty", nth, i+1)
		}
		if check != nil {
			if err := check(n); err != nil {
				return err
			}
		}
		if slices.Index(names, n) != i {
			return fmt.Errorf("readers: %s %q is named twice", what, n)
		}
	}
	return nil
}
