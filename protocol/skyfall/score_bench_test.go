package skyfall

import (
	"math/rand/v2"
	"runtime"
	"syscall"
	"testing"
	"time"
)

// benchTrace is a 10-million-step trace with 200 intervals over five labels,
// effective ranks and invalid actions recorded and an episode-end component.
func benchTrace(b *testing.B, n int) *Trace {
	b.Helper()
	rng := rand.New(rand.NewPCG(7, 7))
	bl := NewBuilder("bench", []string{"bonus"})
	labels := []string{"a", "b", "c", "d", "e"}
	per := n / 200
	row := Row{Comps: []float64{0}}
	for i := 0; i < n; i++ {
		row.Label = labels[(i/per)%len(labels)]
		row.Reward = rng.NormFloat64()
		row.Invalid = int8(i & 1)
		row.EffRank, row.HasEffRank = float64(i%13), i%3 == 0
		row.Comps[0] = 0
		if i%1000 == 999 {
			row.Comps[0] = 1
		}
		bl.Add(&row)
	}
	return bl.Trace(nil)
}

func benchScore(b *testing.B, window Window) {
	tr := benchTrace(b, 10_000_000)
	p := DefaultParams()
	p.Window = window
	p.EpisodeEnd = []string{"bonus"}
	p.SolveComponent = "bonus"
	b.SetBytes(int64(tr.Len())) // "bytes" are steps: MB/s reads as M steps/s
	b.ReportAllocs()
	runtime.GC()
	start := cpuTime()
	n := 0
	for b.Loop() {
		if _, err := Score(tr, &p, nil); err != nil {
			b.Fatal(err)
		}
		n++
	}
	// CPU time is steadier than wall time on a shared machine.
	cpu := cpuTime() - start
	b.ReportMetric(float64(tr.Len())*float64(n)/cpu.Seconds()/1e6, "Msteps/cpu-s")
}

// cpuTime is the process's user + system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkScoreSegment10M scores 10 M steps under the default window. The
// MB/s column is millions of steps per second.
func BenchmarkScoreSegment10M(b *testing.B) { benchScore(b, WindowSegment) }

// BenchmarkScorePostShift10M is the same trace under the post_shift window,
// O(shifts × length).
func BenchmarkScorePostShift10M(b *testing.B) { benchScore(b, WindowPostShift) }
