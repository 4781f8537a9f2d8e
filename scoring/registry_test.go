package scoring

import (
	"errors"
	"strings"
	"testing"
)

type fake struct {
	name string
	desc Description
}

func (f fake) Name() string                { return f.name }
func (f fake) Describe() Description       { return f.desc }
func (f fake) New(Flags, Env) (Job, error) { return nil, errors.New("fake") }
func mustPanic(t *testing.T, what string, fn func()) {
	t.Helper()
	defer func() {
		if recover() == nil {
			t.Errorf("%s did not panic", what)
		}
	}()
	fn()
}

func TestRegistry(t *testing.T) {
	Register(fake{name: "zeta"})
	Register(fake{name: "alpha"})
	Register(fake{name: "mid", desc: Description{Default: true}})
	mustPanic(t, "a second zeta", func() { Register(fake{name: "zeta"}) })
	mustPanic(t, "a second default", func() { Register(fake{name: "other", desc: Description{Default: true}}) })
	mustPanic(t, "an empty name", func() { Register(fake{name: ""}) })
	mustPanic(t, "a name with a comma", func() { Register(fake{name: "a,b"}) })

	var names []string
	for _, p := range Protocols() {
		names = append(names, p.Name())
	}
	if got := strings.Join(names, " "); got != "mid alpha zeta" {
		t.Errorf("Protocols() = %s, want the default first, then by name", got)
	}
	if Default() != "mid" {
		t.Errorf("Default() = %q", Default())
	}
	if p, err := Lookup("alpha"); err != nil || p.Name() != "alpha" {
		t.Errorf("Lookup(alpha) = %v, %v", p, err)
	}
	_, err := Lookup("nonesuch")
	var ue *UsageError
	if !errors.As(err, &ue) || err.Error() != `--protocol "nonesuch": want alpha, mid or zeta` {
		t.Errorf("Lookup(nonesuch) = %v, want a usage error listing the protocols", err)
	}
}

func TestValues(t *testing.T) {
	p := fake{name: "vals", desc: Description{Flags: []Flag{
		{Name: "s", Kind: FlagString, Value: "dflt"},
		{Name: "f", Kind: FlagFloat, Value: 0.5},
		{Name: "i", Kind: FlagInt},
		{Name: "b", Kind: FlagBool},
		{Name: "l", Kind: FlagStrings},
	}}}
	v := DefaultValues(p)
	if v.IsSet("s") || v.String("s") != "dflt" || v.Float("f") != 0.5 || v.Int("i") != 0 || v.Bool("b") || v.StringSlice("l") != nil {
		t.Errorf("defaults: %q %v %v %v %v", v.String("s"), v.Float("f"), v.Int("i"), v.Bool("b"), v.StringSlice("l"))
	}
	v.Set("s", "x").Set("i", 3).Set("l", []string{"a", "b"})
	if !v.IsSet("s") || v.String("s") != "x" || v.Int("i") != 3 || len(v.StringSlice("l")) != 2 {
		t.Errorf("set: %q %v %v", v.String("s"), v.Int("i"), v.StringSlice("l"))
	}
	mustPanic(t, "setting an undeclared flag", func() { v.Set("nope", 1) })
}

func TestDescribeWhere(t *testing.T) {
	if got := DescribeWhere(nil); got != "none" {
		t.Errorf("DescribeWhere(nil) = %q", got)
	}
	if got := DescribeWhere([]Filter{{Field: "a", Values: []string{"x", "y"}}, {Field: "b", Values: []string{"z"}}}); got != "a=x|y,b=z" {
		t.Errorf("DescribeWhere = %q", got)
	}
}

// counted is a protocol that counts its Describe calls.
type counted struct {
	fake
	calls *int
}

func (c counted) Describe() Description { *c.calls++; return c.desc }

// TestProtocolsDoNotDescribe: listing the protocols and naming the default
// build no description (each Describe builds its whole description anew,
// and the command line lists them several times on every start);
// registering one builds one.
func TestProtocolsDoNotDescribe(t *testing.T) {
	var calls int
	Register(counted{fake{name: "counted"}, &calls})
	if calls != 1 {
		t.Errorf("Register: %d Describe calls, want 1", calls)
	}
	calls = 0
	for range 3 {
		Protocols()
		Default()
	}
	if calls != 0 {
		t.Errorf("Protocols and Default: %d Describe calls, want none", calls)
	}
}
