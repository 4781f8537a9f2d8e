package readers

import (
	"bytes"
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
