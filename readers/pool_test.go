package readers

import (
	"bytes"
	"io"
	"runtime"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
)

// TestLineBuffersArePooled: reading a small object does not allocate a fresh
// 128 KiB line buffer and 64 KiB source buffer each time (issue 16: 20,000
// objects allocated and zeroed about 3.8 GB of them). Bytes, not time.
func TestLineBuffersArePooled(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector drops sync.Pool puts at random")
	}
	const objects = 200
	src := strings.Repeat(`{"a":1}`+"\n", 10)
	read := func() {
		obj := &ObjectInfo{URL: "mem://o"}
		if err := readLines(obj, strings.NewReader(src), 1<<20, 1<<20, nil, func([]byte, int) error { return nil }); err != nil {
			t.Fatal(err)
		}
	}
	read()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range objects {
		read()
	}
	runtime.ReadMemStats(&after)
	perObject := (after.TotalAlloc - before.TotalAlloc) / objects
	t.Logf("%d bytes allocated per object", perObject)
	if perObject > initialLineBuffer/4 {
		t.Errorf("reading a small object allocates %d bytes: its line and source buffers are not reused", perObject)
	}
}

// zstdWindowed compresses data as a stream with an 8 MiB window (the header
// names the window, as zstd's default levels write for large input).
func zstdWindowed(t *testing.T, data []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := zstd.NewWriter(&buf, zstd.WithWindowSize(8<<20), zstd.WithEncoderConcurrency(1))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestZstdDecodersArePooled: objects decoded one after another share one
// zstd decoder and its window-sized history, instead of allocating (and
// leaving as garbage) about 8 MiB each (issue 16: 20 zstd objects drove the
// heap well past the live rows). Bytes, not time.
func TestZstdDecodersArePooled(t *testing.T) {
	data := []byte(strings.Repeat(`{"run_id":"r","reward":0.125}`+"\n", 40000))
	z := zstdWindowed(t, data)
	read := func() {
		r, f, err := Open(bytes.NewReader(z))
		if err != nil || f != Zstd {
			t.Fatalf("Open: %v, %v", f, err)
		}
		got, err := io.ReadAll(r)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, data) {
			t.Fatal("decompressed bytes differ")
		}
		r.(io.Closer).Close()
	}
	read()
	made := zstdDecoders.made.Load()
	const objects = 20
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range objects {
		read()
	}
	runtime.ReadMemStats(&after)
	if n := zstdDecoders.made.Load() - made; n != 0 {
		t.Errorf("%d objects read one after another made %d new zstd decoders, want none", objects, n)
	}
	if raceEnabled {
		return // the race detector changes what allocates
	}
	// io.ReadAll's growing result is len(data)*~2 per object; the window
	// is 8 MiB on top when the decoder is not reused.
	perObject := (after.TotalAlloc - before.TotalAlloc) / objects
	t.Logf("%d bytes allocated per object of %d bytes", perObject, len(data))
	if perObject > uint64(3*len(data))+1<<20 {
		t.Errorf("reading a zstd object allocates %d bytes: its decoder's window is not reused", perObject)
	}
}

// TestZstdDecoderPoolAfterFailure: a decoder taken back after a corrupt
// stream, or after its reader was closed mid-stream, decodes the next
// object exactly, as do several read at once.
func TestZstdDecoderPoolAfterFailure(t *testing.T) {
	data := []byte(strings.Repeat(`{"run_id":"r","reward":0.5,"step":12}`+"\n", 30000))
	z := zstdWindowed(t, data)
	bad := append([]byte(nil), z...)
	for i := len(bad) / 2; i < len(bad)/2+64; i++ {
		bad[i] ^= 0x5a
	}
	for round := range 3 {
		// A corrupt stream fails...
		r, _, err := Open(bytes.NewReader(bad))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadAll(r); err == nil {
			t.Fatal("a corrupt zstd stream read without error")
		}
		// ...one is closed half-way...
		r, _, err = Open(bytes.NewReader(z))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(r, make([]byte, len(data)/3)); err != nil {
			t.Fatal(err)
		}
		r.(io.Closer).Close()
		// ...and the next reads exactly.
		r, _, err = Open(bytes.NewReader(z))
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(r)
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("round %d: after a failed and a closed stream: %d bytes, %v; want the %d bytes back", round, len(got), err, len(data))
		}
	}
	// Several at once, each read to its end: all decode exactly.
	var open []io.Reader
	for range 6 {
		r, _, err := Open(bytes.NewReader(z))
		if err != nil {
			t.Fatal(err)
		}
		open = append(open, r)
	}
	for i, r := range open {
		got, err := io.ReadAll(r)
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("stream %d of 6 at once: %d bytes, %v", i, len(got), err)
		}
	}
}

// TestReleaseDecoders: the decoders left idle once the objects are read
// are let go of when the engine says so (not held while the runs are
// scored), a decoder still reading is not touched, and a later object gets
// a new one.
func TestReleaseDecoders(t *testing.T) {
	data := []byte(strings.Repeat(`{"run_id":"r","reward":0.25}`+"\n", 20000))
	z := zstdWindowed(t, data)
	open := func() io.Reader {
		r, _, err := Open(bytes.NewReader(z))
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	readAll := func(r io.Reader) {
		got, err := io.ReadAll(r)
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("%d bytes, %v; want the %d bytes back", len(got), err, len(data))
		}
		r.(io.Closer).Close()
	}
	ReleaseDecoders()
	a, b := open(), open()
	readAll(a)
	readAll(b)
	busy := open() // reading while the others are released
	if _, err := io.ReadFull(busy, make([]byte, len(data)/3)); err != nil {
		t.Fatal(err)
	}
	if n := ReleaseDecoders(); n != 1 {
		t.Errorf("ReleaseDecoders let go of %d decoders, want the idle one (2 used, 1 taken again)", n)
	}
	rest, err := io.ReadAll(busy)
	if err != nil || !bytes.Equal(rest, data[len(data)/3:]) {
		t.Fatalf("a decoder in use when the idle ones were released: %d bytes, %v", len(rest), err)
	}
	busy.(io.Closer).Close()
	made := zstdDecoders.made.Load()
	readAll(open()) // busy's decoder, idle again
	if zstdDecoders.made.Load() != made {
		t.Error("the decoder put back after the release was not reused")
	}
	ReleaseDecoders()
	readAll(open())
	if zstdDecoders.made.Load() == made {
		t.Error("an object read after ReleaseDecoders reused a released decoder")
	}
}
