package benchcpu

import (
	"runtime"
	"testing"
)

// TestReportCountsCPU: a benchmark that spins reports a positive
// cpu-ns/op where the CPU time is known.
func TestReportCountsCPU(t *testing.T) {
	res := testing.Benchmark(func(b *testing.B) {
		before := Now()
		x := 1.0
		for b.Loop() {
			for range 100000 {
				x = x*1.0000001 + 1e-9
			}
		}
		if x == 0 {
			b.Log(x)
		}
		Report(b, before)
	})
	got, ok := res.Extra["cpu-ns/op"]
	if runtime.GOOS == "windows" || runtime.GOOS == "plan9" || runtime.GOOS == "js" || runtime.GOOS == "wasip1" {
		if ok {
			t.Errorf("cpu-ns/op reported where it is not known: %v", got)
		}
		return
	}
	if !ok || got <= 0 {
		t.Errorf("cpu-ns/op = %v (reported %v), want > 0", got, ok)
	}
}
