package crlbeam

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"runtime/debug"
	"sync"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/crlbatch/crlbatch/internal/testhook"
	"github.com/crlbatch/crlbatch/pipeline"
)

// Counters of what the pipeline moves through its shuffles (the
// GroupByKeys), in encoded bytes: the run pieces keyed by run key, and the
// scored runs keyed by family; and the input bytes read.
var (
	inputBytes  = beam.NewCounter("crlbatch", "input_bytes")
	pieceBytes  = beam.NewCounter("crlbatch", "shuffled_piece_bytes")
	scoredBytes = beam.NewCounter("crlbatch", "shuffled_scored_bytes")
)

// Counter names, for Metrics.
const (
	CounterInputBytes  = "input_bytes"
	CounterPieceBytes  = "shuffled_piece_bytes"
	CounterScoredBytes = "shuffled_scored_bytes"
)

func init() {
	register.DoFn4x1[context.Context, []byte, func(string, []byte), func([]byte), error](&decodeFn{})
	register.DoFn4x1[context.Context, string, func(*[]byte) bool, func(string, []byte), error](&scoreFn{})
	register.Function3x0[string, func(*[]byte) bool, func([]byte)](sortFamily)
	register.Function2x0[[]byte, func([]byte)](unpackFamily)
	register.DoFn4x1[context.Context, []byte, func(*[]byte) bool, func(*[]byte) bool, error](&finishFn{})
	register.Emitter1[[]byte]()
	register.Emitter2[string, []byte]()
	register.Iter1[[]byte]()
}

// engines keeps one pipeline.Engine per spec in a worker process: the
// DoFns of a stage share it (its input bucket stays open).
var engines sync.Map // spec string → *engineOnce

type engineOnce struct {
	once sync.Once
	e    *pipeline.Engine
	err  error
}

func engineFor(spec string) (*pipeline.Engine, error) {
	v, _ := engines.LoadOrStore(spec, &engineOnce{})
	eo := v.(*engineOnce)
	eo.once.Do(func() {
		s, err := decodeSpec(spec)
		if err != nil {
			eo.err = err
			return
		}
		cfg, err := s.Config()
		if err != nil {
			eo.err = err
			return
		}
		eo.e, eo.err = pipeline.NewEngine(cfg)
	})
	return eo.e, eo.err
}

// decodeFn reads and decodes one listed object: its run pieces keyed by
// run key (the key "" holds a whole object when runs are not scored
// apart), and its summary for the final step.
type decodeFn struct {
	Spec string
	e    *pipeline.Engine
}

func (f *decodeFn) Setup() (err error) {
	defer recoverDoFn(&err)
	f.e, err = engineFor(f.Spec)
	return err
}

func (f *decodeFn) ProcessElement(ctx context.Context, ref []byte, emit func(string, []byte), summary func([]byte)) (err error) {
	defer recoverDoFn(&err)
	sum, err := f.e.DecodeObject(ctx, ref, func(key string, piece []byte) {
		pieceBytes.Inc(ctx, int64(len(key)+len(piece)))
		emit(key, piece)
	})
	if err != nil {
		return err
	}
	inputBytes.Inc(ctx, objectSize(ref))
	summary(sum)
	return nil
}

// scoreFn assembles and scores the run of one run key from its pieces.
type scoreFn struct {
	Spec string
	e    *pipeline.Engine
}

func (f *scoreFn) Setup() (err error) {
	defer recoverDoFn(&err)
	f.e, err = engineFor(f.Spec)
	return err
}

func (f *scoreFn) ProcessElement(ctx context.Context, _ string, pieces func(*[]byte) bool, emit func(string, []byte)) (err error) {
	defer recoverDoFn(&err)
	testhook.At("beam")
	var raw [][]byte
	var p []byte
	for pieces(&p) {
		raw = append(raw, p)
	}
	return f.e.ScoreRun(raw, func(family string, scored []byte) {
		scoredBytes.Inc(ctx, int64(len(family)+len(scored)))
		emit(family, scored)
	})
}

// sortFamily puts one family's runs in canonical order and packs them
// into one element for the final step.
func sortFamily(_ string, runs func(*[]byte) bool, emit func([]byte)) {
	var all [][]byte
	var r []byte
	for runs(&r) {
		all = append(all, r)
	}
	if err := pipeline.SortScored(all); err != nil {
		panic(err) // the encoding is ours: a bug, not data
	}
	emit(pack(all))
}

