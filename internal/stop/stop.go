package stop

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime/pprof"
	"sync"
	"sync/atomic"
	"syscall"
)

// Signals are the signals that end a command as a failure: its context is
// cancelled, it cleans up as on any error (nothing published, the claim,
// spill and temporary files removed) and the process exits 128 plus the
// signal's number, the status a shell reports for a process the signal
// killed. SIGHUP (a closed terminal or ssh session) and SIGQUIT (Ctrl-\,
// which first prints every goroutine's stack to stderr, as Go's default
// does) would otherwise kill the process with nothing cleaned up
// (docs/decisions.md, breakit4).
var Signals = []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT}

// Status is the exit status of a command a signal stopped: 130 (SIGINT),
// 143 (SIGTERM), 129 (SIGHUP), 131 (SIGQUIT).
func Status(s os.Signal) int {
	switch s {
	case syscall.SIGTERM:
		return 143
	case syscall.SIGHUP:
		return 129
	case syscall.SIGQUIT:
		return 131
	}
	return 130
}

// Name is a stop signal's name as a shell spells it.
func Name(s os.Signal) string {
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

// Note is what Run's handler says about the command it runs: the
// command's logger (the first signal is logged at info level) and what it
// may leave behind if a second signal ends the process during its
// clean-up. A command fills it in (Of(ctx).Set); one that leaves nothing
// that needs naming does not.
type Note struct {
	mu     sync.Mutex
	logger *slog.Logger
	left   string
}

type noteKey struct{}

// Of is the Note Run put in ctx, or nil (whose Set does nothing).
func Of(ctx context.Context) *Note {
	n, _ := ctx.Value(noteKey{}).(*Note)
	return n
}

// Set records the command's logger and what it may leave behind.
func (n *Note) Set(logger *slog.Logger, left string) {
	if n == nil {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	n.logger, n.left = logger, left
}

func (n *Note) get() (*slog.Logger, string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.logger, n.left
}

// Run runs cmd under Signals and returns its exit status. The first
// signal cancels cmd's context, which cleans up (logged at info level:
// "stopping"); cmd's status, when not 0, becomes the signal's. A second
// one calls exit at once with its own status, after one line on stderr,
// prog's, saying so and naming what the clean-up may not have removed yet
// (the Note's). A signal the process was started with ignored (SIGHUP
// under nohup, SIGQUIT) stays ignored; SIGINT and SIGTERM are always
// caught.
func Run(prog string, stderr io.Writer, exit func(int), cmd func(ctx context.Context) int) int {
	note := &Note{}
	ctx, cancel := context.WithCancel(context.WithValue(context.Background(), noteKey{}, note))
	defer cancel()
	var sig atomic.Value
	ch := make(chan os.Signal, 2)
	for _, s := range Signals {
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
			logger.Info("stopping: the job is cancelled and cleans up; a second signal exits at once", "signal", Name(s))
		}
		cancel()
		second := <-ch
		msg := prog + ": a second signal (" + Name(second) + "): exiting at once, before the clean-up ended"
		if _, left := note.get(); left != "" {
			msg += "; may be left behind: " + left
		}
		fmt.Fprintln(stderr, msg)
		exit(Status(second))
	}()
	code := cmd(ctx)
	if s, ok := sig.Load().(os.Signal); ok && code != 0 {
		code = Status(s)
	}
	return code
}
