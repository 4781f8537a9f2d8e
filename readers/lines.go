package readers

import (
	"bytes"
	"fmt"
	"io"
	"sync"
)

// initialLineBuffer is the line buffer's size, and so how much a read
// asks for: 256 KiB measured best (128 and 512 KiB cost 1-3 % more CPU on
// the 1 GB sweeps; docs/decisions.md).
const initialLineBuffer = 256 << 10

// lineBufs holds line buffers of the initial size between objects: a sweep
// of 20,000 small objects allocated and zeroed 2.5 GB of them (issue 16).
var lineBufs = sync.Pool{New: func() any { return new([initialLineBuffer]byte) }}

// maxLineBuffer is the largest the line buffer grows to. A longer line is
// read on into blocks of this size, then copied into a buffer of exactly its
// length that the reader lets go of with the next line (longLine): a line
// costs about twice its length while it is read, its length while it is
// decoded, and nothing once the next line is read; the buffer never grows
// past the longest line (issue 13: a 200 MB line held 768 MiB of doubled
// buffers, and a chunk copied it again).
const maxLineBuffer = 4 << 20

var bom = []byte{0xef, 0xbb, 0xbf}

// lineReader splits a stream into lines without a small length limit, up to
// max bytes (without the line end): its buffer grows to hold the longest
// line up to maxLineBuffer, and a longer line gets a buffer of its own. It
// strips a UTF-8 byte-order mark at the start of the stream and a '\r'
// before each '\n'. The returned line is valid until the next call, unless
// owned says it is in a buffer of its own, which the reader never touches
// again.
type lineReader struct {
	r     io.Reader
	buf   []byte
	start int // first unconsumed byte
	scan  int // bytes before scan hold no '\n'
	end   int // end of valid data
	eof   bool
	err   error // a read error held back until the lines before it are out
	max   int
	line  int  // number of the last line returned (1-based)
	first bool // the BOM check is pending
	// mapped: buf is the object's mapped bytes (MappedReader), not a
	// buffer of the reader's: never given back to lineBufs.
	mapped bool
	owned  bool // the last line returned is in a buffer of its own
}

func newLineReader(r io.Reader, max int) *lineReader {
	return &lineReader{r: r, max: max, first: true}
}

// next returns the next line and its 1-based number, io.EOF at the end, or
// the error of the underlying reader (a *DataError without URL when the line
// is too long).
func (lr *lineReader) next() ([]byte, int, error) {
	lr.owned = false
	for {
		if i := bytes.IndexByte(lr.buf[lr.scan:lr.end], '\n'); i >= 0 {
			nl := lr.scan + i
			line := lr.buf[lr.start:nl]
			lr.start, lr.scan = nl+1, nl+1
			return lr.finish(line)
		}
		lr.scan = lr.end
		slack := 1 // room for a '\r'
		if lr.first {
			slack += len(bom)
		}
		if lr.end-lr.start > lr.max+slack {
			lr.line++
			return nil, lr.line, lr.tooLong()
		}
		if lr.eof {
			if lr.start < lr.end {
				line := lr.buf[lr.start:lr.end]
				lr.start, lr.scan = lr.end, lr.end
				return lr.finish(line)
			}
			return nil, lr.line, io.EOF
		}
		if lr.err != nil {
			return nil, lr.line + 1, lr.err
		}
		if lr.start == 0 && lr.end == len(lr.buf) && len(lr.buf) >= maxLineBuffer {
			return lr.longLine(slack)
		}
		if err := lr.fill(); err != nil {
			return nil, lr.line + 1, err
		}
	}
}

// pending returns the bytes after the last line returned, for a row to be
// decoded in place (decodeInPlace) before next finds its line's end: at
// most max+1 of them, so that a line that ends within them is not too
// long, and none for the first line (its byte-order mark is pending). A
// row decoded so is taken with skip.
func (lr *lineReader) pending() []byte {
	if lr.first {
		return nil
	}
	data := lr.buf[lr.start:lr.end]
	if len(data) > lr.max { // (max+1 would overflow with no limit: max near maxInt)
		data = data[:lr.max+1]
	}
	return data
}

// skip takes the next line, of k bytes with its '\n', as returned
// (pending decoded it in place).
func (lr *lineReader) skip(k int) {
	lr.start += k
	lr.scan = max(lr.scan, lr.start)
	lr.line++
}

