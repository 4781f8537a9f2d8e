//go:build !unix

package benchcpu

import "testing"

// Usage is the process's CPU time at one moment (not known here).
type Usage struct{}

// Now is the process's CPU time now (not known here).
func Now() Usage { return Usage{} }

// Report reports nothing where the CPU time is not known.
func Report(*testing.B, Usage) {}
