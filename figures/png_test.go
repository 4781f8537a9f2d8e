package figures

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"image"
	"image/color"
	"image/png"
	"io"
	"math/rand/v2"
	"testing"

	"github.com/klauspost/compress/zlib"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/crlbatch/crlbatch/internal/benchcpu"
	"github.com/crlbatch/crlbatch/protocol"
	"github.com/crlbatch/crlbatch/protocol/family"
)

// raster draws f as PNG does, before encoding.
func raster(f *Figure) image.Image {
	w, h := f.size()
	c := vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(PNGDPI), vgimg.UseBackgroundColor(color.White))
	f.draw(draw.New(c))
	return c.Image()
}

// samePixels says whether a and b have the same bounds and colours.
func samePixels(a, b image.Image) bool {
	if a.Bounds().Size() != b.Bounds().Size() {
		return false
	}
	ra, rb := a.Bounds(), b.Bounds()
	for y := range ra.Dy() {
		for x := range ra.Dx() {
			r1, g1, b1, a1 := a.At(ra.Min.X+x, ra.Min.Y+y).RGBA()
			r2, g2, b2, a2 := b.At(rb.Min.X+x, rb.Min.Y+y).RGBA()
			if r1 != r2 || g1 != g2 || b1 != b2 || a1 != a2 {
				return false
			}
		}
	}
	return true
}

// TestEncodePNGIsLossless: the PNG encoder's output decodes (by image/png)
// to exactly the drawn pixels, for a small and a large reward figure, a
// merged one, an interval-estimate figure, a part of an image (bounds not
// at the origin) and an image with transparency (image/png's path), and
// its size is within 25 % of image/png's at its fastest level (the Up
// filter and klauspost's fastest deflate: the small interval-estimate
// figure 1.20×, the others within 3 % either way).
func TestEncodePNGIsLossless(t *testing.T) {
	hib := true
	fres := &family.Result{Families: []family.Family{
		{Name: "a", Rows: []family.Row{{Metric: "m", HigherIsBetter: &hib, IQM: protocol.Finite(1), IQMCILow: protocol.Finite(0.5), IQMCIHigh: protocol.Finite(1.5)}}},
		{Name: "b", Rows: []family.Row{{Metric: "m", HigherIsBetter: &hib, IQM: protocol.Finite(2), IQMCILow: protocol.Finite(1.2), IQMCIHigh: protocol.Finite(2.5)}}},
	}}
	images := map[string]image.Image{
		"small reward":       raster(Reward("r", "f", 5, smallLine())),
		"reward":             raster(Reward("r", "f", 5, benchLine())),
		"merged regimes":     raster(Reward("r", "f", 1, burstLine())),
		"interval estimates": raster(Intervals("i", fres, []Headline{{Metric: "m", Label: "M"}})),
	}
	images["part"] = images["reward"].(*image.RGBA).SubImage(image.Rect(100, 50, 400, 250))
	see := image.NewRGBA(image.Rect(0, 0, 40, 30))
	for i := 0; i < len(see.Pix); i += 4 { // premultiplied: colours ≤ alpha
		a := uint8(i * 7)
		see.Pix[i], see.Pix[i+1], see.Pix[i+2], see.Pix[i+3] = a/2, a/3, a, a
	}
	images["transparent"] = see
	for name, img := range images {
		var std bytes.Buffer
		b, err := encodePNG(img)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		ours := bytes.NewBuffer(b)
		if err := (&png.Encoder{CompressionLevel: png.BestSpeed}).Encode(&std, img); err != nil {
			t.Fatal(err)
		}
		if name == "transparent" { // image/png's own path (it stores colours unpremultiplied)
			if !bytes.Equal(ours.Bytes(), std.Bytes()) {
				t.Errorf("%s: not image/png's bytes", name)
			}
			continue
		}
		back, err := png.Decode(bytes.NewReader(ours.Bytes()))
		if err != nil {
			t.Fatalf("%s: image/png cannot read it: %v", name, err)
		}
		if !samePixels(img, back) {
			t.Errorf("%s: the decoded pixels differ from the drawn ones", name)
		}
		t.Logf("%s: %d B, image/png %d B", name, ours.Len(), std.Len())
		if float64(ours.Len()) > 1.25*float64(std.Len()) {
			t.Errorf("%s: %d B, image/png %d B", name, ours.Len(), std.Len())
		}
	}
}

