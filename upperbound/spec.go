package upperbound

import (
	"errors"
	"fmt"
	"math"
	"strconv"

	"go.yaml.in/yaml/v3"
)

// Cadence says when a reward component can pay.
type Cadence string

const (
	// CadenceStep components can pay on every step, the episode's last
	// included.
	CadenceStep Cadence = "step"
	// CadenceEpisodeEnd components pay only on a step that ends an episode.
	CadenceEpisodeEnd Cadence = "episode_end"
)

// Valid reports whether c is one of the known cadences.
func (c Cadence) Valid() bool { return c == CadenceStep || c == CadenceEpisodeEnd }

// Clip is the range a component's raw value is clipped to before it is
// weighted. An end that is not set (HasLo or HasHi false) is unbounded on
// that side; the zero Clip is unbounded on both sides.
type Clip struct {
	Lo, Hi       float64
	HasLo, HasHi bool
}

// Apply clips v to the range.
func (c Clip) Apply(v float64) float64 {
	if c.HasLo && v < c.Lo {
		v = c.Lo
	}
	if c.HasHi && v > c.Hi {
		v = c.Hi
	}
	return v
}

// Component is one weighted term of a reward specification.
type Component struct {
	Name    string
	Weight  float64
	Clip    Clip
	Cadence Cadence
	// Gate names the condition that gates the term, or is empty when the
	// term is ungated. Gating can switch a term off but not boost it, so
	// the bounds of this package leave it out.
	Gate string
}

// Spec is a reward specification: the reward of a step is the sum, in this
// order, of weight·clip(value) over its components.
type Spec struct {
	Name       string
	Components []Component
}

// Validate checks a Spec built in code against the rules ParseSpec enforces
// on a file: a name, at least one component, and for every component a
// unique non-empty name, a finite weight, finite clip ends with lo ≤ hi and
// a known cadence.
func (s *Spec) Validate() error {
	if s == nil {
		return errors.New("reward spec is nil")
	}
	if s.Name == "" {
		return errors.New("reward spec has no name")
	}
	if len(s.Components) == 0 {
		return fmt.Errorf("reward spec %q has no components", s.Name)
	}
	seen := make(map[string]bool, len(s.Components))
	for i, c := range s.Components {
		if c.Name == "" {
			return fmt.Errorf("reward spec %q: component %d has no name", s.Name, i+1)
		}
		if seen[c.Name] {
			return fmt.Errorf("reward spec %q: component %q is defined twice", s.Name, c.Name)
		}
		seen[c.Name] = true
		if !finite(c.Weight) {
			return fmt.Errorf("reward spec %q: component %q: weight %v is not finite", s.Name, c.Name, c.Weight)
		}
		if c.Clip.HasLo && !finite(c.Clip.Lo) || c.Clip.HasHi && !finite(c.Clip.Hi) {
			return fmt.Errorf("reward spec %q: component %q: clip ends must be finite numbers (leave an end unset for unbounded)", s.Name, c.Name)
		}
		if c.Clip.HasLo && c.Clip.HasHi && c.Clip.Lo > c.Clip.Hi {
			return fmt.Errorf("reward spec %q: component %q: clip low end %v exceeds high end %v", s.Name, c.Name, c.Clip.Lo, c.Clip.Hi)
		}
		if !c.Cadence.Valid() {
			return fmt.Errorf("reward spec %q: component %q: unknown cadence %q (want step or episode_end)", s.Name, c.Name, c.Cadence)
		}
	}
	return nil
}

// EpisodeEndComponents lists the spec's episode_end components by name, in
// spec order, or nil when it has none (or spec is nil). A
// recorded row with a nonzero contribution from one of them is an episode's
// last step.
func EpisodeEndComponents(spec *Spec) []string {
	if spec == nil {
		return nil
	}
	var out []string
	for _, c := range spec.Components {
		if c.Cadence == CadenceEpisodeEnd {
			out = append(out, c.Name)
		}
	}
	return out
}

// Encode renders the spec as YAML that ParseSpec reads back to an equal
// Spec. Keys come in the documented order; unbounded clip ends are null; a
// component without a gate has no gate key.
func (s *Spec) Encode() ([]byte, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	comps := &yaml.Node{Kind: yaml.SequenceNode}
	for _, c := range s.Components {
		clip := &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle,
			Content: []*yaml.Node{clipEnd(c.Clip.Lo, c.Clip.HasLo), clipEnd(c.Clip.Hi, c.Clip.HasHi)}}
		m := &yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{
			str("name"), str(c.Name),
			str("weight"), num(c.Weight),
			str("clip"), clip,
			str("cadence"), str(string(c.Cadence)),
		}}
		if c.Gate != "" {
			m.Content = append(m.Content, str("gate"), str(c.Gate))
		}
		comps.Content = append(comps.Content, m)
	}
	doc := &yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{
		str("name"), str(s.Name),
		str("components"), comps,
	}}
	return yaml.Marshal(doc)
}

func str(s string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s} }

func num(v float64) *yaml.Node {
	t := strconv.FormatFloat(v, 'g', -1, 64)
	// FormatFloat writes integral values without a point ("1", "-0");
	// add one so that the text resolves to a float and -0 keeps its sign.
	plain := true
	for _, r := range t {
		if r == '.' || r == 'e' || r == 'E' {
			plain = false
			break
		}
	}
	if plain {
		t += ".0"
	}
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!float", Value: t}
}

func clipEnd(v float64, ok bool) *yaml.Node {
	if !ok {
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: "null"}
	}
	return num(v)
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
