package readers

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
)

// Format is the encoding of an object's bytes, found from its first bytes.
type Format int

const (
	Plain Format = iota // uncompressed JSON Lines
	Gzip                // gzip (RFC 1952), one or more members
	Zstd                // Zstandard, one or more frames
)

func (f Format) String() string {
	switch f {
	case Plain:
		return "plain"
	case Gzip:
		return "gzip"
	case Zstd:
		return "zstd"
	}
	return fmt.Sprintf("Format(%d)", int(f))
}

var (
	gzipMagic = []byte{0x1f, 0x8b}
	zstdMagic = []byte{0x28, 0xb5, 0x2f, 0xfd}
)

// ZstdMaxWindow is the largest zstd window always accepted, whatever
// Options.MaxObjectBytes says: 256 MiB covers every level and --long up to
// 28.
const ZstdMaxWindow = 256 << 20

// ZstdLongWindow is the largest zstd window accepted at all: 2 GiB, what
// `zstd --long=31` writes (the largest window of the reference decoder on
// 64-bit machines). Between ZstdMaxWindow and it, a window is accepted up to
// Options.MaxObjectBytes: no frame needs a window longer than the object,
// and the decoder holds a buffer of the window's size.
const ZstdLongWindow = 2 << 30

// zstdWindow is the largest window accepted for an object of at most
// maxObject decompressed bytes.
func zstdWindow(maxObject int64) int64 {
	return max(ZstdMaxWindow, min(ZstdLongWindow, maxObject))
}

// Open sniffs the format of r from its magic bytes (gzip 1f 8b, zstd
// 28 b5 2f fd, anything else is plain), never from a name, and returns a
// reader of the decompressed bytes. The returned reader also implements
// io.Closer; Close releases the decompressor (it is released on its own
// when the stream ends or fails, so closing is needed only when stopping
// early).
//
// Open does not cap the output; DecodeObject applies Options.MaxObjectBytes.
// zstd windows are accepted up to ZstdLongWindow (DecodeObject: up to
// Options.MaxObjectBytes too). An error from Open is a DataError when the
// header is corrupt or asks for a longer window, and the underlying error
// (wrapped) when r itself failed.
func Open(r io.Reader) (io.Reader, Format, error) {
	return open(r, ZstdLongWindow)
}

// open is Open with zstd windows up to maxWindow.
func open(r io.Reader, maxWindow int64) (io.Reader, Format, error) {
	src := &sourceReader{r: r}
	br := readBufs.Get().(*bufio.Reader)
	br.Reset(src)
	head, err := br.Peek(4)
	if err != nil && err != io.EOF {
		if src.err != nil {
			return nil, Plain, fmt.Errorf("read: %w", src.err)
		}
		return nil, Plain, err
	}
	switch sniff(head) {
	case Gzip:
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, Gzip, decompressError(src, Gzip, err)
		}
		return &decompressor{src: src, br: br, r: zr, close: zr.Close, format: Gzip}, Gzip, nil
	case Zstd:
		// The first frame's window, to name it when it is too long.
		var window int64
		var h zstd.Header
		if hb, _ := br.Peek(zstd.HeaderMaxSize); h.Decode(hb) == nil {
			window = int64(h.WindowSize)
			if h.SingleSegment {
				window = int64(max(h.FrameContentSize, zstd.MinWindowSize))
			}
			if window > maxWindow {
				return nil, Zstd, windowError(window, maxWindow)
			}
		}
		zr, err := zstdDecoders.get(br, maxWindow)
		if err != nil {
			return nil, Zstd, decompressError(src, Zstd, err)
		}
		d := &decompressor{src: src, br: br, r: zr, format: Zstd, maxWindow: maxWindow}
		d.close = func() error { zstdDecoders.put(zr, maxWindow); return nil }
		return d, Zstd, nil
	}
	return &decompressor{src: src, br: br, r: br, close: func() error { return nil }, format: Plain}, Plain, nil
}

