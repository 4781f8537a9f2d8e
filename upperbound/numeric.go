package upperbound

import (
	"errors"
	"fmt"
	"slices"

	"github.com/crlbatch/crlbatch/protocol/stats"
)

// StepContext is what a component sees at one step of a trajectory.
type StepContext struct {
	// Step is the 0-based position of the context in its trajectory;
	// Numeric sets it, whatever the caller put there.
	Step int
	// Final marks the episode's last step. Episode-end components pay only
	// on final contexts.
	Final bool
	// Values holds the step's observation-like readings by name. It is
	// shared with the caller: evaluators must not modify it.
	Values map[string]float64
}

// Evaluator computes one component's raw value (before clipping and
// weighting) at successive steps of one trajectory. It may keep state
// between calls.
type Evaluator func(ctx StepContext) (float64, error)

// ComponentFactory makes a fresh Evaluator. Numeric calls it once per
// component and trajectory, so state never leaks from one trajectory into
// the next.
type ComponentFactory func() Evaluator

// ComponentRegistry maps component names to the Go functions that compute
// them. Register everything before use; after that a registry may be read
// from several goroutines at once.
type ComponentRegistry struct {
	m map[string]ComponentFactory
}

// NewComponentRegistry returns an empty registry.
func NewComponentRegistry() *ComponentRegistry {
	return &ComponentRegistry{m: map[string]ComponentFactory{}}
}

// Register adds a component. An empty name, a nil factory or a name already
// registered is an error.
func (r *ComponentRegistry) Register(name string, f ComponentFactory) error {
	if name == "" {
		return errors.New("upperbound: component with an empty name")
	}
	if f == nil {
		return fmt.Errorf("upperbound: component %q has a nil factory", name)
	}
	if _, dup := r.m[name]; dup {
		return fmt.Errorf("upperbound: component %q is already registered", name)
	}
	r.m[name] = f
	return nil
}

// Lookup returns the factory registered under name.
func (r *ComponentRegistry) Lookup(name string) (ComponentFactory, bool) {
	if r == nil {
		return nil, false
	}
	f, ok := r.m[name]
	return f, ok
}

// Names lists the registered components, sorted.
func (r *ComponentRegistry) Names() []string {
	if r == nil {
		return nil
	}
	out := make([]string, 0, len(r.m))
	for name := range r.m {
		out = append(out, name)
	}
	slices.Sort(out)
	return out
}

// ValueComponent is a stateless component whose value is the context's
// reading named key; a context without that reading is an error.
func ValueComponent(key string) ComponentFactory {
	return func() Evaluator {
		return func(ctx StepContext) (float64, error) {
			v, ok := ctx.Values[key]
			if !ok {
				return 0, fmt.Errorf("no value %q in the step context", key)
			}
			return v, nil
		}
	}
}

// NumericOptions tunes Numeric.
type NumericOptions struct {
	// Quantile, when set, replaces the best with this quantile (in [0, 1],
	// linear interpolation as numpy's default) for both PerStep and
	// FinalStep. Nil means 1, the best.
	Quantile *float64
}

// Numeric drives the spec's components over trajectories of step contexts
// and takes the best reward they score. Each trajectory runs in order with
// fresh evaluators from reg. The reward at a context is the sum, in spec
// order, of weight·clip(value) over the step components and, on a final
// context, the episode-end components too; every evaluator is called at
// every context, so a stateful one sees the whole trajectory.
//
// PerStep is the best (or the quantile) over non-final contexts and
// FinalStep over final ones; when only one kind is supplied both take its
// value. The result bounds the reward only as far as the contexts represent
// perfect play. No context at all, a component missing from reg, an
// evaluator error or a non-finite value is an error.
func Numeric(spec *Spec, reg *ComponentRegistry, trajectories [][]StepContext, opts NumericOptions) (Bound, error) {
	if err := spec.Validate(); err != nil {
		return Bound{}, err
	}
	q, err := resolveQuantile(opts.Quantile)
	if err != nil {
		return Bound{}, err
	}
	factories := make([]ComponentFactory, len(spec.Components))
	for i, c := range spec.Components {
		f, ok := reg.Lookup(c.Name)
		if !ok {
			return Bound{}, fmt.Errorf("reward spec %q: component %q has no registered function (registered: %v)", spec.Name, c.Name, reg.Names())
		}
		factories[i] = f
	}
	var steps, finals []float64
	evals := make([]Evaluator, len(spec.Components))
	for ti, traj := range trajectories {
		for i, f := range factories {
			evals[i] = f()
			if evals[i] == nil {
				return Bound{}, fmt.Errorf("reward spec %q: component %q: factory returned a nil evaluator", spec.Name, spec.Components[i].Name)
			}
		}
		for si, ctx := range traj {
			ctx.Step = si
			r := 0.0
			for i, c := range spec.Components {
				v, err := evals[i](ctx)
				if err != nil {
					return Bound{}, fmt.Errorf("reward spec %q: component %q: trajectory %d, step %d: %w", spec.Name, c.Name, ti, si, err)
				}
				if !finite(v) {
					return Bound{}, fmt.Errorf("reward spec %q: component %q: trajectory %d, step %d: value %v is not finite", spec.Name, c.Name, ti, si, v)
				}
				if c.Cadence == CadenceEpisodeEnd && !ctx.Final {
					continue
				}
				r += float64(c.Weight * c.Clip.Apply(v))
			}
			if ctx.Final {
				finals = append(finals, r)
			} else {
				steps = append(steps, r)
			}
		}
	}
	if len(steps) == 0 && len(finals) == 0 {
		return Bound{}, fmt.Errorf("reward spec %q: numeric bound over no step contexts", spec.Name)
	}
	per, fin := splitBest(steps, finals, q)
	return Bound{PerStep: per, FinalStep: fin, Derivation: DerivationNumeric, Spec: spec.Name, Quantile: q}, nil
}

// splitBest takes the q-quantile of each kind; a kind with no values takes
// the other's.
func splitBest(steps, finals []float64, q float64) (per, fin float64) {
	switch {
	case len(steps) == 0:
		fin = quantileOf(finals, q)
		return fin, fin
	case len(finals) == 0:
		per = quantileOf(steps, q)
		return per, per
	}
	return quantileOf(steps, q), quantileOf(finals, q)
}

// quantileOf sorts vals in place and returns its q-quantile.
func quantileOf(vals []float64, q float64) float64 {
	slices.Sort(vals)
	return stats.Quantile(vals, q)
}

func resolveQuantile(q *float64) (float64, error) {
	if q == nil {
		return 1, nil
	}
	if !(*q >= 0 && *q <= 1) {
		return 0, fmt.Errorf("quantile %v is outside [0, 1]", *q)
	}
	return *q, nil
}
