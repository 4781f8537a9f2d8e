// Package protocoltest is the conformance suite every registered protocol
// passes, as go-cloud's drivertest is for blob drivers: the protocol's
// example scored end to end through the command, the same bytes at any
// concurrency, no null without its reason, Parquet that DuckDB reads with
// the declared types, validate agreeing with score, and a bad row named by
// object and line, and the same bytes from a warm --cache, from a warm
// --cache after lines were appended to the objects (continued by a
// scoring.Resumer, decoded again otherwise) and from the example converted
// to Parquet (inputs.go).
//
// The suite drives the real command through Config.Command (the caller's
// in-process entry point, so that a protocol registered only in a test
// binary runs through the same code as in crlbatch), and DuckDB through
// Config.DuckDB.
package protocoltest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/crlbatch/crlbatch/scoring"
	"github.com/crlbatch/crlbatch/writers"
)

// Config says how to run the suite for one protocol.
type Config struct {
	// Protocol is the registered name.
	Protocol string
	// Example is a folder of trace objects the protocol scores; the suite
	// never writes into it. It must hold at least one plain .jsonl object
	// (a bad row is appended to a copy of one).
	Example string
	// Args are extra flags for every score and validate (besides
	// --protocol).
	Args []string
	// Command runs crlbatch in-process with args (without the program
	// name) and returns its exit status, stdout and stderr.
	Command func(args ...string) (code int, stdout, stderr string)
	// DuckDB reads Parquet files and returns, per file, its columns with
	// DuckDB's types, its row count and its null count per column; nil
	// skips that check (the caller says why, with t.Skip or by failing).
	DuckDB func(t testing.TB, files ...string) map[string]DuckFile
}

// DuckFile is what DuckDB sees of one Parquet file.
type DuckFile struct {
	Rows    int
	Columns []DuckColumn
	Nulls   map[string]int
}

// DuckColumn is one column as DuckDB types it.
type DuckColumn struct {
	Name string `json:"name"`
	Type string `json:"type"`
}

