// Command crlbatch-beam scores a sweep on Apache Beam: crlbatch score's
// flags and published files, on Prism (the default, in this process),
// Dataflow, or Flink and Spark through a portable job server (see
// docs/scale-out.md). It ends at a signal as crlbatch does (stop.Run).
package main

import (
	"context"
	"flag"
	"os"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"

	crlbeam "github.com/crlbatch/crlbatch/beam"
	"github.com/crlbatch/crlbatch/internal/stop"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] != "score" && !crlbeam.IsHelp(os.Args[1]) {
		// A Dataflow or portable worker runs this binary with Beam's
		// worker flags: beam.Init serves as the worker and never returns.
		flag.Parse()
		beam.Init()
	}
	os.Exit(stop.Run("crlbatch-beam", os.Stderr, os.Exit, func(ctx context.Context) int {
		return crlbeam.Main(ctx, os.Args[1:], os.Stdout, os.Stderr)
	}))
}
