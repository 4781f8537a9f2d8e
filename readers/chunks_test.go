package readers

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"testing"
	"testing/iotest"
	"weak"
)

// badLog records the bad rows an OnBadRow saw; with stopAt > 0 it fails on
// the stopAt-th.
type badLog struct {
	stopAt int
	rows   []string
}

func (l *badLog) hook() BadRowFunc {
	return func(de *DataError) error {
		l.rows = append(l.rows, fmt.Sprintf("%d: %v", de.Line, de))
		if l.stopAt > 0 && len(l.rows) == l.stopAt {
			return fmt.Errorf("stopped at bad row %d (line %d)", len(l.rows), de.Line)
		}
		return nil
	}
}

// decodeChunked decodes data through SplitObject in chunks of size bytes.
// Each chunk is merged as soon as it is read and decoded, or, with
// parallel, once all are read, decoded on their own goroutines (at most
// four at once) and merged in order, as the pipeline does.
func decodeChunked(data []byte, opts Options, size int, parallel bool) (*ObjectRuns, error) {
	return decodeChunkedFrom(bytes.NewReader(data), opts, size, parallel)
}

// decodeChunkedFrom is decodeChunked reading from r.
func decodeChunkedFrom(r io.Reader, opts Options, size int, parallel bool) (*ObjectRuns, error) {
	c, err := SplitObject(testURL, "x.jsonl", r, opts)
	if err != nil {
		return nil, err
	}
	return mergeChunks(c, size, parallel)
}

// mergeChunks reads c in chunks of size bytes, decodes and merges them (as
// decodeChunked says), and closes c.
func mergeChunks(c *Chunks, size int, parallel bool) (*ObjectRuns, error) {
	defer c.Close()
	var chunks []*Chunk
	for {
		ch, err := c.Next(size)
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		if !parallel {
			if err := c.Merge(DecodeChunk(ch)); err != nil {
				return nil, err
			}
			continue
		}
		chunks = append(chunks, ch)
	}
	results := make([]*ChunkRuns, len(chunks))
	sem := make(chan struct{}, 4)
	var wg sync.WaitGroup
	for i, ch := range chunks {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			results[i] = DecodeChunk(ch)
			<-sem
		}()
	}
	wg.Wait()
	for _, cr := range results {
		if err := c.Merge(cr); err != nil {
			return nil, err
		}
	}
	return c.Object()
}

// sameObject fails unless got is exactly want: counts, runs in order, their
// headers, rows, metadata and label origins.
func sameObject(t *testing.T, got, want *ObjectRuns) {
	t.Helper()
	if got.URL != want.URL || got.Key != want.Key || got.Format != want.Format ||
		got.Lines != want.Lines || got.Rows != want.Rows || got.Skipped != want.Skipped {
		t.Fatalf("object %q %q %v lines %d rows %d skipped %d, want %q %q %v %d %d %d",
			got.URL, got.Key, got.Format, got.Lines, got.Rows, got.Skipped,
			want.URL, want.Key, want.Format, want.Lines, want.Rows, want.Skipped)
	}
	if len(got.parts) != len(want.parts) {
		t.Fatalf("%d runs %q, want %d %q", len(got.parts), got.RunKeys(), len(want.parts), want.RunKeys())
	}
	for i, g := range got.parts {
		w := want.parts[i]
		if !reflect.DeepEqual(g.header(), w.header()) {
			t.Fatalf("run %d: header %+v, want %+v", i, g.header(), w.header())
		}
		if gt, wt := g.b.Trace(nil), w.b.Trace(nil); !reflect.DeepEqual(gt, wt) {
			t.Fatalf("run %s: trace\n%+v\nwant\n%+v", w.runKey, gt, wt)
		}
		if gm, wm := g.b.MemBytes(), w.b.MemBytes(); gm != wm {
			t.Fatalf("run %s: builder holds %d bytes, want %d", w.runKey, gm, wm)
		}
		if gm, wm := g.meta(), w.meta(); !maps.Equal(gm, wm) {
			t.Fatalf("run %s: metadata %v, want %v", w.runKey, gm, wm)
		}
		if !maps.Equal(g.origins, w.origins) {
			t.Fatalf("run %s: origins %v, want %v", w.runKey, g.origins, w.origins)
		}
	}
}

// decoded is what one way of decoding an object gave: the object or the
// error, and the bad rows its OnBadRow saw.
type decoded struct {
	obj *ObjectRuns
	err error
	bad []string
}

