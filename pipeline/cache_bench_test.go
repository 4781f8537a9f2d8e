package pipeline

import (
	"hash/crc64"
	"testing"

	"github.com/cespare/xxhash/v2"
)

// BenchmarkObjectHash compares the hash --cache keeps of every object read
// (newObjectHash: XXH3-64 since cache.FormatVersion 3) with those it
// replaced, xxHash64 (version 2) and CRC-64 (version 1): every byte of every
// object decoded with --cache goes through it, written in the reader's
// pieces.
//
//	go test ./pipeline -run XXX -bench ObjectHash -count 6
func BenchmarkObjectHash(b *testing.B) {
	data := make([]byte, 16<<20)
	for i := range data {
		data[i] = byte(i*7 + i>>9)
	}
	b.Run("crc64", func(b *testing.B) {
		tab := crc64.MakeTable(crc64.ECMA)
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			h := crc64.New(tab)
			h.Write(data)
			h.Sum64()
		}
	})
	b.Run("xxhash64", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			h := xxhash.New()
			h.Write(data)
			h.Sum64()
		}
	})
	b.Run("xxh3", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			h := newObjectHash()
			for i := 0; i < len(data); i += 256 << 10 {
				h.Write(data[i : i+256<<10])
			}
			h.Sum64()
		}
	})
}
