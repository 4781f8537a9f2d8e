package cache

import (
	"crypto/sha256"
	"testing"
)

// BenchmarkEntryChecksum compares an entry's checksum (sum: XXH3-128 since
// FormatVersion 3) with the SHA-256 it replaced, on an entry of 2 MiB (an
// object entry of the 1 GB sweep is 2.2 MB): every entry written or read
// is checksummed whole.
//
//	go test ./cache -run XXX -bench EntryChecksum -count 6
func BenchmarkEntryChecksum(b *testing.B) {
	data := make([]byte, 2<<20)
	for i := range data {
		data[i] = byte(i*7 + i>>9)
	}
	b.Run("sha256", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			sha256.Sum256(data)
		}
	})
	b.Run("xxh3-128", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			sum(data)
		}
	})
}
