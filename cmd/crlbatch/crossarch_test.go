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
// every machine"; performance.md has the table): skyfall sweeps (the
// bootstrap, Wilcoxon's exact test of six seeds, the sign-flip test of
// three, ceilings from the spec per step and relative to the data, episode
// ends, discounted return, Student-t bands of few runs) and the three
// record protocols (safecrl's windows, contilab's Friedman test and Nemenyi
// difference, skillshift's cells), each with its figures. armPNG leaves out
// the two PNG figures that still differ under arm64 in their
// anti-aliased pixels (not yet portable; their SVGs are compared).
var crossArchCases = []struct {
	name   string
	args   []string
	armPNG bool // the interval and probability-of-improvement PNGs differ under arm64
}{
	{"sweep-6seeds", []string{"../../configs/example-sweep-6seeds"}, false},
	{"sweep-per-step", []string{"../../configs/example-sweep", "--spec", "experiment", "--ceiling", "per_step", "--episode-end-from-spec"}, false},
	{"sweep-data-relative", []string{"../../configs/example-sweep", "--ceiling", "data_relative"}, false},
	{"safecrl", []string{"../../configs/examples/safecrl", "--protocol", "safecrl"}, false},
	{"contilab-rank", []string{"../../configs/examples/contilab", "--protocol", "contilab", "--rank-metric", "bwt", "--window-fraction", "0.2"}, false},
	{"skillshift", []string{"../../configs/examples/skillshift", "--protocol", "skillshift"}, false},
}

// armPNGs are the figures crossArchCases' armPNG leaves out under arm64.
var armPNGs = map[string]bool{"figure-interval-estimates.png": true, "figure-probability-of-improvement.png": true}

// crossArchArgsEnv carries a job's arguments to TestHelperCrossArch in a
// process of its own.
const crossArchArgsEnv = "CRLBATCH_CROSSARCH_ARGS"

// TestCrossArchitecture scores crossArchCases two more ways than in this
// process: by crlbatch built for linux/arm64 and run under qemu-aarch64
// (arm64 fuses a product and a sum into one FMA instruction wherever Go
// allows it; amd64 never does), and by this test binary with
// GODEBUG=cpu.fma=off (math.Exp's amd64 assembly without FMA, as on an
// older CPU). Every output file but manifest.json must be the same bytes.
// Without qemu-aarch64 (Debian's qemu-user, .ci/install-qemu) the arm64
// half skips, and fails under CRLBATCH_REQUIRE_INTEGRATION=1 (CI).
func TestCrossArchitecture(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("-short: builds crlbatch for arm64")
	}
	for _, c := range crossArchCases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			want := filepath.Join(t.TempDir(), "native")
			code, _, stderr := crl(t, append(append([]string{"score"}, c.args...), "--out", want, "--quiet")...)
			if code != 0 {
				t.Fatalf("native: exit %d: %s", code, stderr)
			}
			got := filepath.Join(t.TempDir(), "nofma")
			exe, err := os.Executable()
			if err != nil {
				t.Fatal(err)
			}
			js, _ := json.Marshal(append(append([]string{"score"}, c.args...), "--out", got, "--quiet"))
			cmd := exec.Command(exe, "-test.run=^TestHelperCrossArch$")
			cmd.Env = append(os.Environ(), "GODEBUG=cpu.fma=off", crossArchArgsEnv+"="+string(js))
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("GODEBUG=cpu.fma=off: %v: %s", err, out)
			}
			sameArchOutputs(t, "GODEBUG=cpu.fma=off", want, got, nil)
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
		t.Run(c.name+"/arm64", func(t *testing.T) {
			t.Parallel()
			want := filepath.Join(t.TempDir(), "native")
			code, _, stderr := crl(t, append(append([]string{"score"}, c.args...), "--out", want, "--quiet")...)
			if code != 0 {
				t.Fatalf("native: exit %d: %s", code, stderr)
			}
			got := filepath.Join(t.TempDir(), "arm64")
			cmd := exec.Command(qemu, append(append([]string{bin, "score"}, c.args...), "--out", got, "--quiet")...)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("arm64 under qemu-aarch64: %v: %s", err, out)
			}
			var skip map[string]bool
			if c.armPNG {
				skip = armPNGs
			}
			sameArchOutputs(t, "arm64", want, got, skip)
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
// each the same bytes (manifest.json aside: it carries times and paths;
// and the files skip names).
func sameArchOutputs(t *testing.T, what, want, got string, skip map[string]bool) {
	t.Helper()
	w, g := listDir(t, want), listDir(t, got)
	if strings.Join(w, " ") != strings.Join(g, " ") {
		t.Fatalf("%s wrote %v, native %v", what, g, w)
	}
	for _, name := range w {
		if name == "manifest.json" || skip[name] {
			continue
		}
		a, err := os.ReadFile(filepath.Join(want, name))
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(got, name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a, b) {
			t.Errorf("%s: %s differs from the native build's", what, name)
		}
	}
}
