package readers

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// zstdRows is n rows of three runs, numbered from first.
func zstdRows(first, n int) []byte {
	var b strings.Builder
	for i := first; i < first+n; i++ {
		fmt.Fprintf(&b, `{"run_id":"r%d","reward":%d.25,"regime_id":"g%d","note":"%x"}`+"\n", i%3, i, i/500, i*7919)
	}
	return []byte(b.String())
}

// zstdFrames compresses each part as a frame of its own, with checksums.
func zstdFrames(t testing.TB, parts ...[]byte) []byte {
	t.Helper()
	var out []byte
	for _, p := range parts {
		out = append(out, zst(t, p)...)
	}
	return out
}

// An object of one frame or of many, whole, with a corrupt frame in the
// middle, a frame whose checksum does not match, or cut short: decoded in
// chunks it gives exactly what DecodeObject gives, the error at the same
// line of the same object.
func TestChunksZstdFrames(t *testing.T) {
	rows := zstdRows(0, 4000)
	frames := [][]byte{zstdRows(0, 1000), zstdRows(1000, 1000), zstdRows(2000, 1000), zstdRows(3000, 1000)}
	many := zstdFrames(t, frames...)
	// The third frame's compressed bytes, corrupt in the middle.
	third := len(zstdFrames(t, frames[:2]...))
	mid := bytes.Clone(many)
	for i := third + 200; i < third+260; i++ {
		mid[i] ^= 0x5a
	}
	// A frame whose checksum does not match.
	badSum := bytes.Clone(many)
	badSum[third-1] ^= 0xff
	cases := map[string][]byte{
		"one frame":           zst(t, rows),
		"four frames":         many,
		"corrupt third frame": mid,
		"bad checksum":        badSum,
		"truncated":           many[:len(many)*2/3],
		"truncated one frame": zst(t, rows)[:len(zst(t, rows))-7],
	}
	opts := Options{Components: []string{"progress"}}
	for name, data := range cases {
		t.Run(name, func(t *testing.T) {
			for _, size := range []int{1000, 64 << 10, 1 << 20} {
				checkChunked(t, data, opts, size, 0, 0, true)
				checkChunked(t, data, opts, size, 1, 0, false)
			}
			_, err := DecodeObject(testURL, "x.jsonl", bytes.NewReader(data), opts)
			if strings.Contains(name, "corrupt") || strings.Contains(name, "truncated") || strings.Contains(name, "checksum") {
				if err == nil || !strings.Contains(err.Error(), testURL) || !strings.Contains(err.Error(), "line ") ||
					!strings.Contains(err.Error(), "corrupt zstd stream") {
					t.Errorf("error %v: want the object, a line and a corrupt zstd stream", err)
				}
			} else if err != nil {
				t.Error(err)
			}
		})
	}
}
