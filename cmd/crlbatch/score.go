package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"runtime/trace"
	"strings"

	"github.com/urfave/cli/v3"

	"github.com/crlbatch/crlbatch/internal/scoreflags"
	"github.com/crlbatch/crlbatch/internal/stop"
	"github.com/crlbatch/crlbatch/pipeline"
	"github.com/crlbatch/crlbatch/scoring"
)

const (
	catInput  = scoreflags.CatInput
	catOutput = scoreflags.CatOutput
)

// inputFlags are shared by score and validate: crlbatch-beam's
// (scoreflags.InputFlags) and crlbatch's own.
func inputFlags() []cli.Flag {
	return append([]cli.Flag{
		&cli.StringFlag{Name: "config", Category: catInput, TakesFile: true,
			Usage: "read flags from the YAML job file `FILE`: its keys are flag names (anchor: ceiling), and the key input gives INPUT; flags on the command line override it"},
		&cli.StringFlag{Name: "memory-limit", Category: catOutput, DefaultText: "half the machine's memory",
			Usage: "memory for decoded rows, a `SIZE` (" + sizeExamples + "); past it, rows spill to --spill-dir and runs are scored one at a time, so a sweep larger than memory still scores. Given explicitly, it also sets Go's soft memory limit to it plus 96MiB (unless GOMEMLIMIT is set)"},
		&cli.StringFlag{Name: "spill-dir", Category: catOutput, DefaultText: "the system temp dir", TakesFile: true,
			Usage: "local folder `DIR` for spilled rows (emptied when the job ends)"},
		&cli.IntFlag{Name: "concurrency", Category: catOutput, Value: runtime.NumCPU(),
			Usage: "at most `N` objects read and runs scored at once (results are identical at any value)"},
	}, scoreflags.InputFlags()...)
}

// scoreFlags are crlbatch-beam's (scoreflags) and crlbatch's own.
func scoreFlags() []cli.Flag {
	flags := append(inputFlags(), scoreflags.ResultFlags()...)
	flags = append(flags,
		&cli.StringFlag{Name: "cache", Category: catInput, TakesFile: true,
			Usage: "keep every object's decoded runs under `URL` (a folder or blob prefix; auto: a folder under the user's cache directory) and reuse them for objects unchanged since (same key, size, ETag or modification time, same decoding options): outputs are identical, only faster; see crlbatch cache"},
		&cli.BoolFlag{Name: "figures", Category: catOutput, Value: true,
			Usage: "draw the figures (figure-*.svg and .png, report.md's Figures section, report.html's images); --figures=false leaves them out (curves.parquet is still written)"},
		&cli.StringFlag{Name: "cpuprofile", Hidden: true, TakesFile: true, Usage: "write a Go CPU profile of the job to this file"},
		&cli.StringFlag{Name: "parquet-whole-bytes", Hidden: true,
			Usage: "read a Parquet object of at most `SIZE` whole, in one stream, and a larger one by ranges (default 16MiB; 1 reads every object by ranges)"},
		&cli.StringFlag{Name: "trace", Hidden: true, TakesFile: true, Usage: "write a Go execution trace of the job to this file (go tool trace)"},
	)
	return append(flags, scoreflags.ProtocolFlags()...)
}

func scoreCommand() *cli.Command {
	return &cli.Command{
		Name:      "score",
		Usage:     "the nightly job: list, read, score, reduce and write results",
		ArgsUsage: "INPUT --out OUTPUT",
		Description: "INPUT is a folder, a file, or a file://, s3://, gs:// or azblob:// prefix; every object\n" +
			"under it whose name matches --pattern is read. OUTPUT receives the protocol's Parquet files\n" +
			"(" + protocolDefaults(func(d scoring.Description) string { return strings.Join(d.Outputs, ", ") }) + "),\n" +
			"report.md, report.html, the figures (figure-*.svg and .png) and, last, manifest.json.",
		Flags: scoreFlags(),
		Action: func(ctx context.Context, cmd *cli.Command) error {
			cfg, err := scoreConfig(cmd)
			if err != nil {
				return err
			}
			if f := cmd.String("cpuprofile"); f != "" {
				stop, err := startCPUProfile(f)
				if err != nil {
					return err
				}
				defer stop()
			}
			if f := cmd.String("trace"); f != "" {
				stop, err := startTrace(f)
				if err != nil {
					return err
				}
				defer stop()
			}
			stop.Of(ctx).Set(cfg.Logger, leftBehind(cfg))
			defer softMemoryLimit(cfg.MemoryLimit)()
			defer heapFloor(gcFloorBytes, scoreGCPercent)()
			sum, err := pipeline.Run(ctx, cfg)
			if err != nil {
				return err
			}
			// The summary in one write (it was ~45 small ones).
			var w strings.Builder
			fmt.Fprintf(&w, "scored %d runs in %d families from %d objects (%d rows): %d decoded, %d from the cache, %d Parquet",
				sum.Runs, sum.Families, sum.Objects, sum.Rows, sum.Read[pipeline.ReadDecoded], sum.Read[pipeline.ReadCache], sum.Read[pipeline.ReadParquet])
			if n := sum.Read[pipeline.ReadAppended]; n > 0 {
				// Objects that grew: their earlier lines from the cache.
				fmt.Fprintf(&w, ", %d appended to", n)
			}
			w.WriteByte('\n')
			fmt.Fprintf(&w, "wrote %s: ", sum.Result)
			for i, o := range sum.Outputs {
				if i > 0 {
					w.WriteString(", ")
				}
				w.WriteString(o.Name)
			}
			w.WriteString(", manifest.json\n")
			fmt.Fprintf(&w, "report: %s\n", reportPath(sum.Result))
			fmt.Fprint(cmd.Root().Writer, w.String())
			return nil
		},
	}
}

