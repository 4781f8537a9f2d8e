package decodecand

// go test -run XXX -bench Candidates -cpu 1 (bench/decode_candidates.sh
// alternates the candidates round by round and prints the table).

import (
	"bytes"
	"os"
	"syscall"
	"testing"

	"github.com/crlbatch/crlbatch/protocol/skyfall"
	"github.com/crlbatch/crlbatch/readers"
	"github.com/minio/simdjson-go"
)

// comps are the components the sweeps' runs are scored on.
var comps = []string{"progress", "collision", "success"}

// blockSize is how much JSONL a simdjson candidate parses at a time: about
// what the line reader holds, cut after a newline.
const blockSize = 1 << 20

// input reads the JSONL file named by the environment variable env
// (bench/decode_candidates.sh sets CRLBATCH_CAND_REGULAR and
// CRLBATCH_CAND_IRREGULAR); the benchmark is skipped without it.
func input(b *testing.B, env string) []byte {
	name := os.Getenv(env)
	if name == "" {
		b.Skip(env + " is not set")
	}
	data, err := os.ReadFile(name)
	if err != nil {
		b.Fatal(err)
	}
	return data
}

// cpuMeter reports "cpuMB/s", the bytes decoded per second of the process's
// CPU time (the collector and every goroutine included: simdjson-go runs
// its second stage on a goroutine of its own), beside the wall clock's MB/s.
func cpuMeter(b *testing.B, n int) func() {
	b.SetBytes(int64(n))
	b.ReportAllocs()
	start := cpuTime()
	return func() {
		if d := cpuTime() - start; d > 0 {
			b.ReportMetric(float64(n)*float64(b.N)/d/1e6, "cpuMB/s")
		}
	}
}

func cpuTime() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

// blocks cuts data into pieces of about blockSize bytes, each ending with
// a newline (the last with the data).
func blocks(data []byte) [][]byte {
	var out [][]byte
	for len(data) > blockSize {
		i := bytes.LastIndexByte(data[:blockSize], '\n')
		if i < 0 {
			i = bytes.IndexByte(data, '\n')
			if i < 0 {
				break
			}
		}
		out = append(out, data[:i+1])
		data = data[i+1:]
	}
	return append(out, data)
}

func BenchmarkCandidates(b *testing.B) {
	for _, shape := range []struct{ name, env string }{
		{"regular", "CRLBATCH_CAND_REGULAR"},
		{"irregular", "CRLBATCH_CAND_IRREGULAR"},
	} {
		b.Run(shape.name, func(b *testing.B) {
			data := input(b, shape.env)
			rows := bytes.Count(data, []byte{'\n'})
			b.Run("decoder", func(b *testing.B) {
				// crlbatch's decoder: everything it does per object (line
				// splitting, full validation, rows into the runs' builders,
				// identities and metadata candidates).
				done := cpuMeter(b, len(data))
				defer done()
				opts := readers.Options{Components: comps}
				for b.Loop() {
					o, err := readers.DecodeObject("bench", "bench", bytes.NewReader(data), opts)
					if err != nil {
						b.Fatal(err)
					}
					if o.Rows != rows {
						b.Fatalf("%d rows, want %d", o.Rows, rows)
					}
				}
			})
			if !simdjson.SupportedCPU() {
				return
			}
			bl := blocks(data)
			b.Run("simdjson_tape", func(b *testing.B) {
				// simdjson-go's parse alone: the structure found with
				// AVX2/AVX-512, every value on its tape. Nothing is read
				// back from the tape: the least a simdjson path costs.
				done := cpuMeter(b, len(data))
				defer done()
				var pj *simdjson.ParsedJson
				var err error
				for b.Loop() {
					for _, blk := range bl {
						if pj, err = simdjson.ParseND(blk, pj, simdjson.WithCopyStrings(false)); err != nil {
							b.Fatal(err)
						}
					}
				}
			})
			b.Run("simdjson_rows", func(b *testing.B) {
				// The parse, then the tape read into the same rows and
				// builder: the schema fields converted, every other
				// top-level value read once. No check the tape cannot
				// make is made (repeated keys, lone surrogates, the
				// metadata candidates' raw bytes), so a real path would
				// cost more.
				done := cpuMeter(b, len(data))
				defer done()
				var pj *simdjson.ParsedJson
				var err error
				w := newTapeWalker()
				for b.Loop() {
					w.builder = skyfall.NewBuilder("bench", comps)
					n := 0
					for _, blk := range bl {
						if pj, err = simdjson.ParseND(blk, pj, simdjson.WithCopyStrings(false)); err != nil {
							b.Fatal(err)
						}
						if err := pj.ForEach(w.row); err != nil {
							b.Fatal(err)
						}
						n += w.rows
						w.rows = 0
					}
					if n != rows {
						b.Fatalf("%d rows, want %d", n, rows)
					}
				}
			})
			b.Run("simdjson_lines", func(b *testing.B) {
				// The parse line by line (Parse, whose buffers are
				// reused; ParseND's are not in v0.4.5) and the tape read
				// into the rows as simdjson_rows does.
				done := cpuMeter(b, len(data))
				defer done()
				var pj *simdjson.ParsedJson
				var err error
				w := newTapeWalker()
				for b.Loop() {
					w.builder = skyfall.NewBuilder("bench", comps)
					for line := range bytes.Lines(data) {
						if pj, err = simdjson.Parse(line, pj, simdjson.WithCopyStrings(false)); err != nil {
							b.Fatal(err)
						}
						if err := pj.ForEach(w.row); err != nil {
							b.Fatal(err)
						}
					}
					if w.rows != rows {
						b.Fatalf("%d rows, want %d", w.rows, rows)
					}
					w.rows = 0
				}
			})
			b.Run("stage1_swar", func(b *testing.B) {
				// A structural index of our own in pure Go: simdjson's
				// stage 1 (quotes, escapes, structural characters and
				// the starts of scalars, 64 bytes a block) with 8-byte
				// words for vectors. Only the index: no value is read.
				done := cpuMeter(b, len(data))
				defer done()
				var idx []uint32
				for b.Loop() {
					idx = structuralIndex(data, idx[:0])
				}
				if len(idx) < rows*4 {
					b.Fatalf("%d structurals for %d rows", len(idx), rows)
				}
			})
		})
	}
}
