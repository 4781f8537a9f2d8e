package scoring

import (
	"io"

	"github.com/crlbatch/crlbatch/protocol"
	"github.com/crlbatch/crlbatch/protocol/family"
	"github.com/crlbatch/crlbatch/readers"
	"github.com/crlbatch/crlbatch/writers"
)

// Protocol is one evaluation protocol, as the engine and the command line
// see it. An implementation registers itself with Register from an init
// function of its own package.
type Protocol interface {
	// Name is the value of --protocol.
	Name() string
	// Describe says what the protocol reads, its flags and defaults.
	Describe() Description
	// New binds the values of the protocol's flags (Description.Flags) and
	// the engine's settings into a Job. An error is a usage error.
	New(flags Flags, env Env) (Job, error)
}

// Description is what a protocol declares about itself.
type Description struct {
	// Summary is one line for --protocol's help: what a row records.
	Summary string
	// Rows are the fields of a row (PROTOCOLS 1.1 and its sections).
	Rows []Field
	// Identity are the row fields whose values identify a run by default.
	Identity []string
	// GroupBy are the run metadata fields that name a family by default.
	GroupBy []string
	// Labels says whether runs have labels (regimes) that validate counts.
	Labels bool
	// Flags are the protocol's own flags, with their defaults.
	Flags []Flag
	// Outputs name the Parquet files the protocol writes (its Figurer's
	// tables among them), in the order they are written (for help);
	// report.md, report.html, the figure-*.svg|png files and manifest.json
	// aside.
	Outputs []string
	// Default marks the protocol of a job that names none. One registered
	// protocol may set it.
	Default bool
}

// Field is one field of a protocol's rows.
type Field struct {
	Name     string
	Type     string // "number", "integer", "string", "boolean", "object", …
	Required bool
	Doc      string
}

// FlagKind is the type of a flag's value.
type FlagKind int

// Kinds of flag.
const (
	FlagString FlagKind = iota
	FlagFloat
	FlagInt
	FlagBool
	FlagStrings // repeatable string
)

// Flag is one flag of a protocol. Its value reaches Protocol.New through
// Flags under Name.
type Flag struct {
	Name  string
	Kind  FlagKind
	Usage string
	// Value is the default: a string, float64, int or bool by Kind (nil:
	// the zero value); DefaultText, when set, is shown instead.
	Value       any
	DefaultText string
	// Category groups the flag in --help.
	Category  string
	TakesFile bool
}

// Flags are the values of a protocol's flags; *cli.Command from
// urfave/cli satisfies it, and so does Values.
type Flags interface {
	IsSet(name string) bool
	String(name string) string
	Float(name string) float64
	Int(name string) int
	Bool(name string) bool
	StringSlice(name string) []string
}

// Env is what the engine hands every protocol's job.
type Env struct {
	// Reader holds the limits of the readers (--max-line-bytes,
	// --max-object-bytes, --max-labels, --max-runs) and the identity
	// fields (nil: the protocol's Identity; a non-nil empty slice: none).
	Reader readers.Options
	// Concurrency is the number of runs the engine scores at once.
	Concurrency int
}

// Job is a protocol bound to its parameters: the steps of one scoring job.
// The engine calls them in this order: Decoder (decode every object,
// assemble runs), Prepare when the job implements Preparer, Score for each
// run kept (concurrently, each run on its own), Metrics, the reduction to
// families (the engine's, through protocol/family), then Render. Every
// value passed between the steps is plain data.
type Job interface {
	// Decoder reads the protocol's rows.
	Decoder() Decoder
	// Score scores one assembled run. It is called concurrently for
	// different runs and must not keep run.Data past its return.
	Score(run *Run) (*Scored, error)
	// Check reports the problems the rows of one run have together that
	// no single row shows (validate); nil when there are none.
	Check(run *Run) error
	// Metrics lists the metrics of families.parquet, in order, for the
	// scored runs.
	Metrics(runs []*Scored) []Metric
	// AdvantageMetric names the metric whose row carries the relative
	// advantage against the baseline ("" for none).
	AdvantageMetric() string
	// Render builds the tables and the report from the reduced results.
	Render(res *Results) (*Rendered, error)
}

