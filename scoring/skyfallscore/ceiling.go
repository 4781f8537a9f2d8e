package skyfallscore

import (
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
			err = traces(func(t *skyfall.Trace) error {
				if err := lb.Add(t); err != nil {
					return &scoring.DataError{Err: err}
				}
				return nil
			})
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
