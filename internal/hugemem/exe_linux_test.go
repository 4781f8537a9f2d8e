package hugemem

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

// TestReleaseExecutable runs TestReleaseExecutableChild in a process of its
// own: the executable's resident pages are the whole process's.
func TestReleaseExecutable(t *testing.T) {
	runChild(t, "TestReleaseExecutableChild", "HUGEMEM_EXE_CHILD")
}

// exeData is in the executable's writable data segment: a release must
// leave what the process wrote there.
var exeData = []int{1, 2, 3}

// TestReleaseExecutableChild: the test binary's read-only mappings have
// resident pages; ReleaseExecutable says how many it released and they are
// no longer resident, while the writable data segment keeps what the process
// wrote and the code goes on running (faulted back in).
func TestReleaseExecutableChild(t *testing.T) {
	if os.Getenv("HUGEMEM_EXE_CHILD") == "" {
		t.Skip("run by TestReleaseExecutable in a process of its own")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	exeData[1] = 42
	before := exeRss(t, exe)
	if before.readOnly == 0 {
		t.Fatalf("no resident read-only page of %s before the release", exe)
	}
	released := ReleaseExecutable()
	after := exeRss(t, exe)
	t.Logf("read-only resident %d KiB, released %d KiB, resident after %d KiB; writable %d -> %d KiB",
		before.readOnly>>10, released>>10, after.readOnly>>10, before.writable>>10, after.writable>>10)
	if released < before.readOnly/2 || released > before.readOnly+1<<20 {
		t.Fatalf("released %d bytes of %d resident", released, before.readOnly)
	}
	// What this test ran since (smaps' reading, the checks) is resident
	// again, with the pages around it: less than was.
	if after.readOnly >= before.readOnly {
		t.Fatalf("%d bytes still resident after the release (%d before)", after.readOnly, before.readOnly)
	}
	if exeData[0] != 1 || exeData[1] != 42 || exeData[2] != 3 {
		t.Fatalf("the data segment changed: %v", exeData)
	}
	if after.writable < before.writable/2 {
		t.Fatalf("the writable mappings went from %d to %d resident bytes", before.writable, after.writable)
	}
	// Code and tables not run since the release, run again.
	if !thpModeAllows([]byte("always [madvise] never")) || strings.Repeat("ab", 3) != "ababab" {
		t.Fatal("the code runs wrong after the release")
	}
}

type exeResident struct{ readOnly, writable int64 }

// exeRss sums the resident bytes of exe's read-only and writable mappings.
func exeRss(t *testing.T, exe string) exeResident {
	t.Helper()
	smaps, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		t.Fatal(err)
	}
	var r exeResident
	var cur *int64
	for _, line := range bytes.Split(smaps, []byte{'\n'}) {
		if h, ok := mappingHeader(line); ok {
			cur = nil
			if h.path == exe {
				cur = &r.readOnly
				if h.perms[1] == 'w' {
					cur = &r.writable
				}
			}
			continue
		}
		if name, kb, ok := sizeField(line); ok && name == "Rss" && cur != nil {
			*cur += kb << 10
		}
	}
	return r
}
