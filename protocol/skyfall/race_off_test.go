//go:build !race

package skyfall

const raceEnabled = false