// block appends to dst the whole lines that next would return next, as
// the stream has them ('\r' and '\n' kept): those pending in the line
// buffer, then those read straight into dst, up to size bytes in all; it
// returns how many. What follows the last '\n' goes back to the line
// buffer, as does everything when no line ends within size bytes. It
// returns no lines, and reads nothing, when the lines must go through next
// one by one: the byte-order-mark check is pending, the stream ended or
// broke, dst has no room for size bytes, the pending bytes are more than
// size, or size is more than max, so that a line within them might
// be too long (a line shorter than size, and than maxLineBuffer, is not).
// A read error or the end of the stream is kept for next, as fill keeps it.
// The lines cost one copy, by the read, instead of the read's and a copy
// of each line out of the line buffer.
func (lr *lineReader) block(dst []byte, size int) ([]byte, int) {
	pending := lr.end - lr.start
	if lr.first || lr.eof || lr.err != nil || cap(dst)-len(dst) < size ||
		size > lr.max || size > maxLineBuffer || pending > size {
		return dst, 0
	}
	start := len(dst)
	dst = append(dst, lr.buf[lr.start:lr.end]...)
	lr.start, lr.scan, lr.end = 0, 0, 0
	limit := start + size
	n := bytes.Count(dst[start:], nl)
	for len(dst) < limit {
		// Read and count a piece at a time, while the piece is in the
		// cache (a chunk is larger than the core's cache).
		k, err := lr.r.Read(dst[len(dst):min(limit, len(dst)+initialLineBuffer)])
		n += bytes.Count(dst[len(dst):len(dst)+k], nl)
		dst = dst[:len(dst)+k]
		if err == io.EOF {
			lr.eof = true
			break
		}
		if err != nil {
			lr.err = err
			break
		}
	}
	lines := dst[start:]
	cut := bytes.LastIndexByte(lines, '\n') + 1
	lr.giveBack(lines[cut:])
	lr.line += n
	return dst[:start+cut], n
}

var nl = []byte{'\n'}

// cut returns the whole lines of the mapped bytes (lr.mapped) that next
// would return next and that end within size bytes, uncopied ('\r' and
// '\n' kept) and uncounted (lr.line is left as it was: the caller counts
// them), capped so that appending to them cannot write into the mapping.
// It returns nil under block's conditions: the byte-order-mark check is
// pending, or size is more than max or maxLineBuffer (a line within might
// be too long); or when no line ends within size bytes.
func (lr *lineReader) cut(size int) []byte {
	if lr.first || size > lr.max || size > maxLineBuffer {
		return nil
	}
	rest := lr.buf[lr.start:min(lr.end, lr.start+size)]
	k := bytes.LastIndexByte(rest, '\n') + 1
	if k == 0 {
		return nil
	}
	lr.start += k
	lr.scan = lr.start
	return rest[:k:k]
}

// giveBack makes rest, which holds no '\n', the line buffer's pending
// bytes (the buffer is empty), growing the buffer as fill would to hold it.
func (lr *lineReader) giveBack(rest []byte) {
	if len(rest) == 0 {
		return
	}
	if lr.buf == nil {
		lr.buf = lineBufs.Get().(*[initialLineBuffer]byte)[:]
	}
	if len(rest) > len(lr.buf) {
		size := len(lr.buf)
		for size < len(rest) {
			size *= 2
		}
		lr.putBuf()
		lr.buf = make([]byte, max(min(size, maxLineBuffer), len(rest)))
	}
	lr.start, lr.end = 0, copy(lr.buf, rest)
	lr.scan = lr.end
}

// longLine reads on a line that fills the line buffer at its largest size:
// into blocks of that size until its '\n', the end of the stream or an
// error, then copies it into a buffer of exactly its length (owned). The
// blocks are mapped outside the Go heap where the system allows
// (blocks_unix.go) and unmapped as soon as they are copied, so the line
// costs little more than its length even while it is put together; none of
// them outlives the call. What follows the line goes to the line buffer.
func (lr *lineReader) longLine(slack int) ([]byte, int, error) {
	var blocks [][]byte // the line's bytes after those in lr.buf
	defer func() {
		for _, b := range blocks {
			freeBlock(b)
		}
	}()
	n := lr.end // bytes of the line so far
	for {
		blk := allocBlock(len(lr.buf))
		blocks = append(blocks, blk)
		m, nl := 0, -1
		for m < len(blk) && nl < 0 && !lr.eof && lr.err == nil {
			k, err := lr.r.Read(blk[m:])
			if i := bytes.IndexByte(blk[m:m+k], '\n'); i >= 0 {
				nl = m + i
			}
			m += k
			if err == io.EOF {
				lr.eof = true
			} else if err != nil {
				// As in fill: a whole line is handed out first, the
				// error comes next.
				lr.err = err
			}
		}
		end := m // the line's bytes in blk
		if nl >= 0 {
			end = nl
		}
		if n+end > lr.max+slack {
			lr.line++
			return nil, lr.line, lr.tooLong()
		}
		if nl < 0 && !lr.eof {
			if lr.err != nil {
				return nil, lr.line + 1, lr.err
			}
			n += m // blk is full
			continue
		}
		line := make([]byte, n+end)
		off := copy(line, lr.buf[:lr.end])
		last := len(blocks) - 1
		for i, b := range blocks[:last] {
			off += copy(line[off:], b)
			freeBlock(b)
			blocks[i] = nil
		}
		copy(line[off:], blk[:end])
		rest := blk[m:m]
		if nl >= 0 {
			rest = blk[nl+1 : m]
		}
		lr.start, lr.scan, lr.end = 0, 0, copy(lr.buf, rest)
		lr.owned = true
		return lr.finish(line)
	}
}