// Metric is one metric a protocol reduces to its families.
type Metric struct {
	Name string
	// HigherIsBetter is the direction of better; nil for a count, which
	// has none.
	HigherIsBetter *bool
	// PerKey says the metric has a value per key of a run (a label, a
	// task, a cell), and the run's seed value summarises them; otherwise
	// it is one value per run.
	PerKey bool
}

// Preparer is implemented by jobs that look at every run kept before any is
// scored (a ceiling derived from the data). each hands the runs over in
// canonical order; the engine gives each back to the decoder afterwards.
type Preparer interface {
	Prepare(each func(fn func(*Run) error) error) error
}

// LightAssembler is implemented by decoders that can hand a Preparer's pass
// lighter runs than Assemble's: each run's Key, Meta, Rows and Labels as
// Assemble gives them, and in Data only what the job's Prepare reads, made
// from the objects' rows piece by piece. AssembleLight hands the runs to fn in canonical
// order and fails where Assemble fails, with the same error, after handing
// over the same runs; an error of fn stops it and is returned as it is. ok
// is false, with nothing handed over and no error, when it cannot for objs
// (or for the pass in progress): the engine assembles then.
type LightAssembler interface {
	AssembleLight(objs []Object, fn func(*Run) error) (ok bool, err error)
}

// Decoder turns objects into runs.
type Decoder interface {
	// Check reports invalid reader options before anything is read (a
	// usage error).
	Check() error
	// Decode decodes one object. It may be called for several objects at
	// once. onBad, when not nil, decides about each bad row
	// (--max-bad-rows).
	Decode(url, key string, r io.Reader, onBad readers.BadRowFunc) (Object, error)
	// Conflicts lists the run keys that two different identities share
	// among objs (sorted by key).
	Conflicts(objs []Object) []*readers.DataError
	// Assemble hands the runs of objs (sorted by key) to fn one at a time,
	// in canonical order (PROTOCOLS 1.2). It may be called more than once.
	Assemble(objs []Object, fn func(*Run) error) error
	// Done gives back a run the engine has finished with: what it holds
	// may serve the next run.
	Done(*Run)
	// Close drops what the decoder keeps for later runs, once the last
	// pass over them is over.
	Close()
}

// Object is one decoded object: its rows in the decoder's compact form.
type Object interface {
	// Rows is the number of rows read (bad rows skipped not counted).
	Rows() int
	// NumRuns is the number of run parts in the object.
	NumRuns() int
	// Release drops the object's rows (and its spill file).
	Release() error
}

// Spiller is implemented by objects that can move their rows to local disk
// (a sweep larger than --memory-limit).
type Spiller interface {
	// MemBytes is what the object holds in memory.
	MemBytes() int64
	// Spill moves the rows to a temporary file under dir.
	Spill(dir string) error
}

// Splitter is implemented by decoders that can decode one large object in
// chunks on several goroutines, with exactly Decode's result.
type Splitter interface {
	Split(url, key string, r io.Reader, onBad readers.BadRowFunc) (Chunks, error)
}

// Resumer is implemented by decoders that can continue an object decoded
// from an object's earlier bytes with the lines appended after them (a
// training run's log that grew since the last job), exactly as Decode
// decodes the whole object. The engine keeps, with an object's --cache
// entry, what its bytes were, and vouches that the object's first size
// bytes are still those, ending with a line end.
type Resumer interface {
	// Resumable reports whether o, an object Decode or DecodeEncoding
	// gave, can be continued (plain JSON Lines, no bad rows skipped).
	Resumable(o Object) bool
	// Resume returns the chunks of the lines r holds, the object's bytes
	// after its first size, from which prev was decoded; their Object is
	// what Decode gives for the whole object. prev is Resume's from then
	// on.
	Resume(prev Object, size int64, r io.Reader, onBad readers.BadRowFunc) (Chunks, error)
}

