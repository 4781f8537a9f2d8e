package crlbeam

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"slices"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/urfave/cli/v3"

	"github.com/crlbatch/crlbatch/internal/scoreflags"
	"github.com/crlbatch/crlbatch/internal/stop"
	"github.com/crlbatch/crlbatch/pipeline"
	"github.com/crlbatch/crlbatch/readers"
	"github.com/crlbatch/crlbatch/scoring"
)

// Exit codes, as crlbatch's (INTERFACE.md).
const (
	exitOK        = 0
	exitData      = 1
	exitUsage     = 2
	exitStorage   = 3
	exitInternal  = 70 // a bug in crlbatch (docs/decisions.md)
	exitInterrupt = 130
)

// scoreFlags are crlbatch score's flags that shape a result, crlbatch's
// own definitions (scoreflags: names, kinds, defaults), and the
// protocols' flags. Not here: --config (job files), --cache,
// --memory-limit, --spill-dir and --concurrency (Beam's workers decide),
// --figures, --cpuprofile.
func scoreFlags() []cli.Flag {
	flags := append(scoreflags.InputFlags(), scoreflags.ResultFlags()...)
	return append(flags, scoreflags.ProtocolFlags()...)
}

// crlbatchOnly are crlbatch score's flags that crlbatch-beam does not take.
var crlbatchOnly = []string{"config", "cache", "memory-limit", "spill-dir", "concurrency", "figures"}

// usageError is crlbatch's message for urfave/cli's parse error of the
// score command: an unknown flag with the closest one (pointing at
// crlbatch-beam score --help), a value of the wrong kind with what the
// flag wants (scoreflags.ExplainUsage), and a flag only crlbatch takes
// said so.
func usageError(cmd *cli.Command, err error) error {
	if name, ok := scoreflags.UnknownFlag(err); ok && slices.Contains(crlbatchOnly, name) {
		return pipeline.Usagef("score: --%s is crlbatch's, not crlbatch-beam's (it takes none of --%s)", name, strings.Join(crlbatchOnly, ", --"))
	}
	return &pipeline.UsageError{Err: scoreflags.ExplainUsage(cmd, err, "score: ", "crlbatch-beam score")}
}

// ParseScore reads `score INPUT --out OUTPUT [flags]` (crlbatch score's
// flags) into a Spec. Arguments naming a flag of Go's flag package (Beam's
// pipeline options: --runner, --endpoint, --environment_type, --project,
// …) are not for it: SplitArgs sets them apart first. --help (-h) prints
// the usage on help and returns errHelp.
func ParseScore(ctx context.Context, args []string, help io.Writer) (*Spec, error) {
	var spec *Spec
	cmd := scoreCommand(help)
	cmd.Action = func(_ context.Context, cmd *cli.Command) error {
		var err error
		spec, err = specOf(cmd)
		return err
	}
	if err := cmd.Run(ctx, append([]string{"score"}, args...)); err != nil {
		return nil, err
	}
	if spec == nil {
		// urfave/cli ran no Action: it printed the help.
		return nil, errHelp
	}
	return spec, nil
}

// errHelp is ParseScore's error when it printed the usage instead of
// reading a job: Main exits 0.
var errHelp = errors.New("help printed")

// scoreCommand is crlbatch-beam score's command line: crlbatch score's
// shared flags under their own help text and categories, and a
// description of what else it takes and refuses and its exit statuses.
// Its help goes to help.
func scoreCommand(help io.Writer) *cli.Command {
	return &cli.Command{
		Name:      "crlbatch-beam score",
		Usage:     "crlbatch score's nightly job on Apache Beam: list, read, score, reduce and write results",
		ArgsUsage: "INPUT --out OUTPUT [Beam pipeline options]",
		Description: "INPUT and OUTPUT are crlbatch score's, and so are the flags below, with the same\n" +
			"results. Not taken (crlbatch's alone): --" + strings.Join(crlbatchOnly, ", --") + ".\n" +
			"Beam's pipeline options (--runner, --endpoint, --environment_type, --project, …: any\n" +
			"flag of Beam's Go SDK) are passed to Beam; without --runner the job runs on Prism, in\n" +
			"this process.\n" + exitStatuses,
		CustomRootCommandHelpTemplate: cli.CommandHelpTemplate, // OPTIONS, as crlbatch score --help
		Flags:                         scoreFlags(),
		Writer:                        help, ErrWriter: io.Discard,
		OnUsageError: func(_ context.Context, cmd *cli.Command, err error, _ bool) error {
			return usageError(cmd, err)
		},
	}
}

