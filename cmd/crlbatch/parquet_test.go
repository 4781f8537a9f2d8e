package main

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/crlbatch/crlbatch/pipeline"
	"github.com/crlbatch/crlbatch/readers"
	"github.com/crlbatch/crlbatch/scoring/protocoltest"
)

// parquetCases are the bundled examples of every protocol and a synthetic
// sweep whose runs span two objects each (made by synthSweep).
var parquetCases = []struct {
	name  string
	input string // "" for the synthetic sweep
	args  []string
}{
	{"sweep", "../../configs/example-sweep", nil},
	{"sweep-spec", "../../configs/example-sweep", []string{"--spec", "experiment", "--ceiling", "per_step", "--episode-end-from-spec"}},
	{"safecrl", "../../configs/examples/safecrl", []string{"--protocol", "safecrl"}},
	{"contilab", "../../configs/examples/contilab", []string{"--protocol", "contilab"}},
	{"skillshift", "../../configs/examples/skillshift", []string{"--protocol", "skillshift"}},
	{"synth", "", nil},
}

// synthSweep writes a synthetic sweep (gzip and zstd objects, each run
// split over two objects, extras) and returns its folder.
func synthSweep(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "synth")
	code, _, stderr := crl(t, "synth", "--out", dir, "--seeds", "2", "--steps", "300", "--split-files", "2",
		"--compression", "mixed", "--extras", "--seed", "7")
	if code != 0 {
		t.Fatalf("synth: exit %d: %s", code, stderr)
	}
	return dir
}

// copyRenamed copies every trace object under src to dst under the key
// convert gives its Parquet form, so that a job reading dst sees the same
// keys (the runs' source) as one reading the converted objects.
func copyRenamed(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if !strings.Contains(rel, ".jsonl") && !strings.HasSuffix(rel, ".ndjson") {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		out := filepath.Join(dst, filepath.FromSlash(pipeline.ConvertedKey(filepath.ToSlash(rel))))
		if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
			return err
		}
		return os.WriteFile(out, data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestParquetInputSameResults: every bundled example and a synthetic sweep,
// converted to Parquet and scored, give Parquet outputs and a report
// byte-identical to scoring the JSON Lines objects under the same keys;
// the manifests differ only in how each object was read (and its size).
func TestParquetInputSameResults(t *testing.T) {
	t.Parallel()
	for _, c := range parquetCases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			src := c.input
			if src == "" {
				src = synthSweep(t)
			}
			tmp := t.TempDir()
			in := filepath.Join(tmp, "in")
			copyRenamed(t, src, in)
			score := func(out string) {
				t.Helper()
				args := append([]string{"score", in, "--out", out, "--quiet", "--pattern", "*.parquet", "--concurrency", "2"}, c.args...)
				if code, _, stderr := crl(t, args...); code != 0 {
					t.Fatalf("score: exit %d: %s", code, stderr)
				}
			}
			score(filepath.Join(tmp, "json"))
			if err := os.RemoveAll(in); err != nil {
				t.Fatal(err)
			}
			code, stdout, stderr := crl(t, "convert", src, "--out", in, "--concurrency", "2")
			if code != 0 {
				t.Fatalf("convert: exit %d: %s", code, stderr)
			}
			score(filepath.Join(tmp, "parquet"))
			sameOutputs(t, filepath.Join(tmp, "json"), filepath.Join(tmp, "parquet"))
			mj, mp := readManifest(t, filepath.Join(tmp, "json")), readManifest(t, filepath.Join(tmp, "parquet"))
			if len(mj.Objects) != len(mp.Objects) || len(mj.Objects) == 0 {
				t.Fatalf("objects: %d JSON Lines, %d Parquet", len(mj.Objects), len(mp.Objects))
			}
			objects := "objects"
			if len(mp.Objects) == 1 {
				objects = "object"
			}
			if want := fmt.Sprintf("converted %d %s to Parquet under %s\n", len(mp.Objects), objects, in); stdout != want {
				t.Errorf("convert said %q, want %q", stdout, want)
			}
			for i := range mj.Objects {
				j, p := mj.Objects[i], mp.Objects[i]
				if j.Read != pipeline.ReadDecoded || p.Read != pipeline.ReadParquet {
					t.Errorf("%s: read %q and %q, want decoded and parquet", j.Key, j.Read, p.Read)
				}
				if j.Key != p.Key || j.RowsRead != p.RowsRead || j.RunsFound != p.RunsFound {
					t.Errorf("object %d: %+v, Parquet %+v", i, j, p)
				}
			}
		})
	}
}

