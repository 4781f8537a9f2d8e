//go:build !race

package writers

const raceEnabled = false