// Run runs every check of the suite as subtests of t.
func Run(t *testing.T, c Config) {
	p, err := scoring.Lookup(c.Protocol)
	if err != nil {
		t.Fatal(err)
	}
	desc := p.Describe()
	base := append([]string{"--protocol", c.Protocol, "--quiet"}, c.Args...)
	score := func(t *testing.T, in string, extra ...string) (string, int, string, string) {
		t.Helper()
		out := filepath.Join(t.TempDir(), "out")
		args := append([]string{"score", in, "--out", out}, base...)
		code, stdout, stderr := c.Command(append(args, extra...)...)
		return out, code, stdout, stderr
	}

	t.Run("ScoresItsExample", func(t *testing.T) {
		out, code, stdout, stderr := score(t, c.Example)
		if code != 0 {
			t.Fatalf("score %s: exit %d: %s", c.Example, code, stderr)
		}
		want := append(slices.Clone(desc.Outputs), "report.md", "report.html", "manifest.json")
		sort.Strings(want)
		var got []string
		figs := map[string]int{}
		for _, n := range list(t, out) {
			if rest, ok := strings.CutPrefix(n, "figure-"); ok { // a Figurer's: name.svg and name.png
				figs[strings.TrimSuffix(strings.TrimSuffix(rest, ".svg"), ".png")]++
				continue
			}
			got = append(got, n)
		}
		if !slices.Equal(got, want) {
			t.Errorf("score wrote %v, want %v (Description.Outputs, report.md, report.html, manifest.json)", got, want)
		}
		for f, n := range figs {
			if n != 2 {
				t.Errorf("figure-%s: want an .svg and a .png", f)
			}
		}
		m := manifest(t, out)
		if m.Runs < 1 || m.Families < 1 {
			t.Errorf("manifest: %d runs in %d families: the example must score something", m.Runs, m.Families)
		}
		if !strings.Contains(stdout, fmt.Sprintf("scored %d runs in %d families", m.Runs, m.Families)) {
			t.Errorf("stdout does not agree with the manifest (%d runs, %d families):\n%s", m.Runs, m.Families, stdout)
		}
		for _, o := range m.Outputs {
			if o.Rows != nil && strings.HasSuffix(o.Name, ".parquet") {
				rb := readParquet(t, filepath.Join(out, o.Name))
				if len(rb.Rows) != *o.Rows {
					t.Errorf("%s: %d rows, the manifest says %d", o.Name, len(rb.Rows), *o.Rows)
				}
				if rb.Metadata["crlbatch.protocol"] != c.Protocol {
					t.Errorf("%s: crlbatch.protocol %q, want %q", o.Name, rb.Metadata["crlbatch.protocol"], c.Protocol)
				}
				var params map[string]any
				if err := json.Unmarshal([]byte(rb.Metadata["crlbatch.params"]), &params); err != nil {
					t.Errorf("%s: crlbatch.params is not JSON: %v", o.Name, err)
				} else if params["protocol"] != c.Protocol {
					t.Errorf("%s: crlbatch.params names protocol %v, want %q", o.Name, params["protocol"], c.Protocol)
				}
			}
		}
		report, err := os.ReadFile(filepath.Join(out, "report.md"))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(report, []byte("crlbatch report: "+c.Protocol)) {
			t.Errorf("report.md does not name the protocol %s", c.Protocol)
		}
	})

	t.Run("SameBytesAtAnyConcurrency", func(t *testing.T) {
		one, code, _, stderr := score(t, c.Example, "--concurrency", "1")
		if code != 0 {
			t.Fatalf("--concurrency 1: exit %d: %s", code, stderr)
		}
		eight, code, _, stderr := score(t, c.Example, "--concurrency", "8")
		if code != 0 {
			t.Fatalf("--concurrency 8: exit %d: %s", code, stderr)
		}
		names := list(t, one)
		if got := list(t, eight); !slices.Equal(got, names) {
			t.Fatalf("--concurrency 8 wrote %v, --concurrency 1 %v", got, names)
		}
		for _, n := range names {
			a, b := read(t, filepath.Join(one, n)), read(t, filepath.Join(eight, n))
			if n == "manifest.json" {
				a, b = stable(t, a), stable(t, b)
			}
			if !bytes.Equal(a, b) {
				t.Errorf("%s differs between --concurrency 1 and 8", n)
			}
		}
	})

	t.Run("EveryNullHasAReason", func(t *testing.T) {
		out, code, _, stderr := score(t, c.Example)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		for _, n := range parquetFiles(t, out) {
			rb := readParquet(t, filepath.Join(out, n))
			nulls := 0
			for i, typ := range rb.Types {
				col := rb.Columns[i]
				if typ != "float64" && !strings.HasPrefix(typ, "list<") {
					continue // a missing identity value or baseline name is not a metric
				}
				if !slices.Contains(rb.Columns, "reasons") {
					t.Fatalf("%s: metric column %s but no reasons column", n, col)
				}
				for r, row := range rb.Rows {
					if row[col] != nil {
						if x, ok := row[col].(float64); ok && x != x {
							t.Errorf("%s row %d: %s is NaN, not a null with a reason", n, r, col)
						}
						continue
					}
					nulls++
					if reason(row["reasons"], col) == "" {
						t.Errorf("%s row %d: %s is null without a reason", n, r, col)
					}
				}
			}
			t.Logf("%s: %d nulls, each with its reason", n, nulls)
		}
	})

	t.Run("DuckDBReadsTheTypes", func(t *testing.T) {
		if c.DuckDB == nil {
			t.Skip("no DuckDB reader configured")
		}
		out, code, _, stderr := score(t, c.Example)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		var files []string
		for _, n := range parquetFiles(t, out) {
			files = append(files, filepath.Join(out, n))
		}
		duck := c.DuckDB(t, files...)
		for _, f := range files {
			d, ok := duck[f]
			if !ok {
				t.Fatalf("DuckDB did not read %s", f)
			}
			rb := readParquet(t, f)
			if d.Rows != len(rb.Rows) {
				t.Errorf("%s: DuckDB reads %d rows, Arrow %d", f, d.Rows, len(rb.Rows))
			}
			if len(d.Columns) != len(rb.Columns) {
				t.Fatalf("%s: DuckDB reads %d columns, Arrow %d", f, len(d.Columns), len(rb.Columns))
			}
			for i, dc := range d.Columns {
				if dc.Name != rb.Columns[i] {
					t.Errorf("%s: column %d is %q to DuckDB, %q to Arrow", f, i, dc.Name, rb.Columns[i])
				}
				if want := duckType(rb.Types[i]); dc.Type != want {
					t.Errorf("%s: column %s is %s to DuckDB, want %s (Arrow %s)", f, dc.Name, dc.Type, want, rb.Types[i])
				}
				n := 0
				for _, row := range rb.Rows {
					if row[dc.Name] == nil {
						n++
					}
				}
				if d.Nulls[dc.Name] != n {
					t.Errorf("%s: column %s has %d nulls to DuckDB, %d written", f, dc.Name, d.Nulls[dc.Name], n)
				}
			}
		}
	})

	t.Run("ValidateAgreesWithScore", func(t *testing.T) {
		out, code, _, stderr := score(t, c.Example)
		if code != 0 {
			t.Fatalf("score: exit %d: %s", code, stderr)
		}
		m := manifest(t, out)
		code, stdout, stderr := c.Command(append([]string{"validate", c.Example}, base...)...)
		if code != 0 {
			t.Fatalf("validate: exit %d, score succeeded:\n%s%s", code, stdout, stderr)
		}
		runs := 0
		for _, l := range strings.Split(stdout, "\n") {
			if strings.HasPrefix(l, "run ") {
				runs++
			}
		}
		var rows int64
		for _, o := range m.Objects {
			rows += o.RowsRead
		}
		want := fmt.Sprintf("%d objects, %d rows, %d runs, 0 bad rows, 0 problems", len(m.Objects), rows, runs)
		if !strings.Contains(stdout, want) {
			t.Errorf("validate says\n%s\nwant %q", stdout, want)
		}
		// validate lists every run; score keeps every run of the example.
		if runs != m.Runs {
			t.Errorf("validate lists %d runs, score scored %d", runs, m.Runs)
		}
	})

	t.Run("BadRowNamesObjectAndLine", func(t *testing.T) {
		in := filepath.Join(t.TempDir(), "in")
		if err := os.CopyFS(in, os.DirFS(c.Example)); err != nil {
			t.Fatal(err)
		}
		victim, lines := "", 0
		err := filepath.WalkDir(in, func(p string, d os.DirEntry, err error) error {
			if err == nil && victim == "" && !d.IsDir() && strings.HasSuffix(p, ".jsonl") {
				victim = p
			}
			return err
		})
		if err != nil || victim == "" {
			t.Fatalf("no plain .jsonl object in %s to spoil (%v)", c.Example, err)
		}
		data := read(t, victim)
		lines = bytes.Count(data, []byte("\n"))
		if len(data) > 0 && data[len(data)-1] != '\n' {
			data = append(data, '\n')
			lines++
		}
		data = append(data, "{\"not\": json}\n"...)
		if err := os.WriteFile(victim, data, 0o644); err != nil {
			t.Fatal(err)
		}
		bad := lines + 1
		out, code, _, stderr := score(t, in)
		if code != 1 {
			t.Fatalf("score with a bad row: exit %d, want 1: %s", code, stderr)
		}
		named := regexp.MustCompile(regexp.QuoteMeta(victim) + `: line ` + strconv.Itoa(bad) + `\b`)
		if !named.MatchString(stderr) {
			t.Errorf("the error does not name %s line %d:\n%s", victim, bad, stderr)
		}
		if got := list(t, out); len(got) != 0 {
			t.Errorf("a failed job left %v behind", got)
		}
		code, stdout, _ := c.Command(append([]string{"validate", in}, base...)...)
		if code != 1 || !named.MatchString(stdout) || !strings.Contains(stdout, "problem (bad row)") {
			t.Errorf("validate: exit %d, want 1 and a bad row naming %s line %d:\n%s", code, victim, bad, stdout)
		}
		_, code, _, stderr = score(t, in, "--max-bad-rows", "1")
		if code != 0 {
			t.Errorf("--max-bad-rows 1 does not skip the bad row: exit %d: %s", code, stderr)
		}
	})

	inputForms(t, c, p, score)
}

