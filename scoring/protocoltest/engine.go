package protocoltest

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	// Score reads local folders: a test helper registers the one blob
	// driver it needs, as the binary registers them all.
	_ "gocloud.dev/blob/fileblob"

	"github.com/crlbatch/crlbatch/pipeline"
	"github.com/crlbatch/crlbatch/writers"
)

// Scored is a job's outputs, read back.
type Scored struct {
	Dir    string
	Tables map[string]*writers.ReadBack // by file name
	Report string
}

// Score runs the engine (pipeline.Run) on the local folder in under
// protocol, after edit (nil: the defaults) has set what the test wants,
// and reads every output back. A failed job fails the test.
func Score(t *testing.T, protocol, in string, edit func(*pipeline.Config)) *Scored {
	t.Helper()
	cfg := pipeline.DefaultConfig()
	cfg.Input, cfg.Protocol = in, protocol
	cfg.Output = filepath.Join(t.TempDir(), "out")
	cfg.Resamples = 1000
	if edit != nil {
		edit(&cfg)
	}
	if _, err := pipeline.Run(context.Background(), cfg); err != nil {
		t.Fatalf("score %s under %s: %v", in, protocol, err)
	}
	out := &Scored{Dir: cfg.Output, Tables: map[string]*writers.ReadBack{}}
	for _, n := range list(t, cfg.Output) {
		if filepath.Ext(n) == ".parquet" {
			out.Tables[n] = readParquet(t, filepath.Join(cfg.Output, n))
		}
	}
	report, err := os.ReadFile(filepath.Join(cfg.Output, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	out.Report = string(report)
	return out
}
