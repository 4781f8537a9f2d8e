package readers

import (
	"bytes"
	"fmt"
	"math"
	"net/url"
	"strconv"
	"strings"
)

// Hive-style folders. A Parquet dataset written partitioned (DuckDB's
// PARTITION_BY, pyarrow's write_dataset with hive partitioning, Spark's
// partitionBy) keeps a field out of its files and in their folders'
// names: algorithm_id=ppo/seed=3/data_0.parquet. HiveFolders reads those
// folders into ParquetFields with a Folder, which the Parquet readers
// give every row of the object as the field's value, as DuckDB's
// hive_partitioning does, so that such a dataset scores as the JSON Lines
// its rows came from.

// HiveDefaultPartition is the folder value that stands for a null
// (Hive's, Spark's, pyarrow's and DuckDB's).
const HiveDefaultPartition = "__HIVE_DEFAULT_PARTITION__"

// HiveFolders returns the fields the Hive-style folders of path (a
// slash-separated path; its last element, the object's own name, is not
// a folder) give every row: one per folder `name=value` holding one '='
// after a name, in path order, name and value percent-decoded as DuckDB
// and Spark encode them (a bad escape is kept as it is). Those writers
// escape a '=' in a name or value, so a folder of two (Hydra's
// `seed=1,lr=0.1`, a run's overrides) is not one of theirs and gives
// nothing. A value that is
// an integer written the way JSON writes one (no sign but '-', no leading
// zero, not -0, within int64) is that integer; HiveDefaultPartition is null (the
// field is then not carried, as with a null cell); a timestamp in the text
// those writers give one (2024-01-05 22:00:00.5, +00 in UTC) is the string
// a timestamp cell reads as (hiveTimestamp); any other value is a
// string. A name given by two folders is an error.
func HiveFolders(path string) ([]ParquetField, error) {
	segs := strings.Split(path, "/")
	var out []ParquetField
	for _, seg := range segs[:len(segs)-1] {
		k := strings.IndexByte(seg, '=')
		if k <= 0 || strings.Count(seg, "=") > 1 {
			continue
		}
		name, val := hiveUnescape(seg[:k]), hiveUnescape(seg[k+1:])
		for _, f := range out {
			if f.Name == name {
				return nil, fmt.Errorf("folders %s and %s both give field %s (Hive-style folders)", f.Folder, seg, strconv.Quote(name))
			}
		}
		f := ParquetField{Name: name, Folder: seg, Value: hiveValue(val)}
		out = append(out, f)
	}
	return out, nil
}

func hiveUnescape(s string) string {
	if strings.IndexByte(s, '%') < 0 {
		return s
	}
	if u, err := url.PathUnescape(s); err == nil {
		return u
	}
	return s
}

// hiveValue is the JSON text of a folder's value; nil for null.
func hiveValue(v string) []byte {
	if v == HiveDefaultPartition {
		return nil
	}
	if isJSONInt(v) {
		if _, err := strconv.ParseInt(v, 10, 64); err == nil {
			return []byte(v)
		}
	}
	if ts, ok := hiveTimestamp(v); ok {
		v = ts
	}
	return appendJSONString(nil, v)
}

// hiveTimestamp is the text crlbatch reads a timestamp cell as
// (parquet_time.go) of v when v is a timestamp as DuckDB, Spark and Hive
// name a partition by one: YYYY-MM-DD HH:MM:SS, a fraction of up to nine
// digits, and for an instant in UTC "+00" or "+00:00" (DuckDB's
// TIMESTAMPTZ): "2024-01-05 22:00:00.50+00" is "2024-01-05T22:00:00.5Z",
// so a file that keeps the column agrees with its folder. Anything else
// (another offset, a date alone, ISO text already) is not one: false.
func hiveTimestamp(v string) (string, bool) {
	z := false
	for _, utc := range []string{"+00:00", "+00"} {
		if t, ok := strings.CutSuffix(v, utc); ok {
			v, z = t, true
			break
		}
	}
	const layout = "dddd-dd-dd dd:dd:dd"
	if len(v) < len(layout) {
		return "", false
	}
	for i := 0; i < len(layout); i++ {
		if c := v[i]; layout[i] == 'd' && (c < '0' || c > '9') || layout[i] != 'd' && c != layout[i] {
			return "", false
		}
	}
	frac := v[len(layout):]
	if frac != "" {
		if frac[0] != '.' || len(frac) < 2 || len(frac) > 10 {
			return "", false
		}
		for i := 1; i < len(frac); i++ {
			if frac[i] < '0' || frac[i] > '9' {
				return "", false
			}
		}
		if frac = strings.TrimRight(frac, "0"); frac == "." {
			frac = ""
		}
	}
	out := v[:10] + "T" + v[11:len(layout)] + frac
	if z {
		out += "Z"
	}
	return out, true
}

// isJSONInt says whether s is an integer as JSON writes one, -0 aside
// (whose text as metadata would not be its folder's).
func isJSONInt(s string) bool {
	t := strings.TrimPrefix(s, "-")
	if t == "" || t[0] == '0' && (len(t) > 1 || len(t) < len(s)) {
		return false
	}
	for i := 0; i < len(t); i++ {
		if t[i] < '0' || t[i] > '9' {
			return false
		}
	}
	return true
}

// hiveFolderOf is the folder field of fields named name, or nil.
func hiveFolderOf(fields []ParquetField, name string) *ParquetField {
	for i := range fields {
		if fields[i].Folder != "" && fields[i].Name == name {
			return &fields[i]
		}
	}
	return nil
}

// hiveAgrees says whether a cell whose JSON text is raw (nil for a null
// cell, or a missing one) holds the value its folder gives the field f:
// the same text as run metadata renders it (a string as it is, a number's
// value, true or false), so that a file written with its partition columns
// kept (DuckDB's WRITE_PARTITION_COLUMNS) agrees with its folders whatever
// type the writer gave the column.
func hiveAgrees(f *ParquetField, raw []byte) bool {
	raw = bytes.TrimSpace(raw)
	if raw == nil || string(raw) == "null" {
		return f.Value == nil
	}
	if f.Value == nil {
		return false
	}
	want := hiveText(f)
	switch raw[0] {
	case '"':
		return string(decodeString(raw)) == want
	case 't', 'f':
		return string(raw) == want
	case '{', '[':
		return false
	}
	v, err := strconv.ParseFloat(string(raw), 64)
	if err != nil || math.IsInf(v, 0) {
		return false
	}
	w, err := strconv.ParseFloat(want, 64)
	return err == nil && w == v
}

// hiveText is the folder's value as text (decoded).
func hiveText(f *ParquetField) string {
	if len(f.Value) > 0 && f.Value[0] == '"' {
		return string(decodeString(f.Value))
	}
	return string(f.Value)
}
