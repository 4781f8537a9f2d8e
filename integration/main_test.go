package integration

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	_ "gocloud.dev/blob/fileblob"

	"github.com/crlbatch/crlbatch/internal/synth"
)

var keep = flag.Bool("keep", false, "keep the temporary directory (servers' data and logs, outputs)")

// root is the temporary directory of the whole run.
var root string

// required is CI's switch: a skip is a failure.
var required = os.Getenv("CRLBATCH_REQUIRE_INTEGRATION") == "1"

func TestMain(m *testing.M) {
	flag.Parse()
	raiseParallel()
	var err error
	root, err = os.MkdirTemp("", "crlbatch-integration-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	setClientEnv()
	code := m.Run()
	stopAll()
	if code == 0 && !*keep {
		os.RemoveAll(root)
	} else {
		fmt.Fprintf(os.Stderr, "integration: servers' data and logs, and outputs, are in %s\n", root)
	}
	os.Exit(code)
}

// parallelTests is how many tests (and subtests) that call t.Parallel run
// at once when -test.parallel is not given: GOMAXPROCS (go test's default,
// 2 in CI) is too few for this package, whose tests spend their time
// waiting on crlbatch processes (retry backoffs, stalls held by the fault
// proxy, kills) and on the servers, not on this process's cores.
//
// A top-level test is parallel unless it reads or resets a shared server
// proxy's request log (countRequests(c.proxy.Log()) after c.proxy.Reset())
// or sets a shared proxy's policy, or drives the GCS server beside a test
// that does (TestStallsAreBounded's "gcs 503"): those run first, one at a
// time (go test runs every sequential top-level test before the parallel
// ones), so no other test's requests reach the logs and policies they use;
// their subtests, one per server, run beside each other, each on its own
// server's proxy. A fault test that needs a proxy of its own gets one from
// faulty.
const parallelTests = 8

// raiseParallel sets -test.parallel to parallelTests unless the command
// line set it.
func raiseParallel() {
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		flag.Set("test.parallel", strconv.Itoa(parallelTests))
	}
}

// setClientEnv gives this process (which uploads the sweep and reads the
// outputs) the test credentials; the crlbatch processes get them through
// childEnv. Anything a developer has set for real clouds is cleared, so no
// test can reach one.
func setClientEnv() {
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if cloudVar(k) {
			os.Unsetenv(k)
		}
	}
	for k, v := range credentialEnv() {
		os.Setenv(k, v)
	}
}

func cloudVar(k string) bool {
	for _, p := range []string{"AWS_", "AZURE_", "GOOGLE_", "GCLOUD_", "CLOUDSDK_", "STORAGE_EMULATOR_HOST"} {
		if strings.HasPrefix(k, p) {
			return true
		}
	}
	return false
}

// credentialEnv is each cloud's standard environment (SERVICES.md); the GCS
// emulator's address is added when that server starts.
func credentialEnv() map[string]string {
	return map[string]string{
		"AWS_ACCESS_KEY_ID":           S3AccessKey,
		"AWS_SECRET_ACCESS_KEY":       S3SecretKey,
		"AWS_REGION":                  S3Region,
		"AWS_EC2_METADATA_DISABLED":   "true",
		"AWS_CONFIG_FILE":             os.DevNull,
		"AWS_SHARED_CREDENTIALS_FILE": os.DevNull,
		"AZURE_STORAGE_ACCOUNT":       AzuriteAccount,
		"AZURE_STORAGE_KEY":           AzuriteKey,
	}
}

// need skips the test when err says something it needs is missing, or,
// under CRLBATCH_REQUIRE_INTEGRATION=1, fails it.
func need(t testing.TB, err error) {
	t.Helper()
	if err == nil {
		return
	}
	if required {
		t.Fatalf("%v\n(CRLBATCH_REQUIRE_INTEGRATION=1: a skipped integration test is a failure)", err)
	}
	t.Skip(err)
}

// skipShort skips under -short, which asks for no integration tests even
// in CI.
func skipShort(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("integration tests do not run under -short")
	}
}

