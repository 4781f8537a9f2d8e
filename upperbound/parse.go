package upperbound

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	"go.yaml.in/yaml/v3"
)

// SpecError is a problem in a reward spec file. Path is the name the caller
// gave ParseSpec and Line the 1-based line (0 when the problem has none, such
// as an empty file). Index is the 1-based position of the component
// concerned and Component its name; both are zero for the top level, and
// Component is empty while the component has no usable name.
type SpecError struct {
	Path      string
	Line      int
	Index     int
	Component string
	Msg       string
}

func (e *SpecError) Error() string {
	var b strings.Builder
	b.WriteString(e.Path)
	if e.Line > 0 {
		fmt.Fprintf(&b, ": line %d", e.Line)
	}
	switch {
	case e.Component != "":
		fmt.Fprintf(&b, ": component %q", e.Component)
	case e.Index > 0:
		fmt.Fprintf(&b, ": component #%d", e.Index)
	}
	b.WriteString(": ")
	b.WriteString(e.Msg)
	return b.String()
}

// who identifies the component an error concerns; the zero who is the top
// level.
type who struct {
	index int
	name  string
}

var (
	topKeys       = []string{"name", "components"}
	componentKeys = []string{"name", "weight", "clip", "cadence", "gate"}
)

// ParseSpec decodes a reward spec from data, strictly. path names the file
// in error messages only; nothing is read from it.
//
// The file is one YAML document holding a mapping with exactly the keys
// name and components. Each component is a mapping with name, weight, clip
// ([lo, hi], either end null for unbounded), cadence (step or episode_end)
// and an optional gate (null or a string). Every other key, a missing
// required key, a key given twice, a value of the wrong type, a clip end
// that is not a finite number, lo > hi, an unknown cadence, a component
// name used twice, an empty component list and YAML aliases are errors.
// Errors are *SpecError values naming the file, the line and the component.
func ParseSpec(path string, data []byte) (*Spec, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, &SpecError{Path: path, Msg: "empty reward spec"}
		}
		return nil, yamlError(path, err)
	}
	var extra yaml.Node
	switch err := dec.Decode(&extra); {
	case err == nil:
		return nil, &SpecError{Path: path, Line: extra.Line, Msg: "a reward spec is a single YAML document; found a second one"}
	case !errors.Is(err, io.EOF):
		return nil, yamlError(path, err)
	}
	p := parser{path: path}
	root := &doc
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		root = root.Content[0]
	}
	return p.spec(root)
}

// yamlError reports a YAML syntax error, whose text already carries the
// line ("yaml: line 4: …"), in the form of the other spec errors.
func yamlError(path string, err error) error {
	return &SpecError{Path: path, Msg: strings.TrimPrefix(err.Error(), "yaml: ")}
}

type parser struct {
	path string
}

func (p *parser) errf(n *yaml.Node, comp who, format string, args ...any) error {
	line := 0
	if n != nil {
		line = n.Line
	}
	return &SpecError{Path: p.path, Line: line, Index: comp.index, Component: comp.name, Msg: fmt.Sprintf(format, args...)}
}

// fields splits a mapping into its values by key, rejecting keys outside
// allowed, keys that are not plain strings, repeated keys and aliases.
func (p *parser) fields(m *yaml.Node, comp who, what string, allowed []string) (map[string]*yaml.Node, error) {
	if m.Kind == yaml.AliasNode {
		return nil, p.errf(m, comp, "aliases are not allowed in a reward spec")
	}
	if m.Kind != yaml.MappingNode {
		return nil, p.errf(m, comp, "%s must be a mapping, got %s", what, describe(m))
	}
	out := make(map[string]*yaml.Node, len(m.Content)/2)
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			return nil, p.errf(k, comp, "%s keys must be plain names, got %s", what, describe(k))
		}
		known := false
		for _, a := range allowed {
			if k.Value == a {
				known = true
				break
			}
		}
		if !known {
			return nil, p.errf(k, comp, "unknown key %q in %s (allowed: %s)", k.Value, what, strings.Join(allowed, ", "))
		}
		if _, dup := out[k.Value]; dup {
			return nil, p.errf(k, comp, "key %q given twice in %s", k.Value, what)
		}
		if v.Kind == yaml.AliasNode {
			return nil, p.errf(v, comp, "aliases are not allowed in a reward spec (key %q)", k.Value)
		}
		out[k.Value] = v
	}
	return out, nil
}

func (p *parser) spec(root *yaml.Node) (*Spec, error) {
	f, err := p.fields(root, who{}, "the reward spec", topKeys)
	if err != nil {
		return nil, err
	}
	s := &Spec{}
	nameNode, ok := f["name"]
	if !ok {
		return nil, p.errf(root, who{}, "missing key name")
	}
	if s.Name, err = p.str(nameNode, who{}, "name"); err != nil {
		return nil, err
	}
	compsNode, ok := f["components"]
	if !ok {
		return nil, p.errf(root, who{}, "missing key components")
	}
	if compsNode.Kind != yaml.SequenceNode {
		return nil, p.errf(compsNode, who{}, "components must be a list, got %s", describe(compsNode))
	}
	if len(compsNode.Content) == 0 {
		return nil, p.errf(compsNode, who{}, "components is empty; a reward spec needs at least one")
	}
	where := make(map[string]int, len(compsNode.Content))
	for i, cn := range compsNode.Content {
		c, err := p.component(cn, i)
		if err != nil {
			return nil, err
		}
		if first, dup := where[c.Name]; dup {
			return nil, p.errf(cn, who{i + 1, c.Name}, "name already used by the component on line %d", first)
		}
		where[c.Name] = cn.Line
		s.Components = append(s.Components, c)
	}
	return s, nil
}