// Chunks is one object being decoded in chunks: Next reads the next chunk
// of whole lines (io.EOF after the last; one call at a time, from any
// goroutine), Decode decodes one on any goroutine, Merge takes the decoded
// chunks back in order (one call at a time, from any goroutine), and
// Object returns what Decode would have.
type Chunks interface {
	Next(size int) (any, error)
	Decode(chunk any) any
	Merge(decoded any) error
	Object() (Object, error)
	Close() error
	// Compressed says whether reading a chunk decompresses it (gzip,
	// zstd), which costs about as much as decoding it.
	Compressed() bool
}

// Run is one assembled run.
type Run struct {
	Key  string
	Meta map[string]string
	// Rows is the number of rows (--min-steps compares it).
	Rows int
	// Labels is the number of distinct labels when the protocol has them.
	Labels int
	// Data is the decoder's assembled run, for Score.
	Data any
}

// Source is the object a run came from (its key relative to the input).
func (r *Run) Source() string { return r.Meta[readers.SourceField] }

// Scored is one scored run: what the reduction and the tables need of it.
type Scored struct {
	Key  string
	Meta map[string]string
	// Rows is the run's row count (--min-steps).
	Rows int
	// Values are the run's seed values by metric name; a metric it lacks
	// is absent with the reason NoSuchMetric.
	Values map[string]protocol.Value
	// Remarks describe the run in the family notes (all-zero rewards…).
	Remarks []string
	// DataNotes are notes about the run's rows, listed before the --where
	// note; Notes are listed after it.
	DataNotes []string
	Notes     []string
	// Result is the protocol's own result, for Render.
	Result any
	// Figure is what the job's Figures needs of the run (a Figurer's
	// downsampled curve), reduced while the run is scored.
	Figure any
}

// NoSuchMetric is the reason of a metric a scored run does not have.
const NoSuchMetric = "no such metric"

// Value returns the run's seed value of metric.
func (s *Scored) Value(metric string) protocol.Value {
	if v, ok := s.Values[metric]; ok {
		return v
	}
	return protocol.None(NoSuchMetric)
}

// Results are what Render builds the outputs from.
type Results struct {
	// Input is the input location as the report names it (redacted).
	Input string
	// Version is the crlbatch version.
	Version string
	// Runs are the scored runs in canonical order: family by family in
	// the order of Families, runs in assembly order within each.
	Runs []RunResult
	// Families is the reduction.
	Families *family.Result
	// Common are the engine's parameters, for crlbatch.params (Where is
	// never nil: no filter is an empty list).
	Common Common
	// Notes are the job's notes in order (bad rows, duplicate objects,
	// the runs' notes, --where).
	Notes []string
}

// RunResult is one scored run in its family.
type RunResult struct {
	*Scored
	Family   string
	Excluded bool
}

// Source is the object a run came from.
func (r *RunResult) Source() string { return r.Meta[readers.SourceField] }

// Rendered is a job's outputs: Parquet tables in the order they are
// written, then report.md.
type Rendered struct {
	// Params is crlbatch.params: every parameter that shaped a number,
	// marshalled to JSON.
	Params any
	Tables []Table
	Report string
	// Notes are the notes Render adds to Results.Notes (its report lists
	// them after those); manifest.json lists both, in that order.
	Notes []string
	// Warnings are those of Notes the engine also logs as warnings (on
	// stderr): findings that most likely mean a mistaken flag.
	Warnings []string
}

// Table is one Parquet file.
type Table struct {
	Name  string // "runs.parquet"
	Table *writers.Table
}

// SeedReasons returns the distinct reasons, in run order, why the included
// runs of family have no seed value of metric (the reasons column of the
// per-run table), for the report's footnotes.
func (r *Results) SeedReasons(family, metric string) []string {
	return writers.AbsentReasons(func(add func(protocol.Value)) {
		for i := range r.Runs {
			if run := &r.Runs[i]; run.Family == family && !run.Excluded {
				add(run.Value(metric))
			}
		}
	})
}
