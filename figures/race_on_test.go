//go:build race

package figures

// raceEnabled: the race detector slows drawing about ten times; the tests
// that render hundreds of figures render fewer under it.
const raceEnabled = true
