package figures

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"image"
	"image/png"
	"io"
	"sync"

	"github.com/klauspost/compress/zlib"
)

// encodePNG is img as an 8-bit RGB PNG whose every row is stored with
// the "Up" filter (each byte less the one above it), compressed by
// klauspost/compress's zlib at its fastest level. image/png tries the five
// filters on every row and keeps the best, which cost more than drawing a
// figure (issue 16: half of a small reward figure's PNG time); on these
// figures — flat areas, shades and lines — Up compresses about as well
// (reward figures within 1 %, the interval estimates 10 % larger: 9.5 KB
// against 8.7). The standard library's zlib at its fastest level took
// 2.2× as long as klauspost's for streams ~2 % smaller (docs/decisions.md,
// "PNG figures deflated by klauspost/compress"); klauspost's flate is pure
// Go, so the bytes are the same on every machine. The pixels are exactly
// img's (TestEncodePNGIsLossless decodes them back). An image that is not
// an opaque *image.RGBA goes to image/png.
//
// The image data is compressed into a buffer kept for the next PNG
// (pngWriter.idat), and the PNG is then put together in one slice of its
// exact size: no buffer grown by doubling per figure (the bytes are those
// the chunks were written with before: TestEncodePNGBytes).
func encodePNG(img image.Image) ([]byte, error) {
	m, ok := img.(*image.RGBA)
	if !ok {
		return encodeImagePNG(img)
	}
	b := m.Bounds()
	width, height := b.Dx(), b.Dy()
	pw := pngWriters.Get().(*pngWriter)
	defer pngWriters.Put(pw)
	pw.idat = pw.idat[:0]
	zw, bw := pw.zw, pw.bw
	zw.Reset(&pw.idat)
	bw.Reset(zw)
	opaque := filteredRows(m, func(row []byte) { bw.Write(row) })
	if err := bw.Flush(); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	if !opaque {
		return encodeImagePNG(img)
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

// encodeImagePNG is img encoded by image/png at its fastest level.
func encodeImagePNG(img image.Image) ([]byte, error) {
	var buf bytes.Buffer
	if err := (&png.Encoder{CompressionLevel: png.BestSpeed}).Encode(&buf, img); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// filteredRows hands each row of m, as the image data holds it (the
// filter type, Up, then the row's colours less those of the row above), to
// emit, one buffer reused: each straight from the pixels of its row and
// the one above (the first row less a row of zeros: its own colours). It
// returns whether every pixel of m is opaque (image.RGBA.Opaque, found
// as the rows are filtered rather than in a pass of its own over the
// pixels). A row equal to the one above is all zeros, without being
// subtracted: the blank rows of a figure, most rows of a tall one.
func filteredRows(m *image.RGBA, emit func(row []byte)) (opaque bool) {
	b := m.Bounds()
	width := b.Dx()
	row := make([]byte, 1+3*width)
	row[0] = 2 // Up
	alpha := byte(0xff)
	zero := false // row[1:] holds zeros
	var above []byte
	for y := b.Min.Y; y < b.Max.Y; y++ {
		o := m.PixOffset(b.Min.X, y)
		pix := m.Pix[o : o+4*width : o+4*width]
		switch {
		case above != nil && bytes.Equal(pix, above):
			// Its pixels' alpha was counted with the row above's.
			if !zero {
				clear(row[1:])
				zero = true
			}
		default:
			alpha &= upFilter(row[1:], pix, above)
			zero = false
		}
		above = pix
		emit(row)
	}
	return alpha == 0xff
}

// upFilter writes into out (3 bytes a pixel) the colours of the RGBA
// pixels pix less those of above, byte by byte modulo 256 (PNG's Up
// filter); above nil is a row of zeros. It returns the bitwise AND of the
// pixels' alpha (0xff when every one is opaque). One pass, from the
// pixels, where encodePNG copied each row's colours out first and then
// subtracted the copies (2× the CPU: BenchmarkUpFilter); four pixels at a
// time in two 64-bit words, each byte subtracted apart (sub8).
func upFilter(out, pix, above []byte) (alpha byte) {
	n := len(pix) / 4
	out = out[:3*n]
	pix = pix[:4*n]
	and := ^uint64(0)
	x := 0
	for ; x+4 <= n; x += 4 {
		p0, p1 := binary.LittleEndian.Uint64(pix[4*x:]), binary.LittleEndian.Uint64(pix[4*x+8:])
		and &= p0 & p1
		if above != nil {
			p0 = sub8(p0, binary.LittleEndian.Uint64(above[4*x:]))
			p1 = sub8(p1, binary.LittleEndian.Uint64(above[4*x+8:]))
		}
		// r0 g0 b0 r1 g1 b1 r2 g2 | b2 r3 g3 b3
		binary.LittleEndian.PutUint64(out[3*x:], p0&0xffffff|(p0>>32&0xffffff)<<24|(p1&0xffff)<<48)
		binary.LittleEndian.PutUint32(out[3*x+8:], uint32(p1>>16&0xff|(p1>>32&0xffffff)<<8))
	}
	alpha = byte(and>>24) & byte(and>>56)
	for ; x < n; x++ {
		s, d := pix[4*x:4*x+4:4*x+4], out[3*x:3*x+3:3*x+3]
		alpha &= s[3]
		if above == nil {
			d[0], d[1], d[2] = s[0], s[1], s[2]
			continue
		}
		a := above[4*x : 4*x+3 : 4*x+3]
		d[0], d[1], d[2] = s[0]-a[0], s[1]-a[1], s[2]-a[2]
	}
	return alpha
}

// sub8 is x − y in each of the eight bytes apart, modulo 256.
func sub8(x, y uint64) uint64 {
	const h = 0x8080808080808080
	return ((x | h) - (y &^ h)) ^ ((x ^ ^y) & h)
}

// pngWriter is the compressor of a PNG's image data, the buffer in front
// of it and the one it compresses into, kept for the next PNG
// (pngWriters): a zlib writer's state (its window and tables) was
// allocated and cleared for every figure before. Reset makes it what
// NewWriterLevel made, so the bytes are the same (TestEncodePNGBytes).
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
