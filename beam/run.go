package crlbeam

import (
	"context"
	"slices"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/x/beamx"

	"github.com/crlbatch/crlbatch/pipeline"
)

// Options are how a job is run, beside its Spec and Beam's own flags
// (--runner, --endpoint, …, read by beamx from the flag package).
type Options struct {
	// Reverse hands the listed objects to the pipeline in reverse order
	// (tests: the order of the input must not matter).
	Reverse bool
}

// Stats are what the pipeline counted.
type Stats struct {
	Objects int
	// InputBytes is the size of the objects read; PieceBytes and
	// ScoredBytes are the encoded bytes emitted into the GroupByKey on run
	// key and on family.
	InputBytes, PieceBytes, ScoredBytes int64
}

// Run checks OUTPUT, lists the input, builds the pipeline and runs it on
// the runner of --runner (Prism by default), waiting for it to end. A
// failed pipeline has published nothing.
func Run(ctx context.Context, spec *Spec, opt Options) (*Stats, error) {
	cfg, err := spec.Config()
	if err != nil {
		return nil, err
	}
	e, err := pipeline.NewEngine(cfg)
	if err != nil {
		return nil, err
	}
	defer e.Close()
	if err := e.Preflight(ctx); err != nil {
		return nil, err
	}
	refs, err := e.List(ctx)
	if err != nil {
		return nil, err
	}
	if opt.Reverse {
		slices.Reverse(refs)
	}
	p, s := beam.NewPipelineWithRoot()
	Build(s, spec, refs, e.Split())
	pr, err := beamx.RunWithMetrics(ctx, p)
	if err != nil {
		return nil, err
	}
	st := &Stats{Objects: len(refs)}
	if pr != nil {
		for _, c := range pr.Metrics().AllMetrics().Counters() {
			if c.Key.Namespace != "crlbatch" {
				continue
			}
			switch c.Key.Name {
			case CounterInputBytes:
				st.InputBytes += c.Result()
			case CounterPieceBytes:
				st.PieceBytes += c.Result()
			case CounterScoredBytes:
				st.ScoredBytes += c.Result()
			}
		}
	}
	return st, nil
}
