package contilabscore

import (
	"fmt"

	"github.com/crlbatch/crlbatch/protocol/contilab"
	"github.com/crlbatch/crlbatch/readers"
)

// readRun reads the rows of a run. A record repeated within the run is an
// error naming both rows (the protocol package refuses it too, without
// knowing where rows came from).
func readRun(rr *readers.RecordRun) (*contilab.Run, error) {
	run := &contilab.Run{Key: rr.Key, Meta: rr.Meta}
	type seenAt struct {
		url  string
		line int
	}
	seen := map[string]seenAt{}
	for _, r := range rr.Rows {
		before := len(run.Matrix) + len(run.Initial) + len(run.Joint) + len(run.Stream) + len(run.Curve) + len(run.Diags)
		if err := addRow(r, run); err != nil {
			return nil, err
		}
		if len(run.Matrix)+len(run.Initial)+len(run.Joint)+len(run.Stream)+len(run.Curve)+len(run.Diags) == before {
			continue
		}
		var key string
		switch kind, _, _ := r.String("kind"); kind {
		case "matrix":
			e := run.Matrix[len(run.Matrix)-1]
			key = fmt.Sprintf("matrix cell (after_task %d, eval_task %d)", e.AfterTask, e.EvalTask)
		case "initial":
			key = fmt.Sprintf("initial accuracy of eval_task %d", run.Initial[len(run.Initial)-1].EvalTask)
		case "joint":
			key = fmt.Sprintf("joint accuracy of eval_task %d", run.Joint[len(run.Joint)-1].EvalTask)
		case "stream":
			e := run.Stream[len(run.Stream)-1]
			key = fmt.Sprintf("stream point (step %d, eval_task %d)", e.Step, e.EvalTask)
		case "curve":
			e := run.Curve[len(run.Curve)-1]
			key = fmt.Sprintf("curve point (task %d, batch %d)", e.Task, e.Batch)
		case "diag":
			e := run.Diags[len(run.Diags)-1]
			key = fmt.Sprintf("diagnostic %q of task %d", e.Name, e.Task)
		}
		if prev, dup := seen[key]; dup {
			return nil, r.Errorf("kind", "run %s: the %s is recorded twice (first at %s line %d)", rr.Key, key, prev.url, prev.line)
		}
		seen[key] = seenAt{r.URL(), r.Line()}
	}
	return run, nil
}

// addRow adds one row to run. It is also the decoder's row check (on a
// throwaway run), so that a bad field is a bad row naming object and line.
func addRow(r *readers.Record, run *contilab.Run) error {
	kind, ok, err := r.String("kind")
	if err != nil {
		return err
	} else if !ok {
		return r.MissingError("kind", "string")
	}
	num := func(f string) (float64, error) {
		v, ok, err := r.Number(f)
		switch {
		case err != nil:
		case !ok:
			err = r.MissingError(f, "number")
		case f == "acc" && v < 0:
			err = r.Errorf(f, "negative accuracy %v", v)
		}
		return v, err
	}
	integer := func(f string) (int64, error) {
		v, ok, err := r.Int(f)
		if err == nil && !ok {
			err = r.MissingError(f, "integer")
		}
		return v, err
	}
	ints := func(fs ...string) ([]int, error) {
		out := make([]int, len(fs))
		for i, f := range fs {
			v, err := integer(f)
			if err != nil {
				return nil, err
			}
			if v < 0 || v > contilab.MaxIndex {
				return nil, r.Errorf(f, "task and batch indices run from 0 to %d, got %d", contilab.MaxIndex, v)
			}
			out[i] = int(v)
		}
		return out, nil
	}
	switch kind {
	case "matrix":
		ix, err := ints("after_task", "eval_task")
		if err != nil {
			return err
		}
		acc, err := num("acc")
		if err != nil {
			return err
		}
		run.Matrix = append(run.Matrix, contilab.MatrixEntry{AfterTask: ix[0], EvalTask: ix[1], Acc: acc})
	case "initial", "joint":
		ix, err := ints("eval_task")
		if err != nil {
			return err
		}
		acc, err := num("acc")
		if err != nil {
			return err
		}
		if kind == "initial" {
			run.Initial = append(run.Initial, contilab.InitialEntry{EvalTask: ix[0], Acc: acc})
		} else {
			run.Joint = append(run.Joint, contilab.JointEntry{EvalTask: ix[0], Acc: acc})
		}
	case "stream":
		step, err := integer("step")
		if err != nil {
			return err
		}
		ix, err := ints("train_task", "eval_task")
		if err != nil {
			return err
		}
		acc, err := num("acc")
		if err != nil {
			return err
		}
		run.Stream = append(run.Stream, contilab.StreamPoint{Step: step, TrainTask: ix[0], EvalTask: ix[1], Acc: acc})
	case "curve":
		ix, err := ints("task", "batch")
		if err != nil {
			return err
		}
		acc, err := num("acc")
		if err != nil {
			return err
		}
		run.Curve = append(run.Curve, contilab.CurvePoint{Task: ix[0], Batch: ix[1], Acc: acc})
	case "diag":
		name, ok, err := r.String("name")
		if err != nil {
			return err
		} else if !ok {
			return r.MissingError("name", "string")
		}
		ix, err := ints("task")
		if err != nil {
			return err
		}
		v, err := num("value")
		if err != nil {
			return err
		}
		run.Diags = append(run.Diags, contilab.Diag{Name: name, Task: ix[0], Value: v})
	default:
		return r.Errorf("kind", "unknown kind %q (want matrix, initial, joint, stream, curve or diag)", kind)
	}
	return nil
}
