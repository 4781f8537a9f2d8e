package readers

import (
	"bytes"
	"fmt"
	"io"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
)

// The faults of issue 13 in reading streams: long zstd windows, long lines
// (finding 11).

// zstdFrame is one zstd frame holding data in one raw block, whose header
// asks for a window of 2^log bytes (no content size, so the window is what
// the decoder must provide).
func zstdFrame(log int, data []byte) []byte {
	b := append([]byte(nil), zstdMagic...)
	b = append(b, 0x00, byte(log-10)<<3) // no checksum, no single segment; window descriptor
	h := uint32(1 | len(data)<<3)        // last block, raw, its size
	b = append(b, byte(h), byte(h>>8), byte(h>>16))
	return append(b, data...)
}

// TestZstdLongWindow (issue 13, finding 11): frames written with
// `zstd --long=29` … `--long=31` (windows of 512 MiB to 2 GiB) were refused
// as a corrupt stream. They are read, up to 2 GiB and to --max-object-bytes;
// a frame asking for more is refused with a message naming its window and
// the limit.
func TestZstdLongWindow(t *testing.T) {
	rows := []byte(okRow + "\n" + okRow + "\n")

	// The encoder's own largest window (512 MiB), as `zstd --long=29`.
	var enc bytes.Buffer
	w, err := zstd.NewWriter(&enc, zstd.WithWindowSize(zstd.MaxWindowSize), zstd.WithSingleSegment(false))
	if err != nil {
		t.Fatal(err)
	}
	w.Write(bytes.Repeat(rows, 3000)) // more than one block: a small input gets a small window
	w.Close()
	var hd zstd.Header
	if err := hd.Decode(enc.Bytes()); err != nil || hd.WindowSize != 1<<29 {
		t.Fatalf("window %d, %v", hd.WindowSize, err)
	}
	type input struct {
		name string
		data []byte
		rows int
	}
	// (Each costs its window in memory while it is decoded: a 2 GiB frame
	// takes 2 GiB, so only the edges are tried.)
	inputs := []input{
		{"encoder 2^29", enc.Bytes(), 6000},
		{"raw 2^28", zstdFrame(28, rows), 2},
		{"raw 2^29", zstdFrame(29, rows), 2},
		{"raw 2^31", zstdFrame(31, rows), 2},
		// A second frame with a long window after a first with a short one.
		{"two frames", append(zstdFrame(20, rows), zstdFrame(31, rows)...), 4},
	}
	if strconv.IntSize == 32 {
		// Where int has 32 bits no slice holds 2 GiB, so no 2 GiB
		// window can be decoded: only the smaller ones are tried there.
		inputs = inputs[:3]
	}
	for _, in := range inputs {
		obj, err := DecodeObject(testURL, "x", bytes.NewReader(in.data), Options{})
		if err != nil {
			t.Errorf("%s: %v", in.name, err)
			continue
		}
		if obj.Rows != in.rows || obj.Format != Zstd {
			t.Errorf("%s: %d rows (%v), want %d", in.name, obj.Rows, obj.Format, in.rows)
		}
	}

	refused := []struct {
		name      string
		data      []byte
		maxObject int64
		msg       string
	}{
		{"2^32, past 2 GiB", zstdFrame(32, rows), 0,
			"zstd frame needs a window of 4 GiB (4294967296 bytes), more than the 2 GiB (2147483648 bytes) accepted"},
		{"2^29 under --max-object-bytes 300MiB", zstdFrame(29, rows), 300 << 20,
			"zstd frame needs a window of 512 MiB (536870912 bytes), more than the 300 MiB (314572800 bytes) accepted"},
		{"a later frame", append(zstdFrame(20, rows), zstdFrame(33, rows)...), 0,
			"zstd frame needs a window of more than the 2 GiB (2147483648 bytes) accepted"},
	}
	for _, c := range refused {
		obj, err := DecodeObject(testURL, "x", bytes.NewReader(c.data), Options{MaxObjectBytes: c.maxObject})
		if err == nil {
			t.Errorf("%s: accepted, %d rows", c.name, obj.Rows)
			continue
		}
		de := asDataError(t, err)
		if !strings.Contains(de.Msg, c.msg) || strings.Contains(de.Msg, "corrupt") {
			t.Errorf("%s: %v\nwant a message containing %q", c.name, err, c.msg)
		}
	}
	// Windows up to 256 MiB are read whatever --max-object-bytes says, as
	// before.
	if _, err := DecodeObject(testURL, "x", bytes.NewReader(zstdFrame(28, rows)), Options{MaxObjectBytes: 1 << 20}); err != nil {
		t.Error(err)
	}
}

