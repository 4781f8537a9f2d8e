//go:build !race

package pqzstd

const raceEnabled = false