// decodeLogged decodes with decode under opts and a bad-row policy: with
// badMode > 0 the bad rows are logged (and the stopAt-th fails, when
// stopAt > 0).
func decodeLogged(opts Options, badMode, stopAt int, decode func(Options) (*ObjectRuns, error)) decoded {
	log := &badLog{stopAt: stopAt}
	if badMode > 0 {
		opts.OnBadRow = log.hook()
	}
	obj, err := decode(opts)
	return decoded{obj, err, log.rows}
}

// sameDecoding fails unless got (what says how it was decoded) is want: the
// same error (its text, and ErrLimit or not) after the same bad rows, or
// the same object.
func sameDecoding(t *testing.T, what string, got, want decoded) {
	t.Helper()
	if (got.err == nil) != (want.err == nil) || got.err != nil && got.err.Error() != want.err.Error() {
		t.Fatalf("%s: error %v, want %v", what, got.err, want.err)
	}
	if got.err != nil && errors.Is(got.err, ErrLimit) != errors.Is(want.err, ErrLimit) {
		t.Fatalf("%s: error %v: ErrLimit differs", what, got.err)
	}
	if !reflect.DeepEqual(got.bad, want.bad) {
		t.Fatalf("%s: bad rows\n%q\nwant\n%q", what, got.bad, want.bad)
	}
	if want.err == nil {
		sameObject(t, got.obj, want.obj)
	}
}

// checkChunked decodes data whole and in chunks of size bytes, each from a
// reader and from mapped bytes, under the same options and bad-row policy,
// and requires the same object, or the same error after the same bad rows.
func checkChunked(t *testing.T, data []byte, opts Options, size int, badMode, stopAt int, parallel bool) {
	t.Helper()
	want := decodeLogged(opts, badMode, stopAt, func(o Options) (*ObjectRuns, error) {
		return DecodeObject(testURL, "x.jsonl", bytes.NewReader(data), o)
	})
	got := decodeLogged(opts, badMode, stopAt, func(o Options) (*ObjectRuns, error) {
		return decodeChunked(data, o, size, parallel)
	})
	sameDecoding(t, fmt.Sprintf("chunks of %d bytes", size), got, want)
	var mb *mappedBytes
	got = decodeLogged(opts, badMode, stopAt, func(o Options) (*ObjectRuns, error) {
		mb = &mappedBytes{data: data}
		return decodeChunkedFrom(mb, o, size, parallel)
	})
	sameDecoding(t, fmt.Sprintf("chunks of %d mapped bytes", size), got, want)
	mb.check(t, got.err == nil)
	got = decodeLogged(opts, badMode, stopAt, func(o Options) (*ObjectRuns, error) {
		mb = &mappedBytes{data: data}
		return DecodeObject(testURL, "x.jsonl", mb, o)
	})
	sameDecoding(t, "whole, mapped", got, want)
	mb.check(t, got.err == nil)
}

// chunkInput joins the objects of a random sweep into one object: runs
// interleave, labels and metadata change between chunks, and the byte-order
// marks of the later objects become bad rows.
func chunkInput(seed uint64) []byte {
	var b strings.Builder
	for k := range uint64(3) {
		for _, o := range genObjects(seed*3 + k) {
			b.WriteString(o.data)
		}
	}
	return []byte(b.String())
}

func TestChunksMatchDecodeObject(t *testing.T) {
	for seed := range uint64(60) {
		data := chunkInput(seed)
		for _, size := range []int{1, 7, 64, 300, 2000, 1 << 20} {
			for badMode := range 3 {
				stopAt := 0
				if badMode == 2 {
					stopAt = 2
				}
				for _, lim := range []Options{{}, {MaxRuns: 2}, {MaxLabels: 1}, {MaxRuns: 3, MaxLabels: 2}} {
					opts := lim
					opts.Components = []string{"progress"}
					checkChunked(t, data, opts, size, badMode, stopAt, seed%2 == 0)
				}
			}
		}
	}
}

// The stream's own errors (a line too long, a corrupt compressed stream,
// an object too large) end the object at the same line as DecodeObject,
// after the bad rows before them.
func TestChunksStreamErrors(t *testing.T) {
	rows := `{"run_id":"a","reward":1,"regime_id":"x"}` + "\n" +
		`{"run_id":"a","reward":oops,"regime_id":"x"}` + "\n" +
		`{"run_id":"b","reward":2,"regime_id":"y"}` + "\n"
	long := rows + `{"run_id":"a","reward":1,"regime_id":"` + strings.Repeat("z", 200) + `"}` + "\n" + rows
	zs := zst(t, []byte(long))
	cases := []struct {
		name string
		data []byte
		opts Options
	}{
		{"line too long", []byte(long), Options{MaxLineBytes: 100}},
		{"object too large", []byte(long), Options{MaxObjectBytes: 150}},
		{"truncated zstd", zs[:len(zs)-3], Options{}},
		{"gzip", gz(t, []byte(long)), Options{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, size := range []int{1, 50, 1 << 20} {
				for badMode := range 2 {
					checkChunked(t, tc.data, tc.opts, size, badMode, 0, true)
				}
			}
		})
	}
}

