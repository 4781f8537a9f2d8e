package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"gocloud.dev/blob"

	"github.com/crlbatch/crlbatch/internal/synth"
	"github.com/crlbatch/crlbatch/storage"
	"github.com/crlbatch/crlbatch/writers"
)

// The nightly layout of issue 12 through the real binary: ten nights
// through a local folder and through the S3 server, the README's DuckDB
// snippets after each; two nightly jobs at once; two one-off jobs at once;
// the S3 server's conditional create.

// nightInputs writes ten different sweeps (one synth seed per night, so
// that every night's numbers differ) under root/nights/<n>/.
var nightInputs struct {
	sync.Once
	dirs []string
	err  error
}

func tenNights(t *testing.T) []string {
	t.Helper()
	nightInputs.Do(func() {
		for n := 1; n <= 10; n++ {
			dir := filepath.Join(root, "nights", fmt.Sprint(n))
			if _, err := synth.Run(context.Background(), synth.Config{Out: dir, Seeds: 2, Steps: 80, Seed: uint64(100 + n)}); err != nil {
				nightInputs.err = err
				return
			}
			nightInputs.dirs = append(nightInputs.dirs, dir)
		}
	})
	if nightInputs.err != nil {
		t.Fatal(nightInputs.err)
	}
	return nightInputs.dirs
}

// readmeSQL returns the README's DuckDB snippets of the nightly layout
// (the sql blocks after the marker comment), with results/nightly/ as
// written there.
func readmeSQL(t *testing.T, f *fixture) (newest, history string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(f.repo, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(data), "<!-- The DuckDB snippets below are run by integration/nights_test.go")
	if !ok {
		t.Fatal("README.md has no tested DuckDB snippets")
	}
	blocks := regexp.MustCompile("(?s)```sql\n(.*?)```").FindAllStringSubmatch(rest, 2)
	if len(blocks) != 2 {
		t.Fatalf("README.md: %d sql blocks after the marker, want 2", len(blocks))
	}
	return blocks[0][1], blocks[1][1]
}

// duckSQL runs a script through DuckDB (duckdb_sql.mjs) in dir and returns
// the rows of its last statement.
func duckSQL(t *testing.T, f *fixture, dir, script string) []map[string]any {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		need(t, fmt.Errorf("node is not on PATH (DuckDB runs under node): %s", InstallHint))
	}
	cmd := exec.Command(node, "duckdb_sql.mjs", dir)
	cmd.Dir = filepath.Join(f.repo, "integration")
	cmd.Stdin = strings.NewReader(script)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("duckdb_sql.mjs: %v\n%s\nscript:\n%s", err, errb.String(), script)
	}
	var rows []map[string]any
	if err := json.Unmarshal(out.Bytes(), &rows); err != nil {
		t.Fatalf("duckdb_sql.mjs: %v: %s", err, out.String())
	}
	return rows
}

// familyMeans maps "family/metric" to the mean of a families table (NaN
// for null).
func familyMeans(t *testing.T, rows []map[string]any) map[string]float64 {
	t.Helper()
	m := map[string]float64{}
	for _, r := range rows {
		v := math.NaN()
		switch x := r["mean"].(type) {
		case float64:
			v = x
		case nil:
		default:
			t.Fatalf("mean %v (%T)", x, x)
		}
		m[fmt.Sprint(r["family"], "/", r["metric"])] = v
	}
	return m
}

func sameMeans(a, b map[string]float64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, x := range a {
		y, ok := b[k]
		if !ok || !(x == y || math.IsNaN(x) && math.IsNaN(y) || math.Abs(x-y) <= 1e-9*math.Max(1, math.Abs(x))) {
			return false
		}
	}
	return true
}

