package hugemem

import (
	"reflect"
	"testing"
)

// TestExeMappings: of the executable's mappings, those released are
// private, readable, not writable, resident, without anonymous (written)
// or locked pages; another file's mappings, the heap's, unreadable lines
// and a mapping that does not say how much of it is anonymous are not.
func TestExeMappings(t *testing.T) {
	const smaps = `00400000-022ae000 r-xp 00000000 fe:00 1234 /opt/my tools/crlbatch
Size:              30392 kB
Rss:               18296 kB
Anonymous:             0 kB
Locked:                0 kB
VmFlags: rd ex mr mw me sd
022ae000-0427d000 r--p 01eae000 fe:00 1234 /opt/my tools/crlbatch
Size:              32572 kB
Rss:               16956 kB
Anonymous:             0 kB
Locked:                0 kB
0427d000-04896000 rw-p 03e7d000 fe:00 1234 /opt/my tools/crlbatch
Rss:                3236 kB
Anonymous:           812 kB
04896000-04900000 r--p 04496000 fe:00 1234 /opt/my tools/crlbatch
Rss:                  40 kB
Anonymous:            40 kB
04900000-04a00000 r--p 04500000 fe:00 1234 /opt/my tools/crlbatch
Rss:                 100 kB
Anonymous:             0 kB
Locked:              100 kB
04a00000-04b00000 r--p 04600000 fe:00 1234 /opt/my tools/crlbatch
Rss:                   0 kB
Anonymous:             0 kB
04b00000-04c00000 r--s 04700000 fe:00 1234 /opt/my tools/crlbatch
Rss:                  12 kB
Anonymous:             0 kB
7f0000000000-7f0000100000 r-xp 00000000 fe:00 99 /opt/my tools/crlbatch2
Rss:                 400 kB
Anonymous:             0 kB
7f0000100000-7f0000200000 r--p 00000000 fe:00 88 /opt/my tools/crlbatch (deleted)
Rss:                 400 kB
Anonymous:             0 kB
c000000000-c004000000 rw-p 00000000 00:00 0
Rss:               65536 kB
Anonymous:         65536 kB
zzz-yyy r--p 00000000 fe:00 1234 /opt/my tools/crlbatch
Rss:                 100 kB
Anonymous:             0 kB
04d00000-04e00000 r--p 04800000 fe:00 1234 /opt/my tools/crlbatch
Rss:                 100 kB
7fff0000-7fff1000 r--p 00000000 fe:00 1234 /opt/my tools/crlbatch
Rss:                   4 kB
Anonymous:             0 kB`
	got := exeMappings([]byte(smaps), "/opt/my tools/crlbatch")
	want := []exeMapping{
		{0x00400000, 0x022ae000, 18296 << 10},
		{0x022ae000, 0x0427d000, 16956 << 10},
		{0x7fff0000, 0x7fff1000, 4 << 10},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("exeMappings:\n got %+v\nwant %+v", got, want)
	}
	if got := exeMappings([]byte(smaps), "/opt/other"); len(got) != 0 {
		t.Fatalf("another path: %+v", got)
	}
	if got := exeMappings(nil, "/opt/my tools/crlbatch"); len(got) != 0 {
		t.Fatalf("no smaps: %+v", got)
	}
}
