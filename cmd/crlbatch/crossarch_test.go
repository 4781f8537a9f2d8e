package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// crossArchCases are jobs whose outputs were measured to be the same bytes
// under arm64 and GODEBUG=cpu.fma=off (docs/decisions.md "Identical on
// every machine"; docs/performance-history.md has the tables): skyfall sweeps (the
// bootstrap, Wilcoxon's exact test of six seeds, the sign-flip test of
// three, ceilings from the spec per step and relative to the data, episode
// ends, discounted return, Student-t bands of few runs), a synthetic sweep
// of 60 seeds a family under the nightly flags (Wilcoxon's normal
// approximation: its p values through Erfc and Exp), one of 4 seeds (the
// bands' t quantile at df 3), regret against a --reference file, and the
// three record protocols (safecrl's windows, contilab's Friedman test and
// Nemenyi difference, skillshift's cells), each with its figures, every
// file compared: the PNGs too, their glyphs rasterized by our copy of
// golang.org/x/image/vector without fused multiply-adds
// (figures/internal/vector). A job whose in names a folder under the
// synthetic sweeps (synth:NAME) reads the sweep crossArchSynth made
// natively.
var crossArchCases = []struct {
	name string
	args []string
}{
	{"sweep-6seeds", []string{"../../configs/example-sweep-6seeds"}},
	{"sweep-per-step", []string{"../../configs/example-sweep", "--spec", "experiment", "--ceiling", "per_step", "--episode-end-from-spec"}},
	{"sweep-data-relative", []string{"../../configs/example-sweep", "--ceiling", "data_relative"}},
	{"sweep-regret", []string{"../../configs/example-sweep", "--reference", "synth:reference.json", "--gamma", "0.9"}},
	{"syn60-nightly", append([]string{"synth:syn60"}, nightlyFlags...)},
	{"syn4-extras", append([]string{"synth:syn4"}, nightlyFlags...)},
	{"safecrl", []string{"../../configs/examples/safecrl", "--protocol", "safecrl"}},
	{"contilab-rank", []string{"../../configs/examples/contilab", "--protocol", "contilab", "--rank-metric", "bwt", "--window-fraction", "0.2"}},
	{"skillshift", []string{"../../configs/examples/skillshift", "--protocol", "skillshift"}},
}

// nightlyFlags are the flags of the nightly benchmark job.
var nightlyFlags = []string{"--spec", "experiment", "--ceiling", "by_configuration", "--episode-end-from-spec",
	"--solve-component", "progress", "--group-by", "algorithm_id", "--baseline", "ppo", "--bootstrap-seed", "0"}

// crossArchSynth writes, natively, what the synth: arguments of
// crossArchCases name: syn60 (3 families × 60 seeds × 120 rows, seed 7),
// syn4 (3 families × 4 seeds × 400 rows with per-step extras, seed 3), and
// reference.json, a reference trajectory for two runs of the example sweep.
// It returns the folder they are in.
func crossArchSynth(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, s := range [][]string{
		{"synth", "--out", filepath.Join(dir, "syn60"), "--seeds", "60", "--steps", "120", "--seed", "7"},
		{"synth", "--out", filepath.Join(dir, "syn4"), "--seeds", "4", "--steps", "400", "--extras", "--seed", "3"},
	} {
		if code, _, stderr := crl(t, s...); code != 0 {
			t.Fatalf("%v: exit %d: %s", s, code, stderr)
		}
	}
	ref := map[string][]float64{}
	for _, run := range []string{"ppo-s0", "sac-s1"} {
		r := make([]float64, 400)
		for i := range r {
			r[i] = float64(i%97) / 61
		}
		ref[run] = r
	}
	js, err := json.Marshal(ref)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "reference.json"), js, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// withSynth is args with each synth:NAME replaced by NAME under dir.
func withSynth(dir string, args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		if name, ok := strings.CutPrefix(a, "synth:"); ok {
			a = filepath.Join(dir, name)
		}
		out[i] = a
	}
	return out
}

// crossArchArgsEnv carries a job's arguments to TestHelperCrossArch in a
// process of its own.
const crossArchArgsEnv = "CRLBATCH_CROSSARCH_ARGS"