// fixture is what every test shares: the built binary, the sweep on disk
// and its result scored from the local folder.
type fixture struct {
	repo    string
	bin     string // the crlbatch binary
	version string // crlbatch.version of its outputs
	sweep   string // local root: night1/ is the input, the rest must not be read
	ref     string // outputs of `score sweep/night1`
	// refSingle is the output of scoring one object (singleKey) alone.
	refSingle string
	// refLarge is the output of scoring largePrefix: one plain object
	// large enough that the job decodes it in chunks on every core.
	refLarge string
	runs     int      // runs in night1
	objects  []string // keys (relative to night1/) the job must read
}

const (
	inPrefix  = "night1"
	singleKey = "night1/sac/sac-s1.jsonl.gz"
	// largePrefix holds one plain object of about 6 MB: over twice the
	// 2 MiB chunk and the whole sweep, so that with more than one core it is
	// decoded in chunks.
	largePrefix = "large"
)

// scoreFlags are the flags of every scoring in the tests: a ceiling, so
// that upper_bound and the gap are numbers, a solve component, and fewer
// bootstrap resamples than the default, for time.
var scoreFlags = []string{"--bound", "1", "--solve-component", "success", "--bootstrap-resamples", "2000"}

var fx struct {
	once sync.Once
	f    *fixture
	err  error
}

// getFixture builds the binary and the sweep once per test run.
func getFixture(t testing.TB) *fixture {
	t.Helper()
	skipShort(t)
	fx.once.Do(func() { fx.f, fx.err = newFixture() })
	if fx.err != nil {
		t.Fatal(fx.err)
	}
	return fx.f
}

func newFixture() (*fixture, error) {
	ctx := context.Background()
	repo, err := RepoRoot()
	if err != nil {
		return nil, err
	}
	f := &fixture{repo: repo, bin: filepath.Join(root, "bin", "crlbatch"), sweep: filepath.Join(root, "sweep")}
	build := exec.Command("go", "build", "-o", f.bin, "./cmd/crlbatch")
	build.Dir = repo
	if out, err := build.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("go build ./cmd/crlbatch: %v\n%s", err, out)
	}
	out, err := exec.Command(f.bin, "version").Output()
	if err != nil {
		return nil, fmt.Errorf("crlbatch version: %v", err)
	}
	f.version = strings.TrimPrefix(strings.TrimSpace(string(out)), "crlbatch ")

	if f.runs, f.objects, err = writeSweep(ctx, f.sweep); err != nil {
		return nil, err
	}
	f.ref = filepath.Join(root, "ref", "all")
	if r := f.score(ctx, nil, filepath.Join(f.sweep, inPrefix), f.ref); r.code != 0 {
		return nil, fmt.Errorf("scoring the local sweep: %s", r)
	}
	f.refSingle = filepath.Join(root, "ref", "single")
	if r := f.score(ctx, nil, filepath.Join(f.sweep, filepath.FromSlash(singleKey)), f.refSingle); r.code != 0 {
		return nil, fmt.Errorf("scoring one local object: %s", r)
	}
	f.refLarge = filepath.Join(root, "ref", "large")
	// On one goroutine: the clouds' runs, on two, decode it in chunks.
	if r := f.score(ctx, nil, filepath.Join(f.sweep, largePrefix), f.refLarge, "--concurrency", "1"); r.code != 0 {
		return nil, fmt.Errorf("scoring the large local object: %s", r)
	}
	return f, nil
}

