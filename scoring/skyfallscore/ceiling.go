package skyfallscore

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/crlbatch/crlbatch/protocol/skyfall"
	"github.com/crlbatch/crlbatch/scoring"
	"github.com/crlbatch/crlbatch/upperbound"
)

// ceilingInfo describes the ceiling in force, for crlbatch.params and the
// report.
type ceilingInfo struct {
	Derivation string             `json:"derivation"`
	Source     string             `json:"source"`
	Value      *float64           `json:"value,omitempty"`
	PerStep    *float64           `json:"per_step,omitempty"`
	FinalStep  *float64           `json:"final_step,omitempty"`
	Values     map[string]float64 `json:"values,omitempty"`
}

// Prepare builds R_ub from the configured source, through upperbound's
// derivations: a ceiling derived from the data (per label, from a spec and
// the rows, or the best reward observed) takes one pass over the runs kept.
func (j *job) Prepare(each func(fn func(*scoring.Run) error) error) error {
	cfg := &j.cfg
	traces := func(fn func(t *skyfall.Trace) error) error {
		return each(func(r *scoring.Run) error { return fn(r.Data.(*skyfall.Trace)) })
	}
	switch {
	case cfg.BoundScalar != nil:
		x := *cfg.BoundScalar
		j.p.Ceiling = skyfall.ScalarCeiling(x, upperbound.DerivationExplicit)
		j.info = &ceilingInfo{Derivation: upperbound.DerivationExplicit, Source: "--bound", Value: &x}
	case cfg.BoundMap != nil:
		// A label missing from the map fails the run that has it, as a
		// usage error, when it is scored.
		j.p.Ceiling = skyfall.MapCeiling(cfg.BoundMap, upperbound.DerivationExplicit)
		j.info = &ceilingInfo{Derivation: upperbound.DerivationExplicit, Source: "--bound-map " + cfg.BoundMapURL, Values: cfg.BoundMap}
	case cfg.CeilingMode == CeilingDataRelative:
		// The best reward observed per label over every run kept.
		d := upperbound.NewDataRelativeLabels()
		if err := traces(func(t *skyfall.Trace) error { d.Add(t); return nil }); err != nil {
			return err
		}
		m := d.Map()
		j.p.Ceiling = skyfall.MapCeiling(m, upperbound.DerivationDataRelative)
		j.info = &ceilingInfo{Derivation: upperbound.DerivationDataRelative, Source: "--ceiling data_relative", Values: m}
	case cfg.Spec != nil:
		b, err := upperbound.Derive(upperbound.DerivationAnalytic, upperbound.Request{Spec: cfg.Spec})
		if err != nil {
			return scoring.Usagef("--spec %s: %v", cfg.SpecName, err)
		}
		ps, fs := b.PerStep, b.FinalStep
		info := &ceilingInfo{Derivation: b.Derivation, PerStep: &ps, FinalStep: &fs}
		switch cfg.CeilingMode {
		case CeilingPerStep:
			info.Source = "--spec " + cfg.SpecName + " --ceiling per_step"
			info.Value = &ps
			j.p.Ceiling = skyfall.ScalarCeiling(ps, b.Derivation)
		case CeilingFinalStep:
			info.Source = "--spec " + cfg.SpecName + " --ceiling final_step"
			info.Value = &fs
			j.p.Ceiling = skyfall.ScalarCeiling(fs, b.Derivation)
		default:
			lb, err := upperbound.NewLabelBounds(b, cfg.Spec)
			if err != nil {
				return &scoring.DataError{Err: err}
			}
			// The decoder may hand over each run's counts rather than
			// the run (decoder.AssembleLight).
			j.dec.counting = lb
			err = each(func(r *scoring.Run) error {
				if c, ok := r.Data.(*countedRun); ok {
					lb.AddParts(c.parts)
					return nil
				}
				if err := lb.Add(r.Data.(*skyfall.Trace)); err != nil {
					return &scoring.DataError{Err: err}
				}
				return nil
			})
			j.dec.counting = nil
			if err != nil {
				return err
			}
			lb.Finish()
			info.Source = "--spec " + cfg.SpecName + " --ceiling by_configuration"
			info.Values = lb.Map()
			j.p.Ceiling = skyfall.MapCeiling(info.Values, b.Derivation)
		}
		j.info = info
	}
	return nil
}

// The preparation replayed from each run's contribution (scoring.Contributor,
// for --cache's scored runs): by_configuration keeps a run's rows and final
// steps per label, data_relative its best reward per label; the other
// sources look at no run.

// labelCount is one label's share of a run in by_configuration.
type labelCount struct {
	L string `json:"l"`
	R int    `json:"r"`
	F int    `json:"f"`
}

// labelBest is one label's best reward in a run (data_relative), as bits.
type labelBest struct {
	L string `json:"l"`
	B uint64 `json:"b"`
}

// needsRuns reports whether Prepare looks at the runs, and how.
func (j *job) needsRuns() string {
	cfg := &j.cfg
	switch {
	case cfg.BoundScalar != nil, cfg.BoundMap != nil:
		return ""
	case cfg.CeilingMode == CeilingDataRelative:
		return CeilingDataRelative
	case cfg.Spec != nil && cfg.CeilingMode != CeilingPerStep && cfg.CeilingMode != CeilingFinalStep:
		return CeilingByConfiguration
	}
	return ""
}

