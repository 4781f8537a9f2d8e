package pipeline

import (
	"fmt"
	"os"
	"syscall"
	"testing"

	"github.com/crlbatch/crlbatch/readers"
	"github.com/crlbatch/crlbatch/scoring"
)

func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

// BenchmarkDecodeChunkedFile decodes the JSONL (or compressed) file named
// by CRLBATCH_BENCH_FILE as the engine decodes a split object: read from
// the file (the page cache), in chunks of CRLBATCH_BENCH_CHUNK_BYTES
// (default readers.DefaultChunkBytes) on CRLBATCH_BENCH_WORKERS (default 2)
// workers; skipped when it is unset. cpu-ms/op is the process's CPU time
// per object.
// The wall time per object is ns/op; the warm job's changed object is one.
func BenchmarkDecodeChunkedFile(b *testing.B) {
	name := os.Getenv("CRLBATCH_BENCH_FILE")
	if name == "" {
		b.Skip("CRLBATCH_BENCH_FILE is not set")
	}
	workers := 2
	if w := os.Getenv("CRLBATCH_BENCH_WORKERS"); w != "" {
		if _, err := fmt.Sscan(w, &workers); err != nil {
			b.Fatal(err)
		}
	}
	size := readers.DefaultChunkBytes
	if s := os.Getenv("CRLBATCH_BENCH_CHUNK_BYTES"); s != "" {
		if _, err := fmt.Sscan(s, &size); err != nil {
			b.Fatal(err)
		}
	}
	st, err := os.Stat(name)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(st.Size())
	// skyfall's decoder as the nightly job configures it (its one
	// component), splitting objects as the engine has it do.
	p, err := scoring.Lookup("skyfall")
	if err != nil {
		b.Fatal(err)
	}
	job, err := p.New(scoring.DefaultValues(p).Set("solve-component", "progress"), scoring.Env{Concurrency: workers})
	if err != nil {
		b.Fatal(err)
	}
	split := job.Decoder().(scoring.Splitter)
	start := cpuSeconds()
	defer func() {
		b.ReportMetric((cpuSeconds()-start)*1e3/float64(b.N), "cpu-ms/op")
	}()
	for b.Loop() {
		f, err := os.Open(name)
		if err != nil {
			b.Fatal(err)
		}
		c, err := split.Split(name, name, f, nil)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := decodeChunked(c, workers, size); err != nil {
			b.Fatal(err)
		}
		f.Close()
	}
}