// duckType is the DuckDB type of an Arrow type as the writers declare them.
func duckType(arrow string) string {
	switch {
	case arrow == "utf8":
		return "VARCHAR"
	case arrow == "int64":
		return "BIGINT"
	case arrow == "float64":
		return "DOUBLE"
	case arrow == "bool":
		return "BOOLEAN"
	case strings.HasPrefix(arrow, "list<") && strings.Contains(arrow, "float64"):
		return "DOUBLE[]"
	case strings.HasPrefix(arrow, "list<") && strings.Contains(arrow, "utf8"):
		return "VARCHAR[]"
	case strings.HasPrefix(arrow, "map<"):
		return "MAP(VARCHAR, VARCHAR)"
	}
	return "unknown Arrow type " + arrow
}

func reason(reasons any, col string) string {
	kvs, _ := reasons.([]writers.KV)
	for _, kv := range kvs {
		if kv.Key == col {
			return kv.Value
		}
	}
	return ""
}

type manifestFile struct {
	Runs     int `json:"runs"`
	Families int `json:"families"`
	Objects  []struct {
		RowsRead int64 `json:"rows_read"`
	} `json:"objects"`
	Outputs []struct {
		Name string `json:"name"`
		Rows *int   `json:"rows"`
	} `json:"outputs"`
}

func manifest(t *testing.T, out string) manifestFile {
	t.Helper()
	var m manifestFile
	if err := json.Unmarshal(read(t, filepath.Join(out, "manifest.json")), &m); err != nil {
		t.Fatalf("manifest.json: %v", err)
	}
	return m
}

// stable drops a manifest's start and finish times.
func stable(t *testing.T, data []byte) []byte {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatalf("manifest.json: %v", err)
	}
	delete(m, "started_at")
	delete(m, "finished_at")
	delete(m, "attempt_id") // one per job, by design
	b, _ := json.Marshal(m)
	return b
}

func read(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func list(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	sort.Strings(out)
	return out
}

func parquetFiles(t *testing.T, dir string) []string {
	var out []string
	for _, n := range list(t, dir) {
		if strings.HasSuffix(n, ".parquet") {
			out = append(out, n)
		}
	}
	if len(out) == 0 {
		t.Fatalf("no Parquet file in %s", dir)
	}
	return out
}

func readParquet(t *testing.T, p string) *writers.ReadBack {
	t.Helper()
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rb, err := writers.ReadParquet(f)
	if err != nil {
		t.Fatalf("%s: %v", p, err)
	}
	return rb
}
