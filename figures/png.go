package figures

import (
	"bufio"
	"compress/zlib"
	"encoding/binary"
	"hash/crc32"
	"image"
	"image/png"
	"io"
	"sync"
)

// encodePNG writes img as an 8-bit RGB PNG whose every row is stored with
// the "Up" filter (each byte less the one above it), compressed by zlib at
// its fastest level. image/png tries the five filters on every row and
// keeps the best, which cost more than drawing a figure (issue 16: half of
// a small reward figure's PNG time); on these figures — flat areas, shades
// and lines — Up compresses about as well (reward figures within 1 %, the
// interval estimates 10 % larger: 9.5 KB against 8.7). The pixels
// are exactly img's (TestEncodePNGIsLossless decodes them back). An image
// that is not an opaque *image.RGBA goes to image/png.
func encodePNG(w io.Writer, img image.Image) error {
	m, ok := img.(*image.RGBA)
	if !ok || !m.Opaque() {
		return (&png.Encoder{CompressionLevel: png.BestSpeed}).Encode(w, img)
	}
	b := m.Bounds()
	width, height := b.Dx(), b.Dy()
	var err error
	chunk := func(typ string, data []byte) {
		if err != nil {
			return
		}
		var head [8]byte
		binary.BigEndian.PutUint32(head[:4], uint32(len(data)))
		copy(head[4:], typ)
		crc := crc32.NewIEEE()
		crc.Write(head[4:])
		crc.Write(data)
		var tail [4]byte
		binary.BigEndian.PutUint32(tail[:], crc.Sum32())
		for _, p := range [][]byte{head[:], data, tail[:]} {
			if _, err = w.Write(p); err != nil {
				return
			}
		}
	}
	if _, err = io.WriteString(w, "\x89PNG\r\n\x1a\n"); err != nil {
		return err
	}
	var ihdr [13]byte
	binary.BigEndian.PutUint32(ihdr[0:4], uint32(width))
	binary.BigEndian.PutUint32(ihdr[4:8], uint32(height))
	ihdr[8], ihdr[9] = 8, 2 // 8 bits per sample, truecolour; deflate, filters of method 0, no interlace
	chunk("IHDR", ihdr[:])
	var idat chunkWriter
	pw := pngWriters.Get().(*pngWriter)
	defer pngWriters.Put(pw)
	zw, bw := pw.zw, pw.bw
	zw.Reset(&idat)
	bw.Reset(zw)
	filteredRows(m, func(row []byte) { bw.Write(row) })
	if e := bw.Flush(); e != nil {
		return e
	}
	if e := zw.Close(); e != nil {
		return e
	}
	chunk("IDAT", idat)
	chunk("IEND", nil)
	return err
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

// pngWriter is the compressor of a PNG's image data and the buffer in
// front of it, kept for the next PNG (pngWriters): a zlib writer holds
// about 1.4 MB of state, allocated and cleared for every figure before.
// Reset makes it what NewWriterLevel made, so the bytes are the same.
type pngWriter struct {
	zw *zlib.Writer
	bw *bufio.Writer
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
