package crlbeam

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"

	"github.com/crlbatch/crlbatch/internal/synth"
	"github.com/crlbatch/crlbatch/pipeline"
)

func TestMain(m *testing.M) {
	flag.Parse()
	beam.Init()
	os.Exit(m.Run())
}

// cases are cmd/crlbatch's golden cases (TestGoldenOutputs): every
// bundled example under the flags that take different paths through the
// engine and the protocols. Their outputs under
// cmd/crlbatch/testdata/golden are crlbatch score's, run from
// cmd/crlbatch (the report names INPUT as given): so are these.
var cases = []struct {
	name string
	args []string
}{
	{"sweep", []string{"../../configs/example-sweep"}},
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
	{"skillshift", []string{"../../configs/examples/skillshift", "--protocol", "skillshift"}},
}

// local scores args with the local engine (pipeline.Run, what crlbatch
// score runs) into a new folder.
func local(t *testing.T, args []string) (*Spec, string) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "local")
	spec, err := ParseScore(context.Background(), append(args, "--out", out), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := spec.Config()
	if err != nil {
		t.Fatal(err)
	}
	cfg.Concurrency = 3
	if _, err := pipeline.Run(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	return spec, out
}

// onBeam scores spec on Prism (in this process) into a new folder.
func onBeam(t *testing.T, spec *Spec, opt Options) (string, *Stats) {
	t.Helper()
	s := *spec
	s.Output = filepath.Join(t.TempDir(), "beam")
	st, err := Run(context.Background(), &s, opt)
	if err != nil {
		t.Fatal(err)
	}
	return s.Output, st
}

func files(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if p == dir && os.IsNotExist(err) {
			return filepath.SkipAll
		}
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		data, err := os.ReadFile(p)
		out[filepath.ToSlash(rel)] = data
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// manifestFields that legitimately differ between two jobs: when each
// started and finished, its attempt id, its host; and the OUTPUT folder.
var manifestFields = []string{"started_at", "finished_at", "attempt_id", "host"}

func stableManifest(t *testing.T, data []byte, out string) string {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatalf("manifest.json: %v", err)
	}
	for _, k := range manifestFields {
		if _, ok := m[k]; !ok {
			t.Fatalf("manifest.json has no %s", k)
		}
		delete(m, k)
	}
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return string(bytes.ReplaceAll(b, []byte(out), []byte("OUT")))
}

// same fails unless two results hold the same files, byte for byte
// (manifest.json: but for manifestFields).
func same(t *testing.T, wantDir, gotDir string) {
	t.Helper()
	want, got := files(t, wantDir), files(t, gotDir)
	if len(want) == 0 {
		t.Fatalf("%s holds no file", wantDir)
	}
	var names []string
	for n := range want {
		names = append(names, n)
	}
	sort.Strings(names)
	for n := range got {
		if _, ok := want[n]; !ok {
			t.Errorf("%s: only on Beam", n)
		}
	}
	for _, n := range names {
		g, ok := got[n]
		switch {
		case !ok:
			t.Errorf("%s: missing on Beam", n)
		case n == "manifest.json":
			if w, g := stableManifest(t, want[n], wantDir), stableManifest(t, g, gotDir); w != g {
				t.Errorf("manifest.json differs:\n--- local\n%s\n--- beam\n%s", w, g)
			}
		case !bytes.Equal(want[n], g):
			t.Errorf("%s differs (%d bytes locally, %d on Beam)", n, len(want[n]), len(g))
		}
	}
}

// TestExamples: every golden case on Prism gives crlbatch score's files,
// as kept under cmd/crlbatch/testdata/golden: every Parquet file, figure
// and report byte for byte, and manifest.json but for the fields
// TestGoldenOutputs leaves out (manifestFields, and each object's etag).
func TestExamples(t *testing.T) {
	t.Chdir(filepath.Join("..", "cmd", "crlbatch"))
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			spec, err := ParseScore(context.Background(), append(c.args, "--out", "unused"), io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			out, _ := onBeam(t, spec, Options{})
			got := files(t, out)
			golden := files(t, filepath.Join("testdata", "golden", c.name))
			if len(golden) == 0 || len(got) != len(golden) {
				t.Errorf("%d files on Beam, %d golden", len(got), len(golden))
			}
			for n, want := range golden {
				data := got[n]
				if n == "manifest.json" {
					data = goldenManifest(t, data, out)
				}
				if !bytes.Equal(want, data) {
					t.Errorf("%s differs from crlbatch score's golden output", n)
				}
			}
		})
	}
}

// goldenManifest is manifest.json as TestGoldenOutputs keeps it.
func goldenManifest(t *testing.T, data []byte, out string) []byte {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatalf("manifest.json: %v", err)
	}
	for _, k := range manifestFields {
		delete(m, k)
	}
	objs, _ := m["objects"].([]any)
	for _, o := range objs {
		if o, ok := o.(map[string]any); ok {
			delete(o, "etag")
		}
	}
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return append(bytes.ReplaceAll(b, []byte(out), []byte("OUT")), '\n')
}

