package crlbeam

import (
	"context"
	"fmt"
	"os"
	"slices"
	"sync"

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

// runMu serialises Run: Beam's options are process-wide (the flag
// package), and so is the temporary folder Run sets for the runner.
var runMu sync.Mutex

// Run checks OUTPUT, lists the input, builds the pipeline and runs it on
// the runner of --runner (Prism by default), waiting for it to end. A
// failed pipeline has published nothing.
//
// For its duration Run points TMPDIR at a folder of its own, which it
// removes when the runner returns: Beam's runner creates an empty file
// (beamloopbackworker-*) in the temporary folder for every loopback job
// and never removes it (apache/beam#27569), so that every job on Prism
// would leave one behind. Calls of Run in one process run one at a time.
func Run(ctx context.Context, spec *Spec, opt Options) (*Stats, error) {
	runMu.Lock()
	defer runMu.Unlock()
	restore, err := privateTempDir()
	if err != nil {
		return nil, err
	}
	defer restore()
	return run(ctx, spec, opt)
}

// privateTempDir points TMPDIR at a new folder under the temporary folder
// and returns what removes it and restores TMPDIR.
func privateTempDir() (restore func(), err error) {
	dir, err := os.MkdirTemp("", "crlbatch-beam-")
	if err != nil {
		return nil, fmt.Errorf("crlbatch-beam: a temporary folder for the runner: %w", err)
	}
	old, had := os.LookupEnv("TMPDIR")
	if err := os.Setenv("TMPDIR", dir); err != nil {
		os.Remove(dir)
		return nil, err
	}
	return func() {
		if had {
			os.Setenv("TMPDIR", old)
		} else {
			os.Unsetenv("TMPDIR")
		}
		os.RemoveAll(dir)
	}, nil
}

func run(ctx context.Context, spec *Spec, opt Options) (*Stats, error) {
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
