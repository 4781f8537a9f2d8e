// Command crlbatch scores continual-learning runs in bulk: it lists trace
// objects under a folder or bucket prefix, scores every run, reduces
// algorithm families to statistics and publishes Parquet files and a
// Markdown report. See README.md and `crlbatch --help`.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime/pprof"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/crlbatch/crlbatch/pipeline"
	"github.com/crlbatch/crlbatch/readers"

	// Blob drivers, chosen here only.
	_ "gocloud.dev/blob/azureblob"
	_ "gocloud.dev/blob/fileblob"
	_ "gocloud.dev/blob/gcsblob"
	_ "gocloud.dev/blob/memblob"
	_ "gocloud.dev/blob/s3blob"
)

// version is the crlbatch version written into every output; release
// builds set it with -ldflags "-X main.version=…".
var version = "0.1.0-dev"

// Exit statuses (INTERFACE.md).
const (
	exitOK         = 0
	exitData       = 1
	exitUsage      = 2
	exitStorage    = 3
	exitInternal   = 70  // a bug in crlbatch (EX_SOFTWARE of sysexits; docs/decisions.md)
	exitHangup     = 129 // SIGHUP: 128 + 1
	exitInterrupt  = 130
	exitQuit       = 131 // SIGQUIT: 128 + 3
	exitTerminated = 143
)

func main() {
	os.Exit(runSignalled(os.Args, os.Stdout, os.Stderr, os.Exit))
}

// stopSignals are the signals that end a job as a failure: the job is
// cancelled, cleans up as on any error (nothing published, the claim, spill
// and temporary files removed) and exits 128 plus the signal's number, the
// status a shell reports for a process the signal killed. SIGHUP (a closed
// terminal or ssh session) and SIGQUIT (Ctrl-\, which first prints every
// goroutine's stack to stderr, as Go's default does) would otherwise kill
// the process with nothing cleaned up (docs/decisions.md, breakit4).
var stopSignals = []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT}

// signalStatus is the exit status of a job a signal stopped.
func signalStatus(s os.Signal) int {
	switch s {
	case syscall.SIGTERM:
		return exitTerminated
	case syscall.SIGHUP:
		return exitHangup
	case syscall.SIGQUIT:
		return exitQuit
	}
	return exitInterrupt
}

// signalName is a stop signal's name as a shell spells it.
func signalName(s os.Signal) string {
	switch s {
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGHUP:
		return "SIGHUP"
	case syscall.SIGQUIT:
		return "SIGQUIT"
	}
	return "SIGINT"
}

// shutdown is what runSignalled's handler says about the command it runs:
// the command's logger (the first signal is logged at info level) and
// what it may leave behind if a second signal ends the process during
// its clean-up. The score command fills it in (shutdownOf(ctx).set);
// other commands leave nothing that needs naming.
type shutdown struct {
	mu     sync.Mutex
	logger *slog.Logger
	left   string
}

type shutdownKey struct{}

// shutdownOf is the shutdown runSignalled put in ctx, or nil.
func shutdownOf(ctx context.Context) *shutdown {
	s, _ := ctx.Value(shutdownKey{}).(*shutdown)
	return s
}

func (s *shutdown) set(logger *slog.Logger, left string) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.logger, s.left = logger, left
}

func (s *shutdown) get() (*slog.Logger, string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.logger, s.left
}