// The stream's bytes, in reads of any length, with '\r\n' line ends (a
// '\r' before one is not part of the line, one before that is) and the
// end of the stream coming with the last bytes or after them: chunks cut
// from the stream's bytes give exactly what DecodeObject gives.
func TestChunksShortReads(t *testing.T) {
	wraps := map[string]func(io.Reader) io.Reader{
		"whole":     func(r io.Reader) io.Reader { return r },
		"half":      iotest.HalfReader,
		"one byte":  iotest.OneByteReader,
		"data+EOF":  iotest.DataErrReader,
		"half+EOF":  func(r io.Reader) io.Reader { return iotest.DataErrReader(iotest.HalfReader(r)) },
		"1 in 7 KB": func(r io.Reader) io.Reader { return &choppyReader{r: r, n: 7 << 10} },
	}
	for seed := range uint64(4) {
		data := chunkInput(seed)
		crlf := bytes.ReplaceAll(data, []byte("\n"), []byte("\r\n"))
		crcrlf := bytes.ReplaceAll(data, []byte("\n"), []byte("\r\r\n"))
		noEnd := bytes.TrimSuffix(data, []byte("\n"))
		for name, in := range map[string][]byte{"lf": data, "crlf": crlf, "crcrlf": crcrlf, "no end": noEnd} {
			for wname, wrap := range wraps {
				for _, size := range []int{64, 300, 2000, 1 << 20} {
					want, werr := DecodeObject(testURL, "x.jsonl", wrap(bytes.NewReader(in)), Options{Components: []string{"progress"}})
					got, gerr := decodeChunkedFrom(wrap(bytes.NewReader(in)), Options{Components: []string{"progress"}}, size, seed%2 == 0)
					if (gerr == nil) != (werr == nil) || gerr != nil && gerr.Error() != werr.Error() {
						t.Fatalf("seed %d %s %s size %d: error %v, want %v", seed, name, wname, size, gerr, werr)
					}
					if werr == nil {
						sameObject(t, got, want)
					}
				}
			}
		}
	}
}

// choppyReader returns at most n bytes a read.
type choppyReader struct {
	r io.Reader
	n int
}

func (c *choppyReader) Read(p []byte) (int, error) {
	return c.r.Read(p[:min(len(p), c.n)])
}