// exitStatuses are crlbatch's (its --help), but for diff's 4.
const exitStatuses = "Exit status: 0 done, 1 bad input data, 2 usage error, 3 storage error, 70 internal\n" +
	"error (a bug in crlbatch: please report it), 129 hung up (SIGHUP), 130 interrupted\n" +
	"(SIGINT), 131 quit (SIGQUIT), 143 terminated (SIGTERM)."

// IsHelp says whether arg, crlbatch-beam's first argument, asks for its
// usage: --help, -help, -h or help.
func IsHelp(arg string) bool {
	return arg == "--help" || arg == "-h" || arg == "-help" || arg == "help"
}

// specOf reads and checks the flags as crlbatch score does (scoreflags,
// pipeline.Config's Check), then as the workers rebuild them (Spec.Config).
func specOf(cmd *cli.Command) (*Spec, error) {
	switch n := cmd.Args().Len(); {
	case n == 0:
		return nil, pipeline.Usagef("score: missing INPUT (see crlbatch-beam score --help)")
	case n > 1:
		return nil, pipeline.Usagef("score: want one INPUT, got %d arguments: %q", n, cmd.Args().Slice())
	}
	cfg := pipeline.DefaultConfig()
	cfg.Input = cmd.Args().First()
	if err := scoreflags.ReadInput(cmd, &cfg); err != nil {
		return nil, err
	}
	if _, err := pipeline.ParseLogLevel(cmd.String("log-level")); err != nil {
		return nil, err
	}
	if err := scoreflags.ReadResult(cmd, &cfg); err != nil {
		return nil, err
	}
	cfg.ProtocolFlags = cmd
	if err := cfg.Check(); err != nil {
		return nil, err
	}
	s := &Spec{Input: cfg.Input, Output: cfg.Output, Protocol: cfg.Protocol, Patterns: cfg.Patterns,
		GroupBy: cfg.GroupBy, Baseline: cfg.Baseline, AllowMissingBaseline: cfg.AllowMissingBaseline,
		MinSteps: cfg.MinSteps, Where: cfg.Where, Resamples: cfg.Resamples, BootstrapSeed: cfg.BootstrapSeed,
		MaxLineBytes: cfg.Reader.MaxLineBytes, MaxObjectBytes: cfg.Reader.MaxObjectBytes,
		MaxLabels: cfg.Reader.MaxLabels, MaxRuns: cfg.Reader.MaxRuns, MaxBadRows: cfg.MaxBadRows,
		Overwrite: cfg.Overwrite, History: cfg.History, Keep: cfg.Keep, Version: Version}
	if cmd.IsSet("identity-fields") {
		ids := cfg.Reader.IdentityFields
		s.IdentityFields = &ids
	}
	if l := cmd.String("log-level"); l != "warn" {
		s.LogLevel = l // the workers' too (the default leaves the Spec as it was)
	}
	name := s.Protocol
	if name == "" {
		name = scoring.Default()
	}
	p, err := scoring.Lookup(name)
	if err != nil {
		return nil, err
	}
	for _, f := range p.Describe().Flags {
		if !cmd.IsSet(f.Name) {
			continue
		}
		var v any
		switch f.Kind {
		case scoring.FlagString:
			v = cmd.String(f.Name)
		case scoring.FlagFloat:
			v = cmd.Float(f.Name)
		case scoring.FlagInt:
			v = cmd.Int(f.Name)
		case scoring.FlagBool:
			v = cmd.Bool(f.Name)
		case scoring.FlagStrings:
			v = cmd.StringSlice(f.Name)
		}
		raw, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		if s.ProtocolFlags == nil {
			s.ProtocolFlags = map[string]json.RawMessage{}
		}
		s.ProtocolFlags[f.Name] = raw
	}
	// Every usage error the local job would find before reading, now, on
	// the Config the workers rebuild.
	if cfg, err = s.Config(); err != nil {
		return nil, err
	}
	if err := cfg.Check(); err != nil {
		return nil, err
	}
	if _, err := pipeline.NewEngine(cfg); err != nil {
		return nil, err
	}
	return s, nil
}

