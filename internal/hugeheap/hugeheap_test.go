package hugeheap

import (
	"bytes"
	"os"
	"runtime"
	"strconv"
	"testing"

	"github.com/crlbatch/crlbatch/internal/hugemem"
)

// TestAdvisedAtStart: importing the package advised Size bytes (less the
// partial huge pages at the ends) while the test binary started, where
// huge pages may be used, and nothing where they may not.
func TestAdvisedAtStart(t *testing.T) {
	mode, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	usable := runtime.GOOS == "linux" && strconv.IntSize == 64 && err == nil &&
		(bytes.Contains(mode, []byte("[always]")) || bytes.Contains(mode, []byte("[madvise]"))) &&
		os.Getenv("GOGC") != "off" && os.Getenv("GOMEMLIMIT") == ""
	got := hugemem.HeapAdvised()
	if !usable {
		if got != 0 {
			t.Fatalf("HeapAdvised() = %d where huge pages are not to be used", got)
		}
		t.Skip("transparent huge pages unavailable here")
	}
	if got < Size-2*hugemem.PageSize || got > Size {
		t.Fatalf("HeapAdvised() = %d, want about %d", got, Size)
	}
}