// leftBehind names what a job stopped during its clean-up may leave, for
// the message of a second signal: its claim on OUTPUT and partial result
// files (taken over by the next job on OUTPUT once this process is gone),
// and its spill folder (removed by the next job that spills).
func leftBehind(cfg pipeline.Config) string {
	out := strings.TrimSuffix(cfg.Output, "/")
	spill := cfg.SpillDir
	if spill == "" {
		spill = os.TempDir()
	}
	host, _ := os.Hostname()
	return pipeline.Redact(fmt.Sprintf("the claim %s/.crlbatch/job.json (or this attempt's under %s/.crlbatch/attempts/) and partial result files under %s, "+
		"which the next job on OUTPUT removes once this process is gone; this job's spill folder %s/crlbatch-spill.tmp-%s-%d-*, which the next job that spills removes",
		out, out, out, strings.TrimSuffix(spill, "/"), host, os.Getpid()))
}

func reportPath(out string) string {
	return strings.TrimSuffix(out, "/") + "/report.md"
}

// scoreConfig turns the flags (after the job file) into a pipeline.Config.
func scoreConfig(cmd *cli.Command) (pipeline.Config, error) {
	cfg := pipeline.DefaultConfig()
	input, err := applyJobFile(cmd)
	if err != nil {
		return cfg, err
	}
	if err := commonConfig(cmd, &cfg, input); err != nil {
		return cfg, err
	}
	if err := scoreflags.ReadResult(cmd, &cfg); err != nil {
		return cfg, err
	}
	cfg.ProtocolFlags = cmd
	cfg.Cache = cmd.String("cache")
	cfg.NoFigures = !cmd.Bool("figures")
	useSDKLogger(&cfg)
	return cfg, cfg.Check()
}

// commonConfig fills what score and validate share.
func commonConfig(cmd *cli.Command, cfg *pipeline.Config, input string) error {
	if input == "" {
		in, err := oneArg(cmd, "INPUT")
		if err != nil {
			return err
		}
		input = in
	} else if cmd.Args().Len() > 0 {
		return pipeline.Usagef("%s: INPUT is given both by the job file and on the command line", cmd.Name)
	}
	cfg.Input = input
	err := scoreflags.ReadInput(cmd, cfg)
	if err != nil {
		return err
	}
	if cmd.IsSet("parquet-whole-bytes") {
		if cfg.ParquetWholeBytes, err = sizeFlag(cmd, "parquet-whole-bytes"); err != nil {
			return err
		}
	}
	cfg.Concurrency = cmd.Int("concurrency")
	cfg.Version = version
	cfg.Commit = vcsCommit()
	if cmd.String("memory-limit") != "" {
		if cfg.MemoryLimit, err = sizeFlag(cmd, "memory-limit"); err != nil {
			return err
		}
	}
	cfg.SpillDir = cmd.String("spill-dir")

	level, err := pipeline.ParseLogLevel(cmd.String("log-level"))
	if err != nil {
		return err
	}
	stderr := cmd.Root().ErrWriter
	cfg.Logger = slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	if !cmd.Bool("quiet") {
		cfg.Progress = stderr
		if f, ok := stderr.(*os.File); ok {
			if fi, err := f.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
				cfg.Terminal = true
			}
		}
	}
	return nil
}

// The byte-size flags' reading and help, and the list flags', are
// crlbatch-beam's too (scoreflags).
const sizeExamples = scoreflags.SizeExamples

var (
	sizeFlag  = scoreflags.Size
	sizeText  = scoreflags.SizeText
	splitList = scoreflags.SplitList
)

// startCPUProfile profiles the job into file (a hidden flag for development).
func startCPUProfile(file string) (func(), error) {
	f, err := os.Create(file)
	if err != nil {
		return nil, pipeline.Usagef("--cpuprofile: %v", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, pipeline.Usagef("--cpuprofile: %v", err)
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}

// startTrace writes a runtime execution trace of the job into file (a
// hidden flag for development: where the cores sit idle, go tool trace).
func startTrace(file string) (func(), error) {
	f, err := os.Create(file)
	if err != nil {
		return nil, pipeline.Usagef("--trace: %v", err)
	}
	if err := trace.Start(f); err != nil {
		f.Close()
		return nil, pipeline.Usagef("--trace: %v", err)
	}
	return func() { trace.Stop(); f.Close() }, nil
}

// softHeadroom is what a job holds besides the decoded rows that
// --memory-limit budgets: objects being decoded, the runs being scored in
// dense form, the family statistics.
const softHeadroom = 96 << 20

// softMemoryLimit sets the Go runtime's soft memory limit to an explicit
// --memory-limit plus softHeadroom, unless GOMEMLIMIT is set, and returns
// the function that restores the previous limit. Under a small limit the
// rows spill and the heap's peak then depends on when the collector
// happens to run; a soft limit makes it collect before the heap outgrows
// what the job needs (docs/decisions.md). Without --memory-limit (limit 0)
// nothing changes.
func softMemoryLimit(limit int64) func() {
	if limit <= 0 || os.Getenv("GOMEMLIMIT") != "" {
		return func() {}
	}
	soft := limit + softHeadroom
	if soft < limit { // overflow
		return func() {}
	}
	prev := debug.SetMemoryLimit(soft)
	return func() { debug.SetMemoryLimit(prev) }
}