// TestParquetInputEveryCompression: every bundled example and a synthetic
// sweep, converted with each --compression convert offers, score to Parquet
// outputs and a report byte-identical to the JSON Lines objects' under the
// same keys; an unknown codec is a usage error before anything is written.
func TestParquetInputEveryCompression(t *testing.T) {
	t.Parallel()
	for _, c := range parquetCases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			src := c.input
			if src == "" {
				src = synthSweep(t)
			}
			tmp := t.TempDir()
			score := func(in, out string) {
				t.Helper()
				args := append([]string{"score", in, "--out", out, "--quiet", "--pattern", "*.parquet", "--concurrency", "2"}, c.args...)
				if code, _, stderr := crl(t, args...); code != 0 {
					t.Fatalf("score: exit %d: %s", code, stderr)
				}
			}
			in := filepath.Join(tmp, "in")
			copyRenamed(t, src, in)
			score(in, filepath.Join(tmp, "json"))
			for _, codec := range readers.ConvertCompressions {
				if err := os.RemoveAll(in); err != nil {
					t.Fatal(err)
				}
				if code, _, stderr := crl(t, "convert", src, "--out", in, "--compression", codec); code != 0 {
					t.Fatalf("convert --compression %s: exit %d: %s", codec, code, stderr)
				}
				out := filepath.Join(tmp, codec)
				score(in, out)
				sameOutputs(t, filepath.Join(tmp, "json"), out)
			}
		})
	}
	out := filepath.Join(t.TempDir(), "out")
	code, _, stderr := crl(t, "convert", "../../configs/example-sweep", "--out", out, "--compression", "brotli")
	if code != 2 || !strings.Contains(stderr, "--compression brotli: want one of zstd, snappy, lz4_raw, uncompressed") {
		t.Errorf("--compression brotli: exit %d: %s", code, stderr)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("--compression brotli left %s: %v", out, err)
	}
}

// TestConvertMaps: convert writes the example sweep's components as a
// struct, and with --maps as a map in every object; both forms score to
// the JSON Lines' outputs byte for byte.
func TestConvertMaps(t *testing.T) {
	t.Parallel()
	const src = "../../configs/example-sweep"
	tmp := t.TempDir()
	in := filepath.Join(tmp, "in")
	score := func(out string) {
		t.Helper()
		if code, _, stderr := crl(t, "score", in, "--out", out, "--quiet", "--pattern", "*.parquet"); code != 0 {
			t.Fatalf("score: exit %d: %s", code, stderr)
		}
	}
	copyRenamed(t, src, in)
	score(filepath.Join(tmp, "json"))
	for _, c := range []struct {
		flags []string
		want  arrow.Type
	}{
		{nil, arrow.STRUCT},
		{[]string{"--maps"}, arrow.MAP},
	} {
		if err := os.RemoveAll(in); err != nil {
			t.Fatal(err)
		}
		if code, _, stderr := crl(t, append([]string{"convert", src, "--out", in}, c.flags...)...); code != 0 {
			t.Fatalf("convert %v: exit %d: %s", c.flags, code, stderr)
		}
		files := 0
		err := filepath.WalkDir(in, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			files++
			pf, err := file.OpenParquetFile(p, false)
			if err != nil {
				return err
			}
			defer pf.Close()
			fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
			if err != nil {
				return err
			}
			schema, err := fr.Schema()
			if err != nil {
				return err
			}
			if f, ok := schema.FieldsByName("components"); !ok || f[0].Type.ID() != c.want {
				t.Errorf("convert %v: %s: components %v, want a %s", c.flags, p, f, c.want)
			}
			return nil
		})
		if err != nil || files == 0 {
			t.Fatalf("convert %v: %d files, %v", c.flags, files, err)
		}
		out := filepath.Join(tmp, fmt.Sprint(c.want))
		score(out)
		sameOutputs(t, filepath.Join(tmp, "json"), out)
	}
}

