package hugemem

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"syscall"
	"testing"
)

// TestTrimHeap runs TestTrimHeapChild in a process of its own: the heap's
// free and released memory are the whole process's.
func TestTrimHeap(t *testing.T) {
	runChild(t, "TestTrimHeapChild", "HUGEMEM_TRIM_CHILD")
}

func heapSamples() (goal, objects, unused, free, released uint64) {
	s := []metrics.Sample{
		{Name: "/gc/heap/goal:bytes"},
		{Name: "/memory/classes/heap/objects:bytes"},
		{Name: "/memory/classes/heap/unused:bytes"},
		{Name: "/memory/classes/heap/free:bytes"},
		{Name: "/memory/classes/heap/released:bytes"},
	}
	metrics.Read(s)
	return s[0].Value.Uint64(), s[1].Value.Uint64(), s[2].Value.Uint64(), s[3].Value.Uint64(), s[4].Value.Uint64()
}

// threadMinorFaults counts the minor faults of the calling thread only
// (lock the goroutine to it): the collector's workers and the runtime's
// other threads touch fresh pages of their own (mark bits, work buffers)
// when a cycle starts while the test allocates, and counting the whole
// process's let that push a run past the bound under load.
func threadMinorFaults() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_THREAD, &ru); err != nil {
		panic(err)
	}
	return int64(ru.Minflt)
}

// TestTrimHeapChild: a heap that has just shrunk by 96 MiB keeps the room
// to its next goal resident and releases the rest; what is allocated up to
// that goal then takes no fresh pages. Nothing is done when little is
// free, or with the collector off.
func TestTrimHeapChild(t *testing.T) {
	if os.Getenv("HUGEMEM_TRIM_CHILD") == "" {
		t.Skip("run by TestTrimHeap in a process of its own")
	}
	// The background scavenger would release free pages on its own while
	// the test reads them: the advice of the package's other tests and
	// the start-up state stay out of it too.
	debug.SetGCPercent(100)
	runtime.GC()
	if got := TrimHeap(); got != 0 {
		t.Fatalf("TrimHeap on a heap with nothing free released %d bytes", got)
	}

	live := make([][]byte, 256) // 16 MiB that stays: a room of ~16 MiB
	for i := range live {
		live[i] = make([]byte, 64<<10)
		live[i][0] = 1
	}
	junk := make([][]byte, 384) // 96 MiB that goes
	for i := range junk {
		junk[i] = make([]byte, 256<<10)
		for j := 0; j < len(junk[i]); j += 4096 {
			junk[i][j] = 1
		}
	}
	junk = nil
	runtime.GC()
	goal, objects, unused, free, released := heapSamples()
	room := goal - objects - unused
	t.Logf("before: goal %d KiB, objects %d KiB, unused %d KiB, free %d KiB, released %d KiB", goal>>10, objects>>10, unused>>10, free>>10, released>>10)
	if free < room+trimSlack+64<<20 {
		t.Fatalf("only %d KiB free after dropping 96 MiB (room %d KiB)", free>>10, room>>10)
	}
	got := TrimHeap()
	// (The log line above allocated a little since.)
	if want := int(free - room); got < want-1<<20 || got > want+1<<20 {
		t.Errorf("TrimHeap() = %d, want the free bytes less the room, %d", got, want)
	}
	_, _, _, free2, released2 := heapSamples()
	t.Logf("after: free %d KiB, released %d KiB", free2>>10, released2>>10)
	// Kept: the room, less what the runtime's own allocations took of it
	// and the fragments below a chunk released with the rest.
	if free2 > room+1<<20 || free2+4<<20 < room {
		t.Errorf("%d KiB free after TrimHeap, want about the room, %d KiB", free2>>10, room>>10)
	}
	if released2 < released+uint64(got)-4<<20 {
		t.Errorf("released %d KiB → %d KiB, want %d KiB more", released>>10, released2>>10, got>>10)
	}

	// Up to the goal, allocations take the kept pages: no fresh page is
	// touched (a fault each) by the goroutine that allocates and writes
	// them, on its own thread.
	runtime.LockOSThread()
	faults := threadMinorFaults()
	more := make([][]byte, 0, room/(64<<10))
	for n := uint64(0); n+(64<<10) <= room*3/4; n += 64 << 10 {
		b := make([]byte, 64<<10)
		for j := 0; j < len(b); j += 4096 {
			b[j] = 1
		}
		more = append(more, b)
	}
	touched := threadMinorFaults() - faults
	runtime.UnlockOSThread()
	t.Logf("%d KiB allocated after TrimHeap: %d page faults", len(more)*64, touched)
	if pages := int64(len(more) * 16); touched > pages/10 {
		t.Errorf("%d KiB allocated in the kept room took %d page faults, want under %d", len(more)*64, touched, pages/10)
	}
	runtime.KeepAlive(more)
	runtime.KeepAlive(live)
	more = nil
	runtime.GC()

	// With the collector off the goal is unbounded: nothing is released.
	junk = make([][]byte, 128)
	for i := range junk {
		junk[i] = make([]byte, 256<<10)
		junk[i][0] = 1
	}
	junk = nil
	runtime.GC()
	prev := debug.SetGCPercent(-1)
	got = TrimHeap()
	debug.SetGCPercent(prev)
	if got != 0 {
		t.Errorf("TrimHeap with the collector off released %d bytes", got)
	}
}
