package hugeheap

import (
	"os"
	"runtime"
	"runtime/debug"
	"sync"
)

// startupPercent is the GC percent held while the process starts: with
// less than 4 MiB live, Go's heap goal is 4 MiB × percent/100, so 400
// makes it 16 MiB. Package initialisation and the command line leave
// 3-6 MiB on the heap, past Go's first goal of 4 MiB: a collection there
// marked what initialisation keeps, ~2 ms of CPU and ~1.5 ms of wall on
// every start (docs/decisions.md, "Start-up, again").
const startupPercent = 400

// startup is the hold's state: held from start to the first collection
// after it (end) or to Release, whichever comes first.
var startup struct {
	sync.Mutex
	held     bool
	released bool // Release was called: no hold starts after it
	percent  int  // the GC percent found at start (GOGC's), restored by end
}

// hold holds the collector while the process starts (see startupPercent),
// unless GOGC is set in the environment, which is left its own. (AdviseHeap
// has collected its buffer before it returns: no garbage of it is left
// for the hold to wait out.)
func hold() {
	if os.Getenv("GOGC") != "" {
		return
	}
	start()
}

// start raises the GC percent to startupPercent and restores the one it
// found after the next collection. It does nothing after Release, or when
// the collector is off.
func start() {
	startup.Lock()
	defer startup.Unlock()
	if startup.released || startup.held {
		return
	}
	prev := debug.SetGCPercent(startupPercent)
	if prev <= 0 {
		debug.SetGCPercent(prev)
		return
	}
	startup.held, startup.percent = true, prev
	afterCollection(end)
}

// end restores the GC percent start found, unless Release came first.
func end() {
	startup.Lock()
	defer startup.Unlock()
	if !startup.held {
		return
	}
	startup.held = false
	debug.SetGCPercent(startup.percent)
}

// Release ends the start-up hold for a caller that sets the GC percent
// itself (the score command's heap floor): it returns the percent the hold
// found (GOGC's) and true while the hold is in force, leaving the hold's
// percent in place for the caller to replace; otherwise 0 and false, and
// the GC percent is whatever it is. No hold starts after it.
func Release() (percent int, held bool) {
	startup.Lock()
	defer startup.Unlock()
	startup.released = true
	if !startup.held {
		return 0, false
	}
	startup.held = false
	return startup.percent, true
}

// afterCollection calls fn on the finalizer goroutine after the next
// collection: the finalizer of an object nothing references.
func afterCollection(fn func()) {
	s := &sentinel{}
	runtime.SetFinalizer(s, func(*sentinel) { fn() })
}

// sentinel is afterCollection's object; not pointer-free, so that it is
// not in a tiny-allocator block that a neighbour keeps alive.
type sentinel struct{ _ *int }