// BenchmarkEncodePNG and BenchmarkEncodePNGImagePNG encode one small
// reward figure (a job of 200 families encodes 200).
func BenchmarkEncodePNG(b *testing.B) {
	img := raster(Reward("r", "f", 5, smallLine()))
	b.ReportAllocs()
	before := benchcpu.Now()
	for b.Loop() {
		if _, err := encodePNG(img); err != nil {
			b.Fatal(err)
		}
	}
	benchcpu.Report(b, before)
}

func BenchmarkEncodePNGImagePNG(b *testing.B) {
	img := raster(Reward("r", "f", 5, smallLine()))
	b.ReportAllocs()
	before := benchcpu.Now()
	for b.Loop() {
		var buf bytes.Buffer
		if err := (&png.Encoder{CompressionLevel: png.BestSpeed}).Encode(&buf, img); err != nil {
			b.Fatal(err)
		}
	}
	benchcpu.Report(b, before)
}

// filteredRowsBefore hands each filtered row of m (the filter byte, then
// its colours less those of the row above) to emit, as encodePNG filtered
// them before upFilter: the row's colours copied out, then less the
// previous row's copy.
func filteredRowsBefore(m *image.RGBA, emit func(row []byte)) {
	b := m.Bounds()
	width, height := b.Dx(), b.Dy()
	n := 3 * width
	cur, prev := make([]byte, n), make([]byte, n)
	row := make([]byte, 1+n)
	row[0] = 2
	for y := range height {
		pix := m.Pix[m.PixOffset(b.Min.X, b.Min.Y+y):]
		for x := range width {
			cur[3*x], cur[3*x+1], cur[3*x+2] = pix[4*x], pix[4*x+1], pix[4*x+2]
		}
		for i := range cur {
			row[1+i] = cur[i] - prev[i]
		}
		emit(row)
		cur, prev = prev, cur
	}
}

// TestUpFilter: the rows encodePNG compresses are those it compressed
// before upFilter, and filteredRows says whether the image is opaque as
// image.RGBA.Opaque does, over random pixels (widths with and without a
// tail past the last group of four pixels), rows repeating the one above,
// opaque images with one translucent pixel anywhere, whole images and
// parts of them.
func TestUpFilter(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, size := range []image.Rectangle{image.Rect(0, 0, 1, 1), image.Rect(0, 0, 7, 3), image.Rect(0, 0, 8, 5), image.Rect(0, 0, 605, 40), image.Rect(0, 0, 606, 9)} {
		for _, kind := range []string{"noise", "repeated rows", "opaque", "one translucent"} {
			m := image.NewRGBA(size)
			for i := range m.Pix {
				m.Pix[i] = byte(r.Uint32())
				if kind != "noise" && i%4 == 3 {
					m.Pix[i] = 0xff
				}
			}
			if kind == "repeated rows" {
				for y := 1; y < size.Dy(); y++ {
					if r.IntN(3) > 0 {
						copy(m.Pix[y*m.Stride:(y+1)*m.Stride], m.Pix[(y-1)*m.Stride:y*m.Stride])
					}
				}
			}
			if kind == "one translucent" {
				m.Pix[4*r.IntN(len(m.Pix)/4)+3] = byte(r.IntN(0xff))
			}
			for _, img := range []*image.RGBA{m, m.SubImage(image.Rect(1, 1, size.Dx(), size.Dy())).(*image.RGBA)} {
				var got, want [][]byte
				opaque := filteredRows(img, func(row []byte) { got = append(got, bytes.Clone(row)) })
				filteredRowsBefore(img, func(row []byte) { want = append(want, bytes.Clone(row)) })
				if opaque != img.Opaque() {
					t.Errorf("%s %v: opaque %v, Opaque says %v", kind, img.Bounds(), opaque, img.Opaque())
				}
				if len(got) != len(want) {
					t.Fatalf("%s %v: %d rows, want %d", kind, img.Bounds(), len(got), len(want))
				}
				for y := range got {
					if !bytes.Equal(got[y], want[y]) {
						t.Errorf("%s %v: row %d differs", kind, img.Bounds(), y)
					}
				}
			}
		}
	}
}

