package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/crlbatch/crlbatch/pipeline"
	"github.com/crlbatch/crlbatch/writers"
)

// Parquet trace objects written by another writer than crlbatch's own
// library (arrow-go, which `crlbatch convert` uses): DuckDB's, the engine
// researchers use. DuckDB infers each object's schema from its JSON Lines
// itself (read_ndjson), which is the point: its choices of types,
// encodings, row groups and codecs are not ours.

// duckWriters are the ways DuckDB writes each object: its defaults (format
// version 1, snappy, one row group of up to 122,880 rows), format version 2
// (DELTA_BINARY_PACKED and the other v2 encodings) with zstd, and snappy.
// DuckDB cuts a row group only between the 2,048-row chunks it writes (and
// left an object of 2,489 rows whole at ROW_GROUP_SIZE 1000), so the small
// ROW_GROUP_SIZEs give more row groups than objects only for objects of
// several thousand rows (the irregular sweep's).
var duckWriters = []struct {
	name, opts string
	codec      string // the codec of every column chunk
	v2         bool   // DELTA_* encodings are used (only then)
	small      bool   // ROW_GROUP_SIZE below 2,048
	// converted: DuckDB reads `crlbatch convert`'s Parquet form of the
	// object (read_parquet), not the JSON Lines: a copy that drops the
	// file's key/value metadata, as DuckDB's keeps none of it.
	converted bool
}{
	{"defaults", "", "SNAPPY", false, false, false},
	{"v2-zstd-rg1000", ", PARQUET_VERSION v2, COMPRESSION zstd, ROW_GROUP_SIZE 1000", "ZSTD", true, true, false},
	{"snappy-rg100", ", COMPRESSION snappy, ROW_GROUP_SIZE 100", "SNAPPY", false, true, false},
	{"converted-defaults", "", "SNAPPY", false, false, true},
}

// nightlyFlags are configs/nightly.yaml's scoring flags (and bench/cache.sh's).
var nightlyFlags = []string{"--spec", "experiment", "--ceiling", "by_configuration", "--episode-end-from-spec",
	"--solve-component", "progress", "--group-by", "algorithm_id", "--baseline", "ppo", "--bootstrap-seed", "0"}