func (lr *lineReader) finish(line []byte) ([]byte, int, error) {
	lr.line++
	if lr.first {
		lr.first = false
		line = bytes.TrimPrefix(line, bom)
	}
	if n := len(line); n > 0 && line[n-1] == '\r' {
		line = line[:n-1]
	}
	if len(line) > lr.max {
		return nil, lr.line, lr.tooLong()
	}
	return line, lr.line, nil
}

func (lr *lineReader) tooLong() error {
	return &DataError{
		Msg: fmt.Sprintf("line longer than %d bytes (the limit set by --max-line-bytes)", lr.max),
		Err: ErrLimit,
	}
}

// fill reads more data, first moving the pending line to the front of the
// buffer and growing the buffer when the pending line fills it.
func (lr *lineReader) fill() error {
	if lr.buf == nil {
		lr.buf = lineBufs.Get().(*[initialLineBuffer]byte)[:]
	}
	if lr.start > 0 {
		n := copy(lr.buf, lr.buf[lr.start:lr.end])
		lr.scan -= lr.start
		lr.end = n
		lr.start = 0
	}
	if lr.end == len(lr.buf) {
		size := min(2*len(lr.buf), maxLineBuffer)
		if limit := lr.max + 2 + len(bom); size > limit && limit > len(lr.buf) {
			size = limit
		}
		nb := make([]byte, size)
		copy(nb, lr.buf[:lr.end])
		lr.putBuf()
		lr.buf = nb
	}
	for {
		n, err := lr.r.Read(lr.buf[lr.end:])
		lr.end += n
		if err == io.EOF {
			lr.eof = true
			return nil
		}
		if err != nil {
			if n > 0 {
				// Hand out the complete lines read before the error first,
				// so that it is reported at the line it broke.
				lr.err = err
				return nil
			}
			return err
		}
		if n > 0 {
			return nil
		}
	}
}

// putBuf gives a buffer of the initial size back to lineBufs.
func (lr *lineReader) putBuf() {
	if !lr.mapped && len(lr.buf) == initialLineBuffer {
		lineBufs.Put((*[initialLineBuffer]byte)(lr.buf))
	}
	lr.buf = nil
}

// release gives the line buffer back once the object is done with; the last
// line returned is invalid from then on, and the reader returns no more.
func (lr *lineReader) release() {
	lr.putBuf()
	lr.start, lr.scan, lr.end, lr.eof = 0, 0, 0, true
}

// lineCloser closes the decompressor of an object and releases its line
// buffer.
type lineCloser struct {
	rc io.Closer
	lr *lineReader
}

func (c lineCloser) Close() error {
	err := c.rc.Close()
	c.lr.release()
	return err
}

// openLines opens an object (Open: the format sniffed from its first bytes)
// and returns its lines under the object and line limits, its format, and
// what to close: the decompressor, and the line buffer, which goes back to
// lineBufs (no line is valid after Close). A failure to open is located at line 1 of url.
func openLines(url string, r io.Reader, maxObject int64, maxLine int) (*lineReader, Format, io.Closer, error) {
	rd, format, err := open(r, zstdWindow(maxObject))
	if err != nil {
		return nil, format, nil, locate(err, url, 1)
	}
	lr := newLineReader(&limitReader{r: rd, n: maxObject, max: maxObject}, maxLine)
	return lr, format, lineCloser{rd.(io.Closer), lr}, nil
}

