package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// goldenCases score every bundled example, and the example sweep under the
// flags that take different paths through the engine and the protocols
// (ceilings from a spec or the data, filters, exclusions, other anchors and
// windows). Their outputs are kept under testdata/golden/<name>/: a change
// of any byte of any Parquet file, report or manifest (its timestamps
// aside) fails TestGoldenOutputs. Refresh with -update and review the diff;
// a difference must be intended and said in its commit.
var goldenCases = []struct {
	name string
	args []string
}{
	{"sweep", []string{"../../configs/example-sweep"}},
	// The example sweep with six seeds a family (its seeds 0-2 are those
	// of the three-seed sweep): the paired tests become Wilcoxon's, with
	// no power warning, and the adjusted p values decide the summary.
	{"sweep-6seeds", []string{"../../configs/example-sweep-6seeds"}},
	{"sweep-spec", []string{"../../configs/example-sweep", "--spec", "experiment"}},
	{"sweep-data-relative", []string{"../../configs/example-sweep", "--ceiling", "data_relative"}},
	{"sweep-anchor-ceiling", []string{"../../configs/example-sweep", "--anchor", "ceiling", "--bound", "1"}},
	{"sweep-per-step", []string{"../../configs/example-sweep", "--spec", "experiment", "--ceiling", "per_step", "--episode-end-from-spec"}},
	{"sweep-families", []string{"../../configs/example-sweep", "--group-by", "algorithm_id,seed", "--baseline", "sac", "--allow-missing-baseline", "--min-steps", "500"}},
	{"sweep-where", []string{"../../configs/example-sweep", "--where", "algorithm_id=ppo", "--where", "algorithm_id=ewc", "--gamma", "0.9"}},
	{"sweep-post-shift", []string{"../../configs/example-sweep", "--window", "post_shift", "--solve-component", "progress", "--episode-end", "goal"}},
	{"safecrl", []string{"../../configs/examples/safecrl", "--protocol", "safecrl"}},
	{"safecrl-window", []string{"../../configs/examples/safecrl", "--protocol", "safecrl", "--window-episodes", "5", "--baseline", "ppo_lag"}},
	{"contilab", []string{"../../configs/examples/contilab", "--protocol", "contilab"}},
	{"contilab-rank", []string{"../../configs/examples/contilab", "--protocol", "contilab", "--rank-metric", "bwt", "--window-fraction", "0.2"}},
	{"contilab-one-benchmark", []string{"../../configs/examples/contilab", "--protocol", "contilab", "--where", "benchmark=perm_mnist"}},
	// One family missing from a benchmark: the ranking's notes.
	{"contilab-benchmark-notes", []string{"../../configs/examples/contilab", "--protocol", "contilab", "--where", "source=perm_mnist/er-s0.jsonl", "--where", "source=perm_mnist/er-s1.jsonl", "--where", "source=perm_mnist/ewc-s0.jsonl", "--where", "source=perm_mnist/ewc-s1.jsonl", "--where", "source=perm_mnist/finetune-s0.jsonl", "--where", "source=perm_mnist/finetune-s1.jsonl", "--where", "source=split_cifar/ewc-s0.jsonl", "--where", "source=split_cifar/ewc-s1.jsonl", "--where", "source=split_cifar/finetune-s0.jsonl", "--where", "source=split_cifar/finetune-s1.jsonl"}},
	{"skillshift", []string{"../../configs/examples/skillshift", "--protocol", "skillshift"}},
}

