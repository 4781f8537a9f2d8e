package pipeline

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/crlbatch/crlbatch/internal/synth"
	"github.com/crlbatch/crlbatch/scoring"
	"github.com/crlbatch/crlbatch/writers"
)

// TestTablesWrittenAtOnce: with --concurrency 2 a result's Parquet tables
// are written on two goroutines at once (a second table starts while the
// first is still being written: the first waits for it), and every file
// is byte for byte what --concurrency 1 writes, one table at a time
// (sameFiles: manifest.json but for its times, attempt and host). Written one at a time, the tables left the other
// core idle: ~17 ms of the nightly warm rerun's ~0.2 s. Tables of more
// rows in all than parallelTableRows (a run of 100,000 labels) are written
// one at a time whatever the concurrency: no second starts while the first
// waits, and the files are the same again.
//
// Not parallel (see TestMain): it sets testHookPhase and
// parallelTableRows.
func TestTablesWrittenAtOnce(t *testing.T) {
	in := filepath.Join(t.TempDir(), "in")
	if _, err := synth.Run(context.Background(), synth.Config{Out: in, Seeds: 2, Steps: 200, Seed: 5}); err != nil {
		t.Fatal(err)
	}
	defer func(n int) { parallelTableRows = n }(parallelTableRows)
	outs := map[string]string{}
	for _, c := range []struct {
		name       string
		conc, rows int
		overlap    bool
		waitFirst  time.Duration
	}{
		{"one goroutine", 1, parallelTableRows, false, 0},
		{"two goroutines", 2, parallelTableRows, true, 10 * time.Second},
		{"two goroutines, large tables", 2, 1, false, 500 * time.Millisecond},
	} {
		out := filepath.Join(t.TempDir(), "out")
		cfg := localJob(in, out, nil)
		cfg.Concurrency = c.conc
		parallelTableRows = c.rows
		var (
			first   sync.Once
			started = make(chan struct{}, 64) // the tables after the first
			pieces  int
			mu      sync.Mutex
			overlap bool
		)
		testHookPhase = func(p string) {
			if p != "parquet" {
				return
			}
			mu.Lock()
			pieces++
			mu.Unlock()
			isFirst := false
			first.Do(func() { isFirst = true })
			if !isFirst {
				started <- struct{}{}
				return
			}
			if c.waitFirst == 0 {
				return // one goroutine: it would wait for itself
			}
			select {
			case <-started:
				overlap = true
			case <-time.After(c.waitFirst):
			}
		}
		_, err := Run(context.Background(), cfg)
		testHookPhase = nil
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if pieces < 3 {
			t.Fatalf("%s: %d tables written, want the result's (at least 3)", c.name, pieces)
		}
		switch {
		case c.overlap && !overlap:
			t.Errorf("%s: no second table started within %v of the first: they are written one at a time", c.name, c.waitFirst)
		case !c.overlap && overlap:
			t.Errorf("%s: a second table started while the first was being written", c.name)
		}
		outs[c.name] = out
	}
	for _, k := range []string{"two goroutines", "two goroutines, large tables"} {
		sameFiles(t, outs["one goroutine"], outs[k])
	}
}

// TestTableOrder: the small tables are started costliest first (a column
// weighs as much as about 900 cells), ties in their order; the files keep
// the tables' order (TestTablesWrittenAtOnce).
func TestTableOrder(t *testing.T) {
	table := func(name string, rows, cols int) scoring.Table {
		tb := writers.NewTable()
		cs := make([]writers.Int64Column, cols)
		for k := range cs {
			cs[k] = tb.Int64(fmt.Sprintf("c%d", k))
		}
		for range rows {
			for _, c := range cs {
				c.Append(1)
			}
			if err := tb.EndRow(); err != nil {
				t.Fatal(err)
			}
		}
		return scoring.Table{Name: name, Table: tb}
	}
	// The shapes of the 1 GB sweep's warm rerun.
	tables := []scoring.Table{table("runs", 80, 29), table("intervals", 120, 18), table("run_summary", 20, 33),
		table("families", 80, 29), table("curves", 4212, 11)}
	var got []string
	for _, i := range tableOrder(tables) {
		got = append(got, tables[i].Name)
	}
	if want := []string{"curves", "run_summary", "runs", "families", "intervals"}; !slices.Equal(got, want) {
		t.Errorf("order %v, want %v", got, want)
	}
}