// parquetMeans reads a families.parquet the Go way, for comparison.
func parquetMeans(t *testing.T, data []byte) map[string]float64 {
	t.Helper()
	rb, err := writers.ReadParquet(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	return familyMeans(t, rb.Rows)
}

// mirror copies what an OUTPUT holds into dir/results/nightly/, where the
// README's snippets look.
func mirror(t *testing.T, files map[string][]byte, dir string) {
	t.Helper()
	os.RemoveAll(dir)
	for k, v := range files {
		p := filepath.Join(dir, "results", "nightly", filepath.FromSlash(k))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, v, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestTenNights publishes ten nights with --history and --keep 8 through a
// local folder and through the S3 server. After each: the job's result is
// complete and LATEST names it; crlbatch latest prints it; the README's
// DuckDB snippet returns that night's numbers (as the result's
// families.parquet holds them, and different from the night before); the
// history view returns every night kept, each with its date and attempt,
// and each attempt's numbers as its result's.
func TestTenNights(t *testing.T) {
	t.Parallel()
	f := getFixture(t)
	nights := tenNights(t)
	newestSQL, historySQL := readmeSQL(t, f)
	for _, store := range []string{"local", "s3"} {
		t.Run(store, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			var out string
			var st crashStore
			switch store {
			case "local":
				out = filepath.Join(t.TempDir(), "nightly")
				st = &localStore{dir: out}
			case "s3":
				c := getCloud(t, "s3")
				prefix := fmt.Sprintf("nights-%d", os.Getpid())
				out = c.url(outBucket, prefix)
				b, err := blob.OpenBucket(ctx, c.url(outBucket, ""))
				if err != nil {
					t.Fatal(err)
				}
				defer b.Close()
				st = &bucketStore{b: b, prefix: prefix + "/"}
			}
			view := t.TempDir()
			var prev map[string]float64
			var kept []string
			for n, in := range nights {
				r := f.crl(ctx, nil, nil, "score", in, "--out", out, "--quiet", "--history", "--keep", "8", "--bootstrap-resamples", "200")
				if r.code != 0 {
					t.Fatalf("night %d: %s", n+1, r)
				}
				files := st.files(t)
				latest := string(files["LATEST"])
				id := strings.TrimSuffix(strings.TrimPrefix(latest, "results/"), "/\n")
				if !regexp.MustCompile(`^results/[0-9]{8}T[0-9]{6}Z-[0-9]{6}[0-9a-f]{6}/\n$`).MatchString(latest) || !strings.Contains(r.stdout, id) {
					t.Fatalf("night %d: LATEST %q does not name the job's result:\n%s", n+1, latest, r.stdout)
				}
				if err := verifyResult(files, "results/"+id+"/"); err != nil {
					t.Fatalf("night %d: %v", n+1, err)
				}
				var m writers.Manifest
				if err := json.Unmarshal(files["results/"+id+"/manifest.json"], &m); err != nil || m.AttemptID != id || m.Host == "" || len(m.Objects) == 0 {
					t.Errorf("night %d: manifest provenance: %v %q %q %d objects", n+1, err, m.AttemptID, m.Host, len(m.Objects))
				}
				for _, o := range m.Objects {
					if o.ETag == "" || o.Size <= 0 {
						t.Errorf("night %d: manifest object %s: size %d, etag %q", n+1, o.Key, o.Size, o.ETag)
					}
				}
				lr := f.crl(ctx, nil, nil, "latest", out)
				if want := storage.Redact(strings.TrimSuffix(resultURL(out, store), "/") + "/results/" + id + "/"); lr.code != 0 || strings.TrimSpace(lr.stdout) != want {
					t.Errorf("night %d: latest printed %q (%s), want %q", n+1, lr.stdout, lr, want)
				}
				kept = append(kept, id)
				kept = kept[max(0, len(kept)-8):]

				mirror(t, files, view)
				got := familyMeans(t, duckSQL(t, f, view, newestSQL))
				want := parquetMeans(t, files["results/"+id+"/families.parquet"])
				if len(got) == 0 || !sameMeans(got, want) {
					t.Errorf("night %d: the README's DuckDB snippet returns %v, the night's families.parquet %v", n+1, got, want)
				}
				if prev != nil && sameMeans(got, prev) {
					t.Errorf("night %d: the same numbers as the night before: the test nights must differ", n+1)
				}
				prev = got

				rows := duckSQL(t, f, view, historySQL)
				byAttempt := map[string][]map[string]any{}
				for _, row := range rows {
					a := fmt.Sprint(row["attempt"])
					if row["night"] != a[:4]+"-"+a[4:6]+"-"+a[6:8] {
						t.Errorf("night %d: history row of attempt %s has night %v", n+1, a, row["night"])
					}
					byAttempt[a] = append(byAttempt[a], row)
				}
				attempts := slices.Sorted(func(yield func(string) bool) {
					for a := range byAttempt {
						if !yield(a) {
							return
						}
					}
				})
				if !slices.Equal(attempts, kept) {
					t.Errorf("night %d: the history view holds %q, want %q", n+1, attempts, kept)
				}
				for a, rows := range byAttempt {
					if !sameMeans(familyMeans(t, rows), parquetMeans(t, files["results/"+a+"/families.parquet"])) {
						t.Errorf("night %d: the history view's rows of %s are not its result's", n+1, a)
					}
				}
			}
			ids := 0
			for k := range st.files(t) {
				if strings.HasSuffix(k, "/manifest.json") {
					ids++
				}
			}
			if ids != 8 {
				t.Errorf("--keep 8 after ten nights left %d results", ids)
			}
		})
	}
}

// resultURL is OUTPUT as crlbatch latest prints its results (a local
// folder as an absolute path; a bucket URL without its query).
func resultURL(out, store string) string {
	if store == "local" {
		return out
	}
	u, _, _ := strings.Cut(out, "?")
	return u
}

// TestConcurrentNightlyJobs: two --history jobs started together through a
// local folder and through S3 both exit 0 with distinct complete results;
// LATEST names the newer. Two one-off jobs started together on an empty
// OUTPUT: one publishes a complete result, the other exits 2 naming the
// first job or its result, and the result is consistent.
func TestConcurrentNightlyJobs(t *testing.T) {
	t.Parallel()
	f := getFixture(t)
	in := tenNights(t)[0]
	for _, store := range []string{"local", "s3"} {
		t.Run(store, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			outFor := func(name string) (string, crashStore) {
				if store == "local" {
					out := filepath.Join(t.TempDir(), name)
					return out, &localStore{dir: out}
				}
				c := getCloud(t, "s3")
				b, err := blob.OpenBucket(ctx, c.url(outBucket, ""))
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { b.Close() })
				prefix := fmt.Sprintf("%s-%d", name, os.Getpid())
				return c.url(outBucket, prefix), &bucketStore{b: b, prefix: prefix + "/"}
			}
			both := func(out string, more ...string) [2]result {
				var rs [2]result
				var wg sync.WaitGroup
				for i := range rs {
					wg.Add(1)
					go func() {
						defer wg.Done()
						rs[i] = f.crl(ctx, nil, nil, append([]string{"score", in, "--out", out, "--quiet", "--bootstrap-resamples", "200"}, more...)...)
					}()
				}
				wg.Wait()
				return rs
			}

			out, st := outFor("two-nightly")
			for _, r := range both(out, "--history") {
				if r.code != 0 {
					t.Fatalf("a nightly job: %s", r)
				}
			}
			files := st.files(t)
			var ids []string
			for k := range files {
				if rest, ok := strings.CutSuffix(k, "/manifest.json"); ok {
					if err := verifyResult(files, rest+"/"); err != nil {
						t.Error(err)
					}
					ids = append(ids, path.Base(rest))
				}
			}
			slices.Sort(ids)
			if len(ids) != 2 || string(files["LATEST"]) != "results/"+ids[1]+"/\n" {
				t.Errorf("results %q, LATEST %q", ids, files["LATEST"])
			}

			out, st = outFor("two-one-off")
			rs := both(out)
			if rs[0].code == 0 && rs[1].code == 0 || rs[0].code != 0 && rs[1].code != 0 {
				t.Fatalf("two one-off jobs: exits %d and %d, want one 0:\n%s\n%s", rs[0].code, rs[1].code, rs[0], rs[1])
			}
			loser := rs[0]
			if loser.code == 0 {
				loser = rs[1]
			}
			if loser.code != 2 || !strings.Contains(loser.stderr, "being published into by the job of pid") && !strings.Contains(loser.stderr, "already holds a complete result") {
				t.Errorf("the other one-off job: %s", loser)
			}
			files = st.files(t)
			if err := verifyResult(files, ""); err != nil {
				t.Error(err)
			}
			for k := range files {
				if strings.HasPrefix(k, ".crlbatch/") {
					t.Errorf("claim %s left", k)
				}
			}
		})
	}
}

// TestS3ConditionalCreate: the S3 server honours If-None-Match: * (which
// storage.CreateExclusive relies on for claims): a second create of one
// key reports that it exists and leaves the first's bytes.
func TestS3ConditionalCreate(t *testing.T) {
	t.Parallel()
	c := getCloud(t, "s3")
	ctx := context.Background()
	b, err := blob.OpenBucket(ctx, c.url(outBucket, ""))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	key := fmt.Sprintf("claims-%d/x.json", os.Getpid())
	ok, err := storage.CreateExclusive(ctx, b, key, "", []byte("first"))
	if err != nil || !ok {
		t.Fatalf("first create: %v, %v", ok, err)
	}
	ok, err = storage.CreateExclusive(ctx, b, key, "", []byte("second"))
	if err != nil || ok {
		t.Fatalf("second create: %v, %v; want false, nil", ok, err)
	}
	if got, _ := b.ReadAll(ctx, key); string(got) != "first" {
		t.Errorf("the object holds %q", got)
	}
}
