//go:build unix

package family

import (
	"syscall"
	"testing"
)

// reportCPUTime adds the process CPU time (user + system) per iteration to a
// benchmark, a steadier figure than wall time on a shared machine. Call it
// with the rusage taken before the timed loop.
func reportCPUTime(b *testing.B, before syscall.Rusage) {
	var after syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &after); err != nil {
		return
	}
	ns := func(r syscall.Rusage) int64 { return syscall.TimevalToNsec(r.Utime) + syscall.TimevalToNsec(r.Stime) }
	b.ReportMetric(float64(ns(after)-ns(before))/float64(b.N), "cpu-ns/op")
}

func rusageNow() syscall.Rusage {
	var r syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &r)
	return r
}
