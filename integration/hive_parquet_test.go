package integration

import (
	"bufio"
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/crlbatch/crlbatch/readers"
	"github.com/crlbatch/crlbatch/writers"
)

// TestHiveParquet: a sweep that DuckDB writes as a Hive-partitioned Parquet
// dataset (COPY … TO dir (FORMAT parquet, PARTITION_BY (…)): one folder
// level per field, `algorithm_id=ppo/seed=3/data_0.parquet`, the fields
// out of the files) scores exactly as the same rows in JSON Lines, each
// partition's rows in one object at the same key (the JSON text of the
// sweep's own lines, grouped by the test, not by DuckDB): every output
// but the manifest byte for byte. The sweeps: a synth sweep with extras
// partitioned by algorithm_id and seed, one family's algorithm_id holding
// characters DuckDB percent-encodes and one family's rows without it (the
// null partition), scored whole and from inside one partition (the INPUT
// algorithm_id=ppo keeps its field, as DuckDB's hive_partitioning reads the
// whole path); the safecrl example partitioned by algorithm_id (a record
// protocol: the general way); and the synth sweep written with the
// partition columns kept in the files (WRITE_PARTITION_COLUMNS), whose
// cells agree with their folders; and a sweep partitioned by a date
// (day=2024-01-05, DuckDB's DATE) and by a timestamp (its folders in
// DuckDB's text, 2024-01-05 22:00:00), the column dropped or kept. A folder renamed so that it no longer
// agrees with its files' cells, and a partition by a field of each row
// (regime_id), fail with exit 1 naming the object and the folder.
func TestHiveParquet(t *testing.T) {
	t.Parallel()
	f := getFixture(t)
	needDuckDB(t, f)
	ctx := context.Background()
	synth := func(t *testing.T, dir string) {
		r := f.crl(ctx, nil, nil, "synth", "--out", dir, "--extras", "--seeds", "2", "--steps", "1500", "--seed", "3")
		if r.code != 0 {
			t.Fatalf("synth: %s", r)
		}
		// sac's algorithm_id with characters a folder name escapes, ewc's
		// rows with none.
		rewriteLines(t, dir, func(row map[string]json.RawMessage) {
			switch string(row["algorithm_id"]) {
			case `"sac"`:
				row["algorithm_id"] = json.RawMessage(`"sac/lstm 2=x%"`)
			case `"ewc"`:
				delete(row, "algorithm_id")
			}
		})
	}
	cases := []struct {
		name  string
		sweep func(t *testing.T, dir string)
		by    string
		opts  string
		flags []string
		sub   string // the INPUT's folder below the sweep's
	}{
		{name: "synth", sweep: synth, by: "algorithm_id, seed", flags: nightlyFlags},
		{name: "synth-inside-a-partition", sweep: synth, by: "algorithm_id, seed", flags: nightlyFlags, sub: "algorithm_id=ppo"},
		{name: "safecrl", sweep: func(t *testing.T, dir string) { copyTree(t, filepath.Join(f.repo, "configs/examples/safecrl"), dir) },
			by: "algorithm_id", flags: []string{"--protocol", "safecrl"}},
		{name: "columns-kept", sweep: synth, by: "algorithm_id", opts: ", WRITE_PARTITION_COLUMNS true", flags: nightlyFlags},
		// A data lake's date partitions (DuckDB types day as DATE): the
		// folder day=2024-01-05 gives the string the JSON Lines hold, and
		// a DATE cell kept in the files reads as that text, so it agrees.
		{name: "dates", sweep: timeSweep, by: "day", flags: nightlyFlags},
		{name: "dates-kept", sweep: timeSweep, by: "day", opts: ", WRITE_PARTITION_COLUMNS true", flags: nightlyFlags},
		// A partition by a timestamp: DuckDB names its folders in its own
		// text (started_at=2024-01-05 22:00:00), which reads as the
		// timestamp cell a file that keeps the column holds.
		{name: "timestamps", sweep: timeSweep, by: "started_at", flags: nightlyFlags},
		{name: "timestamps-kept", sweep: timeSweep, by: "started_at", opts: ", WRITE_PARTITION_COLUMNS true", flags: nightlyFlags},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			base := t.TempDir()
			src, pq, ref := filepath.Join(base, "jsonl"), filepath.Join(base, "pq"), filepath.Join(base, "ref")
			c.sweep(t, src)
			objects := duckPartition(t, f, src, pq, c.by, c.opts)
			partitionLines(t, src, ref, objects, strings.Split(c.by, ", "))
			in := filepath.Join(base, "s")
			score := func(from, out string, args ...string) result {
				if err := os.Rename(from, in); err != nil {
					t.Fatal(err)
				}
				defer func() {
					if err := os.Rename(in, from); err != nil {
						t.Error(err)
					}
				}()
				input := in
				if c.sub != "" {
					input = filepath.Join(in, c.sub)
				}
				return f.crl(ctx, nil, nil, append([]string{"score", input, "--out", out, "--quiet", "--pattern", "*.parquet"}, args...)...)
			}
			refOut, pqOut := filepath.Join(base, "out-ref"), filepath.Join(base, "out-pq")
			if r := score(ref, refOut, c.flags...); r.code != 0 {
				t.Fatalf("the JSON Lines: %s", r)
			}
			if r := score(pq, pqOut, c.flags...); r.code != 0 {
				t.Fatalf("DuckDB's partitioned Parquet: %s", r)
			}
			sameOutputs(t, pqOut, refOut)
			refM, gotM := readManifest(t, refOut), readManifest(t, pqOut)
			// The manifest names objects by their keys below the INPUT.
			var want []string
			for _, o := range objects {
				if c.sub == "" {
					want = append(want, o)
				} else if rel, ok := strings.CutPrefix(o, c.sub+"/"); ok {
					want = append(want, rel)
				}
			}
			checkRead(t, refM, want, "decoded")
			checkRead(t, gotM, want, "parquet")
			sameManifest(t, gotM, refM)
			if c.name != "columns-kept" {
				return
			}
			// A folder renamed: its files' cells no longer agree with it.
			var old string
			for _, o := range objects {
				if strings.HasPrefix(o, "algorithm_id=sac") {
					old = strings.Split(o, "/")[0]
				}
			}
			if old == "" {
				t.Fatalf("no sac partition among %q", objects)
			}
			if err := os.Rename(filepath.Join(pq, old), filepath.Join(pq, "algorithm_id=sac2")); err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(base, "out-renamed")
			r := score(pq, out, c.flags...)
			want1 := `algorithm_id=sac2` + string(filepath.Separator) + `data_0.parquet: row 1: column algorithm_id: holds "sac/lstm 2=x%", but its folder algorithm_id=sac2 gives "sac2"`
			if r.code != 1 || !strings.Contains(r.stderr, want1) {
				t.Errorf("a renamed folder: want exit 1 saying %q: %s", want1, r)
			}
			if _, err := os.Stat(filepath.Join(out, "manifest.json")); err == nil {
				t.Errorf("a refused job published %s", out)
			}
		})
	}

	t.Run("row-field-refused", func(t *testing.T) {
		t.Parallel()
		base := t.TempDir()
		src, pq := filepath.Join(base, "jsonl"), filepath.Join(base, "pq")
		r := f.crl(ctx, nil, nil, "synth", "--out", src, "--seeds", "1", "--steps", "300", "--family", "ppo")
		if r.code != 0 {
			t.Fatalf("synth: %s", r)
		}
		objects := duckPartition(t, f, src, pq, "regime_id", "")
		out := filepath.Join(base, "out")
		r = f.crl(ctx, nil, nil, "score", pq, "--out", out, "--quiet", "--pattern", "*.parquet")
		first := filepath.Join(pq, filepath.FromSlash(objects[0]))
		want := first + ": folder " + strings.Split(objects[0], "/")[0] + ": regime_id is a field of each row, which the file must hold as a column"
		if r.code != 1 || !strings.Contains(r.stderr, want) {
			t.Errorf("a partition by regime_id: want exit 1 saying %q: %s", want, r)
		}
		if _, err := os.Stat(filepath.Join(out, "manifest.json")); err == nil {
			t.Errorf("a refused job published %s", out)
		}
	})
}

