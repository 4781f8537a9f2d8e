package testhook

import (
	"context"
	"fmt"
	"os"
	"time"
)

// Panic, when not empty, names the place where the engine panics:
// "decode" (a decode goroutine), "score" (a scoring goroutine), "main"
// (the job's own goroutine, after scoring and before publishing) or
// "publish" (the job's goroutine, once the result files are written and
// before the manifest is). Tests
// set it before a job starts and clear it after the job has returned.
var Panic string

// At panics when Panic names where.
func At(where string) {
	if Panic != "" && Panic == where {
		panic("test hook: a panic at " + where)
	}
}

// Pause, when not empty, names the place where the engine stops until its
// job is cancelled: "main" (after scoring, the spill files still there,
// before publishing), "publish" (the result files written, before the
// manifest), "prune" (cache prune, after its first entry removed) or
// "cache-entry" (a cache entry's bytes written to its temporary name,
// before it is published under its own). The signal tests set it in a
// process of their own, so that a signal reaches a known phase without
// timing anything; the cache crash test (integration) builds a crlbatch
// with it set (the linker's -X), so that its kill -9 lands while an
// entry is unfinished, at any load.
var Pause string

// PauseMarker is what Wait writes to stderr when it stops, before WHERE.
const PauseMarker = "test hook: paused at "

// Hold, when not empty, names the place where the engine stops for good
// (until the process ends): "release" (a job letting go of OUTPUT's
// claim, the last of its clean-up). The tests of a second signal set it,
// so that the signal arrives while a job cleans up.
var Hold string

// HoldMarker is what Block writes to stderr when it stops, before WHERE.
const HoldMarker = "test hook: held at "

// Block, when Hold names where, writes HoldMarker and where to stderr and
// never returns.
func Block(where string) {
	if Hold == "" || Hold != where {
		return
	}
	fmt.Fprintf(os.Stderr, "%s%s\n", HoldMarker, where)
	for {
		time.Sleep(time.Hour)
	}
}

// Wait, when Pause names where, writes PauseMarker and where to stderr
// and blocks until ctx is done, returning ctx's error; otherwise nil.
func Wait(ctx context.Context, where string) error {
	if Pause == "" || Pause != where {
		return nil
	}
	fmt.Fprintf(os.Stderr, "%s%s\n", PauseMarker, where)
	<-ctx.Done()
	return ctx.Err()
}
