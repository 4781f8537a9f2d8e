package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"gocloud.dev/blob"
	"golang.org/x/sync/errgroup"

	"github.com/crlbatch/crlbatch/readers"
	"github.com/crlbatch/crlbatch/writers"
)

// Summary is what a finished job reports.
type Summary struct {
	Objects  int
	Rows     int64
	Runs     int
	Families int
	Outputs  []writers.ManifestOutput
	Output   string
}

// job carries the state of one run of the pipeline.
type job struct {
	cfg      *Config
	log      *slog.Logger
	in       Location
	out      Location
	prog     *progress
	start    time.Time
	notes    []string
	manObj   []writers.ManifestObject
	families int
	runs     int // runs scored (after --where)
	params   []byte
}

// Run executes the job: list, read, assemble, score, reduce, write. On any
// error nothing is left under the output prefix: the result files are
// written only after every number is computed, a failed write deletes what
// was written, and manifest.json comes last.
func Run(ctx context.Context, cfg Config) (*Summary, error) {
	if err := cfg.Check(); err != nil {
		return nil, err
	}
	j := &job{cfg: &cfg, log: cfg.Logger, start: time.Now().UTC()}
	if j.log == nil {
		j.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	var err error
	if j.in, err = ParseLocation(cfg.Input, false); err != nil {
		return nil, err
	}
	if j.out, err = ParseLocation(cfg.Output, true); err != nil {
		return nil, err
	}
	if j.out.Path != "" && j.out.Local && j.out.Prefix == "" {
		return nil, Usagef("--out %s is a file: want a folder or prefix", j.out)
	}
	if within(j.out, j.in) {
		return nil, Usagef("--out %s lies inside the input %s: the next run would read its own results", j.out, j.in)
	}
	j.prog = newProgress(cfg.Progress, cfg.Terminal)
	defer j.prog.stop()

	inB, inClose, err := openBucket(ctx, cfg.Opener, j.in)
	if err != nil {
		return nil, err
	}
	defer inClose()
	outB, outClose, err := openBucket(ctx, cfg.Opener, j.out)
	if err != nil {
		return nil, err
	}
	defer outClose()

	if err := j.checkOutput(ctx, outB); err != nil {
		return nil, err
	}

	objs, err := list(ctx, inB, j.in, cfg.Patterns, cfg.Retry)
	if err != nil {
		return nil, err
	}
	if len(objs) == 0 {
		return nil, &DataError{Err: fmt.Errorf("%s: no object matches %q", j.in, cfg.Patterns)}
	}
	j.log.Info("listed", "input", j.in.String(), "objects", len(objs))

	j.prog.setTotal(len(objs), sumSizes(objs))
	decoded, err := j.read(ctx, inB, objs)
	if err != nil {
		return nil, err
	}
	ropts := cfg.Reader
	ropts.Components = cfg.components()
	traces, err := readers.Assemble(decoded, ropts)
	if err != nil {
		var de *readers.DataError
		if errors.As(err, &de) {
			return nil, err
		}
		return nil, &DataError{Err: err}
	}
	nRuns := len(traces)
	var rows int64
	for i, o := range decoded {
		rows += int64(o.Rows)
		j.manObj = append(j.manObj, writers.ManifestObject{
			Key: objs[i].Rel, Size: objs[i].Size, ETag: objs[i].ETag, MD5: objs[i].MD5,
			RowsRead: int64(o.Rows), RunsFound: o.NumRuns(), Status: "ok",
		})
	}
	j.log.Info("assembled", "runs", nRuns, "rows", rows)

	files, err := j.skyfall(ctx, sliceSource(traces))
	if err != nil {
		return nil, err
	}
	outputs, err := j.publish(ctx, outB, files, j.runs)
	if err != nil {
		return nil, err
	}
	j.prog.done()
	return &Summary{Objects: len(objs), Rows: rows, Runs: j.runs, Families: j.families, Outputs: outputs, Output: j.out.String()}, nil
}

// read decodes every object with at most Concurrency at once, each into its
// own slot, retrying transient storage errors.
func (j *job) read(ctx context.Context, b *blob.Bucket, objs []object) ([]*readers.ObjectRuns, error) {
	ropts := j.cfg.Reader
	ropts.Components = j.cfg.components()
	out := make([]*readers.ObjectRuns, len(objs))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(j.cfg.Concurrency)
	for i := range objs {
		o := objs[i]
		g.Go(func() error {
			url := j.in.ObjectURL(o.Key)
			err := j.cfg.Retry.retry(gctx, func() error {
				r, err := b.NewReader(gctx, o.Key, nil)
				if err != nil {
					return err
				}
				defer r.Close()
				res, err := readers.DecodeObject(url, o.Rel, &countingReader{r: r, p: j.prog}, ropts)
				if err != nil {
					return err
				}
				out[i] = res
				return nil
			})
			if err != nil {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				var de *readers.DataError
				if errors.As(err, &de) {
					return err
				}
				if errors.Is(err, readers.ErrLimit) {
					return err
				}
				return &StorageError{Op: "read", URL: url, Err: redactErr(err)}
			}
			j.prog.objectDone()
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

func sumSizes(objs []object) int64 {
	var s int64
	for _, o := range objs {
		s += o.Size
	}
	return s
}
