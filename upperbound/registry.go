package upperbound

import (
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/crlbatch/crlbatch/protocol/skyfall"
)

// Request carries everything a derivation may need. Each derivation reads
// the fields it uses and ignores the rest.
type Request struct {
	// Spec is the reward spec (analytic, numeric; optional for
	// data_relative, where it identifies final steps).
	Spec *Spec
	// Components and Trajectories drive the numeric derivation.
	Components   *ComponentRegistry
	Trajectories [][]StepContext
	// Traces are the recorded runs of the data_relative derivation.
	Traces []*skyfall.Trace
	// Label restricts data_relative to one label.
	Label *string
	// Quantile replaces the best in numeric and data_relative; nil means 1.
	Quantile *float64
	// Params holds free-form settings for registered derivations; the
	// built-in ones ignore it.
	Params map[string]string
}

// DerivationFunc derives a bound from a request.
type DerivationFunc func(Request) (Bound, error)

var derivations = struct {
	sync.RWMutex
	m map[string]DerivationFunc
}{m: map[string]DerivationFunc{
	DerivationAnalytic: func(r Request) (Bound, error) {
		if r.Spec == nil {
			return Bound{}, errors.New("analytic bound needs a reward spec")
		}
		return Analytic(r.Spec)
	},
	DerivationNumeric: func(r Request) (Bound, error) {
		if r.Spec == nil {
			return Bound{}, errors.New("numeric bound needs a reward spec")
		}
		return Numeric(r.Spec, r.Components, r.Trajectories, NumericOptions{Quantile: r.Quantile})
	},
	DerivationDataRelative: func(r Request) (Bound, error) {
		return DataRelative(r.Traces, DataRelativeOptions{Spec: r.Spec, Label: r.Label, Quantile: r.Quantile})
	},
}}

// RegisterDerivation makes a derivation available to Derive under name. The
// built-in names (analytic, numeric, data_relative) and explicit cannot be
// replaced; registering a name twice, an empty name or a nil function is an
// error. It is safe to call from several goroutines.
func RegisterDerivation(name string, f DerivationFunc) error {
	if name == "" {
		return errors.New("upperbound: derivation with an empty name")
	}
	if f == nil {
		return fmt.Errorf("upperbound: derivation %q is nil", name)
	}
	if builtin(name) {
		return fmt.Errorf("upperbound: derivation %q is built in and cannot be replaced", name)
	}
	if name == DerivationExplicit {
		return fmt.Errorf("upperbound: derivation name %q is reserved for explicit bounds", name)
	}
	derivations.Lock()
	defer derivations.Unlock()
	if _, dup := derivations.m[name]; dup {
		return fmt.Errorf("upperbound: derivation %q is already registered", name)
	}
	derivations.m[name] = f
	return nil
}

// Derivations lists the registered derivation names, sorted.
func Derivations() []string {
	derivations.RLock()
	defer derivations.RUnlock()
	out := make([]string, 0, len(derivations.m))
	for name := range derivations.m {
		out = append(out, name)
	}
	slices.Sort(out)
	return out
}

// Derive looks name up among the derivations and runs it. The bound it returns
// records name as its derivation, whatever the function put there.
func Derive(name string, req Request) (Bound, error) {
	derivations.RLock()
	f, ok := derivations.m[name]
	derivations.RUnlock()
	if !ok {
		return Bound{}, fmt.Errorf("unknown bound derivation %q (known: %v)", name, Derivations())
	}
	b, err := f(req)
	if err != nil {
		if builtin(name) {
			return Bound{}, err // the built-ins' errors already say what failed
		}
		return Bound{}, fmt.Errorf("bound derivation %q: %w", name, err)
	}
	b.Derivation = name
	return b, nil
}

func builtin(name string) bool {
	return name == DerivationAnalytic || name == DerivationNumeric || name == DerivationDataRelative
}