// longLineObject is three rows, the second padded to n bytes by a per-step
// extra field.
func longLineObject(n int) []byte {
	head := `{"reward": 0.5, "regime_id": "a", "blob": "`
	tail := `"}`
	var b bytes.Buffer
	b.WriteString(`{"reward": 1, "regime_id": "a"}` + "\n" + head)
	b.Write(bytes.Repeat([]byte("x"), n-len(head)-len(tail)))
	b.WriteString(tail + "\n" + `{"reward": 0.25, "regime_id": "b"}` + "\n")
	return b.Bytes()
}

// allocated runs f and returns the bytes it allocated.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestLongLineMemory (issue 13, finding 11): a 200 MB line took 903 MB. A
// line is read into buffers that together hold about the line, then into
// one buffer of exactly its length; the reader keeps nothing of it
// afterwards, and a chunk takes the long line over instead of copying it.
func TestLongLineMemory(t *testing.T) {
	const n = 40 << 20
	data := longLineObject(n)

	// The line reader alone: what it allocates for one long line, and what
	// it holds afterwards.
	lr := newLineReader(bytes.NewReader(data), DefaultMaxLineBytes)
	var lines [][]byte
	got := allocated(func() {
		for {
			line, _, err := lr.next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			lines = append(lines, line[:min(len(line), 8)])
		}
	})
	if len(lines) != 3 {
		t.Fatalf("%d lines", len(lines))
	}
	// Off the heap, the blocks do not count: the line's own buffer does.
	heap := 2 * n
	if blocksOffHeap {
		heap = n
	}
	if limit := uint64(heap + 16<<20); got > limit {
		t.Errorf("reading a %d-byte line allocated %d bytes, want at most %d", n, got, limit)
	}
	if c := cap(lr.buf); c > 8<<20 {
		t.Errorf("the line reader holds %d bytes after the long line", c)
	}

	// DecodeObject, as the pipeline calls it on one core.
	got = allocated(func() {
		obj, err := DecodeObject(testURL, "x", bytes.NewReader(data), Options{})
		if err != nil || obj.Rows != 3 {
			t.Fatalf("%v rows, %v", obj, err)
		}
	})
	if limit := uint64(heap + 24<<20); got > limit {
		t.Errorf("DecodeObject allocated %d bytes for a %d-byte line, want at most %d", got, n, limit)
	}

	// In chunks: the chunk takes the line over, it is not copied again.
	got = allocated(func() {
		obj, err := decodeChunked(data, Options{}, DefaultChunkBytes, false)
		if err != nil || obj.Rows != 3 {
			t.Fatalf("%v rows, %v", obj, err)
		}
	})
	if limit := uint64(heap + 32<<20); got > limit {
		t.Errorf("chunked decoding allocated %d bytes for a %d-byte line, want at most %d", got, n, limit)
	}
}

// TestLongLineLimits: the line limit still holds, at the same line, with
// the long-line path (a line past the line buffer) as without it; every
// boundary of a long line is found.
func TestLongLineLimits(t *testing.T) {
	for _, n := range []int{maxLineBuffer - 1, maxLineBuffer, maxLineBuffer + 1, 3*maxLineBuffer + 7} {
		data := longLineObject(n)
		for _, max := range []int{n - 1, n, n + 1} {
			obj, err := DecodeObject(testURL, "x", bytes.NewReader(data), Options{MaxLineBytes: max})
			if max < n {
				if err == nil || asDataError(t, err).Line != 2 || !strings.Contains(err.Error(), "line longer than") {
					t.Errorf("line %d, limit %d: %v", n, max, err)
				}
				continue
			}
			if err != nil || obj.Rows != 3 || obj.Lines != 3 {
				t.Errorf("line %d, limit %d: %v %v", n, max, obj, err)
			}
		}
		// No final newline, CRLF, a BOM, one byte at a time.
		crlf := bytes.ReplaceAll(data, []byte("\n"), []byte("\r\n"))
		for name, d := range map[string][]byte{
			"no final newline": bytes.TrimSuffix(data, []byte("\n")),
			"long last line":   data[:bytes.LastIndex(data, []byte("\n{\"reward\": 0.25"))],
			"crlf":             crlf,
			"bom":              append(append([]byte(nil), bom...), data...),
		} {
			for _, r := range []io.Reader{bytes.NewReader(d), &shortReader{d, 4093}} {
				obj, err := DecodeObject(testURL, "x", r, Options{MaxLineBytes: n})
				if err != nil || obj.Rows != bytes.Count(d, []byte(`"reward"`)) {
					t.Errorf("line %d, %s: %v %v", n, name, obj, err)
				}
			}
		}
	}
}