// sniff is the format of an object that starts with head.
func sniff(head []byte) Format {
	switch {
	case bytes.HasPrefix(head, gzipMagic):
		return Gzip
	case bytes.HasPrefix(head, zstdMagic):
		return Zstd
	}
	return Plain
}

// sourceReader remembers the first error of the underlying reader, so that a
// failing store (exit 3) is never mistaken for corrupt data (exit 1).
type sourceReader struct {
	r   io.Reader
	err error
}

func (s *sourceReader) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	if err != nil && err != io.EOF && s.err == nil {
		s.err = err
	}
	return n, err
}

// storageError marks an error of the underlying reader.
type storageError struct{ err error }

func (e *storageError) Error() string { return "read: " + e.err.Error() }
func (e *storageError) Unwrap() error { return e.err }

func decompressError(src *sourceReader, f Format, err error) error {
	if src.err != nil {
		return &storageError{src.err}
	}
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return &DataError{Msg: fmt.Sprintf("corrupt %s stream: %v", f, err), Err: err}
}

// windowError refuses a zstd frame whose window is longer than maxWindow
// (window is 0 when the frame's header was not seen).
func windowError(window, maxWindow int64) *DataError {
	size := "more than the"
	if window > 0 {
		size = fmt.Sprintf("%s, more than the", sizeText(window))
	}
	return &DataError{
		Msg: fmt.Sprintf("zstd frame needs a window of %s %s accepted (a window may be up to %s and up to --max-object-bytes; "+
			"compress with a shorter zstd --long, or raise --max-object-bytes)", size, sizeText(maxWindow), sizeText(ZstdLongWindow)),
		Err: ErrLimit,
	}
}

// sizeText renders a size in the largest binary unit that divides it
// (else in bytes), with the bytes after it: "512 MiB (536870912 bytes)".
func sizeText(n int64) string {
	for _, u := range []struct {
		name  string
		bytes int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n >= u.bytes && n%u.bytes == 0 {
			return fmt.Sprintf("%d %s (%d bytes)", n/u.bytes, u.name, n)
		}
	}
	return fmt.Sprintf("%d bytes", n)
}

// decompressor turns errors into storage errors or DataErrors (without URL
// and line, which DecodeObject adds) and closes the decompressor at the end.
type decompressor struct {
	src    *sourceReader
	br     *bufio.Reader // the buffered source, back to readBufs on Close
	r      io.Reader
	close  func() error
	closed bool
	format Format
	err    error
	// maxWindow is the longest zstd window accepted, for messages.
	maxWindow int64
}

func (d *decompressor) Read(p []byte) (int, error) {
	if d.err != nil {
		return 0, d.err
	}
	n, err := d.r.Read(p)
	if err != nil {
		if err == io.EOF && d.src.err == nil {
			d.err = io.EOF
		} else if d.src.err != nil {
			d.err = &storageError{d.src.err}
		} else if d.format == Plain {
			d.err = err
		} else if d.format == Zstd && (errors.Is(err, zstd.ErrWindowSizeExceeded) || errors.Is(err, zstd.ErrDecoderSizeExceeded)) {
			// A later frame asks for a longer window than the first.
			d.err = windowError(0, d.maxWindow)
		} else {
			d.err = decompressError(d.src, d.format, err)
		}
		d.Close()
	}
	if err != nil {
		return n, d.err
	}
	return n, nil
}

func (d *decompressor) Close() error {
	if d.closed {
		return nil
	}
	d.closed = true
	err := d.close()
	if d.err == nil {
		d.err = errClosed
	}
	d.br.Reset(nil)
	readBufs.Put(d.br)
	d.br = nil
	return err
}

// errClosed is what a decompressor reads after Close.
var errClosed = errors.New("readers: read after Close")

// readBufs holds the buffered readers of sources between objects: a sweep
// of 20,000 small objects allocated and zeroed 1.3 GB of them (issue 16).
var readBufs = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, 64<<10) }}