func TestGoldenOutputs(t *testing.T) {
	t.Parallel()
	for _, c := range goldenCases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			out := filepath.Join(t.TempDir(), "out")
			args := append([]string{"score"}, c.args...)
			args = append(args, "--out", out, "--quiet", "--concurrency", "3")
			code, _, stderr := crl(t, args...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			dir := filepath.Join("testdata", "golden", c.name)
			got := map[string][]byte{}
			for _, name := range listDir(t, out) {
				data, err := os.ReadFile(filepath.Join(out, name))
				if err != nil {
					t.Fatal(err)
				}
				if name == "manifest.json" {
					data = stableManifest(t, data, out)
				}
				got[name] = data
			}
			if *update {
				if err := os.RemoveAll(dir); err != nil {
					t.Fatal(err)
				}
				if err := os.MkdirAll(dir, 0o755); err != nil {
					t.Fatal(err)
				}
				for name, data := range got {
					if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
						t.Fatal(err)
					}
				}
			}
			want := listDir(t, dir)
			var names []string
			for name := range got {
				names = append(names, name)
			}
			if strings.Join(sortedCopy(names), " ") != strings.Join(want, " ") {
				t.Fatalf("output files %v, want %v", sortedCopy(names), want)
			}
			for _, name := range want {
				w, err := os.ReadFile(filepath.Join(dir, name))
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got[name], w) {
					t.Errorf("%s differs from %s (run with -update and review the diff)", name, filepath.Join(dir, name))
				}
			}
		})
	}
}

// stableManifest drops what differs between reruns of one job (its start
// and finish times, attempt id and host, the input files' ETags, which
// derive from their modification times) and the temporary output path.
func stableManifest(t *testing.T, data []byte, out string) []byte {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatalf("manifest.json: %v", err)
	}
	for _, k := range []string{"started_at", "finished_at", "attempt_id", "host"} {
		if _, ok := m[k]; !ok {
			t.Fatalf("manifest.json has no %s", k)
		}
		delete(m, k)
	}
	objs, _ := m["objects"].([]any)
	for _, o := range objs {
		if o, ok := o.(map[string]any); ok {
			if _, ok := o["etag"]; !ok {
				t.Fatalf("manifest.json: object %v has no etag", o["key"])
			}
			delete(o, "etag")
		}
	}
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return append(bytes.ReplaceAll(b, []byte(out), []byte("OUT")), '\n')
}

func sortedCopy(xs []string) []string {
	out := append([]string(nil), xs...)
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j] < out[j-1]; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// TestExampleSweep6SeedsIsSynth checks that configs/example-sweep-6seeds
// is, byte for byte, what crlbatch synth --seed 7 --steps 400
// --compression zstd --seeds 6 writes (the README says so), and that its
// seeds 0-2 are the rows of the three-seed sweep.
func TestExampleSweep6SeedsIsSynth(t *testing.T) {
	t.Parallel()
	out := filepath.Join(t.TempDir(), "sweep")
	if code, _, stderr := crl(t, "synth", "--out", out, "--seed", "7", "--steps", "400", "--compression", "zstd", "--seeds", "6"); code != 0 {
		t.Fatalf("synth: exit %d: %s", code, stderr)
	}
	const dir = "../../configs/example-sweep-6seeds"
	var got, want []string
	for _, d := range []struct {
		root  string
		names *[]string
	}{{out, &got}, {dir, &want}} {
		err := filepath.WalkDir(d.root, func(p string, e os.DirEntry, err error) error {
			if err == nil && !e.IsDir() {
				rel, _ := filepath.Rel(d.root, p)
				*d.names = append(*d.names, rel)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("synth wrote %v, the example holds %v", got, want)
	}
	for _, name := range got {
		a, errA := os.ReadFile(filepath.Join(out, name))
		b, errB := os.ReadFile(filepath.Join(dir, name))
		if errA != nil || errB != nil {
			t.Fatal(errA, errB)
		}
		if !bytes.Equal(a, b) {
			t.Errorf("%s differs from what synth writes", name)
		}
	}
	// The first three seeds are the three-seed example's rows.
	for _, fam := range []string{"ppo", "sac", "ewc"} {
		for s, ext := range []string{".jsonl", ".jsonl.gz", ".jsonl.zst"} {
			name := fam + "-s" + itoa(s)
			three, err := readRows(filepath.Join("../../configs/example-sweep", fam, name+ext))
			if err != nil {
				t.Fatal(err)
			}
			six, err := readRows(filepath.Join(dir, fam, name+".jsonl.zst"))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(three, six) {
				t.Errorf("%s/%s: seed %d differs between the three- and six-seed sweeps", fam, name, s)
			}
		}
	}
}