// SplitArgs sets apart the arguments that name a flag of Go's flag
// package (Beam's pipeline options), with their values, from crlbatch's.
func SplitArgs(fs *flag.FlagSet, args []string) (ours, beams []string) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			ours = append(ours, args[i:]...)
			break
		}
		name, hasValue := strings.TrimLeft(a, "-"), false
		if !strings.HasPrefix(a, "-") || name == "" {
			ours = append(ours, a)
			continue
		}
		if k := strings.IndexByte(name, '='); k >= 0 {
			name, hasValue = name[:k], true
		}
		f := fs.Lookup(name)
		if f == nil {
			ours = append(ours, a)
			continue
		}
		beams = append(beams, a)
		if bf, ok := f.Value.(interface{ IsBoolFlag() bool }); !hasValue && !(ok && bf.IsBoolFlag()) && i+1 < len(args) {
			i++
			beams = append(beams, args[i])
		}
	}
	return ours, beams
}

// Main is crlbatch-beam: `crlbatch-beam score INPUT --out OUTPUT [flags]
// [Beam pipeline options]`. It returns the exit code, crlbatch's: a panic
// anywhere (on its path, or in a DoFn: recoverDoFn) is an internal error,
// exit 70, the job failed cleanly; a cancel (a signal: stop.Run) 130,
// saying it was interrupted (interruptedMsg).
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) (code int) {
	defer func() {
		if p := recover(); p != nil {
			ie := &pipeline.InternalError{Value: p, Stack: debug.Stack()}
			fmt.Fprintf(stderr, "crlbatch-beam: %s\n%s\n", pipeline.Redact(ie.Error()), ie.Stack)
			code = exitInternal
		}
	}()
	if len(args) > 0 && IsHelp(args[0]) {
		args = []string{"score", "--help"} // its only command
	}
	if len(args) < 1 || args[0] != "score" {
		fmt.Fprintln(stderr, "usage: crlbatch-beam score INPUT --out OUTPUT [crlbatch score's flags] [Beam pipeline options: --runner, --endpoint, --environment_type, …]")
		return exitUsage
	}
	ours, beams := SplitArgs(flag.CommandLine, args[1:])
	if err := flag.CommandLine.Parse(beams); err != nil {
		fmt.Fprintf(stderr, "crlbatch-beam: %s\n", pipeline.Redact(err.Error()))
		return exitUsage
	}
	beam.Init()
	defer logTo(stderr)()
	spec, err := ParseScore(ctx, ours, stdout)
	if errors.Is(err, errHelp) {
		return exitOK
	}
	if err == nil {
		stop.Of(ctx).Set(spec.logger(), leftBehind(spec))
		var st *Stats
		if st, err = Run(ctx, spec, Options{}); err == nil {
			fmt.Fprintf(stdout, "scored %d objects (%d bytes) on Beam; shuffled %d bytes of run pieces and %d of scored runs; results under %s\n",
				st.Objects, st.InputBytes, st.PieceBytes, st.ScoredBytes, pipeline.Redact(spec.Output))
			return exitOK
		}
	}
	// Drivers quote URLs in their errors: never print a secret.
	msg := pipeline.Redact(Brief(err))
	var ie *pipeline.InternalError
	if errors.As(err, &ie) || isInternal(msg) {
		// A DoFn's reaches Main as the runner's text, its stack after
		// its first line; one on Main's path as the error itself.
		if ie != nil && !strings.Contains(msg, "\n") {
			msg += "\n" + string(ie.Stack)
		}
		fmt.Fprintf(stderr, "crlbatch-beam: %s\n", msg)
		return exitInternal
	}
	if ctx.Err() != nil {
		fmt.Fprintf(stderr, "crlbatch-beam: %s\n", interruptedMsg)
		return exitInterrupt
	}
	// A DoFn's error reaches Main as text ending in its status
	// (carryStatus); one on Main's path as the error itself.
	msg, code, carried := carriedStatus(msg)
	if !carried {
		msg, code = pipeline.Redact(message(err)), status(err)
	}
	fmt.Fprintf(stderr, "crlbatch-beam: %s\n", msg)
	return code
}

// status is crlbatch's exit status for a job's error that is not a bug's
// nor a cancel's: 2 usage, 3 storage, else 1 (the data's).
func status(err error) int {
	var ue *pipeline.UsageError
	var se *pipeline.StorageError
	switch {
	case errors.As(err, &ue):
		return exitUsage
	case errors.As(err, &se):
		return exitStorage
	}
	return exitData
}

