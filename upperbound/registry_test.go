package upperbound_test

import (
	"fmt"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/crlbatch/crlbatch/upperbound"
)

func TestDeriveBuiltins(t *testing.T) {
	spec := loadBundled(t, "experiment")
	want, err := upperbound.Analytic(spec)
	if err != nil {
		t.Fatal(err)
	}
	got, err := upperbound.Derive("analytic", upperbound.Request{Spec: spec})
	if err != nil || got != want {
		t.Errorf("analytic: %+v, %v; want %+v", got, err, want)
	}
	got, err = upperbound.Derive("data_relative", upperbound.Request{Traces: twoRuns()})
	if err != nil || got.Derivation != "data_relative" || got.PerStep != 1.2 {
		t.Errorf("data_relative: %+v, %v", got, err)
	}
	var steps []int
	got, err = upperbound.Derive("numeric", upperbound.Request{Spec: spec, Components: experimentRegistry(t, &steps), Trajectories: trajectories})
	if err != nil || got.Derivation != "numeric" {
		t.Errorf("numeric: %+v, %v", got, err)
	}
	for _, name := range []string{"analytic", "numeric"} {
		if _, err := upperbound.Derive(name, upperbound.Request{}); err == nil || !strings.Contains(err.Error(), "needs a reward spec") {
			t.Errorf("%s without a spec: %v", name, err)
		}
	}
	if _, err := upperbound.Derive("nonesuch", upperbound.Request{}); err == nil || !strings.Contains(err.Error(), `unknown bound derivation "nonesuch"`) {
		t.Errorf("unknown derivation: %v", err)
	}
}

func TestRegisterDerivation(t *testing.T) {
	const name = "test_half_analytic"
	half := func(r upperbound.Request) (upperbound.Bound, error) {
		b, err := upperbound.Analytic(r.Spec)
		b.PerStep /= 2
		b.FinalStep /= 2
		return b, err // records "analytic"; Derive replaces it
	}
	// The registry is global and tests may run with -count > 1.
	if !slices.Contains(upperbound.Derivations(), name) {
		if err := upperbound.RegisterDerivation(name, half); err != nil {
			t.Fatal(err)
		}
	}
	b, err := upperbound.Derive(name, upperbound.Request{Spec: loadBundled(t, "paper")})
	if err != nil {
		t.Fatal(err)
	}
	if b.Derivation != name || b.FinalStep != 0.25 {
		t.Errorf("got %+v", b)
	}
	_, err = upperbound.Derive(name, upperbound.Request{})
	if err == nil || !strings.HasPrefix(err.Error(), fmt.Sprintf("bound derivation %q: ", name)) {
		t.Errorf("error of a registered derivation: %v", err)
	}
	for _, bad := range []string{name, "analytic", "numeric", "data_relative", "explicit", ""} {
		if err := upperbound.RegisterDerivation(bad, half); err == nil {
			t.Errorf("registered %q", bad)
		}
	}
	if err := upperbound.RegisterDerivation("test_nil", nil); err == nil {
		t.Error("registered a nil derivation")
	}
	for _, builtin := range []string{"analytic", "data_relative", "numeric"} {
		if !slices.Contains(upperbound.Derivations(), builtin) {
			t.Errorf("%s is not listed", builtin)
		}
	}
}

// TestPure checks the package contract: no project import outside
// protocol/, and none of the standard packages that reach files, the
// network, the clock or the process.
func TestPure(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	forbidden := []string{"os", "os/exec", "io/ioutil", "net", "net/http", "time", "syscall", "embed"}
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(fset, f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range af.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if strings.HasPrefix(path, "github.com/crlbatch/crlbatch/") && !strings.HasPrefix(path, "github.com/crlbatch/crlbatch/protocol") {
				t.Errorf("%s imports %s; upperbound may import only protocol/…", f, path)
			}
			if slices.Contains(forbidden, path) {
				t.Errorf("%s imports %s; upperbound is pure", f, path)
			}
		}
	}
}