// runSignalled is run under the signals of stopSignals: the first cancels
// the job, which cleans up (logged at info level: "stopping"); a second
// one exits at once with its own status, saying on stderr that it did and
// what the clean-up may not have removed yet (a job's claim on OUTPUT,
// partial result files, its spill folder: left to the next job on OUTPUT
// and the next one that spills). A signal the process was started with
// ignored (SIGHUP under nohup, SIGQUIT) stays ignored; SIGINT and SIGTERM
// are always caught.
func runSignalled(args []string, stdout, stderr io.Writer, exit func(int)) int {
	note := &shutdown{}
	ctx, cancel := context.WithCancel(context.WithValue(context.Background(), shutdownKey{}, note))
	defer cancel()
	var sig atomic.Value
	ch := make(chan os.Signal, 2)
	for _, s := range stopSignals {
		if s == os.Interrupt || s == syscall.SIGTERM || !signal.Ignored(s) {
			signal.Notify(ch, s)
		}
	}
	defer signal.Stop(ch)
	go func() {
		s := <-ch
		if s == syscall.SIGQUIT {
			pprof.Lookup("goroutine").WriteTo(stderr, 2)
		}
		sig.Store(s)
		if logger, _ := note.get(); logger != nil {
			logger.Info("stopping: the job is cancelled and cleans up; a second signal exits at once", "signal", signalName(s))
		}
		cancel()
		second := <-ch
		msg := "crlbatch: a second signal (" + signalName(second) + "): exiting at once, before the clean-up ended"
		if _, left := note.get(); left != "" {
			msg += "; may be left behind: " + left
		}
		fmt.Fprintln(stderr, msg)
		exit(signalStatus(second))
	}()
	code := run(ctx, args, stdout, stderr)
	if s, ok := sig.Load().(os.Signal); ok && code != exitOK {
		code = signalStatus(s)
	}
	return code
}

// run is the whole program, callable from tests: it never calls os.Exit.
// A panic on its path (a bug; the engine recovers those of its goroutines
// into a *pipeline.InternalError) is reported and exits 70 as one.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	app := newApp(stdout, stderr)
	err := func() (err error) {
		defer pipeline.Recover(&err)
		return app.Run(ctx, args)
	}()
	if m := helpTopicError.FindStringSubmatch(errString(err)); m != nil {
		// crlbatch help NAME, crlbatch completion NAME: no such command.
		target := app
		if len(args) > 1 {
			if c := app.Command(args[1]); c != nil && len(c.Commands) > 0 {
				target = c
			}
		}
		err = unknownCommand(target, m[1])
	}
	code := exitCode(ctx, err)
	if err != nil {
		msg := err.Error()
		var published *pipeline.PublishedError
		var stopped *stoppedError
		if code == exitInterrupt && errors.Is(err, context.Canceled) && !errors.As(err, &published) && !errors.As(err, &stopped) {
			msg = "interrupted: nothing was published, and files written so far were removed"
		}
		var rdata *readers.DataError
		if errors.As(err, &rdata) && rdata.Field != "" {
			msg += " (" + traceFormatDoc + ")"
		}
		// Drivers quote URLs in their errors: never print a secret.
		fmt.Fprintf(stderr, "crlbatch: %s\n", pipeline.Redact(msg))
		var bug *pipeline.InternalError
		if errors.As(err, &bug) {
			fmt.Fprintf(stderr, "%s\n", bug.Stack)
		}
	}
	return code
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// exitCode maps an error to the exit status of INTERFACE.md, in one place.
func exitCode(ctx context.Context, err error) int {
	var (
		bug     *pipeline.InternalError
		usage   *pipeline.UsageError
		storage *pipeline.StorageError
		rdata   *readers.DataError
		pdata   *pipeline.DataError
		found   *problemsError
	)
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &bug):
		return exitInternal
	case ctx.Err() != nil || errors.Is(err, context.Canceled):
		return exitInterrupt
	case errors.As(err, &usage):
		return exitUsage
	case errors.As(err, &storage):
		return exitStorage
	case errors.As(err, &rdata), errors.As(err, &pdata), errors.As(err, &found):
		return exitData
	}
	return exitData
}

// traceFormatDoc ends every error about a field of a row: the page that
// says what each field must hold.
const traceFormatDoc = "see docs/trace-format.md"

// stoppedError is a command other than a job stopped by a signal, saying
// itself what it had done (a job's "nothing was published" is not its).
type stoppedError struct {
	msg string
	err error // the context's error
}

func (e *stoppedError) Error() string { return e.msg }
func (e *stoppedError) Unwrap() error { return e.err }

// problemsError is validate or check-entry finding problems (exit 1).
type problemsError struct{ msg string }

func (e *problemsError) Error() string { return e.msg }
