package hugeheap

import (
	"bytes"
	"os"
	"runtime"
	"testing"
)

// TestAdvisedAtStart: importing the package advised Size bytes (less the
// partial huge pages at the ends) while the test binary started, where
// huge pages may be used; Withdraw takes it back, once or twice alike.
func TestAdvisedAtStart(t *testing.T) {
	mode, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	usable := runtime.GOOS == "linux" && err == nil &&
		(bytes.Contains(mode, []byte("[always]")) || bytes.Contains(mode, []byte("[madvise]"))) &&
		os.Getenv("GOGC") != "off" && os.Getenv("GOMEMLIMIT") == ""
	got := Advised()
	if !usable {
		if got != 0 {
			t.Fatalf("Advised() = %d where huge pages are not to be used", got)
		}
		t.Skip("transparent huge pages unavailable here")
	}
	if got < Size-4<<20 || got > Size {
		t.Fatalf("Advised() = %d, want about %d", got, Size)
	}
	Withdraw()
	Withdraw()
	if got := Advised(); got != 0 {
		t.Fatalf("Advised() = %d after Withdraw", got)
	}
}