// TestForeignParquet: every object of a JSON Lines sweep rewritten by
// DuckDB (COPY (SELECT * FROM read_ndjson(...)) TO ... (FORMAT parquet)) at
// the same key, so that sources and run keys are the same, scores exactly
// as the JSON Lines: every output file but the manifest byte for byte, and
// the manifest the same but for when, where and how each object was read
// (every object `parquet`, against `decoded`). Both jobs are given the same
// INPUT string: the sweep's folder is renamed to one path for each job
// (f.crl runs the binary from the test's own folder, so a relative INPUT
// would differ). The sweeps: the bundled skyfall example with the nightly
// flags and with the defaults, the contilab, safecrl and skillshift
// examples, a synth sweep with extras, mixed compression and runs split
// across objects (DuckDB writes its regime_origin, null on every row of
// some objects, as JSON), a sweep whose run ids are UUIDs (DuckDB's UUID
// type), one with dates, times and timestamps, and bench/irregulargen's
// json.dumps-shaped rows; each
// through every writer of duckWriters, whose layout (codec, encodings, row
// groups) is checked from DuckDB's parquet_metadata so that no variant
// silently writes what another does; one of them copies `crlbatch
// convert`'s Parquet form of each object instead of the JSON Lines (a
// copy that keeps none of convert's key/value metadata: its JSON-text
// columns must say what they are by their type). DuckDB's TIMESTAMP, DATE and TIME
// columns, which it infers from strings that look like them, read as
// their ISO 8601 text: where that is the JSON Lines' own text (a run's
// metadata here), the outputs are the same byte for byte.
func TestForeignParquet(t *testing.T) {
	t.Parallel()
	f := getFixture(t)
	needDuckDB(t, f)
	ctx := context.Background()
	copyOf := func(src string) func(t *testing.T, dir string) {
		return func(t *testing.T, dir string) { copyTree(t, filepath.Join(f.repo, src), dir) }
	}
	cases := []struct {
		name  string
		sweep func(t *testing.T, dir string) // writes the JSON Lines sweep into dir, which does not exist
		flags []string
		// manyRowGroups: objects of several thousand rows, so that the
		// writers with a small ROW_GROUP_SIZE cut more than one row group
		// in some.
		manyRowGroups bool
		// duckTypes: columns whose type DuckDB must infer as given (in
		// the first object as its defaults write it), so that the case
		// holds what it is for.
		duckTypes map[string]string
	}{
		{name: "example-sweep-nightly", sweep: copyOf("configs/example-sweep"), flags: nightlyFlags},
		{name: "example-sweep-defaults", sweep: copyOf("configs/example-sweep")},
		{name: "contilab", sweep: copyOf("configs/examples/contilab"), flags: []string{"--protocol", "contilab"}},
		{name: "safecrl", sweep: copyOf("configs/examples/safecrl"), flags: []string{"--protocol", "safecrl"}},
		{name: "skillshift", sweep: copyOf("configs/examples/skillshift"), flags: []string{"--protocol", "skillshift"}},
		{name: "synth-extras", sweep: func(t *testing.T, dir string) {
			r := f.crl(ctx, nil, nil, "synth", "--out", dir, "--extras", "--compression", "mixed", "--split-files", "2",
				"--seeds", "2", "--steps", "2000", "--seed", "5")
			if r.code != 0 {
				t.Fatalf("synth: %s", r)
			}
		}, duckTypes: map[string]string{"regime_origin": "JSON"}},
		{name: "uuid-ids", sweep: uuidSweep, duckTypes: map[string]string{"run_id": "UUID", "obs_id": "UUID"}},
		{name: "timestamps", sweep: timeSweep, duckTypes: map[string]string{"started_at": "TIMESTAMP", "day": "DATE", "wake": "TIME", "logged_at": "TIMESTAMP"}},
		{name: "irregular", sweep: func(t *testing.T, dir string) {
			// Two objects of about 3 MB, 5,000 rows each.
			cmd := exec.Command("go", "run", "./bench/irregulargen", "-out", dir, "-families", "ppo,sac", "-seeds", "1",
				"-target-bytes", "6000000", "-seed", "1")
			cmd.Dir = f.repo
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("go run ./bench/irregulargen: %v\n%s", err, out)
			}
		}, manyRowGroups: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			base := t.TempDir()
			src := filepath.Join(base, "jsonl")
			c.sweep(t, src)
			objects, layouts := duckRewrite(t, f, src, base)
			if len(c.duckTypes) > 0 {
				first := sqlString(filepath.Join(base, duckWriters[0].name, filepath.FromSlash(objects[0])))
				got := map[string]string{}
				for _, row := range duckSQL(t, f, base, "SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM read_parquet("+first+"));\n") {
					got[fmt.Sprint(row["column_name"])] = fmt.Sprint(row["column_type"])
				}
				for col, typ := range c.duckTypes {
					if got[col] != typ {
						t.Errorf("DuckDB wrote %s of %s as %q, want %s: the case no longer holds what it is for", col, objects[0], got[col], typ)
					}
				}
			}
			in := filepath.Join(base, "s")
			score := func(t *testing.T, from, out string) (result, writers.Manifest) {
				t.Helper()
				if err := os.Rename(from, in); err != nil {
					t.Fatal(err)
				}
				defer func() {
					if err := os.Rename(in, from); err != nil {
						t.Error(err)
					}
				}()
				r := f.crl(ctx, nil, nil, append([]string{"score", in, "--out", out, "--quiet"}, c.flags...)...)
				var m writers.Manifest
				if r.code == 0 {
					data, err := os.ReadFile(filepath.Join(out, "manifest.json"))
					if err == nil {
						err = json.Unmarshal(data, &m)
					}
					if err != nil {
						t.Fatalf("%s: manifest.json: %v", out, err)
					}
				}
				return r, m
			}
			refOut := filepath.Join(base, "out-jsonl")
			r, ref := score(t, src, refOut)
			if r.code != 0 {
				t.Fatalf("the JSON Lines: %s", r)
			}
			checkRead(t, ref, objects, "decoded")

			for _, w := range duckWriters {
				t.Run(w.name, func(t *testing.T) {
					l := layouts[w.name]
					if l.files != len(objects) {
						t.Errorf("DuckDB wrote %d Parquet files, want %d", l.files, len(objects))
					}
					if l.codecs != w.codec {
						t.Errorf("column chunks compressed with %s, want %s only", l.codecs, w.codec)
					}
					if strings.Contains(l.encodings, "DELTA_") != w.v2 {
						t.Errorf("encodings %s: v2 (DELTA_*) encodings %v, want %v", l.encodings, !w.v2, w.v2)
					}
					if c.manyRowGroups && w.small && l.rowGroups <= l.files {
						t.Errorf("%d row groups in %d files, want more", l.rowGroups, l.files)
					}
					out := filepath.Join(base, "out-"+w.name)
					r, m := score(t, filepath.Join(base, w.name), out)
					if r.code != 0 {
						t.Fatalf("DuckDB's Parquet (%d files, %d row groups, %s, %s): %s", l.files, l.rowGroups, l.codecs, l.encodings, r)
					}
					checkRead(t, m, objects, "parquet")
					sameOutputs(t, out, refOut)
					sameManifest(t, m, ref)
				})
			}
		})
	}
}

