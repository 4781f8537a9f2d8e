package hugemem

import (
	"bufio"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"testing"
	"unsafe"
)

// mapping is what /proc/self/smaps says of the mapping holding an address.
type mapping struct {
	lo, hi    uintptr
	flags     []string // VmFlags
	hugeBytes int64    // AnonHugePages
}

func mappingOf(t *testing.T, p uintptr) mapping {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var m mapping
	found := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		if r := strings.SplitN(fields[0], "-", 2); len(r) == 2 && !strings.HasSuffix(fields[0], ":") {
			lo, err1 := strconv.ParseUint(r[0], 16, 64)
			hi, err2 := strconv.ParseUint(r[1], 16, 64)
			if err1 == nil && err2 == nil {
				if found {
					break
				}
				if uintptr(lo) <= p && p < uintptr(hi) {
					found = true
					m.lo, m.hi = uintptr(lo), uintptr(hi)
				}
				continue
			}
		}
		if !found {
			continue
		}
		switch fields[0] {
		case "VmFlags:":
			m.flags = fields[1:]
		case "AnonHugePages:":
			kb, _ := strconv.ParseInt(fields[1], 10, 64)
			m.hugeBytes = kb << 10
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if !found {
		t.Fatalf("no mapping holds %#x", p)
	}
	return m
}

func (m mapping) has(flag string) bool {
	for _, f := range m.flags {
		if f == flag {
			return true
		}
	}
	return false
}

func heapFree() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/free:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

func heapReleased() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/released:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

func liveHeap() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// TestAdviseHeap runs TestAdviseHeapChild in a process of its own, as
// AdviseHeap is meant to run: while a process starts, before anything has
// freed memory in the heap (in this one other tests may have).
func TestAdviseHeap(t *testing.T) {
	if !available() {
		t.Skip("transparent huge pages unavailable here")
	}
	runChild(t, "TestAdviseHeapChild", "HUGEMEM_HEAP_CHILD")
}

// runChild runs the test named in a process of its own, with env set to
// 1, and fails unless it passes.
func runChild(t *testing.T, name, env string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+name+"$", "-test.v")
	cmd.Env = append(os.Environ(), env+"=1")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: "+name) {
		t.Fatalf("the child process: %v\n%s", err, out)
	}
	t.Logf("%s", out)
}

// TestAdviseHeapChild: the region is advised (VmFlags hg), freed and its
// pages released by AdviseHeap itself (not live heap, the heap's released
// bytes), and where the next large allocation is placed; WithdrawHeap
// leaves it advised against (nh) and its free pages released.
func TestAdviseHeapChild(t *testing.T) {
	if os.Getenv("HUGEMEM_HEAP_CHILD") == "" {
		t.Skip("run by TestAdviseHeap in a process of its own")
	}
	const n = 64 << 20
	WithdrawHeap()
	got := AdviseHeap(n)
	if got < n-2*PageSize || got > n || HeapAdvised() != got {
		t.Fatalf("AdviseHeap(%d) = %d, HeapAdvised() = %d", n, got, HeapAdvised())
	}
	heapAdvice.Lock()
	lo, hi := heapAdvice.ranges[0][0], heapAdvice.ranges[0][1]
	heapAdvice.Unlock()
	if lo%PageSize != 0 || hi%PageSize != 0 || int(hi-lo) != got {
		t.Fatalf("advised [%#x, %#x)", lo, hi)
	}
	r := struct{ lo, hi uintptr }{lo, hi}
	m := mappingOf(t, r.lo)
	if !m.has("hg") || m.lo > r.lo || m.hi < r.hi {
		t.Fatalf("mapping [%#x, %#x) with flags %v, want hg over [%#x, %#x)", m.lo, m.hi, m.flags, r.lo, r.hi)
	}
	// Freed already, and its pages counted as given back to the system
	// (not left to the background scavenger, 64 KiB a call).
	if live := liveHeap(); live >= n/2 {
		t.Fatalf("live heap %d after AdviseHeap: the advised buffer was kept", live)
	}
	if released := heapReleased(); released < uint64(got) {
		t.Fatalf("%d bytes of the heap released after AdviseHeap, want its %d at least", released, got)
	}
	b := make([]byte, 8<<20)
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	// The buffer AdviseHeap dropped began up to a huge page below the
	// advised range, and so may the allocation that takes its place.
	if end := p + uintptr(len(b)); min(end, r.hi)-max(p, r.lo) < uintptr(len(b))-PageSize || end <= r.lo || p >= r.hi {
		t.Fatalf("an 8 MiB allocation at [%#x, %#x), not in the advised [%#x, %#x)", p, end, r.lo, r.hi)
	}
	for i := 0; i < len(b); i += 4096 {
		b[i] = 1
	}
	// Whether the kernel found free huge pages is its business: logged.
	t.Logf("AnonHugePages of the mapping after touching 8 MiB in it: %d MiB", mappingOf(t, r.lo).hugeBytes>>20)
	runtime.KeepAlive(b)

	// Free pages the background scavenger keeps (below its goal): 4 MiB
	// of small objects, dropped.
	junk := make([][]byte, 1024)
	for i := range junk {
		junk[i] = make([]byte, 4096)
	}
	junk = nil
	runtime.GC()
	if free := heapFree(); free < 2<<20 {
		t.Fatalf("%d bytes of the heap free after dropping 4 MiB", free)
	}
	WithdrawHeap()
	if m := mappingOf(t, r.lo); m.has("hg") || !m.has("nh") {
		t.Fatalf("after WithdrawHeap: flags %v, want nh and no hg", m.flags)
	}
	if HeapAdvised() != 0 {
		t.Fatalf("HeapAdvised() = %d after WithdrawHeap", HeapAdvised())
	}
	// The heap's free pages, the dropped buffer's among them (marked as used
	// once), were released, so that the runtime does not clear them page by
	// page when it hands them out again.
	if free := heapFree(); free > PageSize {
		t.Fatalf("%d bytes of the heap free and not released after WithdrawHeap", free)
	}
	WithdrawHeap() // nothing advised: nothing to do
}

// TestAdviseHeapNot: nothing is advised below a huge page, with the
// collector off, or under a soft memory limit; the settings are left as
// they were.
func TestAdviseHeapNot(t *testing.T) {
	if got := AdviseHeap(PageSize - 1); got != 0 {
		t.Errorf("AdviseHeap(PageSize-1) advised %d bytes", got)
	}
	prev := debug.SetGCPercent(-1)
	advised := AdviseHeap(16 << 20)
	if got := debug.SetGCPercent(prev); got != -1 {
		t.Errorf("GC percent %d after AdviseHeap with the collector off, want -1", got)
	}
	if advised != 0 {
		t.Errorf("AdviseHeap with the collector off advised %d bytes", advised)
	}
	prevLimit := debug.SetMemoryLimit(1 << 40)
	advised = AdviseHeap(16 << 20)
	debug.SetMemoryLimit(prevLimit)
	if advised != 0 {
		t.Errorf("AdviseHeap under a memory limit advised %d bytes", advised)
	}
	if got := debug.SetGCPercent(100); got != prev {
		t.Errorf("GC percent %d after AdviseHeap, want %d", got, prev)
	}
	debug.SetGCPercent(prev)
}
