// Package benchcpu adds the process's CPU time (user + system) per
// iteration to a Go benchmark, as the metric cpu-ns/op: on a machine shared
// with other work it is a steadier figure than wall time. It is for
// benchmarks only; on systems without getrusage it reports nothing.
//
//	before := benchcpu.Now()
//	for b.Loop() { … }
//	benchcpu.Report(b, before)
package benchcpu
