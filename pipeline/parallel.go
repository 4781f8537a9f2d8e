package pipeline

import (
	"sync"
	"sync/atomic"
)

// parallel calls work(i) for every i in [0, n) on at most --concurrency
// goroutines and returns when all calls have returned. It is the
// family.Options.Each of the job: the family statistics of distinct cells
// are independent, so their order does not change the result.
func (j *job) parallel(n int, work func(i int)) {
	workers := min(j.cfg.Concurrency, n)
	if workers <= 1 {
		for i := range n {
			work(i)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	var bug bugs // a worker's panic, panicked again here
	for range workers {
		wg.Go(func() {
			defer bug.catch()
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				work(i)
			}
		})
	}
	wg.Wait()
	bug.rethrow()
}