// zstdDecoders holds the zstd decoders of objects decoded before: each
// holds a window-sized history ring (8 MiB at zstd's default levels on
// large input), and a fresh one per object made a sweep of 20 zstd objects
// allocate and drop 20 of them, garbage that drove the heap (and the peak
// RSS) up by about as much again as the live rows (issue 16). The engine
// calls ReleaseDecoders once a job's objects are read, so that the idle
// decoders' windows are not held while the runs are scored.
var zstdDecoders = &decoderPool{}

// decoderPool hands out zstd decoders, each for one longest window. A
// decoder is synchronous (concurrency 1: no goroutine of its own), so an
// idle one is only memory. A list under a mutex, not a sync.Pool: the
// decoders left idle must be let go of at a known point (release), and a
// sync.Pool's values on other Ps are out of reach until two collections
// have passed (1 GB zstd sweeps peaked 12-18 MiB higher with them).
type decoderPool struct {
	mu   sync.Mutex
	idle []*pooledDecoder // at most as many as were ever in use at once
	// made counts the decoders created, for tests.
	made atomic.Int64
}

type pooledDecoder struct {
	d         *zstd.Decoder
	maxWindow int64
}

// get returns a decoder reading r with windows up to maxWindow: an idle
// one reset onto r, else a new one.
func (p *decoderPool) get(r io.Reader, maxWindow int64) (*zstd.Decoder, error) {
	p.mu.Lock()
	var pd *pooledDecoder
	for k := len(p.idle) - 1; k >= 0; k-- {
		if p.idle[k].maxWindow == maxWindow {
			pd = p.idle[k]
			p.idle = append(p.idle[:k], p.idle[k+1:]...)
			break
		}
	}
	p.mu.Unlock()
	if pd != nil {
		if err := pd.d.Reset(r); err != nil {
			pd.d.Close()
			return nil, err
		}
		return pd.d, nil
	}
	p.made.Add(1)
	return zstd.NewReader(r,
		zstd.WithDecoderConcurrency(1),
		zstd.WithDecoderLowmem(false),
		zstd.WithDecoderMaxWindow(uint64(maxWindow)))
}

// put takes back a decoder that get returned, done with its stream (at its
// end, failed or stopped early: Reset starts the next stream afresh).
func (p *decoderPool) put(d *zstd.Decoder, maxWindow int64) {
	if err := d.Reset(nil); err != nil { // drop the reference to the stream
		d.Close()
		return
	}
	p.mu.Lock()
	p.idle = append(p.idle, &pooledDecoder{d, maxWindow})
	p.mu.Unlock()
}

// release closes the idle decoders and forgets them, and returns how many
// there were.
func (p *decoderPool) release() int {
	p.mu.Lock()
	idle := p.idle
	p.idle = nil
	p.mu.Unlock()
	for _, pd := range idle {
		pd.d.Close()
	}
	return len(idle)
}

// ReleaseDecoders lets go of the zstd decoders that objects read so far
// left idle (their windows become garbage), and returns how many there
// were. The engine calls it when a job's objects are read; objects opened
// later get new decoders.
func ReleaseDecoders() int { return zstdDecoders.release() }

// limitReader fails with a DataError once more than max bytes were read.
type limitReader struct {
	r   io.Reader
	n   int64 // bytes still allowed
	max int64
}

func (l *limitReader) Read(p []byte) (int, error) {
	if l.n < 0 {
		return 0, l.err()
	}
	if int64(len(p)) > l.n+1 {
		p = p[:l.n+1]
	}
	n, err := l.r.Read(p)
	l.n -= int64(n)
	if l.n < 0 {
		return n + int(l.n), l.err()
	}
	return n, err
}

func (l *limitReader) err() error {
	return &DataError{
		Msg: fmt.Sprintf("object decompresses to more than %d bytes (the limit set by --max-object-bytes)", l.max),
		Err: ErrLimit,
	}
}
