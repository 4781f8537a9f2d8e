//go:build race

package readers

// raceEnabled: the race detector drops a share of sync.Pool puts on purpose.
const raceEnabled = true
