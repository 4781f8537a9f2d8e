package pipeline

import (
	"hash/crc64"
	"testing"

	"github.com/cespare/xxhash/v2"
)

// BenchmarkObjectHash compares the hash --cache keeps of every object read
// (xxHash64 since cache.FormatVersion 2) with the CRC-64 it replaced: every
// byte of every object read on a cold run goes through it.
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
}
