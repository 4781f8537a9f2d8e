package readers

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// TestHiveFolders: the folders `name=value` of a path, decoded as DuckDB
// and Spark encode them, each value an integer, a string or null; a folder
// with two '=' (Hydra's override folders) is not one.
func TestHiveFolders(t *testing.T) {
	for _, c := range []struct {
		path string
		want string // name=JSON text@folder, comma-separated; null for nil
		err  string
	}{
		{path: "runs/ppo/x.parquet"},
		{path: "x.parquet"},
		{path: "seed=3"}, // the object's own name is not a folder
		{path: "algorithm_id=ppo/seed=3/data_0.parquet", want: `algorithm_id="ppo"@algorithm_id=ppo,seed=3@seed=3`},
		{path: "/tmp/lab/team=rl/algorithm_id=ppo/x.parquet", want: `team="rl"@team=rl,algorithm_id="ppo"@algorithm_id=ppo`},
		{path: "k=007/x", want: `k="007"@k=007`},
		{path: "k=-5/x", want: `k=-5@k=-5`},
		{path: "k=0/x", want: `k=0@k=0`},
		{path: "k=-0/x", want: `k="-0"@k=-0`},
		{path: "k=+5/x", want: `k="+5"@k=+5`},
		{path: "k=1.5/x", want: `k="1.5"@k=1.5`},
		{path: "k=true/x", want: `k="true"@k=true`},
		{path: "k=9223372036854775807/x", want: `k=9223372036854775807@k=9223372036854775807`},
		{path: "k=9223372036854775808/x", want: `k="9223372036854775808"@k=9223372036854775808`},
		{path: "k=__HIVE_DEFAULT_PARTITION__/x", want: `k=null@k=__HIVE_DEFAULT_PARTITION__`},
		{path: "k=a%2Fb%20c%3Dd%25/x", want: `k="a/b c=d%"@k=a%2Fb%20c%3Dd%25`},
		{path: "my%20key=v/x", want: `my key="v"@my%20key=v`},
		{path: "k=%zz/x", want: `k="%zz"@k=%zz`},
		{path: "k=1=2/x"},
		{path: "multirun/seed=1,lr=0.1/x"},
		{path: "multirun/algorithm=ppo,seed=1/x"},
		{path: "k=/x", want: `k=""@k=`},
		{path: "k=\"q\"/x", want: `k="\"q\""@k="q"`},
		{path: "=v/x"},
		{path: "k=1/k=2/x", err: `folders k=1 and k=2 both give field "k" (Hive-style folders)`},
		{path: "k=1/k%3D=2/x", want: `k=1@k=1,k==2@k%3D=2`},
		// Timestamps as DuckDB and Spark name partitions: the text a
		// timestamp cell reads as.
		{path: "ts=2024-01-05%2022%3A00%3A00/x", want: `ts="2024-01-05T22:00:00"@ts=2024-01-05%2022%3A00%3A00`},
		{path: "ts=2024-01-05 22:00:00.250/x", want: `ts="2024-01-05T22:00:00.25"@ts=2024-01-05 22:00:00.250`},
		{path: "ts=2024-01-05 22:00:00.000/x", want: `ts="2024-01-05T22:00:00"@ts=2024-01-05 22:00:00.000`},
		{path: "ts=2024-01-05 22:00:00.123456789/x", want: `ts="2024-01-05T22:00:00.123456789"@ts=2024-01-05 22:00:00.123456789`},
		{path: "tz=2024-01-05%2022%3A00%3A00.5%2B00/x", want: `tz="2024-01-05T22:00:00.5Z"@tz=2024-01-05%2022%3A00%3A00.5%2B00`},
		{path: "tz=2024-01-05 22:00:00+00:00/x", want: `tz="2024-01-05T22:00:00Z"@tz=2024-01-05 22:00:00+00:00`},
		{path: "tz=2024-01-05 22:00:00+02/x", want: `tz="2024-01-05 22:00:00+02"@tz=2024-01-05 22:00:00+02`},
		{path: "ts=2024-01-05T22:00:00/x", want: `ts="2024-01-05T22:00:00"@ts=2024-01-05T22:00:00`},
		{path: "ts=2024-01-05 22:00:00./x", want: `ts="2024-01-05 22:00:00."@ts=2024-01-05 22:00:00.`},
		{path: "ts=2024-01-05 22:00:00.1234567890/x", want: `ts="2024-01-05 22:00:00.1234567890"@ts=2024-01-05 22:00:00.1234567890`},
		{path: "ts=2024-01-05 22:00/x", want: `ts="2024-01-05 22:00"@ts=2024-01-05 22:00`},
		{path: "day=2024-01-05/x", want: `day="2024-01-05"@day=2024-01-05`},
	} {
		got, err := HiveFolders(c.path)
		if c.err != "" {
			if err == nil || err.Error() != c.err {
				t.Errorf("%s: error %v, want %s", c.path, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.path, err)
			continue
		}
		var s []string
		for _, f := range got {
			v := "null"
			if f.Value != nil {
				v = string(f.Value)
			}
			if f.Type != "" || f.Required {
				t.Errorf("%s: %s has a type or is required", c.path, f.Name)
			}
			s = append(s, f.Name+"="+v+"@"+f.Folder)
		}
		if g := strings.Join(s, ","); g != c.want {
			t.Errorf("%s: %s, want %s", c.path, g, c.want)
		}
	}
}

// hiveRows are n rows of two runs told apart by run_id alone, in two
// regimes, with components, a constant extra and a varying one; with, in
// each line, the text add before its closing brace.
func hiveRows(n int, add string) string {
	var b strings.Builder
	for i := range n {
		run, regime := "a", "calm"
		if i%3 == 0 {
			run = "b"
		}
		if i > n/2 {
			regime = "storm"
		}
		fmt.Fprintf(&b, `{"run_id":%q,"step":%d,"reward":%g,"regime_id":%q,"components":{"progress":%g},"lr":0.001,"loss":%g%s}`+"\n",
			run, i, float64(i%17)/8, regime, float64(i%5)/4, float64(i%11)/3, add)
	}
	return b.String()
}

// TestParquetHiveFolders: the fields Hive-style folders give (a string, an
// integer, a null, a percent-decoded string) are every row's, read the
// direct way and the general way into exactly what the JSON Lines with
// those fields on every line decode to; the identity fields among them
// make the run keys. Over several batches of the direct way.
func TestParquetHiveFolders(t *testing.T) {
	const n = 2*parquetDirectBatchRows + 100
	data := convertJSONL(t, hiveRows(n, ""))
	folders, err := HiveFolders("lab/algorithm_id=ppo/seed=3/note=__HIVE_DEFAULT_PARTITION__/tag=a%2Fb/x.parquet")
	if err != nil {
		t.Fatal(err)
	}
	fields := append(append([]ParquetField{}, skyfallParquetFields...), folders...)
	wantText := hiveRows(n, `,"algorithm_id":"ppo","seed":3,"tag":"a/b"`)
	got, err := parquetText(t, data, fields)
	if err != nil {
		t.Fatal(err)
	}
	if got != wantText {
		t.Fatalf("rows differ from the JSON lines with the folders' fields; first row %.300s", got)
	}
	opts := Options{}
	want, err := DecodeObject("mem://b/x.parquet", "x.parquet", strings.NewReader(wantText), opts)
	if err != nil {
		t.Fatal(err)
	}
	url := "mem://b/hive-direct.parquet"
	direct, err := DecodeParquet(url, "x.parquet", bytes.NewReader(data), fields, opts)
	if err != nil {
		t.Fatal(err)
	}
	if !tookDirect(t, url) {
		t.Fatal("not read the direct way")
	}
	general, err := viaLines("mem://b/x.parquet", data, fields, opts)
	if err != nil {
		t.Fatal(err)
	}
	sameEncoding(t, "the direct way's", direct, want)
	sameEncoding(t, "the general way's", general, want)
	runs, err := Assemble([]*ObjectRuns{direct}, opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 2 || runs[0].Key != "run_id=b|seed=3|algorithm_id=ppo" || runs[0].Meta["tag"] != "a/b" || runs[0].Meta["lr"] != "0.001" {
		t.Fatalf("runs %d, the first %s %v", len(runs), runs[0].Key, runs[0].Meta)
	}
	if _, ok := runs[0].Meta["note"]; ok {
		t.Errorf("a null folder gave the field note: %v", runs[0].Meta)
	}
}

// TestParquetHiveColumnAgrees: a file that holds a column a folder also
// gives (DuckDB's WRITE_PARTITION_COLUMNS) reads as its rows are, the
// general way, when every cell holds the folder's value as run metadata
// renders it (an integer column or a string column for seed=3); a cell
// that does not, or a null cell, fails the object naming the row, the
// column and the folder.
func TestParquetHiveColumnAgrees(t *testing.T) {
	rows := func(seed string, algo func(i int) string) string {
		var b strings.Builder
		for i := range 5 {
			fmt.Fprintf(&b, `{"run_id":"a","seed":%s,%s"reward":%d,"regime_id":"calm"}`+"\n", seed, algo(i), i)
		}
		return b.String()
	}
	ppo := func(int) string { return `"algorithm_id":"ppo",` }
	for _, c := range []struct {
		name, jsonl, path, err string
	}{
		{name: "agree-int", jsonl: rows("3", ppo), path: "algorithm_id=ppo/seed=3/x.parquet"},
		{name: "agree-string", jsonl: rows(`"3"`, ppo), path: "algorithm_id=ppo/seed=3/x.parquet"},
		{name: "agree-float", jsonl: rows("1.5", ppo), path: "seed=1.5/x.parquet"},
		{name: "differ", jsonl: rows("3", func(i int) string {
			if i == 3 {
				return `"algorithm_id":"sac",`
			}
			return `"algorithm_id":"ppo",`
		}), path: "algorithm_id=ppo/x.parquet",
			err: `row 4: column algorithm_id: holds "sac", but its folder algorithm_id=ppo gives "ppo"`},
		{name: "differ-type", jsonl: rows(`"03"`, ppo), path: "seed=3/x.parquet",
			err: `row 1: column seed: holds "03", but its folder seed=3 gives 3`},
		{name: "null-cell", jsonl: rows("3", func(i int) string {
			if i == 0 {
				return ""
			}
			return `"algorithm_id":"ppo",`
		}), path: "algorithm_id=ppo/x.parquet",
			err: `row 1: column algorithm_id: holds null, but its folder algorithm_id=ppo gives "ppo"`},
		{name: "null-folder", jsonl: rows("3", ppo), path: "algorithm_id=__HIVE_DEFAULT_PARTITION__/x.parquet",
			err: `row 1: column algorithm_id: holds "ppo", but its folder algorithm_id=__HIVE_DEFAULT_PARTITION__ gives null`},
	} {
		t.Run(c.name, func(t *testing.T) {
			data := convertJSONL(t, c.jsonl)
			folders, err := HiveFolders(c.path)
			if err != nil {
				t.Fatal(err)
			}
			fields := append(append([]ParquetField{}, skyfallParquetFields...), folders...)
			url := "mem://b/" + c.name + ".parquet"
			got, err := DecodeParquet(url, "x.parquet", bytes.NewReader(data), fields, Options{})
			if c.err != "" {
				var de *DataError
				if !errors.As(err, &de) || !de.Row || err.Error() != url+": "+c.err {
					t.Fatalf("error %v, want %s: %s", err, url, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tookDirect(t, url) {
				t.Error("read the direct way, which does not check the cells against the folders")
			}
			want, err := DecodeObject(url, "x.parquet", strings.NewReader(c.jsonl), Options{})
			if err != nil {
				t.Fatal(err)
			}
			sameEncoding(t, "the Parquet object's", got, want)
		})
	}
}

// TestParquetHiveRowField: a folder naming a field of each row (a label,
// the discount) is refused naming the object and the folder, before a row
// is read: the file must hold it.
func TestParquetHiveRowField(t *testing.T) {
	data := convertJSONL(t, hiveRows(10, ""))
	fields := append(append([]ParquetField{}, skyfallParquetFields...), ParquetField{Name: "gamma", Type: "number"})
	for _, p := range []string{"regime_id=calm/x.parquet", "gamma=0.99/x.parquet", "step=3/x.parquet"} {
		folders, err := HiveFolders(p)
		if err != nil {
			t.Fatal(err)
		}
		name := strings.SplitN(p, "=", 2)[0]
		want := "mem://b/x.parquet: folder " + strings.Split(p, "/")[0] + ": " + name + " is a field of each row, which the file must hold as a column; a Hive-style folder may give only identity fields and run metadata"
		for way, read := range map[string]func() error{
			"direct": func() error {
				_, err := DecodeParquet("mem://b/x.parquet", "x.parquet", bytes.NewReader(data), append(fields, folders...), Options{})
				return err
			},
			"lines": func() error {
				_, err := ParquetLines("mem://b/x.parquet", bytes.NewReader(data), append(fields, folders...))
				return err
			},
		} {
			if err := read(); err == nil || err.Error() != want {
				t.Errorf("%s, %s: error %v, want %s", p, way, err, want)
			}
		}
	}
}

// TestParquetHiveTimestampFolder: a file that keeps the timestamp column
// it is partitioned by (DuckDB's WRITE_PARTITION_COLUMNS) agrees with its
// folder, which names the timestamp in DuckDB's text (a space, "+00" for
// UTC): the folder's value is the text the cell reads as; a folder of
// another instant fails naming both.
func TestParquetHiveTimestampFolder(t *testing.T) {
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "run_id", Type: arrow.BinaryTypes.String},
		{Name: "reward", Type: arrow.PrimitiveTypes.Float64},
		{Name: "regime_id", Type: arrow.BinaryTypes.String},
		{Name: "at", Type: &arrow.TimestampType{Unit: arrow.Microsecond}},
		{Name: "tz", Type: &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}},
	}, nil)
	at := arrow.Timestamp(time.Date(2024, 1, 5, 22, 0, 0, 500e6, time.UTC).UnixMicro())
	data := writeTestParquet(t, schema, func(b *array.RecordBuilder) {
		for i := range 3 {
			b.Field(0).(*array.StringBuilder).Append("a")
			b.Field(1).(*array.Float64Builder).Append(float64(i))
			b.Field(2).(*array.StringBuilder).Append("calm")
			b.Field(3).(*array.TimestampBuilder).Append(at)
			b.Field(4).(*array.TimestampBuilder).Append(at)
		}
	})
	for _, c := range []struct{ path, err string }{
		{path: "at=2024-01-05%2022%3A00%3A00.5/tz=2024-01-05%2022%3A00%3A00.5%2B00/x.parquet"},
		{path: "at=2024-01-05 22:00:00.500/x.parquet"},
		{path: "at=2024-01-05 22:00:01/x.parquet",
			err: `row 1: column at: holds "2024-01-05T22:00:00.5", but its folder at=2024-01-05 22:00:01 gives "2024-01-05T22:00:01"`},
		{path: "tz=2024-01-05 22:00:00.5/x.parquet", // a local time is not the instant
			err: `row 1: column tz: holds "2024-01-05T22:00:00.5Z", but its folder tz=2024-01-05 22:00:00.5 gives "2024-01-05T22:00:00.5"`},
	} {
		folders, err := HiveFolders(c.path)
		if err != nil {
			t.Fatal(err)
		}
		url := "mem://b/" + c.path
		_, err = DecodeParquet(url, "x.parquet", bytes.NewReader(data), append(append([]ParquetField{}, skyfallParquetFields...), folders...), Options{})
		if c.err == "" && err != nil || c.err != "" && (err == nil || err.Error() != url+": "+c.err) {
			t.Errorf("%s: error %v, want %q", c.path, err, c.err)
		}
	}
}
