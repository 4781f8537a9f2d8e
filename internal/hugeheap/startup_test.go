package hugeheap

import (
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

// resetStartup ends whatever hold the test binary's own start left and
// restores GC percent 100 after the test.
func resetStartup(t *testing.T) {
	t.Helper()
	startup.Lock()
	startup.held, startup.released, startup.percent = false, false, 0
	startup.Unlock()
	debug.SetGCPercent(100)
	t.Cleanup(func() {
		startup.Lock()
		startup.held, startup.released = false, true
		startup.Unlock()
		debug.SetGCPercent(100)
	})
}

func gcPercent() int {
	p := debug.SetGCPercent(100)
	debug.SetGCPercent(p)
	return p
}

// waitPercent waits for the finalizer goroutine to bring the GC percent to
// want after a collection the caller ran; it reports the percent it last
// saw. It does not collect itself: a second collection could run the
// hold's next step before the percent was read.
func waitPercent(want int) int {
	deadline := time.Now().Add(5 * time.Second)
	for {
		if p := gcPercent(); p == want || time.Now().After(deadline) {
			return p
		}
		time.Sleep(time.Millisecond)
	}
}

// TestStartupHoldEndsAtFirstCollection: the hold raises the GC percent to
// startupPercent and the first collection after it restores the percent
// it found.
func TestStartupHoldEndsAtFirstCollection(t *testing.T) {
	resetStartup(t)
	debug.SetGCPercent(70)
	hold()
	if p := gcPercent(); p != startupPercent {
		t.Fatalf("GC percent under the hold %d, want %d", p, startupPercent)
	}
	runtime.GC()
	if p := waitPercent(70); p != 70 {
		t.Errorf("GC percent after the first collection %d, want the 70 found", p)
	}
	if _, held := Release(); held {
		t.Errorf("Release after the hold ended says it held")
	}
}

// TestStartupRelease: Release returns the percent the hold found and
// leaves the hold's in place for its caller; no collection after it
// changes the percent, and no hold starts after it.
func TestStartupRelease(t *testing.T) {
	resetStartup(t)
	debug.SetGCPercent(80)
	hold()
	percent, held := Release()
	if !held || percent != 80 {
		t.Fatalf("Release() = %d, %v, want 80, true", percent, held)
	}
	debug.SetGCPercent(55) // the caller's own
	runtime.GC()
	runtime.GC()
	time.Sleep(20 * time.Millisecond) // the finalizer, had it anything to do
	if p := gcPercent(); p != 55 {
		t.Errorf("GC percent after Release and two collections %d, want the caller's 55", p)
	}
	start()
	if p := gcPercent(); p != 55 {
		t.Errorf("a hold started after Release: GC percent %d", p)
	}
}

// TestStartupGOGC: GOGC in the environment is left its own; so is a
// collector that is off.
func TestStartupGOGC(t *testing.T) {
	resetStartup(t)
	t.Setenv("GOGC", "100")
	hold()
	if p := gcPercent(); p != 100 {
		t.Errorf("GC percent with GOGC set %d, want 100", p)
	}
	if _, held := Release(); held {
		t.Errorf("a hold with GOGC set")
	}
	resetStartup(t)
	debug.SetGCPercent(-1)
	start()
	if p := gcPercent(); p != -1 {
		t.Errorf("GC percent with the collector off %d, want -1", p)
	}
	if _, held := Release(); held {
		t.Errorf("a hold with the collector off")
	}
}
