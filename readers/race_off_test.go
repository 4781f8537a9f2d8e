//go:build !race

package readers

const raceEnabled = false
