package scoring

// Values are flag values held in a map, defaults taken from a protocol's
// declared flags: for tests, and for engines without a command line.
type Values struct {
	flags map[string]Flag
	set   map[string]any
}

// DefaultValues returns the defaults of p's flags, none set.
func DefaultValues(p Protocol) *Values {
	v := &Values{flags: map[string]Flag{}, set: map[string]any{}}
	for _, f := range p.Describe().Flags {
		v.flags[f.Name] = f
	}
	return v
}

// Set sets a flag: x is a string, float64, int, bool or []string by its
// kind. Setting an undeclared flag panics.
func (v *Values) Set(name string, x any) *Values {
	if _, ok := v.flags[name]; !ok {
		panic("scoring: Values.Set: no flag " + name)
	}
	v.set[name] = x
	return v
}

// IsSet reports whether the flag was set.
func (v *Values) IsSet(name string) bool { _, ok := v.set[name]; return ok }

func (v *Values) get(name string) any {
	if x, ok := v.set[name]; ok {
		return x
	}
	return v.flags[name].Value
}

// String returns a string flag.
func (v *Values) String(name string) string { s, _ := v.get(name).(string); return s }

// Float returns a float flag.
func (v *Values) Float(name string) float64 { x, _ := v.get(name).(float64); return x }

// Int returns an int flag.
func (v *Values) Int(name string) int { x, _ := v.get(name).(int); return x }

// Bool returns a bool flag.
func (v *Values) Bool(name string) bool { x, _ := v.get(name).(bool); return x }

// StringSlice returns a repeatable string flag.
func (v *Values) StringSlice(name string) []string { x, _ := v.get(name).([]string); return x }