func (p *parser) component(n *yaml.Node, i int) (Component, error) {
	var c Component
	// Name the component in errors about its other keys, even those that
	// come before its name.
	id := who{index: i + 1, name: peekName(n)}
	f, err := p.fields(n, id, "a component", componentKeys)
	if err != nil {
		return c, err
	}
	nameNode, ok := f["name"]
	if !ok {
		return c, p.errf(n, id, "missing key name")
	}
	if c.Name, err = p.str(nameNode, id, "name"); err != nil {
		return c, err
	}

	wn, ok := f["weight"]
	if !ok {
		return c, p.errf(n, id, "missing key weight")
	}
	if c.Weight, err = p.number(wn, id, "weight"); err != nil {
		return c, err
	}

	cl, ok := f["clip"]
	if !ok {
		return c, p.errf(n, id, "missing key clip (write [lo, hi], null for an unbounded end)")
	}
	if c.Clip, err = p.clip(cl, id); err != nil {
		return c, err
	}

	cad, ok := f["cadence"]
	if !ok {
		return c, p.errf(n, id, "missing key cadence (step or episode_end)")
	}
	cs, err := p.str(cad, id, "cadence")
	if err != nil {
		return c, err
	}
	c.Cadence = Cadence(cs)
	if !c.Cadence.Valid() {
		return c, p.errf(cad, id, "unknown cadence %q (want step or episode_end)", cs)
	}

	if g, ok := f["gate"]; ok && !isNull(g) {
		if g.Kind != yaml.ScalarNode || g.ShortTag() != "!!str" {
			return c, p.errf(g, id, "gate must be a string or null, got %s", describe(g))
		}
		if c.Gate, err = p.str(g, id, "gate"); err != nil {
			return c, err
		}
	}
	return c, nil
}

func (p *parser) clip(n *yaml.Node, comp who) (Clip, error) {
	var c Clip
	if n.Kind != yaml.SequenceNode || len(n.Content) != 2 {
		return c, p.errf(n, comp, "clip must be a list of two ends [lo, hi] (null for unbounded), got %s", describe(n))
	}
	for j, e := range n.Content {
		side := [2]string{"low", "high"}[j]
		if e.Kind == yaml.AliasNode {
			return c, p.errf(e, comp, "aliases are not allowed in a reward spec (clip %s end)", side)
		}
		if isNull(e) {
			continue
		}
		v, err := p.number(e, comp, "clip "+side+" end")
		if err != nil {
			return c, err
		}
		if j == 0 {
			c.Lo, c.HasLo = v, true
		} else {
			c.Hi, c.HasHi = v, true
		}
	}
	if c.HasLo && c.HasHi && c.Lo > c.Hi {
		return c, p.errf(n, comp, "clip low end %v exceeds high end %v", c.Lo, c.Hi)
	}
	return c, nil
}

func (p *parser) str(n *yaml.Node, comp who, key string) (string, error) {
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!str" {
		return "", p.errf(n, comp, "%s must be a string, got %s", key, describe(n))
	}
	if n.Value == "" {
		return "", p.errf(n, comp, "%s is empty", key)
	}
	return n.Value, nil
}

func (p *parser) number(n *yaml.Node, comp who, key string) (float64, error) {
	if n.Kind != yaml.ScalarNode {
		return 0, p.errf(n, comp, "%s must be a number, got %s", key, describe(n))
	}
	switch n.ShortTag() {
	case "!!int", "!!float":
	default:
		return 0, p.errf(n, comp, "%s must be a number, got %s", key, describe(n))
	}
	var v float64
	if err := n.Decode(&v); err != nil {
		return 0, p.errf(n, comp, "%s %q is not a usable number", key, n.Value)
	}
	if !finite(v) {
		return 0, p.errf(n, comp, "%s must be a finite number, got %s (use null for an unbounded clip end)", key, n.Value)
	}
	return v, nil
}

// peekName returns the first string value of a name key in mapping n, or "".
func peekName(n *yaml.Node) string {
	if n.Kind != yaml.MappingNode {
		return ""
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind == yaml.ScalarNode && k.Value == "name" && v.Kind == yaml.ScalarNode && v.ShortTag() == "!!str" {
			return v.Value
		}
	}
	return ""
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}

// describe names what a node holds, for error messages.
func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return fmt.Sprintf("a list of %d", len(n.Content))
	case yaml.AliasNode:
		return "an alias"
	case yaml.ScalarNode:
		v := n.Value
		if len(v) > 40 {
			v = v[:40] + "…"
		}
		switch n.ShortTag() {
		case "!!null":
			return "null"
		case "!!str":
			return fmt.Sprintf("the string %q", v)
		case "!!bool":
			return "the boolean " + v
		case "!!int", "!!float":
			return "the number " + v
		default:
			return fmt.Sprintf("%s %q", n.ShortTag(), v)
		}
	default:
		return "nothing"
	}
}