// unpackFamily feeds the final step a family's runs.
func unpackFamily(packed []byte, emit func([]byte)) {
	for _, r := range unpack(packed) {
		emit(r)
	}
}

// finishFn is the final step: the reduction, the files and their
// publication (pipeline.Engine.Finish), once, from the side inputs.
type finishFn struct {
	Spec string
}

func (f *finishFn) ProcessElement(ctx context.Context, _ []byte, summaries, runs func(*[]byte) bool) (err error) {
	defer recoverDoFn(&err)
	e, err := engineFor(f.Spec)
	if err != nil {
		return err
	}
	var sums, rs [][]byte
	var b []byte
	for summaries(&b) {
		sums = append(sums, b)
	}
	for runs(&b) {
		rs = append(rs, b)
	}
	sum, err := e.Finish(ctx, sums, rs)
	if err != nil {
		return err
	}
	slog.New(slog.NewTextHandler(os.Stderr, nil)).Info("published", "result", sum.Result,
		"runs", sum.Runs, "families", sum.Families, "objects", sum.Objects, "rows", sum.Rows)
	return nil
}

// recoverDoFn, deferred by every DoFn that returns an error, makes a panic
// of the DoFn, or an *pipeline.InternalError its engine returns (a panic
// on one of the engine's goroutines), the DoFn's error as an internal
// error's text with the stack after its first line: the runner returns a
// failed DoFn's error to Main as text only, and Main tells a bug from a
// data error by that first line (isInternal). Any other error gets
// crlbatch's message and, on a last line, its exit status (carryStatus),
// which the text would lose.
func recoverDoFn(err *error) {
	var ie *pipeline.InternalError
	if p := recover(); p != nil {
		ie = &pipeline.InternalError{Value: p, Stack: debug.Stack()}
	} else if !errors.As(*err, &ie) {
		*err = carryStatus(*err)
		return
	}
	*err = fmt.Errorf("%w\n%s", ie, ie.Stack)
}

// Build adds the job to the pipeline's root scope. refs are the listed
// objects (pipeline.Engine.List), in any order; split says whether runs
// are scored apart (pipeline.Engine.Split).
func Build(s beam.Scope, spec *Spec, refs [][]byte, split bool) {
	enc := spec.encode()
	objs := beam.Reshuffle(s, beam.CreateList(s, refs))
	pieces, summaries := beam.ParDo2(s.Scope("decode"), &decodeFn{Spec: enc}, objs)
	var runs beam.PCollection
	if split {
		byRun := beam.GroupByKey(s.Scope("by-run"), pieces)
		scored := beam.ParDo(s.Scope("score"), &scoreFn{Spec: enc}, byRun)
		byFamily := beam.GroupByKey(s.Scope("by-family"), scored)
		families := beam.ParDo(s.Scope("sort-family"), sortFamily, byFamily)
		runs = beam.ParDo(s.Scope("unpack"), unpackFamily, families)
	} else {
		runs = beam.DropKey(s.Scope("whole"), pieces)
	}
	beam.ParDo0(s.Scope("finish"), &finishFn{Spec: enc}, beam.Impulse(s),
		beam.SideInput{Input: summaries}, beam.SideInput{Input: runs})
}

// pack and unpack join byte strings into one, length-prefixed.
func pack(xs [][]byte) []byte {
	var out []byte
	for _, x := range xs {
		out = binary.AppendUvarint(out, uint64(len(x)))
		out = append(out, x...)
	}
	return out
}

func unpack(b []byte) [][]byte {
	var out [][]byte
	for len(b) > 0 {
		n, k := binary.Uvarint(b)
		if k <= 0 || uint64(len(b)-k) < n {
			panic(errors.New("crlbeam: a damaged pack")) // ours: a bug
		}
		out = append(out, b[k:k+int(n)])
		b = b[k+int(n):]
	}
	return out
}

// objectSize is a listed object's size, for the input_bytes counter.
func objectSize(ref []byte) int64 {
	var o struct{ Size int64 }
	if err := json.Unmarshal(ref, &o); err != nil {
		return 0
	}
	return o.Size
}
