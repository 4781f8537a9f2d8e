package main

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"os"
	"regexp"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"runtime/trace"
	"strconv"
	"strings"

	"github.com/urfave/cli/v3"

	"github.com/crlbatch/crlbatch/internal/stop"
	"github.com/crlbatch/crlbatch/pipeline"
	"github.com/crlbatch/crlbatch/readers"
	"github.com/crlbatch/crlbatch/scoring"
)

const (
	catInput    = "Input"
	catMetric   = "Metrics"
	catCeiling  = "Ceiling"
	catFamily   = "Families and statistics"
	catOutput   = "Output and running"
	catProtocol = "Other protocols"
)

// inputFlags are shared by score and validate.
func inputFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "config", Category: catInput, TakesFile: true,
			Usage: "read flags from the YAML job file `FILE`: its keys are flag names (anchor: ceiling), and the key input gives INPUT; flags on the command line override it"},
		&cli.StringSliceFlag{Name: "pattern", Category: catInput,
			Usage: "read only objects whose base name matches `GLOB` (repeatable; default *.jsonl, *.jsonl.gz, *.jsonl.zst, *.ndjson)"},
		&cli.StringFlag{Name: "identity-fields", Category: catInput,
			DefaultText: protocolDefaults(func(d scoring.Description) string { return strings.Join(d.Identity, ",") }),
			Usage:       "comma-separated row `FIELDS` whose values identify a run; rows with equal values form one run, across files (\"\" for none: one run per file; see docs/trace-format.md)"},
		&cli.StringFlag{Name: "protocol", Category: catInput, Value: scoring.Default(),
			Usage: "the evaluation `PROTOCOL` of the rows: " + protocolSummaries()},
		&cli.StringFlag{Name: "max-line-bytes", Category: catInput, Value: sizeText(readers.DefaultMaxLineBytes), DefaultText: sizeText(readers.DefaultMaxLineBytes),
			Usage: "fail on a line longer than `SIZE` (a guard against runaway rows); " + sizeUsage},
		&cli.StringFlag{Name: "max-object-bytes", Category: catInput, Value: sizeText(readers.DefaultMaxObjectBytes), DefaultText: sizeText(readers.DefaultMaxObjectBytes),
			Usage: "fail on an object that decompresses to more than `SIZE` (a guard against decompression bombs); " + sizeUsage},
		&cli.IntFlag{Name: "max-labels", Category: catInput, Value: readers.DefaultMaxLabels,
			Usage: "fail on a run with more than `N` distinct regime_id values"},
		&cli.IntFlag{Name: "max-runs", Category: catInput, Value: readers.DefaultMaxRuns,
			Usage: "fail on an input with more than `N` runs"},
		&cli.IntFlag{Name: "max-bad-rows", Category: catInput, Value: 0,
			Usage: "skip up to `N` bad rows in all (invalid JSON, a field of the wrong type, a missing reward or regime_id, …), each named in manifest.json and counted in the report; one more fails the job, naming it (validate lists every bad row, and fails only past this many). Errors of a whole object (corrupt gzip or zstd, --max-line-bytes, --max-object-bytes) are never skipped"},
		&cli.StringFlag{Name: "memory-limit", Category: catOutput, DefaultText: "half the machine's memory",
			Usage: "memory for decoded rows, a `SIZE` (" + sizeExamples + "); past it, rows spill to --spill-dir and runs are scored one at a time, so a sweep larger than memory still scores. Given explicitly, it also sets Go's soft memory limit to it plus 96MiB (unless GOMEMLIMIT is set)"},
		&cli.StringFlag{Name: "spill-dir", Category: catOutput, DefaultText: "the system temp dir", TakesFile: true,
			Usage: "local folder `DIR` for spilled rows (emptied when the job ends)"},
		&cli.IntFlag{Name: "concurrency", Category: catOutput, Value: runtime.NumCPU(),
			Usage: "at most `N` objects read and runs scored at once (results are identical at any value)"},
		&cli.StringFlag{Name: "log-level", Category: catOutput, Value: "warn",
			Usage: pipeline.LogLevelUsage},
		&cli.BoolFlag{Name: "quiet", Category: catOutput, Usage: "print no progress on stderr"},
	}
}

