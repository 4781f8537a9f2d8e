package skillshiftscore

import (
	"github.com/crlbatch/crlbatch/protocol/skillshift"
	"github.com/crlbatch/crlbatch/readers"
)

// readRun reads the rows of a run as its tasks, in row order.
func readRun(rr *readers.RecordRun) (*skillshift.Run, error) {
	run := &skillshift.Run{Key: rr.Key, Meta: rr.Meta, Tasks: make([]skillshift.Task, 0, len(rr.Rows))}
	for _, r := range rr.Rows {
		t, err := task(r)
		if err != nil {
			return nil, err
		}
		run.Tasks = append(run.Tasks, t)
	}
	return run, nil
}

// task reads one row. It is also the decoder's row check, so that a bad
// field is a bad row naming its object and line.
func task(r *readers.Record) (skillshift.Task, error) {
	var t skillshift.Task
	str := func(f string, required bool) (string, error) {
		s, ok, err := r.String(f)
		if err == nil && !ok && required {
			err = r.MissingError(f, "string")
		}
		return s, err
	}
	var err error
	if t.UID, err = str("uid", false); err != nil {
		return t, err
	}
	if t.Site, err = str("site", true); err != nil {
		return t, err
	}
	if t.Condition, err = str("condition", true); err != nil {
		return t, err
	}
	s, ok, err := r.BoolOrNumber01("success")
	if err != nil {
		return t, err
	} else if !ok {
		return t, r.MissingError("success", "boolean")
	}
	t.Success = s == 1
	if t.Steps, ok, err = r.Number("steps"); err != nil {
		return t, err
	} else if !ok {
		return t, r.MissingError("steps", "number")
	}
	if t.SkillCalls, t.HasSkillCalls, err = r.Number("skill_calls"); err != nil {
		return t, err
	}
	if t.SkillFailures, t.HasSkillFailures, err = r.Number("skill_failures"); err != nil {
		return t, err
	}
	// The checks skillshift.Score makes on one task, made here too so that
	// the error names the object and line.
	switch {
	case t.Site == "":
		return t, r.Errorf("site", "empty site")
	case t.Condition == "":
		return t, r.Errorf("condition", "empty condition")
	case t.Steps < 0:
		return t, r.Errorf("steps", "negative step count %v", t.Steps)
	case t.HasSkillCalls && t.SkillCalls < 0:
		return t, r.Errorf("skill_calls", "negative count %v", t.SkillCalls)
	case t.HasSkillFailures && t.SkillFailures < 0:
		return t, r.Errorf("skill_failures", "negative count %v", t.SkillFailures)
	case t.HasSkillFailures && !t.HasSkillCalls:
		return t, r.Errorf("skill_failures", "recorded without skill_calls")
	case t.HasSkillFailures && t.SkillFailures > t.SkillCalls:
		return t, r.Errorf("skill_failures", "%v failures exceed %v skill calls", t.SkillFailures, t.SkillCalls)
	}
	return t, nil
}
