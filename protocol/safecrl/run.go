package safecrl

import (
	"fmt"
	"math"
)

// Episode is one row: a finished episode of the run.
type Episode struct {
	// Task names the task the episode ran on; visits are built from it.
	Task string
	// Episode is the writer's episode number, kept for reference and never
	// used to reorder rows. HasEpisode is false when the row had none.
	Episode    int64
	HasEpisode bool
	// Return is the episode's undiscounted return. Required and finite.
	Return float64
	// Cost is the episode's total safety cost; HasCost is false when the row
	// recorded none, and the row is then left out of the cost metrics.
	Cost    float64
	HasCost bool
	// Success is 0 or 1 (a reader turns a recorded false/true into 0/1);
	// HasSuccess is false when the row recorded none, and the row is then
	// left out of the success metrics.
	Success    float64
	HasSuccess bool
}

// Run is one run: its key, its metadata and its episodes in training order.
type Run struct {
	Key      string
	Meta     map[string]string
	Episodes []Episode
}

// Validate reports the first row that Score cannot take: a return or cost
// that is not finite, or a success other than 0 or 1. Rows count from 0.
func (r *Run) Validate() error {
	for i := range r.Episodes {
		e := &r.Episodes[i]
		switch {
		case math.IsNaN(e.Return) || math.IsInf(e.Return, 0):
			return fmt.Errorf("run %s: row %d (task %q): return %v is not finite", r.Key, i, e.Task, e.Return)
		case e.HasCost && (math.IsNaN(e.Cost) || math.IsInf(e.Cost, 0)):
			return fmt.Errorf("run %s: row %d (task %q): cost %v is not finite", r.Key, i, e.Task, e.Cost)
		case e.HasSuccess && e.Success != 0 && e.Success != 1:
			return fmt.Errorf("run %s: row %d (task %q): success %v: want 0 or 1", r.Key, i, e.Task, e.Success)
		}
	}
	return nil
}