// TestCrossArchitecture scores crossArchCases two more ways than in this
// process: by crlbatch built for linux/arm64 and run under qemu-aarch64
// (arm64 fuses a product and a sum into one FMA instruction wherever Go
// allows it; amd64 never does), and by this test binary with
// GODEBUG=cpu.fma=off (math.Exp's amd64 assembly without FMA, as on an
// older CPU). Every output file but manifest.json must be the same bytes.
// Under qemu-aarch64 it also runs internal/fpmath's TestSameBitsEverywhere
// built for arm64 (the hash of its eight functions' results on 55,000
// arguments must be the one computed on amd64).
// Without qemu-aarch64 (Debian's qemu-user, .ci/install-qemu) the arm64
// half skips, and fails under CRLBATCH_REQUIRE_INTEGRATION=1 (CI).
func TestCrossArchitecture(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("-short: builds crlbatch for arm64")
	}
	synth := crossArchSynth(t)
	for _, c := range crossArchCases {
		args := withSynth(synth, c.args)
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			want := filepath.Join(t.TempDir(), "native")
			code, _, stderr := crl(t, append(append([]string{"score"}, args...), "--out", want, "--quiet")...)
			if code != 0 {
				t.Fatalf("native: exit %d: %s", code, stderr)
			}
			got := filepath.Join(t.TempDir(), "nofma")
			exe, err := os.Executable()
			if err != nil {
				t.Fatal(err)
			}
			js, _ := json.Marshal(append(append([]string{"score"}, args...), "--out", got, "--quiet"))
			cmd := exec.Command(exe, "-test.run=^TestHelperCrossArch$")
			cmd.Env = append(os.Environ(), "GODEBUG=cpu.fma=off", crossArchArgsEnv+"="+string(js))
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("GODEBUG=cpu.fma=off: %v: %s", err, out)
			}
			sameArchOutputs(t, "GODEBUG=cpu.fma=off", want, got)
		})
	}
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		t.Skipf("the arm64 comparison runs on linux/amd64, not %s/%s", runtime.GOOS, runtime.GOARCH)
	}
	qemu, err := exec.LookPath("qemu-aarch64")
	if err != nil {
		msg := "qemu-aarch64 not found: install qemu-user (.ci/install-qemu) to compare the arm64 build's outputs with this one's"
		if os.Getenv("CRLBATCH_REQUIRE_INTEGRATION") == "1" {
			t.Fatal(msg + " (CRLBATCH_REQUIRE_INTEGRATION=1: required)")
		}
		t.Skip(msg)
	}
	// internal/fpmath's own check (the hash of its results on many
	// arguments, TestSameBitsEverywhere) under arm64.
	fpm := filepath.Join(t.TempDir(), "fpmath-arm64.test")
	buildT := exec.Command("go", "test", "-c", "-o", fpm, "../../internal/fpmath")
	buildT.Env = append(os.Environ(), "GOOS=linux", "GOARCH=arm64", "CGO_ENABLED=0")
	if out, err := buildT.CombinedOutput(); err != nil {
		t.Fatalf("GOARCH=arm64 go test -c internal/fpmath: %v: %s", err, out)
	}
	if out, err := exec.Command(qemu, fpm, "-test.run=^TestSameBitsEverywhere$").CombinedOutput(); err != nil {
		t.Errorf("internal/fpmath under qemu-aarch64: %v: %s", err, out)
	}
	bin := filepath.Join(t.TempDir(), "crlbatch-arm64")
	// -buildvcs=false: a build in a git checkout records its commit
	// (crlbatch.commit in every Parquet file), which this test binary, like
	// any go test binary, has none of.
	build := exec.Command("go", "build", "-buildvcs=false", "-o", bin, ".")
	build.Env = append(os.Environ(), "GOOS=linux", "GOARCH=arm64", "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("GOARCH=arm64 go build: %v: %s", err, out)
	}
	for _, c := range crossArchCases {
		args := withSynth(synth, c.args)
		t.Run(c.name+"/arm64", func(t *testing.T) {
			t.Parallel()
			want := filepath.Join(t.TempDir(), "native")
			code, _, stderr := crl(t, append(append([]string{"score"}, args...), "--out", want, "--quiet")...)
			if code != 0 {
				t.Fatalf("native: exit %d: %s", code, stderr)
			}
			got := filepath.Join(t.TempDir(), "arm64")
			cmd := exec.Command(qemu, append(append([]string{bin, "score"}, args...), "--out", got, "--quiet")...)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("arm64 under qemu-aarch64: %v: %s", err, out)
			}
			sameArchOutputs(t, "arm64", want, got)
		})
	}
}

// TestHelperCrossArch runs the job crossArchArgsEnv names in this process
// (TestCrossArchitecture starts it under GODEBUG=cpu.fma=off); without it,
// it does nothing.
func TestHelperCrossArch(t *testing.T) {
	js := os.Getenv(crossArchArgsEnv)
	if js == "" {
		return
	}
	var args []string
	if err := json.Unmarshal([]byte(js), &args); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := crl(t, args...); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
}

// sameArchOutputs fails unless the folders want and got hold the same files,
// each the same bytes (manifest.json aside: it carries times and paths).
func sameArchOutputs(t *testing.T, what, want, got string) {
	t.Helper()
	w, g := listDir(t, want), listDir(t, got)
	if strings.Join(w, " ") != strings.Join(g, " ") {
		t.Fatalf("%s wrote %v, native %v", what, g, w)
	}
	for _, name := range w {
		if name == "manifest.json" {
			continue
		}
		if !bytes.Equal(readOutput(t, want, name), readOutput(t, got, name)) {
			t.Errorf("%s: %s differs from the native build's", what, name)
		}
	}
}

// readOutput is the bytes of the file name in dir.
func readOutput(t *testing.T, dir, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}