// sameOutputs is protocoltest.SameOutputs.
func sameOutputs(t *testing.T, a, b string) {
	t.Helper()
	protocoltest.SameOutputs(t, a, b)
}

// TestParquetInputSameOutcome: the corpus cases that have a Parquet form
// (wrong types, missing fields, nulls, a run-key clash across objects, bad
// rows skipped) end as they do in JSON Lines, the row named as a row; a
// Parquet file whose column has the wrong type, or lacks a required field,
// fails naming the object and the column, but under --max-bad-rows its
// rows are bad rows as in JSON Lines (skipped, or past the limit the same
// error).
func TestParquetInputSameOutcome(t *testing.T) {
	t.Parallel()
	const ok1 = `{"run_id":"a","reward":0.5,"regime_id":"r"}`
	cases := []struct {
		name    string
		objects map[string]string
		args    []string
		want    string // for a schema error: what the Parquet job's error says instead
	}{
		{"wrong type in a row", map[string]string{"a.jsonl": ok1 + "\n" + `{"run_id":"a","reward":"x","regime_id":"r"}` + "\n"}, nil, ""},
		{"missing reward in a row", map[string]string{"a.jsonl": ok1 + "\n" + `{"run_id":"a","regime_id":"r"}` + "\n"}, nil, ""},
		{"null regime_id", map[string]string{"a.jsonl": ok1 + "\n" + `{"run_id":"a","reward":1,"regime_id":null}` + "\n"}, nil, ""},
		{"nan-free overflow-free components", map[string]string{"a.jsonl": ok1 + "\n" + `{"run_id":"a","reward":1,"regime_id":"r","components":{"x":"1"}}` + "\n"}, nil, ""},
		{"bad rows skipped", map[string]string{
			"a.jsonl": ok1 + "\n" + `{"run_id":"a","reward":"x","regime_id":"r"}` + "\n" + `{"run_id":"a","reward":0.25,"regime_id":"s"}` + "\n",
			"b.jsonl": `{"run_id":"b","reward":0.5,"regime_id":"r"}` + "\n" + `{"run_id":"b","reward":0.7,"regime_id":"r","step":1.5}` + "\n"},
			[]string{"--max-bad-rows", "2"}, ""},
		{"run-key clash across objects", map[string]string{
			"a.jsonl": `{"seed":1,"reward":0.5,"regime_id":"r"}` + "\n",
			"b.jsonl": `{"seed":"1","reward":0.5,"regime_id":"r"}` + "\n"}, nil, ""},
		{"a run across objects", map[string]string{
			"a.jsonl": ok1 + "\n",
			"b.jsonl": `{"run_id":"a","reward":0.25,"regime_id":"s","gamma":0.9}` + "\n"}, nil, ""},
		{"safecrl wrong type", map[string]string{"a.jsonl": `{"run_id":"a","task":"t","return":1}` + "\n" + `{"run_id":"a","task":"t","return":true}` + "\n"},
			[]string{"--protocol", "safecrl"}, ""},
		{"string column for a number", map[string]string{"a.jsonl": `{"run_id":"a","reward":"x","regime_id":"r"}` + "\n"}, nil,
			"a.parquet: column reward: of type utf8, want a number column"},
		{"no column for a required field", map[string]string{"a.jsonl": `{"run_id":"a","regime_id":"r"}` + "\n"}, nil,
			"a.parquet: column reward: missing: a required field"},
		{"skillshift boolean column of strings", map[string]string{"a.jsonl": `{"run_id":"a","site":"g","condition":"src","success":"yes","steps":3}` + "\n"},
			[]string{"--protocol", "skillshift"}, "a.parquet: column success: of type utf8, want a boolean column"},
		// Under --max-bad-rows such an object's rows are bad rows, skipped
		// and named as their JSON Lines twins are, or past the limit the
		// same error.
		{"string column for a number, rows skipped", map[string]string{
			"a.jsonl": ok1 + "\n",
			"b.jsonl": `{"run_id":"b","reward":"x","regime_id":"r"}` + "\n" + `{"run_id":"b","reward":"0.5","regime_id":"r"}` + "\n"},
			[]string{"--max-bad-rows", "2"}, ""},
		{"string column for a number, past --max-bad-rows", map[string]string{
			"a.jsonl": ok1 + "\n",
			"b.jsonl": `{"run_id":"b","reward":"x","regime_id":"r"}` + "\n" + `{"run_id":"b","reward":"y","regime_id":"r"}` + "\n" + `{"run_id":"b","reward":"z","regime_id":"r"}` + "\n"},
			[]string{"--max-bad-rows", "2"}, ""},
		{"no column for a required field, rows skipped", map[string]string{
			"a.jsonl": ok1 + "\n",
			"b.jsonl": `{"run_id":"b","reward":1}` + "\n" + `{"run_id":"b","reward":2,"gamma":0.9}` + "\n"},
			[]string{"--max-bad-rows", "5"}, ""},
		{"skillshift boolean column of strings, rows skipped", map[string]string{
			"a.jsonl": `{"run_id":"a","site":"g","condition":"src","success":true,"steps":3}` + "\n",
			"b.jsonl": `{"run_id":"b","site":"g","condition":"src","success":"yes","steps":3}` + "\n"},
			[]string{"--protocol", "skillshift", "--max-bad-rows", "1"}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tmp := t.TempDir()
			src, in := filepath.Join(tmp, "src"), filepath.Join(tmp, "in")
			for name, body := range c.objects {
				writeFile(t, filepath.Join(src, name), body)
			}
			copyRenamed(t, src, in)
			run := func(out string) (int, string) {
				args := append([]string{"score", in, "--out", filepath.Join(tmp, out), "--quiet", "--pattern", "*.parquet"}, c.args...)
				code, _, stderr := crl(t, args...)
				return code, stderr
			}
			jcode, jerr := run("json")
			if strings.Contains(jerr, "zstd") || strings.Contains(jerr, "gzip") {
				return // an error of the JSON Lines object's compression: none in Parquet
			}
			if err := os.RemoveAll(in); err != nil {
				t.Fatal(err)
			}
			if code, _, stderr := crl(t, "convert", src, "--out", in); code != 0 {
				t.Fatalf("convert: exit %d: %s", code, stderr)
			}
			pcode, perr := run("parquet")
			if c.want != "" {
				if pcode != 1 || !strings.Contains(perr, filepath.Join(in, c.want)) {
					t.Fatalf("Parquet: exit %d: %s; want exit 1 and %q", pcode, perr, c.want)
				}
				return
			}
			if jcode != pcode {
				t.Fatalf("exit %d (JSON Lines: %s), Parquet %d (%s)", jcode, jerr, pcode, perr)
			}
			// Errors found while a row is read name it as a row; those found
			// while runs are assembled across objects (a run-key clash) say
			// line, which is the row's number too.
			if a, b := errorLines(jerr), errorLines(perr); strings.ReplaceAll(a, ": line ", ": row ") != strings.ReplaceAll(b, ": line ", ": row ") {
				t.Errorf("Parquet said\n%s\nJSON Lines said\n%s", b, a)
			}
			if jcode == 0 {
				sameOutputs(t, filepath.Join(tmp, "json"), filepath.Join(tmp, "parquet"))
				mj, mp := readManifest(t, filepath.Join(tmp, "json")), readManifest(t, filepath.Join(tmp, "parquet"))
				if len(mj.Skipped) != len(mp.Skipped) {
					t.Fatalf("skipped %v, Parquet %v", mj.Skipped, mp.Skipped)
				}
				for i := range mj.Skipped {
					if mj.Skipped[i] != mp.Skipped[i] {
						t.Errorf("skipped %+v, Parquet %+v", mj.Skipped[i], mp.Skipped[i])
					}
				}
			} else if !strings.Contains(perr, ": row ") && !strings.Contains(perr, "line 1: run key") {
				t.Errorf("Parquet error names no row: %s", perr)
			}
		})
	}
}

