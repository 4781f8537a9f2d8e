package figures

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"hash/crc32"
	"image"
	"image/png"
	"io"
	"sync"
)

// encodePNG is img as an 8-bit RGB PNG whose every row is stored with
// the "Up" filter (each byte less the one above it), compressed by zlib at
// its fastest level. image/png tries the five filters on every row and
// keeps the best, which cost more than drawing a figure (issue 16: half of
// a small reward figure's PNG time); on these figures — flat areas, shades
// and lines — Up compresses about as well (reward figures within 1 %, the
// interval estimates 10 % larger: 9.5 KB against 8.7). The pixels
// are exactly img's (TestEncodePNGIsLossless decodes them back). An image
// that is not an opaque *image.RGBA goes to image/png.
//
// The image data is compressed into a buffer kept for the next PNG
// (pngWriter.idat), and the PNG is then put together in one slice of its
// exact size: no buffer grown by doubling per figure (the bytes are those
// the chunks were written with before: TestEncodePNGBytes).
func encodePNG(img image.Image) ([]byte, error) {
	m, ok := img.(*image.RGBA)
	if !ok || !m.Opaque() {
		var buf bytes.Buffer
		if err := (&png.Encoder{CompressionLevel: png.BestSpeed}).Encode(&buf, img); err != nil {
			return nil, err
		}
		return buf.Bytes(), nil
	}
	b := m.Bounds()
	width, height := b.Dx(), b.Dy()
	pw := pngWriters.Get().(*pngWriter)
	defer pngWriters.Put(pw)
	pw.idat = pw.idat[:0]
	zw, bw := pw.zw, pw.bw
	zw.Reset(&pw.idat)
	bw.Reset(zw)
	filteredRows(m, func(row []byte) { bw.Write(row) })
	if err := bw.Flush(); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	var ihdr [13]byte
	binary.BigEndian.PutUint32(ihdr[0:4], uint32(width))
	binary.BigEndian.PutUint32(ihdr[4:8], uint32(height))
	ihdr[8], ihdr[9] = 8, 2 // 8 bits per sample, truecolour; deflate, filters of method 0, no interlace
	const signature = "\x89PNG\r\n\x1a\n"
	out := make([]byte, 0, len(signature)+3*chunkOverhead+len(ihdr)+len(pw.idat))
	out = append(out, signature...)
	out = appendChunk(out, "IHDR", ihdr[:])
	out = appendChunk(out, "IDAT", pw.idat)
	out = appendChunk(out, "IEND", nil)
	return out, nil
}

// chunkOverhead is what a PNG chunk adds to its data: its length, type
// and CRC.
const chunkOverhead = 12

// appendChunk appends to dst the PNG chunk of type typ holding data.
func appendChunk(dst []byte, typ string, data []byte) []byte {
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(data)))
	at := len(dst)
	dst = append(dst, typ...)
	dst = append(dst, data...)
	return binary.BigEndian.AppendUint32(dst, crc32.ChecksumIEEE(dst[at:]))
}

// filteredRows hands each row of m, as the image data holds it (the
// filter type, Up, then the row's colours less those of the row above), to
// emit, one buffer reused: each straight from the pixels of its row and
// the one above (the first row less a row of zeros: its own colours).
func filteredRows(m *image.RGBA, emit func(row []byte)) {
	b := m.Bounds()
	width := b.Dx()
	row := make([]byte, 1+3*width)
	row[0] = 2 // Up
	var above []byte
	for y := b.Min.Y; y < b.Max.Y; y++ {
		o := m.PixOffset(b.Min.X, y)
		pix := m.Pix[o : o+4*width : o+4*width]
		upFilter(row[1:], pix, above)
		above = pix
		emit(row)
	}
}

// upFilter writes into out (3 bytes a pixel) the colours of the RGBA
// pixels pix less those of above, byte by byte modulo 256 (PNG's Up
// filter); above nil is a row of zeros. One pass, from the pixels, where
// encodePNG copied each row's colours out first and then subtracted the
// copies (2× the CPU: BenchmarkUpFilter).
func upFilter(out, pix, above []byte) {
	n := len(pix) / 4
	out = out[:3*n]
	if above == nil {
		for x := range n {
			s, d := pix[4*x:4*x+3:4*x+3], out[3*x:3*x+3:3*x+3]
			d[0], d[1], d[2] = s[0], s[1], s[2]
		}
		return
	}
	above = above[:4*n]
	for x := range n {
		s, a, d := pix[4*x:4*x+3:4*x+3], above[4*x:4*x+3:4*x+3], out[3*x:3*x+3:3*x+3]
		d[0], d[1], d[2] = s[0]-a[0], s[1]-a[1], s[2]-a[2]
	}
}

// pngWriter is the compressor of a PNG's image data, the buffer in front
// of it and the one it compresses into, kept for the next PNG
// (pngWriters): a zlib writer holds about 1.4 MB of state, allocated and
// cleared for every figure before.
// Reset makes it what NewWriterLevel made, so the bytes are the same.
type pngWriter struct {
	zw   *zlib.Writer
	bw   *bufio.Writer
	idat chunkWriter // the compressed image data of the last PNG
}

var pngWriters = sync.Pool{New: func() any {
	zw, err := zlib.NewWriterLevel(io.Discard, zlib.BestSpeed)
	if err != nil {
		panic(err) // BestSpeed is a valid level
	}
	return &pngWriter{zw: zw, bw: bufio.NewWriterSize(zw, 64<<10)}
}}

// chunkWriter collects the compressed image data of the IDAT chunk.
type chunkWriter []byte

func (c *chunkWriter) Write(p []byte) (int, error) {
	*c = append(*c, p...)
	return len(p), nil
}