// writeSweep writes the test sweep under dir: three Synth sweeps under
// night1/ (plain, gzip and zstd objects; a run split across objects under a
// deeper prefix; keys with a space, a non-ASCII letter, '+' and '='), files
// the default patterns must skip, and objects beside the input prefix that
// must not be read (night10/, night1.jsonl). Every file that must not be
// read is not JSON, so reading it would fail the job. It returns the number
// of runs and the keys the job must read, relative to night1/.
func writeSweep(ctx context.Context, dir string) (int, []string, error) {
	in := filepath.Join(dir, inPrefix)
	parts := []struct {
		sub string
		cfg synth.Config
	}{
		{"", synth.Config{Compression: "mixed", Seed: 11}},
		{"deep/er", synth.Config{Families: []string{"td3"}, Seeds: 2, Steps: 400, SplitFiles: 3, Compression: "gzip", Seed: 12}},
		{"odd names ü+=", synth.Config{Families: []string{"a2c"}, Seeds: 2, Steps: 300, Compression: "zstd", Seed: 13}},
	}
	var runs int
	var keys []string
	for _, p := range parts {
		p.cfg.Out = filepath.Join(in, filepath.FromSlash(p.sub))
		sum, err := synth.Run(ctx, p.cfg)
		if err != nil {
			return 0, nil, fmt.Errorf("synth %s: %w", p.cfg.Out, err)
		}
		runs += sum.Runs
		for _, o := range sum.Objects {
			k := o.Key
			if p.sub != "" {
				k = p.sub + "/" + k
			}
			keys = append(keys, k)
		}
	}
	junk := []byte("this is not a trace {{{\n")
	for _, k := range []string{
		"night1/README.md", "night1/ppo/notes.txt", "night1/ppo/ppo-s0.jsonl.bak", "night1/sac/_SUCCESS",
		"night1/ewc/events.log", "night1/deep/checkpoint.pt", "night1/deep/er/td3/td3-s0/part-000.jsonl.gz.tmp",
		"night10/ppo/ppo-s9.jsonl", "night1.jsonl",
	} {
		p := filepath.Join(dir, filepath.FromSlash(k))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return 0, nil, err
		}
		if err := os.WriteFile(p, junk, 0o644); err != nil {
			return 0, nil, err
		}
	}
	// The large object, beside the input prefix.
	large := synth.Config{Out: filepath.Join(dir, largePrefix), Families: []string{"ppo"}, Seeds: 1,
		TargetBytes: 6_000_000, Extras: true, Seed: 14}
	if _, err := synth.Run(ctx, large); err != nil {
		return 0, nil, fmt.Errorf("synth %s: %w", large.Out, err)
	}
	// An empty folder: in a bucket, a zero-byte "night1/empty/" marker.
	if err := os.MkdirAll(filepath.Join(in, "empty"), 0o755); err != nil {
		return 0, nil, err
	}
	return runs, keys, nil
}

// result is one run of the crlbatch binary.
type result struct {
	args           []string
	code           int
	stdout, stderr string
	elapsed        time.Duration
}

func (r result) String() string {
	return fmt.Sprintf("crlbatch %s: exit %d after %v\nstdout:\n%s\nstderr:\n%s", strings.Join(r.args, " "), r.code, r.elapsed.Round(time.Millisecond), r.stdout, tail(r.stderr, 60))
}

func tail(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = append([]string{fmt.Sprintf("… (%d lines)", len(lines)-n)}, lines[len(lines)-n:]...)
	}
	return strings.Join(lines, "\n")
}

// childEnv is the crlbatch process's environment: this process's, which
// setClientEnv made, plus extra.
func childEnv(extra ...string) []string {
	return append(os.Environ(), extra...)
}

// runLimit bounds every crlbatch process, so that a hang fails its test
// instead of the whole run.
const runLimit = 3 * time.Minute

// crl runs the binary; extra env entries are KEY=VALUE. With onStart, it is
// called with the process once started (to signal it).
func (f *fixture) crl(ctx context.Context, env []string, onStart func(*os.Process), args ...string) result {
	ctx, cancel := context.WithTimeout(ctx, runLimit)
	defer cancel()
	cmd := exec.CommandContext(ctx, f.bin, args...)
	cmd.Env = childEnv(env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.WaitDelay = 5 * time.Second
	start := time.Now()
	r := result{args: args}
	if err := cmd.Start(); err != nil {
		r.code, r.stderr = -1, err.Error()
		return r
	}
	if onStart != nil {
		onStart(cmd.Process)
	}
	err := cmd.Wait()
	r.elapsed = time.Since(start)
	r.stdout, r.stderr = out.String(), errb.String()
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			// Killed by a signal it did not handle: not an exit status.
			r.code = -1
			r.stderr += fmt.Sprintf("\n[killed by signal: %v]", ws.Signal())
		}
		if ctx.Err() != nil {
			r.stderr += fmt.Sprintf("\n[killed by the test after %v]", r.elapsed.Round(time.Second))
		}
	default:
		r.code, r.stderr = -1, r.stderr+"\n"+err.Error()
	}
	return r
}

// score runs `crlbatch score in --out out --quiet` with scoreFlags and more.
func (f *fixture) score(ctx context.Context, env []string, in, out string, more ...string) result {
	args := append([]string{"score", in, "--out", out, "--quiet"}, scoreFlags...)
	return f.crl(ctx, env, nil, append(args, more...)...)
}