// Past the first chunk (whose first line goes through the byte-order-mark
// check), a chunk is cut from the stream's bytes as they are read: its
// lines are not copied one by one (no line ends listed), and counted as
// they are read; Merge numbers them on from the chunks before.
func TestChunksCutFromTheStream(t *testing.T) {
	var data []byte
	for i := range 20000 {
		data = fmt.Appendf(data, `{"run_id":"r%d","step":%d,"reward":%d,"regime_id":"a"}`+"\n", i%2, i, i%5)
	}
	c, err := SplitObject(testURL, "x.jsonl", iotest.HalfReader(bytes.NewReader(data)), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	lines, chunks := 0, 0
	for {
		ch, err := c.Next(128 << 10)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if chunks > 0 && (len(ch.ends) > 0 || ch.rawLines == 0) {
			t.Fatalf("chunk %d: %d lines cut from the stream, %d copied one by one", chunks, ch.rawLines, len(ch.ends))
		}
		if n := ch.rawLines + len(ch.ends); ch.lines != n {
			t.Fatalf("chunk %d holds %d lines, counted %d", chunks, n, ch.lines)
		}
		lines += ch.lines
		chunks++
		if err := c.Merge(DecodeChunk(ch)); err != nil {
			t.Fatal(err)
		}
	}
	obj, err := c.Object()
	if err != nil {
		t.Fatal(err)
	}
	if lines != 20000 || obj.Lines != 20000 || obj.Rows != 20000 || chunks < 5 {
		t.Errorf("%d lines (object: %d), %d rows in %d chunks", lines, obj.Lines, obj.Rows, chunks)
	}
}

// FuzzDecodeChunked: decoding in chunks of any size, under any limits and
// bad-row policy, and decoding from mapped bytes, whole or in chunks, give
// exactly what DecodeObject gives.
func FuzzDecodeChunked(f *testing.F) {
	for s := range uint64(16) {
		f.Add(chunkInput(s), uint16(s*13), uint8(s), uint8(s>>1))
	}
	f.Add([]byte("\ufeff{\"reward\":1,\"regime_id\":\"a\"}\r\n\n{\"reward\":2,\"regime_id\":\"b\"}"), uint16(1), uint8(0), uint8(0))
	f.Fuzz(func(t *testing.T, data []byte, size uint16, limits, bad uint8) {
		opts := Options{Components: []string{"progress"}, MaxRuns: int(limits & 3), MaxLabels: int(limits >> 2 & 3)}
		checkChunked(t, data, opts, 1+int(size%512), int(bad%3), int(bad>>2&3), bad&16 != 0)
	})
}

// An error of the underlying reader comes out of Merge as DecodeObject
// returns it: wrapped, at the line it broke, after the lines before it.
func TestChunksReaderError(t *testing.T) {
	var b strings.Builder
	for i := range 200 {
		fmt.Fprintf(&b, `{"run_id":"r%d","reward":%d,"regime_id":"x"}`+"\n", i%3, i)
	}
	data := []byte(b.String())
	broken := errors.New("connection reset")
	for _, cut := range []int{0, 17, len(data) / 2, len(data) - 5} {
		open := func() io.Reader { return io.MultiReader(bytes.NewReader(data[:cut]), iotest.ErrReader(broken)) }
		_, werr := DecodeObject(testURL, "x.jsonl", open(), Options{})
		c, err := SplitObject(testURL, "x.jsonl", open(), Options{})
		if err == nil {
			for {
				ch, nerr := c.Next(64)
				if nerr == io.EOF {
					_, err = c.Object()
					break
				}
				if err = c.Merge(DecodeChunk(ch)); err != nil {
					break
				}
			}
			c.Close()
		}
		if werr == nil || err == nil || err.Error() != werr.Error() || !errors.Is(err, broken) || !errors.Is(werr, broken) {
			t.Errorf("cut at %d: chunks %v, whole %v", cut, err, werr)
		}
	}
}

// Blank lines fill chunks as their line ends count, so a run of them is
// cut like any other lines; a size below one line still reads a line.
func TestChunksBlankLines(t *testing.T) {
	data := []byte(strings.Repeat("\n", 10_000) + `{"reward":1,"regime_id":"a"}` + "\n" + strings.Repeat(" \r\n", 500))
	for _, size := range []int{0, 1, 64} {
		c, err := SplitObject(testURL, "x.jsonl", bytes.NewReader(data), Options{})
		if err != nil {
			t.Fatal(err)
		}
		chunks := 0
		for {
			ch, err := c.Next(size)
			if err == io.EOF {
				break
			}
			if n := ch.rawLines + len(ch.ends); n > max(size, 1) {
				t.Fatalf("size %d: a chunk of %d lines", size, n)
			}
			chunks++
			if err := c.Merge(DecodeChunk(ch)); err != nil {
				t.Fatal(err)
			}
		}
		obj, err := c.Object()
		if err != nil {
			t.Fatal(err)
		}
		if obj.Lines != 10_501 || obj.Rows != 1 || chunks < 10_501/max(size, 1) {
			t.Errorf("size %d: %d lines, %d rows in %d chunks", size, obj.Lines, obj.Rows, chunks)
		}
		c.Close()
	}
}

// TestChunksCloseDropsBuffers: once an object decoded in chunks is closed,
// the line buffers and chunk builders kept for chunks to come go at the
// next collection, not two later (a sync.Pool's way): a one-object sweep
// held 9.6 MiB of them while its runs were scored (issue 16).
func TestChunksCloseDropsBuffers(t *testing.T) {
	var data []byte
	for r := range 3 {
		for s := range 400 {
			data = fmt.Appendf(data, `{"run_id":"r%d","step":%d,"reward":%d.5,"regime_id":"a"}`+"\n", r, s, s%7)
		}
	}
	c, err := SplitObject(testURL, "x.jsonl", bytes.NewReader(data), Options{})
	if err != nil {
		t.Fatal(err)
	}
	for {
		ch, err := c.Next(2048)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Merge(DecodeChunk(ch)); err != nil {
			t.Fatal(err)
		}
	}
	obj, err := c.Object()
	if err != nil {
		t.Fatal(err)
	}
	if obj.Rows != 1200 {
		t.Fatalf("%d rows, want 1200", obj.Rows)
	}
	buf, ok := c.bufs.get()
	if !ok {
		t.Fatal("no line buffer kept for a next chunk")
	}
	c.bufs.put(buf)
	b, ok := c.builders.get()
	if !ok {
		t.Fatal("no chunk builder kept for a next chunk")
	}
	c.builders.put(b)
	wbuf, wb := weak.Make(buf), weak.Make(b)
	buf, b = nil, nil
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	if wbuf.Value() != nil {
		t.Error("a chunk's line buffer outlived Close and a collection")
	}
	if wb.Value() != nil {
		t.Error("a chunk's builder outlived Close and a collection")
	}
	runtime.KeepAlive(c)
}

// The objects of the repository's corpus of bad and odd inputs
// (testdata/corpus: truncated and corrupt streams, byte-order marks, CRLF
// line ends, invalid UTF-8, bad rows of every kind) decoded in chunks of
// several sizes give DecodeObject's object, or its error at the same line,
// after the same bad rows.
func TestChunksMatchDecodeObjectOnCorpus(t *testing.T) {
	for _, o := range corpusObjects(t) {
		t.Run(o.name, func(t *testing.T) {
			for _, size := range []int{1, 64, 300, 4096, 1 << 20} {
				for badMode := range 2 {
					checkChunked(t, o.data, Options{Components: []string{"progress"}}, size, badMode, 0, true)
				}
			}
		})
	}
}

// A plain object's chunk buffers of the default size come out of slabs of
// chunkSlabBufs buffers (newBuf), each capped at its own length: with every
// chunk read before any is decoded (two slabs and more in use at once), a
// bad row, a CRLF line, a line longer than a chunk and lines cut from the
// stream give DecodeObject's object and bad rows; a compressed object's
// buffers are made one by one; Close lets go of the slab.
func TestChunksPlainSlabs(t *testing.T) {
	var data []byte
	for i := 0; len(data) < 13*DefaultChunkBytes; i++ {
		switch {
		case i == 5000:
			data = append(data, "{\"run_id\":\"r1\",\"reward\":\n"...) // a bad row
		case i == 9000:
			data = fmt.Appendf(data, `{"run_id":"r2","step":%d,"reward":1,"regime_id":"b","note":"%s"}`+"\n", i, strings.Repeat("x", 3*DefaultChunkBytes))
		case i%7 == 0:
			data = fmt.Appendf(data, `{"run_id":"r%d","step":%d,"reward":%d.25,"regime_id":"a"}`+"\r\n", i%3, i, i%11)
		default:
			data = fmt.Appendf(data, `{"run_id":"r%d","step":%d,"reward":%d,"regime_id":"a","components":{"progress":%d}}`+"\n", i%3, i, i%5, i%4)
		}
	}
	opts := Options{Components: []string{"progress"}}
	for _, parallel := range []bool{false, true} {
		checkChunked(t, data, opts, DefaultChunkBytes, 1, 0, parallel)
		checkChunked(t, data, opts, DefaultChunkBytes, 1, 2, parallel)
	}

	n := DefaultChunkBytes + DefaultChunkBytes/8
	for _, tc := range []struct {
		name   string
		data   []byte
		slabby bool
	}{{"plain", data, true}, {"zstd", zst(t, data), false}} {
		c, err := SplitObject(testURL, "x.jsonl", bytes.NewReader(tc.data), opts)
		if err != nil {
			t.Fatal(err)
		}
		var chunks []*Chunk
		for {
			ch, err := c.Next(DefaultChunkBytes)
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			chunks = append(chunks, ch)
		}
		if len(chunks) < 2*chunkSlabBufs {
			t.Fatalf("%s: %d chunks, want at least %d", tc.name, len(chunks), 2*chunkSlabBufs)
		}
		if (c.slab != nil) != tc.slabby {
			t.Errorf("%s: slab %d bytes left", tc.name, len(c.slab))
		}
		for i, ch := range chunks[1:] { // the first chunk is read line by line
			if ch.rawLines > 0 && cap(ch.data) != n {
				t.Errorf("%s: chunk %d: buffer of capacity %d, want %d", tc.name, i+1, cap(ch.data), n)
			}
		}
		for _, ch := range chunks {
			if err := c.Merge(DecodeChunk(ch)); err != nil && !strings.Contains(err.Error(), "line 5001") {
				t.Fatalf("%s: %v", tc.name, err)
			} else if err != nil {
				break
			}
		}
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
		if c.slab != nil {
			t.Errorf("%s: slab kept after Close", tc.name)
		}
	}
}