// TestSub8: sub8 subtracts each byte apart, modulo 256, over random
// words and every pair of bytes.
func TestSub8(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	check := func(x, y uint64) {
		got := sub8(x, y)
		for i := range 8 {
			if want := byte(x>>(8*i)) - byte(y>>(8*i)); byte(got>>(8*i)) != want {
				t.Fatalf("sub8(%#x, %#x) = %#x: byte %d is %#x, want %#x", x, y, got, i, byte(got>>(8*i)), want)
			}
		}
	}
	for range 100000 {
		check(r.Uint64(), r.Uint64())
	}
	for a := range 256 {
		for b := range 256 {
			check(uint64(a)*0x0101010101010101, uint64(b)<<56|uint64(a))
		}
	}
}

// BenchmarkUpFilter: every row of a reward figure filtered as encodePNG
// filters it (upFilter) and as it did before.
func BenchmarkUpFilter(b *testing.B) {
	img := raster(Reward("r", "f", 5, benchLine())).(*image.RGBA)
	for _, c := range []struct {
		name string
		f    func(*image.RGBA, func([]byte))
	}{{"filteredRows", func(m *image.RGBA, emit func([]byte)) { filteredRows(m, emit) }}, {"before", filteredRowsBefore}} {
		b.Run(c.name, func(b *testing.B) {
			before := benchcpu.Now()
			n := 0
			for b.Loop() {
				c.f(img, func(row []byte) { n += int(row[len(row)-1]) })
			}
			benchcpu.Report(b, before)
			if n < 0 {
				b.Log(n)
			}
		})
	}
}

// encodePNGBefore is encodePNG as it was before it kept its compressed
// data for the next PNG and put the PNG together in one slice: each chunk
// written to w in turn (with the compressor pngWriters makes, fresh).
func encodePNGBefore(w io.Writer, img image.Image) error {
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
	zw, err := zlib.NewWriterLevel(&idat, zlib.BestSpeed)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(zw, 64<<10)
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

// TestEncodePNGBytes: encodePNG's bytes are encodePNGBefore's, over drawn
// figures of each kind and random images of many sizes (1×1 up, whole and
// parts, opaque and not), one after another so that each reuses the
// compressed-data buffer of the one before, larger or smaller.
func TestEncodePNGBytes(t *testing.T) {
	var imgs []image.Image
	for _, mk := range namedFigures() {
		imgs = append(imgs, raster(mk()))
	}
	r := rand.New(rand.NewPCG(11, 12))
	for _, size := range []image.Rectangle{image.Rect(0, 0, 1, 1), image.Rect(0, 0, 3, 700), image.Rect(0, 0, 605, 302), image.Rect(0, 0, 40, 30)} {
		for _, kind := range []string{"noise", "flat", "stripes", "transparent", "one translucent"} {
			m := image.NewRGBA(size)
			for i := range m.Pix {
				switch kind {
				case "noise":
					m.Pix[i] = byte(r.Uint32())
				case "flat":
					m.Pix[i] = 0x80
				case "stripes":
					m.Pix[i] = byte(i / (4 * size.Dx()) % 7 * 30)
				}
				if i%4 == 3 && kind != "transparent" {
					m.Pix[i] = 0xff
				}
			}
			if kind == "one translucent" {
				m.Pix[4*r.IntN(len(m.Pix)/4)+3] = 0xfe
			}
			imgs = append(imgs, m)
			if size.Dx() > 2 && size.Dy() > 2 {
				imgs = append(imgs, m.SubImage(image.Rect(1, 1, size.Dx()-1, size.Dy()-1)))
			}
		}
	}
	for round := range 2 {
		for i, img := range imgs {
			got, err := encodePNG(img)
			if err != nil {
				t.Fatal(err)
			}
			var want bytes.Buffer
			if err := encodePNGBefore(&want, img); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want.Bytes()) {
				t.Errorf("round %d, image %d (%v): %d B, before %d B", round, i, img.Bounds(), len(got), want.Len())
			}
		}
		// The second round in the other order: each image after another.
		for a, b := 0, len(imgs)-1; a < b; a, b = a+1, b-1 {
			imgs[a], imgs[b] = imgs[b], imgs[a]
		}
	}
}