// shortReader returns at most n bytes a read.
type shortReader struct {
	b []byte
	n int
}

func (r *shortReader) Read(p []byte) (int, error) {
	if len(r.b) == 0 {
		return 0, io.EOF
	}
	m := copy(p[:min(len(p), r.n)], r.b)
	r.b = r.b[m:]
	return m, nil
}

// TestLongLinesInChunks: chunks that take long lines over keep them intact
// while later lines are read (every chunk is read before any is decoded), and
// chunked decoding gives what DecodeObject gives, long labels included.
func TestLongLinesInChunks(t *testing.T) {
	var b bytes.Buffer
	b.WriteString(`{"reward": 1, "regime_id": "s"}` + "\n")
	for i, c := range []string{"a", "b", "c"} {
		fmt.Fprintf(&b, `{"reward": %d, "regime_id": "%s"}`+"\n", i, strings.Repeat(c, maxLineBuffer+i*maxLineBuffer/3))
	}
	b.WriteString(`{"reward": 1, "regime_id": "s"}` + "\n")
	data := b.Bytes()
	obj, err := DecodeObject(testURL, "x.jsonl", bytes.NewReader(data), Options{})
	if err != nil {
		t.Fatal(err)
	}
	want, err := Assemble([]*ObjectRuns{obj}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(want[0].LabelNames); n != 4 || want[0].LabelNames[3] != strings.Repeat("c", maxLineBuffer+2*maxLineBuffer/3) {
		t.Fatalf("%d labels", n)
	}
	for _, parallel := range []bool{false, true} {
		for _, size := range []int{1, 1 << 10, DefaultChunkBytes} {
			obj, err := decodeChunked(data, Options{}, size, parallel)
			if err != nil {
				t.Fatal(err)
			}
			got, err := Assemble([]*ObjectRuns{obj}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("parallel %v, size %d: the traces differ from DecodeObject's", parallel, size)
			}
		}
	}
	// The line limit fails the same line either way.
	_, err = DecodeObject(testURL, "x.jsonl", bytes.NewReader(data), Options{MaxLineBytes: maxLineBuffer + 100})
	_, cerr := decodeChunked(data, Options{MaxLineBytes: maxLineBuffer + 100}, 1<<10, true)
	if err == nil || cerr == nil || err.Error() != cerr.Error() || asDataError(t, err).Line != 3 {
		t.Errorf("DecodeObject: %v\nchunked:      %v", err, cerr)
	}
}

// TestLongValueNotCached: a value too long for the cache of repeated values
// (a long line's padding) is not copied into it; the cache keeps the value
// before it, gamma's number included, so a later row repeating that value
// decodes as a fresh decoder decodes it.
func TestLongValueNotCached(t *testing.T) {
	long := `0.25` + strings.Repeat("0", maxCachedValue)
	lines := []string{
		`{"reward":1,"regime_id":"a","gamma":0.5,"x":"a"}`,
		`{"reward":1,"regime_id":"a","gamma":` + long + `,"x":"` + strings.Repeat("b", maxCachedValue+1) + `"}`,
		`{"reward":1,"regime_id":"a","gamma":0.5,"x":"a"}`,
	}
	seq := newRowDecoder(nil)
	for i, line := range lines {
		fresh := newRowDecoder(nil)
		if err := seq.decode([]byte(line)); err != nil {
			t.Fatal(err)
		}
		if err := fresh.decode([]byte(line)); err != nil {
			t.Fatal(err)
		}
		if got, want := decodedRow(seq), decodedRow(fresh); !got.equal(want) {
			t.Fatalf("line %d: after the lines before %v, alone %v", i+1, got, want)
		}
	}
	if n := len(seq.top.keys[seq.gammaID].last); n > maxCachedValue {
		t.Errorf("a %d-byte value is cached", n)
	}
}