func scoreFlags() []cli.Flag {
	flags := append(inputFlags(),
		&cli.StringFlag{Name: "out", Aliases: []string{"o"}, Category: catOutput,
			Usage: "where to write the results, `OUTPUT`: a folder, file://, s3://, gs:// or azblob:// prefix; {date} becomes the UTC date (s3://lab/scores/{date}/)"},
		&cli.StringFlag{Name: "cache", Category: catInput, TakesFile: true,
			Usage: "keep every object's decoded runs under `URL` (a folder or blob prefix; auto: a folder under the user's cache directory) and reuse them for objects unchanged since (same key, size, ETag or modification time, same decoding options): outputs are identical, only faster; see crlbatch cache"},
		&cli.BoolFlag{Name: "overwrite", Category: catOutput,
			Usage: "replace the result --out already holds, in place: its manifest.json is removed first and the new one written last (without this flag the job refuses)"},
		&cli.BoolFlag{Name: "history", Category: catOutput,
			Usage: "nightly layout: every result under --out/results/<attempt-id>/, --out/LATEST naming the newest complete one, and every night's families and run_summary under --out/history/<table>/night=<date>/attempt=<id>/"},
		&cli.BoolFlag{Name: "figures", Category: catOutput, Value: true,
			Usage: "draw the figures (figure-*.svg and .png, report.md's Figures section, report.html's images); --figures=false leaves them out (curves.parquet is still written)"},
		&cli.IntFlag{Name: "keep", Category: catOutput, DefaultText: "0, every result kept",
			Usage: "with --history, remove after publishing the oldest complete results beyond the `N` newest (never the one LATEST names, never a job's in progress)"},

		&cli.StringFlag{Name: "group-by", Category: catFamily,
			DefaultText: protocolDefaults(func(d scoring.Description) string { return strings.Join(d.GroupBy, ",") }),
			Usage:       "run metadata `FIELD` naming a family, or several comma-separated fields whose values join with /; source (the object a run came from) works too; a field no run has is a usage error"},
		&cli.StringFlag{Name: "baseline", Category: catFamily,
			Usage: "the `FAMILY` that the others are compared with (default: ppo if present, else the first family); a name no family has is a usage error"},
		&cli.BoolFlag{Name: "allow-missing-baseline", Category: catFamily,
			Usage: "publish even when no family is named --baseline (for sweeps where it is absent some nights): every comparison column is then null, and a note says why"},
		&cli.IntFlag{Name: "min-steps", Category: catFamily, DefaultText: "0, none left out",
			Usage: "leave runs with fewer than `N` rows out of every aggregate (they stay in runs.parquet, flagged excluded)"},
		&cli.StringSliceFlag{Name: "where", Category: catFamily,
			Usage: "keep only runs whose metadata FIELD equals VALUE (`FIELD=VALUE`, repeatable: one field's values are alternatives, different fields must all match)"},
		&cli.IntFlag{Name: "bootstrap-resamples", Category: catFamily, Value: 10000,
			Usage: "`N`, the resamples of the percentile-bootstrap confidence intervals"},
		&cli.Uint64Flag{Name: "bootstrap-seed", Category: catFamily,
			Usage: "the `SEED` of the bootstrap draws (combined with family and metric names, so reruns are identical)"},
		&cli.StringFlag{Name: "cpuprofile", Hidden: true, TakesFile: true, Usage: "write a Go CPU profile of the job to this file"},
		&cli.StringFlag{Name: "parquet-whole-bytes", Hidden: true,
			Usage: "read a Parquet object of at most `SIZE` whole, in one stream, and a larger one by ranges (default 16MiB; 1 reads every object by ranges)"},
		&cli.StringFlag{Name: "trace", Hidden: true, TakesFile: true, Usage: "write a Go execution trace of the job to this file (go tool trace)"},
	)
	return append(flags, protocolFlags()...)
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
			w := cmd.Root().Writer
			fmt.Fprintf(w, "scored %d runs in %d families from %d objects (%d rows): %d decoded, %d from the cache, %d Parquet\n",
				sum.Runs, sum.Families, sum.Objects, sum.Rows, sum.Read[pipeline.ReadDecoded], sum.Read[pipeline.ReadCache], sum.Read[pipeline.ReadParquet])
			fmt.Fprintf(w, "wrote %s: ", sum.Result)
			for i, o := range sum.Outputs {
				if i > 0 {
					fmt.Fprint(w, ", ")
				}
				fmt.Fprint(w, o.Name)
			}
			fmt.Fprintln(w, ", manifest.json")
			fmt.Fprintf(w, "report: %s\n", reportPath(sum.Result))
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

// placeholder matches what reads as a placeholder in --out: a word in
// braces ({date}, {Date}, {time}, {date:%Y}).
var placeholder = regexp.MustCompile(`\{[A-Za-z_][A-Za-z0-9_:%-]*\}`)

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
	cfg.Output = cmd.String("out")
	if cfg.Output == "" {
		return cfg, pipeline.Usagef("score: --out OUTPUT is required")
	}
	for _, p := range placeholder.FindAllString(cfg.Output, -1) {
		if p != "{date}" {
			return cfg, pipeline.Usagef("--out %s: %s is not a placeholder: only {date} (the job's UTC date) is replaced", pipeline.Redact(cfg.Output), p)
		}
	}
	if err := checkProtocolFlags(cmd, cfg.Protocol); err != nil {
		return cfg, err
	}
	cfg.ProtocolFlags = cmd
	cfg.Overwrite = cmd.Bool("overwrite")
	cfg.History = cmd.Bool("history")
	cfg.Keep = cmd.Int("keep")
	cfg.Cache = cmd.String("cache")
	cfg.NoFigures = !cmd.Bool("figures")

	if cmd.IsSet("group-by") {
		if cfg.GroupBy = splitList(cmd.String("group-by")); cfg.GroupBy == nil {
			return cfg, pipeline.Usagef("--group-by: at least one field is needed")
		}
	}
	cfg.Baseline = cmd.String("baseline")
	cfg.AllowMissingBaseline = cmd.Bool("allow-missing-baseline")
	cfg.MinSteps = cmd.Int("min-steps")
	if cfg.Where, err = pipeline.ParseWhere(cmd.StringSlice("where")); err != nil {
		return cfg, err
	}
	cfg.Resamples = cmd.Int("bootstrap-resamples")
	cfg.BootstrapSeed = cmd.Uint64("bootstrap-seed")
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
	cfg.Protocol = cmd.String("protocol")
	if ps := cmd.StringSlice("pattern"); len(ps) > 0 {
		cfg.Patterns = ps
	}
	if cmd.IsSet("identity-fields") {
		cfg.Reader.IdentityFields = splitList(cmd.String("identity-fields"))
		if cfg.Reader.IdentityFields == nil {
			cfg.Reader.IdentityFields = []string{}
		}
	}
	lineBytes, err := sizeFlag(cmd, "max-line-bytes")
	if err != nil {
		return err
	}
	cfg.Reader.MaxLineBytes = int(min(lineBytes, math.MaxInt))
	if cfg.Reader.MaxObjectBytes, err = sizeFlag(cmd, "max-object-bytes"); err != nil {
		return err
	}
	if cmd.IsSet("parquet-whole-bytes") {
		if cfg.ParquetWholeBytes, err = sizeFlag(cmd, "parquet-whole-bytes"); err != nil {
			return err
		}
	}
	cfg.Reader.MaxLabels = cmd.Int("max-labels")
	cfg.Reader.MaxRuns = cmd.Int("max-runs")
	if cfg.MaxBadRows = cmd.Int("max-bad-rows"); cfg.MaxBadRows < 0 {
		return pipeline.Usagef("--max-bad-rows %d: want at least 0", cfg.MaxBadRows)
	}
	for name, v := range map[string]int64{"max-labels": int64(cfg.Reader.MaxLabels), "max-runs": int64(cfg.Reader.MaxRuns)} {
		if v < 1 {
			return pipeline.Usagef("--%s %d: want at least 1", name, v)
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

// Every byte-size flag takes what pipeline.ParseBytes reads: a number of
// bytes, or a number with a unit (KiB, MiB, GiB, TiB; KB, MB, GB, TB; K, M,
// G, T as binary units; B), on the command line and in a job file.
const (
	sizeExamples = "1MiB, 256MB, 4GiB or 1048576 bytes"
	sizeUsage    = "a size such as " + sizeExamples
)

// sizeFlag reads the byte-size flag name: at least one byte, or a usage
// error naming the flag, the value and what it wants.
func sizeFlag(cmd *cli.Command, name string) (int64, error) {
	s := cmd.String(name)
	n, err := pipeline.ParseBytes(s)
	if err != nil {
		return 0, pipeline.Usagef("--%s %q: want a size such as %s", name, s, sizeExamples)
	}
	if n < 1 {
		return 0, pipeline.Usagef("--%s %q: want a size of at least 1 byte, such as %s", name, s, sizeExamples)
	}
	return n, nil
}

// sizeText prints a default size in the largest binary unit that divides it.
func sizeText(n int64) string {
	for _, u := range []struct {
		name string
		size int64
	}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n >= u.size && n%u.size == 0 {
			return strconv.FormatInt(n/u.size, 10) + u.name
		}
	}
	return strconv.FormatInt(n, 10)
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

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
