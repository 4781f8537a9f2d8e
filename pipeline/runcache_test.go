package pipeline

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
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
	t.Parallel()
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

// TestWarmChangedObjectInChunks: on a warm rerun the cores are shared by
// the objects decoded then, not by the whole sweep: the one changed
// object, no bigger than the others, is decoded in chunks (on the cold
// run only the last object was), and the result files are those of a job
// without a cache.
func TestWarmChangedObjectInChunks(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	op := &memOpener{}
	b, keys := synthSweep(t, op)
	var log bytes.Buffer
	score := func(out, c string) string {
		t.Helper()
		log.Reset()
		cfg := memJob(t, op, "mem://lab/sweep", "mem://lab/"+out)
		cfg.Concurrency, cfg.chunkBytes, cfg.Cache = 2, 300, c
		cfg.Logger = slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelInfo}))
		if _, err := Run(ctx, cfg); err != nil {
			t.Fatal(err)
		}
		return log.String()
	}
	files := func(out string) map[string][]byte {
		t.Helper()
		m := map[string][]byte{}
		for _, name := range []string{"runs.parquet", "intervals.parquet", "run_summary.parquet", "families.parquet", "curves.parquet", "report.md"} {
			data, err := b.ReadAll(ctx, out+"/"+name)
			if err != nil {
				t.Fatal(err)
			}
			m[name] = data
		}
		return m
	}
	// Cold, only the last object (read last, it would end alone) is
	// decoded in chunks: the others hold no more than a core's share.
	if l := score("cold", "mem://cache/c"); strings.Count(l, "decoding in chunks") != 1 || !chunkedLine(l, keys[len(keys)-1]) || chunkedLine(l, keys[1]) {
		t.Fatalf("cold: want the last object alone decoded in chunks: %s", l)
	}
	changeReward(t, b, keys[1])
	l := score("warm", "mem://cache/c")
	if strings.Count(l, "decoding in chunks") != 1 || !chunkedLine(l, keys[1]) || !strings.Contains(l, fmt.Sprintf(`served=%d assembled=1 scored=1`, len(keys)-1)) {
		t.Errorf("warm: want the changed object alone decoded, in chunks: %s", l)
	}
	score("none", "")
	want, got := files("none"), files("warm")
	for name := range want {
		if !bytes.Equal(want[name], got[name]) {
			t.Errorf("%s differs from a job without a cache", name)
		}
	}
}

// chunkedLine says whether log holds a "decoding in chunks" line for key.
func chunkedLine(log, key string) bool {
	for _, line := range strings.Split(log, "\n") {
		if strings.Contains(line, "decoding in chunks") && strings.Contains(line, key) {
			return true
		}
	}
	return false
}

// TestGoBuildID: the build ID read from the test binary's note is the one
// go tool buildid prints, and a file that is no ELF executable has none.
func TestGoBuildID(t *testing.T) {
	t.Parallel()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	id, ok := goBuildID(exe)
	if !ok {
		t.Skip("no Go build ID note in the test binary (not ELF)")
	}
	out, err := exec.Command("go", "tool", "buildid", exe).Output()
	if err != nil {
		t.Skipf("go tool buildid: %v", err)
	}
	if want := strings.TrimSpace(string(out)); id != want {
		t.Errorf("build ID %q, go tool buildid says %q", id, want)
	}
	other := filepath.Join(t.TempDir(), "x")
	if err := os.WriteFile(other, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if id, ok := goBuildID(other); ok {
		t.Errorf("a script has the build ID %q", id)
	}
}