// duckPartition has DuckDB (one thread, so that each partition's rows keep
// their order and are one file) write every JSON Lines object of src, in
// key order, as a Hive-partitioned Parquet dataset into dst, partitioned
// by the comma-separated fields by; opts are more COPY options. It returns
// the files written (slash-separated, relative to dst, sorted).
func duckPartition(t *testing.T, f *fixture, src, dst, by, opts string) []string {
	t.Helper()
	var objs []string
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && jsonlObject(d.Name()) {
			objs = append(objs, sqlString(p))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(objs)
	duckSQL(t, f, filepath.Dir(dst), "SET threads = 1;\nCOPY (SELECT * FROM read_ndjson(["+strings.Join(objs, ", ")+"])) TO "+
		sqlString(dst)+" (FORMAT parquet, PARTITION_BY ("+by+")"+opts+");\nSELECT 1 AS ok;\n")
	var files []string
	err = filepath.WalkDir(dst, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, err := filepath.Rel(dst, p)
			if err != nil {
				return err
			}
			files = append(files, filepath.ToSlash(rel))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(files)
	if len(files) == 0 {
		t.Fatalf("DuckDB wrote nothing into %s", dst)
	}
	return files
}

// partitionLines writes into dst, for each file of a partitioned dataset
// (files, as duckPartition returns them), a JSON Lines object at the same
// key holding the lines of src's objects (in key order, then line order)
// whose fields by have the values its folders name: a string as it is, a
// number as its text, absent or null as __HIVE_DEFAULT_PARTITION__.
func partitionLines(t *testing.T, src, dst string, files []string, by []string) {
	t.Helper()
	fileOf := map[string]string{}
	for _, rel := range files {
		// The folders' values as crlbatch reads them (readers.HiveFolders:
		// a DuckDB timestamp folder 2024-01-05 22:00:00 is the text of a
		// timestamp cell, 2024-01-05T22:00:00).
		fields, err := readers.HiveFolders(rel)
		if err != nil || len(fields) != len(by) {
			t.Fatalf("%s: folders %v (%v), want one for each of %v", rel, fields, err, by)
		}
		var vals []string
		for i, f := range fields {
			if f.Name != by[i] {
				t.Fatalf("%s: %s is not a folder of a field of %v", rel, f.Folder, by)
			}
			switch {
			case f.Value == nil:
				vals = append(vals, readers.HiveDefaultPartition)
			case f.Value[0] == '"':
				var v string
				if err := json.Unmarshal(f.Value, &v); err != nil {
					t.Fatal(err)
				}
				vals = append(vals, v)
			default:
				vals = append(vals, string(f.Value))
			}
		}
		key := strings.Join(vals, "\x00")
		if fileOf[key] != "" {
			t.Fatalf("partition %q is in two files, %s and %s", vals, fileOf[key], rel)
		}
		fileOf[key] = rel
	}
	out := map[string]*strings.Builder{}
	eachLine(t, src, func(line string, row map[string]json.RawMessage) {
		var vals []string
		for _, name := range by {
			v, ok := row[name]
			switch {
			case !ok || string(v) == "null":
				vals = append(vals, "__HIVE_DEFAULT_PARTITION__")
			case v[0] == '"':
				var s string
				if err := json.Unmarshal(v, &s); err != nil {
					t.Fatal(err)
				}
				vals = append(vals, s)
			default:
				vals = append(vals, string(v))
			}
		}
		rel := fileOf[strings.Join(vals, "\x00")]
		if rel == "" {
			t.Fatalf("no file of DuckDB's holds partition %q", vals)
		}
		if out[rel] == nil {
			out[rel] = &strings.Builder{}
		}
		out[rel].WriteString(line + "\n")
	})
	for _, rel := range files {
		if out[rel] == nil {
			t.Fatalf("DuckDB's %s holds no line of the sweep", rel)
		}
		p := filepath.Join(dst, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(out[rel].String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// eachLine calls fn with every line of the plain JSON Lines objects of
// dir, in key order, and its fields.
func eachLine(t *testing.T, dir string, fn func(line string, row map[string]json.RawMessage)) {
	t.Helper()
	var objs []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if !strings.HasSuffix(p, ".jsonl") {
				t.Fatalf("%s: not a plain JSON Lines object", p)
			}
			objs = append(objs, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(objs)
	for _, p := range objs {
		objectLines(t, p, fn)
	}
}

// objectLines calls fn with every line of the plain JSON Lines object p
// and its fields.
func objectLines(t *testing.T, p string, fn func(line string, row map[string]json.RawMessage)) {
	t.Helper()
	fh, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	sc := bufio.NewScanner(fh)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var row map[string]json.RawMessage
		if err := json.Unmarshal(sc.Bytes(), &row); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		fn(sc.Text(), row)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
}

// rewriteLines rewrites every line of the plain JSON Lines objects of dir
// through edit (fields in the order encoding/json writes a map's: sorted).
func rewriteLines(t *testing.T, dir string, edit func(row map[string]json.RawMessage)) {
	t.Helper()
	var objs []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			objs = append(objs, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range objs {
		var b strings.Builder
		objectLines(t, p, func(_ string, row map[string]json.RawMessage) {
			edit(row)
			out, err := json.Marshal(row)
			if err != nil {
				t.Fatal(err)
			}
			b.Write(out)
			b.WriteByte('\n')
		})
		if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// readManifest reads dir's manifest.json.
func readManifest(t *testing.T, dir string) (m writers.Manifest) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err == nil {
		err = json.Unmarshal(data, &m)
	}
	if err != nil {
		t.Fatalf("%s: manifest.json: %v", dir, err)
	}
	return m
}
