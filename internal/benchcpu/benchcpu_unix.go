//go:build unix

package benchcpu

import (
	"syscall"
	"testing"
)

// Usage is the process's CPU time at one moment.
type Usage struct{ r syscall.Rusage }

// Now is the process's CPU time now.
func Now() Usage {
	var u Usage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &u.r)
	return u
}

// Report adds the CPU time spent since before, per iteration of b, as
// cpu-ns/op.
func Report(b *testing.B, before Usage) {
	after := Now()
	ns := func(r syscall.Rusage) int64 { return syscall.TimevalToNsec(r.Utime) + syscall.TimevalToNsec(r.Stime) }
	b.ReportMetric(float64(ns(after.r)-ns(before.r))/float64(b.N), "cpu-ns/op")
}