// message is err as crlbatch prints it: an error about a field of a row
// points to the page that says what the field must hold.
func message(err error) string {
	msg := err.Error()
	var rdata *readers.DataError
	if errors.As(err, &rdata) && rdata.Field != "" {
		msg += " (see docs/trace-format.md)"
	}
	return msg
}

// statusMark starts the last line of a failed DoFn's error: the exit
// status of the error's kind, which the runner's text would lose (a
// usage error only the runs can show, a store refusing an object, exited
// 1 as a data error did).
const statusMark = "crlbatch-beam exit status: "

// carryStatus is a DoFn's error as the runner carries it to Main: its
// message (message) and, on a last line, its status.
func carryStatus(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%w%s\n%s%d", err, strings.TrimPrefix(message(err), err.Error()), statusMark, status(err))
}

// carriedStatus splits a failed DoFn's text (Brief) into its message and
// the status carryStatus put after it; ok is false for any other text.
func carriedStatus(msg string) (text string, code int, ok bool) {
	i := strings.LastIndex(msg, "\n"+statusMark)
	if i < 0 {
		return msg, 0, false
	}
	rest := msg[i+1+len(statusMark):]
	if rest == "" || rest[0] < '0' || rest[0] > '9' {
		return msg, 0, false
	}
	return msg[:i], int(rest[0] - '0'), true
}

// interruptedMsg is what a cancelled job (a signal: stop.Run) says instead
// of its error: crlbatch's "interrupted: nothing was published, …" with
// what Beam makes uncertain. Once Main's context is cancelled the runner
// returns the error of its own cancelled calls ("failed to get metrics …
// rpc error: code = Canceled desc = context canceled"), not the final
// step's, so Main cannot tell whether that step had published just
// before (its manifest.json written); and a runner that stops its workers
// may end before the final step has removed what it wrote, which the next
// job on OUTPUT then removes (as after a second signal: leftBehind).
const interruptedMsg = "interrupted: nothing was published unless the final step had already written this job's manifest.json under OUTPUT; " +
	"files written so far were removed, or the next job on OUTPUT removes them"

// isInternal says whether msg, a failed DoFn's error as the runner
// returns it (Brief), is a bug's rather than the data's or the store's:
// recoverDoFn's *pipeline.InternalError ("internal error: … (a bug in
// crlbatch; please report it)" and its stack) or the harness's own text
// of a panic it caught ("panic: …", in a DoFn without an error to
// return). A data or storage error starts with the object or URL it
// names, never so.
//
// Text, not errors.As on *pipeline.InternalError: in Beam's Go SDK
// v2.77.0 no runner hands a DoFn's error back with its chain. Prism,
// Dataflow, Flink and Spark run the DoFn in an SDK harness that sends the
// bundle's failure as a string (harness.fail: InstructionResponse.Error),
// and the job service's message comes back as errors.New of that text
// (runnerlib.WaitForCompletion); the in-process direct runner keeps the
// chain only up to exec's doFnError, which wraps the DoFn's error without
// an Unwrap method (core/runtime/exec/util.go), so errors.As stops there.
func isInternal(msg string) bool {
	first, _, _ := strings.Cut(msg, "\n")
	return strings.HasPrefix(first, "internal error: ") && strings.HasSuffix(first, "(a bug in crlbatch; please report it)") ||
		strings.HasPrefix(first, "panic: ")
}

// leftBehind names what a job ended by a second signal during its
// clean-up may leave (stop.Note).
func leftBehind(s *Spec) string {
	out := strings.TrimSuffix(s.Output, "/")
	return pipeline.Redact(fmt.Sprintf("the claim %s/.crlbatch/job.json (or this attempt's under %s/.crlbatch/attempts/) and partial result files under %s, "+
		"which the next job on OUTPUT removes once this process is gone; the runner's temporary folder %s/crlbatch-beam-*",
		out, out, out, strings.TrimSuffix(os.TempDir(), "/")))
}

// Brief is a pipeline's error as crlbatch says it: a runner reports a
// failed DoFn with the bundle's plan around it; the DoFn's own error (the
// object and line of a bad row, …) comes after its last "failed:".
func Brief(err error) string {
	msg := err.Error()
	const mark = "] failed:\n"
	if i := strings.LastIndex(msg, mark); i >= 0 && strings.Contains(msg[:i], "DoFn[") {
		return strings.TrimSpace(msg[i+len(mark):])
	}
	return msg
}
