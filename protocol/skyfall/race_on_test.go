//go:build race

package skyfall

// raceEnabled: the race detector makes the large property tests slow.
const raceEnabled = true
