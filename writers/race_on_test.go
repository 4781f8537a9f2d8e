//go:build race

package writers

// raceEnabled: the race detector changes what allocates (and drops a share of
// sync.Pool puts on purpose), so byte counts are checked without it only.
const raceEnabled = true