// newLabelBounds starts by_configuration's counts, as Prepare does.
func (j *job) newLabelBounds() (*upperbound.LabelBounds, upperbound.Bound, error) {
	b, err := upperbound.Derive(upperbound.DerivationAnalytic, upperbound.Request{Spec: j.cfg.Spec})
	if err != nil {
		return nil, b, scoring.Usagef("--spec %s: %v", j.cfg.SpecName, err)
	}
	lb, err := upperbound.NewLabelBounds(b, j.cfg.Spec)
	if err != nil {
		return nil, b, &scoring.DataError{Err: err}
	}
	return lb, b, nil
}

// Contribution encodes what run adds to Prepare's pass.
func (j *job) Contribution(run *scoring.Run) ([]byte, error) {
	t := run.Data.(*skyfall.Trace)
	switch j.needsRuns() {
	case CeilingByConfiguration:
		lb, _, err := j.newLabelBounds()
		if err != nil {
			return nil, err
		}
		if err := lb.Add(t); err != nil {
			return nil, &scoring.DataError{Err: err}
		}
		out := make([]labelCount, len(lb.Labels))
		for i, l := range lb.Labels {
			out[i] = labelCount{L: l.Label, R: l.Rows, F: l.FinalRows}
		}
		return json.Marshal(out)
	case CeilingDataRelative:
		d := upperbound.NewDataRelativeLabels()
		d.Add(t)
		m := d.Map()
		out := make([]labelBest, len(d.Labels()))
		for i, l := range d.Labels() {
			out[i] = labelBest{L: l, B: math.Float64bits(m[l])}
		}
		return json.Marshal(out)
	}
	return nil, nil
}

// PrepareFrom prepares from the runs' contributions, exactly as Prepare.
func (j *job) PrepareFrom(each func(fn func([]byte) error) error) error {
	switch j.needsRuns() {
	case CeilingByConfiguration:
		lb, b, err := j.newLabelBounds()
		if err != nil {
			return err
		}
		err = each(func(c []byte) error {
			var lcs []labelCount
			if err := json.Unmarshal(c, &lcs); err != nil {
				return fmt.Errorf("skyfall: not a contribution to by_configuration: %w", err)
			}
			for _, l := range lcs {
				lb.AddCounts(l.L, l.R, l.F)
			}
			return nil
		})
		if err != nil {
			return err
		}
		lb.Finish()
		ps, fs := b.PerStep, b.FinalStep
		info := &ceilingInfo{Derivation: b.Derivation, PerStep: &ps, FinalStep: &fs,
			Source: "--spec " + j.cfg.SpecName + " --ceiling by_configuration", Values: lb.Map()}
		j.p.Ceiling = skyfall.MapCeiling(info.Values, b.Derivation)
		j.info = info
		return nil
	case CeilingDataRelative:
		d := upperbound.NewDataRelativeLabels()
		err := each(func(c []byte) error {
			var lbs []labelBest
			if err := json.Unmarshal(c, &lbs); err != nil {
				return fmt.Errorf("skyfall: not a contribution to data_relative: %w", err)
			}
			for _, l := range lbs {
				d.AddBest(l.L, math.Float64frombits(l.B))
			}
			return nil
		})
		if err != nil {
			return err
		}
		m := d.Map()
		j.p.Ceiling = skyfall.MapCeiling(m, upperbound.DerivationDataRelative)
		j.info = &ceilingInfo{Derivation: upperbound.DerivationDataRelative, Source: "--ceiling data_relative", Values: m}
		return nil
	}
	return j.Prepare(func(func(*scoring.Run) error) error {
		return errors.New("skyfall: the preparation asked for runs it does not need")
	})
}

// PreparedFor encodes the ceilings of the labels of the run with this
// contribution (nil when the ceiling comes from the flags alone).
func (j *job) PreparedFor(c []byte) ([]byte, error) {
	if j.needsRuns() == "" {
		return nil, nil
	}
	// Both contributions list the run's labels under "l".
	var labels []struct {
		L string `json:"l"`
	}
	if err := json.Unmarshal(c, &labels); err != nil {
		return nil, fmt.Errorf("skyfall: not a contribution: %w", err)
	}
	out := []byte(j.info.Derivation)
	for _, l := range labels {
		v, ok := j.info.Values[l.L]
		out = strconv.AppendQuote(append(out, ' '), l.L)
		if ok {
			out = strconv.AppendUint(append(out, '='), math.Float64bits(v), 16)
		} else {
			out = append(out, "=none"...)
		}
	}
	return out, nil
}

var _ scoring.Contributor = (*job)(nil)

// Reapply brings a run scored under other ceilings to the ceilings of
// this job's preparation (scoring.Reapplier): the labels' upper bounds and
// performance gaps (skyfall.Receil) and the run's seed values of those
// metrics (skyfall.CeilingMetrics), as Score computes them. With --anchor ceiling it
// cannot (adaptation and recovery need the rows).
func (j *job) Reapply(s *scoring.Scored, _ []byte) (bool, error) {
	res, ok := s.Result.(*skyfall.RunResult)
	if !ok || s.Values == nil || !skyfall.Receil(res, &j.p) {
		return false, nil
	}
	for _, m := range skyfall.CeilingMetrics {
		s.Values[m] = res.SeedValue(m)
	}
	return true, nil
}

var _ scoring.Reapplier = (*job)(nil)
