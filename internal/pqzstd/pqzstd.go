package pqzstd

import (
	"sync"

	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/klauspost/compress/zstd"
)

// keepPerLevel bounds the encoders kept per level: at most the number of
// pages compressed at once (a Parquet writer compresses one page at a time;
// a job writes a few tables at once).
const keepPerLevel = 8

// arrowCodec is arrow-go's zstd codec, as registered before init replaced it.
var arrowCodec compress.Codec

func init() {
	c, err := compress.GetCodec(compress.Codecs.Zstd)
	if err != nil {
		panic("pqzstd: arrow-go registers no zstd codec: " + err.Error())
	}
	arrowCodec = c
	compress.RegisterCodec(compress.Codecs.Zstd, &codec{Codec: c, free: map[zstd.EncoderLevel][]*zstd.Encoder{}})
}

// codec is arrow-go's zstd codec with EncodeLevel's encoders kept in a free
// list instead of a sync.Pool and never Reset (see the package comment).
type codec struct {
	compress.Codec

	mu   sync.Mutex
	free map[zstd.EncoderLevel][]*zstd.Encoder
}

// EncodeLevel compresses src into dst as one zstd frame at level (arrow-go's
// mapping of levels: compress.DefaultCompressionLevel is zstd.SpeedDefault).
func (c *codec) EncodeLevel(dst, src []byte, level int) []byte {
	l := encoderLevel(level)
	enc := c.get(l)
	out := enc.EncodeAll(src, dst[:0])
	c.put(l, enc)
	return out
}

func encoderLevel(level int) zstd.EncoderLevel {
	if level == compress.DefaultCompressionLevel {
		return zstd.SpeedDefault
	}
	return zstd.EncoderLevelFromZstd(level)
}

func (c *codec) get(l zstd.EncoderLevel) *zstd.Encoder {
	c.mu.Lock()
	if f := c.free[l]; len(f) > 0 {
		enc := f[len(f)-1]
		c.free[l] = f[:len(f)-1]
		c.mu.Unlock()
		return enc
	}
	c.mu.Unlock()
	// arrow-go's options (parquet/compress/zstd.go, getEncoderFromPool).
	enc, err := zstd.NewWriter(nil, zstd.WithZeroFrames(true), zstd.WithEncoderLevel(l),
		zstd.WithEncoderConcurrency(1), zstd.WithAllLitEntropyCompression(true))
	if err != nil {
		panic("pqzstd: " + err.Error()) // only for options out of range, and these are fixed
	}
	return enc
}

func (c *codec) put(l zstd.EncoderLevel, enc *zstd.Encoder) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.free[l]) < keepPerLevel {
		c.free[l] = append(c.free[l], enc)
	}
}
