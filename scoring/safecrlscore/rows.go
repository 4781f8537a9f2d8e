package safecrlscore

import (
	"github.com/crlbatch/crlbatch/protocol/safecrl"
	"github.com/crlbatch/crlbatch/readers"
)

// readRun reads the rows of a run as its episodes, in row order.
func readRun(rr *readers.RecordRun) (*safecrl.Run, error) {
	run := &safecrl.Run{Key: rr.Key, Meta: rr.Meta, Episodes: make([]safecrl.Episode, 0, len(rr.Rows))}
	for _, r := range rr.Rows {
		e, err := episode(r)
		if err != nil {
			return nil, err
		}
		run.Episodes = append(run.Episodes, e)
	}
	return run, nil
}

// episode reads one row: task and return required, episode, cost and
// success optional. It is also the decoder's row check, so that a field of
// the wrong type or a missing one is a bad row naming its object and line.
func episode(r *readers.Record) (safecrl.Episode, error) {
	var e safecrl.Episode
	var ok bool
	var err error
	if e.Task, ok, err = r.String("task"); err != nil {
		return e, err
	} else if !ok {
		return e, r.MissingError("task", "string")
	}
	if e.Episode, e.HasEpisode, err = r.Int("episode"); err != nil {
		return e, err
	}
	if e.Return, ok, err = r.Number("return"); err != nil {
		return e, err
	} else if !ok {
		return e, r.MissingError("return", "number")
	}
	if e.Cost, e.HasCost, err = r.Number("cost"); err != nil {
		return e, err
	}
	if e.Success, e.HasSuccess, err = r.BoolOrNumber01("success"); err != nil {
		return e, err
	}
	return e, nil
}
