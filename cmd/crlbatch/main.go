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
	"os"

	"github.com/crlbatch/crlbatch/internal/stop"
	"github.com/crlbatch/crlbatch/pipeline"
	"github.com/crlbatch/crlbatch/readers"

	// The heap's address space advised for huge pages while the process
	// starts, and the collector held until the command sets its own GC
	// percent (its package comment says why and when not).
	_ "github.com/crlbatch/crlbatch/internal/hugeheap"

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
	exitChanges    = 4   // diff --exit-code: the results differ (docs/decisions.md)
	exitInternal   = 70  // a bug in crlbatch (EX_SOFTWARE of sysexits; docs/decisions.md)
	exitHangup     = 129 // SIGHUP: 128 + 1
	exitInterrupt  = 130
	exitQuit       = 131 // SIGQUIT: 128 + 3
	exitTerminated = 143
)

func main() {
	keepConnections()
	os.Exit(runSignalled(os.Args, os.Stdout, os.Stderr, os.Exit))
}

// runSignalled is run under stop.Run: the signals of stop.Signals cancel
// the command, which cleans up and exits 128 plus the signal's number; a
// second one exits at once, saying what may be left behind.
func runSignalled(args []string, stdout, stderr io.Writer, exit func(int)) int {
	return stop.Run("crlbatch", stderr, exit, func(ctx context.Context) int {
		return run(ctx, args, stdout, stderr)
	})
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
	if err != nil && code != exitChanges {
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
	case errors.Is(err, errChanges):
		return exitChanges
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