// MappedReader is a reader whose object's bytes are mapped into memory
// already (a local file in the page cache, storage.Mapped): the lines of a
// plain object are then read where they lie, without the copy a read
// makes (readLines).
type MappedReader interface {
	io.Reader
	// Mapped returns the object's bytes, when nothing of it has been read
	// and they are mapped, else nil (the object is read).
	Mapped() []byte
	// Consumed says that the first n bytes of Mapped's are done with
	// (read, as Read would have): called as the lines are decoded, every
	// mappedStep bytes or so, and at the end. An error stops the object
	// as a read's would; it is returned wrapped.
	Consumed(n int) error
	// Guard runs fn, which reads Mapped's bytes, and returns an error
	// instead of crashing when a page of them cannot be read (the file
	// was cut shorter while it was read).
	Guard(fn func()) error
	// Ahead says that the n bytes of Mapped's from off are read next (so
	// that their pages may be brought in at once): readLines says so of
	// each step before it decodes it.
	Ahead(off, n int)
}

// mappedStep is how many bytes of a mapped object are reported consumed
// at a time: the pages behind them are given back then, so that a worker
// holds about this much of its object, not all of it.
const mappedStep = 1 << 20

// readLines reads the object of obj (plain, gzip or zstd, under the object
// and line limits) and hands each line, blank ones included, with its
// 1-based number to fn, keeping obj.Format and obj.Lines up to date. An
// error of fn ends the object and is returned as it is. It does not close
// r. A plain object that r has mapped (MappedReader) is read there, with
// the same lines, limits and errors.
//
// With inPlace set, each line is first offered to inPlace, as the bytes
// from its start on (lineReader.pending) and its number: inPlace returns
// the line's length with its '\n' when it took the line, which fn then is
// not given, or 0 (and no error) when it did not.
func readLines(obj *ObjectInfo, r io.Reader, maxObject int64, maxLine int, inPlace func(data []byte, n int) (int, error), fn func(line []byte, n int) error) error {
	lr, mr, err := mappedLines(obj.URL, r, maxObject, maxLine)
	if err != nil {
		return err
	}
	if lr != nil {
		obj.Format = Plain
		if ferr := mr.Guard(func() { err = lineLoop(obj, lr, mr, inPlace, fn) }); ferr != nil {
			return locate(&storageError{ferr}, obj.URL, lr.line+1)
		}
		return err
	}
	lr, format, rc, err := openLines(obj.URL, r, maxObject, maxLine)
	if err != nil {
		return err
	}
	defer rc.Close()
	obj.Format = format
	return lineLoop(obj, lr, nil, inPlace, fn)
}

// mappedLines returns the lines of r's mapped bytes (lineReader.mapped),
// when r is a MappedReader that has them, they are plain and within
// maxObject; else no line reader (the object is read: openLines).
func mappedLines(url string, r io.Reader, maxObject int64, maxLine int) (*lineReader, MappedReader, error) {
	mr, ok := r.(MappedReader)
	if !ok {
		return nil, nil, nil
	}
	data := mr.Mapped()
	if len(data) == 0 || int64(len(data)) > maxObject {
		return nil, nil, nil
	}
	var format Format
	if err := mr.Guard(func() { format = sniff(data) }); err != nil {
		return nil, nil, locate(&storageError{err}, url, 1)
	}
	if format != Plain {
		return nil, nil, nil
	}
	return &lineReader{buf: data, end: len(data), eof: true, max: maxLine, first: true, mapped: true}, mr, nil
}

// lineLoop is readLines' loop over lr's lines; mr, when lr's buffer is its
// mapped bytes, is told of the bytes consumed.
func lineLoop(obj *ObjectInfo, lr *lineReader, mr MappedReader, inPlace func(data []byte, n int) (int, error), fn func(line []byte, n int) error) error {
	told := 0 // bytes mr was told of
	if mr != nil {
		mr.Ahead(0, mappedStep)
	}
	for {
		if mr != nil && lr.start-told >= mappedStep {
			if err := mr.Consumed(lr.start); err != nil {
				return locate(&storageError{err}, obj.URL, lr.line+1)
			}
			told = lr.start
			mr.Ahead(told, mappedStep)
		}
		if inPlace != nil {
			if data := lr.pending(); len(data) > 0 {
				if k, err := inPlace(data, lr.line+1); k > 0 {
					lr.skip(k)
					obj.Lines = lr.line
					if err != nil {
						return err
					}
					continue
				}
			}
		}
		line, n, err := lr.next()
		obj.Lines = lr.line
		if err == io.EOF {
			if mr != nil {
				if err := mr.Consumed(lr.end); err != nil {
					return locate(&storageError{err}, obj.URL, lr.line+1)
				}
			}
			return nil
		}
		if err != nil {
			return locate(err, obj.URL, n)
		}
		if err := fn(line, n); err != nil {
			return err
		}
	}
}

// isBlank reports whether a line holds only JSON whitespace.
func isBlank(line []byte) bool {
	for _, c := range line {
		if c != ' ' && c != '\t' && c != '\r' && c != '\n' {
			return false
		}
	}
	return true
}
