//go:build !unix

package family

import "testing"

type rusage struct{}

func reportCPUTime(*testing.B, rusage) {}

func rusageNow() rusage { return rusage{} }