// errorLines keeps the lines of stderr that are the program's error (the
// logs carry times).
func errorLines(stderr string) string {
	var out []string
	for _, l := range strings.Split(stderr, "\n") {
		if strings.HasPrefix(l, "crlbatch: ") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// TestCorpusParquetEquivalents: every corpus case that scores a folder and
// whose objects crlbatch convert can turn into Parquet (every line valid
// JSON; no generated or set-up input, no --pattern of its own) ends the
// same way read as Parquet as read as JSON Lines under the same keys: the
// same exit status, the same error (a row number for a line number), and,
// when it succeeds, the same Parquet files and report.
func TestCorpusParquetEquivalents(t *testing.T) {
	t.Parallel()
	ents, err := os.ReadDir(corpusDir)
	if err != nil {
		t.Fatal(err)
	}
	lineNo := regexp.MustCompile(`\b(line|row) \d+`)
	// A column whose every value has the wrong type is a schema error in
	// Parquet (naming the column) where JSON Lines names the first row.
	schemaErr := regexp.MustCompile(`: column (\S+): of type \S+, want`)
	tried := 0
	for _, e := range ents {
		dir := filepath.Join(corpusDir, e.Name())
		c, err := loadCorpusCase(dir)
		if err != nil || len(c.Args) == 0 || c.Args[0] != "score" || len(c.Setup)+len(c.Generate) > 0 || c.KnownBug != "" ||
			!slices.Contains(c.Args, "IN") || slices.ContainsFunc(c.Args, func(a string) bool {
			return strings.HasPrefix(a, "IN/") || strings.HasPrefix(a, "--pattern") || strings.Contains(a, "=IN")
		}) {
			continue
		}
		if _, err := os.Stat(filepath.Join(dir, "in")); err != nil {
			continue
		}
		tmp := t.TempDir()
		conv := filepath.Join(tmp, "converted")
		if code, _, _ := crl(t, "convert", filepath.Join(dir, "in"), "--out", conv); code != 0 {
			continue // no Parquet equivalent (a line that is not JSON, no object)
		}
		tried++
		t.Run(e.Name(), func(t *testing.T) {
			in := filepath.Join(tmp, "in")
			run := func(out string) (int, string) {
				vars := map[string]string{"IN": in, "OUT": filepath.Join(tmp, out), "CASE": dir}
				args := append(corpusExpandArgs(c.Args, vars), "--pattern", "*.parquet")
				code, _, stderr := crl(t, args...)
				return code, errorLines(stderr)
			}
			copyRenamed(t, filepath.Join(dir, "in"), in)
			jcode, jerr := run("json")
			if strings.Contains(jerr, "zstd") || strings.Contains(jerr, "gzip") {
				return // an error of the JSON Lines object's compression: none in Parquet
			}
			if err := os.RemoveAll(in); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(conv, in); err != nil {
				t.Fatal(err)
			}
			pcode, perr := run("parquet")
			if m := schemaErr.FindStringSubmatch(perr); m != nil && pcode == 1 && jcode == 1 && strings.Contains(jerr, ": "+m[1]+": got ") {
				return
			}
			if jcode != pcode || lineNo.ReplaceAllString(jerr, "N") != lineNo.ReplaceAllString(perr, "N") {
				t.Fatalf("JSON Lines: exit %d %s\nParquet: exit %d %s", jcode, jerr, pcode, perr)
			}
			if jcode == 0 {
				sameOutputs(t, filepath.Join(tmp, "json"), filepath.Join(tmp, "parquet"))
			}
		})
	}
	if tried < 20 {
		t.Errorf("only %d corpus cases have a Parquet equivalent", tried)
	}
}

// TestParquetBesideItsSource: a folder holding JSON Lines objects and,
// beside them, their conversions is refused when both forms are listed
// (every row would count twice), naming both objects; scoring one form of
// that folder works.
func TestParquetBesideItsSource(t *testing.T) {
	t.Parallel()
	src := "../../configs/example-sweep"
	in := filepath.Join(t.TempDir(), "in")
	if code, _, stderr := crl(t, "convert", src, "--out", in); code != 0 {
		t.Fatalf("convert: exit %d: %s", code, stderr)
	}
	copyDir(t, src, in)
	var jsonl []string
	err := filepath.WalkDir(in, func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(p, ".jsonl") {
			rel, _ := filepath.Rel(in, p)
			jsonl = append(jsonl, filepath.ToSlash(rel))
		}
		return err
	})
	if err != nil || len(jsonl) == 0 {
		t.Fatalf("no JSON Lines objects copied (%v)", err)
	}
	slices.Sort(jsonl)
	out := filepath.Join(t.TempDir(), "out")
	code, _, stderr := crl(t, "score", in, "--out", out, "--quiet", "--pattern", "*.jsonl", "--pattern", "*.parquet")
	first := jsonl[0]
	if code != 1 || !strings.Contains(stderr, first+" and ") || !strings.Contains(stderr, pipeline.ConvertedKey(first)+" are both listed") ||
		!strings.Contains(stderr, "count each of their rows twice") {
		t.Fatalf("both forms: exit %d: %s", code, stderr)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("a refused job left %s (%v)", out, err)
	}
	var outs [2]string // the runs' source differ: no outputs to compare
	for i, pattern := range []string{"*.jsonl*", "*.parquet"} {
		outs[i] = filepath.Join(t.TempDir(), "out")
		if code, _, stderr := crl(t, "score", in, "--out", outs[i], "--quiet", "--pattern", pattern); code != 0 {
			t.Fatalf("--pattern %s: exit %d: %s", pattern, code, stderr)
		}
		for _, o := range readManifest(t, outs[i]).Objects {
			if o.Read != []string{pipeline.ReadDecoded, pipeline.ReadParquet}[i] {
				t.Errorf("--pattern %s: %s read %q", pattern, o.Key, o.Read)
			}
		}
	}
}

// TestParquetNeedsItsPattern: a folder of Parquet traces scored without a
// pattern that names them fails as an empty listing does (exit 1, nothing
// written), and the error says how to read them.
func TestParquetNeedsItsPattern(t *testing.T) {
	t.Parallel()
	in := filepath.Join(t.TempDir(), "in")
	if code, _, stderr := crl(t, "convert", "../../configs/example-sweep", "--out", in); code != 0 {
		t.Fatalf("convert: exit %d: %s", code, stderr)
	}
	out := filepath.Join(t.TempDir(), "out")
	hint := "; 9 objects end in .parquet (--pattern '*.parquet' reads Parquet traces)"
	code, _, stderr := crl(t, "score", in, "--out", out, "--quiet")
	if code != 1 || !strings.Contains(stderr, in+`: no object matches ["*.jsonl" "*.jsonl.gz" "*.jsonl.zst" "*.ndjson"]`+hint) {
		t.Errorf("score: exit %d: %s", code, stderr)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("the failed job left %s (%v)", out, err)
	}
	if code, stdout, stderr := crl(t, "validate", in); code != 1 || !strings.Contains(stdout+stderr, hint) {
		t.Errorf("validate: exit %d: %s%s", code, stdout, stderr)
	}
	// A listing with nothing named *.parquet says nothing of Parquet.
	empty := t.TempDir()
	if code, _, stderr := crl(t, "score", empty, "--out", out, "--quiet"); code != 1 || strings.Contains(stderr, "parquet") {
		t.Errorf("empty folder: exit %d: %s", code, stderr)
	}
}

// TestJSONLinesNamedAsSparkWrites: JSON Lines objects named as Spark's
// and pandas' writers name them (part-00000-….json, .json.gz, beside
// Spark's _SUCCESS) match no default pattern: score, validate and convert
// fail as an empty listing does, each saying how many objects of each
// such ending are there and which --pattern reads them (convert, which
// reads no Parquet, says nothing of a Parquet object beside them); with
// those patterns the same objects score.
func TestJSONLinesNamedAsSparkWrites(t *testing.T) {
	t.Parallel()
	in := t.TempDir()
	for i, name := range []string{"ppo/ppo-s0.jsonl", "sac/sac-s0.jsonl", "ewc/ewc-s0.jsonl"} {
		data, err := os.ReadFile(filepath.Join("../../configs/example-sweep", name))
		if err != nil {
			t.Fatal(err)
		}
		dst := filepath.Join(in, fmt.Sprintf("part-%05d-1b2c.c000.json", i))
		if i == 2 {
			var gz bytes.Buffer
			zw := gzip.NewWriter(&gz)
			if _, err := zw.Write(data); err != nil || zw.Close() != nil {
				t.Fatal(err)
			}
			data, dst = gz.Bytes(), dst+".gz"
		}
		if err := os.WriteFile(dst, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(in, "_SUCCESS"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	pq := filepath.Join(t.TempDir(), "pq")
	if code, _, stderr := crl(t, "convert", "../../configs/examples/contilab", "--out", pq); code != 0 {
		t.Fatalf("convert: exit %d: %s", code, stderr)
	}
	var first string
	err := filepath.WalkDir(pq, func(p string, d fs.DirEntry, err error) error {
		if err == nil && first == "" && strings.HasSuffix(p, ".parquet") {
			first = p
		}
		return err
	})
	if err != nil || first == "" {
		t.Fatalf("no Parquet object under %s (%v)", pq, err)
	}
	data, err := os.ReadFile(first)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(in, "other.parquet"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	none := `: no object matches ["*.jsonl" "*.jsonl.gz" "*.jsonl.zst" "*.ndjson"]`
	parquet := "; 1 object ends in .parquet (--pattern '*.parquet' reads Parquet traces)"
	jsonl := "; 2 objects end in .json (--pattern '*.json' reads such objects as JSON Lines)" +
		"; 1 object ends in .json.gz (--pattern '*.json.gz' reads such objects as JSON Lines)"
	out := filepath.Join(t.TempDir(), "out")
	if code, _, stderr := crl(t, "score", in, "--out", out, "--quiet"); code != 1 || !strings.Contains(stderr, in+none+parquet+jsonl) {
		t.Errorf("score: exit %d: %s", code, stderr)
	}
	if code, stdout, stderr := crl(t, "validate", in); code != 1 || !strings.Contains(stdout+stderr, none+parquet+jsonl) {
		t.Errorf("validate: exit %d: %s%s", code, stdout, stderr)
	}
	if code, _, stderr := crl(t, "convert", in, "--out", filepath.Join(t.TempDir(), "c")); code != 1 || !strings.Contains(stderr, in+none+jsonl+"\n") {
		t.Errorf("convert: exit %d: %s", code, stderr)
	}
	code, stdout, stderr := crl(t, "score", in, "--out", out, "--overwrite", "--pattern", "*.json", "--pattern", "*.json.gz")
	if code != 0 || !strings.Contains(stdout, "scored 3 runs in 3 families from 3 objects") {
		t.Errorf("--pattern '*.json' --pattern '*.json.gz': exit %d: %s%s", code, stdout, stderr)
	}
}
