package pipeline

import (
	"context"
	"errors"
	"io"
	"log/slog"

	"golang.org/x/sync/errgroup"

	"github.com/crlbatch/crlbatch/readers"
)

// Problem is one problem found by Validate.
type Problem struct {
	Object string // object URL; "" for a problem of the whole input
	Err    error
}

// ValidateReport is what Validate found.
type ValidateReport struct {
	Objects  int
	Rows     int64
	Runs     []RunInfo
	Problems []Problem
}

// RunInfo describes one assembled run.
type RunInfo struct {
	Key    string
	Source string
	Rows   int
	Labels int
}

// Validate lists and reads the input, assembles runs and reports every
// problem it meets (every object is read even after one fails), writing
// nothing. It returns an error only when the job cannot proceed at all
// (usage, storage, cancellation); bad data goes into the report.
func Validate(ctx context.Context, cfg Config) (*ValidateReport, error) {
	if cfg.Output == "" {
		cfg.Output = "mem://"
	}
	if err := cfg.Check(); err != nil {
		return nil, err
	}
	j := &job{cfg: &cfg, log: cfg.Logger}
	if j.log == nil {
		j.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	var err error
	if j.in, err = ParseLocation(cfg.Input, false); err != nil {
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
	rep := &ValidateReport{Objects: len(objs)}
	if len(objs) == 0 {
		rep.Problems = append(rep.Problems, Problem{Err: errors.New(j.in.String() + ": no object matches the patterns")})
		return rep, nil
	}
	ropts := cfg.Reader
	ropts.Components = cfg.components()
	decoded := make([]*readers.ObjectRuns, len(objs))
	errs := make([]error, len(objs))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(cfg.Concurrency)
	j.prog.setTotal(len(objs), sumSizes(objs))
	for i := range objs {
		g.Go(func() error {
			one, err := j.read(gctx, b, objs[i:i+1])
			if err != nil {
				if IsStorage(err) || gctx.Err() != nil {
					return err
				}
				errs[i] = err
				return nil
			}
			decoded[i] = one[0]
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var good []*readers.ObjectRuns
	for i, e := range errs {
		if e != nil {
			rep.Problems = append(rep.Problems, Problem{Object: j.in.ObjectURL(objs[i].Key), Err: e})
			continue
		}
		rep.Rows += int64(decoded[i].Rows)
		good = append(good, decoded[i])
	}
	traces, err := readers.Assemble(good, ropts)
	if err != nil {
		rep.Problems = append(rep.Problems, Problem{Err: err})
		return rep, nil
	}
	for _, t := range traces {
		rep.Runs = append(rep.Runs, RunInfo{Key: t.Key, Source: t.Meta[readers.SourceField], Rows: t.Len(), Labels: len(t.LabelNames)})
	}
	return rep, nil
}
