package pipeline

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/crlbatch/crlbatch/scoring"
	_ "github.com/crlbatch/crlbatch/scoring/contilabscore"
	_ "github.com/crlbatch/crlbatch/scoring/safecrlscore"
	_ "github.com/crlbatch/crlbatch/scoring/skillshiftscore"
)

// changed returns a value of f other than its default.
func changed(f scoring.Flag, v *scoring.Values) any {
	switch f.Kind {
	case scoring.FlagString:
		return v.String(f.Name) + "-changed"
	case scoring.FlagFloat:
		return v.Float(f.Name) + 0.25
	case scoring.FlagInt:
		return v.Int(f.Name) + 1
	case scoring.FlagBool:
		return !v.Bool(f.Name)
	case scoring.FlagStrings:
		return append(append([]string(nil), v.StringSlice(f.Name)...), "changed")
	}
	panic(f.Name)
}

// same returns f's default value.
func same(f scoring.Flag, v *scoring.Values) any {
	switch f.Kind {
	case scoring.FlagString:
		return v.String(f.Name)
	case scoring.FlagFloat:
		return v.Float(f.Name)
	case scoring.FlagInt:
		return v.Int(f.Name)
	case scoring.FlagBool:
		return v.Bool(f.Name)
	}
	return v.StringSlice(f.Name)
}

// TestScoreKeyEveryFlag: the scoring key of run entries changes with every
// flag of every protocol (its value, whether it was set at all, and the
// contents of a file it names), and not with the engine's settings that
// change no score (--concurrency, --out, the bootstrap, --group-by).
func TestScoreKeyEveryFlag(t *testing.T) {
	dir := t.TempDir()
	tested := 0
	for _, p := range scoring.Protocols() {
		cfg := DefaultConfig()
		cfg.Input, cfg.Output, cfg.Protocol = dir, filepath.Join(dir, "out"), p.Name()
		j, err := newJob(&cfg)
		if err != nil {
			t.Fatal(err)
		}
		base, err := j.scoreKey()
		if err != nil {
			t.Fatal(err)
		}
		keyWith := func(v *scoring.Values) string {
			t.Helper()
			saved := j.proto.flags
			defer func() { j.proto.flags = saved }()
			j.proto.flags = v
			key, err := j.scoreKey()
			if err != nil {
				t.Fatal(err)
			}
			return key
		}
		if keyWith(scoring.DefaultValues(p)) != base {
			t.Errorf("%s: the defaults given explicitly change the key", p.Name())
		}
		for _, f := range p.Describe().Flags {
			tested++
			def := scoring.DefaultValues(p)
			if f.TakesFile {
				file := filepath.Join(dir, p.Name()+"-"+f.Name)
				if err := os.WriteFile(file, []byte("one"), 0o644); err != nil {
					t.Fatal(err)
				}
				one := keyWith(scoring.DefaultValues(p).Set(f.Name, file))
				if err := os.WriteFile(file, []byte("two"), 0o644); err != nil {
					t.Fatal(err)
				}
				two := keyWith(scoring.DefaultValues(p).Set(f.Name, file))
				if one == two || one == base || two == base {
					t.Errorf("%s --%s: the file's contents do not change the key", p.Name(), f.Name)
				}
			}
			if keyWith(scoring.DefaultValues(p).Set(f.Name, changed(f, def))) == base {
				t.Errorf("%s --%s: a changed value keeps the key", p.Name(), f.Name)
			}
			if keyWith(scoring.DefaultValues(p).Set(f.Name, same(f, def))) == base {
				t.Errorf("%s --%s: setting it to its default keeps the key", p.Name(), f.Name)
			}
		}
		other := cfg
		other.Concurrency, other.Output, other.Resamples, other.BootstrapSeed = cfg.Concurrency+3, filepath.Join(dir, "elsewhere"), 17, 99
		other.GroupBy = []string{"seed"}
		oj, err := newJob(&other)
		if err != nil {
			t.Fatal(err)
		}
		if k, _ := oj.scoreKey(); k != base {
			t.Errorf("%s: the engine's settings change the key", p.Name())
		}
	}
	if tested < 20 {
		t.Errorf("only %d flags tested", tested)
	}
}
