package main

import (
	"fmt"
	"os"
	"testing"

	"github.com/crlbatch/crlbatch/figures"
)

// TestMain renders each distinct figure once for the whole test binary
// (figures.Memoize): the end-to-end tests run the bundled examples under
// dozens of flag sets, and rasterizing the same PNGs again was about 40 %
// of the package's CPU. A figure is looked up by every command it draws,
// at full precision, so a figure that differs in anything is rendered
// afresh, and what a test reads is byte for byte what a fresh render
// writes. CRLBATCH_FIGURE_MEMO=0 renders every figure every time.
//
// The package's tests call t.Parallel() (up to -parallel, GOMAXPROCS by
// default, run at once), since most of their jobs keep one core busy:
// each has its own temporary folders and runs the program in-process with
// its own stdout and stderr. A test stays sequential (and then runs before
// every parallel one, never beside it) when it touches state of the whole
// process: the environment (t.Setenv), the working folder, the runtime's
// soft memory limit (--memory-limit), its GC percent, runtime/trace
// (--trace), or os.Args. Its comment says which.
func TestMain(m *testing.M) {
	on := os.Getenv("CRLBATCH_FIGURE_MEMO") != "0"
	figures.Memoize(on)
	code := m.Run()
	if hits, misses := figures.Memoize(false); on && testing.Verbose() {
		fmt.Fprintf(os.Stderr, "figures rendered %d, reused %d\n", misses, hits)
	}
	os.Exit(code)
}
