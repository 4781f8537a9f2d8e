package readers

import (
	"runtime"
	"strings"
	"testing"
)

// TestLineBuffersArePooled: reading a small object does not allocate a fresh
// 128 KiB line buffer and 64 KiB source buffer each time (issue 16: 20,000
// objects allocated and zeroed about 3.8 GB of them). Bytes, not time.
func TestLineBuffersArePooled(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector drops sync.Pool puts at random")
	}
	const objects = 200
	src := strings.Repeat(`{"a":1}`+"\n", 10)
	read := func() {
		obj := &ObjectInfo{URL: "mem://o"}
		if err := readLines(obj, strings.NewReader(src), 1<<20, 1<<20, func([]byte, int) error { return nil }); err != nil {
			t.Fatal(err)
		}
	}
	read()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range objects {
		read()
	}
	runtime.ReadMemStats(&after)
	perObject := (after.TotalAlloc - before.TotalAlloc) / objects
	t.Logf("%d bytes allocated per object", perObject)
	if perObject > initialLineBuffer/4 {
		t.Errorf("reading a small object allocates %d bytes: its line and source buffers are not reused", perObject)
	}
}
