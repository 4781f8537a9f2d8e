//go:build race

package pipeline

// raceEnabled: the race detector slows the engine 5-10 times; tests whose
// bounds are on the latency of a large job skip under it.
const raceEnabled = true