// timeSweep writes into dir a sweep with fields DuckDB infers as its
// TIMESTAMP, DATE and TIME types (2 families × 2 seeds, 300 steps in two
// regimes): a run's start, day and wake-up time, the same on each of its
// rows (run metadata: in the outputs, as text), written as crlbatch reads
// such cells back, and a per-step wall clock in UTC with milliseconds.
func timeSweep(t *testing.T, dir string) {
	rng := rand.New(rand.NewPCG(3, 5))
	start := time.Date(2024, 1, 5, 22, 0, 0, 0, time.UTC)
	for f, fam := range []string{"ppo", "sac"} {
		for seed := range 2 {
			var rows bytes.Buffer
			at := start.Add(time.Duration(2*f+seed) * 90 * time.Minute)
			for step := range 300 {
				regime := "calm"
				if step >= 150 {
					regime = "storm"
				}
				fmt.Fprintf(&rows, `{"run_id":"%s-%d","seed":%d,"algorithm_id":%q,"step":%d,"reward":%s,"regime_id":%q,"started_at":%q,"day":%q,"wake":"0%d:30:00","logged_at":%q}`+"\n",
					fam, seed, seed, fam, step, strconv.FormatFloat(rng.Float64(), 'g', -1, 64), regime,
					at.Format("2006-01-02T15:04:05"), at.Format("2006-01-02"), 6+seed,
					at.Add(time.Duration(step)*1234*time.Millisecond).Format("2006-01-02T15:04:05.000Z"))
			}
			p := filepath.Join(dir, fam, fmt.Sprintf("%s-s%d.jsonl", fam, seed))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, rows.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// uuidSweep writes into dir a sweep whose run ids and a per-step extra
// are UUIDs as Python's str(uuid.uuid4()) writes them (canonical,
// lowercase), which DuckDB infers as its UUID type: 2 families × 3 seeds,
// 400 steps in two regimes each.
func uuidSweep(t *testing.T, dir string) {
	rng := rand.New(rand.NewPCG(7, 11))
	id := func() string {
		var b [16]byte
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		b[6], b[8] = b[6]&0x0f|0x40, b[8]&0x3f|0x80
		return uuid.UUID(b).String()
	}
	for _, fam := range []string{"ppo", "sac"} {
		for seed := range 3 {
			var rows bytes.Buffer
			run := id()
			for step := range 400 {
				regime := "calm"
				if step >= 200 {
					regime = "storm"
				}
				fmt.Fprintf(&rows, `{"run_id":%q,"seed":%d,"algorithm_id":%q,"step":%d,"reward":%s,"regime_id":%q,"obs_id":%q}`+"\n",
					run, seed, fam, step, strconv.FormatFloat(rng.Float64(), 'g', -1, 64), regime, id())
			}
			p := filepath.Join(dir, fam, fmt.Sprintf("%s-s%d.jsonl", fam, seed))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, rows.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// needDuckDB skips (or, in CI, fails) the test unless node and
// @duckdb/node-api are there.
func needDuckDB(t *testing.T, f *fixture) {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		need(t, fmt.Errorf("node is not on PATH (DuckDB runs under node): install Node.js, then %s", InstallHint))
	}
	if _, err := os.Stat(filepath.Join(f.repo, "integration", "node_modules", "@duckdb", "node-api", "package.json")); err != nil {
		need(t, fmt.Errorf("@duckdb/node-api is not installed in integration/node_modules: %s", InstallHint))
	}
}

// jsonlObject says whether crlbatch's default patterns read a key as JSON
// Lines.
func jsonlObject(name string) bool {
	for _, s := range []string{".jsonl", ".jsonl.gz", ".jsonl.zst", ".ndjson"} {
		if strings.HasSuffix(name, s) {
			return true
		}
	}
	return false
}

// duckLayout is what DuckDB's parquet_metadata says of one writer's files.
type duckLayout struct {
	files, rowGroups  int
	encodings, codecs string // distinct values, sorted, comma-separated
}

// duckRewrite writes, for each of duckWriters, base/<writer>/: every JSON
// Lines object of src as DuckDB writes its rows to Parquet, under the same
// relative name, and every other file of src unchanged; all in one DuckDB
// process. It returns the objects' relative names (slash-separated,
// sorted) and each writer's layout.
func duckRewrite(t *testing.T, f *fixture, src, base string) ([]string, map[string]duckLayout) {
	t.Helper()
	var objects, others []string
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if jsonlObject(d.Name()) {
			objects = append(objects, filepath.ToSlash(rel))
		} else {
			others = append(others, rel)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(objects) == 0 {
		t.Fatalf("%s holds no JSON Lines object", src)
	}
	slices.Sort(objects)
	converted := filepath.Join(base, "converted")
	if r := f.crl(context.Background(), nil, nil, "convert", src, "--out", converted); r.code != 0 {
		t.Fatalf("convert: %s", r)
	}
	var script strings.Builder
	var summaries []string
	for _, w := range duckWriters {
		dir := filepath.Join(base, w.name)
		for _, rel := range others {
			copyFile(t, filepath.Join(src, rel), filepath.Join(dir, rel))
		}
		var files []string
		for _, rel := range objects {
			dst := filepath.Join(dir, filepath.FromSlash(rel))
			if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
				t.Fatal(err)
			}
			from := "read_ndjson(" + sqlString(filepath.Join(src, filepath.FromSlash(rel))) + ")"
			if w.converted {
				from = "read_parquet(" + sqlString(filepath.Join(converted, filepath.FromSlash(pipeline.ConvertedKey(rel)))) + ")"
			}
			fmt.Fprintf(&script, "COPY (SELECT * FROM %s) TO %s (FORMAT parquet%s);\n", from, sqlString(dst), w.opts)
			files = append(files, sqlString(dst))
		}
		summaries = append(summaries, fmt.Sprintf("SELECT %s AS writer, count(DISTINCT file_name) AS files, "+
			"count(DISTINCT file_name || '#' || row_group_id) AS row_groups, "+
			"string_agg(DISTINCT encodings, ',' ORDER BY encodings) AS encodings, "+
			"string_agg(DISTINCT compression, ',' ORDER BY compression) AS codecs "+
			"FROM parquet_metadata([%s])", sqlString(w.name), strings.Join(files, ", ")))
	}
	script.WriteString(strings.Join(summaries, " UNION ALL ") + ";\n")
	layouts := map[string]duckLayout{}
	for _, row := range duckSQL(t, f, base, script.String()) {
		files, err1 := strconv.Atoi(fmt.Sprint(row["files"]))
		groups, err2 := strconv.Atoi(fmt.Sprint(row["row_groups"]))
		if err1 != nil || err2 != nil {
			t.Fatalf("parquet_metadata: %v", row)
		}
		layouts[fmt.Sprint(row["writer"])] = duckLayout{files, groups, fmt.Sprint(row["encodings"]), fmt.Sprint(row["codecs"])}
	}
	if len(layouts) != len(duckWriters) {
		t.Fatalf("parquet_metadata gave %v", layouts)
	}
	return objects, layouts
}

// sqlString is s as an SQL string literal.
func sqlString(s string) string {
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}

// checkRead: the manifest lists exactly objects, each read as read.
func checkRead(t *testing.T, m writers.Manifest, objects []string, read string) {
	t.Helper()
	var keys []string
	for _, o := range m.Objects {
		keys = append(keys, o.Key)
		if o.Read != read || o.Status != "ok" {
			t.Errorf("manifest: %s: read %q, status %q; want %q, ok", o.Key, o.Read, o.Status, read)
		}
	}
	slices.Sort(keys)
	if !slices.Equal(keys, objects) {
		t.Errorf("manifest objects %q, want %q", keys, objects)
	}
}

// sameOutputs: dir holds the files of ref, each but manifest.json byte for
// byte.
func sameOutputs(t *testing.T, dir, ref string) {
	t.Helper()
	names := func(d string) []string {
		ents, err := os.ReadDir(d)
		if err != nil {
			t.Fatal(err)
		}
		var n []string
		for _, e := range ents {
			n = append(n, e.Name())
		}
		return n
	}
	got, want := names(dir), names(ref)
	if !slices.Equal(got, want) {
		t.Fatalf("output files %q, the JSON Lines' %q", got, want)
	}
	for _, n := range got {
		if n == "manifest.json" {
			continue
		}
		g, err1 := os.ReadFile(filepath.Join(dir, n))
		w, err2 := os.ReadFile(filepath.Join(ref, n))
		if err1 != nil || err2 != nil {
			t.Fatal(err1, err2)
		}
		if !bytes.Equal(g, w) {
			t.Errorf("%s differs from the JSON Lines' (%d bytes, %d)", n, len(g), len(w))
		}
	}
}

// sameManifest: the two manifests agree but for the job's identity and
// times and how and in what form each object was read (size, ETag, read).
func sameManifest(t *testing.T, got, want writers.Manifest) {
	t.Helper()
	type obj struct {
		Key       string
		RowsRead  int64
		RunsFound int
		Status    string
	}
	objs := func(m writers.Manifest) []obj {
		var o []obj
		for _, x := range m.Objects {
			o = append(o, obj{x.Key, x.RowsRead, x.RunsFound, x.Status})
		}
		return o
	}
	for _, d := range []struct {
		what      string
		got, want any
	}{
		{"input", got.Input, want.Input},
		{"params", string(got.Params), string(want.Params)},
		{"objects", objs(got), objs(want)},
		{"runs", got.Runs, want.Runs},
		{"families", got.Families, want.Families},
		{"outputs", got.Outputs, want.Outputs},
		{"notes", got.Notes, want.Notes},
		{"skipped", got.Skipped, want.Skipped},
	} {
		if !reflect.DeepEqual(d.got, d.want) {
			t.Errorf("manifest %s: %v, the JSON Lines' %v", d.what, d.got, d.want)
		}
	}
}

// copyTree copies the files of src into dst.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err == nil {
			copyFile(t, p, filepath.Join(dst, rel))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

func copyFile(t *testing.T, src, dst string) {
	t.Helper()
	data, err := os.ReadFile(src)
	if err == nil {
		err = os.MkdirAll(filepath.Dir(dst), 0o755)
	}
	if err == nil {
		err = os.WriteFile(dst, data, 0o644)
	}
	if err != nil {
		t.Fatal(err)
	}
}