// splitSweep writes a synthetic skyfall sweep whose runs are each split
// across three objects, compressed in turn none, gzip, zstd.
func splitSweep(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "sweep")
	_, err := synth.Run(context.Background(), synth.Config{Out: dir, Seeds: 4, Steps: 300, SplitFiles: 3, Compression: "mixed", Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestSplitRuns: runs split across objects, the objects handed over in
// listing order and in reverse, give crlbatch score's files.
func TestSplitRuns(t *testing.T) {
	in := splitSweep(t)
	spec, want := local(t, []string{in})
	for _, opt := range []Options{{}, {Reverse: true}} {
		got, st := onBeam(t, spec, opt)
		same(t, want, got)
		if st.PieceBytes == 0 || st.ScoredBytes == 0 || st.InputBytes == 0 {
			t.Errorf("counters: %+v", st)
		}
	}
}

// TestParallelism: with Prism's ready-to-commit splitting off and more
// threads than the runner's 8 bundles at once, and with the objects in
// reverse, the files are the same.
func TestParallelism(t *testing.T) {
	in := splitSweep(t)
	spec, want := local(t, []string{in, "--where", "algorithm_id=ppo", "--where", "algorithm_id=sac"})
	old := flag.Lookup("experiments").Value.String()
	defer flag.Set("experiments", old)
	flag.Set("experiments", "prism_disable_rtc")
	got, _ := onBeam(t, spec, Options{Reverse: true})
	same(t, want, got)
}

// badSweep copies the safecrl example with one bad row in one object.
func badSweep(t *testing.T, rows int) (dir, object string) {
	t.Helper()
	dir = filepath.Join(t.TempDir(), "bad")
	src := "../configs/examples/safecrl"
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if object == "" && strings.HasSuffix(p, ".jsonl") {
			object = rel
			lines := strings.SplitAfter(string(data), "\n")
			for i := 0; i < rows; i++ {
				lines[2+2*i] = "{\"not json\n"
			}
			data = []byte(strings.Join(lines, ""))
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, rel)), 0o755); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dir, rel), data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dir, object
}

// TestMaxBadRows: under --max-bad-rows the manifest (its skipped list
// among the rest) and every file are the local job's.
func TestMaxBadRows(t *testing.T) {
	in, _ := badSweep(t, 2)
	spec, want := local(t, []string{in, "--protocol", "safecrl", "--max-bad-rows", "2"})
	got, _ := onBeam(t, spec, Options{})
	same(t, want, got)
	var m struct {
		Skipped []any `json:"skipped"`
	}
	if err := json.Unmarshal(files(t, got)["manifest.json"], &m); err != nil {
		t.Fatal(err)
	}
	if len(m.Skipped) != 2 {
		t.Errorf("manifest.json skips %d rows, want 2", len(m.Skipped))
	}
}

// TestCommand: crlbatch-beam's usage errors are crlbatch's (exit 2);
// its failed pipelines are TestCommandBadRow's (failed_test.go).
func TestCommand(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := Main(context.Background(), []string{"score", "../configs/example-sweep"}, &stdout, &stderr); code != exitUsage ||
		!strings.Contains(stderr.String(), "--out OUTPUT is required") {
		t.Errorf("no --out: exit %d, %q", code, stderr.String())
	}
}

// TestNoTempFilesLeft: a job on Prism leaves nothing in the temporary
// folder, though Beam's runner creates a file there for every loopback
// job and never removes it; TMPDIR is restored afterwards.
func TestNoTempFilesLeft(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	spec, err := ParseScore(context.Background(), []string{"../configs/example-sweep", "--out", filepath.Join(t.TempDir(), "beam")}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Run(context.Background(), spec, Options{}); err != nil {
		t.Fatal(err)
	}
	if got := os.Getenv("TMPDIR"); got != tmp {
		t.Errorf("TMPDIR is %q after Run, was %q", got, tmp)
	}
	left, err := os.ReadDir(tmp)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range left {
		t.Errorf("left in the temporary folder: %s", e.Name())
	}
}

// TestHiveFolders: Parquet objects in Hive-style folders
// (algorithm_id=ppo/seed=0/), whose files hold neither field, give on Beam
// crlbatch score's files, in which the folders' fields make the runs and
// families (the workers read the folders of the same paths).
func TestHiveFolders(t *testing.T) {
	src := filepath.Join(t.TempDir(), "sweep")
	if _, err := synth.Run(context.Background(), synth.Config{Out: src, Seeds: 2, Steps: 300, Seed: 5}); err != nil {
		t.Fatal(err)
	}
	flat := filepath.Join(t.TempDir(), "flat")
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		var out bytes.Buffer
		var algo string
		var seed json.RawMessage
		for _, line := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
			var row map[string]json.RawMessage
			if err := json.Unmarshal(line, &row); err != nil {
				return err
			}
			if err := json.Unmarshal(row["algorithm_id"], &algo); err != nil {
				return err
			}
			seed = row["seed"]
			delete(row, "algorithm_id")
			delete(row, "seed")
			b, err := json.Marshal(row)
			if err != nil {
				return err
			}
			out.Write(append(b, '\n'))
		}
		dst := filepath.Join(flat, "algorithm_id="+algo, "seed="+string(seed), "part.jsonl")
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		return os.WriteFile(dst, out.Bytes(), 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	hive := filepath.Join(t.TempDir(), "hive")
	if n, err := pipeline.Convert(context.Background(), pipeline.ConvertConfig{Input: flat, Output: hive}); err != nil || n != 6 {
		t.Fatalf("convert: %d objects, %v", n, err)
	}
	spec, want := local(t, []string{hive, "--pattern", "*.parquet"})
	var m struct {
		Runs, Families int
	}
	data, err := os.ReadFile(filepath.Join(want, "manifest.json"))
	if err == nil {
		err = json.Unmarshal(data, &m)
	}
	if err != nil || m.Runs != 6 || m.Families != 3 {
		t.Fatalf("locally: %d runs in %d families (%v), want 6 in 3", m.Runs, m.Families, err)
	}
	got, _ := onBeam(t, spec, Options{Reverse: true})
	same(t, want, got)
}
