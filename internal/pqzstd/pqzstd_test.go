package pqzstd

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/parquet/compress"
)

// inputs are pages of the shapes a Parquet writer compresses: empty, a few
// bytes, text, incompressible bytes, and pages past zstd's 128 KiB block
// (EncodeAll's multi-block path).
func inputs() map[string][]byte {
	r := rand.New(rand.NewPCG(1, 2))
	random := make([]byte, 40<<10)
	for i := range random {
		random[i] = byte(r.Uint32())
	}
	var text bytes.Buffer
	for i := 0; text.Len() < 200<<10; i++ {
		fmt.Fprintf(&text, "ppo/ppo-s%d.jsonl\x00%d\x00%.17g\n", i%7, i, float64(i)*0.1)
	}
	return map[string][]byte{
		"empty":  {},
		"byte":   {42},
		"short":  []byte("interval_return"),
		"text":   text.Bytes()[:5000],
		"random": random,
		"long":   text.Bytes(),
		"zeros":  make([]byte, 256<<10),
	}
}

// levels reach each of klauspost/zstd's four encoders (EncoderLevelFromZstd).
var levels = []int{compress.DefaultCompressionLevel, 1, 3, 7, 11}

func TestRegistered(t *testing.T) {
	c, err := compress.GetCodec(compress.Codecs.Zstd)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := c.(*codec); !ok {
		t.Fatalf("the zstd codec registered is %T, want *pqzstd.codec", c)
	}
}

// TestSameBytesAsArrow: every level, every input, each twice and in turn
// with the others (an encoder's earlier inputs must not show): the bytes of
// arrow-go's codec, and they decode to the input.
func TestSameBytesAsArrow(t *testing.T) {
	c, _ := compress.GetCodec(compress.Codecs.Zstd)
	in := inputs()
	want := map[string][]byte{}
	skip := func(level int, src []byte) bool {
		if raceEnabled {
			// The default level (crlbatch's) and the fastest, on four pages.
			return level > 1 || len(src) < 10 || len(src) > 250<<10
		}
		// The best level takes seconds on large pages.
		return level >= 10 && len(src) > 64<<10
	}
	for _, level := range levels {
		for name, src := range in {
			if !skip(level, src) {
				want[fmt.Sprint(level, name)] = arrowCodec.EncodeLevel(nil, src, level)
			}
		}
	}
	for round := range 2 {
		for _, level := range levels {
			for name, src := range in {
				if skip(level, src) {
					continue
				}
				want := want[fmt.Sprint(level, name)]
				got := c.EncodeLevel(nil, src, level)
				if !bytes.Equal(got, want) {
					t.Fatalf("round %d, level %d, %s: %d bytes, arrow-go's codec %d, not the same", round, level, name, len(got), len(want))
				}
				if round > 0 {
					continue
				}
				// Into a dst with room, as the page writer passes one.
				dst := make([]byte, 0, c.CompressBound(int64(len(src)+1)))
				if got := c.EncodeLevel(dst, src, level); !bytes.Equal(got, want) {
					t.Fatalf("level %d, %s into a dst with room: not arrow-go's bytes", level, name)
				}
				if back := c.Decode(nil, got); !bytes.Equal(back, src) {
					t.Fatalf("level %d, %s: does not decode to its input", level, name)
				}
			}
		}
	}
}

// TestConcurrent: pages compressed at once (run under -race) each get
// their own encoder and the same bytes as alone.
func TestConcurrent(t *testing.T) {
	c, _ := compress.GetCodec(compress.Codecs.Zstd)
	in := inputs()
	want := map[string][]byte{}
	for name, src := range in {
		want[name] = arrowCodec.EncodeLevel(nil, src, compress.DefaultCompressionLevel)
	}
	var wg sync.WaitGroup
	errs := make(chan string, 64)
	for g := range 8 {
		wg.Go(func() {
			for range 2 {
				for name, src := range in {
					if got := c.EncodeLevel(nil, src, compress.DefaultCompressionLevel); !bytes.Equal(got, want[name]) {
						errs <- fmt.Sprintf("goroutine %d, %s: not arrow-go's bytes", g, name)
						return
					}
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// TestEncodersOutliveCollections: once warm, compressing a page after a
// garbage collection builds no encoder (arrow-go's sync.Pool is emptied by
// the collection and its codec builds one, then a streaming state for it).
func TestEncodersOutliveCollections(t *testing.T) {
	c, _ := compress.GetCodec(compress.Codecs.Zstd)
	src := inputs()["text"]
	dst := make([]byte, 0, c.CompressBound(int64(len(src))))
	perPage := func(enc func()) uint64 {
		enc() // warm
		var before, after runtime.MemStats
		const rounds = 10
		runtime.ReadMemStats(&before)
		for range rounds {
			runtime.GC()
			enc()
		}
		runtime.ReadMemStats(&after)
		return (after.TotalAlloc - before.TotalAlloc) / rounds
	}
	ours := perPage(func() { c.EncodeLevel(dst, src, compress.DefaultCompressionLevel) })
	theirs := perPage(func() { arrowCodec.EncodeLevel(dst, src, compress.DefaultCompressionLevel) })
	t.Logf("bytes allocated per page after a collection: %d (arrow-go's codec: %d)", ours, theirs)
	if ours > 64<<10 {
		t.Errorf("%d bytes allocated per page after a collection, want at most 64 KiB (no new encoder)", ours)
	}
}
